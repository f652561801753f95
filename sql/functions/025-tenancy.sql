-- Tenancy: workspaces, memberships and login roles; the audit log's guards;
-- bounded inputs. Who may execute what follows (025a-tenancy-catalogue.sql).

-- Whether the session's login role owns schema brain (or is a superuser):
-- the operator who initialises, migrates and creates workspaces and roles.
CREATE OR REPLACE FUNCTION brain._is_owner()
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_has_role(session_user, n.nspowner, 'MEMBER')
    FROM pg_namespace n WHERE n.nspname = 'brain'
$$;

CREATE OR REPLACE FUNCTION brain._require_owner(what text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT brain._is_owner() THEN
        PERFORM brain._raise('BR020', format('Only the owner of schema brain may %s.', what),
            jsonb_build_object('role', session_user),
            'Run it as the role that ran `brain init` (the database owner).');
    END IF;
END
$$;

-- The current workspace when the role has at least this access there. As in
-- migration 013, except that the access asked for is never repeated: a client
-- may call it with anything, and an error message reaches the server's log.
CREATE OR REPLACE FUNCTION brain.current_workspace(access text) RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    have text := brain._access(ws, current_user::text);
BEGIN
    IF access IS NULL OR access NOT IN ('read', 'write', 'admin') THEN
        RAISE EXCEPTION USING ERRCODE = 'BR009',
            MESSAGE = 'Access is read, write or admin.',
            DETAIL = pg_catalog.jsonb_build_object('field', 'access',
                                                   'allowed', pg_catalog.jsonb_build_array('read', 'write', 'admin'))::text,
            HINT = 'brain.current_workspace(''write'') is the workspace when this role may write there.';
    END IF;
    IF array_position(ARRAY['read', 'write', 'admin'], have) < array_position(ARRAY['read', 'write', 'admin'], access) THEN
        RAISE EXCEPTION USING ERRCODE = 'BR020',
            -- the role whose access was checked: a token's role through brain serve, not its login
            MESSAGE = pg_catalog.format('Role %s has %s access to workspace %s; this needs %s.',
                                        current_user, have, ws, access),
            DETAIL = pg_catalog.jsonb_build_object('role', current_user, 'workspace', ws,
                                                   'access', have, 'needs', access)::text,
            HINT = 'An admin of the workspace grants more: brain workspace grant <role> <workspace> --access write.';
    END IF;
    RETURN ws;
END
$$;
COMMENT ON FUNCTION brain.current_workspace(text) IS
    'The current workspace when the connected role has at least this access (read, write, admin) there; raises BR020 otherwise (BR009 for another access level).';

-- A text argument no longer than max characters (NULL passes); BR009 naming it.
CREATE OR REPLACE FUNCTION brain._check_length(field text, value text, max integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF length(value) > max THEN
        PERFORM brain._raise('BR009', format('%s is %s characters long; at most %s.', field, length(value), max),
            jsonb_build_object('field', field, 'length', length(value), 'max', max),
            format('Shorten the %s.', field));
    END IF;
END
$$;

-- The same check in an expression: returns value.
CREATE OR REPLACE FUNCTION brain._bounded(field text, value text, max integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._check_length(field, value, max);
    RETURN value;
END
$$;

-- Text fields have bounds, whichever function (or direct INSERT) writes them:
-- a value over its bound is refused with BR009 and nothing is written.
CREATE OR REPLACE FUNCTION brain._check_memory_sizes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._check_length('project', NEW.project, 200);
    PERFORM brain._check_length('source_agent', NEW.source_agent, 200);
    PERFORM brain._check_length('source_system', NEW.source_system, 200);
    PERFORM brain._check_length('source_ref', NEW.source_ref, 2000);
    PERFORM brain._check_length('source_hash', NEW.source_hash, 200);
    PERFORM brain._check_length('reason', NEW.supersede_reason, 2000);
    PERFORM brain._check_length('reason', NEW.forget_reason, 2000);
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER memory_sizes
    BEFORE INSERT OR UPDATE OF project, source_agent, source_system, source_ref, source_hash,
                               supersede_reason, forget_reason
    ON brain.memory FOR EACH ROW EXECUTE FUNCTION brain._check_memory_sizes();

-- The same for the smaller tables: the trigger's arguments are pairs of a
-- column and its bound.
CREATE OR REPLACE FUNCTION brain._check_sizes()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    doc jsonb := to_jsonb(NEW);
BEGIN
    FOR i IN 0 .. TG_NARGS - 1 BY 2 LOOP
        PERFORM brain._check_length(TG_ARGV[i], doc ->> TG_ARGV[i], TG_ARGV[i + 1]::integer);
    END LOOP;
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER session_sizes BEFORE INSERT OR UPDATE ON brain.session FOR EACH ROW
    EXECUTE FUNCTION brain._check_sizes('source', '200', 'project', '200', 'cwd', '4096', 'host', '255',
                                        'current_task', '2000', 'end_reason', '2000', 'handoff', '100000');
CREATE OR REPLACE TRIGGER scratch_sizes BEFORE INSERT OR UPDATE ON brain.scratch FOR EACH ROW
    EXECUTE FUNCTION brain._check_sizes('key', '200', 'scope_key', '200', 'value', '100000');
CREATE OR REPLACE TRIGGER action_item_sizes BEFORE INSERT OR UPDATE ON brain.action_item FOR EACH ROW
    EXECUTE FUNCTION brain._check_sizes('text', '2000', 'project', '200', 'for_source', '200',
                                        'response_note', '2000');
CREATE OR REPLACE TRIGGER annotation_sizes BEFORE INSERT OR UPDATE ON brain.annotation FOR EACH ROW
    EXECUTE FUNCTION brain._check_sizes('note', '10000', 'source', '200');
CREATE OR REPLACE TRIGGER tool_event_sizes BEFORE INSERT ON brain.tool_event FOR EACH ROW
    EXECUTE FUNCTION brain._check_sizes('tool', '200', 'error_code', '20');
CREATE OR REPLACE TRIGGER setting_sizes BEFORE INSERT OR UPDATE ON brain.setting FOR EACH ROW
    EXECUTE FUNCTION brain._check_sizes('value', '10000');

-- A workspace by id, or BR021.
CREATE OR REPLACE FUNCTION brain._workspace(id bigint)
RETURNS brain.workspace
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w brain.workspace;
BEGIN
    SELECT * INTO w FROM brain.workspace x WHERE x.workspace_id = id;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR021', format('No workspace #%s.', id), jsonb_build_object('workspace', id),
            'See the workspaces with brain.list_workspaces() (brain workspace list).');
    END IF;
    RETURN w;
END
$$;

CREATE OR REPLACE FUNCTION brain._check_role_name(name text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF name IS NULL OR name !~ '^[a-z_][a-z0-9_]{0,62}$' OR name LIKE 'pg\_%' THEN
        -- (never repeating the text: it may be anything pasted into the wrong field)
        PERFORM brain._raise('BR009',
            'A role name is 1 to 63 lowercase letters, digits or _, starting with a letter or _, and not pg_.',
            jsonb_build_object('field', 'role', 'length', length(name)), 'For example: agent_claude, alice.');
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION brain.create_workspace(name text, organization_id bigint DEFAULT 1)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER  -- writes brain.workspace, which application roles only read
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w brain.workspace;
BEGIN
    PERFORM brain._require_owner('create a workspace');
    IF name IS NULL OR brain.trim_space(name) = '' OR length(name) > 100 OR name ~ '[[:cntrl:]]' THEN
        PERFORM brain._raise('BR009', 'A workspace name is 1 to 100 characters on one line.',
            jsonb_build_object('field', 'name', 'type', 'one line of 1 to 100 characters'), 'For example: team-platform.');
    END IF;
    IF NOT EXISTS (SELECT FROM brain.organization o WHERE o.organization_id = create_workspace.organization_id) THEN
        PERFORM brain._raise('BR021', format('No organization #%s.', organization_id),
            jsonb_build_object('organization', organization_id), 'The default organization is 1.');
    END IF;
    IF EXISTS (SELECT FROM brain.workspace x WHERE x.organization_id = create_workspace.organization_id
               AND x.name = brain.trim_space(create_workspace.name)) THEN
        PERFORM brain._raise('BR009', 'A workspace of that name exists.',
            jsonb_build_object('field', 'name'), 'Choose another name, or grant access to it (brain.list_workspaces()).');
    END IF;
    INSERT INTO brain.workspace (organization_id, name)
    VALUES (create_workspace.organization_id, brain.trim_space(create_workspace.name))
    RETURNING * INTO w;
    RETURN jsonb_build_object('workspace', w.workspace_id, 'name', w.name, 'organization', w.organization_id);
END
$$;
COMMENT ON FUNCTION brain.create_workspace IS
    'Creates a workspace (owner of schema brain only). It has no members until brain.grant_workspace.';

CREATE OR REPLACE FUNCTION brain.list_workspaces()
RETURNS TABLE (workspace_id bigint, name text, access text, members bigint, memories bigint, created_at timestamptz)
LANGUAGE sql STABLE
SECURITY DEFINER  -- counts members and memories of the workspaces the caller may see, and only those
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT w.workspace_id, w.name, a.access,
           (SELECT count(*) FROM brain.membership m WHERE m.workspace_id = w.workspace_id),
           (SELECT count(*) FROM brain.memory x WHERE x.workspace_id = w.workspace_id AND x.state = 'active'),
           w.created_at
    FROM brain.workspace w
    CROSS JOIN LATERAL (SELECT brain.workspace_access(w.workspace_id) AS access) a
    WHERE a.access IS NOT NULL
    ORDER BY w.workspace_id
$$;
COMMENT ON FUNCTION brain.list_workspaces IS
    'The workspaces the connected role is a member of, with its access, the number of members and of active memories.';

-- The caller must be an admin of the workspace (the owner is one everywhere).
CREATE OR REPLACE FUNCTION brain._require_admin(ws bigint)
RETURNS brain.workspace
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w brain.workspace;
BEGIN
    IF brain.workspace_access(ws) IS DISTINCT FROM 'admin' THEN
        -- Whether the workspace exists is told only to its admins.
        PERFORM brain._raise('BR020', format('Role %s is not an admin of workspace %s.', session_user, ws),
            jsonb_build_object('role', session_user, 'workspace', ws),
            'An admin of the workspace, or the owner of schema brain, manages its members.');
    END IF;
    w := brain._workspace(ws);
    RETURN w;
END
$$;

CREATE OR REPLACE FUNCTION brain._grant_workspace(role text, workspace_id bigint, access text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER  -- writes brain.membership, which application roles only read
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w brain.workspace;
BEGIN
    IF workspace_id IS NULL OR NOT brain._is_owner() AND brain.workspace_access(workspace_id) IS DISTINCT FROM 'admin' THEN
        PERFORM brain._require_admin(workspace_id);
    END IF;
    w := brain._workspace(workspace_id);
    PERFORM brain._check_role_name(role);
    IF access IS NULL OR access NOT IN ('read', 'write', 'admin') THEN
        PERFORM brain._raise('BR009', 'Access is read, write or admin.',
            jsonb_build_object('field', 'access'), 'read: search and recall; write: also remember, supersede, forget; admin: also manage members.');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles r WHERE r.rolname = role) THEN
        PERFORM brain._raise('BR021', 'No database role of that name.', jsonb_build_object('field', 'role'),
            'Create it first: brain role create <name> --workspace <id> (or CREATE ROLE).');
    END IF;
    IF NOT brain._is_owner() AND NOT EXISTS (SELECT FROM pg_roles r WHERE r.rolname = role AND r.rolcanlogin) THEN
        PERFORM brain._raise('BR020', 'Only the owner of schema brain grants a workspace to a group role (one that cannot log in).',
            jsonb_build_object('field', 'role'), 'Grant it to the login role of each agent or person.');
    END IF;
    -- A role that belongs to a workspace this admin does not administer is
    -- enrolled by its owner: else the admin could mint a token that runs as it.
    IF NOT brain._answers_for_role(role) THEN
        PERFORM brain._raise('BR020',
            format('That role belongs to a workspace that %s does not administer: its owner enrols it.', session_user),
            jsonb_build_object('field', 'role', 'workspace', w.workspace_id),
            'The owner of schema brain grants it (brain workspace grant), or the role asks an admin of its own workspace.');
    END IF;
    IF EXISTS (SELECT FROM pg_roles r WHERE r.rolname = role AND (r.rolsuper OR r.rolbypassrls)) THEN
        PERFORM brain._raise('BR009', 'That role bypasses row-level security; it needs no membership.',
            jsonb_build_object('field', 'role'), 'Grant workspaces to roles without SUPERUSER or BYPASSRLS.');
    END IF;
    INSERT INTO brain.membership AS m (workspace_id, role_name, access, granted_by)
    VALUES (w.workspace_id, role, access, session_user)
    ON CONFLICT ON CONSTRAINT membership_pkey
    DO UPDATE SET access = excluded.access, granted_at = now(), granted_by = excluded.granted_by;
    RETURN jsonb_build_object('workspace', w.workspace_id, 'role', role, 'access', access);
END
$$;

-- As the caller: when that is the installer (a role that may grant roles), the
-- role granted is adopted too (brain.adopt_role), so that a role made by hand
-- (CREATE ROLE ... IN ROLE brain_user) can have tokens of brain serve.
CREATE OR REPLACE FUNCTION brain.grant_workspace(role text, workspace_id bigint, access text DEFAULT 'write')
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    granted jsonb := brain._grant_workspace(role, workspace_id, access);
BEGIN
    IF brain._is_owner() AND to_regprocedure('brain.adopt_role(text)') IS NOT NULL
       AND has_function_privilege('brain.adopt_role(text)', 'EXECUTE')
       AND pg_has_role(role, 'brain_user', 'MEMBER') THEN
        BEGIN
            PERFORM brain.adopt_role(role);
        EXCEPTION WHEN insufficient_privilege THEN
            NULL;  -- an installer without ADMIN on it: brain.create_token says what to grant
        END;
    END IF;
    RETURN granted;
END
$$;
COMMENT ON FUNCTION brain.grant_workspace IS
    'Gives a database role read, write or admin access to a workspace, or changes its access (admins of the workspace and the owner).';

CREATE OR REPLACE FUNCTION brain.revoke_workspace(role text, workspace_id bigint)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER  -- writes brain.membership, which application roles only read
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w brain.workspace;
    n integer;
BEGIN
    IF workspace_id IS NULL OR NOT brain._is_owner() AND brain.workspace_access(workspace_id) IS DISTINCT FROM 'admin' THEN
        PERFORM brain._require_admin(workspace_id);
    END IF;
    w := brain._workspace(workspace_id);
    PERFORM brain._check_role_name(role);
    DELETE FROM brain.membership m WHERE m.workspace_id = w.workspace_id AND m.role_name = role;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN jsonb_build_object('workspace', w.workspace_id, 'role', role, 'revoked', n > 0);
END
$$;
COMMENT ON FUNCTION brain.revoke_workspace IS
    'Takes a role''s access to a workspace away (admins of the workspace and the owner); revoked is false when it had none.';

CREATE OR REPLACE FUNCTION brain.list_members(workspace_id bigint DEFAULT NULL)
RETURNS TABLE (role_name text, access text, can_login boolean, granted_at timestamptz, granted_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER  -- reads every membership of the workspace, for its admins only
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := coalesce(list_members.workspace_id, brain.current_workspace());
BEGIN
    PERFORM brain._require_admin(ws);
    RETURN QUERY
    SELECT m.role_name, m.access, coalesce(r.rolcanlogin, false), m.granted_at, m.granted_by
    FROM brain.membership m LEFT JOIN pg_roles r ON r.rolname = m.role_name
    WHERE m.workspace_id = ws ORDER BY m.role_name;
END
$$;
COMMENT ON FUNCTION brain.list_members IS 'The roles with access to a workspace and their access (admins of the workspace).';

-- The checks of brain.create_role, before anything is made: the caller is the
-- owner, the name is free and well formed, the workspace exists, the access,
-- the password (when given) and the statement_timeout are valid. What the
-- role is to be given: {"statement_timeout_ms": n}. The installer's `brain
-- role create` runs it as brain_owner and makes the role in its own fixed SQL
-- (pybrain/db.py create_role), calling no function of schema brain itself.
CREATE OR REPLACE FUNCTION brain._role_plan(
    name text,
    workspace_id bigint,
    access text DEFAULT 'write',
    password text DEFAULT NULL,
    statement_timeout text DEFAULT '5s'
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    timeout_ms bigint;
BEGIN
    PERFORM brain._require_owner('create a role');
    PERFORM brain._check_role_name(name);
    PERFORM brain._workspace(workspace_id);
    IF access IS NULL OR access NOT IN ('read', 'write', 'admin') THEN
        PERFORM brain._raise('BR009', 'Access is read, write or admin.', jsonb_build_object('field', 'access'),
            'The default is write.');
    END IF;
    IF password IS NOT NULL AND (length(password) < 12 OR length(password) > 200) THEN
        PERFORM brain._raise('BR009', 'A password is 12 to 200 characters.', NULL,
            'Leave it out and one is generated.');
    END IF;
    BEGIN
        timeout_ms := extract(epoch FROM statement_timeout::interval) * 1000;
    EXCEPTION WHEN invalid_datetime_format OR invalid_parameter_value OR datetime_field_overflow THEN
        timeout_ms := NULL;
    END;
    IF timeout_ms IS NULL OR timeout_ms < 100 OR timeout_ms > 3600 * 1000 THEN
        PERFORM brain._raise('BR009',
            'statement_timeout is an interval between 100ms and 1h.',
            jsonb_build_object('field', 'statement_timeout'), 'The default is 5s.');
    END IF;
    IF EXISTS (SELECT FROM pg_roles r WHERE r.rolname = name) THEN
        PERFORM brain._raise('BR009', 'A role of that name exists.', jsonb_build_object('field', 'name'),
            'Grant it a workspace instead: brain workspace grant <role> <workspace>.');
    END IF;
    RETURN jsonb_build_object('statement_timeout_ms', timeout_ms);
END
$$;

CREATE OR REPLACE FUNCTION brain.create_role(
    name text,
    workspace_id bigint,
    access text DEFAULT 'write',
    password text DEFAULT NULL,
    statement_timeout text DEFAULT '5s'
)
RETURNS jsonb
LANGUAGE plpgsql
-- As the caller, the installer: CREATE ROLE needs its CREATEROLE, which the
-- owner of schema brain (brain_owner) does not have.
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    secret text := coalesce(password, encode(sha256(convert_to(gen_random_uuid()::text || clock_timestamp()::text
                                                               || random()::text, 'UTF8')), 'hex'));
    timeout_ms bigint;
BEGIN
    timeout_ms := (brain._role_plan(name, workspace_id, access, secret, statement_timeout)
                   ->> 'statement_timeout_ms')::bigint;
    EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS'
                   ' CONNECTION LIMIT 20 PASSWORD %L IN ROLE brain_user', name, secret);
    EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', name, timeout_ms || 'ms');
    EXECUTE format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', name, '60s');
    PERFORM brain.grant_workspace(name, workspace_id, access);  -- adopts it too (brain.create_token)
    RETURN jsonb_build_object('role', name, 'workspace', workspace_id, 'access', access,
                              'statement_timeout', timeout_ms || 'ms',
                              'password', CASE WHEN password IS NULL THEN secret END);
END
$$;
COMMENT ON FUNCTION brain.create_role IS
    'Creates a login role in brain_user bound to one workspace, with a statement_timeout (owner of schema brain only). Returns the generated password when none was given; it is not stored anywhere else.';

-- The audit log is written only by the API: brain._audit_many, called by a
-- PL/pgSQL function of schema brain. A client cannot create functions of its
-- own in brain, so a call made directly (SELECT brain._audit(...), a DO block,
-- a temporary function) is refused. Each row is stamped with the login role
-- and the time; nobody but the owner updates or deletes a row.
CREATE OR REPLACE FUNCTION brain._audit_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    after_audit text;
    line text;
    fn text;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        IF NOT brain._is_owner() THEN
            PERFORM brain._raise('BR020', 'The audit log is append-only.',
                jsonb_build_object('role', session_user, 'operation', TG_OP),
                'Audit rows are never changed or deleted.');
        END IF;
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF NOT brain._is_owner() THEN
        GET DIAGNOSTICS stack = PG_CONTEXT;
        -- The first function that called brain._audit_many (through brain._audit or not):
        -- the frames after the first line that names it, but its brain._audit's, and of
        -- those the first line of a function's frame. (Text functions, not regular
        -- expressions: a write runs more than a backend keeps compiled.)
        IF strpos(stack, 'SQL function "_audit_many"') > 0 THEN
            after_audit := substr(stack, strpos(stack, 'SQL function "_audit_many"'));
            after_audit := CASE WHEN strpos(after_audit, E'\n') > 0 THEN substr(after_audit, strpos(after_audit, E'\n') + 1) END;
            IF starts_with(after_audit, 'SQL function "_audit" ') AND strpos(after_audit, E'\n') > 0 THEN
                after_audit := substr(after_audit, strpos(after_audit, E'\n') + 1);
            END IF;
            FOREACH line IN ARRAY coalesce(string_to_array(after_audit, E'\n'), '{}') LOOP
                after_audit := line;
                EXIT WHEN starts_with(line, 'PL/pgSQL function ') OR starts_with(line, 'SQL function ');
                after_audit := NULL;
            END LOOP;
        END IF;
        -- (that frame must be a PL/pgSQL function of schema brain: brain.<a-z and _>()
        fn := CASE WHEN starts_with(after_audit, 'PL/pgSQL function brain.') THEN substr(after_audit, 25) END;
        IF fn IS NULL OR strpos(fn, '(') <= 1
           OR translate(left(fn, strpos(fn, '(') - 1), 'abcdefghijklmnopqrstuvwxyz_', '') <> '' THEN
            PERFORM brain._raise('BR020', 'Audit rows are written by pybrain''s functions only.',
                jsonb_build_object('role', session_user), 'Call the API (brain.remember, brain.forget, ...).');
        END IF;
        NEW.workspace_id := brain.current_workspace('write');
    END IF;
    NEW.db_role := session_user;
    -- The role the row was written as, when the session took one (SET ROLE:
    -- brain serve runs each request as its token's role): who authored a
    -- memory, for brain.confirm_flagged. Never taken from the caller's detail.
    NEW.detail := (NEW.detail - 'as_role')
        || CASE WHEN current_setting('role') NOT IN ('none', '') AND current_setting('role') <> session_user
                THEN jsonb_build_object('as_role', current_setting('role')) ELSE '{}' END;
    NEW.at := clock_timestamp();
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER audit_guard BEFORE INSERT OR UPDATE OR DELETE ON brain.audit
    FOR EACH ROW EXECUTE FUNCTION brain._audit_guard();

-- brain._audit_many inserts as the owner: application roles may not insert
-- into brain.audit themselves.
ALTER FUNCTION brain._audit_many(bigint[], text, text, jsonb, boolean) SECURITY DEFINER;
