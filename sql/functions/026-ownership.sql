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

-- What the planner knows of workspace_id, the same for every workspace: the
-- column is not sampled (statistics target 0, which ANALYZE leaves alone) and
-- its statistics say one distinct value, no common values, no histogram. An
-- EXPLAIN then estimates every workspace at the whole table, which tells a
-- tenant nothing of another's size, and plans as a one-workspace database does
-- (a default 0.5% share made the planner read a whole workspace through
-- workspace_id rather than a word's or a trigram's index). PostgreSQL 18 sets
-- such statistics with pg_restore_attribute_stats; before it a superuser
-- writes them; else the column keeps no statistics (the planner's default
-- share). Tables a migration adds are covered at the end of that migrate. The
-- count of columns set.
CREATE OR REPLACE FUNCTION brain._hide_workspace_sizes()
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    n integer := 0;
BEGIN
    FOR t IN SELECT c.oid, c.relname, a.attnum, a.attstattarget
             FROM pg_class c
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
             WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind IN ('r', 'p')
    LOOP
        IF t.attstattarget IS DISTINCT FROM 0 THEN
            EXECUTE format('ALTER TABLE brain.%I ALTER COLUMN workspace_id SET STATISTICS 0', t.relname);
        END IF;
        IF to_regprocedure('pg_catalog.pg_restore_attribute_stats("any")') IS NOT NULL THEN
            PERFORM pg_clear_attribute_stats('brain', t.relname::text, 'workspace_id', false);
            PERFORM pg_restore_attribute_stats('schemaname', 'brain'::text, 'relname', t.relname::text,
                'attname', 'workspace_id'::text, 'inherited', false,
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

COMMENT ON FUNCTION brain.adopt_role IS
    'Lets brain_server become an application role (SET, not its privileges), so that brain.create_token can make tokens of it (the installer only: a superuser, or a role with ADMIN on it). brain.create_role, brain.grant_workspace by the installer and every migrate do it; a role made by hand and enrolled by a workspace admin needs it once.';
REVOKE ALL ON FUNCTION brain.adopt_role(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION brain._claim_objects() FROM PUBLIC;
REVOKE ALL ON FUNCTION brain._hide_workspace_sizes() FROM PUBLIC;
