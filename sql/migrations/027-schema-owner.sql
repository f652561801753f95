-- The owner of schema brain is a role of its own, brain_owner, that is not a
-- superuser. SECURITY DEFINER functions run as their owner: until now that was
-- the role that ran `brain init` (on the embedded server, the superuser), so a
-- definer that ran anything a caller could name ran it with every right on the
-- server. brain_owner may do what the schema's functions need and nothing more:
-- it owns the schema's objects (so it bypasses row-level security as the
-- superuser did: BYPASSRLS, since the tables FORCE it), and it cannot log in,
-- create roles or databases, run programs or read server files. The role that
-- installs (a superuser, or a role with CREATEROLE) is a member of it and runs
-- the migrations; extensions and roles stay the installer's work.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brain_owner') THEN
        CREATE ROLE brain_owner NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOINHERIT BYPASSRLS;
    END IF;
    -- The installer acts as it (a superuser already may).
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
        EXECUTE format('GRANT brain_owner TO %I', current_user);
    END IF;
END
$$;

-- Everything of schema brain changes hands, and brain_owner gets ADMIN on each
-- application role, at the end of this migrate and of every later one
-- (brain._claim_objects, sql/functions/026-ownership.sql, run by the installer).

-- No per-workspace counts through the planner: a client may EXPLAIN any query
-- on the tables it reads, and an estimate drawn from the most common values of
-- workspace_id told it how many rows another workspace holds. The column is no
-- longer sampled (its statistics target 0); every migrate then sets what the
-- planner knows of it to one value for every workspace
-- (brain._hide_workspace_sizes, sql/functions/026-ownership.sql).
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
             WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind IN ('r', 'p')
    LOOP
        EXECUTE format('ALTER TABLE brain.%I ALTER COLUMN workspace_id SET STATISTICS 0', t.relname);
    END LOOP;
END
$$;
