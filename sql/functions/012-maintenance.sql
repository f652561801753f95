-- Maintenance: decay, archive, staleness and expiry in one idempotent run,
-- and the only way a memory is ever deleted: an explicit, audited prune. (A
-- run forgets the answers kept for request keys once they are old enough:
-- bookkeeping, not memory.)

CREATE OR REPLACE FUNCTION brain.maintain(now timestamptz DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    clock timestamptz := brain._clock(maintain.now);
    previous timestamptz;
    counts jsonb;
    n_dormant bigint;
    n_archived bigint := 0;
    n_stale bigint := 0;
    n_expired bigint := 0;
    r record;
    run bigint;
BEGIN
    -- One run at a time per workspace.
    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.maintain'));
    SELECT max(mr.ran_at) INTO previous FROM brain.maintenance_run mr
    WHERE mr.workspace_id = ws AND mr.ran_at <= clock;

    -- Facts: dormancy is computed (dormant_after); count those that crossed it since the last run.
    SELECT count(*) INTO n_dormant FROM brain.memory m
    WHERE m.workspace_id = ws AND m.state = 'active' AND m.kind = 'fact'
      AND m.dormant_after <= clock AND (previous IS NULL OR m.dormant_after > previous);

    -- Incidents untouched for incident_archive_days are archived.
    FOR r IN
        SELECT m.memory_id FROM brain.memory m
        WHERE m.workspace_id = ws AND m.state = 'active' AND m.kind = 'incident' AND NOT m.pinned
          AND greatest(m.created_at, m.last_accessed, m.last_confirmed_at)
              <= clock - make_interval(days => (brain.setting('incident_archive_days'))::integer)
        FOR UPDATE
    LOOP
        UPDATE brain.memory m SET state = 'archived', archived_at = clock, updated_at = pg_catalog.now()
        WHERE m.workspace_id = ws AND m.memory_id = r.memory_id;
        PERFORM brain._audit(r.memory_id, 'archive', 'maintenance',
            jsonb_build_object('reason', 'untouched for incident_archive_days'));
        n_archived := n_archived + 1;
    END LOOP;

    -- Open or blocked tasks idle for task_stale_days become stale.
    FOR r IN
        SELECT t.memory_id, t.status FROM brain.task t
        JOIN brain.memory m ON m.workspace_id = t.workspace_id AND m.memory_id = t.memory_id
        WHERE t.workspace_id = ws AND m.state = 'active' AND t.status IN ('open', 'blocked')
          AND greatest(m.updated_at, t.status_changed_at, m.last_accessed)
              <= clock - make_interval(days => (brain.setting('task_stale_days'))::integer)
        FOR UPDATE OF t
    LOOP
        UPDATE brain.task t SET status = 'stale', status_changed_at = clock
        WHERE t.workspace_id = ws AND t.memory_id = r.memory_id;
        PERFORM brain._audit(r.memory_id, 'update', 'maintenance',
            jsonb_build_object('from', r.status, 'to', 'stale', 'reason', 'idle for task_stale_days'));
        n_stale := n_stale + 1;
    END LOOP;

    -- Memories past their hard TTL are archived (search already hides them).
    FOR r IN
        SELECT m.memory_id FROM brain.memory m
        WHERE m.workspace_id = ws AND m.state = 'active' AND m.expires_at <= clock
        FOR UPDATE
    LOOP
        UPDATE brain.memory m SET state = 'archived', archived_at = clock, updated_at = pg_catalog.now()
        WHERE m.workspace_id = ws AND m.memory_id = r.memory_id;
        PERFORM brain._audit(r.memory_id, 'archive', 'maintenance', jsonb_build_object('reason', 'expired'));
        n_expired := n_expired + 1;
    END LOOP;

    counts := jsonb_build_object('facts_dormant', n_dormant, 'incidents_archived', n_archived,
                                 'tasks_stale', n_stale, 'expired', n_expired,
                                 -- sessions whose heartbeat expired
                                 'sessions_ended', brain._sweep_sessions(clock),
                                 -- the lexical leg's word frequencies, sampled again when due
                                 'lexemes_analyzed', brain._analyze_lexemes_if_due() IS NOT NULL,
                                 -- answers kept for request keys older than request_key_hours
                                 'request_keys_removed', brain._forget_request_keys(clock));
    INSERT INTO brain.maintenance_run (workspace_id, ran_at, counts) VALUES (ws, clock, counts)
    RETURNING run_id INTO run;
    RETURN counts || jsonb_build_object('run_id', run, 'ran_at', clock, 'previous_run', previous);
END
$$;
COMMENT ON FUNCTION brain.maintain IS
    'One maintenance pass at `now`: counts facts that turned dormant since the last run, archives incidents untouched for incident_archive_days (90), marks tasks idle for task_stale_days (14) stale, archives expired memories, ends sessions whose heartbeat is older than session_ttl_minutes, forgets the answers kept for request keys older than request_key_hours (24); samples the workspace''s word frequencies again when it changed by a fifth (brain.analyze_lexemes); records a maintenance_run. Running it again at the same `now` changes nothing.';

-- (a rate limit: by the server's clock only)
DROP FUNCTION IF EXISTS brain.maintain_if_due(timestamptz);
CREATE OR REPLACE FUNCTION brain.maintain_if_due()
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := pg_catalog.now();
    last_run timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(brain._lock_key(brain.current_workspace(), 'brain.maintain'));
    SELECT max(mr.ran_at) INTO last_run FROM brain.maintenance_run mr
    WHERE mr.workspace_id = brain.current_workspace() AND mr.ran_at <= clock;
    IF last_run > clock - make_interval(hours => (brain.setting('maintain_interval_hours'))::integer) THEN
        RETURN jsonb_build_object('ran', false, 'last_run', last_run,
            'next_due', last_run + make_interval(hours => (brain.setting('maintain_interval_hours'))::integer));
    END IF;
    RETURN brain.maintain(clock) || jsonb_build_object('ran', true);
END
$$;
COMMENT ON FUNCTION brain.maintain_if_due IS
    'brain.maintain, unless a run happened within maintain_interval_hours (24) by the server''s clock: cheap to call from every agent hook.';

CREATE OR REPLACE FUNCTION brain.prune(
    dry_run boolean DEFAULT true,
    older_than interval DEFAULT '30 days',
    max_rows integer DEFAULT 50,
    source text DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (id bigint, kind text, state text, headline text, left_at timestamptz, action text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    clock timestamptz := brain._clock(prune.now);
    r record;
BEGIN
    IF older_than IS NULL OR older_than < interval '1 day' THEN
        PERFORM brain._raise('BR009', 'prune keeps everything younger than a day: older_than is at least 1 day.',
            jsonb_build_object('older_than', older_than), 'The default is 30 days.');
    END IF;
    PERFORM brain._check_count('max_rows', max_rows, 10000, 'The default is 50.');
    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.maintain'));
    FOR r IN
        SELECT m.memory_id, m.kind, m.state, m.headline, coalesce(m.forgotten_at, m.archived_at) AS left_at
        FROM brain.memory m
        WHERE m.workspace_id = ws AND m.state IN ('tombstoned', 'archived')
          AND m.kind <> 'rule' AND NOT m.pinned
          AND coalesce(m.forgotten_at, m.archived_at) <= clock - older_than
          -- a superseded version still points here: its chain would break
          AND NOT EXISTS (SELECT FROM brain.memory o WHERE o.workspace_id = ws AND o.superseded_by = m.memory_id)
        ORDER BY coalesce(m.forgotten_at, m.archived_at), m.memory_id
        LIMIT max_rows
        FOR UPDATE
    LOOP
        id := r.memory_id; kind := r.kind; state := r.state; headline := r.headline; left_at := r.left_at;
        IF dry_run THEN
            action := 'would delete';
        ELSE
            PERFORM brain._audit(r.memory_id, 'prune', source,
                jsonb_build_object('older_than', older_than, 'state', r.state));
            UPDATE brain.memory o SET supersedes = NULL
            WHERE o.workspace_id = ws AND o.supersedes = r.memory_id;
            UPDATE brain.memory o SET replaced_by = NULL
            WHERE o.workspace_id = ws AND o.replaced_by = r.memory_id;
            PERFORM brain._delete_memories(ARRAY[r.memory_id]);  -- as the owner (migration 034)
            action := 'deleted';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION brain.prune IS
    'Deletes tombstoned and archived memories that left the active state more than older_than ago (at least 1 day), at most max_rows, never rules or pinned memories, never a memory a superseded version points to. Dry run by default: lists what it would delete. Each deletion leaves an audit row with the last snapshot.';
