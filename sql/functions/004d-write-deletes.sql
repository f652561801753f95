-- The deletions the API makes, as the owner of schema brain.
--
-- No client role holds DELETE, UPDATE (on a whole table), TRUNCATE or MAINTAIN
-- on a table of schema brain (migration 034): PostgreSQL lets a role that holds
-- any of them LOCK the table in every mode (LockTableAclCheck), and one
-- member's ACCESS EXCLUSIVE lock on brain.memory, held in an idle transaction,
-- stopped every workspace's search and remember. UPDATE is granted column by
-- column, which lets statements update and LOCK TABLE take nothing more than
-- ROW EXCLUSIVE; a DELETE has no such form, so the few the API makes run here.
--
-- Each helper deletes rows of the current workspace, where the caller may
-- write, and only when a public PL/pgSQL function of schema brain runs it, as
-- the write guard lets a client's own DELETE through (brain._write_guard,
-- brain._api_frame): a client's direct call is refused. So a member deletes
-- here what it could delete before migration 034, and no more.

-- Refuses (BR020) a call that no public PL/pgSQL function of schema brain
-- made; the current workspace where the caller may write otherwise.
CREATE OR REPLACE FUNCTION brain._deleting_workspace(stack text, what text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the helper's own frame is the first line of its stack, which brain._api_frame skips
    IF NOT brain._api_frame(stack) THEN
        PERFORM brain._raise('BR020', format('brain.%s is deleted from by pybrain''s functions only.', what),
            jsonb_build_object('role', session_user, 'table', what),
            'Call the API: brain.prune, brain.reset_setting, brain.retry_failed_embeddings, ... (docs/sql-api.md).');
    END IF;
    RETURN brain.current_workspace('write');
END
$$;

-- Memories of the workspace, by id (brain.prune). How many.
CREATE OR REPLACE FUNCTION brain._delete_memories(ids bigint[])
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- clients hold no DELETE (migration 034)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    ws bigint;
    n integer;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    ws := brain._deleting_workspace(stack, 'memory');
    DELETE FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = ANY (ids);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The vectors of memories of the workspace, in every space (brain.ingest_documents,
-- when a renamed document's chunks are embedded again). How many.
CREATE OR REPLACE FUNCTION brain._delete_embeddings(ids bigint[])
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- clients hold no DELETE (migration 034)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    ws bigint;
    n integer;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    ws := brain._deleting_workspace(stack, 'embedding');
    DELETE FROM brain.embedding e WHERE e.workspace_id = ws AND e.memory_id = ANY (ids);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The embedder's failures of a space of the workspace: of these memories, or
-- (ids NULL) all of them (brain.attach_embedding, brain.retry_failed_embeddings).
-- How many.
CREATE OR REPLACE FUNCTION brain._delete_embedding_failures(space_id bigint, ids bigint[] DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- clients hold no DELETE (migration 034)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    ws bigint;
    n integer;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    ws := brain._deleting_workspace(stack, 'embedding_failure');
    DELETE FROM brain.embedding_failure f
    WHERE f.workspace_id = ws AND f.space_id = _delete_embedding_failures.space_id
      AND (ids IS NULL OR f.memory_id = ANY (ids));
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The answers kept for request keys in the workspace, made before a time
-- (brain._forget_request_keys, from maintenance). How many.
CREATE OR REPLACE FUNCTION brain._delete_request_answers(before timestamptz)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- clients hold no DELETE (migration 034)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    ws bigint;
    n integer;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    ws := brain._deleting_workspace(stack, 'request_answer');
    DELETE FROM brain.request_answer r WHERE r.workspace_id = ws AND r.created_at < before;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- A setting's override in the workspace (brain.reset_setting). How many (0 or 1).
CREATE OR REPLACE FUNCTION brain._delete_setting(name text)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- clients hold no DELETE (migration 034)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    ws bigint;
    n integer;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    ws := brain._deleting_workspace(stack, 'setting');
    DELETE FROM brain.setting s WHERE s.workspace_id = ws AND s.name = _delete_setting.name;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- The marks a supersede wrote in the workspace (brain._unmark_dependents, its undo). How many.
CREATE OR REPLACE FUNCTION brain._delete_stale_marks(changed_id bigint, change_id bigint)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- clients hold no DELETE (migrations 034 and 035)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stack text;
    ws bigint;
    n integer;
BEGIN
    GET DIAGNOSTICS stack = PG_CONTEXT;
    ws := brain._deleting_workspace(stack, 'stale_mark');
    DELETE FROM brain.stale_mark s
    WHERE s.workspace_id = ws AND s.changed_id = _delete_stale_marks.changed_id
      AND s.change_id = _delete_stale_marks.change_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
