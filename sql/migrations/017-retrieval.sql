-- Retrieval that finds the evidence (docs/ranking.md):
-- * context: text indexed with a memory that is not its text (speaker,
--   date, neighbouring turns; title and heading path), and its place in a
--   thread (a conversation, a document) so a hit can bring its neighbours;
-- * the full-text vector becomes a column the write path fills
--   (brain._memory_tsv): headline A, body B, context C, and identifiers,
--   version strings and code tokens whole as well as split, so
--   `idle_timeout` and `ERR_SSL` match as typed;
-- * term statistics per workspace for the BM25-style lexical leg: each
--   memory's length in lexemes, and the workspace's count of memories and
--   of lexemes (brain.lexical_corpus; the document frequency of a word is
--   counted from the full-text index, up to a cap, when a query needs it);
-- * relevance calibrated per embedding space, and search results that carry
--   their relevance, source reference, metadata and thread.

ALTER TABLE brain.memory ADD COLUMN context text;
ALTER TABLE brain.memory ADD COLUMN thread text;
ALTER TABLE brain.memory ADD COLUMN position integer;
ALTER TABLE brain.memory ADD COLUMN lexical_len integer;
COMMENT ON COLUMN brain.memory.context IS
    'Indexed with the memory (full text, weight C) but not its text: speaker, date, neighbouring turns, title and heading path.';
COMMENT ON COLUMN brain.memory.thread IS 'The conversation or document the memory is part of (NULL: none).';
COMMENT ON COLUMN brain.memory.position IS 'Its place in the thread: turn number, or chunk number of a document.';
COMMENT ON COLUMN brain.memory.lexical_len IS 'Distinct lexemes of headline and body: the document length of BM25.';
CREATE INDEX memory_thread ON brain.memory (workspace_id, thread, position) WHERE thread IS NOT NULL;

-- From here on the write path fills tsv (trigger memory_tsv, 006-search.sql).
ALTER TABLE brain.memory ALTER COLUMN tsv DROP EXPRESSION;

-- Existing rows: the same vector brain._memory_tsv builds (a frozen copy:
-- migrations run before the function files). Chunks of one source become a
-- thread in chunk order.
UPDATE brain.memory m
SET tsv = x.tsv, lexical_len = x.len
FROM (SELECT m2.workspace_id, m2.memory_id,
             setweight(to_tsvector('english'::regconfig, coalesce(m2.headline, '')), 'A')
             || setweight(to_tsvector('english'::regconfig, coalesce(m2.body, '')), 'B')
             || coalesce((SELECT string_agg(DISTINCT quote_literal(t.tok) || ':1B', ' ')::tsvector
                          FROM (SELECT lower(r.m[1]) AS tok
                                FROM regexp_matches(coalesce(m2.headline, '') || ' ' || coalesce(m2.body, ''),
                                                    '([A-Za-z0-9]+(?:[_:][A-Za-z0-9]+)+)', 'g') AS r(m)) AS t),
                         ''::tsvector) AS tsv,
             length(to_tsvector('english'::regconfig, coalesce(m2.headline, '') || ' ' || coalesce(m2.body, '')))
                 AS len
      FROM brain.memory m2) AS x
WHERE m.workspace_id = x.workspace_id AND m.memory_id = x.memory_id;

UPDATE brain.memory m
SET thread = m.source_ref, position = (m.metadata->>'chunk')::integer
WHERE m.source_ref IS NOT NULL AND m.metadata->>'chunk' ~ '^[0-9]{1,9}$';

-- The count of memories and of their lexemes in a workspace, kept by the
-- write path in slots: a writer adds to a slot no other transaction holds
-- (FOR UPDATE SKIP LOCKED), so writers never wait for each other here. The
-- workspace's figures are the sums over its slots.
CREATE TABLE brain.lexical_corpus (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace ON DELETE CASCADE,
    slot         integer NOT NULL,
    docs         bigint NOT NULL DEFAULT 0,
    lexemes      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, slot)
);
COMMENT ON TABLE brain.lexical_corpus IS
    'Memories and lexemes per workspace, for the lexical leg''s BM25 statistics (sum over slots).';
INSERT INTO brain.lexical_corpus (workspace_id, slot, docs, lexemes)
SELECT m.workspace_id, 0, count(*), coalesce(sum(m.lexical_len), 0) FROM brain.memory m GROUP BY 1;
ALTER TABLE brain.lexical_corpus ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.lexical_corpus FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.lexical_corpus FOR SELECT
    USING (workspace_id = brain.current_workspace());
CREATE POLICY workspace_insert ON brain.lexical_corpus FOR INSERT
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_update ON brain.lexical_corpus FOR UPDATE
    USING (workspace_id = brain.current_workspace('write'))
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_delete ON brain.lexical_corpus FOR DELETE
    USING (workspace_id = brain.current_workspace('write'));
GRANT SELECT, INSERT, UPDATE, DELETE ON brain.lexical_corpus TO brain_user;

-- Relevance per embedding space: the logistic map of a vector match's cosine
-- similarity (relevance 0.5 at relevance_center, steepness relevance_slope).
-- brain.use_embedding_space sets the calibrated values of a known model
-- (brain._known_calibration); docs/ranking.md says how they were derived.
ALTER TABLE brain.embedding_space ADD COLUMN relevance_center real NOT NULL DEFAULT 0.5
    CHECK (relevance_center > -1 AND relevance_center < 1);
ALTER TABLE brain.embedding_space ADD COLUMN relevance_slope real NOT NULL DEFAULT 20
    CHECK (relevance_slope > 0 AND relevance_slope <= 1000);
GRANT UPDATE (relevance_center, relevance_slope) ON brain.embedding_space TO brain_user;

-- What a search result carries besides its headline and preview.
ALTER TYPE brain.search_result ADD ATTRIBUTE relevance real;
ALTER TYPE brain.search_result ADD ATTRIBUTE source_system text;
ALTER TYPE brain.search_result ADD ATTRIBUTE source_ref text;
ALTER TYPE brain.search_result ADD ATTRIBUTE metadata jsonb;
ALTER TYPE brain.search_result ADD ATTRIBUTE thread text;
ALTER TYPE brain.search_result ADD ATTRIBUTE "position" integer;
ALTER TYPE brain.search_result ADD ATTRIBUTE neighbour_of bigint;

-- New parameters: the old signatures go.
DROP FUNCTION IF EXISTS brain.search(text, double precision[], text, text[], text[], text, text[], text[],
                                     timestamptz, timestamptz, boolean, boolean, boolean, timestamptz, integer,
                                     timestamptz);
DROP FUNCTION IF EXISTS brain.observe_batch(text[], text, text, text, text, text[], text, bigint, jsonb[],
                                            double precision[], text, boolean, boolean);

-- Spaces of known models take their calibrated relevance (a frozen copy of
-- brain._known_calibration).
UPDATE brain.embedding_space es
SET relevance_center = k.center, relevance_slope = k.slope
FROM (VALUES ('local', 'all-MiniLM-L6-v2', 0.72::real, 13::real),
             ('ollama', 'all-minilm', 0.72, 13),
             ('hash', 'feature-hash-v1', 0.5, 10)) AS k(provider, model, center, slope)
WHERE es.provider = k.provider AND es.model = k.model;

-- The prompt hook's floor is a relevance now (prompt_context_min_relevance).
DELETE FROM brain.setting WHERE name = 'prompt_context_min_similarity';

-- The lexical leg probes the full-text index once per query word: a short
-- pending list (GIN fast update) keeps each probe from reading every recent
-- insert again.
ALTER INDEX brain.memory_tsv SET (gin_pending_list_limit = 256);
