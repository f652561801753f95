-- Search's vector leg (docs/ranking.md), one statement per shape, each static
-- SQL in a function of its own: PL/pgSQL keeps a static statement's plan per
-- function and per session, where no client can name, replace or drop it, so
-- a search plans none of it after a session's first. The shapes: selective
-- filters that keep few memories (those ranked exactly, by key), a small
-- workspace (every vector's distance), and the walk of a space's HNSW index.
-- The planner uses that partial index only for a statement naming its space,
-- dimensions and watermark as literals: the walk is a function per space and
-- watermark, written from the same fragment by this file, when the function
-- files are applied (brain db migrate), for the spaces there are then. Nothing
-- writes a function at run time (no role but the installer may use a language,
-- migration 012): a space made, or an index rebuilt, after that runs the same
-- statement planned on each call until the files are next applied.
-- brain.search chooses the shape; its parameters are $1 the request
-- (brain.search_request), then the space and the candidates a leg gives.

-- The vector leg's rows, from `nearest` (memory_id, dist; the filtered
-- nearest first): each with its rank r and similarity, at least the
-- request's vector_min_similarity, the best `candidates` (an SQL expression).
CREATE OR REPLACE FUNCTION brain._search_vector_ranked(nearest text, candidates text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($v$
        SELECT x.memory_id, x.r, x.similarity::real AS sim, x.similarity
        -- ranked over every part of the nearest; each part keeps its own plan
        FROM (SELECT k.memory_id, row_number() OVER (ORDER BY k.dist, k.memory_id) AS r,
                     1 - k.dist AS similarity
              FROM (%1$s) AS k
              WHERE 1 - k.dist >= ($1).vector_min_similarity) AS x
        WHERE x.r <= %2$s $v$, nearest, candidates)
$f$;

-- Selective filters that keep fewer rows than brain._exact_rank_kept(): their
-- memories (($1).kept_ids, counted by brain._search_kept) ranked exactly,
-- each vector looked up by key (the filters are not evaluated a second time).
-- $2 the space, $3 the candidates.
CREATE OR REPLACE FUNCTION brain._search_vector_kept_sql()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT brain._search_vector_ranked($x$
            SELECT e.memory_id, e.embedding OPERATOR(public.<=>) ($1).embedding AS dist
            FROM brain.embedding e
            WHERE e.workspace_id = ($1).workspace_id AND e.space_id = $2 AND e.memory_id = ANY (($1).kept_ids)
            ORDER BY 2
            LIMIT $3 $x$, '$3')
$f$;

-- A small workspace (no more memories than brain._exact_rank_rows()): every
-- vector's distance (cheaper than the walk, and exact), then the filters in
-- that order until `candidates` pass. Ranked after filtering instead, the
-- filters' lookup ran for every memory. $2 the space, $3 the candidates.
CREATE OR REPLACE FUNCTION brain._search_vector_all_sql()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT brain._search_vector_ranked(format($x$
            SELECT e.memory_id, e.dist
            FROM (SELECT e.workspace_id, e.memory_id, e.embedding OPERATOR(public.<=>) ($1).embedding AS dist
                  FROM brain.embedding e
                  WHERE e.workspace_id = ($1).workspace_id AND e.space_id = $2
                  ORDER BY 3 OFFSET 0) AS e
            WHERE (SELECT %1$s FROM brain.memory m
                   WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id)
            ORDER BY e.dist
            LIMIT $3 $x$, brain._search_filter()), '$3')
$f$;

-- The walk of space s's HNSW index: the `candidates` ($2) nearest that pass
-- the filters, each checked by its memory's key as the walk meets it
-- (iterative scans keep filtered searches from returning fewer rows than
-- exist; the filters are a subquery per candidate, so the plan has no cheaper
-- way than the index). Beside them, when $3 (vectors wait outside the index:
-- brain._waiting_vectors), the nearest of the waiting ones, ranked exactly.
-- The space's id, dimensions, workspace and watermark are literals: the
-- index is partial (brain._space_index_sql), and only a statement naming
-- them can use it. Integers of the space's row; nothing else enters.
CREATE OR REPLACE FUNCTION brain._search_vector_hnsw_sql(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT brain._search_vector_ranked(format($x$
            (SELECT e.memory_id, e.embedding::public.vector(%1$s) OPERATOR(public.<=>) ($1).embedding::public.vector(%1$s) AS dist
             FROM brain.embedding e
             WHERE e.space_id = %2$s AND e.ingest_seq <= %3$s AND e.workspace_id = ($1).workspace_id
               AND (SELECT %5$s FROM brain.memory m WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id)
             ORDER BY e.embedding::public.vector(%1$s) OPERATOR(public.<=>) ($1).embedding::public.vector(%1$s)
             LIMIT $2)
            UNION ALL
            (SELECT e.memory_id, e.dist
             FROM (SELECT e.workspace_id, e.memory_id, e.embedding OPERATOR(public.<=>) ($1).embedding AS dist
                   FROM brain.embedding e
                   WHERE $3 AND e.workspace_id = %4$s AND e.space_id = %2$s AND e.ingest_seq > 0 AND e.ingest_seq > %3$s
                   ORDER BY 3 OFFSET 0) AS e
             WHERE e.workspace_id = ($1).workspace_id
               AND (SELECT %5$s FROM brain.memory m WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id)
             ORDER BY e.dist
             LIMIT $2) $x$,
        s.dims::integer, s.space_id::bigint, s.indexed_through::bigint, s.workspace_id::bigint,
        brain._search_filter()), '$2')
$f$;

-- The statement of the vector leg a search of space s runs for `candidates`:
-- with selective filters that keep `kept` memories, fewer than
-- brain._exact_rank_kept(candidates, n_docs, ...), those ranked exactly; in a
-- workspace of n_docs memories, no more than brain._exact_rank_rows(), every
-- vector; else the walk of the space's index. (tests/golden/search/ pins each.)
DROP FUNCTION IF EXISTS brain._search_vector_leg(brain.embedding_space, integer, integer, bigint);
DROP FUNCTION IF EXISTS brain._search_vector_leg(brain.embedding_space, integer, bigint);
CREATE OR REPLACE FUNCTION brain._search_vector_leg(s brain.embedding_space, kept integer, n_docs bigint,
                                                    candidates integer)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT CASE WHEN kept < brain._exact_rank_kept(candidates, n_docs, brain._exact_rank_rows()) THEN brain._search_vector_kept_sql()
                WHEN n_docs <= brain._exact_rank_rows() THEN brain._search_vector_all_sql()
                ELSE brain._search_vector_hnsw_sql(s) END
$f$;

-- The function that runs the walk of space s's index: one per space and
-- watermark (a rebuild's index is another), written by brain._search_vector_make
-- (and dropped with the index it walked, brain._drop_replaced_indexes).
CREATE OR REPLACE FUNCTION brain._search_vector_name(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT '_search_vector_' || s.space_id::bigint || '_' || s.indexed_through::bigint
$$;

-- A vector leg's function: the statement static, its plan kept for the session
-- (the generic one: the request's values change the rows, not the plan; the
-- shape, chosen by brain.search, is what does), executable by the owner only
-- (brain.search, which runs as the owner, calls it).
-- settings: more SET clauses.
DROP FUNCTION IF EXISTS brain._search_vector_function(text, text, text);
CREATE OR REPLACE FUNCTION brain._search_vector_function(name text, params text, statement text,
                                                         settings text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($d$
        CREATE OR REPLACE FUNCTION brain.%1$I(%2$s)
        RETURNS TABLE (memory_id bigint, r bigint, sim real, similarity double precision)
        LANGUAGE plpgsql STABLE
        SET search_path = pg_catalog, pg_temp
        SET plan_cache_mode = force_generic_plan
        SET jit = off %4$s
        AS %3$L $d$, name, params, E'BEGIN\nRETURN QUERY ' || statement || E';\nEND', settings)
$f$;

-- Writes the function that walks space s's index (brain._search_vector_name), when
-- it is not there: from brain._search_vector_hnsw_sql, the space's integers and
-- nothing else. Run by this file only, as the installer that applies it; who may
-- run it is decided with every function's privileges (025-tenancy.sql: the owner).
CREATE OR REPLACE FUNCTION brain._search_vector_make(s brain.embedding_space)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text := brain._search_vector_name(s);
BEGIN
    IF s.space_id IS NULL OR to_regproc(format('brain.%I', name)) IS NOT NULL THEN
        RETURN;
    END IF;
    -- The walk, whatever the statistics say: the plan is made once, and this shape
    -- serves only workspaces past brain._exact_rank_rows() (a plan made while the
    -- space was small, or had no statistics, would sort the workspace's vectors).
    EXECUTE brain._search_vector_function(name, 'req brain.search_request, candidates integer, waiting boolean',
                                          brain._search_vector_hnsw_sql(s), 'SET enable_sort = off');
    EXECUTE format('COMMENT ON FUNCTION brain.%I(brain.search_request, integer, boolean) IS %L', name,
                   format('brain.search''s vector leg in space %s through its index of watermark %s'
                          ' (brain._search_vector_hnsw_sql), planned once a session. Internal to search.',
                          s.space_id, s.indexed_through));
END
$$;

-- The memories the filters of a search keep (kept_ids), counted up to `most`
-- (brain._exact_rank_kept()): the selectivity that chooses the vector leg's
-- shape. Planned for the request's values on every call (plan_cache_mode): the
-- filters are what makes it cheap (a tag's or a kind's index), and a plan for
-- any filters would read the workspace in an index's order until enough pass,
-- every memory for a filter that keeps few. Only searches with filters and a
-- query vector run it. Through an index, as every leg reads memories: for a
-- filter that keeps most memories, reading the table in order until `most`
-- pass looked cheapest, and it read every page the table's first live rows
-- come after (12,000 pages for 2,000 facts at 100k memories, 6 ms).
-- A filter that keeps few rows (most that a user gives: a tag, a kind of a few)
-- is counted whole at once, up to a tenth of `most`. One that keeps more:
-- a filter that keeps more than `most` walks the index whatever the count says,
-- and counting it read `most` rows (a kind that keeps 70% of 100,000 memories:
-- 12,650 rows, 17 ms, as much as the search it chose for): a sample of the
-- table's pages (brain._kept_share_sample_rows rows, 0.3-0.9 ms) tells it first.
-- Its share of the workspace's rows in the sample, times the workspace's n_docs
-- memories, at least `walk_above` x most: `most` is returned, nothing is counted,
-- and the index is walked. For filters (walk_above 1.25, past the sample's
-- error): their rows may lie far from the query (a kind's rules), where the walk
-- costs several times the exact ranking near `most` (a tenth of 100,000
-- memories: 80 ms walked, 35 ranked). For a project alone (0.8): near `most`
-- the walk and the exact ranking cost about the same, and a count there cost as
-- much again whichever was taken (a tenth of 100,000 memories: 10,000 rows
-- counted through no index of its own, 18 ms more). A workspace the sample
-- holds too few rows of (one of many in the table), or a table never analyzed
-- (its size unknown), is counted. The sample is the same pages for the same
-- table (REPEATABLE), so the same search takes the same shape.
DROP FUNCTION IF EXISTS brain._search_kept(brain.search_request, integer);
DROP FUNCTION IF EXISTS brain._search_kept(brain.search_request, integer, bigint);
DO $do$
DECLARE
    -- (the count: of the first tenth of `most`, then of all of it)
    counted constant text := 'SELECT count(*), array_agg(x.memory_id) INTO kept, kept_ids'
                             ' FROM (SELECT m.memory_id FROM brain.memory m WHERE %s LIMIT %s) AS x';
BEGIN
    EXECUTE format($d$
        CREATE OR REPLACE FUNCTION brain._search_kept(req brain.search_request, most integer, n_docs bigint,
                                                      walk_above double precision,
                                                      OUT kept integer, OUT kept_ids bigint[])
        LANGUAGE plpgsql STABLE
        SET search_path = pg_catalog, pg_temp
        SET plan_cache_mode = force_custom_plan
        SET enable_seqscan = off
        SET jit = off
        AS %L $d$, format(E'DECLARE\n    seen integer;\n    passed integer;\nBEGIN\n%s;\n%s;\n%s;\n%s;\n%s;\nEND',
            format(counted, brain._search_filter(), '$2 / 10 + 1'),
            E'IF kept <= $2 / 10 THEN\n    RETURN;\nEND IF',
            format('SELECT count(*), count(*) FILTER (WHERE %s) INTO seen, passed'
                   ' FROM brain.memory m TABLESAMPLE SYSTEM ((SELECT CASE WHEN c.reltuples > 0 THEN least(100,'
                   ' 100.0 * brain._kept_share_sample_rows() / c.reltuples) ELSE 0 END'
                   ' FROM pg_catalog.pg_class c WHERE c.oid = ''brain.memory''::regclass))'
                   ' REPEATABLE (0) WHERE m.workspace_id = ($1).workspace_id', brain._search_filter()),
            'IF seen >= brain._kept_share_sample_rows() / 2 AND passed::double precision / seen * n_docs >= walk_above * most THEN'
            || E'\n    kept := most;\n    kept_ids := NULL;\n    RETURN;\nEND IF',
            format(counted, brain._search_filter(), '$2')));
END
$do$;
COMMENT ON FUNCTION brain._search_kept IS
    'The memories a search''s filters keep, counted up to most: the selectivity that chooses the vector leg''s shape; a filter a sample of the table''s pages shows keeping at least walk_above x most is not counted (it walks). Internal to search.';

-- The two shapes that name no space, and the walk of each space there is.
DO $do$
DECLARE
    s brain.embedding_space;
BEGIN
    EXECUTE brain._search_vector_function('_search_vector_kept',
        'req brain.search_request, space bigint, candidates integer', brain._search_vector_kept_sql());
    EXECUTE brain._search_vector_function('_search_vector_all',
        'req brain.search_request, space bigint, candidates integer', brain._search_vector_all_sql());
    FOR s IN SELECT * FROM brain.embedding_space ORDER BY workspace_id, space_id LOOP
        PERFORM brain._search_vector_make(s);
    END LOOP;
END
$do$;
COMMENT ON FUNCTION brain._search_vector_kept(brain.search_request, bigint, integer) IS
    'brain.search''s vector leg when selective filters keep few memories (brain._search_vector_kept_sql), planned once a session. Internal to search.';
COMMENT ON FUNCTION brain._search_vector_all(brain.search_request, bigint, integer) IS
    'brain.search''s vector leg in a small workspace (brain._search_vector_all_sql), planned once a session. Internal to search.';
