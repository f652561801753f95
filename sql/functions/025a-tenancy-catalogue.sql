-- The catalogue of the API, and who may execute what. Each public function of
-- schema brain is one row of brain.catalogue(): what pg_proc knows of it (its
-- volatility, its arguments, whether it takes a request_key) and the few traits
-- SQL cannot infer, declared here beside it (brain._declared_traits). Clients
-- read it instead of keeping lists of function names; the grant loop below
-- reads the same list. Last of all files (but the schema's owner, 026): the
-- grants see every function.

-- The traits of functions that pg_proc cannot tell, by name:
--   idempotent  a write that a second call changes no further: a call whose
--               connection was lost during its COMMIT is sent again (a read,
--               STABLE or IMMUTABLE, is idempotent without saying so);
--   replica     writes nothing, and a streaming replica serves it (docs/scaling.md,
--               "Read replicas"): with a reader, a client runs it there;
--   telemetry   a write a session need not read back (tool events, the injections
--               shown and their uses, the counts of what a replica served): a read
--               after it does not wait for the replica to replay it;
--   owner       executed by the owner alone, never by brain_user (the SECURITY
--               DEFINER helpers that build and drop indexes or name any
--               workspace's channel, and the installer's, 026-ownership.sql).
CREATE OR REPLACE FUNCTION brain._declared_traits()
RETURNS TABLE (name text, trait text)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    VALUES
        ('hand_off_transcript', 'idempotent'), ('list_active_sessions', 'idempotent'),
        ('load_skill', 'idempotent'), ('observe_transcript', 'idempotent'),
        ('prompt_context', 'idempotent'), ('repository_project', 'idempotent'),
        ('scratch_get', 'idempotent'), ('scratch_list', 'idempotent'),
        ('search', 'idempotent'), ('transcript_handoff', 'idempotent'),
        ('search', 'replica'), ('list_recent', 'replica'), ('stale', 'replica'),
        ('stats', 'replica'), ('history', 'replica'), ('list_skills', 'replica'),
        ('metrics', 'replica'), ('boot_payload', 'replica'), ('recall_view', 'replica'),
        ('record_tool_event', 'telemetry'), ('record_injection', 'telemetry'),
        ('note_use', 'telemetry'), ('count_recall', 'telemetry'), ('record_boot', 'telemetry'),
        ('_build_space_index', 'owner'), ('_drop_replaced_indexes', 'owner'),
        ('_sessions_channel', 'owner'), ('adopt_role', 'owner'), ('_claim_objects', 'owner'),
        ('_hide_workspace_sizes', 'owner'), ('_hide_index_sizes', 'owner')
$$;

CREATE OR REPLACE FUNCTION brain.catalogue()
RETURNS TABLE (name text, signatures text[], volatility text, security_definer boolean,
               keyed boolean, read_only boolean, idempotent boolean, replica boolean,
               telemetry boolean, owner_only boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH fn AS (
        SELECT p.proname::text AS name,
               format('%s(%s)', p.proname, pg_get_function_identity_arguments(p.oid)) AS signature,
               p.provolatile, p.prosecdef,
               'request_key' = ANY (coalesce(p.proargnames, '{}')) AS keyed
        FROM pg_proc p
        WHERE p.pronamespace = 'brain'::regnamespace AND p.prokind IN ('f', 'p')
          AND p.proname NOT LIKE '\_%' AND p.prorettype <> 'trigger'::regtype
    ), traits AS (
        SELECT t.name, array_agg(t.trait) AS said FROM brain._declared_traits() t GROUP BY t.name
    ), merged AS (
        SELECT fn.name, array_agg(fn.signature ORDER BY fn.signature) AS signatures,
               -- the most volatile of its overloads: v, then s, then i
               CASE WHEN bool_or(fn.provolatile = 'v') THEN 'volatile'
                    WHEN bool_or(fn.provolatile = 's') THEN 'stable' ELSE 'immutable' END AS volatility,
               bool_or(fn.prosecdef) AS security_definer, bool_or(fn.keyed) AS keyed
        FROM fn GROUP BY fn.name
    )
    SELECT m.name, m.signatures, m.volatility, m.security_definer, m.keyed,
           m.volatility <> 'volatile' OR 'replica' = ANY (s.said) AS read_only,
           m.volatility <> 'volatile' OR 'replica' = ANY (s.said) OR 'idempotent' = ANY (s.said) AS idempotent,
           coalesce('replica' = ANY (s.said), false) AS replica,
           coalesce('telemetry' = ANY (s.said), false) AS telemetry,
           coalesce('owner' = ANY (s.said), false) AS owner_only
    FROM merged m LEFT JOIN traits s ON s.name = m.name
    ORDER BY m.name
$$;
COMMENT ON FUNCTION brain.catalogue IS
    'Each public function of schema brain, one row a name: its signatures, volatility (the most volatile overload), whether it is SECURITY DEFINER, and its traits: keyed (takes a request_key), read_only (STABLE or IMMUTABLE, or served by a replica), idempotent (read_only, or a write a second call changes no further: sent again after a connection lost during its COMMIT), replica (a streaming replica serves it), telemetry (a write a session need not read back), owner_only (never executable by application roles).';

-- Who may execute what. Nothing is executable by PUBLIC. brain_user gets
-- every function of schema brain but the ones below: the functions run as
-- the caller, so the helpers the API calls must be executable too; they run
-- with the caller's privileges under row-level security and give nothing
-- plain SQL does not. The functions of trait 'owner' (brain._declared_traits),
-- the trigger functions and the functions holding search's statements
-- (brain._search_ranked, the filters' count, the vector leg by shape, named
-- by space and watermark: search runs them as the owner) are the owner's.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'brain' AND p.prokind IN ('f', 'p')
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        IF (SELECT p.proname::text IN (SELECT t.name FROM brain._declared_traits() t WHERE t.trait = 'owner')
                   OR p.prorettype = 'trigger'::regtype
                   OR p.proname ~ '^_search_(ranked|kept|vector_(kept|all|[0-9]+_[0-9]+))$'
            FROM pg_proc p WHERE p.oid = f) THEN
            EXECUTE format('REVOKE ALL ON FUNCTION %s FROM brain_user', f);
        ELSE
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO brain_user', f);
        END IF;
    END LOOP;
END
$$;

-- brain serve checks a bearer token as brain_server (022-serve.sql).
GRANT EXECUTE ON FUNCTION brain.verify_token(text) TO brain_server;

-- Views run with the caller's privileges, so row-level security applies to
-- the caller and not to the view's owner.
DO $$
DECLARE
    v text;
BEGIN
    FOR v IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'brain' AND c.relkind = 'v'
    LOOP
        EXECUTE format('ALTER VIEW brain.%I SET (security_invoker = true)', v);
    END LOOP;
END
$$;
