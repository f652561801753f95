-- Signals that tell nothing to another workspace.
--
-- Any role may LISTEN on any channel, so a notification on a shared channel
-- tells every listener which workspace changed and when. Each workspace gets
-- its own channel instead, named with 128 random bits (brain_sessions_ and 32
-- hexadecimal digits): the session triggers notify it with an empty payload,
-- and only a member of the workspace learns its name
-- (brain.sessions_channel()). The functions are in sql/functions/022-ui.sql.

CREATE TABLE brain.workspace_channel (
    workspace_id bigint NOT NULL REFERENCES brain.workspace ON DELETE CASCADE,
    channel      text NOT NULL CHECK (channel ~ '^brain_sessions_[0-9a-f]{32}$'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id),
    UNIQUE (workspace_id, channel)
);
COMMENT ON TABLE brain.workspace_channel IS
    'Each workspace''s LISTEN/NOTIFY channel for session changes: a name no other workspace can guess.';

INSERT INTO brain.workspace_channel (workspace_id, channel)
SELECT w.workspace_id, 'brain_sessions_' || pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '')
FROM brain.workspace w;

-- Application roles have no privileges on the table; brain.sessions_channel
-- (SECURITY DEFINER) answers a member for its own workspace only.
ALTER TABLE brain.workspace_channel ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.workspace_channel FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON brain.workspace_channel USING (
    pg_catalog.pg_has_role(current_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                          WHERE n.nspname = 'brain'), 'MEMBER'));

-- The workspace of this transaction, as in migration 013, except that a
-- brain.workspace that is not an id is refused without repeating it: an error
-- message reaches the server's log, and the setting may hold anything a
-- client pasted there.
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
            MESSAGE = 'brain.workspace must be a workspace id (a whole number).',
            DETAIL = pg_catalog.jsonb_build_object('field', 'brain.workspace')::text,
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
