-- Vectors: validated, waiting to be indexed, and the nearest-neighbour lookup
-- used by dedup.

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

-- The rows a lookup's filters may keep and still be ranked exactly
-- (brain._search_vector_kept, brain._nearest_k's exact_below), at least
-- exact_rows (for search the setting exact_rank_rows, brain._exact_rank_rows()).
-- Ranking exactly costs about r us a kept row (its id counted, its vector read
-- by key, its distance); the walk of the space's index about 17 us a tuple it
-- meets, and it meets about candidates x n_docs / kept of them, several times
-- that when the filter keeps rows far from the query (a kind's rules: 5,771
-- tuples for 100 kept of 9,753 at 100k memories, against about 1,050 for a
-- project's tenth). The two cost the same at kept = sqrt(17 / r x c x
-- candidates x n_docs) for a walk c times longer than an even spread:
-- coefficient x sqrt(candidates x n_docs). Search's (r = 2, c = 2) is 4: for
-- 100 candidates 4,000 rows at 10k memories, 12,650 at 100k, 40,000 at 1M
-- (docs/benchmarks.md, issue 56); the boot's lookup of a pinned fact's ten
-- nearest (r = 3.5, a vector of 1.6 kB read whole, c = 2) is 3.
DROP FUNCTION IF EXISTS brain._exact_rank_kept(integer, bigint, integer);
CREATE OR REPLACE FUNCTION brain._exact_rank_kept(candidates integer, n_docs bigint, exact_rows integer,
                                                  coefficient double precision DEFAULT 4)
RETURNS integer
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT greatest(exact_rows, ceil(coefficient * sqrt(greatest(candidates, 1)::double precision
                                                         * greatest(n_docs, 0)))::integer)
$$;

-- The rows of a sample of brain.memory's pages that tells a search's filter that
-- keeps far more rows than brain._exact_rank_kept() (brain._search_kept) without
-- counting them: about 125 pages of four memories.
CREATE OR REPLACE FUNCTION brain._kept_share_sample_rows()
RETURNS integer
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 500
$$;

-- Like brain._nearest_sql, ranked exactly: the memories m that pass `filter`
-- (an expression over brain.memory m), by the distance of their vector in
-- space s to `target`, indexed and waiting vectors alike. The filter's rows
-- come first (its indexes), each vector is then read by its key (a lateral
-- lookup, OFFSET 0 so the planner does not turn it into a scan of the space),
-- and the distance is taken on the stored column, not on the cast the HNSW
-- index holds. lim: a number, or a parameter ($4) of a static statement.
DROP FUNCTION IF EXISTS brain._exact_nearest_sql(brain.embedding_space, text, text, integer);
CREATE OR REPLACE FUNCTION brain._exact_nearest_sql(s brain.embedding_space, target text, filter text, lim text)
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

-- The active memories of the kind and of one of the projects nearest to v in
-- space s, most similar first (at most k): the candidates of a write's semantic
-- dedup (one project), of a pinned fact's newer statement (the projects whose
-- memories may be newer, brain._newer_in_scope).
-- A scope of fewer than exact_below memories (brain._exact_rank_rows() unless
-- given: a new project, a rare kind) is ranked exactly; a larger one walks the
-- HNSW index, which then meets k of its rows within about k x (space / scope)
-- tuples. (A caller for whom the walk's approximation does not matter gives a
-- lower bound: the boot's check of a pinned fact, where the walk met 1,687
-- global facts' nearest ten in 1.5 ms and ranking them exactly took 5.9.)
DROP FUNCTION IF EXISTS brain._nearest_k(brain.embedding_space, public.vector, text, text, bigint, integer);
DROP FUNCTION IF EXISTS brain._nearest_k(brain.embedding_space, public.vector, text, text[], bigint, integer);
CREATE OR REPLACE FUNCTION brain._nearest_k(s brain.embedding_space, v public.vector, kind text,
                                            projects text[], exclude_id bigint, k integer,
                                            exact_below integer DEFAULT NULL)
RETURNS TABLE (memory_id bigint, similarity real)
LANGUAGE plpgsql STABLE
-- (at most k rows, a few for every caller: joined to the memories by key)
ROWS 5
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
    exact integer := coalesce(exact_below, brain._exact_rank_rows());
    joins text := 'JOIN brain.memory m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id';
    filter text := 'e.workspace_id = $2 AND m.kind = $3 AND m.project = ANY ($4) AND m.state = ''active''
                    AND m.memory_id IS DISTINCT FROM $5';
BEGIN
    SELECT count(*) INTO scope FROM (
        SELECT FROM brain.memory m
        WHERE m.workspace_id = s.workspace_id AND m.kind = _nearest_k.kind AND m.project = ANY (projects)
          AND m.state = 'active'
        LIMIT exact) AS x;
    RETURN QUERY EXECUTE format($q$
        SELECT x.memory_id, (1 - x.dist)::real
        FROM (%s) AS x
        ORDER BY x.dist
        LIMIT %s $q$,
        CASE WHEN scope < exact
             THEN brain._exact_nearest_sql(s, format('$1::public.vector(%s)', s.dims),
                                           replace(filter, 'e.workspace_id', 'm.workspace_id'), k::text)
             ELSE brain._nearest_sql(s, format('$1::public.vector(%s)', s.dims), joins, filter, k) END, k)
    USING v, s.workspace_id, kind, projects, exclude_id;
END
$$;

-- A memory's stored vector in space s (NULL: none).
CREATE OR REPLACE FUNCTION brain._stored_vector(s brain.embedding_space, id bigint)
RETURNS public.vector
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT e.embedding FROM brain.embedding e
    WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.memory_id = id
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
            FROM brain._nearest_k(s, v, kind, ARRAY[project], exclude_id, 5) AS x;
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
            FROM brain._nearest_k(s, v, kind, ARRAY[project], exclude_id, 5) AS x
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
