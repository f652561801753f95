-- Boot, its parts: token estimates, sections and their counts, and the pattern
-- rules (kept in step by triggers) that a boot finds near a task. The payload:
-- 015a-boot-payload.sql.

-- (No SET clause: inlined into its callers, a boot's seventy lines among them.)
CREATE OR REPLACE FUNCTION brain.estimate_tokens(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT pg_catalog.ceil(pg_catalog.char_length(coalesce(t, '')) OPERATOR(pg_catalog./) 4.0)::integer
$$;
COMMENT ON FUNCTION brain.estimate_tokens IS
    'Estimated tokens of a text: one per 4 characters, rounded up (the usual ratio of BPE tokenizers on English). Boot budgets count with it.';

-- What one payload line costs: the rendered line "- #id text" and its newline.
-- (No SET clause: inlined.)
CREATE OR REPLACE FUNCTION brain._line_tokens(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT brain.estimate_tokens('- ' OPERATOR(pg_catalog.||) t) OPERATOR(pg_catalog.+) 1
$$;

-- A section's items with the age of each (brain._age_text of the memory's
-- creation: the _at a section's statement gave its item, which goes, or the
-- item's own created_at, else looked up), its tokens counted with it
-- (ceil(a / 4) + ceil(b / 4) is at least ceil((a + b) / 4): never under).
CREATE OR REPLACE FUNCTION brain._aged(ws bigint, items jsonb, clock timestamptz)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_agg((i.item - '_at') || jsonb_build_object(
                        'age', a.age,
                        'tokens', coalesce((i.item->>'tokens')::integer, 0) + brain.estimate_tokens('(' || a.age || ') '))
                    ORDER BY i.n), '[]')
    FROM jsonb_array_elements(coalesce(items, '[]')) WITH ORDINALITY AS i(item, n)
    CROSS JOIN LATERAL (
        SELECT brain._age_text(coalesce((i.item->>'_at')::timestamptz, (i.item->>'created_at')::timestamptz,
                                        (SELECT m.created_at FROM brain.memory m
                                         WHERE m.workspace_id = ws AND m.memory_id = (i.item->>'id')::bigint)),
                               clock) || ' ago' AS age
        OFFSET 0) AS a  -- (once an item: not copied into each use)
$$;

CREATE OR REPLACE FUNCTION brain._section_tokens(items jsonb, heading text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    -- a blank line and a heading per non-empty section, plus its items
    SELECT CASE WHEN jsonb_array_length(items) = 0 THEN 0
                ELSE 1 + brain.estimate_tokens(heading) + 1
                     + (SELECT sum((i->>'tokens')::integer) FROM jsonb_array_elements(items) AS i)::integer END
$$;

-- A count and its noun, singular for one ("1 fact", "2 facts"; "pinned" stays).
CREATE OR REPLACE FUNCTION brain._counted(n text, noun text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT n || ' ' || CASE WHEN n = '1' AND noun LIKE '%s' THEN left(noun, -1) ELSE noun END
$$;

-- The closing line: what else exists, and what the budget left out.
CREATE OR REPLACE FUNCTION brain._more_line(more jsonb, dropped jsonb, budget integer)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    -- Counts stop at 100 (brain.boot_payload counts no further): shown as "100+".
    SELECT 'More: '
        || CASE WHEN coalesce((more->>'pinned')::integer, 0) > 0
                THEN (CASE WHEN (more->>'pinned')::integer >= 100 THEN '100+' ELSE more->>'pinned' END) || ' pinned, '
                ELSE '' END
        || (SELECT string_agg(brain._counted(CASE WHEN (more->>c.k)::integer >= 100 THEN '100+' ELSE more->>c.k END,
                                             c.k), ', ' ORDER BY c.n)
            FROM unnest(ARRAY['blockers', 'patterns', 'tasks', 'facts', 'incidents']) WITH ORDINALITY AS c(k, n))
        || ' not shown'
        || coalesce('; left out for the ' || budget || '-token budget: '
                    || (SELECT string_agg(brain._counted(d.value, replace(d.key, '_', ' ')), ', ' ORDER BY d.ord)
                        FROM jsonb_each_text(dropped) WITH ORDINALITY AS d(key, value, ord)), '')
        || '.'
$$;

-- What a boot payload may show of a memory row by itself: active, no skill
-- trigger (a skill loads as one: always_on, or on demand), not flagged. Every
-- section's query and the PATTERN index's triggers use it; inlined (no SET
-- clause), so the planner still sees state = 'active' for its indexes.
CREATE OR REPLACE FUNCTION brain._bootable(state text, skill_trigger jsonb, flag_reasons text[],
                                           flag_confirmed_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT state = 'active' AND skill_trigger IS NULL AND NOT brain._is_flagged(flag_reasons, flag_confirmed_at)
$$;

-- Rules of a severity in the projects of a boot's scope, counted up to `cap`.
CREATE OR REPLACE FUNCTION brain._boot_count(ws bigint, projects text[], severity text, cap integer)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*) FROM (
        SELECT FROM brain.memory m JOIN brain.rule r ON r.workspace_id = m.workspace_id AND r.memory_id = m.memory_id
        WHERE m.workspace_id = ws AND m.project = ANY (projects) AND m.kind = 'rule'
          AND brain._bootable(m.state, m.skill_trigger, m.flag_reasons, m.flag_confirmed_at)
          AND r.severity = _boot_count.severity
        LIMIT cap) AS x
$$;

-- The part of brain._is_pattern_rule (below) a memory row decides by itself:
-- its triggers fire only when that changes.
CREATE OR REPLACE FUNCTION brain._may_be_pattern_rule(kind text, state text, skill_trigger jsonb,
                                                      flag_reasons text[], flag_confirmed_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT kind = 'rule' AND brain._bootable(state, skill_trigger, flag_reasons, flag_confirmed_at)
$$;

-- A memory that the boot payload's PATTERN section may show: an active,
-- unflagged PATTERN rule without a skill trigger. Its vectors carry
-- pattern_rule (migration 018), so that the space's index of PATTERN rules
-- (brain._pattern_index_sql) holds them and nothing else.
CREATE OR REPLACE FUNCTION brain._is_pattern_rule(ws bigint, id bigint)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (
        SELECT FROM brain.memory m JOIN brain.rule r ON r.workspace_id = m.workspace_id AND r.memory_id = m.memory_id
        WHERE m.workspace_id = ws AND m.memory_id = id AND r.severity = 'PATTERN'
          AND brain._may_be_pattern_rule(m.kind, m.state, m.skill_trigger, m.flag_reasons, m.flag_confirmed_at))
$$;

-- A new vector: pattern_rule as its memory is now (a write stores the
-- memory and its rule row first, so this is the common case).
CREATE OR REPLACE FUNCTION brain._embedding_pattern_rule()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.pattern_rule := brain._is_pattern_rule(NEW.workspace_id, NEW.memory_id);
    RETURN NEW;
END
$$;

-- A memory or rule row changed what decides it: the vectors of the memory,
-- in every space, follow (a superseded, flagged, confirmed, deprecated or
-- restored rule). Only the rows that change are written.
CREATE OR REPLACE FUNCTION brain._sync_pattern_rule()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    is_pattern boolean := brain._is_pattern_rule(NEW.workspace_id, NEW.memory_id);
BEGIN
    UPDATE brain.embedding e SET pattern_rule = is_pattern
    WHERE e.workspace_id = NEW.workspace_id AND e.memory_id = NEW.memory_id AND e.pattern_rule <> is_pattern;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER embedding_pattern_rule BEFORE INSERT ON brain.embedding
    FOR EACH ROW EXECUTE FUNCTION brain._embedding_pattern_rule();
CREATE OR REPLACE TRIGGER memory_pattern_rule
    AFTER UPDATE OF kind, state, skill_trigger, flag_reasons, flag_confirmed_at ON brain.memory
    FOR EACH ROW
    WHEN (brain._may_be_pattern_rule(OLD.kind, OLD.state, OLD.skill_trigger, OLD.flag_reasons, OLD.flag_confirmed_at)
          IS DISTINCT FROM
          brain._may_be_pattern_rule(NEW.kind, NEW.state, NEW.skill_trigger, NEW.flag_reasons, NEW.flag_confirmed_at))
    EXECUTE FUNCTION brain._sync_pattern_rule();
CREATE OR REPLACE TRIGGER rule_pattern_rule_insert AFTER INSERT ON brain.rule
    FOR EACH ROW WHEN (NEW.severity = 'PATTERN')
    EXECUTE FUNCTION brain._sync_pattern_rule();
CREATE OR REPLACE TRIGGER rule_pattern_rule_update AFTER UPDATE OF severity ON brain.rule
    FOR EACH ROW WHEN (OLD.severity IS DISTINCT FROM NEW.severity)
    EXECUTE FUNCTION brain._sync_pattern_rule();

-- The k PATTERN rules of the scope nearest to vec (none without vec): ranked
-- exactly when the scope holds fewer than k + 100 of them (scope: their count,
-- brain._boot_count up to k + 100, which the boot payload shows as well), else
-- an iterative walk of the space's index of PATTERN rules
-- (brain._pattern_index_sql), which holds them and nothing else, indexed and
-- waiting vectors alike: the walk passes over the rules of other projects
-- only, whatever else the space holds. Walking the space's whole index for
-- them visited about 4,500 tuples a boot at 1M memories (issue 14). Counting
-- up to exact_rank_rows (2000) instead of k + 100 joined that many rules to
-- theirs (7 ms at 1M memories), more than the walk costs.
-- Both statements are static SQL in a function of the space's own
-- (brain._boot_patterns_make), planned once a session, as search's vector leg
-- is (005e-search-vector.sql): planning the walk took a tenth of a boot. A
-- space registered after the function files were applied runs them planned on
-- each call until the files are next applied (`brain init` applies them again
-- once it registered one).
-- Their parameters: $1 the workspace, $2 its projects, $3 the task's vector, $4 k.
CREATE OR REPLACE FUNCTION brain._boot_patterns_sql(s brain.embedding_space, exact boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT CASE WHEN exact
                THEN brain._exact_nearest_sql(s, format('$3::public.vector(%s)', s.dims), x.filter, '$4')
                ELSE format($q$
                 (SELECT e.memory_id, e.embedding::public.vector(%1$s) OPERATOR(public.<=>) $3::public.vector(%1$s) AS dist
                  FROM brain.embedding e
                  JOIN brain.memory m ON m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id
                  WHERE e.space_id = %2$s AND e.pattern_rule AND e.workspace_id = $1 AND %3$s
                  ORDER BY e.embedding::public.vector(%1$s) OPERATOR(public.<=>) $3::public.vector(%1$s)
                  LIMIT $4) $q$, s.dims::integer, s.space_id::bigint, x.filter) END
    FROM (SELECT 'm.workspace_id = $1 AND m.project = ANY ($2) AND m.kind = ''rule''
                  AND brain._bootable(m.state, m.skill_trigger, m.flag_reasons, m.flag_confirmed_at)
                  AND EXISTS (SELECT FROM brain.rule r WHERE r.workspace_id = m.workspace_id
                              AND r.memory_id = m.memory_id AND r.severity = ''PATTERN'')' AS filter) AS x
$f$;

CREATE OR REPLACE FUNCTION brain._boot_patterns_name(s brain.embedding_space)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT '_boot_patterns_' || s.space_id::bigint
$$;

-- Writes space s's function of the two statements, when it is not there: from
-- brain._boot_patterns_sql, the space's integers and nothing else. Run by this
-- file only, as the installer that applies it; who may run it is decided with
-- every function's privileges (025a-tenancy-catalogue.sql). Dropped with its
-- space (brain.drop_embedding_space).
CREATE OR REPLACE FUNCTION brain._boot_patterns_make(s brain.embedding_space)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF s.space_id IS NOT NULL AND to_regproc(format('brain.%I', brain._boot_patterns_name(s))) IS NULL THEN
        EXECUTE format($d$
            CREATE OR REPLACE FUNCTION brain.%1$I(ws bigint, projects text[], vec public.vector, k integer,
                                                  exact boolean)
            RETURNS TABLE (memory_id bigint, dist double precision)
            LANGUAGE plpgsql STABLE
            SET search_path = pg_catalog, pg_temp
            SET plan_cache_mode = force_generic_plan
            SET jit = off
            SET hnsw.iterative_scan = strict_order
            SET hnsw.max_scan_tuples = 20000
            SET enable_sort = off
            AS %2$L $d$, brain._boot_patterns_name(s),
            format(E'BEGIN\nIF exact THEN\nRETURN QUERY SELECT x.memory_id, x.dist FROM %s AS x ORDER BY x.dist LIMIT $4;\n'
                   || E'ELSE\nRETURN QUERY SELECT x.memory_id, x.dist FROM %s AS x ORDER BY x.dist LIMIT $4;\nEND IF;\nEND',
                   brain._boot_patterns_sql(s, true), brain._boot_patterns_sql(s, false)));
        EXECUTE format('COMMENT ON FUNCTION brain.%I(bigint, text[], public.vector, integer, boolean) IS %L',
                       brain._boot_patterns_name(s),
                       format('The boot payload''s PATTERN rules nearest a task in space %s (brain._boot_patterns_sql),'
                              ' planned once a session. Internal to the boot.', s.space_id));
    END IF;
END
$$;

DROP FUNCTION IF EXISTS brain._boot_patterns_near(bigint, text[], brain.embedding_space, public.vector, integer);
CREATE OR REPLACE FUNCTION brain._boot_patterns_near(ws bigint, projects text[], s brain.embedding_space,
                                                     vec public.vector, k integer, scope bigint)
RETURNS TABLE (memory_id bigint, dist double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
SET hnsw.iterative_scan = strict_order
SET hnsw.max_scan_tuples = 20000
-- The index, whatever the estimates say (as in brain._nearest_k).
SET enable_sort = off
AS $$
DECLARE
    exact boolean := scope < k + 100;
BEGIN
    IF vec IS NULL OR k < 1 THEN
        RETURN;
    END IF;
    IF to_regproc(format('brain.%I', brain._boot_patterns_name(s))) IS NOT NULL THEN
        RETURN QUERY EXECUTE format('SELECT x.memory_id, x.dist FROM brain.%I($1, $2, $3, $4, $5) AS x',
                                    brain._boot_patterns_name(s))
        USING ws, projects, vec, k, exact;
    ELSE
        RETURN QUERY EXECUTE format('SELECT x.memory_id, x.dist FROM %s AS x ORDER BY x.dist LIMIT $4',
                                    brain._boot_patterns_sql(s, exact))
        USING ws, projects, vec, k;
    END IF;
END
$$;

-- The function of each space there is.
DO $do$
DECLARE
    s brain.embedding_space;
BEGIN
    FOR s IN SELECT * FROM brain.embedding_space ORDER BY workspace_id, space_id LOOP
        PERFORM brain._boot_patterns_make(s);
    END LOOP;
END
$do$;
