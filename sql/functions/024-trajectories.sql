-- Trajectories ("how we solved it") and injection telemetry (migration 023):
-- the session, injections and their use, and a trajectory's steps. Recording
-- one is 024a-trajectories-record.sql; context packs, 024b-packs.sql. A trajectory is a memory of kind 'trajectory' written
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
    -- sessions by number (as text, #10 came before #9), those of no session last
    ORDER BY CASE WHEN group_by = 'session' THEN min(i.session_id) END NULLS LAST, 1;
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
