-- Embedding spaces: registering a (provider, model, dims), its HNSW index,
-- validating vectors, and the nearest-neighbour lookup used by dedup.

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

    PERFORM pg_advisory_xact_lock(hashtext('brain.embedding_space'), ws::integer);
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

-- The key of a scope (a workspace's memories of one kind and project) for the
-- advisory locks of writes (brain._lock_writes, _lock_writes_shared,
-- _lock_commits, _lock_near) and the order the check at commit takes them in:
-- one definition, inlined where it is called. With part, the key of one pair
-- of the scope and that part (a memory id: brain._lock_near).
CREATE OR REPLACE FUNCTION brain._scope_key(ws bigint, kind text, project text, part bigint DEFAULT NULL)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT pg_catalog.hashtext(ws || '/' || kind || '/' || project
                               || CASE WHEN part IS NULL THEN '' ELSE '/' || part END)
$$;

-- Writers of one kind and project take turns while semantic dedup runs, so two
-- near-identical texts written at once cannot both miss each other.
CREATE OR REPLACE FUNCTION brain._lock_writes(kind text, project text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_xact_lock(hashtext('brain.write'),
                                 brain._scope_key(brain.current_workspace(), kind, project))
$$;

-- A write of one memory with an embedding (brain._write) takes the lock of its
-- kind and project shared: such writers do not wait for one another there,
-- only for the batches and deferred dedup that take it exclusively
-- (brain._lock_writes); among themselves, brain._lock_near and the check at
-- commit (brain._commit_check) decide who waits.
CREATE OR REPLACE FUNCTION brain._lock_writes_shared(kind text, project text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_xact_lock_shared(hashtext('brain.write'),
                                        brain._scope_key(brain.current_workspace(), kind, project))
$$;

-- The commits of single writes of one kind and project take turns behind
-- this lock, taken by brain._commit_check when the transaction commits and
-- held to the end of the commit: the check behind it sees every write of the
-- scope that committed before, so of two near-duplicates written at once the
-- second to commit finds the first. Only the check and the commit wait; the
-- lookup, the insert and the HNSW insert run in parallel.
CREATE OR REPLACE FUNCTION brain._lock_commits(kind text, project text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_xact_lock(hashtext('brain.write.commit'),
                                 brain._scope_key(brain.current_workspace(), kind, project))
$$;

-- Writers whose semantic dedup could decide against each other usually take
-- turns before their lookup; others do not wait. A write of a kind and
-- project locks that scope's pair with each memory its lookup returned (ids,
-- from brain._near_write: the scope's nearest or, in a larger scope, the
-- space's nearest vectors whatever their memory, and the scope's near ones;
-- one key per pair, taken in key order, so lockers never wait in a cycle);
-- while the scope holds fewer than 5 memories (fewer than 5 ids), it also
-- locks the scope's key, so the first writers of a project take turns. Two
-- near-identical texts mostly lie near the same stored vectors, so the
-- second waits for the first and, looking again behind the locks
-- (brain._write does when a transaction ended meanwhile), sees it and gets
-- the result of a write made after it; two unrelated texts lock different
-- pairs, and so do two writes of different scopes near the same memories,
-- and neither waits. Nothing guarantees a shared neighbour (a space crowded
-- near one text and not the other, an approximate walk): what makes the race
-- certain is the check at commit (brain._commit_check); these locks make it
-- rare that the check has to refuse a write. Held to the end of the
-- transaction.
DROP FUNCTION IF EXISTS brain._lock_near(brain.embedding_space, public.vector, text, text, bigint);
CREATE OR REPLACE FUNCTION brain._lock_near(s brain.embedding_space, kind text, project text, ids bigint[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key integer;
BEGIN
    IF (SELECT count(DISTINCT i) FROM unnest(ids) AS i) < 5 THEN
        PERFORM pg_advisory_xact_lock(hashtext('brain.write.few'),
                                      brain._scope_key(s.workspace_id, kind, project));
    END IF;
    FOR key IN SELECT DISTINCT brain._scope_key(s.workspace_id, kind, project, i)
               FROM unnest(ids) AS i ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(hashtext('brain.write.near'), key);
    END LOOP;
END
$$;

-- Whether a transaction other than this one has ended (committed or rolled
-- back) since the snapshot s was taken: what a query run now could see beyond
-- what one run in s saw. A transaction that ends advances the snapshot's xmax
-- or leaves the list of those in progress; this transaction's own ids are in
-- neither. A lookup whose snapshot nothing has ended since need not be run
-- again: it would find the same rows.
CREATE OR REPLACE FUNCTION brain._ended_since(s pg_snapshot)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_snapshot_xmax(n) <> pg_snapshot_xmax(s)
           OR EXISTS (SELECT FROM pg_snapshot_xip(s) AS x WHERE pg_visible_in_snapshot(x, n))
    FROM (SELECT pg_current_snapshot() AS n) AS t
$$;

-- _lock_writes for the kinds and projects of several memories (and for
-- also_kind / also_project), in one fixed order, so two callers that lock
-- several never wait for each other in a cycle.
CREATE OR REPLACE FUNCTION brain._lock_writes_of(ids bigint[], also_kind text DEFAULT NULL,
                                                 also_project text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT m.kind, m.project FROM brain.memory m
        WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = ANY (ids)
        UNION
        SELECT also_kind, also_project WHERE also_kind IS NOT NULL
        ORDER BY 1, 2
    LOOP
        PERFORM brain._lock_writes(g.kind, g.project);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION brain._check_vector(embedding double precision[], s brain.embedding_space)
RETURNS public.vector
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    n integer := coalesce(array_length(embedding, 1), 0);
    v public.vector;
BEGIN
    IF array_ndims(embedding) > 1 THEN
        PERFORM brain._raise('BR012', 'An embedding is a one-dimensional array.', NULL,
            'Pass one vector, e.g. ''{0.1, 0.2, ...}''::float8[].');
    END IF;
    IF n <> s.dims THEN
        PERFORM brain._raise('BR012',
            format('The embedding has %s dimensions; space %s:%s has %s.', n, s.provider, s.model, s.dims),
            jsonb_build_object('given', n, 'expected', s.dims, 'space', s.provider || ':' || s.model),
            'Embed with the model of the active space, or register a space for this model.');
    END IF;
    BEGIN
        -- pgvector refuses NULL, NaN and infinite elements itself.
        v := embedding::public.vector;
    EXCEPTION WHEN data_exception OR null_value_not_allowed THEN
        PERFORM brain._raise('BR012', 'The embedding contains NULL, NaN or infinite values.', NULL,
            'Check the embedder''s output.');
    END;
    IF public.vector_norm(v) = 0 THEN
        PERFORM brain._raise('BR012', 'The embedding is all zeros; cosine similarity is undefined for it.',
            NULL, 'Check the embedder''s output.');
    END IF;
    RETURN v;
END
$$;

-- The vectors of space s that wait outside its HNSW index (bulk writes
-- brain.index_vectors has not taken in yet). No SET clause, so the planner
-- inlines it; the literal `ingest_seq > 0` lets even a generic plan use the
-- partial index embedding_unindexed.
CREATE OR REPLACE FUNCTION brain._waiting_vectors(s brain.embedding_space)
RETURNS TABLE (memory_id bigint, ingest_seq bigint)
LANGUAGE sql STABLE
AS $$
    SELECT e.memory_id, e.ingest_seq FROM brain.embedding e
    WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id
      AND e.ingest_seq > 0 AND e.ingest_seq > s.indexed_through
$$;

-- The memories of space s nearest to the vector `target` (an SQL expression
-- of type vector(dims)), as rows (memory_id, dist): the lim nearest of those
-- in the HNSW index and, with `waiting`, the lim nearest of those not indexed
-- yet (bulk writes waiting for brain.index_vectors), ranked exactly. `joins`
-- and `filter` restrict the rows of brain.embedding e. Literal space id,
-- dimension and indexed_through, so the planner can use the space's partial
-- HNSW index; callers order the union by dist and take what they need.
CREATE OR REPLACE FUNCTION brain._nearest_sql(s brain.embedding_space, target text, joins text, filter text,
                                              lim integer, waiting boolean DEFAULT true)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format($q$
        (SELECT e.memory_id, e.embedding::public.vector(%1$s) OPERATOR(public.<=>) %4$s AS dist
         FROM brain.embedding e %5$s
         WHERE e.space_id = %2$s AND e.ingest_seq <= %3$s AND %6$s
         ORDER BY e.embedding::public.vector(%1$s) OPERATOR(public.<=>) %4$s
         LIMIT %7$s) $q$,
        s.dims, s.space_id, s.indexed_through, target, joins, filter, lim)
    -- The waiting vectors, only while there are some: all of them ranked by
    -- distance first (OFFSET 0 keeps the filter out), then filtered in that
    -- order until lim pass, so a filter runs for few rows, not for each.
    || CASE WHEN waiting AND EXISTS (SELECT FROM brain._waiting_vectors(s)) THEN format($q$
        UNION ALL
        (SELECT e.memory_id, e.dist
         FROM (SELECT e.workspace_id, e.memory_id, e.embedding OPERATOR(public.<=>) %4$s AS dist
               FROM brain.embedding e
               WHERE e.workspace_id = %8$s AND e.space_id = %2$s AND e.ingest_seq > %3$s
               ORDER BY 3 OFFSET 0) AS e %5$s
         WHERE %6$s
         ORDER BY e.dist
         LIMIT %7$s) $q$,
        s.dims, s.space_id, s.indexed_through, target, joins, filter, lim, s.workspace_id)
       ELSE '' END
$$;

-- Filtered nearest-neighbour lookups choose their plan by how many rows the
-- filter keeps. The HNSW index yields the nearest vectors first and each is
-- then checked against the filter, so a filter that keeps a share f of the
-- space costs about lim / f index tuples (and pgvector stops the walk at
-- hnsw.max_scan_tuples, returning fewer rows than exist). A filter that keeps
-- fewer than this many rows is ranked exactly instead: the distances of its
-- rows, computed and sorted, whatever the size of the space (the setting
-- exact_rank_rows, 2000).
CREATE OR REPLACE FUNCTION brain._exact_rank_rows()
RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (brain.setting('exact_rank_rows'))::integer
$$;

-- Like brain._nearest_sql, ranked exactly: the memories m that pass `filter`
-- (an expression over brain.memory m), by the distance of their vector in
-- space s to `target`, indexed and waiting vectors alike. The filter's rows
-- come first (its indexes), each vector is then read by its key (a lateral
-- lookup, OFFSET 0 so the planner does not turn it into a scan of the space),
-- and the distance is taken on the stored column, not on the cast the HNSW
-- index holds.
CREATE OR REPLACE FUNCTION brain._exact_nearest_sql(s brain.embedding_space, target text, filter text, lim integer)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format($q$
        (SELECT m.memory_id, e.embedding OPERATOR(public.<=>) %2$s AS dist
         FROM brain.memory m
         CROSS JOIN LATERAL (SELECT e.embedding FROM brain.embedding e
                             WHERE e.workspace_id = m.workspace_id AND e.space_id = %1$s
                               AND e.memory_id = m.memory_id OFFSET 0) AS e
         WHERE %3$s
         ORDER BY 2
         LIMIT %4$s) $q$,
        s.space_id, target, filter, lim)
$$;

-- The active memories of the kind and project nearest to v in space s, most
-- similar first (at most k): the candidates of a write's semantic dedup.
-- A scope of fewer than brain._exact_rank_rows() memories (a new project, a
-- rare kind) is ranked exactly; a larger one walks the HNSW index, which then
-- meets k of its rows within about k x (space / scope) tuples.
CREATE OR REPLACE FUNCTION brain._nearest_k(s brain.embedding_space, v public.vector, kind text,
                                            project text, exclude_id bigint, k integer)
RETURNS TABLE (memory_id bigint, similarity real)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
SET hnsw.iterative_scan = strict_order
SET hnsw.max_scan_tuples = 20000
-- Without statistics for the workspace (a new one, or a new space) the planner
-- would rather sort the workspace's rows by distance, once per call; with
-- sorts off it walks the HNSW index, whatever the estimates say.
SET enable_sort = off
AS $$
DECLARE
    scope integer;
    joins text := 'JOIN brain.memory m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id';
    filter text := 'e.workspace_id = $2 AND m.kind = $3 AND m.project = $4 AND m.state = ''active''
                    AND m.memory_id IS DISTINCT FROM $5';
BEGIN
    SELECT count(*) INTO scope FROM (
        SELECT FROM brain.memory m
        WHERE m.workspace_id = s.workspace_id AND m.kind = _nearest_k.kind AND m.project = _nearest_k.project
          AND m.state = 'active'
        LIMIT brain._exact_rank_rows()) AS x;
    RETURN QUERY EXECUTE format($q$
        SELECT x.memory_id, (1 - x.dist)::real
        FROM (%s) AS x
        ORDER BY x.dist
        LIMIT %s $q$,
        CASE WHEN scope < brain._exact_rank_rows()
             THEN brain._exact_nearest_sql(s, format('$1::public.vector(%s)', s.dims),
                                           replace(filter, 'e.workspace_id', 'm.workspace_id'), k)
             ELSE brain._nearest_sql(s, format('$1::public.vector(%s)', s.dims), joins, filter, k) END, k)
    USING v, s.workspace_id, kind, project, exclude_id;
END
$$;

-- The duplicate lookup of a write of one memory (brain._write, its check at
-- commit, brain.attach_embedding), at a cost bounded whatever the size of
-- its kind and project. Rows (memory_id, similarity, decides):
-- * decides: an active memory of the kind and project, other than
--   exclude_id, at least min_similarity similar; the 5 nearest such, the
--   only ones a write's dedup decides on (the related threshold is its
--   lowest), as the scope's 5 nearest would give them;
-- * every row: what brain._lock_near locks, so that two near-identical texts
--   written at once lock the same keys and take turns.
-- A scope of fewer than 50 memories is ranked exactly: its 5 nearest (fewer
-- than 5, and brain._lock_near locks the whole scope). A larger one walks
-- the space's vectors nearest first, whatever their memory (a walk a filter
-- cannot shorten: one filtered by the scope meets it every space / scope
-- tuples), and stops once it has met 5 of the scope's memories at least
-- min_similarity similar, or, past its first 5 rows, a vector less similar;
-- the rows are the 5 nearest it met that do not decide, and the scope's
-- that do. A walk that meets 40 vectors within min_similarity without 5 of
-- the scope among them (a crowd of similar texts, mostly of other kinds or
-- projects) stops there, and the scope's are taken from brain._nearest_k's
-- walk filtered by the scope: in a crowd, that walk costs what it did, and
-- the 40 rows before it little (one candidate list of the index).
DROP FUNCTION IF EXISTS brain._near_write(brain.embedding_space, public.vector, text, text, bigint, real);
CREATE OR REPLACE FUNCTION brain._near_write(s brain.embedding_space, v public.vector, kind text,
                                             project text, exclude_id bigint, min_similarity real)
RETURNS TABLE (memory_id bigint, similarity real, decides boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
SET hnsw.iterative_scan = strict_order
SET hnsw.max_scan_tuples = 20000
SET enable_sort = off  -- as in _nearest_k: the HNSW index, whatever the estimates
AS $$
DECLARE
    cap constant integer := 40;  -- the first candidate list of an HNSW walk (hnsw.ef_search)
    small constant integer := 50;
    -- a walked row's memory: of the scope, and active (not exclude_id)
    of_scope constant text := '(SELECT m.kind = $4 AND m.project = $5 AND m.state = ''active''
                                       AND m.memory_id IS DISTINCT FROM $6
                                FROM brain.memory m WHERE m.workspace_id = $2 AND m.memory_id = x.memory_id)';
    walks text[];
    walk text;
    r record;
    n integer;
    met integer;
    crowded boolean := false;
    ids bigint[] := '{}';
    sims real[] := '{}';
    scoped boolean[] := '{}';
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM brain.memory m
                              WHERE m.workspace_id = s.workspace_id AND m.kind = _near_write.kind
                                AND m.project = _near_write.project AND m.state = 'active'
                                AND m.memory_id IS DISTINCT FROM exclude_id
                              LIMIT small) AS x) < small THEN
        RETURN QUERY
            SELECT x.memory_id, x.similarity, x.similarity >= min_similarity
            FROM brain._nearest_k(s, v, kind, project, exclude_id, 5) AS x;
        RETURN;
    END IF;
    IF (SELECT coalesce(sum(c.docs), 0) FROM brain.lexical_corpus c WHERE c.workspace_id = s.workspace_id)
       <= brain._exact_rank_rows() THEN
        -- A small space: every distance, on the stored column (not the cast the index holds).
        walks := ARRAY[format($q$
            SELECT x.memory_id, x.sim, coalesce(%s, false) AS scoped
            FROM (SELECT e.memory_id, (1 - (e.embedding OPERATOR(public.<=>) $1))::real AS sim
                  FROM brain.embedding e WHERE e.workspace_id = $2 AND e.space_id = %s
                  ORDER BY e.embedding OPERATOR(public.<=>) $1 LIMIT %s) AS x $q$, of_scope, s.space_id, cap)];
    ELSE
        -- The HNSW index, then the vectors waiting outside it (ranked exactly).
        walks := ARRAY[format($q$
            SELECT x.memory_id, (1 - x.dist)::real AS sim, coalesce(%s, false) AS scoped FROM %s AS x $q$,
            of_scope, brain._nearest_sql(s, format('$1::public.vector(%s)', s.dims), '', 'e.workspace_id = $2',
                                         cap, waiting => false))];
        IF EXISTS (SELECT FROM brain._waiting_vectors(s)) THEN
            walks := walks || format($q$
                SELECT x.memory_id, x.sim, coalesce(%s, false) AS scoped
                FROM (SELECT w.memory_id, (1 - (e.embedding OPERATOR(public.<=>) $1))::real AS sim
                      FROM brain._waiting_vectors($3) AS w
                      JOIN brain.embedding e ON e.workspace_id = $2 AND e.space_id = %s
                                            AND e.memory_id = w.memory_id
                      ORDER BY e.embedding OPERATOR(public.<=>) $1 LIMIT %s) AS x $q$, of_scope, s.space_id, cap);
        END IF;
    END IF;
    FOREACH walk IN ARRAY walks LOOP
        n := 0;
        met := 0;
        FOR r IN EXECUTE walk USING v, s.workspace_id, s, kind, project, exclude_id LOOP
            n := n + 1;
            EXIT WHEN n > 5 AND (r.sim < min_similarity OR met >= 5);
            ids := ids || r.memory_id;
            sims := sims || r.sim;
            scoped := scoped || (r.scoped AND r.sim >= min_similarity);
            met := met + (r.scoped AND r.sim >= min_similarity)::integer;
            IF n = cap THEN
                crowded := true;
            END IF;
        END LOOP;
    END LOOP;
    RETURN QUERY
        SELECT c.memory_id, c.sim, false FROM unnest(ids, sims, scoped) AS c(memory_id, sim, scoped)
        WHERE NOT c.scoped ORDER BY c.sim DESC, c.memory_id LIMIT 5;
    IF crowded THEN
        RETURN QUERY
            SELECT x.memory_id, x.similarity, true
            FROM brain._nearest_k(s, v, kind, project, exclude_id, 5) AS x
            WHERE x.similarity >= min_similarity;
    ELSE
        RETURN QUERY
            SELECT c.memory_id, c.sim, true FROM unnest(ids, sims, scoped) AS c(memory_id, sim, scoped)
            WHERE c.scoped ORDER BY c.sim DESC, c.memory_id LIMIT 5;
    END IF;
END
$$;

-- For each memory in ids (stored with an embedding in space s): the nearest
-- active memory of the kind and project that is older than it. A batch's
-- rows are compared with what was stored before them and with one another.
-- Without `waiting`, only with the vectors in the HNSW index.
CREATE OR REPLACE FUNCTION brain._nearest_older(s brain.embedding_space, ids bigint[], kind text, project text,
                                                waiting boolean DEFAULT true)
RETURNS TABLE (memory_id bigint, nearest bigint, similarity real)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
SET hnsw.iterative_scan = strict_order
-- Each row is in the HNSW graph already, so its nearest neighbours are a step
-- or two away: a short candidate list finds them.
SET hnsw.ef_search = 20
SET enable_sort = off  -- as in _nearest_k: the HNSW index, whatever the estimates
AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT c.id, nb.memory_id, (1 - nb.dist)::real
        FROM unnest($1::bigint[]) AS c(id)
        JOIN brain.embedding ce ON ce.workspace_id = $2 AND ce.space_id = %s AND ce.memory_id = c.id
        LEFT JOIN LATERAL (
            SELECT x.memory_id, x.dist FROM (%s) AS x ORDER BY x.dist LIMIT 1) AS nb ON true $q$,
        s.space_id,
        brain._nearest_sql(s, format('ce.embedding::public.vector(%s)', s.dims),
            'JOIN brain.memory m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id',
            'e.workspace_id = $2 AND e.memory_id < c.id AND m.kind = $3 AND m.project = $4
             AND m.state = ''active''', 1, waiting))
    USING ids, s.workspace_id, kind, project;
END
$$;
