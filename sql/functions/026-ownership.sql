-- Who owns schema brain: brain_owner (migration 027), a role that is not a
-- superuser and holds no role. The installer (the role that runs `brain init`)
-- creates the objects of a new database as itself; every migrate ends by
-- handing them to brain_owner, by letting brain_server become every application
-- role (brain serve runs a token's requests as its role) and by taking from
-- brain_owner any role it was given (until migration 031 it held ADMIN on each
-- application role, with which it could grant itself one and become it). Both
-- run as the installer (SECURITY INVOKER): they change owners and role grants,
-- which brain_owner itself may not; db.migrate calls them in the transaction
-- that has just made them again.

-- brain_server may become an application role (a member of brain_user), without
-- its privileges (brain serve SETs it for a token's request): given by the
-- installer, since brain_owner grants no role. Nothing when it may already.
CREATE OR REPLACE FUNCTION brain.adopt_role(name text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._check_role_name(name);
    IF NOT EXISTS (SELECT FROM pg_roles r WHERE r.rolname = adopt_role.name
                   AND pg_has_role(r.oid, 'brain_user', 'MEMBER') AND NOT r.rolsuper) THEN
        PERFORM brain._raise('BR021', 'No application role of that name (a member of brain_user).',
            jsonb_build_object('field', 'name'), 'Create it first: brain role create <name> --workspace <id>.');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles r WHERE r.rolname = 'brain_server')
       OR EXISTS (SELECT FROM pg_auth_members m
                  WHERE m.roleid = (SELECT r.oid FROM pg_roles r WHERE r.rolname = adopt_role.name)
                    AND m.member = (SELECT r.oid FROM pg_roles r WHERE r.rolname = 'brain_server')
                    -- not one brain_owner made (with the ADMIN it held before): that one goes
                    AND m.grantor IS DISTINCT FROM (SELECT r.oid FROM pg_roles r WHERE r.rolname = 'brain_owner')) THEN
        RETURN;
    END IF;
    IF current_setting('server_version_num')::integer >= 160000 THEN
        EXECUTE format('GRANT %I TO brain_server WITH INHERIT FALSE, SET TRUE', name);
    ELSE
        EXECUTE format('GRANT %I TO brain_server', name);  -- brain_server is NOINHERIT
    END IF;
END
$$;

-- Every object of schema brain that brain_owner does not own yet becomes its
-- (a table takes its indexes, row type and own sequences along; privileges are
-- kept), every application role is adopted, and every role brain_owner holds is
-- revoked. The count of objects handed over and roles revoked.
CREATE OR REPLACE FUNCTION brain._claim_objects()
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid := (SELECT r.oid FROM pg_roles r WHERE r.rolname = 'brain_owner');
    o record;
    n integer := 0;
BEGIN
    IF owner IS NULL THEN
        -- a database restored onto a server that never ran migration 027 (as it makes it)
        CREATE ROLE brain_owner NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOINHERIT BYPASSRLS;
        owner := (SELECT r.oid FROM pg_roles r WHERE r.rolname = 'brain_owner');
    END IF;
    IF (SELECT s.nspowner FROM pg_namespace s WHERE s.nspname = 'brain') <> owner THEN
        EXECUTE 'ALTER SCHEMA brain OWNER TO brain_owner';
        n := n + 1;
    END IF;
    FOR o IN
        SELECT format('ALTER %s %s OWNER TO brain_owner',
                      CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                     WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'S' THEN 'SEQUENCE'
                                     WHEN 'c' THEN 'TYPE' ELSE 'TABLE' END,
                      CASE c.relkind WHEN 'c' THEN c.reltype::regtype::text ELSE c.oid::regclass::text END) AS ddl
        FROM pg_class c
        WHERE c.relnamespace = 'brain'::regnamespace AND c.relowner <> owner
          AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c')
          AND NOT EXISTS (SELECT FROM pg_depend d  -- a sequence of a table's column goes with the table
                          WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                            AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
        UNION ALL
        SELECT format('ALTER TYPE %s OWNER TO brain_owner', t.oid::regtype)
        FROM pg_type t
        WHERE t.typnamespace = 'brain'::regnamespace AND t.typowner <> owner AND t.typtype IN ('e', 'd', 'r', 'm')
        UNION ALL
        SELECT format('ALTER %s %s OWNER TO brain_owner',
                      CASE p.prokind WHEN 'a' THEN 'AGGREGATE' WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
                      p.oid::regprocedure)
        FROM pg_proc p
        WHERE p.pronamespace = 'brain'::regnamespace AND p.proowner <> owner
    LOOP
        EXECUTE o.ddl;
        n := n + 1;
    END LOOP;
    FOR o IN SELECT m.rolname FROM pg_roles m
             WHERE pg_has_role(m.oid, 'brain_user', 'MEMBER') AND m.rolname <> 'brain_user'
               AND NOT m.rolsuper AND NOT pg_has_role(m.oid, owner, 'MEMBER')
               AND NOT pg_has_role(m.oid, 'brain_server', 'MEMBER')
    LOOP
        PERFORM brain.adopt_role(o.rolname);
    END LOOP;
    -- brain_owner holds no role: not a membership, not ADMIN (CASCADE: the grants it
    -- made with ADMIN, each application role's to brain_server, were given again above).
    FOR o IN SELECT m.roleid::regrole::text AS role, m.grantor::regrole::text AS grantor
             FROM pg_auth_members m WHERE m.member = owner
    LOOP
        BEGIN
            IF current_setting('server_version_num')::integer >= 160000 THEN
                EXECUTE format('REVOKE %s FROM brain_owner GRANTED BY %s CASCADE', o.role, o.grantor);
            ELSE
                EXECUTE format('REVOKE %s FROM brain_owner CASCADE', o.role);
            END IF;
            n := n + 1;
        EXCEPTION WHEN insufficient_privilege OR invalid_grant_operation THEN
            RAISE WARNING 'brain_owner still holds role %, granted by %: revoke it as a superuser '
                          '(REVOKE % FROM brain_owner GRANTED BY % CASCADE)', o.role, o.grantor, o.role, o.grantor;
        END;
    END LOOP;
    RETURN n;
END
$$;

-- What the planner knows of workspace_id and space_id (a space belongs to one
-- workspace), the same for every workspace: the column is not sampled (statistics target 0, which ANALYZE leaves alone) and
-- its statistics say one distinct value, no common values, no histogram. An
-- EXPLAIN then estimates every workspace at the whole table, which tells a
-- tenant nothing of another's size, and plans as a one-workspace database does
-- (a default 0.5% share made the planner read a whole workspace through
-- workspace_id rather than a word's or a trigram's index). PostgreSQL 18 sets
-- such statistics with pg_restore_attribute_stats; before it a superuser
-- writes them; else the column keeps no statistics (the planner's default
-- share). Tables a migration adds are covered at the end of that migrate.
-- Until migration 031 space_id was sampled: EXPLAIN ... WHERE space_id = n
-- told another workspace how many vectors a space holds. Now it has one value
-- for the whole table too: the planner plans a space's vector search as in a
-- database of one space, and walks its HNSW index (the default share, 0.5%,
-- made it rank a space's every vector exactly instead). The count of columns
-- set.
CREATE OR REPLACE FUNCTION brain._hide_workspace_sizes()
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname, a.attname, a.attnum, a.attstattarget
             FROM pg_class c
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('workspace_id', 'space_id')
                                AND NOT a.attisdropped
             WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind IN ('r', 'p')
    LOOP
        IF t.attstattarget IS DISTINCT FROM 0 THEN
            EXECUTE format('ALTER TABLE brain.%I ALTER COLUMN %I SET STATISTICS 0', t.relname, t.attname);
        END IF;
        IF to_regprocedure('pg_catalog.pg_restore_attribute_stats("any")') IS NOT NULL THEN
            PERFORM pg_clear_attribute_stats('brain', t.relname::text, t.attname::text, false);
            PERFORM pg_restore_attribute_stats('schemaname', 'brain'::text, 'relname', t.relname::text,
                'attname', t.attname::text, 'inherited', false,
                'null_frac', 0::real, 'avg_width', 8, 'n_distinct', 1::real);
        ELSIF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
            DELETE FROM pg_statistic s WHERE s.starelid = t.oid AND s.staattnum = t.attnum;
            INSERT INTO pg_statistic (starelid, staattnum, stainherit, stanullfrac, stawidth, stadistinct,
                                      stakind1, stakind2, stakind3, stakind4, stakind5,
                                      staop1, staop2, staop3, staop4, staop5,
                                      stacoll1, stacoll2, stacoll3, stacoll4, stacoll5)
            VALUES (t.oid, t.attnum, false, 0, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        ELSE
            CONTINUE;
        END IF;
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

-- No vector index's size for a client: a space belongs to one workspace, and
-- its partial HNSW index's pg_class.reltuples and relpages, pg_relation_size()
-- and its scans in pg_stat_user_indexes told any role how many vectors another
-- workspace holds and how often it searches. On the database of schema brain,
-- PUBLIC keeps every column of pg_class but the sizes (reltuples, relpages,
-- relallvisible, relallfrozen), and loses the size functions and the
-- per-index statistics views; brain_owner keeps them (brain.search and
-- brain.storage_state run as it, and tell a member its own workspace's only).
-- A superuser's work, skipped with a notice otherwise. The count of grants
-- changed.
CREATE OR REPLACE FUNCTION brain._hide_index_sizes()
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hidden text[] := ARRAY['reltuples', 'relpages', 'relallvisible', 'relallfrozen'];
    kept text;
    f regprocedure;
    v text;
    n integer := 0;
BEGIN
    IF NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
        RAISE NOTICE 'Index sizes stay visible to every role: run brain init once as a superuser.';
        RETURN 0;
    END IF;
    IF has_table_privilege('public', 'pg_catalog.pg_class', 'SELECT') THEN
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO kept
        FROM pg_attribute a
        WHERE a.attrelid = 'pg_catalog.pg_class'::regclass AND a.attnum > 0 AND NOT a.attisdropped
          AND a.attname <> ALL (hidden);
        EXECUTE 'REVOKE SELECT ON pg_catalog.pg_class FROM PUBLIC';
        EXECUTE format('GRANT SELECT (%s) ON pg_catalog.pg_class TO PUBLIC', kept);
        n := n + 1;
    END IF;
    IF NOT has_table_privilege('brain_owner', 'pg_catalog.pg_class', 'SELECT') THEN
        EXECUTE 'GRANT SELECT ON pg_catalog.pg_class TO brain_owner';
        n := n + 1;
    END IF;
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'pg_catalog'::regnamespace
               AND p.proname IN ('pg_relation_size', 'pg_table_size', 'pg_indexes_size', 'pg_total_relation_size')
    LOOP
        IF has_function_privilege('public', f, 'EXECUTE') THEN
            EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
            n := n + 1;
        END IF;
        IF NOT has_function_privilege('brain_owner', f, 'EXECUTE') THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO brain_owner', f);
            n := n + 1;
        END IF;
    END LOOP;
    FOREACH v IN ARRAY ARRAY['pg_stat_all_indexes', 'pg_stat_user_indexes', 'pg_stat_sys_indexes',
                             'pg_statio_all_indexes', 'pg_statio_user_indexes', 'pg_statio_sys_indexes']
    LOOP
        IF has_table_privilege('public', 'pg_catalog.' || v, 'SELECT') THEN
            EXECUTE format('REVOKE SELECT ON pg_catalog.%I FROM PUBLIC', v);
            EXECUTE format('GRANT SELECT ON pg_catalog.%I TO brain_owner', v);
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;

COMMENT ON FUNCTION brain.adopt_role IS
    'Lets brain_server become an application role (SET, not its privileges), so that brain.create_token can make tokens of it (the installer only: a superuser, or a role with ADMIN on it). brain.create_role, brain.grant_workspace by the installer and every migrate do it; a role made by hand and enrolled by a workspace admin needs it once.';
REVOKE ALL ON FUNCTION brain.adopt_role(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION brain._claim_objects() FROM PUBLIC;
REVOKE ALL ON FUNCTION brain._hide_workspace_sizes() FROM PUBLIC;
REVOKE ALL ON FUNCTION brain._hide_index_sizes() FROM PUBLIC;
