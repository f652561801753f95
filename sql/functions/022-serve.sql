-- Bearer tokens of `brain serve` (migration 015): create, list, revoke, verify.
--
-- A token is 'pbt_' and 64 hexadecimal digits (244 random bits from two
-- gen_random_uuid() calls, which use the server's strong random source). It
-- is returned once, by brain.create_token; the table keeps its sha256.

-- The sha256 of a token, in hex; BR009 for a text that is not a token
-- (never echoing it: it may be a secret of another kind).
CREATE OR REPLACE FUNCTION brain._token_hash(token text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF token IS NULL OR token !~ '^pbt_[0-9a-f]{64}$' THEN
        PERFORM brain._raise('BR009', 'That is not a pybrain token (pbt_ and 64 hexadecimal digits).',
            jsonb_build_object('length', length(token)),
            'Create one with brain token create (brain.create_token).');
    END IF;
    RETURN encode(sha256(convert_to(token, 'UTF8')), 'hex');
END
$$;

-- The access a role holds in a workspace by its own memberships (the owner of
-- schema brain: admin), whoever asks; NULL when none.
CREATE OR REPLACE FUNCTION brain._role_access(ws bigint, role text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN pg_catalog.to_regrole(role) IS NULL THEN NULL
        WHEN pg_catalog.pg_has_role(pg_catalog.to_regrole(role),
                                    (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'brain'),
                                    'MEMBER') THEN 'admin'
        ELSE (SELECT m.access FROM brain.membership m
              WHERE m.workspace_id = ws
                AND pg_catalog.pg_has_role(pg_catalog.to_regrole(role), pg_catalog.to_regrole(m.role_name), 'MEMBER')
              ORDER BY pg_catalog.array_position(ARRAY['read', 'write', 'admin'], m.access) DESC LIMIT 1)
    END
$$;

-- Whether the caller answers for a role: the owner of schema brain; the role
-- itself (or a role it is a member of: its own group) as the principal of the
-- session (brain._principals: the login of brain serve stands for no token's
-- role); or an admin of every workspace the role belongs to. Enrolling a role
-- that belongs to another workspace, and minting a token that runs as a role,
-- need this: a workspace admin cannot act as another workspace's role.
CREATE OR REPLACE FUNCTION brain._answers_for_role(role text)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- (PL/pgSQL: brain._is_owner is defined with the tenancy functions, later)
    RETURN brain._is_owner()
        OR EXISTS (SELECT FROM unnest(brain._principals(session_user, current_setting('role'))) AS p
                   WHERE pg_catalog.to_regrole(role) IS NOT NULL
                     AND pg_catalog.pg_has_role(p, pg_catalog.to_regrole(role), 'MEMBER'))
        OR NOT EXISTS (SELECT FROM brain.workspace w
                       WHERE brain._role_access(w.workspace_id, role) IS NOT NULL
                         AND brain.workspace_access(w.workspace_id) IS DISTINCT FROM 'admin');
END
$$;

CREATE OR REPLACE FUNCTION brain.create_token(
    role text,
    name text,
    workspace_id bigint DEFAULT NULL,
    access text DEFAULT NULL,
    expires_in interval DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER  -- writes brain.token
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := coalesce(create_token.workspace_id, brain.current_workspace());
    r pg_roles;
    have text;
    want text;
    token text;
    t brain.token;
BEGIN
    IF NOT brain._is_owner() THEN
        PERFORM brain._require_admin(ws);
    END IF;
    PERFORM brain._workspace(ws);
    PERFORM brain._check_role_name(role);
    IF name IS NULL OR brain.trim_space(name) = '' OR length(name) > 100 OR name ~ '[[:cntrl:]]' THEN
        PERFORM brain._raise('BR009', 'A token name is 1 to 100 characters on one line.',
            jsonb_build_object('field', 'name', 'type', 'one line of 1 to 100 characters'), 'For example: laptop-claude, ci.');
    END IF;
    SELECT * INTO r FROM pg_roles x WHERE x.rolname = role;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR021', 'No database role of that name.', jsonb_build_object('field', 'role'),
            'Create it first: brain role create <name> --workspace <id>.');
    END IF;
    IF r.rolsuper OR r.rolbypassrls OR NOT pg_has_role(r.oid, 'brain_user', 'MEMBER')
       OR pg_has_role(r.oid, 'brain_server', 'MEMBER')
       OR pg_has_role(r.oid, (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'brain'), 'MEMBER') THEN
        PERFORM brain._raise('BR009',
            'A token stands for an application role (a member of brain_user); that role is not one.',
            jsonb_build_object('field', 'role'),
            'Use a role made with brain role create, not the owner, a superuser or a server role.');
    END IF;
    have := brain._role_access(ws, role);
    IF have IS NOT NULL AND NOT brain._answers_for_role(role) THEN
        PERFORM brain._raise('BR020',
            format('That role belongs to a workspace that %s does not administer: a token that runs as it needs its owner.',
                   session_user),
            jsonb_build_object('field', 'role', 'workspace', ws),
            'The owner of schema brain, or the role itself, makes its tokens (brain token create).');
    END IF;
    IF have IS NULL THEN
        PERFORM brain._raise('BR020', format('That role is not a member of workspace %s.', ws),
            jsonb_build_object('field', 'role', 'workspace', ws),
            'Grant it first: brain workspace grant <role> <workspace>.');
    END IF;
    want := coalesce(access, have);
    IF want NOT IN ('read', 'write', 'admin') THEN
        PERFORM brain._raise('BR009', 'Access is read, write or admin.',
            jsonb_build_object('field', 'access'), 'Leave it out for the role''s own access.');
    END IF;
    IF array_position(ARRAY['read', 'write', 'admin'], want) > array_position(ARRAY['read', 'write', 'admin'], have) THEN
        PERFORM brain._raise('BR009',
            format('That role has %s access to workspace %s; a token of it cannot have %s.', have, ws, want),
            jsonb_build_object('field', 'access', 'workspace', ws, 'access', have, 'asked', want),
            'Ask for at most the role''s access, or grant the role more first.');
    END IF;
    IF expires_in IS NOT NULL AND (expires_in <= interval '0' OR expires_in > interval '10 years') THEN
        PERFORM brain._raise('BR009', 'A token expires in more than 0 and at most 10 years.',
            jsonb_build_object('field', 'expires_in'), 'For example: 30 days, 12 hours.');
    END IF;
    IF EXISTS (SELECT FROM brain.token x WHERE x.workspace_id = ws AND x.name = brain.trim_space(create_token.name)
               AND x.revoked_at IS NULL) THEN
        PERFORM brain._raise('BR009', format('Workspace %s has a token of that name.', ws),
            jsonb_build_object('field', 'name', 'workspace', ws),
            'Choose another name, or revoke that token first.');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_auth_members m WHERE m.roleid = r.oid
                   AND m.member = (SELECT s.oid FROM pg_roles s WHERE s.rolname = 'brain_server')) THEN
        PERFORM brain._raise('BR020', 'brain serve may not act as that role yet.',
            jsonb_build_object('field', 'role'),
            'The installer adopts the role once: SELECT brain.adopt_role(''<role>'') (brain role create and brain init do it).');
    END IF;
    token := 'pbt_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
    INSERT INTO brain.token (workspace_id, name, role_name, access, token_hash, prefix, expires_at)
    VALUES (ws, brain.trim_space(create_token.name), role, want, brain._token_hash(token), left(token, 12),
            now() + expires_in)
    RETURNING * INTO t;
    RETURN jsonb_build_object('token_id', t.token_id, 'token', token, 'name', t.name, 'workspace', ws,
                              'role', t.role_name, 'access', t.access, 'prefix', t.prefix,
                              'expires_at', t.expires_at);
END
$$;
COMMENT ON FUNCTION brain.create_token IS
    'Creates a bearer token of brain serve for a role in a workspace (admins of the workspace and the owner), with at most the role''s access there and an optional lifetime. Returns the token once; only its sha256 is kept.';

CREATE OR REPLACE FUNCTION brain.list_tokens(workspace_id bigint DEFAULT NULL, include_revoked boolean DEFAULT false)
RETURNS TABLE (token_id bigint, name text, role_name text, access text, prefix text, state text,
               created_at timestamptz, created_by text, last_used_at timestamptz, expires_at timestamptz,
               revoked_at timestamptz, revoked_by text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER  -- reads brain.token, for the workspace's admins only
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := coalesce(list_tokens.workspace_id, brain.current_workspace());
BEGIN
    IF NOT brain._is_owner() THEN
        PERFORM brain._require_admin(ws);
    END IF;
    RETURN QUERY
    SELECT t.token_id, t.name, t.role_name, t.access, t.prefix,
           CASE WHEN t.revoked_at IS NOT NULL THEN 'revoked'
                WHEN t.expires_at <= now() THEN 'expired' ELSE 'active' END,
           t.created_at, t.created_by, t.last_used_at, t.expires_at, t.revoked_at, t.revoked_by
    FROM brain.token t
    WHERE t.workspace_id = ws AND (include_revoked OR t.revoked_at IS NULL)
    ORDER BY t.token_id;
END
$$;
COMMENT ON FUNCTION brain.list_tokens IS
    'The tokens of a workspace (default: the current one) with their role, access, state (active, expired, revoked), creation, last use and expiry; never the token (admins of the workspace).';

CREATE OR REPLACE FUNCTION brain.revoke_token(
    token_id bigint DEFAULT NULL,
    name text DEFAULT NULL,
    workspace_id bigint DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER  -- writes brain.token, for the workspace's admins only
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := coalesce(revoke_token.workspace_id, brain.current_workspace());
    t brain.token;
BEGIN
    IF NOT brain._is_owner() THEN
        PERFORM brain._require_admin(ws);
    END IF;
    IF (token_id IS NULL) = (name IS NULL) THEN
        PERFORM brain._raise('BR009', 'Name the token by its id or by its name (one of them).', NULL,
            'See the tokens with brain token list.');
    END IF;
    SELECT * INTO t FROM brain.token x
    WHERE x.workspace_id = ws
      AND (x.token_id = revoke_token.token_id OR x.name = brain.trim_space(revoke_token.name))
    ORDER BY x.revoked_at IS NULL DESC, x.token_id DESC LIMIT 1;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR021', format('No token %s in workspace %s.', coalesce('#' || token_id, 'of that name'), ws),
            jsonb_build_object('workspace', ws, 'token_id', token_id, 'field', CASE WHEN token_id IS NULL THEN 'name' ELSE 'token_id' END),
            'See the tokens with brain token list.');
    END IF;
    IF t.revoked_at IS NOT NULL THEN
        RETURN jsonb_build_object('token_id', t.token_id, 'name', t.name, 'revoked', false,
                                  'revoked_at', t.revoked_at);
    END IF;
    UPDATE brain.token x SET revoked_at = now(), revoked_by = session_user
    WHERE x.workspace_id = ws AND x.token_id = t.token_id
    RETURNING * INTO t;
    RETURN jsonb_build_object('token_id', t.token_id, 'name', t.name, 'revoked', true, 'revoked_at', t.revoked_at);
END
$$;
COMMENT ON FUNCTION brain.revoke_token IS
    'Revokes a token by id or name (admins of the workspace and the owner): the next request that carries it is refused. revoked is false when it was revoked already.';

-- Whether a bearer token is good now, for whom, with what access. status:
-- valid, unknown, revoked, expired, or no_access (the role lost its
-- membership, or was dropped). access is the lesser of the token's and the
-- role's present access. Marks the token used (at most once a minute).
CREATE OR REPLACE FUNCTION brain.verify_token(token text)
RETURNS TABLE (status text, token_id bigint, workspace_id bigint, role_name text, access text, name text,
               expires_at timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER  -- reads brain.token by the hash of a token the caller holds
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hash text := brain._token_hash(verify_token.token);
    t brain.token;
    have text;
BEGIN
    SELECT * INTO t FROM brain.token x WHERE x.token_hash = hash;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'unknown'::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz;
        RETURN;
    END IF;
    have := brain._role_access(t.workspace_id, t.role_name);
    status := CASE WHEN t.revoked_at IS NOT NULL THEN 'revoked'
                   WHEN t.expires_at <= now() THEN 'expired'
                   WHEN have IS NULL THEN 'no_access'
                   ELSE 'valid' END;
    IF status = 'valid' THEN
        access := (ARRAY['read', 'write', 'admin'])[least(array_position(ARRAY['read', 'write', 'admin'], t.access),
                                                          array_position(ARRAY['read', 'write', 'admin'], have))];
        IF t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute' THEN
            UPDATE brain.token x SET last_used_at = now()
            WHERE x.workspace_id = t.workspace_id AND x.token_id = t.token_id;
        END IF;
    END IF;
    token_id := t.token_id;
    workspace_id := t.workspace_id;
    role_name := t.role_name;
    name := t.name;
    expires_at := t.expires_at;
    RETURN NEXT;
END
$$;
COMMENT ON FUNCTION brain.verify_token IS
    'Checks a bearer token of brain serve: status (valid, unknown, revoked, expired, no_access), its workspace, role and access (the lesser of the token''s and the role''s). Only a valid token carries an access.';
