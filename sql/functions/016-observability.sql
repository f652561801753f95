-- Observability in SQL: tool events, metrics, recent errors, health.

CREATE OR REPLACE FUNCTION brain.record_tool_event(
    tool text,
    started_at timestamptz,
    latency_ms double precision,
    ok boolean,
    channel text DEFAULT 'sql',
    session bigint DEFAULT NULL,
    error_code text DEFAULT NULL,
    error text DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_id bigint;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('tool', tool, 'channel', channel, 'error_code', error_code));
    IF tool IS NULL OR brain.trim_space(tool) = '' OR channel IS NULL OR channel NOT IN ('mcp', 'cli', 'sql') THEN
        PERFORM brain._raise('BR009', 'A tool event names its tool and a channel (mcp, cli or sql).',
            jsonb_build_object('fields', jsonb_build_array('tool', 'channel'),
                               'allowed', jsonb_build_object('channel', jsonb_build_array('mcp', 'cli', 'sql'))),
            'Example: record_tool_event(''search'', now(), 3.2, true, ''mcp'').');
    END IF;
    IF latency_ms IS NULL OR NOT (latency_ms > '-Infinity' AND latency_ms < 'Infinity') THEN
        PERFORM brain._raise('BR009', 'latency_ms is a finite number of milliseconds.',
            jsonb_build_object('field', 'latency_ms'), 'Measure the call and give its duration, e.g. 3.2.');
    END IF;
    IF ok IS NULL THEN
        PERFORM brain._raise('BR009', 'ok is true or false: whether the call succeeded.',
            jsonb_build_object('field', 'ok'), 'Give true for a call that returned, false for one that raised.');
    END IF;
    INSERT INTO brain.tool_event (workspace_id, tool, channel, session_id, started_at, latency_ms, ok, error_code, error)
    -- (a call is not dated after the server's clock: it would stay in every window)
    VALUES (brain.current_workspace(), tool, channel, session,
            least(coalesce(started_at, pg_catalog.now()), pg_catalog.now()), greatest(latency_ms, 0), ok, error_code,
            -- an error message never carries a secret into the table, whoever wrote it
            left(brain.redact_secrets(error), 2000))
    RETURNING event_id INTO new_id;
    IF session IS NOT NULL THEN
        PERFORM brain._get_session(session);
        PERFORM brain._touch_session(session);  -- a call is a heartbeat
    END IF;
    RETURN new_id;
END
$$;
COMMENT ON FUNCTION brain.record_tool_event IS
    'Records one tool call or CLI command (tool, channel, session, start, latency, outcome, error code) and refreshes the session''s heartbeat. latency_ms is finite (BR009 for NaN or infinity; a negative one is 0); a start after the server''s clock is stored as the server''s time.';

CREATE OR REPLACE FUNCTION brain.metrics(window_size interval DEFAULT '24 hours', now timestamptz DEFAULT NULL)
RETURNS TABLE (tool text, calls bigint, errors bigint, error_rate double precision, avg_ms double precision,
               p99_ms double precision, last_call timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT e.tool, count(*), count(*) FILTER (WHERE NOT e.ok),
           round((count(*) FILTER (WHERE NOT e.ok))::numeric / count(*), 4)::double precision,
           -- (a latency stored before they were checked may be NaN or infinite: left out)
           round((avg(e.latency_ms) FILTER (WHERE e.latency_ms < 'Infinity'))::numeric, 3)::double precision,
           round((percentile_cont(0.99) WITHIN GROUP (ORDER BY e.latency_ms)
                  FILTER (WHERE e.latency_ms < 'Infinity'))::numeric, 3)::double precision,
           max(e.started_at)
    FROM brain.tool_event e
    WHERE e.workspace_id = brain.current_workspace()
      AND e.started_at > coalesce(metrics.now, pg_catalog.now()) - window_size
      AND e.started_at <= coalesce(metrics.now, pg_catalog.now())
    GROUP BY e.tool
    ORDER BY count(*) DESC, e.tool
$$;
COMMENT ON FUNCTION brain.metrics IS 'Per tool over a window (24 h): calls, errors, error rate, average and p99 latency in ms.';

CREATE OR REPLACE FUNCTION brain.recent_errors(max_results integer DEFAULT 20)
RETURNS TABLE (event_id bigint, tool text, channel text, session_id bigint, started_at timestamptz,
               error_code text, error text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT e.event_id, e.tool, e.channel, e.session_id, e.started_at, e.error_code, e.error
    FROM brain.tool_event e
    WHERE e.workspace_id = brain.current_workspace() AND NOT e.ok
    ORDER BY e.started_at DESC, e.event_id DESC
    LIMIT greatest(1, least(max_results, 1000))
$$;
COMMENT ON FUNCTION brain.recent_errors IS 'The latest failed tool calls and commands, newest first.';

CREATE OR REPLACE FUNCTION brain.health()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH m AS (SELECT * FROM brain.memory WHERE workspace_id = brain.current_workspace()),
    space AS (SELECT * FROM brain.active_embedding_space())
    SELECT jsonb_build_object(
        'database', jsonb_build_object(
            'version', current_setting('server_version'),
            'started_at', pg_postmaster_start_time(),
            'uptime_s', round(extract(epoch FROM clock_timestamp() - pg_postmaster_start_time())),
            'name', current_database()),
        'extensions', (SELECT jsonb_object_agg(extname, extversion) FROM pg_extension
                       WHERE extname IN ('vector', 'pg_trgm')),
        'schema', jsonb_build_object(
            'migrations', (SELECT count(*) FROM brain.migration),
            'latest', (SELECT max(name) FROM brain.migration)),
        'workspace', brain.current_workspace(),
        'memories', coalesce((SELECT jsonb_object_agg(kind, states) FROM (
                        SELECT kind, jsonb_object_agg(state, n) AS states
                        FROM (SELECT kind, state, count(*) AS n FROM m GROUP BY kind, state) AS x
                        GROUP BY kind) AS y), '{}'),
        'active_space', (SELECT CASE WHEN space.space_id IS NOT NULL
                                     THEN space.provider || ':' || space.model END FROM space),
        'pending_embeddings', brain._pending_embedding_count(),
        'embedding_failures', brain._embedding_failures(),
        'active_sessions', (SELECT count(*) FROM brain.session s
                            WHERE s.workspace_id = brain.current_workspace() AND s.status = 'active'),
        'last_maintenance', (SELECT max(ran_at) FROM brain.maintenance_run r
                             WHERE r.workspace_id = brain.current_workspace()),
        -- what the installer's revokes (docs/security.md) left open to every role: with
        -- the languages, a client runs statements of its own inside functions, whose text
        -- the write guard reads in the call stack
        'exposed', to_jsonb(ARRAY(
            SELECT x.what FROM (VALUES
                ('USAGE ON LANGUAGE plpgsql', has_language_privilege('public', 'plpgsql', 'USAGE')),
                ('USAGE ON LANGUAGE sql', has_language_privilege('public', 'sql', 'USAGE')),
                ('CREATE ON SCHEMA public', coalesce(has_schema_privilege('public', 'public', 'CREATE'), false))
            ) AS x(what, open) WHERE x.open)))
$$;
COMMENT ON FUNCTION brain.health IS
    'What the database knows of pybrain''s health: server version and uptime, pgvector and pg_trgm versions, schema, memories per kind and state, the active space, its pending embeddings and the texts its embedder refused (retrying, parked), sessions, last maintenance, and what the installer''s revokes left open to every role (exposed: USAGE ON LANGUAGE plpgsql or sql, CREATE ON SCHEMA public; docs/security.md). The MCP server and CLI add embedder reachability and their own uptime.';
