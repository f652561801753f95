-- Tenancy decided by the database role, never by a value the client sends.
--
-- brain.membership maps roles to workspaces with an access level (read,
-- write, admin). brain.current_workspace() returns the workspace a
-- transaction selected (SET LOCAL brain.workspace = <id>), or the role's
-- only one, only when the role is a member, and raises BR020 otherwise.
-- Row-level security is FORCEd on every tenant table, so it binds the table
-- owner too; reading needs any membership, changing needs write (the session
-- bookkeeping tables: read). The audit log is append-only for everyone but
-- the owner, and only the API writes it (triggers in sql/functions/017-tenancy.sql).

CREATE TABLE brain.membership (
    workspace_id bigint NOT NULL REFERENCES brain.workspace ON DELETE CASCADE,
    role_name    text NOT NULL CHECK (role_name ~ '^[a-z_][a-z0-9_]{0,62}$'),
    access       text NOT NULL CHECK (access IN ('read', 'write', 'admin')),
    granted_at   timestamptz NOT NULL DEFAULT now(),
    granted_by   text NOT NULL DEFAULT session_user,
    PRIMARY KEY (workspace_id, role_name)
);
CREATE INDEX membership_role ON brain.membership (role_name);
COMMENT ON TABLE brain.membership IS
    'Who may use a workspace: a database role (and every role that is a member of it) with read, write or admin access.';

-- The access of the caller in a workspace: the lesser of what the session's
-- login role and the given role (the caller's current role) hold; NULL when
-- either holds none. The owner of schema brain (and a superuser) holds admin
-- everywhere; another role the highest level granted to it or to a role it
-- is a member of. A dropped role's memberships count for nothing. Inside a
-- SECURITY DEFINER function the current role is the owner, so the login role
-- decides; a session that SET ROLE keeps no more than that role has. It reads
-- brain.membership as its owner, so that it is one index lookup per call.
CREATE FUNCTION brain._access(ws bigint, role text) RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid;
    mine text;
    theirs text;
BEGIN
    SELECT n.nspowner INTO owner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'brain';
    IF pg_catalog.pg_has_role(session_user, owner, 'MEMBER') THEN
        mine := 'admin';
    ELSE
        SELECT m.access INTO mine FROM brain.membership m
        WHERE m.workspace_id = ws AND pg_catalog.pg_has_role(session_user, pg_catalog.to_regrole(m.role_name), 'MEMBER')
        ORDER BY pg_catalog.array_position(ARRAY['read', 'write', 'admin'], m.access) DESC LIMIT 1;
    END IF;
    IF mine IS NULL OR role IS NULL OR role = session_user::text THEN
        RETURN mine;
    END IF;
    IF pg_catalog.pg_has_role(pg_catalog.to_regrole(role), owner, 'MEMBER') THEN
        theirs := 'admin';
    ELSE
        SELECT m.access INTO theirs FROM brain.membership m
        WHERE m.workspace_id = ws
          AND pg_catalog.pg_has_role(pg_catalog.to_regrole(role), pg_catalog.to_regrole(m.role_name), 'MEMBER')
        ORDER BY pg_catalog.array_position(ARRAY['read', 'write', 'admin'], m.access) DESC LIMIT 1;
    END IF;
    IF theirs IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN (ARRAY['read', 'write', 'admin'])[least(pg_catalog.array_position(ARRAY['read', 'write', 'admin'], mine),
                                                  pg_catalog.array_position(ARRAY['read', 'write', 'admin'], theirs))];
END
$$;

-- The workspace of a caller that chose none: its only one. A role with
-- several must choose (BR020), so that nobody's grant can move another
-- role's writes into a workspace it did not choose. The owner of schema
-- brain may use every workspace: its default is the lowest id.
CREATE FUNCTION brain._default_workspace(role text) RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found bigint[];
BEGIN
    IF pg_catalog.pg_has_role(session_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                             WHERE n.nspname = 'brain'), 'MEMBER') THEN
        found := ARRAY(SELECT w.workspace_id FROM brain.workspace w
                       WHERE brain._access(w.workspace_id, role) IS NOT NULL ORDER BY 1 LIMIT 1);
    ELSIF role = session_user::text THEN
        found := ARRAY(SELECT DISTINCT m.workspace_id FROM brain.membership m
                       WHERE pg_catalog.pg_has_role(session_user, pg_catalog.to_regrole(m.role_name), 'MEMBER')
                       ORDER BY 1 LIMIT 10);
    ELSE
        found := ARRAY(SELECT DISTINCT m.workspace_id FROM brain.membership m
                       WHERE pg_catalog.pg_has_role(session_user, pg_catalog.to_regrole(m.role_name), 'MEMBER')
                         AND brain._access(m.workspace_id, role) IS NOT NULL
                       ORDER BY 1 LIMIT 10);
    END IF;
    IF cardinality(found) = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'BR020',
            MESSAGE = pg_catalog.format('Role %s is a member of no workspace.', session_user),
            DETAIL = pg_catalog.jsonb_build_object('role', session_user)::text,
            HINT = 'An admin grants access: brain workspace grant <role> <workspace>.';
    ELSIF cardinality(found) > 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'BR020',
            MESSAGE = pg_catalog.format('Role %s is a member of several workspaces; choose one.', session_user),
            DETAIL = pg_catalog.jsonb_build_object('role', session_user, 'workspaces', found)::text,
            HINT = 'SET LOCAL brain.workspace = <id> (BRAIN_WORKSPACE for the brain command).';
    END IF;
    RETURN found[1];
END
$$;

CREATE FUNCTION brain.workspace_access(workspace_id bigint DEFAULT NULL) RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain._access(coalesce(workspace_access.workspace_id, brain.current_workspace()), current_user::text);
END
$$;
COMMENT ON FUNCTION brain.workspace_access IS
    'The access (read, write, admin) of the connected role in a workspace (default: the current one); NULL when it is not a member.';

CREATE OR REPLACE FUNCTION brain.current_workspace() RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    raw text := pg_catalog.current_setting('brain.workspace', true);
    ws bigint;
BEGIN
    IF raw IS NULL OR pg_catalog.btrim(raw) = '' THEN
        -- Not chosen: the role's only workspace.
        RETURN brain._default_workspace(current_user::text);
    END IF;
    IF raw !~ '^\s*[0-9]{1,18}\s*$' THEN
        RAISE EXCEPTION USING ERRCODE = 'BR020',
            MESSAGE = pg_catalog.format('brain.workspace must be a workspace id, not %L.', pg_catalog.left(raw, 40)),
            HINT = 'SET LOCAL brain.workspace = <id>; see brain.list_workspaces().';
    END IF;
    ws := raw::bigint;
    IF brain._access(ws, current_user::text) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'BR020',
            MESSAGE = pg_catalog.format('Role %s is not a member of workspace %s.', session_user, ws),
            DETAIL = pg_catalog.jsonb_build_object('role', session_user, 'workspace', ws)::text,
            HINT = 'See your workspaces with brain.list_workspaces(); an admin grants access.';
    END IF;
    RETURN ws;
END
$$;
COMMENT ON FUNCTION brain.current_workspace() IS
    'The workspace of this transaction: SET LOCAL brain.workspace = <id>, else the role''s only workspace. Raises BR020 when the connected role is not a member (or, choosing none, is a member of several).';

-- The current workspace, when the role has at least the given access there.
CREATE FUNCTION brain.current_workspace(access text) RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    have text := brain._access(ws, current_user::text);
BEGIN
    IF array_position(ARRAY['read', 'write', 'admin'], have)
       < coalesce(array_position(ARRAY['read', 'write', 'admin'], access), 4) THEN
        RAISE EXCEPTION USING ERRCODE = 'BR020',
            MESSAGE = pg_catalog.format('Role %s has %s access to workspace %s; this needs %s.',
                                        session_user, have, ws, access),
            DETAIL = pg_catalog.jsonb_build_object('role', session_user, 'workspace', ws,
                                                   'access', have, 'needs', access)::text,
            HINT = 'An admin of the workspace grants more: brain workspace grant <role> <workspace> --access write.';
    END IF;
    RETURN ws;
END
$$;
COMMENT ON FUNCTION brain.current_workspace(text) IS
    'The current workspace when the connected role has at least this access (read, write, admin) there; raises BR020 otherwise.';

-- The membership rows a role may see: its own (and those of roles it is in).
ALTER TABLE brain.membership ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.membership FORCE ROW LEVEL SECURITY;
CREATE POLICY own_memberships ON brain.membership FOR SELECT USING (
    pg_catalog.pg_has_role(session_user, pg_catalog.to_regrole(role_name), 'MEMBER')
    OR pg_catalog.pg_has_role(current_user, pg_catalog.to_regrole(role_name), 'MEMBER')
    OR pg_catalog.pg_has_role(current_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                             WHERE n.nspname = 'brain'), 'MEMBER'));
GRANT SELECT ON brain.membership TO brain_user;

-- Workspaces are listed to their members only.
ALTER TABLE brain.workspace ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.workspace FORCE ROW LEVEL SECURITY;
CREATE POLICY members_see ON brain.workspace FOR SELECT
    USING (brain.workspace_access(workspace_id) IS NOT NULL);

-- Every tenant table: the old single policy becomes one for reading (any
-- member) and one per kind of change (write access; read for the session
-- bookkeeping a reader does: sessions and their handoffs, boots, tool events). In the USING
-- clauses the function stands alone: a query that names its workspace
-- (every function does) then checks it once, as a one-time filter the
-- planner derives, and plans as before. A WITH CHECK clause runs per row
-- written, so there it is wrapped in a subquery that runs once per statement.
DO $$
DECLARE
    t text;
    need text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
             WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'p')
               AND c.relname NOT IN ('workspace', 'membership')
             ORDER BY 1
    LOOP
        need := CASE WHEN t IN ('session', 'handoff', 'boot_event', 'tool_event') THEN 'read' ELSE 'write' END;
        EXECUTE format('DROP POLICY IF EXISTS workspace_isolation ON brain.%I', t);
        EXECUTE format('ALTER TABLE brain.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE brain.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY workspace_isolation ON brain.%I FOR SELECT'
                       ' USING (workspace_id = brain.current_workspace())', t);
        EXECUTE format('CREATE POLICY workspace_insert ON brain.%I FOR INSERT'
                       ' WITH CHECK (workspace_id = (SELECT brain.current_workspace(%L)))', t, need);
        EXECUTE format('CREATE POLICY workspace_update ON brain.%I FOR UPDATE'
                       ' USING (workspace_id = brain.current_workspace(%L))'
                       ' WITH CHECK (workspace_id = (SELECT brain.current_workspace(%L)))', t, need, need);
        EXECUTE format('CREATE POLICY workspace_delete ON brain.%I FOR DELETE'
                       ' USING (workspace_id = brain.current_workspace(%L))', t, need);
    END LOOP;
END
$$;

-- The audit log: written only through the API (brain._audit_many, checked
-- by a trigger), never changed or deleted but by the owner. Each row names
-- the database role that wrote it.
ALTER TABLE brain.audit ADD COLUMN db_role text;
COMMENT ON COLUMN brain.audit.db_role IS 'The login role of the session that wrote the row (set by a trigger).';
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON brain.audit FROM brain_user;

-- Functions are private unless granted (sql/functions/017-tenancy.sql grants the API to
-- brain_user after every migrate).
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA brain FROM PUBLIC;
REVOKE ALL ON SCHEMA brain FROM PUBLIC;

-- Before this migration any role in brain_user could use any workspace by
-- setting brain.workspace. Existing login roles keep the default workspace
-- with write access; anything more is granted explicitly.
INSERT INTO brain.membership (workspace_id, role_name, access, granted_by)
SELECT 1, r.rolname, 'write', 'migration 012'
FROM pg_catalog.pg_roles r
WHERE r.rolcanlogin AND NOT r.rolsuper AND r.rolname ~ '^[a-z_][a-z0-9_]{0,62}$'
  AND pg_catalog.pg_has_role(r.oid, 'brain_user', 'MEMBER')
  AND EXISTS (SELECT FROM brain.workspace w WHERE w.workspace_id = 1)
ON CONFLICT DO NOTHING;

-- The application roles may not create objects: no functions (no language
-- to write them in), no tables in schema public, nothing in a temporary
-- schema. Each step needs a privilege the migrating role may lack on a
-- managed server (then it is skipped with a notice); docs/security.md lists
-- them for the operator.
DO $$
BEGIN
    BEGIN
        REVOKE USAGE ON LANGUAGE sql, plpgsql FROM PUBLIC;
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'could not revoke USAGE on languages sql and plpgsql from PUBLIC (docs/security.md)';
    END;
    BEGIN
        REVOKE CREATE ON SCHEMA public FROM PUBLIC;
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'could not revoke CREATE on schema public from PUBLIC (docs/security.md)';
    END;
    BEGIN
        EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'could not revoke TEMPORARY on this database from PUBLIC (docs/security.md)';
    END;
END
$$;
