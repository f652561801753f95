-- Chunks sized in the embedder's tokens (sql/functions/009-observe.sql).
--
-- An embedding space records how many tokens of text its model embeds: its
-- input window less the special tokens the model adds (all-MiniLM-L6-v2:
-- 256 word pieces, 2 of them [CLS] and [SEP], so 254). brain.observe_batch
-- cuts long texts into chunks whose embedding input fits it, so no stored
-- text lies beyond what its vector saw. NULL: the model has no window
-- (the hash embedder) or none is known; chunks then follow the
-- chunk_max_tokens setting alone.

ALTER TABLE brain.embedding_space
    ADD COLUMN max_tokens integer CHECK (max_tokens BETWEEN 32 AND 1000000);
COMMENT ON COLUMN brain.embedding_space.max_tokens IS
    'Tokens of text the model embeds (its window less its special tokens); NULL when unlimited or unknown. Chunks of observed text fit it.';

-- The spaces of the models pybrain knows (as brain._known_max_tokens does).
UPDATE brain.embedding_space es
SET max_tokens = k.max_tokens
FROM (VALUES ('local', 'all-MiniLM-L6-v2', 254),
             ('ollama', 'all-minilm', 254),
             ('ollama', 'nomic-embed-text', 2046),
             ('ollama', 'mxbai-embed-large', 510),
             ('ollama', 'bge-m3', 8190),
             ('openai', 'text-embedding-3-small', 8191),
             ('openai', 'text-embedding-3-large', 8191),
             ('openai', 'text-embedding-ada-002', 8191)) AS k(provider, model, max_tokens)
WHERE es.provider = k.provider AND es.model = k.model AND es.max_tokens IS NULL;

-- brain.chunk_text sizes chunks in tokens (max_tokens, not max_words) and
-- returns each chunk's headline and section; brain.use_embedding_space
-- takes the space's max_tokens.
DROP FUNCTION IF EXISTS brain.chunk_text(text, integer);
DROP FUNCTION IF EXISTS brain.use_embedding_space(text, text, integer, double precision, double precision);
