-- Recording a trajectory (brain.record_trajectory) and reading them back:
-- its text, the list, the nearest of a project.

CREATE OR REPLACE FUNCTION brain.record_trajectory(
    problem text,
    steps jsonb DEFAULT '[]',
    outcome text DEFAULT '',
    headline text DEFAULT NULL,
    project text DEFAULT '',
    category text DEFAULT 'procedural',
    tags text[] DEFAULT '{}',
    importance double precision DEFAULT NULL,
    metadata jsonb DEFAULT '{}',
    embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    source_agent text DEFAULT NULL,
    session_id bigint DEFAULT NULL,
    source_system text DEFAULT NULL,
    source_ref text DEFAULT NULL,
    source_hash text DEFAULT NULL,
    supersedes bigint DEFAULT NULL,
    reason text DEFAULT NULL,
    on_related text DEFAULT 'store',
    redact boolean DEFAULT false,
    check_only boolean DEFAULT false
)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    v_problem text := brain.trim_space(brain.clean_body(coalesce(problem, '')));
    v_outcome text := brain.trim_space(brain.clean_body(coalesce(outcome, '')));
    v_headline text := headline;
    v_steps jsonb;
    v_body text;
    old brain.memory;
    r brain.write_result;
BEGIN
    IF redact THEN
        -- taken from a transcript: without what the person marked <private> (as the
        -- hooks store turns, brain.capturable_text), before anything is checked,
        -- stored or returned to embed; secrets replaced
        v_problem := brain.redact_secrets(brain.capturable_text(v_problem));
        v_outcome := brain.redact_secrets(brain.capturable_text(v_outcome));
        v_headline := brain.redact_secrets(nullif(brain.capturable_text(v_headline), ''));
    END IF;
    PERFORM brain._refuse_secrets(jsonb_build_object('problem', v_problem, 'outcome', v_outcome,
                                                     'steps', CASE WHEN redact THEN NULL ELSE steps END));
    IF v_problem = '' THEN
        PERFORM brain._raise('BR003', 'A trajectory needs a problem.', NULL,
            'Say what was wrong or what had to be done, e.g. problem => ''the deploy job fails on a cold runner''.');
    END IF;
    v_steps := brain._trajectory_steps(steps, redact);
    v_headline := coalesce(nullif(brain.clean_headline(v_headline), ''), brain.derive_headline(v_problem, 12));
    -- What search and the embedding see: the problem and the outcome.
    v_body := v_problem || CASE WHEN v_outcome <> '' THEN E'\n\nOutcome: ' || v_outcome ELSE '' END;
    IF supersedes IS NOT NULL THEN
        PERFORM brain._require_text(reason, 'BR014', 'A supersede needs a reason.',
            'Say why the older solution is no longer the one to follow, e.g. reason => ''the runner image changed''.');
        old := brain._get_memory(supersedes, lock => true);
        IF old.kind <> 'trajectory' THEN
            PERFORM brain._raise('BR009', format('Memory #%s is a %s, not a trajectory.', old.memory_id, old.kind),
                jsonb_build_object('id', old.memory_id, 'kind', old.kind), 'Supersede it with brain.supersede.');
        END IF;
        PERFORM brain._check_transition(old, 'supersede trajectory');
    END IF;

    PERFORM set_config('brain.trajectory',
        jsonb_build_object('problem', v_problem, 'outcome', v_outcome, 'steps', v_steps)::text, true);
    r := brain._write(brain._draft('trajectory', v_headline, v_body, category, 'explicit', coalesce(project, ''),
                                   tags => tags, importance => importance, metadata => metadata, embedding => embedding,
                                   embedding_space => embedding_space, source_agent => source_agent,
                                   session_id => session_id, source_system => source_system, source_ref => source_ref,
                                   source_hash => source_hash, supersedes => supersedes),
                      check_only, on_related, reason);
    PERFORM set_config('brain.trajectory', '', true);
    IF check_only THEN
        RETURN r;
    END IF;

    IF r.action IN ('skipped', 'updated') THEN
        -- The same solution recorded again (exactly, or near-identically: folded).
        IF supersedes IS NOT NULL AND r.memory_id = supersedes THEN
            PERFORM brain._raise('BR011', format('The new trajectory is the same as #%s.', supersedes),
                jsonb_build_object('id', supersedes), 'Change the problem or the outcome, or keep the trajectory as it is.');
        END IF;
        UPDATE brain.trajectory t
        SET times_recorded = t.times_recorded + 1,
            -- the longer text won the fold: its steps come with it
            problem = CASE WHEN r.action = 'updated' THEN v_problem ELSE t.problem END,
            outcome = CASE WHEN r.action = 'updated' THEN v_outcome ELSE t.outcome END,
            steps = CASE WHEN r.action = 'updated' OR t.steps = '[]' THEN v_steps ELSE t.steps END
        WHERE t.workspace_id = ws AND t.memory_id = r.memory_id;
    END IF;
    IF supersedes IS NOT NULL AND r.action = 'created' THEN
        PERFORM brain._mark_superseded(old, r.memory_id, reason, source_agent);
        PERFORM brain._note_use(ARRAY[old.memory_id], 'supersede', session_id);
    END IF;
    PERFORM brain._note_cites(brain._steps_text(v_steps), session_id);
    RETURN r;
END
$$;
COMMENT ON FUNCTION brain.record_trajectory IS
    'Records how a problem was solved: a memory of kind trajectory (headline: given or the problem''s first words; body: the problem and the outcome, which search and the embedding see) with its ordered steps (action, tool, command, files, result, failed) in brain.trajectory. Through the write gate (secrets refused in every field and step; with redact => true, for text taken from a transcript, replaced, what is marked <private> removed from every field and step as the hooks do, brain.capturable_text, and each result cut to its telling lines, brain.result_lines; steps flagged as any text), exact and semantic dedup: the same solution recorded again folds into the first and counts in times_recorded; a related one is stored (on_related => ''store'', the default) or refused or superseded. supersedes => <id> with a reason replaces an older trajectory. check_only => true validates and returns the embedding input.';

-- A trajectory with its steps as an agent reads it: the headline, problem,
-- numbered steps (failed ones marked) and outcome, each stored text quoted.
CREATE OR REPLACE FUNCTION brain.trajectory_text(id bigint)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('Trajectory #%s %s', m.memory_id, brain.quote_text(m.headline)) || E'\n'
           || 'Problem: ' || brain.quote_text(t.problem) || E'\n'
           || coalesce((SELECT string_agg(format('%s. %s%s%s%s%s', s->>'n',
                                                 CASE WHEN (s->>'failed')::boolean THEN '[failed] ' ELSE '' END,
                                                 brain.quote_text(coalesce(s->>'action', s->>'tool', '')),
                                                 coalesce(' $ ' || brain.quote_text(s->>'command'), ''),
                                                 coalesce(' files ' || (s->'files')::text, ''),
                                                 coalesce(' -> ' || brain.quote_text(s->>'result'), '')),
                                          E'\n' ORDER BY (s->>'n')::integer)
                        FROM jsonb_array_elements(t.steps) AS s) || E'\n', '')
           || 'Outcome: ' || brain.quote_text(t.outcome)
    FROM brain.memory m
    JOIN brain.trajectory t ON t.workspace_id = m.workspace_id AND t.memory_id = m.memory_id
    WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = id
$$;
COMMENT ON FUNCTION brain.trajectory_text IS
    'A trajectory as an agent reads it: headline, problem, numbered steps (failed attempts marked) and outcome, each stored text a quoted JSON string. NULL for another kind.';

CREATE OR REPLACE FUNCTION brain.list_trajectories(
    project text DEFAULT NULL,
    include_superseded boolean DEFAULT false,
    max_results integer DEFAULT 50
)
RETURNS TABLE (id bigint, headline text, project text, steps integer, failed_steps integer, times_recorded integer,
               times_used integer, last_used_at timestamptz, state text, superseded_by bigint, created_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.headline, m.project, jsonb_array_length(t.steps),
           (SELECT count(*)::integer FROM jsonb_array_elements(t.steps) AS s WHERE (s->>'failed')::boolean),
           t.times_recorded, t.times_used, t.last_used_at, m.state, m.superseded_by, m.created_at
    FROM brain.memory m
    JOIN brain.trajectory t ON t.workspace_id = m.workspace_id AND t.memory_id = m.memory_id
    WHERE m.workspace_id = brain.current_workspace() AND m.kind = 'trajectory'
      AND (m.state = 'active' OR include_superseded AND m.state = 'superseded')
      AND (list_trajectories.project IS NULL OR m.project IN (list_trajectories.project, ''))
    ORDER BY m.created_at DESC, m.memory_id DESC
    LIMIT least(greatest(coalesce(max_results, 50), 1), 1000)
$$;
COMMENT ON FUNCTION brain.list_trajectories IS
    'Trajectories (of a project and the global scope), newest first: steps, failed attempts, times recorded and used.';

-- The trajectories of a boot's scope nearest a task embedding and relevant
-- to it (search's calibrated relevance of their similarity reaches floor).
CREATE OR REPLACE FUNCTION brain._near_trajectories(ws bigint, projects text[], s brain.embedding_space,
                                                    vec public.vector, k integer, floor double precision)
RETURNS TABLE (memory_id bigint, headline text, steps integer, similarity double precision, relevance double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    sid bigint := s.space_id;
    center double precision := s.relevance_center;
    slope double precision := s.relevance_slope;
BEGIN
    IF vec IS NULL OR k < 1 THEN
        RETURN;
    END IF;
    -- Ranked exactly among the scope's trajectories (an index read of
    -- memory_active, then each one's vector by key, as brain._exact_nearest_sql
    -- ranks few rows): ordering a join by distance would walk the space's HNSW
    -- index past every other memory. A static query: its plan is kept.
    RETURN QUERY
    SELECT near.memory_id, near.headline, jsonb_array_length(t.steps), 1 - near.distance,
           brain.relevance(1 - near.distance, NULL, ARRAY[center, slope])
    FROM (SELECT m.memory_id, m.headline, v.distance
          FROM brain.memory m
          CROSS JOIN LATERAL (SELECT v.embedding OPERATOR(public.<=>) vec AS distance FROM brain.embedding v
                              WHERE v.workspace_id = m.workspace_id AND v.space_id = sid
                                AND v.memory_id = m.memory_id OFFSET 0) AS v
          WHERE m.workspace_id = ws AND m.kind = 'trajectory' AND m.state = 'active' AND m.project = ANY (projects)
            AND NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at)
          ORDER BY v.distance, m.memory_id
          LIMIT k) AS near
    JOIN brain.trajectory t ON t.workspace_id = ws AND t.memory_id = near.memory_id
    WHERE brain.relevance(1 - near.distance, NULL, ARRAY[center, slope]) >= floor
    ORDER BY near.distance, near.memory_id;
END
$$;
