-- The write guard: a client role changes a memory only through the API.
--
-- Application roles hold INSERT, UPDATE and DELETE on the memory tables
-- because the API's functions run as their caller (under row-level
-- security). This trigger makes that privilege usable only inside the API:
-- a statement that changes brain.memory, its kind rows, its embeddings,
-- annotations or fold records, or the session bookkeeping (sessions,
-- handoffs, boot and tool events, action items, scratch, maintenance runs,
-- embedding failures) is refused (BR020) unless one of the functions
-- running it is a public PL/pgSQL function of schema brain (brain.remember,
-- brain.pin, brain.import_memories, ...: a name without a leading
-- underscore). A client's own INSERT, UPDATE, DELETE or COPY, and a direct
-- call of an internal helper (brain._store_memories, brain._set_pinned,
-- brain._mark_superseded, ...), are refused; so every new memory passes the
-- write core (brain._store_memories) and every change of a flag, pin, vote or
-- state passes the API function that decides it. (Settings and an embedding
-- space's thresholds stay a writer's to set directly: their readers check
-- their ranges.) A PL/pgSQL frame names its function's schema, and only the
-- owner creates functions in schema brain; an SQL function's frame names the
-- function alone (a client able to create functions could name one
-- "remember"), so every public function that writes is PL/pgSQL
-- (tests/test_write_core.py checks). The owner of schema brain may write
-- directly. One check per statement, not per row.
CREATE OR REPLACE FUNCTION brain._write_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    -- (string_to_array and left, not a regular expression: a backend keeps 32
    -- compiled expressions, and the gate's own need those slots)
    IF EXISTS (SELECT FROM unnest((string_to_array(stack, E'\nPL/pgSQL function brain.'))[2:]) AS f
               WHERE left(f, 1) COLLATE "C" BETWEEN 'a' AND 'z') THEN
        RETURN NULL;
    END IF;
    IF brain._is_owner() THEN
        RETURN NULL;
    END IF;
    PERFORM brain._raise('BR020',
        format('brain.%s is written by pybrain''s functions only (%s refused).', TG_TABLE_NAME, TG_OP),
        jsonb_build_object('role', session_user, 'table', TG_TABLE_NAME, 'operation', TG_OP),
        'Call the API: brain.remember, brain.supersede, brain.observe, brain.pin, brain.rate, brain.forget, ... (docs/sql-api.md).');
    RETURN NULL;
END
$$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memory', 'rule', 'fact', 'incident', 'task', 'embedding', 'annotation', 'memory_fold',
                             -- the session bookkeeping and the records the API keeps: a planted
                             -- action item would block other sessions' writes past the hourly limit
                             'action_item', 'scratch', 'session', 'handoff', 'boot_event', 'tool_event',
                             'maintenance_run', 'embedding_failure']
                             -- trajectories' kind rows, packs and injection telemetry (migration 023),
                             -- once they exist (this file runs before 025-trajectories.sql)
                             || ARRAY(SELECT c.relname::text FROM pg_catalog.pg_class c
                                      WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind = 'r'
                                        AND c.relname IN ('trajectory', 'pack', 'injection', 'injection_use'))
    LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER write_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE'
                       ' ON brain.%I FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard()', t);
    END LOOP;
END
$$;

-- A trigger function is the owner's alone (as in 023-tenancy.sql, which runs before this file).
REVOKE ALL ON FUNCTION brain._write_guard() FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'brain_user') THEN
        REVOKE ALL ON FUNCTION brain._write_guard() FROM brain_user;
    END IF;
END
$$;
