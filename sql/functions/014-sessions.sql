-- The session registry and action items (the scratchpad: 014a-sessions-scratch.sql).

CREATE OR REPLACE FUNCTION brain._get_session(id bigint)
RETURNS brain.session
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session;
BEGIN
    SELECT * INTO s FROM brain.session x WHERE x.workspace_id = brain.current_workspace() AND x.session_id = id;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR016', format('No session #%s in this workspace.', id),
            jsonb_build_object('session', id), 'Start one with brain.boot_session.');
    END IF;
    RETURN s;
END
$$;

-- Ends sessions that are gone: heartbeat older than session_ttl_minutes, or,
-- for sessions on `host`, a process missing from `host_processes` (an array of
-- [pid, start epoch] pairs, the caller's view of its own process table) or
-- started at another time (the pid was reused). Returns how many it ended.
CREATE OR REPLACE FUNCTION brain._sweep_sessions(now timestamptz, host text DEFAULT NULL,
                                                 host_processes jsonb DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    ttl interval := make_interval(mins => (brain.setting('session_ttl_minutes'))::integer);
    n_stale integer;
    n_gone integer := 0;
    clock timestamptz := brain._clock(_sweep_sessions.now);
BEGIN
    UPDATE brain.session s
    SET status = 'ended', ended_at = clock, end_reason = 'heartbeat expired'
    WHERE s.workspace_id = ws AND s.status = 'active' AND s.heartbeat_at < clock - ttl;
    GET DIAGNOSTICS n_stale = ROW_COUNT;
    IF host IS NOT NULL AND jsonb_typeof(host_processes) = 'array' THEN
        UPDATE brain.session s
        SET status = 'ended', ended_at = clock, end_reason = 'process gone'
        WHERE s.workspace_id = ws AND s.status = 'active' AND s.host = _sweep_sessions.host AND s.pid IS NOT NULL
          AND NOT EXISTS (
              SELECT FROM jsonb_array_elements(host_processes) AS p
              -- (what is not a number matches nothing: a cast would quote it in an error)
              WHERE CASE WHEN p->>0 ~ '^[0-9]{1,9}$' THEN (p->>0)::integer END = s.pid
                AND (s.pid_started_at IS NULL
                     OR abs(extract(epoch FROM s.pid_started_at)
                            - CASE WHEN jsonb_typeof(p->1) = 'number' THEN (p->>1)::double precision END) < 1));
        GET DIAGNOSTICS n_gone = ROW_COUNT;
    END IF;
    RETURN n_stale + n_gone;
END
$$;

-- Every call that carries a session refreshes its heartbeat.
CREATE OR REPLACE FUNCTION brain._touch_session(id bigint, now timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE brain.session s SET heartbeat_at = greatest(s.heartbeat_at, brain._clock(now))
    WHERE s.workspace_id = brain.current_workspace() AND s.session_id = id AND s.status = 'active'
$$;

CREATE OR REPLACE FUNCTION brain.list_active_sessions(
    project text DEFAULT NULL,
    exclude_session bigint DEFAULT NULL,
    host text DEFAULT NULL,
    host_processes jsonb DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS SETOF brain.session_brief
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := brain._clock(list_active_sessions.now);
BEGIN
    PERFORM brain._sweep_sessions(clock, list_active_sessions.host, host_processes);
    IF exclude_session IS NOT NULL THEN
        PERFORM brain._touch_session(exclude_session, clock);
    END IF;
    RETURN QUERY
        SELECT s.session_id, s.source, s.project, s.cwd, s.pid, s.host, s.current_task, s.started_at,
               s.heartbeat_at
        FROM brain.session s
        WHERE s.workspace_id = brain.current_workspace() AND s.status = 'active'
          AND (list_active_sessions.project IS NULL OR s.project = list_active_sessions.project)
          AND s.session_id IS DISTINCT FROM exclude_session
        ORDER BY s.started_at, s.session_id;
END
$$;
COMMENT ON FUNCTION brain.list_active_sessions IS
    'Live sessions (of a project, or all), after ending the gone ones: heartbeat older than session_ttl_minutes (5), or a process missing from host_processes on that host. exclude_session leaves the caller out (and refreshes its heartbeat).';

CREATE OR REPLACE FUNCTION brain.update_active_task(session bigint, task text, now timestamptz DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session := brain._get_session(session);
BEGIN
    IF s.status <> 'active' THEN
        PERFORM brain._raise('BR011', format('Session #%s has ended (%s).', s.session_id, s.end_reason),
            jsonb_build_object('session', s.session_id, 'end_reason', s.end_reason),
            'Boot a new session with brain.boot_session.');
    END IF;
    PERFORM brain._refuse_secrets(jsonb_build_object('task', task), 'it was not stored');
    UPDATE brain.session x
    SET current_task = nullif(brain.clean_headline(task), ''),
        heartbeat_at = greatest(x.heartbeat_at, brain._clock(update_active_task.now))
    WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    RETURN jsonb_build_object('session', s.session_id, 'current_task', nullif(brain.clean_headline(task), ''));
END
$$;
COMMENT ON FUNCTION brain.update_active_task IS 'Sets what a session is working on (siblings see it) and refreshes its heartbeat.';

-- A handoff and snapshot as end_session takes them: BR009 for a malformed
-- snapshot, BR007 for a secret in either.
CREATE OR REPLACE FUNCTION brain._check_handoff(handoff text, snapshot jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('handoff', handoff, 'snapshot', snapshot),
                                  'the session was not ended');
    IF snapshot IS NOT NULL AND (jsonb_typeof(snapshot) <> 'object' OR EXISTS (
            SELECT FROM jsonb_object_keys(snapshot) AS k WHERE k NOT IN ('summary', 'status', 'blockers', 'pending'))) THEN
        PERFORM brain._raise('BR009', 'A snapshot is an object with summary, status, blockers and pending.',
            jsonb_build_object('field', 'snapshot'),
            'Example: {"summary": "...", "status": "in progress", "blockers": [], "pending": ["..."]}');
    END IF;
END
$$;

-- Stores a handoff apart from its session, for the next session of `project`
-- and `source`: the session had ended before the handoff came, or none was found
-- (`session` NULL). Returns what end_session returns in that case. A handoff
-- the next session gets already is not stored twice (unchanged).
CREATE OR REPLACE FUNCTION brain._store_handoff(source text, project text, session bigint, handoff text,
                                                snapshot jsonb, clock timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_id bigint;
BEGIN
    IF brain._handoff_unchanged(source, project, handoff, snapshot, NULL, clock) THEN
        RETURN jsonb_build_object('session', session, 'ended', false, 'source', source,
                                  'project', coalesce(project, ''), 'handoff_id', NULL, 'unchanged', true,
                                  'handoff_chars', length(nullif(brain.trim_space(handoff), '')));
    END IF;
    INSERT INTO brain.handoff (workspace_id, source, project, session_id, text, snapshot, created_at)
    VALUES (brain.current_workspace(), source, coalesce(project, ''), session,
            nullif(brain.trim_space(brain.clean_body(handoff)), ''), snapshot, clock)
    RETURNING handoff_id INTO new_id;
    RETURN jsonb_build_object('session', session, 'ended', false, 'source', source, 'project', coalesce(project, ''),
                              'handoff_id', new_id, 'handoff_chars', length(nullif(brain.trim_space(handoff), '')));
END
$$;

-- A time the hooks' functions keep in a session's client_info (captured_at,
-- ended_late), read only when it is one (client_info is stored as the client
-- gives it); NULL otherwise.
CREATE OR REPLACE FUNCTION brain._info_time(info jsonb, key text)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF jsonb_typeof(info->key) = 'string'
       AND info->>key ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d(:\d\d)?|Z)$' THEN
        RETURN (info->>key)::timestamptz;
    END IF;
    RETURN NULL;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format OR invalid_time_zone_displacement_value THEN
    RETURN NULL;
END
$$;

-- When a session ended, for the order of handoffs: its end; for one that ended
-- without saying so (the client crashed: its process gone, its heartbeat
-- expired, the machine rebooted), its last sign of life, not the moment that
-- was noticed. NULL while the session goes on: a session compacted (its row
-- ended, 'compacted') whose client session has a row still active, unless that
-- client session is `own` (the one asking: after its compaction it gets its own
-- note). A handoff written for a compacted session later (`written`: its client
-- session went on and ended then, with no start booted again after the
-- compaction) counts from when it was written; so does one written later for a
-- session that ended and went on (its client's turn stopped, and the next one
-- stopped too), but not one written for a crashed session once captured, nor
-- one of a session whose end hook arrived after it was taken for a crash
-- (client_info.ended_late: its window was killed while the hook ran, the hook
-- was slow, or it was kept in the spool and written later): those written up
-- to then count from its last sign of life (brain.hand_off_transcript).
DROP FUNCTION IF EXISTS brain._handoff_time(brain.session);
DROP FUNCTION IF EXISTS brain._handoff_time(brain.session, text);
CREATE OR REPLACE FUNCTION brain._handoff_time(s brain.session, own text, written timestamptz DEFAULT NULL)
RETURNS timestamptz
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN s.status <> 'ended' THEN NULL
        WHEN s.end_reason = 'compacted' AND (s.client_info->>'client_session') IS DISTINCT FROM own AND EXISTS (
                 SELECT FROM brain.session n
                 WHERE n.workspace_id = s.workspace_id AND n.status = 'active'
                   AND n.client_info->>'client_session' = s.client_info->>'client_session') THEN NULL
        -- (and when the same client session went on and ended later with nothing new to
        -- hand off, its handoff stayed this one: it counts from that end)
        WHEN s.end_reason = 'compacted' THEN greatest(s.ended_at, written, (
                 SELECT max(n.ended_at) FROM brain.session n
                 WHERE n.workspace_id = s.workspace_id AND n.status = 'ended' AND n.end_reason = 'ended'
                   AND n.handoff IS NULL AND n.session_id <> s.session_id AND n.started_at >= s.started_at
                   AND n.client_info->>'client_session' = s.client_info->>'client_session'))
        WHEN s.end_reason IN ('process gone', 'heartbeat expired', 'rebooted')
            THEN least(s.heartbeat_at, s.ended_at)
        -- (one whose end hook reached the database after it was taken for a crash: the
        -- handoffs written until then count from its last sign of life too)
        WHEN s.client_info ? 'ended_late'
             AND (written IS NULL OR written <= brain._info_time(s.client_info, 'ended_late'))
            THEN least(s.heartbeat_at, s.ended_at)
        -- (a session that ended and went on: Codex's stops each turn, Cursor's stop then its
        -- sessionEnd; the handoff it wrote later counts from then)
        ELSE greatest(s.ended_at, written) END
$$;

-- The handoff the next session of a project gets, whatever its source (the
-- harness or agent: Claude Code, Codex, Cursor ... share one project): that of
-- the session that ended last (brain._handoff_time), its own or one stored
-- apart for it (brain.handoff); one stored apart for no session counts from
-- when it was written (source: kept for the callers, not a filter). A session
-- that goes on (compacted) or has not ended hands off nothing yet.
CREATE OR REPLACE FUNCTION brain._last_handoff(project text, source text, exclude_session bigint, clock timestamptz)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH own AS (SELECT x.client_info->>'client_session' AS client_session FROM brain.session x
                 WHERE x.workspace_id = brain.current_workspace() AND x.session_id = exclude_session)
    SELECT jsonb_build_object('session_id', h.session_id, 'ended_at', h.at, 'text', h.text, 'snapshot', h.snapshot)
    -- (the newest 50 of each kind by when they were recorded: a handoff's time is
    -- never later than that)
    FROM (
        SELECT o.session_id, brain._handoff_time(o, (SELECT own.client_session FROM own)) AS at, o.handoff AS text, o.snapshot, 0 AS late,
               o.session_id AS id
        FROM (SELECT * FROM brain.session o
              WHERE o.workspace_id = brain.current_workspace() AND o.status = 'ended'
                AND o.project = _last_handoff.project
                AND o.handoff IS NOT NULL AND o.session_id IS DISTINCT FROM exclude_session
                AND o.ended_at <= clock
              ORDER BY o.ended_at DESC, o.session_id DESC
              LIMIT 50) AS o
        UNION ALL
        SELECT l.session_id,
               CASE WHEN l.session_id IS NULL THEN l.created_at
                    ELSE brain._handoff_time(o, (SELECT own.client_session FROM own), l.created_at) END,
               l.text, l.snapshot, 1, l.handoff_id
        FROM (SELECT * FROM brain.handoff l
              WHERE l.workspace_id = brain.current_workspace() AND l.project = _last_handoff.project
                AND l.session_id IS DISTINCT FROM exclude_session
                AND l.created_at <= clock
              ORDER BY l.created_at DESC, l.handoff_id DESC
              LIMIT 50) AS l
        LEFT JOIN brain.session o ON o.workspace_id = l.workspace_id AND o.session_id = l.session_id
    ) AS h
    WHERE h.at IS NOT NULL
    ORDER BY h.at DESC, h.late DESC, h.id DESC
    LIMIT 1
$$;

-- A handoff as it is compared with the last one: its text as stored, spaces
-- folded, and for one a hook wrote from a transcript (brain.transcript_handoff)
-- without the event that wrote it: the same turns handed off at compaction and
-- again at the session's end are the same handoff.
CREATE OR REPLACE FUNCTION brain._handoff_gist(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT regexp_replace(regexp_replace(brain.trim_space(brain.clean_body(t)), '\s+', ' ', 'g'),
                          '^(Written from the transcript of [^\n]+) at [^:\n]+:', '\1:')
$$;

-- true when a handoff would repeat the one the next session of `project`
-- gets already (brain._last_handoff): the same text (brain._handoff_gist)
-- and the same snapshot, or none. Such a handoff is not stored again.
CREATE OR REPLACE FUNCTION brain._handoff_unchanged(source text, project text, handoff text, snapshot jsonb,
                                                    exclude_session bigint, clock timestamptz)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT brain._handoff_gist(l->>'text') = brain._handoff_gist(handoff)
                            AND (snapshot IS NULL OR snapshot = l->'snapshot')
                     FROM brain._last_handoff(coalesce(project, ''), source, exclude_session, clock) AS l), false)
           AND nullif(brain.trim_space(handoff), '') IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION brain.end_session(session bigint, handoff text DEFAULT NULL, snapshot jsonb DEFAULT NULL,
                                             now timestamptz DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session := brain._get_session(session);
    clock timestamptz := brain._clock(end_session.now);
    unchanged boolean;
BEGIN
    PERFORM brain._check_handoff(handoff, snapshot);
    SELECT * INTO s FROM brain.session x WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id FOR UPDATE;
    IF s.status <> 'active' THEN
        IF nullif(brain.trim_space(handoff), '') IS NULL AND snapshot IS NULL THEN
            PERFORM brain._raise('BR011', format('Session #%s has already ended (%s).', s.session_id, s.end_reason),
                jsonb_build_object('session', s.session_id, 'end_reason', s.end_reason, 'ended_at', s.ended_at),
                'Nothing to do.');
        END IF;
        -- A handoff is never dropped: it goes to the session's project and source all the same.
        RETURN brain._store_handoff(s.source, s.project, s.session_id, handoff, snapshot, clock)
               || jsonb_build_object('had_ended', jsonb_build_object('at', s.ended_at, 'reason', s.end_reason));
    END IF;
    -- A handoff the next session gets already is not stored twice: that one stays.
    unchanged := brain._handoff_unchanged(s.source, s.project, handoff, snapshot, s.session_id, clock);
    UPDATE brain.session x
    SET status = 'ended', ended_at = clock, end_reason = 'ended',
        handoff = CASE WHEN NOT unchanged THEN nullif(brain.trim_space(brain.clean_body(end_session.handoff)), '') END,
        snapshot = CASE WHEN NOT unchanged THEN end_session.snapshot END
    WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    RETURN jsonb_build_object('session', s.session_id, 'ended', true, 'source', s.source, 'project', s.project,
                              'handoff_chars', length(nullif(brain.trim_space(end_session.handoff), '')))
           || CASE WHEN unchanged THEN '{"unchanged": true}'::jsonb ELSE '{}' END;
END
$$;
COMMENT ON FUNCTION brain.end_session IS
    'Ends a session with a handoff for the next session of the same project (any source) (shown at its boot, cut to 2000 characters) and a snapshot {summary, status, blockers, pending}. A session that has already ended keeps the handoff all the same (had_ended says when and why); with neither handoff nor snapshot that is BR011. A handoff identical to the one the next session gets already (the same text, and the same snapshot or none) is not stored again: unchanged is true.';

CREATE OR REPLACE FUNCTION brain.end_session_of(
    source text,
    project text DEFAULT '',
    cwd text DEFAULT NULL,
    host text DEFAULT NULL,
    handoff text DEFAULT NULL,
    snapshot jsonb DEFAULT NULL,
    host_processes jsonb DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := brain._clock(end_session_of.now);
    target bigint;
BEGIN
    IF source IS NULL OR source !~ '^\S+$' THEN
        PERFORM brain._raise('BR009', 'A session is found by its source: one word naming the client.',
            jsonb_build_object('field', 'source', 'type', 'one word'), 'The source the session was booted with, e.g. claude.');
    END IF;
    PERFORM brain._check_handoff(handoff, snapshot);
    PERFORM brain._sweep_sessions(clock, end_session_of.host, host_processes);
    -- The seat's live session, the newest first; else the newest that has ended.
    SELECT s.session_id INTO target FROM brain.session s
    WHERE s.workspace_id = brain.current_workspace() AND s.source = end_session_of.source
      AND s.project = coalesce(end_session_of.project, '') AND s.cwd IS NOT DISTINCT FROM end_session_of.cwd
      AND s.host IS NOT DISTINCT FROM end_session_of.host AND s.started_at <= clock
    ORDER BY s.status = 'active' DESC, s.started_at DESC, s.session_id DESC
    LIMIT 1;
    IF target IS NOT NULL THEN
        RETURN brain.end_session(target, handoff, snapshot, clock);
    END IF;
    IF nullif(brain.trim_space(handoff), '') IS NULL AND snapshot IS NULL THEN
        PERFORM brain._raise('BR016',
            'No session of that source, project, cwd and host.',
            jsonb_build_object('fields', jsonb_build_array('source', 'project', 'cwd', 'host')),
            'brain.list_active_sessions() lists the live sessions; brain.end_session(session) ends one by id.');
    END IF;
    RETURN brain._store_handoff(source, project, NULL, handoff, snapshot, clock);
END
$$;
COMMENT ON FUNCTION brain.end_session_of IS
    'Ends the session booted for a seat (source, project, cwd, host), as a later shell of that seat would: after ending the gone sessions, the seat''s newest live session, else its newest ended one (whose handoff is kept all the same), else none: the handoff is stored for the project and source. A handoff is never dropped.';

-- (the server's clock dates an item and counts a session's items in the
-- last hour: a client's clock would lift the limit)
DROP FUNCTION IF EXISTS brain.create_action_item(text, text, text, bigint, timestamptz, boolean);
CREATE OR REPLACE FUNCTION brain.create_action_item(text text, project text DEFAULT '', for_source text DEFAULT NULL,
                                                    session bigint DEFAULT NULL, all_projects boolean DEFAULT false,
                                                    request_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- sent again with its key: the item the first call raised, and the hour's count
    -- not spent again (004c-write-requests.sql)
    kept jsonb := brain._request_answer(request_key, 'create_action_item',
        jsonb_build_object('text', create_action_item.text, 'project', project, 'for_source', for_source,
                           'session', session, 'all_projects', all_projects));
    new_id bigint;
    s brain.session;
BEGIN
    IF kept IS NOT NULL THEN
        RETURN kept::bigint;
    END IF;
    PERFORM brain._refuse_secrets(jsonb_build_object('text', create_action_item.text, 'project', project,
                                                     'for_source', for_source));
    PERFORM brain._require_text(create_action_item.text, 'BR009', 'An action item needs a text.',
        'Say what the other sessions must do.');
    IF length(create_action_item.text) > 2000 THEN
        PERFORM brain._raise('BR005', 'An action item is at most 2000 characters.',
            jsonb_build_object('characters', length(create_action_item.text)), 'Store the detail as a memory and point to it.');
    END IF;
    IF coalesce(all_projects, false) AND brain.workspace_access() IS DISTINCT FROM 'admin' THEN
        PERFORM brain._raise('BR020', 'Only an admin of the workspace raises action items for every project.',
            jsonb_build_object('role', current_user::text, 'access', brain.workspace_access()),
            'Raise it for one project (project => ...), or ask an admin of the workspace.');
    END IF;
    IF session IS NOT NULL THEN
        s := brain._get_session(session);
        -- A session raises items for its own project only, and only so many an hour.
        IF coalesce(project, '') NOT IN ('', s.project) THEN
            PERFORM brain._raise('BR009',
                format('Session #%s belongs to another project; it raises action items for its own only.', s.session_id),
                jsonb_build_object('session', s.session_id),
                'Leave project out: the item goes to the sessions of this session''s project.');
        END IF;
        project := s.project;
        IF (SELECT count(*) FROM brain.action_item a
            WHERE a.workspace_id = s.workspace_id AND a.created_by = s.session_id
              AND a.created_at > pg_catalog.now() - interval '1 hour')
           >= (brain.setting('action_items_per_hour'))::integer THEN
            PERFORM brain._raise('BR009',
                format('Session #%s raised %s action items in the last hour, the limit.', s.session_id,
                       (brain.setting('action_items_per_hour'))::integer),
                jsonb_build_object('session', s.session_id, 'limit', (brain.setting('action_items_per_hour'))::integer),
                'Wait, or put the items into one.');
        END IF;
        PERFORM brain._touch_session(session);
    END IF;
    INSERT INTO brain.action_item (workspace_id, text, project, for_source, created_by, created_at, all_projects)
    VALUES (brain.current_workspace(), brain.clean_body(brain.trim_space(create_action_item.text)), coalesce(project, ''),
            nullif(for_source, ''), session, pg_catalog.now(), coalesce(all_projects, false))
    RETURNING action_item_id INTO new_id;
    PERFORM brain._keep_answer(request_key, to_jsonb(new_id));
    RETURN new_id;
END
$$;
COMMENT ON FUNCTION brain.create_action_item IS
    'Raises an item for the sessions of a project (a session: of its own project, at most action_items_per_hour an hour by the server''s clock), or of one source: until one of them acknowledges it, each of them (but the one that raised it) is refused writes. The sessions of other projects are never blocked, unless all_projects => true, which only an admin of the workspace may give (BR020): then the sessions of every project. With a request_key, the same call sent again returns the same item and raises none.';

-- The items a session must acknowledge before it writes.
CREATE OR REPLACE FUNCTION brain.pending_action_items(session bigint)
RETURNS TABLE (id bigint, text text, project text, for_source text, created_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT a.action_item_id, a.text, a.project, a.for_source, a.created_at
    FROM brain.action_item a
    JOIN brain.session s ON s.workspace_id = a.workspace_id AND s.session_id = pending_action_items.session
    WHERE a.workspace_id = brain.current_workspace() AND a.status = 'pending'
      AND (a.project = s.project OR a.all_projects)
      AND (a.for_source IS NULL OR a.for_source = s.source)
      AND a.created_by IS DISTINCT FROM s.session_id
    ORDER BY a.created_at, a.action_item_id
$$;
COMMENT ON FUNCTION brain.pending_action_items IS
    'Action items waiting for this session: of its project (or global), for its source or any, raised by another session.';

CREATE OR REPLACE FUNCTION brain._check_write_allowed(session bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    items jsonb;
BEGIN
    IF session IS NULL THEN
        RETURN;
    END IF;
    PERFORM brain._get_session(session);
    SELECT jsonb_agg(jsonb_build_object('id', p.id, 'text', brain.quote_text(p.text))) INTO items
    FROM brain.pending_action_items(session) AS p;
    IF items IS NOT NULL THEN
        PERFORM brain._raise('BR013',
            format('Session #%s has %s pending action item(s): acknowledge them before writing.', session,
                   jsonb_array_length(items)),
            jsonb_build_object('session', session, 'action_items', items),
            format('For each: brain.acknowledge_action_item(id, %s, ''will_execute'' | ''already_done'' | ''not_relevant'').',
                   session));
    END IF;
    PERFORM brain._touch_session(session);
END
$$;

DROP FUNCTION IF EXISTS brain.acknowledge_action_item(bigint, bigint, text, text, timestamptz);
CREATE OR REPLACE FUNCTION brain.acknowledge_action_item(id bigint, session bigint, response text,
                                                         note text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    item brain.action_item;
    s brain.session := brain._get_session(session);
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('response', response, 'note', note));
    SELECT * INTO item FROM brain.action_item a
    WHERE a.workspace_id = brain.current_workspace() AND a.action_item_id = id FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', format('No action item #%s in this workspace.', id),
            jsonb_build_object('id', id), 'See brain.pending_action_items(session).');
    END IF;
    IF response IS NULL OR response NOT IN ('will_execute', 'already_done', 'not_relevant') THEN
        PERFORM brain._raise('BR009', 'A response is will_execute, already_done or not_relevant.',
            jsonb_build_object('field', 'response'), 'Say whether you will do it, did it, or it does not apply.');
    END IF;
    IF item.status = 'acknowledged' THEN
        PERFORM brain._raise('BR011', format('Action item #%s was acknowledged by session #%s (%s).', id,
                                             item.acknowledged_by, item.response),
            jsonb_build_object('id', id, 'acknowledged_by', item.acknowledged_by, 'response', item.response),
            'Nothing to do.');
    END IF;
    UPDATE brain.action_item a
    SET status = 'acknowledged', acknowledged_by = s.session_id,
        acknowledged_at = pg_catalog.now(),
        response = acknowledge_action_item.response, response_note = nullif(brain.trim_space(note), '')
    WHERE a.workspace_id = item.workspace_id AND a.action_item_id = item.action_item_id;
    PERFORM brain._touch_session(s.session_id);
    RETURN jsonb_build_object('id', id, 'response', response, 'still_pending',
                              (SELECT count(*) FROM brain.pending_action_items(s.session_id)));
END
$$;
COMMENT ON FUNCTION brain.acknowledge_action_item IS
    'Answers an action item (will_execute, already_done, not_relevant), which releases the writes it blocked.';
