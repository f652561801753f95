-- Bearer tokens for `brain serve`, the MCP server over HTTP.
--
-- A token stands for a database role in one workspace, with an access level
-- no higher than the role's own there. The database keeps the sha256 of the
-- token, never the token. The HTTP server logs in as a member of
-- brain_server and runs each request as the token's role (SET LOCAL ROLE),
-- in the token's workspace, with its access as a ceiling (brain.max_access).
-- brain_server is NOINHERIT: it may become a token's role, but does not hold
-- that role's privileges itself. The functions are in
-- sql/functions/020-serve.sql.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brain_server') THEN
        CREATE ROLE brain_server NOLOGIN NOINHERIT;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA brain TO brain_server;

CREATE TABLE brain.token (
    workspace_id bigint NOT NULL REFERENCES brain.workspace ON DELETE CASCADE,
    token_id     bigint GENERATED ALWAYS AS IDENTITY,
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 100 AND name !~ '[[:cntrl:]]'),
    role_name    text NOT NULL CHECK (role_name ~ '^[a-z_][a-z0-9_]{0,62}$'),
    access       text NOT NULL CHECK (access IN ('read', 'write', 'admin')),
    token_hash   text NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    prefix       text NOT NULL CHECK (prefix ~ '^pbt_[0-9a-f]{8}$'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    created_by   text NOT NULL DEFAULT session_user,
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked_at   timestamptz,
    revoked_by   text,
    PRIMARY KEY (workspace_id, token_id),
    UNIQUE (workspace_id, token_hash)
);
CREATE INDEX token_by_hash ON brain.token (token_hash);
CREATE UNIQUE INDEX token_live_name ON brain.token (workspace_id, name) WHERE revoked_at IS NULL;
COMMENT ON TABLE brain.token IS
    'Bearer tokens of brain serve: the sha256 of each token (never the token), its role, workspace, access, expiry, last use and revocation.';
COMMENT ON COLUMN brain.token.prefix IS 'The first characters of the token, to recognise it in a list.';

-- Application roles have no privileges on the table; the functions of
-- 020-serve.sql (SECURITY DEFINER) read and write it after their own checks.
ALTER TABLE brain.token ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.token FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON brain.token USING (
    pg_catalog.pg_has_role(current_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                          WHERE n.nspname = 'brain'), 'MEMBER'));

-- The access of the caller in a workspace, as in migration 013, and never more
-- than brain.max_access when a transaction sets it (read, write or admin).
-- Setting it can only lower one's own access, so any role may; `brain serve`
-- sets it to the token's access. A value that is not a level counts as read.
CREATE OR REPLACE FUNCTION brain._access(ws bigint, role text) RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    levels CONSTANT text[] := ARRAY['read', 'write', 'admin'];
    owner oid;
    mine text;
    theirs text;
    result text;
    cap text := pg_catalog.current_setting('brain.max_access', true);
BEGIN
    SELECT n.nspowner INTO owner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'brain';
    IF pg_catalog.pg_has_role(session_user, owner, 'MEMBER') THEN
        mine := 'admin';
    ELSE
        SELECT m.access INTO mine FROM brain.membership m
        WHERE m.workspace_id = ws AND pg_catalog.pg_has_role(session_user, pg_catalog.to_regrole(m.role_name), 'MEMBER')
        ORDER BY pg_catalog.array_position(levels, m.access) DESC LIMIT 1;
    END IF;
    IF mine IS NULL OR role IS NULL OR role = session_user::text THEN
        result := mine;
    ELSE
        IF pg_catalog.pg_has_role(pg_catalog.to_regrole(role), owner, 'MEMBER') THEN
            theirs := 'admin';
        ELSE
            SELECT m.access INTO theirs FROM brain.membership m
            WHERE m.workspace_id = ws
              AND pg_catalog.pg_has_role(pg_catalog.to_regrole(role), pg_catalog.to_regrole(m.role_name), 'MEMBER')
            ORDER BY pg_catalog.array_position(levels, m.access) DESC LIMIT 1;
        END IF;
        IF theirs IS NOT NULL THEN
            result := levels[least(pg_catalog.array_position(levels, mine), pg_catalog.array_position(levels, theirs))];
        END IF;
    END IF;
    IF result IS NOT NULL AND cap IS NOT NULL AND cap <> '' THEN
        result := levels[least(pg_catalog.array_position(levels, result),
                               coalesce(pg_catalog.array_position(levels, cap), 1))];
    END IF;
    RETURN result;
END
$$;
