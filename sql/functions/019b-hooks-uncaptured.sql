-- Sessions a capture hook did not finish: listed for the next session of the
-- seat, captured then, or left by a hook whose time ran out.

-- Sessions a capture hook never ended: the client crashed, was killed, or its
-- hook failed (no PreCompact, no SessionEnd), so the turns of its transcript
-- were never stored. The next session of the seat, in any harness (they share
-- a project), captures them while the transcript is still on disk
-- (brain.capture_ended_session), each under its own source (session_source).
DROP FUNCTION IF EXISTS brain.uncaptured_sessions(text, text, text, text, integer, timestamptz);
CREATE OR REPLACE FUNCTION brain.uncaptured_sessions(
    source text,
    project text DEFAULT '',
    cwd text DEFAULT NULL,
    host text DEFAULT NULL,
    max_results integer DEFAULT 3,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (session_id bigint, session_source text, client_session text, transcript text, end_reason text,
               started_at timestamptz, ended_at timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    -- Each is handed out twice at most (client_info.capture_attempts): a
    -- transcript too long to capture within a hook's deadline is not tried
    -- at every start; one whose capture was left part-done (brain.leave_capture:
    -- its turns are stored in batches, so every try stores more) ten times.
    RETURN QUERY
    WITH claimed AS (
        UPDATE brain.session s
        SET client_info = s.client_info || jsonb_build_object(
                'capture_attempts', coalesce((s.client_info->>'capture_attempts')::integer, 0) + 1)
        WHERE s.workspace_id = brain.current_workspace() AND s.session_id IN (
            SELECT x.session_id FROM brain.session x
            -- (of any source: the caller's, `source`, is not a filter)
            WHERE x.workspace_id = brain.current_workspace()
              AND x.project = coalesce(uncaptured_sessions.project, '')
              -- a project's seat is the project (a repository: any of its folders);
              -- a global session's is its folder
              AND (coalesce(uncaptured_sessions.project, '') <> ''
                   OR x.cwd IS NOT DISTINCT FROM uncaptured_sessions.cwd)
              AND x.host IS NOT DISTINCT FROM uncaptured_sessions.host
              -- ended otherwise than by a capture hook (ended, compacted) or by hand,
              -- or by a capture hook that had no time to store every turn (brain.leave_capture)
              AND x.status = 'ended' AND (x.end_reason NOT IN ('ended', 'compacted') OR x.client_info ? 'capture_left')
              AND jsonb_typeof(x.client_info->'transcript') = 'string'
              AND jsonb_typeof(x.client_info->'client_session') = 'string'
              AND NOT x.client_info ? 'captured_at' AND NOT x.client_info ? 'imported_from'
              -- (a capture left part-done makes progress at each try: up to 10)
              AND coalesce((x.client_info->>'capture_attempts')::integer, 0)
                  < CASE WHEN x.client_info ? 'capture_left' THEN 10 ELSE 2 END
              AND x.started_at > brain._clock(uncaptured_sessions.now) - interval '7 days'
            ORDER BY x.started_at DESC, x.session_id DESC
            LIMIT greatest(coalesce(max_results, 3), 0))
        RETURNING s.session_id, s.source, s.client_info->>'client_session' AS client_session,
                  s.client_info->>'transcript' AS transcript, s.end_reason, s.started_at, s.ended_at)
    SELECT c.session_id, c.source, c.client_session, c.transcript, c.end_reason, c.started_at, c.ended_at
    FROM claimed AS c
    ORDER BY c.started_at DESC, c.session_id DESC;
END
$$;
COMMENT ON FUNCTION brain.uncaptured_sessions IS
    'Hands out the sessions of a seat (project and host; and the folder, cwd, of a session without a project; of any source, session_source saying which: the harnesses share a project) that ended without a capture hook (rebooted, heartbeat expired, process gone: the client crashed or its hook failed), or whose capture hook left turns it had no time to store (brain.leave_capture), and whose transcript (client_info.transcript, client_info.client_session, as the hooks boot them) was never captured: the newest first, at most max_results (3), started in the last 7 days, each twice at most (client_info.capture_attempts; a capture left part-done ten times). The next session start captures them (brain.capture_ended_session).';

CREATE OR REPLACE FUNCTION brain.capture_ended_session(
    session bigint,
    turns jsonb,
    client text DEFAULT 'the agent',
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session := brain._get_session(session);
    clock timestamptz := brain._clock(capture_ended_session.now);
    handoff text;
    result jsonb;
    last_turn timestamptz;
BEGIN
    IF s.status <> 'ended' THEN
        PERFORM brain._raise('BR011', format('Session #%s is still active: its own hooks capture it.', s.session_id),
            jsonb_build_object('session', s.session_id), 'brain.uncaptured_sessions lists the sessions to capture.');
    END IF;
    IF s.client_info ? 'capture_left' THEN
        -- Its capture hook wrote the handoff from every turn and stored what it had time
        -- for; the rest is stored now: only the mark changes.
        UPDATE brain.session x SET client_info = (x.client_info - 'capture_left') || jsonb_build_object('captured_at', clock)
        WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
        RETURN jsonb_build_object('session', s.session_id, 'ended', false, 'handoff', NULL, 'stored', false);
    END IF;
    -- Its last sign of life is its last turn, when the transcript says it lived past
    -- its last hook: handoffs come in the order sessions ended (brain._handoff_time).
    last_turn := brain._last_turn_at(turns);
    IF last_turn > s.heartbeat_at THEN
        UPDATE brain.session x SET heartbeat_at = least(last_turn, x.ended_at)
        WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    END IF;
    handoff := brain.transcript_handoff(turns, format('the next session''s start (it had ended: %s)', s.end_reason),
                                        client, s.client_info->>'client_session');
    IF handoff IS NOT NULL THEN
        -- a handoff for the next sessions (brain.end_session keeps it, stored apart, once)
        result := brain.end_session(s.session_id, handoff, brain.transcript_snapshot(turns), clock);
    ELSE
        result := jsonb_build_object('session', s.session_id, 'ended', false);
    END IF;
    UPDATE brain.session x SET client_info = x.client_info || jsonb_build_object('captured_at', clock)
    WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    RETURN result || jsonb_build_object('handoff', handoff,
                                        'stored', handoff IS NOT NULL AND NOT coalesce((result->>'unchanged')::boolean, false));
END
$$;
COMMENT ON FUNCTION brain.capture_ended_session IS
    'After the turns of an uncaptured session''s transcript are observed (brain.uncaptured_sessions, brain.observe_transcript), writes the handoff from them (brain.transcript_handoff; none when there is nothing to hand off or the transcript is gone) for the next sessions of its project, and marks the session captured (client_info.captured_at), so that it is captured once. stored says whether a handoff was stored (the next boot shows it). BR011 for a session still active. A session whose capture hook left turns (brain.leave_capture) has its handoff already: it is only marked captured.';

CREATE OR REPLACE FUNCTION brain.leave_capture(
    session bigint,
    transcript text,
    client_session text,
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session := brain._get_session(session);
    clock timestamptz := brain._clock(leave_capture.now);
BEGIN
    IF s.status <> 'ended' THEN
        PERFORM brain._raise('BR011', format('Session #%s is still active: its own hooks capture it.', s.session_id),
            jsonb_build_object('session', s.session_id), 'End it first (brain.hand_off_transcript).');
    END IF;
    PERFORM brain._require_text(transcript, 'BR009', 'Name the transcript whose turns are left: its path.',
        'The transcript_path of the hook''s input.');
    PERFORM brain._require_text(client_session, 'BR009', 'Name the client session whose turns are left.',
        'The session_id of the hook''s input.');
    IF s.client_info ? 'client_session' AND s.client_info->>'client_session' IS DISTINCT FROM client_session THEN
        -- another client session's (the hook's own was never booted): not marked
        RETURN jsonb_build_object('session', s.session_id, 'capture_left', NULL);
    END IF;
    UPDATE brain.session x
    SET client_info = (x.client_info - 'captured_at')
        || jsonb_build_object('capture_left', clock, 'transcript', transcript, 'client_session', client_session)
    WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    RETURN jsonb_build_object('session', s.session_id, 'capture_left', clock);
END
$$;
COMMENT ON FUNCTION brain.leave_capture IS
    'What a capture hook (SessionEnd) calls when its time ran out before it stored every turn of its transcript: it has ended the session with the handoff written from all of them (brain.hand_off_transcript) and stored the first ones (brain.observe_transcript, in batches); the session is marked (client_info.capture_left, with the transcript''s path and client session), so that the next session start of its seat stores the rest (brain.uncaptured_sessions hands it out, up to ten times, each try storing more; brain.capture_ended_session then marks it captured without a second handoff). A session booted for another client session is not marked (capture_left NULL: the hook keeps its input for later instead). BR011 for a session still active.';
