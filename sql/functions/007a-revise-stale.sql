-- Dependent staleness (migration 035): a supersede marks the active memories
-- of the old memory's project that state its old value as depending on a
-- changed fact, with a link to the change; its undo takes the marks away.
-- Search ranks a marked memory below the current statement, every reader
-- shows the mark, and brain.stale lists what a change left to review.

-- The values one text states and another does not: its distinguishing terms
-- (brain.distinguishing_terms) that name a value, a token with a digit (a
-- port, a version, a date) or an inner . _ / : @ # (a host, a path, an
-- address), at least 2 characters, that the other text lacks. Names and
-- acronyms are left out: a fact's wording changes them more often than its
-- value.
CREATE OR REPLACE FUNCTION brain._changed_values(this_text text, other_text text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(t.v ORDER BY t.v), '{}')
    FROM unnest(brain.distinguishing_terms(this_text)) AS t(v)
    WHERE length(t.v) >= 2 AND (t.v ~ '[0-9]' OR t.v ~ '[[:alnum:]][_./:@#][[:alnum:]]')
      AND NOT t.v = ANY (brain.distinguishing_terms(other_text))
$$;

-- The mark a line shows when the memory depends on a changed fact.
CREATE OR REPLACE FUNCTION brain._stale_mark_text(changed_id bigint, change_id bigint)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN changed_id IS NOT NULL
                THEN format(' (depends on #%s, changed by #%s: brain stale)', changed_id, change_id)
                ELSE '' END
$$;

-- The newest mark of an active memory: {on, by, values}; NULL when it has none.
-- (PL/pgSQL, as every function here that reads brain.stale_mark: the functions are
-- applied over a database of any migration, and only an SQL function's body is
-- checked against the tables when it is created.)
CREATE OR REPLACE FUNCTION brain._stale_of(ws bigint, id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT jsonb_build_object('on', s.changed_id, 'by', s.change_id, 'values', to_jsonb(s.old_values))
            FROM brain.stale_mark s
            WHERE s.workspace_id = ws AND s.memory_id = id
            ORDER BY s.created_at DESC, s.change_id DESC
            LIMIT 1);
END
$$;

-- The active memories of a project that hold q's words, in the caller's own
-- workspace: the candidates a supersede's marks are looked for among
-- (brain._mark_dependents). As the owner, for the full-text index: a caller's
-- statement under row-level security cannot use it (`@@` is not leakproof) and
-- read every memory of the project for each supersede (brain._prompt_subject
-- says more). It tells only what the caller's own statements could.
CREATE OR REPLACE FUNCTION brain._project_holding(q tsquery, project text)
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE
ROWS 100
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan  -- (planned for its words, as brain._prompt_subject's)
AS $$
DECLARE
    ws bigint := brain._caller_workspace();  -- (first, whatever the arguments)
BEGIN
    RETURN QUERY SELECT m.memory_id FROM brain.memory m
                 WHERE m.workspace_id = ws AND m.state = 'active' AND m.project = _project_holding.project
                   AND m.tsv @@ _project_holding.q;
END
$$;

-- Marks what old's supersede by new_id left stale: every active memory of
-- old's project, other than the two, whose text (a trajectory's steps too)
-- states one of the values old states and the new memory does not
-- (brain._changed_values) and none of the values the new memory brings.
-- The full-text index finds the candidates (a value is a lexeme of its own,
-- brain._project_holding); their distinguishing terms decide, those the write
-- path stored (fact_terms), a trajectory's with its steps. A captured text
-- (origin artifact: an ingested document changed at its source) marks nothing.
-- The number marked.
CREATE OR REPLACE FUNCTION brain._mark_dependents(old brain.memory, new_id bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    newer brain.memory;
    olds text[];
    news text[];
    q tsquery;
    n integer;
BEGIN
    IF old.origin = 'artifact' THEN
        RETURN 0;
    END IF;
    SELECT * INTO newer FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = new_id;
    IF newer.memory_id IS NULL THEN
        RETURN 0;
    END IF;
    olds := brain._changed_values(old.headline || E'\n' || old.body, newer.headline || E'\n' || newer.body);
    news := brain._changed_values(newer.headline || E'\n' || newer.body, old.headline || E'\n' || old.body);
    IF cardinality(olds) = 0 THEN
        RETURN 0;
    END IF;
    SELECT string_agg(x.q::text, ' | ')::tsquery INTO q
    FROM (SELECT plainto_tsquery('english'::regconfig, v) AS q FROM unnest(olds) AS v) AS x
    WHERE numnode(x.q) > 0;
    INSERT INTO brain.stale_mark (workspace_id, memory_id, changed_id, change_id, old_values)
    SELECT ws, c.memory_id, old.memory_id, newer.memory_id,
           ARRAY(SELECT v FROM unnest(olds) AS v WHERE v = ANY (c.terms) ORDER BY v)
    FROM (SELECT m.memory_id,
                 CASE WHEN t.steps IS NULL THEN brain._terms_of(m.fact_terms, m.headline, m.body)
                      ELSE brain.distinguishing_terms(m.headline || E'\n' || m.body || E'\n' || t.steps::text) END AS terms
          FROM (SELECT h.id FROM brain._project_holding(q, old.project) AS h(id) WHERE q IS NOT NULL
                UNION
                -- a trajectory's steps, which its memory's words do not hold
                SELECT x.memory_id FROM brain.memory x
                JOIN brain.trajectory y ON y.workspace_id = x.workspace_id AND y.memory_id = x.memory_id
                WHERE x.workspace_id = ws AND x.kind = 'trajectory' AND x.project = old.project AND x.state = 'active'
                  AND EXISTS (SELECT FROM unnest(olds) AS v WHERE strpos(lower(y.steps::text), v) > 0)) AS k
          -- (each by its key: OFFSET 0 keeps the planner from joining the candidates, which
          -- it takes for a hundred, to a read of the whole project)
          CROSS JOIN LATERAL (SELECT x.* FROM brain.memory x
                              WHERE x.workspace_id = ws AND x.memory_id = k.id OFFSET 0) AS m
          LEFT JOIN brain.trajectory t ON t.workspace_id = m.workspace_id AND t.memory_id = m.memory_id
          WHERE m.state = 'active' AND m.project = old.project
            AND m.memory_id NOT IN (old.memory_id, newer.memory_id)) AS c
    WHERE c.terms && olds AND NOT c.terms && news
    ON CONFLICT (workspace_id, memory_id, changed_id) DO UPDATE
        SET change_id = excluded.change_id, old_values = excluded.old_values, created_at = excluded.created_at;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- Takes away the marks a supersede wrote (its undo, brain.unsupersede).
CREATE OR REPLACE FUNCTION brain._unmark_dependents(changed_id bigint, change_id bigint)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain._delete_stale_marks(changed_id, change_id);  -- clients hold no DELETE (migration 034)
END
$$;

CREATE OR REPLACE FUNCTION brain.stale(project text DEFAULT NULL, change bigint DEFAULT NULL,
                                       max_results integer DEFAULT 50)
RETURNS TABLE (id bigint, kind text, memory_project text, headline text, old_values text[], changed_id bigint,
               changed_headline text, change_id bigint, change_headline text, marked_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT m.memory_id, m.kind, m.project, m.headline, s.old_values, s.changed_id, o.headline, s.change_id,
           c.headline, s.created_at
    FROM brain.stale_mark s
    JOIN brain.memory m ON m.workspace_id = s.workspace_id AND m.memory_id = s.memory_id
    JOIN brain.memory o ON o.workspace_id = s.workspace_id AND o.memory_id = s.changed_id
    JOIN brain.memory c ON c.workspace_id = s.workspace_id AND c.memory_id = s.change_id
    WHERE s.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND (stale.project IS NULL OR m.project IN (stale.project, ''))
      AND (stale.change IS NULL OR stale.change IN (s.change_id, s.changed_id))
    ORDER BY s.created_at DESC, s.change_id DESC, m.memory_id
    LIMIT greatest(1, least(max_results, 500));
END
$$;
COMMENT ON FUNCTION brain.stale IS
    'What supersedes left to review: the active memories that state the old value of a superseded memory (its distinguishing value terms: a port, a version, a host, a path, brain._changed_values; of the same project, written before the change, not stating the new value), each with its project (memory_project), the values, the superseded memory (changed_id) and the one that replaced it (change_id). A supersede marks them (brain.supersede, a write with on_related => ''supersede'', a trajectory''s supersedes), its undo (brain.unsupersede) takes the marks away; search ranks a marked memory below the current statement and every reader shows "(depends on #<changed>, changed by #<change>: brain stale)". Filtered by project (plus global) and by a change (either id). Newest first, at most max_results (50).';

-- The mark of a line that shows memory id: its newest mark, '' when it has none.
CREATE OR REPLACE FUNCTION brain._stale_line(ws bigint, id bigint)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN coalesce((SELECT brain._stale_mark_text(s.changed_id, s.change_id)
                     FROM brain.stale_mark s
                     WHERE s.workspace_id = ws AND s.memory_id = id
                     ORDER BY s.created_at DESC, s.change_id DESC
                     LIMIT 1), '');
END
$$;
