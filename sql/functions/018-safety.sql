-- Flagged memories: text that reads like an instruction to the agent
-- (brain.injection_signals) is stored with its reasons and kept out of the
-- boot payload until a person confirms it.

CREATE OR REPLACE FUNCTION brain.list_flagged(include_confirmed boolean DEFAULT false, max_results integer DEFAULT 50)
RETURNS TABLE (id bigint, kind text, project text, origin text, headline text, flag_reasons text[],
               confirmed_at timestamptz, confirmed_by text, created_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.kind, m.project, m.origin, m.headline, m.flag_reasons, m.flag_confirmed_at,
           m.flag_confirmed_by, m.created_at
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND cardinality(m.flag_reasons) > 0
      AND m.state = 'active'
      AND (include_confirmed OR m.flag_confirmed_at IS NULL)
    ORDER BY m.created_at DESC, m.memory_id DESC
    LIMIT max_results
$$;
COMMENT ON FUNCTION brain.list_flagged IS
    'Active memories flagged as possible instructions to the agent, with their reasons, newest first: those waiting for a person (and the confirmed ones with include_confirmed).';

-- The roles a session acts as: the role it took (SET ROLE) and its login
-- role, except the login of brain serve (a member of brain_server) acting for
-- a token's role: that login stands for every token, not for a person.
CREATE OR REPLACE FUNCTION brain._principals(login text, set_role text)
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY(SELECT DISTINCT r FROM unnest(ARRAY[
        nullif(nullif(set_role, 'none'), ''),
        CASE WHEN nullif(nullif(set_role, 'none'), '') IS NULL
                  OR NOT coalesce(pg_has_role(login, 'brain_server', 'MEMBER'), false)
             THEN login END]) AS r
        WHERE r IS NOT NULL)
$$;

-- Who wrote a memory's text: the principals of its insert and update audit
-- rows (brain._audit_guard records the role a row was written as).
CREATE OR REPLACE FUNCTION brain._authors(ws bigint, id bigint)
RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT p), '{}')
    FROM brain.audit a
    CROSS JOIN LATERAL unnest(brain._principals(a.db_role, a.detail->>'as_role')) AS p
    WHERE a.workspace_id = ws AND a.memory_id = id AND a.action IN ('insert', 'update')
$$;

CREATE OR REPLACE FUNCTION brain.confirm_flagged(id bigint, source text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory := brain._get_memory(id, lock => true);
    author text;
BEGIN
    IF cardinality(mem.flag_reasons) = 0 THEN
        PERFORM brain._raise('BR011', format('Memory #%s is not flagged.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id), 'Nothing to do.');
    END IF;
    -- Someone other than its author confirms it: a role that wrote its text
    -- (or one that can act as that role) may not, unless it is an admin of
    -- the workspace.
    IF brain.workspace_access(mem.workspace_id) IS DISTINCT FROM 'admin' THEN
        SELECT a INTO author
        FROM unnest(brain._authors(mem.workspace_id, mem.memory_id)) AS a
        CROSS JOIN unnest(brain._principals(session_user, current_setting('role'))) AS p
        WHERE p = a OR coalesce(pg_has_role(p, to_regrole(a), 'MEMBER'), false)
        LIMIT 1;
        IF FOUND THEN
            PERFORM brain._raise('BR020',
                format('Memory #%s was written by role %s: its author cannot confirm it.', mem.memory_id, author),
                jsonb_build_object('id', mem.memory_id, 'author', author),
                'Another member of the workspace, or an admin, confirms it (brain flagged --confirm ID).');
        END IF;
    END IF;
    UPDATE brain.memory m
    SET flag_confirmed_at = pg_catalog.now(),
        flag_confirmed_by = coalesce(nullif(source, ''), nullif(current_setting('brain.actor', true), ''), session_user)
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, 'confirm', source, jsonb_build_object('confirmed_flag', mem.flag_reasons));
    RETURN jsonb_build_object('id', mem.memory_id, 'flag_reasons', mem.flag_reasons, 'confirmed', true);
END
$$;
COMMENT ON FUNCTION brain.confirm_flagged IS
    'A person confirms a flagged memory: it is data, not an attack. It then enters the boot payload like any other. The role that wrote its text (or a role that can act as it) cannot confirm it (BR020): another member of the workspace can, and an admin of the workspace always can.';

-- Rows stored before the scanner learnt a format (or written before the gate
-- covered their path) may hold a secret that a write would refuse today. An
-- admin of the workspace finds them by id, field and kind, never by value,
-- and forgets (or supersedes) them. Reads the current workspace only, in
-- pages of max_rows memories after after_id.
CREATE OR REPLACE FUNCTION brain.scan_stored_secrets(max_rows integer DEFAULT 1000, after_id bigint DEFAULT 0)
RETURNS TABLE (memory_id bigint, state text, field text, kinds text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
BEGIN
    PERFORM brain._require_admin(ws);
    IF max_rows IS NULL OR max_rows NOT BETWEEN 1 AND 100000 THEN
        PERFORM brain._raise('BR009', 'max_rows lies between 1 and 100000.',
            jsonb_build_object('field', 'max_rows', 'type', 'integer'), 'The default is 1000; page on with after_id.');
    END IF;
    RETURN QUERY
    WITH page AS (
        SELECT m.* FROM brain.memory m
        WHERE m.workspace_id = ws AND m.memory_id > coalesce(after_id, 0)
        ORDER BY m.memory_id
        LIMIT max_rows
    ), fields AS (
        SELECT p.memory_id, p.state, f.field, f.value
        FROM page p
        LEFT JOIN brain.incident i ON i.workspace_id = p.workspace_id AND i.memory_id = p.memory_id
        CROSS JOIN LATERAL (VALUES
            ('headline', p.headline), ('body', p.body), ('tags', array_to_string(p.tags, ' ')),
            ('metadata', p.metadata::text), ('skill_trigger', p.skill_trigger::text),
            ('what_was_wrong', i.what_was_wrong), ('what_is_correct', i.what_is_correct),
            ('error_message', i.error_message), ('command_attempted', i.command_attempted),
            ('related_files', array_to_string(i.related_files, ' ')),
            ('source_ref', p.source_ref), ('source_agent', p.source_agent)) AS f(field, value)
        WHERE f.value IS NOT NULL AND f.value <> ''
        UNION ALL
        SELECT a.memory_id, p.state, 'annotation #' || a.annotation_id, a.note
        FROM brain.annotation a JOIN page p ON p.memory_id = a.memory_id
        WHERE a.workspace_id = ws
    )
    SELECT x.memory_id, x.state, x.field, x.kinds
    FROM (SELECT f.memory_id, f.state, f.field, brain.find_secrets(f.value) AS kinds FROM fields f) AS x
    WHERE cardinality(x.kinds) > 0
    ORDER BY x.memory_id, x.field;
END
$$;
COMMENT ON FUNCTION brain.scan_stored_secrets IS
    'Finds stored memories (any state) and annotations of the current workspace whose text holds what the secret scanner finds today: the id, the state, the field and the kinds, never the value (admins of the workspace). Pages through max_rows memories after after_id; forget or supersede what it finds.';
