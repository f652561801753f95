-- What the dashboard (`brain ui`) shows: lists of memories by kind, project,
-- state and tier; a memory's page; the audit trail; sessions, handoffs and
-- action items; tool calls over time; facts by decay; storage and index state.
-- All reads, under row-level security, callable from psql as well. The
-- session triggers at the end wake listeners on the workspace's own channel
-- (brain.sessions_channel()).

-- One page of memories, newest first, by kind, project (exact), state, tier
-- and flag; before_id continues a page.
CREATE OR REPLACE FUNCTION brain.list_memories(
    kinds text[] DEFAULT NULL,
    projects text[] DEFAULT NULL,
    states text[] DEFAULT NULL,
    tiers text[] DEFAULT NULL,
    only_flagged boolean DEFAULT false,
    before_id bigint DEFAULT NULL,
    max_results integer DEFAULT 50,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (id bigint, kind text, category text, origin text, project text, headline text, preview text,
               state text, tier text, decay double precision, pinned boolean, flagged boolean,
               upvotes integer, downvotes integer, created_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := coalesce(list_memories.now, pg_catalog.now());
BEGIN
    PERFORM brain._check_count('max_results', max_results, 500, 'Ask for 1 to 500 memories a page.');
    IF tiers IS NOT NULL AND NOT tiers <@ ARRAY['hot', 'warm', 'cold', 'archive'] THEN
        PERFORM brain._raise('BR009', 'Unknown tier.', jsonb_build_object('field', 'tiers', 'allowed', jsonb_build_array('hot', 'warm', 'cold', 'archive')),
            'A tier is hot, warm, cold or archive.');
    END IF;
    IF states IS NOT NULL AND NOT states <@ ARRAY['active', 'superseded', 'archived', 'tombstoned'] THEN
        PERFORM brain._raise('BR009', 'Unknown state.', jsonb_build_object('field', 'states', 'allowed', jsonb_build_array('active', 'superseded', 'archived', 'tombstoned')),
            'A state is active, superseded, archived or tombstoned.');
    END IF;
    IF kinds IS NOT NULL AND NOT kinds <@ ARRAY['rule', 'fact', 'incident', 'task', 'trajectory'] THEN
        PERFORM brain._raise('BR001', 'Unknown kind.', jsonb_build_object('field', 'kinds', 'allowed', jsonb_build_array('rule', 'fact', 'incident', 'task', 'trajectory')),
            'A kind is rule, fact, incident, task or trajectory.');
    END IF;
    RETURN QUERY
    SELECT x.memory_id, x.kind, x.category, x.origin, x.project, x.headline, brain.preview(x.body), x.state,
           x.t, x.d, x.pinned, x.f, x.upvotes, x.downvotes, x.created_at
    FROM (
        SELECT m.*, fc.halflife_days,
               brain.memory_tier(m.state, m.kind, m.pinned, m.dormant_after, m.expires_at,
                                 greatest(m.created_at, m.last_accessed, m.last_confirmed_at), clock) AS t,
               CASE WHEN fc.memory_id IS NOT NULL
                    THEN brain.decay_score(greatest(m.created_at, m.last_accessed, m.last_confirmed_at),
                                           fc.halflife_days, clock) END AS d,
               brain._is_flagged(m.flag_reasons, m.flag_confirmed_at) AS f
        FROM brain.memory m
        LEFT JOIN brain.fact fc ON fc.workspace_id = m.workspace_id AND fc.memory_id = m.memory_id
        WHERE m.workspace_id = brain.current_workspace()
          AND (kinds IS NULL OR m.kind = ANY (kinds))
          AND (projects IS NULL OR m.project = ANY (projects))
          AND (states IS NULL OR m.state = ANY (states))
          AND (before_id IS NULL OR m.memory_id < before_id)
    ) AS x
    WHERE (tiers IS NULL OR x.t = ANY (tiers))
      AND (NOT only_flagged OR x.f)
    ORDER BY x.memory_id DESC
    LIMIT max_results;
END
$$;
COMMENT ON FUNCTION brain.list_memories IS
    'A page of memories, newest first, filtered by kinds, projects (exact), states, tiers (hot, warm, cold, archive) and, with only_flagged, the memories flagged as possible instructions and not confirmed; with each one''s tier and a fact''s decay score; before_id continues from the last id of a page.';

-- Everything a person looks at on one memory's page, without counting it as
-- a use: recall bumps access (and so decay), looking at it does not.
CREATE OR REPLACE FUNCTION brain.memory_page(id bigint, now timestamptz DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := coalesce(memory_page.now, pg_catalog.now());
    doc jsonb := brain.memory_json(memory_page.id);
    m brain.memory;
    halflife double precision;
BEGIN
    IF doc IS NULL THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', memory_page.id),
            jsonb_build_object('id', memory_page.id), 'Search or list the memories to find its id.');
    END IF;
    SELECT * INTO m FROM brain.memory x
    WHERE x.workspace_id = brain.current_workspace() AND x.memory_id = memory_page.id;
    SELECT f.halflife_days INTO halflife FROM brain.fact f
    WHERE f.workspace_id = m.workspace_id AND f.memory_id = m.memory_id;
    RETURN doc || jsonb_build_object(
        'tier', brain.memory_tier(m.state, m.kind, m.pinned, m.dormant_after, m.expires_at,
                                  greatest(m.created_at, m.last_accessed, m.last_confirmed_at), clock),
        'decay', CASE WHEN halflife IS NOT NULL
                      THEN brain.decay_score(greatest(m.created_at, m.last_accessed, m.last_confirmed_at),
                                             halflife, clock) END,
        'dormant', m.dormant_after IS NOT NULL AND m.dormant_after <= clock,
        'flagged', brain._is_flagged(m.flag_reasons, m.flag_confirmed_at),
        'current_id', brain.current_version(m.memory_id),
        'history', brain.history(m.memory_id),
        'access', brain.workspace_access());
END
$$;
COMMENT ON FUNCTION brain.memory_page IS
    'A memory''s page: its document (brain.memory_json, with annotations and ratings), tier, decay, whether it is dormant or flagged, the end of its supersede chain, its history (chain with reasons, and audit events), and the caller''s access; reading it is not a use (no access bump).';

-- The audit trail of the workspace, or of one memory, newest first.
CREATE OR REPLACE FUNCTION brain.audit_trail(
    id bigint DEFAULT NULL,
    actors text[] DEFAULT NULL,
    actions text[] DEFAULT NULL,
    before_id bigint DEFAULT NULL,
    max_results integer DEFAULT 100
)
RETURNS TABLE (audit_id bigint, memory_id bigint, kind text, headline text, action text, actor text,
               db_role text, at timestamptz, detail jsonb)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._check_count('max_results', max_results, 1000, 'Ask for 1 to 1000 events a page.');
    RETURN QUERY
    SELECT a.audit_id, a.memory_id, m.kind, m.headline, a.action, a.actor, a.db_role, a.at, a.detail
    FROM brain.audit a
    LEFT JOIN brain.memory m ON m.workspace_id = a.workspace_id AND m.memory_id = a.memory_id
    WHERE a.workspace_id = brain.current_workspace()
      AND (audit_trail.id IS NULL OR a.memory_id = audit_trail.id)
      AND (actors IS NULL OR a.actor = ANY (actors))
      AND (actions IS NULL OR a.action = ANY (actions))
      AND (before_id IS NULL OR a.audit_id < before_id)
    ORDER BY a.audit_id DESC
    LIMIT max_results;
END
$$;
COMMENT ON FUNCTION brain.audit_trail IS
    'The audit trail of the workspace, or of one memory (id), newest first, filtered by actors and actions; before_id continues from the last audit_id of a page.';

-- The values the dashboard's filters offer.
CREATE OR REPLACE FUNCTION brain.dashboard_facets()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'projects', coalesce((SELECT jsonb_agg(p ORDER BY p) FROM (
                        SELECT DISTINCT m.project AS p FROM brain.memory m
                        WHERE m.workspace_id = brain.current_workspace()) x), '[]'),
        'actors', coalesce((SELECT jsonb_agg(a ORDER BY a) FROM (
                      SELECT DISTINCT au.actor AS a FROM brain.audit au
                      WHERE au.workspace_id = brain.current_workspace()) x), '[]'),
        'actions', coalesce((SELECT jsonb_agg(a ORDER BY a) FROM (
                       SELECT DISTINCT au.action AS a FROM brain.audit au
                       WHERE au.workspace_id = brain.current_workspace()) x), '[]'),
        'access', brain.workspace_access())
$$;
COMMENT ON FUNCTION brain.dashboard_facets IS
    'The projects, audit actors and audit actions of the workspace (the dashboard''s filter choices), and the caller''s access (read, write or admin).';

-- Sessions, live ones first, then the most recent; siblings are the other
-- active sessions of the same project.
CREATE OR REPLACE FUNCTION brain.list_sessions(
    include_ended boolean DEFAULT true,
    projects text[] DEFAULT NULL,
    max_results integer DEFAULT 50
)
RETURNS TABLE (session_id bigint, source text, project text, cwd text, host text, pid integer,
               current_task text, status text, started_at timestamptz, heartbeat_at timestamptz,
               ended_at timestamptz, end_reason text, handoff text, siblings bigint[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._check_count('max_results', max_results, 500, 'Ask for 1 to 500 sessions.');
    RETURN QUERY
    SELECT s.session_id, s.source, s.project, s.cwd, s.host, s.pid, s.current_task, s.status, s.started_at,
           s.heartbeat_at, s.ended_at, s.end_reason, s.handoff,
           coalesce((SELECT array_agg(o.session_id ORDER BY o.session_id) FROM brain.session o
                     WHERE o.workspace_id = s.workspace_id AND o.project = s.project
                       AND o.status = 'active' AND o.session_id <> s.session_id), '{}')
    FROM brain.session s
    WHERE s.workspace_id = brain.current_workspace()
      AND (include_ended OR s.status = 'active')
      AND (projects IS NULL OR s.project = ANY (projects))
    ORDER BY (s.status = 'active') DESC, coalesce(s.ended_at, s.heartbeat_at) DESC, s.session_id DESC
    LIMIT max_results;
END
$$;
COMMENT ON FUNCTION brain.list_sessions IS
    'Sessions of the workspace, active ones first, then the most recent, each with its handoff and the ids of its siblings (the other active sessions of its project).';

-- Handoffs, newest first: those sessions left when they ended, and those kept
-- for a source whose session had already ended or was not found.
CREATE OR REPLACE FUNCTION brain.recent_handoffs(projects text[] DEFAULT NULL, max_results integer DEFAULT 20)
RETURNS TABLE (session_id bigint, source text, project text, text text, created_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.session_id, x.source, x.project, x.text, x.created_at FROM (
        SELECT s.session_id, s.source, s.project, s.handoff AS text, s.ended_at AS created_at
        FROM brain.session s
        WHERE s.workspace_id = brain.current_workspace() AND s.handoff IS NOT NULL
        UNION ALL
        SELECT h.session_id, h.source, h.project, h.text, h.created_at
        FROM brain.handoff h
        WHERE h.workspace_id = brain.current_workspace() AND h.text IS NOT NULL
    ) AS x
    WHERE projects IS NULL OR x.project = ANY (projects)
    ORDER BY x.created_at DESC NULLS LAST, x.session_id DESC NULLS LAST
    LIMIT greatest(1, least(max_results, 200))
$$;
COMMENT ON FUNCTION brain.recent_handoffs IS
    'The handoffs sessions left for the next one, newest first (at most 200): those of ended sessions and those kept for a source whose session had already ended.';

-- Action items of the workspace by status (pending by default), newest first.
CREATE OR REPLACE FUNCTION brain.list_action_items(statuses text[] DEFAULT '{pending}', max_results integer DEFAULT 50)
RETURNS TABLE (id bigint, text text, project text, all_projects boolean, for_source text, created_by bigint,
               created_at timestamptz, status text, acknowledged_by bigint, acknowledged_at timestamptz,
               response text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF statuses IS NOT NULL AND NOT statuses <@ ARRAY['pending', 'acknowledged'] THEN
        PERFORM brain._raise('BR009', 'Unknown action item status.', jsonb_build_object('field', 'statuses', 'allowed', jsonb_build_array('pending', 'acknowledged')),
            'Ask for pending or acknowledged items, or NULL for all.');
    END IF;
    RETURN QUERY
    SELECT a.action_item_id, a.text, a.project, a.all_projects, a.for_source, a.created_by, a.created_at,
           a.status, a.acknowledged_by, a.acknowledged_at, a.response
    FROM brain.action_item a
    WHERE a.workspace_id = brain.current_workspace()
      AND (statuses IS NULL OR a.status = ANY (statuses))
    ORDER BY a.created_at DESC, a.action_item_id DESC
    LIMIT greatest(1, least(max_results, 500));
END
$$;
COMMENT ON FUNCTION brain.list_action_items IS
    'Action items of the workspace with the given statuses (pending by default; NULL for all), newest first.';

-- Tool calls over time: one row per bucket, empty buckets included.
CREATE OR REPLACE FUNCTION brain.metrics_series(
    window_size interval DEFAULT '24 hours',
    buckets integer DEFAULT 24,
    tool text DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (bucket_start timestamptz, calls bigint, errors bigint, error_rate double precision,
               p50_ms double precision, p95_ms double precision, p99_ms double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := coalesce(metrics_series.now, pg_catalog.now());
    width interval;
BEGIN
    PERFORM brain._check_count('buckets', buckets, 500, 'Ask for 1 to 500 buckets.');
    IF window_size IS NULL OR window_size <= interval '0' THEN
        PERFORM brain._raise('BR009', 'The window must be a positive interval.',
            jsonb_build_object('window_size', window_size), 'For example ''24 hours'' or ''7 days''.');
    END IF;
    width := window_size / buckets;
    RETURN QUERY
    WITH b AS (
        SELECT clock - window_size + width * i AS lo, clock - window_size + width * (i + 1) AS hi
        FROM generate_series(0, buckets - 1) AS i
    )
    SELECT b.lo, count(e.event_id), count(e.event_id) FILTER (WHERE NOT e.ok),
           CASE WHEN count(e.event_id) > 0
                THEN round((count(e.event_id) FILTER (WHERE NOT e.ok))::numeric / count(e.event_id), 4)::double precision
           END,
           round((percentile_cont(0.50) WITHIN GROUP (ORDER BY e.latency_ms)
                  FILTER (WHERE e.latency_ms < 'Infinity'))::numeric, 3)::double precision,
           round((percentile_cont(0.95) WITHIN GROUP (ORDER BY e.latency_ms)
                  FILTER (WHERE e.latency_ms < 'Infinity'))::numeric, 3)::double precision,
           round((percentile_cont(0.99) WITHIN GROUP (ORDER BY e.latency_ms)
                  FILTER (WHERE e.latency_ms < 'Infinity'))::numeric, 3)::double precision
    FROM b
    LEFT JOIN brain.tool_event e ON e.workspace_id = brain.current_workspace()
                                AND e.started_at > b.lo AND e.started_at <= b.hi
                                AND (metrics_series.tool IS NULL OR e.tool = metrics_series.tool)
    GROUP BY b.lo
    ORDER BY b.lo;
END
$$;
COMMENT ON FUNCTION brain.metrics_series IS
    'Tool calls over a window in equal buckets (oldest first, empty ones included): calls, errors, error rate and latency percentiles (p50, p95, p99), of one tool or all.';

-- Active facts by decay score, lowest first: which are dormant and which
-- will be within the given time.
CREATE OR REPLACE FUNCTION brain.decay_outlook(
    within interval DEFAULT '7 days',
    projects text[] DEFAULT NULL,
    max_results integer DEFAULT 200,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (id bigint, project text, headline text, decay double precision, halflife_days real,
               last_touch timestamptz, dormant_after timestamptz, dormant boolean, dormant_soon boolean,
               pinned boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.project, m.headline,
           brain.decay_score(greatest(m.created_at, m.last_accessed, m.last_confirmed_at), f.halflife_days,
                             coalesce(decay_outlook.now, pg_catalog.now())),
           f.halflife_days, greatest(m.created_at, m.last_accessed, m.last_confirmed_at), m.dormant_after,
           m.dormant_after IS NOT NULL AND m.dormant_after <= coalesce(decay_outlook.now, pg_catalog.now()),
           m.dormant_after IS NOT NULL AND m.dormant_after > coalesce(decay_outlook.now, pg_catalog.now())
               AND m.dormant_after <= coalesce(decay_outlook.now, pg_catalog.now()) + within,
           m.pinned
    FROM brain.memory m
    JOIN brain.fact f ON f.workspace_id = m.workspace_id AND f.memory_id = m.memory_id
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND (projects IS NULL OR m.project = ANY (projects))
    ORDER BY 4, m.memory_id
    LIMIT greatest(1, least(max_results, 1000))
$$;
COMMENT ON FUNCTION brain.decay_outlook IS
    'Active facts by decay score, lowest first: each one''s score, half-life, last touch, when it goes (or went) dormant, and whether it will within the given interval; the dormant threshold is the setting fact_dormant_threshold.';

-- Disk use and the state of the vector indexes: the tables' sizes (all
-- workspaces together), and the vector indexes of the caller's own spaces. As
-- the owner: the size functions are not PUBLIC's (brain._hide_index_sizes), and
-- an index's size is its space's, so its workspace's, vector count.
CREATE OR REPLACE FUNCTION brain.storage_state()
RETURNS jsonb
LANGUAGE sql STABLE
SECURITY DEFINER  -- sizes, for the caller's own workspace's vector indexes only
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'database_bytes', pg_database_size(current_database()),
        'tables', coalesce((SELECT jsonb_agg(jsonb_build_object(
                      'name', c.relname, 'bytes', pg_total_relation_size(c.oid),
                      'index_bytes', pg_indexes_size(c.oid)) ORDER BY pg_total_relation_size(c.oid) DESC)
                  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'p')), '[]'),
        'vector_indexes', coalesce((SELECT jsonb_agg(jsonb_build_object(
                      'name', c.relname, 'bytes', pg_relation_size(c.oid),
                      'valid', i.indisvalid, 'ready', i.indisready) ORDER BY c.relname)
                  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                  JOIN pg_am am ON am.oid = c.relam
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = 'brain' AND am.amname IN ('hnsw', 'ivfflat')
                    AND EXISTS (SELECT FROM brain.embedding_space s
                                WHERE s.workspace_id = brain.current_workspace()
                                  AND (c.relname IN ('embedding_hnsw_' || s.space_id, 'embedding_patterns_' || s.space_id)
                                       OR c.relname LIKE 'embedding\_hnsw\_' || s.space_id || '\_%'))), '[]'),
        'unindexed_vectors', (SELECT count(*) FROM brain.active_embedding_space() AS s,
                                                   brain._waiting_vectors(s) AS w
                              WHERE s.space_id IS NOT NULL))
$$;
COMMENT ON FUNCTION brain.storage_state IS
    'Disk use of the database and of each table of schema brain (indexes included, all workspaces together), the vector indexes of the current workspace''s spaces with their size and whether they are valid, and the vectors waiting for brain.index_vectors.';

-- A wake-up when a session starts, ends or changes task, a handoff is left,
-- or an action item is raised or acknowledged: the dashboard's live view
-- listens. Each workspace has its own channel (migration 021), whose name
-- only its members learn (brain.sessions_channel()); the payload is empty.
-- Heartbeats alone do not wake it.
CREATE OR REPLACE FUNCTION brain._sessions_channel(ws bigint)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER  -- reads brain.workspace_channel, which application roles cannot; the owner's alone
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
BEGIN
    SELECT c.channel INTO name FROM brain.workspace_channel c WHERE c.workspace_id = ws;
    IF name IS NULL THEN
        -- a workspace made after migration 021
        INSERT INTO brain.workspace_channel AS c (workspace_id, channel)
        VALUES (ws, 'brain_sessions_' || replace(gen_random_uuid()::text, '-', ''))
        ON CONFLICT (workspace_id) DO UPDATE SET channel = c.channel
        RETURNING c.channel INTO name;
    END IF;
    RETURN name;
END
$$;

-- The key of an advisory lock that guards a workspace's work (its maintenance,
-- its switch of embedding space, its lexeme analysis, a space's indexer):
-- drawn from the workspace's channel (128 random bits) and what it guards, so
-- that a role can compute it for its own workspace only. Keyed by the
-- workspace's id, any client could take another workspace's lock and hold it
-- in an idle transaction: that workspace's maintenance waited to its timeout.
CREATE OR REPLACE FUNCTION brain._lock_key(ws bigint, what text)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER  -- reads brain.workspace_channel, for the caller's own workspace only
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ws IS DISTINCT FROM brain.current_workspace() AND NOT brain._is_owner() THEN
        PERFORM brain._raise('BR020', 'A lock key is for the current workspace only.',
            jsonb_build_object('workspace', ws), NULL);
    END IF;
    RETURN hashtextextended(brain._sessions_channel(ws) || '/' || what, 0);
END
$$;

-- PL/pgSQL, as every public function that may write (the write guard trusts
-- only frames that name their schema): the first call makes the channel.
CREATE OR REPLACE FUNCTION brain.sessions_channel()
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER  -- the channel of the caller's own workspace, after the membership check
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain._sessions_channel(brain.current_workspace());
END
$$;
COMMENT ON FUNCTION brain.sessions_channel IS
    'The LISTEN/NOTIFY channel of the current workspace (members only): notified, with an empty payload, when a session starts, ends or changes task, a handoff is left, or an action item is raised or acknowledged. Its name is random, so no other workspace can listen to it.';

CREATE OR REPLACE FUNCTION brain._notify_sessions()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER  -- reads the workspace's channel
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_notify(brain._sessions_channel(NEW.workspace_id), '');
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER session_notify AFTER INSERT ON brain.session
    FOR EACH ROW EXECUTE FUNCTION brain._notify_sessions();
CREATE OR REPLACE TRIGGER session_change_notify AFTER UPDATE ON brain.session
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       OR OLD.current_task IS DISTINCT FROM NEW.current_task
                       OR OLD.handoff IS DISTINCT FROM NEW.handoff)
    EXECUTE FUNCTION brain._notify_sessions();
CREATE OR REPLACE TRIGGER handoff_notify AFTER INSERT ON brain.handoff
    FOR EACH ROW EXECUTE FUNCTION brain._notify_sessions();
CREATE OR REPLACE TRIGGER action_item_notify AFTER INSERT OR UPDATE OF status ON brain.action_item
    FOR EACH ROW EXECUTE FUNCTION brain._notify_sessions();
