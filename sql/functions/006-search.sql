-- Retrieval: hybrid search (vector + ranked full text + trigram, fused by
-- reciprocal rank fusion and weighted; docs/ranking.md), skills, recent memories.

-- The WHERE clause every search leg shares, over brain.memory m, with the
-- parameters of brain.search's dynamic query ($4 .. $15, $17, $22, $23).
CREATE OR REPLACE FUNCTION brain._search_filter()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT $f$
        m.workspace_id = $17
        AND ($4 IS NULL OR m.kind = ANY ($4))
        AND ($5 IS NULL OR m.category = ANY ($5))
        AND ($6 IS NULL OR m.project IN ($6, ''))
        AND ($7 IS NULL OR m.tags @> $7)
        AND ($8 IS NULL OR m.people @> $8)
        AND ($9 IS NULL OR m.created_at >= $9)
        AND ($10 IS NULL OR m.created_at < $10)
        -- provenance: a source_ref ending in / is a folder, matching every ref under it
        AND ($22 IS NULL OR m.source_system = $22)
        AND ($23 IS NULL OR m.source_ref = $23 OR right($23, 1) = '/' AND starts_with(m.source_ref, $23))
        AND CASE WHEN $14 IS NULL THEN
                (m.state = 'active' OR ($11 AND m.state = 'superseded') OR ($12 AND m.state = 'archived'))
                -- dormant facts stay: decay lowers their rank, it never hides them ($13 is kept for callers)
                AND (m.expires_at IS NULL OR m.expires_at > $15)
            ELSE
                m.created_at <= $14
                AND (m.superseded_at IS NULL OR m.superseded_at > $14)
                AND (m.forgotten_at IS NULL OR m.forgotten_at > $14)
                AND (m.archived_at IS NULL OR m.archived_at > $14 OR $12)
                AND (m.expires_at IS NULL OR m.expires_at > $14)
            END
    $f$
$$;

-- The informative lexemes of a query OR-ed into a tsquery (NULL when none).
-- Word frequencies come from the planner's statistics of brain.memory.tsv
-- (most common elements, kept by ANALYZE): a word in more than
-- lexical_max_term_share of all memories (and in more than a tenth of
-- lexical_max_rows of them) says little about any one, and
-- the rarest words are taken only until about lexical_max_rows memories
-- match, so the lexical leg ranks a bounded number of rows. Without
-- statistics (a new or small table) every word counts.
CREATE OR REPLACE FUNCTION brain.lexical_query(query text)
RETURNS tsquery
LANGUAGE plpgsql STABLE
-- pg_stats hides a table's statistics from roles under its row-level security;
-- the owner reads them. Only word frequencies of the whole table leave here.
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lexemes text[] := tsvector_to_array(to_tsvector('english'::regconfig, coalesce(query, '')));
    elems text[];
    freqs real[];
    floor_freq real;
    total_rows real;
    max_share real := (brain.setting('lexical_max_term_share'))::real;
    max_rows real := (brain.setting('lexical_max_rows'))::real;
    picked text[] := '{}';
    matched real := 0;
    w record;
BEGIN
    IF cardinality(lexemes) = 0 THEN
        RETURN NULL;
    END IF;
    -- The ~1,700 lexemes through array_to_string and string_to_array: half the
    -- cost of the usual ::text::text[] round trip, whose array parser quotes.
    SELECT string_to_array(array_to_string(s.most_common_elems, E'\x01'), E'\x01'), s.most_common_elem_freqs
    INTO elems, freqs
    FROM pg_stats s WHERE s.schemaname = 'brain' AND s.tablename = 'memory' AND s.attname = 'tsv';
    IF elems IS NULL THEN
        RETURN brain.query_lexemes(query);
    END IF;
    -- After the element frequencies come the minimum, the maximum and the null fraction.
    floor_freq := freqs[cardinality(elems) + 1];
    SELECT c.reltuples INTO total_rows FROM pg_class c WHERE c.oid = 'brain.memory'::regclass;
    FOR w IN
        SELECT l AS lexeme, coalesce(freqs[array_position(elems, l)], floor_freq) AS share
        FROM unnest(lexemes) AS l
        ORDER BY 2, 1
    LOOP
        -- Too common: in more than max_share of the memories, and matching more than a tenth of the budget.
        EXIT WHEN w.share > max_share AND w.share * total_rows > max_rows / 10
               OR cardinality(picked) > 0 AND matched + w.share * total_rows > max_rows;
        picked := picked || w.lexeme;
        matched := matched + w.share * total_rows;
    END LOOP;
    RETURN nullif(array_to_string(ARRAY(SELECT quote_literal(p) FROM unnest(picked) AS p), ' | '), '')::tsquery;
END
$$;
COMMENT ON FUNCTION brain.lexical_query IS
    'The query words the lexical leg searches: stemmed, rarest first, leaving out words in more than lexical_max_term_share (2%) of memories and stopping near lexical_max_rows (1000) matching memories, by the planner''s statistics of the column. Every word when there are no statistics yet.';

-- The lexemes of a query OR-ed into a tsquery (NULL when it has none).
CREATE OR REPLACE FUNCTION brain.query_lexemes(query text)
RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT nullif(string_agg(quote_literal(lexeme), ' | '), '')::tsquery
    FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, coalesce(query, '')))) AS lexeme
$$;
COMMENT ON FUNCTION brain.query_lexemes IS
    'The query''s words, stemmed (english) and OR-ed: a memory matches the lexical leg if it shares any.';

CREATE OR REPLACE FUNCTION brain.search(
    query text,
    query_embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    kinds text[] DEFAULT NULL,
    categories text[] DEFAULT NULL,
    project text DEFAULT NULL,
    tags text[] DEFAULT NULL,
    people text[] DEFAULT NULL,
    created_after timestamptz DEFAULT NULL,
    created_before timestamptz DEFAULT NULL,
    include_superseded boolean DEFAULT false,
    include_archived boolean DEFAULT false,
    include_dormant boolean DEFAULT false,
    as_of timestamptz DEFAULT NULL,
    max_results integer DEFAULT 10,
    now timestamptz DEFAULT NULL,
    source_system text DEFAULT NULL,
    source_ref text DEFAULT NULL
)
RETURNS SETOF brain.search_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
SET hnsw.iterative_scan = relaxed_order
SET hnsw.ef_search = 40
SET hnsw.max_scan_tuples = 20000  -- raised below for selective filters, restored on return
-- One query, short plans: compiling it would cost more than it saves.
SET jit = off
-- The prepared search statement (below) runs its generic plan: see there.
SET plan_cache_mode = force_generic_plan
SET pg_trgm.word_similarity_threshold = 0.5
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    clock timestamptz := coalesce(search.now, pg_catalog.now());
    q text := brain.trim_space(coalesce(query, ''));
    space brain.embedding_space;
    vec public.vector;
    tsq tsquery := brain.lexical_query(brain._bounded('query', query, 4000));
    candidates integer := greatest((brain.setting('search_candidates'))::integer, max_results * 2);
    fuzzy boolean;
    vector_sql text := 'SELECT NULL::bigint AS memory_id, NULL::bigint AS r, NULL::real AS sim WHERE false';
    lexical_sql text := 'SELECT NULL::bigint AS memory_id, NULL::bigint AS r WHERE false';
    fuzzy_sql text := 'SELECT NULL::bigint AS memory_id, NULL::bigint AS r WHERE false';
    skills_sql text := 'SELECT NULL::bigint AS memory_id, NULL::text AS skill, NULL::bigint AS r WHERE false';
    -- Without selective filters every search of a shape can share one plan.
    prepared boolean := kinds IS NULL AND categories IS NULL AND tags IS NULL AND people IS NULL
                        AND created_after IS NULL AND created_before IS NULL AND as_of IS NULL
                        AND source_system IS NULL AND source_ref IS NULL;
    statement text;
    statement_name text;
    stale text;
    kept integer;  -- rows the selective filters keep, counted up to brain._exact_rank_rows()
BEGIN
    IF max_results IS NULL OR max_results NOT BETWEEN 1 AND 100 THEN
        PERFORM brain._raise('BR009', 'max_results lies between 1 and 100.',
            jsonb_build_object('max_results', max_results), 'The default is 10.');
    END IF;
    IF q = '' AND query_embedding IS NULL THEN
        PERFORM brain._raise('BR009', 'A search needs a query text or a query embedding.', NULL,
            'To list memories without a query, use brain.list_recent.');
    END IF;
    IF query_embedding IS NOT NULL THEN
        space := brain._resolve_space(embedding_space);
        vec := brain._check_vector(query_embedding, space);
        PERFORM set_config('hnsw.ef_search',
            greatest((brain.setting('hnsw_ef_search'))::integer, candidates)::text, true);
        -- The space's HNSW index (and an exact ranking of vectors it does not hold
        -- yet: brain._nearest_sql); iterative scans keep filtered searches from
        -- returning fewer rows than exist.
        -- The filters are a subquery per candidate, so the plan (generic when
        -- prepared) has no cheaper way than walking the HNSW index. Selective
        -- filters that keep few rows rank them exactly instead (below).
        IF NOT prepared THEN
            -- The plan by the filters' selectivity: the rows they keep, counted up to
            -- brain._exact_rank_rows(). Fewer are ranked exactly; more walk the
            -- index, with a tuple budget that lets the walk reach `candidates`
            -- of them (about candidates x space / kept tuples).
            EXECUTE format('SELECT count(*) FROM (SELECT FROM brain.memory m WHERE %s LIMIT %s) AS x',
                           brain._search_filter(), brain._exact_rank_rows())
            INTO kept
            USING q, vec, tsq, kinds, categories, project, tags, people, created_after, created_before,
                  include_superseded, include_archived, include_dormant, as_of, clock, candidates, ws,
                  NULL::double precision, NULL::integer, NULL::integer, NULL::double precision,
                  source_system, source_ref;
            PERFORM set_config('hnsw.max_scan_tuples', greatest(20000, ceil(2.0 * candidates
                * (SELECT c.reltuples FROM pg_catalog.pg_class c WHERE c.oid = 'brain.embedding'::regclass)
                / brain._exact_rank_rows()))::bigint::text, true);
        END IF;
        vector_sql := format($v$
            SELECT x.memory_id, x.r, x.sim
            -- ranked over both parts of brain._nearest_sql; each part keeps its own plan
            FROM (SELECT k.memory_id, row_number() OVER (ORDER BY k.dist, k.memory_id) AS r,
                         (1 - k.dist)::real AS sim
                  FROM (%s) AS k
                  WHERE 1 - k.dist >= $21) AS x
            WHERE x.r <= %s $v$,
            CASE WHEN kept < brain._exact_rank_rows() THEN
                brain._exact_nearest_sql(space, format('$2::public.vector(%s)', space.dims),
                                         brain._search_filter(), candidates)
            ELSE
            brain._nearest_sql(space, format('$2::public.vector(%s)', space.dims), '',
                'e.workspace_id = $17 AND '
                || format('(SELECT %s FROM brain.memory m WHERE m.workspace_id = e.workspace_id'
                          ' AND m.memory_id = e.memory_id)', brain._search_filter()),
                candidates) END,
            candidates);
    END IF;
    IF tsq IS NOT NULL THEN
        lexical_sql := format($l$
            SELECT m.memory_id,
                   row_number() OVER (ORDER BY ts_rank_cd(m.tsv, $3) DESC, m.memory_id DESC) AS r
            FROM brain.memory m
            WHERE m.tsv @@ $3 AND %1$s
            ORDER BY ts_rank_cd(m.tsv, $3) DESC, m.memory_id DESC
            LIMIT %2$s $l$, brain._search_filter(), candidates);
    END IF;
    -- Trigram matching serves short queries: typos, identifiers, headline fragments.
    -- When words were left out for being common, trigrams of those words would only
    -- rank the same crowd of memories, slowly: then the leg does not run.
    fuzzy := length(q) >= 3 AND brain.word_count(q) <= 5
             AND numnode(coalesce(tsq, ''::tsquery)) = numnode(coalesce(brain.query_lexemes(query), ''::tsquery));
    IF fuzzy THEN
        fuzzy_sql := format($t$
            SELECT m.memory_id,
                   row_number() OVER (ORDER BY public.word_similarity($1, m.headline) DESC, m.memory_id DESC) AS r
            FROM brain.memory m
            WHERE $1 OPERATOR(public.<%%) m.headline AND %1$s
              -- typos and fragments matter when the words found little
              AND (SELECT count(*) FROM lex) < 5
            ORDER BY public.word_similarity($1, m.headline) DESC, m.memory_id DESC
            LIMIT %2$s $t$, brain._search_filter(), candidates);
    END IF;

    -- Skills are looked for only in workspaces that have some (most have none).
    IF q <> '' AND EXISTS (SELECT FROM brain.memory m
                           WHERE m.workspace_id = ws AND m.skill_trigger IS NOT NULL AND m.state = 'active') THEN
        skills_sql := format($s$
            SELECT m.memory_id, m.skill_trigger->>'name' AS skill,
                   row_number() OVER (ORDER BY m.pinned DESC, m.importance DESC, m.memory_id) AS r
            FROM brain.memory m
            WHERE m.skill_trigger IS NOT NULL AND %1$s
              AND m.state = 'active'
              AND EXISTS (SELECT FROM jsonb_array_elements_text(
                              coalesce(m.skill_trigger->'keywords', '[]')) AS kw
                          WHERE kw <> '' AND strpos(lower($1), lower(kw)) > 0)
              AND (coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
                   OR ($6 IS NOT NULL AND m.skill_trigger->'projects' ? $6))
            ORDER BY r
            LIMIT $19 $s$, brain._search_filter());
    END IF;

    statement := format($q$
        WITH vec AS (%1$s), lex AS (%2$s), fuz AS (%3$s),
        legs AS (
            SELECT v.memory_id, v.r, 'vector' AS leg FROM vec v
            UNION ALL SELECT l.memory_id, l.r, 'lexical' FROM lex l
            UNION ALL SELECT z.memory_id, z.r, 'fuzzy' FROM fuz z
        ),
        fused AS (
            SELECT g.memory_id,
                   sum(1.0 / ($18 + g.r)) AS rrf,
                   min(g.r) FILTER (WHERE g.leg = 'vector')::integer AS vector_rank,
                   min(g.r) FILTER (WHERE g.leg = 'lexical')::integer AS lexical_rank,
                   min(g.r) FILTER (WHERE g.leg = 'fuzzy')::integer AS fuzzy_rank
            FROM legs g GROUP BY g.memory_id
        ),
        skills AS (%4$s),
        scored AS (
            SELECT f.memory_id, f.vector_rank, f.lexical_rank, f.fuzzy_rank,
                   f.rrf
                   * brain.rank_weight(m.kind, m.origin, m.pinned, m.importance, m.upvotes, m.downvotes,
                                       greatest(m.created_at, m.last_accessed, m.last_confirmed_at),
                                       -- records that do not decay (brain._undecaying) have no dormancy date
                                       CASE WHEN m.dormant_after IS NULL AND m.origin IN ('observed', 'artifact')
                                            THEN NULL ELSE fa.halflife_days END,
                                       coalesce($14, $15)) AS score
            FROM fused f
            JOIN brain.memory m ON m.workspace_id = $17 AND m.memory_id = f.memory_id
            LEFT JOIN brain.fact fa ON fa.workspace_id = $17 AND fa.memory_id = f.memory_id
        ),
        ranked AS (
            SELECT sk.memory_id, sk.skill, s.vector_rank, s.lexical_rank, s.fuzzy_rank,
                   coalesce(sc.score, 0) AS score, 0 AS tier, sk.r AS place
            FROM skills sk
            LEFT JOIN scored sc ON sc.memory_id = sk.memory_id
            LEFT JOIN fused s ON s.memory_id = sk.memory_id
            UNION ALL
            SELECT sc.memory_id, NULL, sc.vector_rank, sc.lexical_rank, sc.fuzzy_rank, sc.score, 1,
                   row_number() OVER (ORDER BY sc.score DESC, sc.memory_id DESC)
            FROM scored sc
            WHERE sc.memory_id NOT IN (SELECT sk.memory_id FROM skills sk)
        )
        SELECT m.memory_id, m.kind, m.category, m.project, m.headline, brain.preview(m.body),
               rk.score::double precision, rk.vector_rank, rk.lexical_rank, rk.fuzzy_rank, v.sim,
               m.state, m.pinned, m.superseded_by,
               CASE WHEN m.state = 'superseded' THEN brain.current_version(m.memory_id) ELSE m.memory_id END,
               rk.skill, m.created_at,
               CASE WHEN brain._is_flagged(m.flag_reasons, m.flag_confirmed_at) THEN m.flag_reasons END
        -- the page first, then its rows: max_results lookups, not one per candidate
        FROM (SELECT r.* FROM ranked r ORDER BY r.tier, r.place LIMIT $20) AS rk
        JOIN brain.memory m ON m.workspace_id = $17 AND m.memory_id = rk.memory_id
        LEFT JOIN vec v ON v.memory_id = rk.memory_id
        ORDER BY rk.tier, rk.place $q$,
        vector_sql, lexical_sql, fuzzy_sql, skills_sql);
    IF NOT prepared THEN
        -- Filters that may keep few rows: planned for their values, every call.
        RETURN QUERY EXECUTE statement
        USING q, vec, tsq, kinds, categories, project, tags, people, created_after, created_before,
              include_superseded, include_archived, include_dormant, as_of, clock, candidates, ws,
              (brain.setting('rrf_k'))::double precision, (brain.setting('skill_trigger_max'))::integer,
              max_results, (brain.setting('vector_min_similarity'))::double precision,
              source_system, source_ref;
        RETURN;
    END IF;
    -- Otherwise the statement differs by space, legs and candidate count only,
    -- so each session prepares each shape once and runs its generic plan:
    -- planning it again on every call cost about 1 ms. Limits that shape the
    -- plan are literals, so the generic plan walks the HNSW index as a custom
    -- one does (with LIMIT $n it would sort the whole space instead).
    statement_name := 'brain_search_' || md5(statement);
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_prepared_statements p WHERE p.name = statement_name) THEN
        -- Statements name their space's indexed_through, so each index rebuild
        -- brings new ones: a long-lived session keeps at most 32.
        IF (SELECT count(*) FROM pg_catalog.pg_prepared_statements p WHERE p.name LIKE 'brain\_search\_%') >= 32 THEN
            FOR stale IN SELECT p.name FROM pg_catalog.pg_prepared_statements p
                         WHERE p.name LIKE 'brain\_search\_%' LOOP
                EXECUTE format('DEALLOCATE %I', stale);
            END LOOP;
        END IF;
        EXECUTE format('PREPARE %I(text, public.vector, tsquery, text[], text[], text, text[], text[],'
                       ' timestamptz, timestamptz, boolean, boolean, boolean, timestamptz, timestamptz,'
                       ' integer, bigint, double precision, integer, integer, double precision, text, text) AS %s',
                       statement_name, statement);
    END IF;
    -- EXECUTE of a prepared statement takes no $n parameters from PL/pgSQL: the
    -- values go in as literals (the vector as text: about 0.05 ms).
    RETURN QUERY EXECUTE format('EXECUTE %I(%L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L, %L,'
                                ' %L, %L, %L, %L, %L, %L)', statement_name,
        q, vec, tsq, kinds, categories, project, tags, people, created_after, created_before,
        include_superseded, include_archived, include_dormant, as_of, clock, candidates, ws,
        (brain.setting('rrf_k'))::double precision, (brain.setting('skill_trigger_max'))::integer,
        max_results, (brain.setting('vector_min_similarity'))::double precision, search.source_system,
        search.source_ref);
END
$$;
COMMENT ON FUNCTION brain.search IS
    'Hybrid search: HNSW vector leg (when query_embedding is given), ranked full-text leg, trigram leg for short queries; fused by reciprocal rank fusion and weighted by decay, rating, pin, importance and overlay origin (docs/ranking.md); decay lowers a fact''s rank and never hides it (dormant facts are searched; include_dormant is accepted and has no effect). Matching skills come first, marked via_skill_trigger. Filters: kinds, categories, project (plus global), tags and people (all given), created range, states, as_of, provenance (source_system; source_ref exact, or every ref under it when it ends in /). Headlines and previews only: bodies come from brain.recall.';

CREATE OR REPLACE FUNCTION brain.rank_weight(kind text, origin text, pinned boolean, importance real,
                                             upvotes integer, downvotes integer, last_touch timestamptz,
                                             halflife_days double precision, now timestamptz)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- No SET clause: the planner inlines it into search's scoring (one call per
-- candidate otherwise cost 20 us each). Built-ins and brain.decay_score only.
AS $$
    SELECT (CASE WHEN kind = 'fact' AND halflife_days IS NOT NULL
                 THEN 0.5 + 0.5 * brain.decay_score(last_touch, halflife_days, now) ELSE 1 END)
         * (1 + 0.05 * greatest(-10, least(10, upvotes - downvotes)))
         * (CASE WHEN pinned THEN 1.2 ELSE 1 END)
         * (CASE WHEN origin = 'overlay' THEN 1.2 ELSE 1 END)
         * (0.75 + 0.5 * importance)
$$;
COMMENT ON FUNCTION brain.rank_weight IS
    'The factor that multiplies a result''s fused score: fact decay (0.5 + 0.5 x decay), rating (1 + 0.05 x (up - down), clamped to +-10), pin (x1.2), overlay origin (x1.2), importance (0.75 + 0.5 x importance). docs/ranking.md.';

-- Not inlined on purpose (the SET clause): as a function call it counts as
-- expensive, so a query evaluates it only for the rows left after its LIMIT.
CREATE OR REPLACE FUNCTION brain.preview(body text, max_chars integer DEFAULT 160)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN length(t) <= max_chars THEN t
                ELSE rtrim(left(t, max_chars - 1)) || '…' END
    FROM (SELECT brain.trim_space(regexp_replace(coalesce(body, ''), '\s+', ' ', 'g')) AS t) AS x
$$;
COMMENT ON FUNCTION brain.preview IS 'The start of a body on one line, at most max_chars characters.';

CREATE OR REPLACE FUNCTION brain.load_skill(name text, project text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_id bigint;
BEGIN
    SELECT m.memory_id INTO found_id
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND m.skill_trigger->>'name' = load_skill.name
      AND (coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
           OR (load_skill.project IS NOT NULL AND m.skill_trigger->'projects' ? load_skill.project));
    IF found_id IS NULL THEN
        PERFORM brain._raise('BR010', format('No active skill %L here.', name),
            jsonb_build_object('skill', name, 'project', project),
            'Skills scoped to projects load only from those projects; superseded skills never load.');
    END IF;
    RETURN brain.recall(found_id);
END
$$;
COMMENT ON FUNCTION brain.load_skill IS
    'The active skill with this name (global, or scoped to the given project), recalled in full.';

CREATE OR REPLACE FUNCTION brain.list_recent(
    kinds text[] DEFAULT NULL,
    project text DEFAULT NULL,
    max_results integer DEFAULT 20,
    include_superseded boolean DEFAULT false,
    include_archived boolean DEFAULT false
)
RETURNS SETOF brain.memory_brief
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.kind, m.category, m.project, m.headline, brain.preview(m.body), m.state,
           m.pinned, m.created_at
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace()
      AND (kinds IS NULL OR m.kind = ANY (kinds))
      AND (list_recent.project IS NULL OR m.project IN (list_recent.project, ''))
      AND (m.state = 'active' OR (include_superseded AND m.state = 'superseded')
           OR (include_archived AND m.state = 'archived'))
    ORDER BY m.created_at DESC, m.memory_id DESC
    LIMIT greatest(1, least(max_results, 500))
$$;
COMMENT ON FUNCTION brain.list_recent IS 'The newest memories, headlines and previews, filtered like search.';

CREATE OR REPLACE FUNCTION brain.list_skills(project text DEFAULT NULL)
RETURNS TABLE (name text, id bigint, headline text, keywords jsonb, projects jsonb, always_on boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.skill_trigger->>'name', m.memory_id, m.headline,
           coalesce(m.skill_trigger->'keywords', '[]'), coalesce(m.skill_trigger->'projects', '[]'),
           coalesce((m.skill_trigger->>'always_on')::boolean, false)
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND m.skill_trigger IS NOT NULL
      AND (list_skills.project IS NULL
           OR coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
           OR m.skill_trigger->'projects' ? list_skills.project)
    ORDER BY 1
$$;
COMMENT ON FUNCTION brain.list_skills IS
    'Active skills (global, plus those scoped to the given project; all when project is NULL).';
