-- The scratchpad: notes a session or a project keeps for itself (brain.scratch_set,
-- brain.scratch_get, brain.scratch_list).

CREATE OR REPLACE FUNCTION brain._scratch_scope(session bigint, project text, OUT scope text, OUT scope_key text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (session IS NULL) = (project IS NULL) THEN
        PERFORM brain._raise('BR009', 'A scratch note belongs to a session or to a project: give exactly one.',
            jsonb_build_object('fields', jsonb_build_array('session', 'project')),
            'session => <id> for notes of this session, project => <name> for notes the project keeps.');
    END IF;
    IF session IS NOT NULL THEN
        PERFORM brain._get_session(session);
        PERFORM brain._touch_session(session);
        scope := 'session';
        scope_key := session::text;
    ELSE
        scope := 'project';
        scope_key := project;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION brain.scratch_set(key text, value text, session bigint DEFAULT NULL,
                                             project text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target record;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('key', key, 'value', value, 'project', project));
    target := brain._scratch_scope(session, project);
    IF key IS NULL OR key !~ '^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}$' THEN
        PERFORM brain._raise('BR009', 'A scratch key is 1-100 letters, digits and _.:/-.',
            jsonb_build_object('field', 'key', 'length', length(key)), 'Example: key => ''current-branch''.');
    END IF;
    IF value IS NULL THEN
        PERFORM brain._raise('BR009', 'A scratch note needs a value.', NULL, 'To clear a note, set it to an empty string.');
    END IF;
    IF length(value) > 4000 THEN
        PERFORM brain._raise('BR005', 'A scratch value is text of at most 4000 characters.',
            jsonb_build_object('characters', length(value)), 'Store longer notes as memories.');
    END IF;
    INSERT INTO brain.scratch AS x (workspace_id, scope, scope_key, key, value, updated_at)
    VALUES (brain.current_workspace(), target.scope, target.scope_key, scratch_set.key, scratch_set.value,
            pg_catalog.now())
    ON CONFLICT ON CONSTRAINT scratch_pkey DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;
    RETURN jsonb_build_object('scope', target.scope, 'scope_key', target.scope_key, 'key', key);
END
$$;
COMMENT ON FUNCTION brain.scratch_set IS
    'Sets a small note (at most 4000 characters) of a session or a project: working state that is not a memory.';

CREATE OR REPLACE FUNCTION brain.scratch_get(key text, session bigint DEFAULT NULL, project text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target record := brain._scratch_scope(session, project);
BEGIN
    RETURN (SELECT x.value FROM brain.scratch x
            WHERE x.workspace_id = brain.current_workspace() AND x.scope = target.scope
              AND x.scope_key = target.scope_key AND x.key = scratch_get.key);
END
$$;
COMMENT ON FUNCTION brain.scratch_get IS 'A scratch note''s value, or NULL.';

CREATE OR REPLACE FUNCTION brain.scratch_list(session bigint DEFAULT NULL, project text DEFAULT NULL)
RETURNS TABLE (key text, value text, updated_at timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target record := brain._scratch_scope(session, project);
BEGIN
    RETURN QUERY
        SELECT x.key, x.value, x.updated_at FROM brain.scratch x
        WHERE x.workspace_id = brain.current_workspace() AND x.scope = target.scope
          AND x.scope_key = target.scope_key
        ORDER BY x.key;
END
$$;
COMMENT ON FUNCTION brain.scratch_list IS 'The scratch notes of a session or a project.';
