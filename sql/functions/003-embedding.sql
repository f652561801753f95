-- Embedding spaces: registering a (provider, model, dims), its HNSW index, the
-- space a call reads or writes. Write locks: 003a-embedding-locks.sql; vectors
-- and the nearest-neighbour lookup: 003b-embedding-nearest.sql.

-- The name of a space's HNSW index: a rebuild (brain.index_vectors) builds
-- the new one beside the old, named by the watermark it indexes through.
CREATE OR REPLACE FUNCTION brain._space_index_name(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'embedding_hnsw_' || s.space_id || CASE WHEN s.indexed_through > 0 THEN '_' || s.indexed_through ELSE '' END
$$;

-- The statement that creates an HNSW index named `name` over the vectors of
-- `dims` dimensions that `predicate` keeps (a partial index of brain.embedding).
-- ef_construction 128, not pgvector's 64: on 100k MiniLM vectors of templated
-- notes, recall@10 at ef_search 40 went from 0.945 to 0.981, for 31% more time
-- per inserted vector (1.07 to 1.40 ms; docs/benchmarks.md).
CREATE OR REPLACE FUNCTION brain._hnsw_index_sql(name text, dims integer, predicate text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('CREATE INDEX %I ON brain.embedding USING hnsw ((embedding::public.vector(%s)) public.vector_cosine_ops)'
                  ' WITH (m = 16, ef_construction = 128) WHERE %s', name, dims, predicate)
$$;

-- A space's HNSW index: the vectors with ingest_seq up to the space's
-- indexed_through (migration 007).
CREATE OR REPLACE FUNCTION brain._space_index_sql(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain._hnsw_index_sql(brain._space_index_name(s), s.dims,
                                 format('space_id = %s AND ingest_seq <= %s', s.space_id, s.indexed_through))
$$;

-- The boot payload's PATTERN rules of a space (brain.embedding.pattern_rule,
-- migration 018) have an HNSW index of their own: brain._boot_patterns_near
-- walks their vectors only, not the whole space's. It holds them whatever
-- their ingest_seq (they are few: inserted one by one).
CREATE OR REPLACE FUNCTION brain._pattern_index_name(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'embedding_patterns_' || s.space_id
$$;

CREATE OR REPLACE FUNCTION brain._pattern_index_sql(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain._hnsw_index_sql(brain._pattern_index_name(s), s.dims,
                                 format('space_id = %s AND pattern_rule', s.space_id))
$$;

-- The tokens of text a known model embeds: its input window less the special
-- tokens it adds (migration 010 sets the same on existing spaces). BERT
-- tokenizers (MiniLM, nomic-embed-text, mxbai-embed-large) add [CLS] and
-- [SEP]; OpenAI's models add none. NULL: no window (hash) or not known.
CREATE OR REPLACE FUNCTION brain._known_max_tokens(provider text, model text)
RETURNS integer
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT k.max_tokens
    FROM (VALUES ('local', 'all-MiniLM-L6-v2', 254),
                 ('local', 'all-MiniLM-L6-v2-int8', 254),
                 ('ollama', 'all-minilm', 254),
                 ('ollama', 'nomic-embed-text', 2046),
                 ('ollama', 'mxbai-embed-large', 510),
                 ('ollama', 'bge-m3', 8190),
                 ('openai', 'text-embedding-3-small', 8191),
                 ('openai', 'text-embedding-3-large', 8191),
                 ('openai', 'text-embedding-ada-002', 8191)) AS k(provider, model, max_tokens)
    WHERE k.provider = _known_max_tokens.provider AND k.model = _known_max_tokens.model
$$;

-- The similarity thresholds of a known model (docs/ranking.md, "Calibrated
-- per model"): near-identical and related (dedup) and the relevance logistic
-- of a vector match (center: the similarity at relevance 0.5; slope). Each
-- model has its own similarity scale, so a space starts with its model's
-- values; a model not listed gets the all-MiniLM-L6-v2 values.
CREATE OR REPLACE FUNCTION brain._known_calibration(provider text, model text)
RETURNS TABLE (near_identical real, related real, relevance_center real, relevance_slope real)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT k.near_identical, k.related, k.relevance_center, k.relevance_slope
    FROM (VALUES (1, 'local', 'all-MiniLM-L6-v2', 0.92::real, 0.75::real, 0.72::real, 13::real),
                 (2, 'ollama', 'all-minilm', 0.92, 0.75, 0.72, 13),
                 -- the same model with int8 weights (pybrain/embed/minilm.py): its own vectors, the same scale
                 (4, 'local', 'all-MiniLM-L6-v2-int8', 0.92, 0.75, 0.72, 13),
                 (3, 'hash', 'feature-hash-v1', 0.92, 0.75, 0.5, 10),
                 (9, NULL, NULL, 0.92, 0.75, 0.72, 13)) AS k(ord, provider, model, near_identical, related,
                                                       relevance_center, relevance_slope)
    WHERE k.provider IS NULL OR (k.provider = _known_calibration.provider AND k.model = _known_calibration.model)
    ORDER BY k.ord LIMIT 1
$$;

CREATE OR REPLACE FUNCTION brain.use_embedding_space(
    provider text,
    model text,
    dims integer,
    near_identical double precision DEFAULT NULL,
    related double precision DEFAULT NULL,
    max_tokens integer DEFAULT NULL
)
RETURNS brain.embedding_space
LANGUAGE plpgsql
SECURITY DEFINER  -- creates the space's index, which needs the table owner
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace('write');
    s brain.embedding_space;
BEGIN
    IF dims IS NULL OR dims < 1 OR dims > 16000 THEN
        PERFORM brain._raise('BR012', 'An embedding space needs 1 to 16000 dimensions.',
            jsonb_build_object('field', 'dims', 'type', 'integer'), 'Check the embedder''s model.');
    END IF;
    IF provider IS NULL OR provider !~ '^[a-z][a-z0-9_-]*$' OR model IS NULL OR brain.trim_space(model) = '' THEN
        PERFORM brain._raise('BR009', 'An embedding space needs a provider (lowercase letters, digits, - or _) and a model.',
            jsonb_build_object('fields', jsonb_build_array('provider', 'model'), 'type', 'text'),
            'Name it like the embedder: brain.use_embedding_space(''local'', ''all-MiniLM-L6-v2'', 384).');
    END IF;
    IF near_identical IS NOT NULL AND NOT (near_identical > 0 AND near_identical <= 1)
       OR related IS NOT NULL AND NOT (related > 0 AND related <= 1) THEN
        PERFORM brain._raise('BR009', 'Similarity thresholds lie in (0, 1].',
            jsonb_build_object('fields', jsonb_build_array('near_identical', 'related'), 'type', 'a number in (0, 1]'),
            'The defaults are near_identical 0.92 and related 0.75.');
    END IF;
    IF max_tokens IS NOT NULL AND NOT max_tokens BETWEEN 32 AND 1000000 THEN
        PERFORM brain._raise('BR009', 'max_tokens lies between 32 and 1000000.',
            jsonb_build_object('field', 'max_tokens', 'type', 'integer'),
            'Give the tokens of text the model embeds: its input window less its special tokens (254 for all-MiniLM-L6-v2).');
    END IF;

    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.embedding_space'));
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = ws AND es.provider = use_embedding_space.provider
      AND es.model = use_embedding_space.model;
    IF coalesce(use_embedding_space.related, s.related, 0.75)
       > coalesce(use_embedding_space.near_identical, s.near_identical, 0.92) THEN
        PERFORM brain._raise('BR009', 'The related threshold cannot exceed the near-identical one.',
            jsonb_build_object('near_identical', coalesce(use_embedding_space.near_identical, s.near_identical, 0.92),
                               'related', coalesce(use_embedding_space.related, s.related, 0.75)),
            'Give related a value at or below near_identical (defaults 0.75 and 0.92).');
    END IF;
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = ws AND es.provider = use_embedding_space.provider
      AND es.model = use_embedding_space.model;

    IF FOUND THEN
        IF s.dims <> use_embedding_space.dims THEN
            PERFORM brain._raise('BR012',
                format('Embedding space %s:%s has %s dimensions, not %s.', s.provider, s.model, s.dims,
                       use_embedding_space.dims),
                jsonb_build_object('space', s.provider || ':' || s.model, 'dims', s.dims,
                                   'given', use_embedding_space.dims),
                'A model with another size is another space: give it another model name.');
        END IF;
        UPDATE brain.embedding_space es
        SET near_identical = coalesce(use_embedding_space.near_identical, es.near_identical),
            related = coalesce(use_embedding_space.related, es.related),
            max_tokens = coalesce(use_embedding_space.max_tokens, es.max_tokens,
                                  brain._known_max_tokens(es.provider, es.model))
        WHERE es.workspace_id = ws AND es.space_id = s.space_id
        RETURNING * INTO s;
    ELSE
        INSERT INTO brain.embedding_space (workspace_id, provider, model, dims, near_identical, related, max_tokens,
                                           relevance_center, relevance_slope)
        SELECT ws, use_embedding_space.provider, use_embedding_space.model, use_embedding_space.dims,
               coalesce(use_embedding_space.near_identical, k.near_identical),
               coalesce(use_embedding_space.related, k.related),
               coalesce(use_embedding_space.max_tokens,
                        brain._known_max_tokens(use_embedding_space.provider, use_embedding_space.model)),
               k.relevance_center, k.relevance_slope
        FROM brain._known_calibration(use_embedding_space.provider, use_embedding_space.model) AS k
        RETURNING * INTO s;
    END IF;

    IF to_regclass(format('brain.%I', brain._space_index_name(s))) IS NULL THEN
        EXECUTE brain._space_index_sql(s);
    END IF;
    IF to_regclass(format('brain.%I', brain._pattern_index_name(s))) IS NULL THEN
        EXECUTE brain._pattern_index_sql(s);
    END IF;

    IF NOT EXISTS (SELECT FROM brain.embedding_space es
                   WHERE es.workspace_id = ws AND es.state = 'active') THEN
        UPDATE brain.embedding_space es SET state = 'active', activated_at = now()
        WHERE es.workspace_id = ws AND es.space_id = s.space_id
        RETURNING * INTO s;
    END IF;
    RETURN s;
END
$$;
COMMENT ON FUNCTION brain.use_embedding_space IS
    'Registers an embedding space (provider, model, dims) with its HNSW indexes (all its vectors; its PATTERN rules'' for boot), or updates its dedup thresholds and max_tokens (the tokens of text its model embeds; known models get theirs). The first space of a workspace becomes active.';

CREATE OR REPLACE FUNCTION brain.active_embedding_space()
RETURNS brain.embedding_space
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT * FROM brain.embedding_space
    WHERE workspace_id = brain.current_workspace() AND state = 'active'
$$;
COMMENT ON FUNCTION brain.active_embedding_space IS
    'The embedding space that writes and searches use in this workspace (NULL fields when none is registered).';

-- The space a caller names ('provider:model'), or the active one.
CREATE OR REPLACE FUNCTION brain._resolve_space(space text)
RETURNS brain.embedding_space
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.embedding_space;
BEGIN
    IF space IS NULL THEN
        s := brain.active_embedding_space();
        IF s.space_id IS NULL THEN
            PERFORM brain._raise('BR012', 'No embedding space is registered in this workspace.', NULL,
                'Run `brain init`, or SELECT brain.use_embedding_space(provider, model, dims).');
        END IF;
        RETURN s;
    END IF;
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = brain.current_workspace()
      AND es.provider || ':' || es.model = _resolve_space.space;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR012', 'Unknown embedding space.',
            jsonb_build_object('field', 'embedding_space', 'spaces',
                               (SELECT jsonb_agg(es.provider || ':' || es.model ORDER BY es.space_id)
                                FROM brain.embedding_space es WHERE es.workspace_id = brain.current_workspace())),
            'Register it with brain.use_embedding_space, or run `brain init` with that embedder.');
    END IF;
    RETURN s;
END
$$;

-- The space a write with an embedding names (the active one by default); a
-- write may only embed with the active space (BR012).
CREATE OR REPLACE FUNCTION brain._write_space(space text)
RETURNS brain.embedding_space
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.embedding_space := brain._resolve_space(space);
BEGIN
    IF s.state <> 'active' THEN
        PERFORM brain._raise('BR012', format('Space %s:%s is not the active embedding space.', s.provider, s.model),
            jsonb_build_object('space', s.provider || ':' || s.model),
            'Embed with the active space''s model (see brain.active_embedding_space()).');
    END IF;
    RETURN s;
END
$$;
