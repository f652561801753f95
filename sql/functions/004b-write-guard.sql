-- The write guard: a client role changes a memory only through the API.
--
-- Application roles hold INSERT, UPDATE and DELETE on the memory tables
-- because the API's functions run as their caller (under row-level
-- security). This trigger makes that privilege usable only inside the API:
-- a statement that changes brain.memory, its kind rows, its embeddings,
-- annotations or fold records, or the session bookkeeping (sessions,
-- handoffs, boot and tool events, action items, scratch, maintenance runs,
-- embedding failures, the answers kept for request keys) is refused (BR020)
-- unless one of the functions running it is a public PL/pgSQL function of
-- schema brain (brain._api_frame finds its frame by its signature, in any
-- lc_messages) (brain.remember, brain.pin, brain.import_memories, ...: a
-- name without a leading underscore). A client's own INSERT, UPDATE, DELETE
-- or COPY, and a direct call of an internal helper (brain._store_memories,
-- brain._set_pinned, brain._mark_superseded, ...), are refused; so every new
-- memory passes the write core (brain._store_memories) and every change of a
-- flag, pin, vote or state passes the API function that decides it.
-- (Settings and an embedding space's thresholds stay a writer's to set
-- directly: their readers check their ranges.) A PL/pgSQL frame names its
-- function's schema, and only the owner creates functions in schema brain;
-- an SQL function's frame names the function alone (a client able to create
-- functions could name one "remember"), so every public function that writes
-- is PL/pgSQL (tests/test_write_core.py checks). The owner of schema brain
-- may write directly. One check per statement, not per row.
-- Whether a call stack (GET DIAGNOSTICS PG_CONTEXT, the frame that reads it
-- first) holds a frame of a public PL/pgSQL function of schema brain, in
-- whatever language the server writes its messages (lc_messages): the frame's
-- words are translated ("PL/pgSQL function brain.remember(text, …) line 12",
-- "PL/pgSQL-Funktion brain.remember(text, …) Zeile 12", "PL/pgSQL関数
-- brain.remember(text, …)の12行目"), the function's signature never is. A
-- frame names it as brain.<name>( (not after a letter, digit, _, . or "),
-- and <name> must be such a function: a table named in a statement's text
-- (brain.memory) is none, and only PL/pgSQL frames name the schema. (Text
-- functions, not regular expressions: a backend keeps 32 compiled ones, and
-- the gate's own need those slots.)
-- The frames are read from the outermost in (the API function a client called
-- is usually there: one lookup), each frame's names tested for the cheap
-- conditions before the catalog is asked.
CREATE OR REPLACE FUNCTION brain._api_frame(stack text)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    frames text[] := (string_to_array(stack, E'\n'))[2:];
    parts text[];
    fn text;
BEGIN
    FOR i IN REVERSE coalesce(cardinality(frames), 0) .. 1 LOOP
        parts := string_to_array(frames[i], 'brain.');
        FOR n IN 2 .. coalesce(cardinality(parts), 0) LOOP
            CONTINUE WHEN strpos(parts[n], '(') <= 1
                OR strpos('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."',
                          right(parts[n - 1], 1)) > 0;
            fn := left(parts[n], strpos(parts[n], '(') - 1);
            CONTINUE WHEN NOT left(fn, 1) COLLATE "C" BETWEEN 'a' AND 'z';
            IF EXISTS (SELECT FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                       WHERE p.pronamespace = 'brain'::regnamespace AND l.lanname = 'plpgsql'
                         AND p.proname = fn) THEN
                RETURN true;
            END IF;
        END LOOP;
    END LOOP;
    RETURN false;
END
$$;

CREATE OR REPLACE FUNCTION brain._write_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    IF brain._api_frame(stack) THEN
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
                             -- trajectories' kind rows, packs and injection telemetry (migration 023)
                             -- and the answers kept for request keys (migration 030: a planted one would
                             -- answer another agent's request) and the repositories' projects (a planted
                             -- one would file a repository's sessions under another's) and the marks of
                             -- dependent staleness (migration 035), once they exist
                             || ARRAY(SELECT c.relname::text FROM pg_catalog.pg_class c
                                      WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind = 'r'
                                        AND c.relname IN ('trajectory', 'pack', 'injection', 'injection_use',
                                                          'request_answer', 'repository', 'stale_mark'))
    LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER write_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE'
                       ' ON brain.%I FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard()', t);
    END LOOP;
END
$$;

-- Who may execute the guard is decided with every other function's, last
-- (025a-tenancy-catalogue.sql): a trigger function is the owner's alone, and brain._api_frame
-- is the application roles' (the guard runs as the client whose statement fires
-- it, and calls it).
