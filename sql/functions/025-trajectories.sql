-- Trajectories ("how we solved it"), injection telemetry and context packs
-- (migration 023). A trajectory is a memory of kind 'trajectory' written
-- through brain._write: the gate, dedup, supersede, audit, search, export and
-- tenancy are every memory's; the steps live in brain.trajectory.

-- The session of this transaction's calls, when the client named it
-- (SET LOCAL brain.session = <id>: the MCP server and the brain command do);
-- NULL otherwise. Only used to attribute telemetry.
CREATE OR REPLACE FUNCTION brain._session()
RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN pg_catalog.current_setting('brain.session', true) ~ '^\s*[0-9]{1,18}\s*$'
                THEN pg_catalog.current_setting('brain.session', true)::bigint END
$$;

-- ---------------------------------------------------------------------------
-- Injection telemetry

CREATE OR REPLACE FUNCTION brain.record_injection(
    trigger text,
    items bigint[] DEFAULT '{}',
    tokens integer DEFAULT 0,
    truncated boolean DEFAULT false,
    session bigint DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_id bigint;
BEGIN
    IF trigger IS NULL OR trigger NOT IN ('boot', 'search', 'prompt', 'pack', 'trajectory') THEN
        PERFORM brain._raise('BR009', 'An injection''s trigger is boot, search, prompt, pack or trajectory.',
            jsonb_build_object('field', 'trigger', 'allowed', jsonb_build_array('boot', 'search', 'prompt', 'pack', 'trajectory')), 'Name what put the memories in front of the agent.');
    END IF;
    IF tokens IS NULL OR tokens < 0 OR cardinality(items) > 10000 THEN
        PERFORM brain._raise('BR009', 'An injection has zero or more tokens and at most 10000 items.',
            jsonb_build_object('tokens', tokens, 'items', cardinality(items)), 'Count the tokens shown (brain.estimate_tokens).');
    END IF;
    INSERT INTO brain.injection (workspace_id, session_id, trigger, at, items, tokens, truncated)
    VALUES (brain.current_workspace(), coalesce(session, brain._session()), trigger,
            least(coalesce(record_injection.now, pg_catalog.now()), pg_catalog.now()),
            ARRAY(SELECT DISTINCT x FROM unnest(coalesce(items, '{}')) AS x WHERE x IS NOT NULL),
            tokens, coalesce(truncated, false))
    RETURNING injection_id INTO new_id;
    RETURN new_id;
END
$$;
COMMENT ON FUNCTION brain.record_injection IS
    'Records one injection of memory into an agent''s context: trigger (boot, search, prompt, pack, trajectory), the memory ids shown, the estimated tokens, whether the budget cut it, and the session (default: SET LOCAL brain.session). boot_session, prompt_context, load_pack and recall record theirs; a client records the search results it hands an agent.';

-- The injected memories among ids that a session later used: one row per
-- injection that showed each (the first use counts). No session: nothing.
CREATE OR REPLACE FUNCTION brain._note_use(ids bigint[], how text, session bigint DEFAULT NULL)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO brain.injection_use (workspace_id, injection_id, memory_id, how)
    SELECT i.workspace_id, i.injection_id, x.id, how
    FROM (SELECT coalesce(session, brain._session()) AS s) AS c
    JOIN brain.injection i ON i.workspace_id = brain.current_workspace() AND i.session_id = c.s
    CROSS JOIN unnest(ids) AS x(id)
    WHERE c.s IS NOT NULL AND x.id = ANY (i.items)
    ON CONFLICT DO NOTHING
$$;

CREATE OR REPLACE FUNCTION brain.note_use(memory_ids bigint[], how text DEFAULT 'cite', session bigint DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    IF how IS NULL OR how NOT IN ('recall', 'rate', 'supersede', 'cite') THEN
        PERFORM brain._raise('BR009', 'A use is recall, rate, supersede or cite.',
            jsonb_build_object('field', 'how', 'allowed', jsonb_build_array('recall', 'rate', 'supersede', 'cite')), 'cite: the agent''s answer referred to the memory.');
    END IF;
    SELECT count(*) INTO n FROM brain.injection i
    WHERE i.workspace_id = brain.current_workspace() AND i.session_id = coalesce(session, brain._session())
      AND i.items && memory_ids;
    PERFORM brain._note_use(memory_ids, how, session);
    RETURN n;
END
$$;
COMMENT ON FUNCTION brain.note_use IS
    'Counts memories a session was shown as used (how: cite by default; recall, rate and supersede count by themselves). Returns the number of injections of the session that showed any of them.';

-- Memories a write's text cites (#123) that its session was shown.
CREATE OR REPLACE FUNCTION brain._note_cites(t text, session bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(session, brain._session()) IS NULL OR t !~ '#[0-9]' THEN
        RETURN;
    END IF;
    PERFORM brain._note_use(ARRAY(SELECT DISTINCT m[1]::bigint
                                  FROM regexp_matches(t, '(?:^|[^[:alnum:]&])#([0-9]{1,18})\M', 'g') AS m),
                            'cite', session);
END
$$;

CREATE OR REPLACE FUNCTION brain.injection_metrics(
    group_by text DEFAULT 'trigger',
    window_size interval DEFAULT '24 hours',
    session bigint DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (key text, injections bigint, items bigint, tokens bigint, truncated bigint, used bigint,
               used_share double precision, first_at timestamptz, last_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF group_by IS NULL OR group_by NOT IN ('trigger', 'session') THEN
        PERFORM brain._raise('BR009', 'Injections are grouped by trigger or session.',
            jsonb_build_object('field', 'group_by', 'allowed', jsonb_build_array('trigger', 'session')), 'group_by => ''trigger'' or ''session''.');
    END IF;
    RETURN QUERY
    SELECT CASE WHEN group_by = 'trigger' THEN i.trigger ELSE coalesce(i.session_id::text, '-') END,
           count(*), sum(cardinality(i.items))::bigint, sum(i.tokens)::bigint,
           count(*) FILTER (WHERE i.truncated),
           sum(u.n)::bigint,
           round((sum(u.n)::numeric / nullif(sum(cardinality(i.items)), 0)), 4)::double precision,
           min(i.at), max(i.at)
    FROM brain.injection i
    CROSS JOIN LATERAL (SELECT count(*) AS n FROM brain.injection_use x
                        WHERE x.workspace_id = i.workspace_id AND x.injection_id = i.injection_id) AS u
    WHERE i.workspace_id = brain.current_workspace()
      AND i.at >= coalesce(injection_metrics.now, pg_catalog.now()) - window_size
      AND (injection_metrics.session IS NULL OR i.session_id = injection_metrics.session)
    GROUP BY 1
    ORDER BY 1;
END
$$;
COMMENT ON FUNCTION brain.injection_metrics IS
    'Injections of a window (default 24 hours), per trigger or per session: how many, items and estimated tokens injected, how many the budget cut, how many injected items the session later used (recalled, rated, superseded, cited) and that share.';

-- ---------------------------------------------------------------------------
-- Trajectories

-- The lines of a tool's result that say what happened, within `chars`: the
-- whole result when it fits; else its last line, the lines that report an
-- error, a failure, an assertion, a refusal or a timeout (the latest first),
-- its first line and its other last lines, as many as fit, in their order,
-- "…" where lines were left out. Rules of "=", "-" or "_" around a line are
-- dropped, and a line is cut at 200 characters.
CREATE OR REPLACE FUNCTION brain.result_lines(t text, chars integer DEFAULT 500)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lines text[];
    n integer;
    kept integer[] := '{}';
    total integer := 0;
    i integer;
    out text := '';
    prev integer := 0;
BEGIN
    t := brain.trim_space(coalesce(t, ''));
    IF char_length(t) <= chars THEN
        RETURN t;
    END IF;
    lines := ARRAY(SELECT CASE WHEN char_length(x.l) > 200 THEN left(x.l, 199) || '…' ELSE x.l END
                   FROM (SELECT brain.trim_space(regexp_replace(brain.trim_space(y.l), '^[=_-]{3,}\s*|\s*[=_-]{3,}$', '', 'g')) AS l,
                                y.o
                         FROM regexp_split_to_table(t, '\r?\n') WITH ORDINALITY AS y(l, o)) AS x
                   WHERE x.l <> '' ORDER BY x.o);
    n := cardinality(lines);
    FOR i IN
        SELECT k FROM generate_subscripts(lines, 1) AS k
        ORDER BY CASE WHEN k = n THEN 0
                      WHEN lines[k] ~* '(\m\w*(error|exception)s?\M|\m(traceback|fail|fails|failed|failure|failures|fatal|assert|assertion|panic|panicked|denied|refused|timeout|timed out|not found|no such|cannot|unable|invalid|warning|killed|aborted|segfault)\M)'
                           THEN 1
                      WHEN k = 1 THEN 2
                      WHEN k >= n - 2 THEN 3
                      ELSE 9 END,
                 k DESC
    LOOP
        EXIT WHEN NOT (i = n OR i = 1 OR i >= n - 2
                       OR lines[i] ~* '(\m\w*(error|exception)s?\M|\m(traceback|fail|fails|failed|failure|failures|fatal|assert|assertion|panic|panicked|denied|refused|timeout|timed out|not found|no such|cannot|unable|invalid|warning|killed|aborted|segfault)\M)');
        IF total + char_length(lines[i]) + 4 <= chars THEN
            kept := kept || i;
            total := total + char_length(lines[i]) + 4;
        END IF;
    END LOOP;
    FOR i IN SELECT k FROM unnest(kept) AS k ORDER BY k LOOP
        out := out || CASE WHEN out = '' AND i > 1 THEN E'…\n'
                           WHEN out = '' THEN ''
                           WHEN i > prev + 1 THEN E'\n…\n' ELSE E'\n' END || lines[i];
        prev := i;
    END LOOP;
    RETURN out || CASE WHEN prev < n AND out <> '' THEN E'\n…' ELSE '' END;
END
$$;
COMMENT ON FUNCTION brain.result_lines IS
    'What a trajectory keeps of a tool result taken from a transcript: the whole result when it fits in chars (500); else its last line, the lines that report an error, exception, failure, assertion, refusal or timeout (the latest first), its first line and its last lines, as many as fit, in their order, with … where lines were left out.';

-- Whether a prompt only acknowledges or confirms what came before ("Good. Do
-- that.", "yes, go ahead", "ok fix it"): a few words, all of them words of
-- assent, reference or going on. Such a prompt continues the problem of the
-- prompt before it. A prompt with nothing left to store (all <private>) too.
CREATE OR REPLACE FUNCTION brain._acknowledges(t text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT cardinality(w) = 0 OR cardinality(w) <= 12 AND w <@ ARRAY[
        'yes', 'yeah', 'yep', 'yup', 'ok', 'okay', 'k', 'sure', 'good', 'great', 'fine', 'nice', 'perfect', 'cool',
        'excellent', 'right', 'correct', 'exactly', 'agreed', 'agree', 'sounds', 'looks', 'lgtm', 'alright',
        'go', 'ahead', 'on', 'do', 'does', 'it', 'its', 'it''s', 'that', 'that''s', 'thats', 'this', 'these', 'those',
        'so', 'please', 'pls', 'thanks', 'thank', 'you', 'proceed', 'continue', 'carry', 'keep', 'going', 'let''s',
        'lets', 'let', 'us', 'then', 'and', 'now', 'all', 'the', 'same', 'fix', 'apply', 'make', 'change', 'what',
        'i', 'want', 'wanted', 'meant', 'works', 'work', 'for', 'me', 'approved', 'approve', 'ship', 'try', 'again',
        'is', 'be', 'with', 'plan', 'idea', 'one', 'option', 'first', 'second', 'both', 'a', 'an', 'as', 'said',
        'suggested', 'proposed', 'way', 'to', 'just', 'too', 'also', 'well', 'done', 'implement', 'it.', 'yes.']
    FROM (SELECT ARRAY(SELECT x FROM regexp_split_to_table(lower(brain.capturable_text(t)), '[^[:alnum:]'']+') AS x
                       WHERE x <> '') AS w) AS s
$$;

CREATE OR REPLACE FUNCTION brain.trajectory_problem(prompts text[])
RETURNS integer
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i integer := coalesce(cardinality(prompts), 0);
BEGIN
    WHILE i > 1 AND brain._acknowledges(prompts[i]) LOOP
        i := i - 1;
    END LOOP;
    RETURN nullif(i, 0);
END
$$;
COMMENT ON FUNCTION brain.trajectory_problem IS
    'Which of a transcript''s prompts (in order, the last one the prompt whose tool calls end the work) started the work a trajectory records: counting back from the last, a prompt that only acknowledges or confirms ("Good. Do that.", "yes, go ahead": a few words of assent, reference or going on, brain._acknowledges; or nothing but <private> text) continues the problem of the one before it. Its number, from 1; NULL for none.';


-- Steps as stored: an array of objects {action, tool, command, files, result,
-- failed}, numbered from 1, each text cleaned and bounded; a string stands
-- for {"action": string}. With redact (text taken from a transcript), what
-- is marked <private> is removed (brain.capturable_text, as the hooks do),
-- secrets are replaced and a result is cut to the lines that say what happened
-- (brain.result_lines); else the caller refuses secrets.
CREATE OR REPLACE FUNCTION brain._trajectory_steps(steps jsonb, redact boolean DEFAULT false)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_steps integer := (brain.setting('trajectory_max_steps'))::integer;
    s jsonb;
    n integer := 0;
    out jsonb := '[]';
    f text;
    v text;
    step jsonb;
    files text[];
BEGIN
    IF steps IS NULL OR jsonb_typeof(steps) = 'null' THEN
        RETURN '[]';
    END IF;
    IF jsonb_typeof(steps) <> 'array' THEN
        PERFORM brain._raise('BR009', 'A trajectory''s steps are a JSON array.', jsonb_build_object('type', jsonb_typeof(steps)),
            'Example: [{"action": "restart the runner", "command": "systemctl restart runner", "result": "green"}].');
    END IF;
    IF jsonb_array_length(steps) > max_steps THEN
        PERFORM brain._raise('BR005', format('The trajectory has %s steps; the limit is %s.', jsonb_array_length(steps), max_steps),
            jsonb_build_object('steps', jsonb_array_length(steps), 'max_steps', max_steps),
            'Keep the steps that solved it; merge or leave out the rest (setting trajectory_max_steps).');
    END IF;
    FOR s IN SELECT x FROM jsonb_array_elements(steps) AS x LOOP
        n := n + 1;
        IF jsonb_typeof(s) = 'string' THEN
            s := jsonb_build_object('action', s #>> '{}');
        END IF;
        IF jsonb_typeof(s) <> 'object' THEN
            PERFORM brain._raise('BR009', format('Step %s is not an object.', n), jsonb_build_object('step', n),
                'Each step is {"action": ..., "tool": ..., "command": ..., "files": [...], "result": ..., "failed": false}.');
        END IF;
        FOR f IN SELECT k FROM jsonb_object_keys(s) AS k LOOP
            IF f NOT IN ('n', 'action', 'tool', 'command', 'files', 'result', 'failed') THEN
                PERFORM brain._raise('BR009', format('Step %s has a field that is not one of a step''s.', n),
                    jsonb_build_object('step', n,
                                       'allowed', jsonb_build_array('action', 'tool', 'command', 'files', 'result', 'failed')),
                    'Put anything else into the action or the result.');
            END IF;
        END LOOP;
        step := jsonb_build_object('n', n);
        FOREACH f IN ARRAY ARRAY['action', 'tool', 'command', 'result'] LOOP
            IF s ? f AND jsonb_typeof(s->f) NOT IN ('string', 'null') THEN
                PERFORM brain._raise('BR009', format('Step %s: %s is a string.', n, f), jsonb_build_object('step', n, 'field', f),
                    'Give the text of it.');
            END IF;
            v := brain.trim_space(brain.clean_body(s->>f));
            IF redact THEN
                -- taken from a transcript: nothing marked <private> (as the hooks store turns),
                -- no secret, and of a result the lines that say what happened
                v := brain.redact_secrets(brain.capturable_text(v));
                IF f = 'result' THEN
                    v := brain.result_lines(v);
                END IF;
            END IF;
            IF length(v) > 4000 THEN
                PERFORM brain._raise('BR005', format('Step %s: the %s has %s characters; the limit is 4000.', n, f, length(v)),
                    jsonb_build_object('step', n, 'field', f, 'characters', length(v)), 'Keep what a reader needs to redo it.');
            END IF;
            IF v <> '' THEN
                step := step || jsonb_build_object(f, v);
            END IF;
        END LOOP;
        IF NOT step ?| ARRAY['action', 'tool', 'command'] THEN
            PERFORM brain._raise('BR009', format('Step %s says nothing: it needs an action, a tool or a command.', n),
                jsonb_build_object('step', n), 'Say what was done.');
        END IF;
        IF s ? 'files' AND jsonb_typeof(s->'files') NOT IN ('array', 'null')
           OR EXISTS (SELECT FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s->'files') = 'array' THEN s->'files' ELSE '[]' END) AS x
                      WHERE jsonb_typeof(x) <> 'string') THEN
            PERFORM brain._raise('BR009', format('Step %s: files is an array of paths.', n), jsonb_build_object('step', n),
                'Example: "files": ["deploy/runner.yaml"].');
        END IF;
        files := ARRAY(SELECT DISTINCT ON (p) p FROM (
                           SELECT CASE WHEN redact THEN brain.redact_secrets(brain.clean_headline(brain.capturable_text(x))) ELSE brain.clean_headline(x) END AS p
                           FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(s->'files') = 'array' THEN s->'files' ELSE '[]' END) AS x) AS y
                       WHERE p <> '');
        IF cardinality(files) > 100 OR EXISTS (SELECT FROM unnest(files) AS p WHERE length(p) > 1000) THEN
            PERFORM brain._raise('BR005', format('Step %s names too many files or too long a path.', n),
                jsonb_build_object('step', n, 'files', cardinality(files)), 'At most 100 paths of 1000 characters.');
        END IF;
        IF cardinality(files) > 0 THEN
            step := step || jsonb_build_object('files', to_jsonb(files));
        END IF;
        IF s ? 'failed' AND jsonb_typeof(s->'failed') NOT IN ('boolean', 'null') THEN
            PERFORM brain._raise('BR009', format('Step %s: failed is true or false.', n), jsonb_build_object('step', n),
                'Mark an attempt that did not work with "failed": true.');
        END IF;
        step := step || jsonb_build_object('failed', coalesce((s->>'failed')::boolean, false));
        out := out || jsonb_build_array(step);
    END LOOP;
    RETURN out;
END
$$;

-- The text a trajectory's steps show (secret scan, injection flags).
CREATE OR REPLACE FUNCTION brain._steps_text(steps jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(string_agg(concat_ws(' ', s->>'action', s->>'tool', s->>'command', s->>'result',
                                         (SELECT string_agg(f, ' ') FROM jsonb_array_elements_text(coalesce(s->'files', '[]')) AS f)),
                               E'\n' ORDER BY n), '')
    FROM jsonb_array_elements(coalesce(steps, '[]')) WITH ORDINALITY AS x(s, n)
$$;

-- The kind row of a new trajectory (brain._write, kind 'trajectory'), from
-- what brain.record_trajectory passed in brain.trajectory: checked again,
-- since a client may set that itself.
CREATE OR REPLACE FUNCTION brain._insert_trajectory(id bigint, t jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    steps jsonb := brain._trajectory_steps(t->'steps');
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('problem', t->>'problem', 'outcome', t->>'outcome', 'steps', steps));
    INSERT INTO brain.trajectory (workspace_id, memory_id, problem, outcome, steps)
    VALUES (brain.current_workspace(), id, coalesce(brain.trim_space(t->>'problem'), ''),
            coalesce(brain.trim_space(t->>'outcome'), ''), steps);
    -- Steps are text the agent will read: flagged as a body would be.
    UPDATE brain.memory m
    SET flag_reasons = ARRAY(SELECT DISTINCT x FROM unnest(m.flag_reasons || brain.injection_signals(brain._steps_text(steps))) AS x
                             ORDER BY x)
    WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = id
      AND cardinality(brain.injection_signals(brain._steps_text(steps))) > 0;
END
$$;

-- The kind row of an imported trajectory (brain.import_memories): its steps
-- through the same checks; the counters only from a trusted file.
CREATE OR REPLACE FUNCTION brain._import_trajectory(id bigint, d jsonb, trusted boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._insert_trajectory(id, jsonb_build_object(
        'problem', coalesce(d->>'problem', (SELECT m.body FROM brain.memory m
                                            WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = id)),
        'outcome', d->>'outcome', 'steps', d->'steps'));
    IF trusted THEN
        UPDATE brain.trajectory t
        SET times_used = greatest(coalesce((d->>'times_used')::integer, 0), 0),
            times_recorded = greatest(coalesce((d->>'times_recorded')::integer, 1), 1),
            last_used_at = least((d->>'last_used_at')::timestamptz, now())
        WHERE t.workspace_id = brain.current_workspace() AND t.memory_id = id;
    END IF;
END
$$;

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
    d brain.memory_draft;
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
    d := brain._draft('trajectory', v_headline, v_body, category, 'explicit', coalesce(project, ''));
    d.tags := tags;
    d.importance := importance;
    d.metadata := metadata;
    d.embedding := embedding;
    d.embedding_space := embedding_space;
    d.source_agent := source_agent;
    d.session_id := session_id;
    d.source_system := source_system;
    d.source_ref := source_ref;
    d.source_hash := source_hash;
    d.supersedes := supersedes;
    r := brain._write(d, check_only, on_related, reason);
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

-- ---------------------------------------------------------------------------
-- Context packs

CREATE OR REPLACE FUNCTION brain._get_pack(name text)
RETURNS brain.pack
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p brain.pack;
BEGIN
    SELECT * INTO p FROM brain.pack k
    WHERE k.workspace_id = brain.current_workspace() AND k.name = lower(brain.trim_space(_get_pack.name))
      AND k.state = 'active';
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', 'No context pack of that name in this workspace.',
            jsonb_build_object('field', 'name'), 'See the packs with brain.list_packs() (brain pack list).');
    END IF;
    RETURN p;
END
$$;

-- The injection signals of a pack's own text (its description and query), as
-- a memory's are read at its write: a pack has no flag column (migration 023),
-- so they are read where a pack is shown. A flagged pack is not attached at
-- boot, its query is not rendered, and list_packs and render_pack name its reasons.
CREATE OR REPLACE FUNCTION brain._pack_signals(description text, query text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.injection_signals(concat_ws(E'\n', description, query))
$$;

-- The text a pack's embedding is made of: its query, else its name and description.
CREATE OR REPLACE FUNCTION brain._pack_embedding_input(name text, description text, query text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(nullif(brain.trim_space(query), ''),
                    brain.trim_space(replace(name, '-', ' ') || E'\n' || coalesce(description, '')))
$$;

-- Ids without NULLs and repeats, in their first order.
CREATE OR REPLACE FUNCTION brain._distinct_ids(ids bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(ARRAY(SELECT u.x FROM unnest(ids) WITH ORDINALITY AS u(x, n)
                          WHERE u.x IS NOT NULL GROUP BY u.x ORDER BY min(u.n)), '{}')
$$;

CREATE OR REPLACE FUNCTION brain.create_pack(
    name text,
    query text DEFAULT NULL,
    memory_ids bigint[] DEFAULT NULL,
    filters jsonb DEFAULT '{}',
    token_budget integer DEFAULT NULL,
    description text DEFAULT '',
    project text DEFAULT '',
    embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    source text DEFAULT NULL,
    check_only boolean DEFAULT false
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint;
    v_name text := lower(brain.trim_space(coalesce(name, '')));
    v_query text := nullif(brain.trim_space(brain.clean_body(query)), '');
    v_desc text := brain.trim_space(brain.clean_body(coalesce(description, '')));
    v_budget integer := coalesce(token_budget, (brain.setting('pack_token_budget'))::integer);
    v_ids bigint[] := brain._distinct_ids(memory_ids);
    v_filters jsonb := coalesce(filters, '{}');
    missing bigint[];
    space brain.embedding_space;
    vec public.vector;
    old brain.pack;
    p brain.pack;
    action text;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('name', name, 'query', query, 'description', description,
                                                     'filters', filters, 'project', project, 'source', source));
    ws := brain.current_workspace('write');
    IF v_name !~ '^[a-z0-9][a-z0-9_-]{0,62}$' THEN
        PERFORM brain._raise('BR009', 'A pack''s name is 1 to 63 lowercase letters, digits, - and _.',
            jsonb_build_object('field', 'name', 'type', 'text'), 'Example: onboarding, deploy-runbook.');
    END IF;
    IF v_query IS NULL AND cardinality(v_ids) = 0 THEN
        PERFORM brain._raise('BR009', 'A pack is a query or a list of memory ids.', NULL,
            'Give query => ''how we deploy'' (and filters), or memory_ids => ARRAY[12, 15].');
    END IF;
    IF length(v_query) > 2000 OR length(v_desc) > 2000 THEN
        PERFORM brain._raise('BR005', 'A pack''s query and description are at most 2000 characters each.', NULL,
            'Keep them short: the members carry the content.');
    END IF;
    IF cardinality(v_ids) > 200 THEN
        PERFORM brain._raise('BR005', format('A pack lists at most 200 memories, not %s.', cardinality(v_ids)), NULL,
            'Use a query instead, or split it into several packs.');
    END IF;
    PERFORM brain._check_setting_argument('pack_token_budget', 'token_budget', v_budget, 'A pack''s token budget');
    IF jsonb_typeof(v_filters) <> 'object'
       OR EXISTS (SELECT FROM jsonb_object_keys(v_filters) AS k WHERE k NOT IN ('kinds', 'categories', 'tags'))
       OR EXISTS (SELECT FROM jsonb_each(v_filters) AS e WHERE jsonb_typeof(e.value) <> 'array'
                  OR EXISTS (SELECT FROM jsonb_array_elements(e.value) AS x WHERE jsonb_typeof(x) <> 'string'))
       OR EXISTS (SELECT FROM jsonb_array_elements_text(coalesce(v_filters->'kinds', '[]')) AS k
                  WHERE k NOT IN ('rule', 'fact', 'incident', 'task', 'trajectory')) THEN
        PERFORM brain._raise('BR009', 'A pack''s filters are {"kinds": [...], "categories": [...], "tags": [...]}.',
            jsonb_build_object('field', 'filters', 'type', jsonb_typeof(v_filters),
                               'allowed', jsonb_build_object('kinds', jsonb_build_array('rule', 'fact', 'incident', 'task', 'trajectory'))),
            'Example: {"kinds": ["rule", "trajectory"], "tags": ["deploy"]}.');
    END IF;
    missing := ARRAY(SELECT x FROM unnest(v_ids) AS x
                     WHERE NOT EXISTS (SELECT FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = x));
    IF cardinality(missing) > 0 THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', missing[1]),
            jsonb_build_object('missing', missing), 'Take ids from brain search or brain.list_recent.');
    END IF;
    IF check_only THEN
        RETURN jsonb_build_object('action', 'valid', 'name', v_name,
                                  'embedding_input', brain._pack_embedding_input(v_name, v_desc, v_query));
    END IF;
    IF embedding IS NOT NULL THEN
        space := brain._resolve_space(embedding_space);
        vec := brain._check_vector(embedding, space);
    END IF;

    PERFORM pg_advisory_xact_lock(hashtext('brain.pack'), hashtext(ws || '/' || v_name));
    SELECT * INTO old FROM brain.pack k WHERE k.workspace_id = ws AND k.name = v_name AND k.state = 'active' FOR UPDATE;
    IF FOUND THEN
        IF old.query IS NOT DISTINCT FROM v_query AND old.memory_ids = v_ids AND old.filters = v_filters
           AND old.token_budget = v_budget AND old.description = v_desc AND old.project = coalesce(project, '') THEN
            action := 'unchanged';
            UPDATE brain.pack k SET space_id = coalesce(space.space_id, k.space_id),
                                    embedding = coalesce(vec, k.embedding)
            WHERE k.workspace_id = ws AND k.pack_id = old.pack_id RETURNING * INTO p;
        ELSE
            action := 'updated';
            UPDATE brain.pack k
            SET query = v_query, memory_ids = v_ids, filters = v_filters, token_budget = v_budget,
                description = v_desc, project = coalesce(create_pack.project, ''), version = k.version + 1,
                space_id = space.space_id, embedding = vec, updated_at = now()
            WHERE k.workspace_id = ws AND k.pack_id = old.pack_id RETURNING * INTO p;
        END IF;
    ELSE
        action := 'created';
        INSERT INTO brain.pack (workspace_id, name, description, project, query, filters, memory_ids, token_budget,
                                space_id, embedding, created_by)
        VALUES (ws, v_name, v_desc, coalesce(create_pack.project, ''), v_query, v_filters, v_ids, v_budget,
                space.space_id, vec, coalesce(nullif(source, ''), nullif(current_setting('brain.actor', true), ''), session_user))
        RETURNING * INTO p;
    END IF;
    IF action <> 'unchanged' THEN
        UPDATE brain.pack k SET members = brain._pack_members(p)
        WHERE k.workspace_id = ws AND k.pack_id = p.pack_id RETURNING * INTO p;
        PERFORM brain._audit_many(ARRAY[NULL]::bigint[], 'pack', source,
            jsonb_build_object('op', action, 'pack', v_name, 'pack_id', p.pack_id, 'version', p.version));
    END IF;
    RETURN jsonb_build_object('action', action, 'pack_id', p.pack_id, 'name', p.name, 'version', p.version,
                              'embedding_pending', p.embedding IS NULL,
                              'embedding_input', brain._pack_embedding_input(p.name, p.description, p.query));
END
$$;
COMMENT ON FUNCTION brain.create_pack IS
    'Defines (or redefines: version + 1) a named context pack: a query with filters (kinds, categories, tags) or a list of memory ids, a token budget (default pack_token_budget), a description and a project; embedding is that of its query (else of its name and description), which boot_session compares with the task. Secrets refused, audited (action pack). Returns action (created, updated, unchanged), pack_id, name, version.';

-- The current members of a pack: listed ids followed to the end of their
-- supersede chain (or forget replacement), active and unflagged ones only;
-- for a query, what search finds for it (the pack's embedding as the
-- query's, when in the active space).
CREATE OR REPLACE FUNCTION brain._pack_members(p brain.pack)
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    active_space bigint := (SELECT s.space_id FROM brain.embedding_space s WHERE s.workspace_id = ws AND s.state = 'active');
BEGIN
    IF p.query IS NULL THEN
        RETURN ARRAY(
            SELECT c.id FROM (
                SELECT DISTINCT ON (cur.id) cur.id, u.n
                FROM unnest(p.memory_ids) WITH ORDINALITY AS u(id, n)
                CROSS JOIN LATERAL (SELECT brain.current_version(coalesce(
                    (SELECT m.replaced_by FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = u.id
                       AND m.state = 'tombstoned'), u.id)) AS id) AS cur
                JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = cur.id
                WHERE m.state = 'active' AND NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at)
                ORDER BY cur.id, u.n) AS c
            ORDER BY c.n);
    END IF;
    RETURN ARRAY(
        SELECT s.id
        FROM brain.search(query => p.query,
                          query_embedding => CASE WHEN p.space_id = active_space THEN p.embedding::real[]::double precision[] END,
                          kinds => nullif(ARRAY(SELECT jsonb_array_elements_text(p.filters->'kinds')), '{}'),
                          categories => nullif(ARRAY(SELECT jsonb_array_elements_text(p.filters->'categories')), '{}'),
                          tags => nullif(ARRAY(SELECT jsonb_array_elements_text(p.filters->'tags')), '{}'),
                          project => nullif(p.project, ''), max_results => 50) AS s
        JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = s.id
        WHERE NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at) AND s.via_skill_trigger IS NULL
        ORDER BY s.score DESC, s.id);
END
$$;

CREATE OR REPLACE FUNCTION brain.render_pack(
    name text,
    token_budget integer DEFAULT NULL,
    session bigint DEFAULT NULL,
    record boolean DEFAULT true
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    p brain.pack := brain._get_pack(name);
    budget integer := least(coalesce(token_budget, p.token_budget), p.token_budget);
    ids bigint[];
    heading text;
    flags text[];
    items jsonb := '[]';
    total integer;
    shown bigint[] := '{}';
    r record;
    line_tokens integer;
    cut integer := 0;
BEGIN
    IF budget < 20 THEN
        PERFORM brain._raise('BR009', 'A pack is rendered within at least 20 tokens.', jsonb_build_object('token_budget', budget),
            'Give a larger token_budget, or leave it out for the pack''s own.');
    END IF;
    ids := brain._pack_members(p);
    -- The pack keeps itself current: another set of members is a new version.
    IF ids IS DISTINCT FROM p.members AND brain.workspace_access(ws) <> 'read' THEN
        UPDATE brain.pack k SET members = ids, version = k.version + 1, updated_at = now()
        WHERE k.workspace_id = ws AND k.pack_id = p.pack_id RETURNING * INTO p;
    END IF;
    flags := brain._pack_signals(p.description, p.query);
    -- A flagged pack's query is not shown (its members are each read as any memory).
    heading := format('## Context pack %s v%s (%s)', p.name, p.version,
                      CASE WHEN cardinality(flags) > 0 THEN 'FLAGGED: ' || array_to_string(flags, ', ')
                           WHEN p.query IS NOT NULL THEN 'query ' || brain.quote_text(p.query) ELSE 'listed memories' END);
    total := brain.estimate_tokens(heading) + 1;
    FOR r IN
        SELECT m.memory_id, m.kind, m.headline, u.n
        FROM unnest(ids) WITH ORDINALITY AS u(id, n)
        JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = u.id
        ORDER BY u.n
    LOOP
        line_tokens := brain._line_tokens(format('#%s %s %s', r.memory_id, r.kind, brain.quote_text(r.headline)));
        IF total + line_tokens > budget THEN
            cut := cut + 1;
            CONTINUE;
        END IF;
        total := total + line_tokens;
        shown := shown || r.memory_id;
        items := items || jsonb_build_array(jsonb_build_object('id', r.memory_id, 'kind', r.kind, 'headline', r.headline,
            'quoted', brain.quote_text(r.headline), 'tokens', line_tokens));
    END LOOP;
    IF record AND cardinality(shown) > 0 THEN
        PERFORM brain.record_injection('pack', shown, total, cut > 0, session);
    END IF;
    RETURN jsonb_build_object('name', p.name, 'version', p.version, 'pack_id', p.pack_id, 'heading', heading,
        'flag_reasons', to_jsonb(flags), 'items', items, 'tokens', total, 'budget', budget, 'truncated', cut > 0, 'left_out', cut,
        'text', heading || E'\n' || coalesce((SELECT string_agg(format('- #%s %s %s', i->>'id', i->>'kind', i->>'quoted'), E'\n')
                                              FROM jsonb_array_elements(items) AS i), ''));
END
$$;
COMMENT ON FUNCTION brain.render_pack IS
    'Renders a context pack within its token budget (or a smaller one) by the boot payload''s rules: one line per member, "- #id kind" and the headline as a quoted JSON string, members that do not fit left out (truncated, left_out). Members are current: a superseded one is replaced by its successor, a forgotten one drops out (or its replacement comes in), flagged ones are left out; when they changed, the pack''s version moves. A pack whose description or query shows injection signals (brain.injection_signals) has them in flag_reasons, and its heading says FLAGGED with them instead of showing its query. Records the injection (trigger pack) unless record => false.';

-- PL/pgSQL, as every public function that writes (it records the injection):
-- the write guard trusts only frames that name their schema.
CREATE OR REPLACE FUNCTION brain.load_pack(name text, token_budget integer DEFAULT NULL, session bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain.render_pack(load_pack.name, load_pack.token_budget, load_pack.session, true);
END
$$;
COMMENT ON FUNCTION brain.load_pack IS 'A context pack rendered for an agent (brain.render_pack), its injection recorded.';

-- flag_reasons added: another result type, so the function is made anew.
DO $$
BEGIN
    IF (SELECT NOT ('flag_reasons' = ANY (p.proargnames)) FROM pg_proc p
        WHERE p.oid = to_regprocedure('brain.list_packs(text)')) THEN
        DROP FUNCTION brain.list_packs(text);
    END IF;
END
$$;
CREATE OR REPLACE FUNCTION brain.list_packs(project text DEFAULT NULL)
RETURNS TABLE (pack_id bigint, name text, version integer, description text, project text, query text, filters jsonb,
               memory_ids bigint[], members integer, token_budget integer, embedded boolean, created_by text,
               created_at timestamptz, updated_at timestamptz, flag_reasons text[])
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT k.pack_id, k.name, k.version, k.description, k.project, k.query, k.filters, k.memory_ids,
           cardinality(k.members), k.token_budget, k.embedding IS NOT NULL, k.created_by, k.created_at, k.updated_at,
           brain._pack_signals(k.description, k.query)
    FROM brain.pack k
    WHERE k.workspace_id = brain.current_workspace() AND k.state = 'active'
      AND (list_packs.project IS NULL OR k.project IN (list_packs.project, ''))
    ORDER BY k.name
$$;
COMMENT ON FUNCTION brain.list_packs IS 'The active context packs (of a project and the global ones), by name, each with the injection signals of its description and query (flag_reasons, empty when none).';

CREATE OR REPLACE FUNCTION brain.drop_pack(name text, source text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p brain.pack := brain._get_pack(name);
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('source', source));
    UPDATE brain.pack k SET state = 'dropped', dropped_at = now(), updated_at = now()
    WHERE k.workspace_id = p.workspace_id AND k.pack_id = p.pack_id;
    PERFORM brain._audit_many(ARRAY[NULL]::bigint[], 'pack', source,
        jsonb_build_object('op', 'dropped', 'pack', p.name, 'pack_id', p.pack_id, 'version', p.version));
    RETURN jsonb_build_object('action', 'dropped', 'pack_id', p.pack_id, 'name', p.name, 'version', p.version);
END
$$;
COMMENT ON FUNCTION brain.drop_pack IS 'Drops a context pack (kept as dropped, audited); its name is free again.';

-- A listed member superseded, forgotten or archived: the packs that list it
-- follow it (its successor or replacement in its place, or nothing), and
-- their version moves.
CREATE OR REPLACE FUNCTION brain._pack_follow()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    successor bigint := CASE NEW.state WHEN 'superseded' THEN NEW.superseded_by
                                       WHEN 'tombstoned' THEN NEW.replaced_by END;
BEGIN
    UPDATE brain.pack k
    SET memory_ids = brain._distinct_ids(array_replace(k.memory_ids, NEW.memory_id, successor)),
        members = brain._distinct_ids(array_replace(k.members, NEW.memory_id, successor)),
        version = k.version + 1, updated_at = now()
    WHERE k.workspace_id = NEW.workspace_id AND k.state = 'active' AND k.memory_ids @> ARRAY[NEW.memory_id]
      AND (successor IS NOT NULL OR cardinality(k.memory_ids) > 1 OR k.query IS NOT NULL);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS memory_pack_follow ON brain.memory;
CREATE TRIGGER memory_pack_follow AFTER UPDATE OF state ON brain.memory
    FOR EACH ROW WHEN (OLD.state = 'active' AND NEW.state <> 'active')
    EXECUTE FUNCTION brain._pack_follow();

-- The best matching pack of a boot's scope for a task embedding, when its
-- relevance reaches floor.
CREATE OR REPLACE FUNCTION brain._best_pack(ws bigint, projects text[], s brain.embedding_space, vec public.vector,
                                            floor double precision)
RETURNS TABLE (name text, similarity double precision, relevance double precision)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT x.name, x.similarity, x.relevance
    FROM (SELECT k.name, 1 - (k.embedding OPERATOR(public.<=>) vec) AS similarity,
                 brain.relevance(1 - (k.embedding OPERATOR(public.<=>) vec), NULL,
                                 ARRAY[s.relevance_center, s.relevance_slope]) AS relevance
          FROM brain.pack k
          WHERE k.workspace_id = ws AND k.state = 'active' AND k.project = ANY (projects)
            AND k.space_id = s.space_id AND vec IS NOT NULL
            AND cardinality(brain._pack_signals(k.description, k.query)) = 0  -- a flagged pack is not attached
          ORDER BY k.embedding OPERATOR(public.<=>) vec, k.pack_id
          LIMIT 1) AS x
    WHERE x.relevance >= floor
$$;

-- ---------------------------------------------------------------------------
-- Packs in an export (docs/export-format.md): one line per active pack after
-- the sessions; imported with their listed ids mapped to the imported memories.

CREATE OR REPLACE FUNCTION brain.export_packs(project text DEFAULT NULL)
RETURNS TABLE (doc jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('record', 'pack', 'id', k.pack_id, 'name', k.name, 'version', k.version,
                              'description', k.description, 'project', k.project, 'query', k.query,
                              'filters', k.filters, 'memory_ids', to_jsonb(k.memory_ids),
                              'token_budget', k.token_budget, 'created_by', k.created_by,
                              'created_at', k.created_at, 'updated_at', k.updated_at)
    FROM brain.pack k
    WHERE k.workspace_id = brain.current_workspace() AND k.state = 'active'
      AND (export_packs.project IS NULL OR k.project = export_packs.project)
    ORDER BY k.pack_id
$$;
COMMENT ON FUNCTION brain.export_packs IS
    'The active context packs of the workspace (or of one project) as export lines {"record": "pack", name, description, project, query, filters, memory_ids, token_budget, ...} (docs/export-format.md).';

CREATE OR REPLACE FUNCTION brain.import_packs(docs jsonb, id_map jsonb DEFAULT '{}', project text DEFAULT NULL)
RETURNS TABLE (item integer, old_id bigint, action text, name text, pack_id bigint, version integer,
               embedding_input text, error_code text, error text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    d jsonb;
    n integer := 0;
    ids bigint[];
    out jsonb;
BEGIN
    IF docs IS NULL OR jsonb_typeof(docs) <> 'array' THEN
        PERFORM brain._raise('BR009', 'Packs are imported as a JSON array of pack lines.', NULL,
            'Pass the lines with "record": "pack" of an export.');
    END IF;
    FOR d IN SELECT x FROM jsonb_array_elements(docs) AS x LOOP
        n := n + 1;
        BEGIN
            -- Listed memories by their new ids; those the import did not bring are left out.
            ids := ARRAY(SELECT (id_map->>(x.v))::bigint
                         FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(d->'memory_ids') = 'array'
                                                             THEN d->'memory_ids' ELSE '[]' END)
                              WITH ORDINALITY AS x(v, o)
                         WHERE id_map ? x.v ORDER BY x.o);
            IF EXISTS (SELECT FROM brain.pack k WHERE k.workspace_id = brain.current_workspace()
                       AND k.name = lower(brain.trim_space(d->>'name')) AND k.state = 'active') THEN
                RETURN QUERY SELECT n, (d->>'id')::bigint, 'skipped'::text, d->>'name', NULL::bigint, NULL::integer,
                                    NULL::text, NULL::text, 'a pack of that name exists'::text;
                CONTINUE;
            END IF;
            out := brain.create_pack(name => d->>'name', query => d->>'query', memory_ids => ids,
                                     filters => coalesce(d->'filters', '{}'),
                                     token_budget => (d->>'token_budget')::integer,
                                     description => coalesce(d->>'description', ''),
                                     project => coalesce(import_packs.project, d->>'project', ''),
                                     source => 'import');
            RETURN QUERY SELECT n, (d->>'id')::bigint, out->>'action', out->>'name', (out->>'pack_id')::bigint,
                                (out->>'version')::integer, out->>'embedding_input', NULL::text, NULL::text;
        EXCEPTION WHEN SQLSTATE 'BR001' OR SQLSTATE 'BR005' OR SQLSTATE 'BR007' OR SQLSTATE 'BR009'
                       OR SQLSTATE 'BR010' OR data_exception THEN
            RETURN QUERY SELECT n, (d->>'id')::bigint, 'rejected'::text, left(d->>'name', 63), NULL::bigint,
                                NULL::integer, NULL::text, SQLSTATE::text, SQLERRM::text;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION brain.import_packs IS
    'Loads the pack lines of an export (brain.export_packs) through brain.create_pack: listed ids mapped by id_map ({"old id": new id}, from brain.import_memories), ids the import did not bring left out; a pack whose name exists is skipped, a refused one (BR codes, secrets included) reported. One row per line with its action and the text to embed.';

-- ---------------------------------------------------------------------------
-- Snapshots: what sessions left for resuming (end_session's snapshot), as a timeline.

CREATE OR REPLACE FUNCTION brain.list_snapshots(project text DEFAULT NULL, max_results integer DEFAULT 50)
RETURNS TABLE (session_id bigint, source text, project text, at timestamptz, summary text, status text,
               blockers jsonb, pending jsonb, handoff text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.session_id, x.source, x.project, x.at, x.snapshot->>'summary', x.snapshot->>'status',
           CASE WHEN jsonb_typeof(x.snapshot->'blockers') = 'array' THEN x.snapshot->'blockers' ELSE '[]' END,
           CASE WHEN jsonb_typeof(x.snapshot->'pending') = 'array' THEN x.snapshot->'pending' ELSE '[]' END,
           x.text
    FROM ((SELECT o.session_id, o.source, o.project, o.ended_at AS at, o.snapshot, o.handoff AS text
           FROM brain.session o
           WHERE o.workspace_id = brain.current_workspace() AND o.snapshot IS NOT NULL AND o.ended_at IS NOT NULL
             AND (list_snapshots.project IS NULL OR o.project = list_snapshots.project))
          UNION ALL
          (SELECT l.session_id, l.source, l.project, l.created_at, l.snapshot, l.text
           FROM brain.handoff l
           WHERE l.workspace_id = brain.current_workspace() AND l.snapshot IS NOT NULL
             AND (list_snapshots.project IS NULL OR l.project = list_snapshots.project))) AS x
    ORDER BY x.at DESC, x.session_id DESC NULLS LAST
    LIMIT least(greatest(coalesce(max_results, 50), 1), 1000)
$$;
COMMENT ON FUNCTION brain.list_snapshots IS
    'The snapshots sessions left (end_session''s summary, status, blockers, pending, with the handoff), of a project or all, newest first: the timeline a boot after a gap resumes from.';

-- Functions of this file: executable by the application roles, not by PUBLIC
-- (as sql/functions/023-tenancy.sql does for the files before it).
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'brain' AND p.prokind IN ('f', 'p')
               AND p.proname IN ('_session', 'record_injection', '_note_use', 'note_use', '_note_cites',
                                 'injection_metrics', 'result_lines', '_acknowledges', 'trajectory_problem', '_trajectory_steps', '_import_trajectory', '_steps_text', '_insert_trajectory',
                                 'record_trajectory', 'trajectory_text', 'list_trajectories', '_near_trajectories',
                                 '_get_pack', '_pack_signals', '_pack_embedding_input', '_distinct_ids', 'create_pack', '_pack_members', 'render_pack',
                                 'load_pack', 'list_packs', 'drop_pack', '_pack_follow', '_best_pack',
                                 'export_packs', 'import_packs', 'list_snapshots')
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        IF (SELECT p.prorettype = 'trigger'::regtype FROM pg_proc p WHERE p.oid = f) THEN
            EXECUTE format('REVOKE ALL ON FUNCTION %s FROM brain_user', f);
        ELSE
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO brain_user', f);
        END IF;
    END LOOP;
END
$$;
