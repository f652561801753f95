-- Moving to another embedding model: fill a new space in the background
-- (brain.pending_embeddings + brain.attach_embedding, resumable), then switch
-- in one transaction; the old space can then be dropped.

CREATE OR REPLACE FUNCTION brain.embedding_progress(embedding_space text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH s AS (SELECT * FROM brain._resolve_space(embedding_space)),
    counts AS (
        SELECT count(*) FILTER (WHERE m.state <> 'tombstoned') AS total,
               count(e.memory_id) FILTER (WHERE m.state <> 'tombstoned') AS embedded
        FROM brain.memory m
        CROSS JOIN s
        LEFT JOIN brain.embedding e ON e.workspace_id = m.workspace_id AND e.space_id = s.space_id
                                   AND e.memory_id = m.memory_id
        WHERE m.workspace_id = brain.current_workspace()
    )
    SELECT jsonb_build_object('space', s.provider || ':' || s.model, 'state', s.state, 'dims', s.dims,
                              'total', counts.total, 'embedded', counts.embedded,
                              'pending', counts.total - counts.embedded)
    FROM s, counts
$$;
COMMENT ON FUNCTION brain.embedding_progress IS
    'How far a space is filled: memories to embed (all but tombstoned), embedded, pending.';

CREATE OR REPLACE FUNCTION brain.activate_embedding_space(embedding_space text)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    target brain.embedding_space := brain._resolve_space(embedding_space);
    previous brain.embedding_space := brain.active_embedding_space();
    progress jsonb;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('brain.embedding_space'), ws::integer);
    IF target.state = 'active' THEN
        RETURN brain.embedding_progress(embedding_space);
    END IF;
    progress := brain.embedding_progress(embedding_space);
    IF (progress->>'pending')::bigint > 0 THEN
        PERFORM brain._raise('BR011',
            format('Space %s still misses %s embeddings.', embedding_space, progress->>'pending'),
            progress, format('Finish it first: brain reembed --to %s', embedding_space));
    END IF;
    UPDATE brain.embedding_space s SET state = 'retired'
    WHERE s.workspace_id = ws AND s.space_id = previous.space_id;
    UPDATE brain.embedding_space s SET state = 'active', activated_at = now()
    WHERE s.workspace_id = ws AND s.space_id = target.space_id;
    RETURN brain.embedding_progress(embedding_space)
        || jsonb_build_object('previous', previous.provider || ':' || previous.model);
END
$$;
COMMENT ON FUNCTION brain.activate_embedding_space IS
    'Makes a fully embedded space the active one (writes and searches use it from the next statement); the previous one is retired. Refused while embeddings are missing.';

CREATE OR REPLACE FUNCTION brain.drop_embedding_space(embedding_space text)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER  -- drops the space's index, which needs the table owner
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    target brain.embedding_space := brain._resolve_space(embedding_space);
    removed bigint;
BEGIN
    IF target.state = 'active' THEN
        PERFORM brain._raise('BR011', format('Space %s is the active one.', embedding_space),
            jsonb_build_object('space', embedding_space),
            'Activate another space first (brain reembed --to <provider:model>).');
    END IF;
    DELETE FROM brain.embedding e
    WHERE e.workspace_id = target.workspace_id AND e.space_id = target.space_id;
    GET DIAGNOSTICS removed = ROW_COUNT;
    EXECUTE format('DROP INDEX IF EXISTS brain.%I', 'embedding_hnsw_' || target.space_id);
    DELETE FROM brain.embedding_space s
    WHERE s.workspace_id = target.workspace_id AND s.space_id = target.space_id;
    RETURN jsonb_build_object('space', embedding_space, 'embeddings_removed', removed);
END
$$;
COMMENT ON FUNCTION brain.drop_embedding_space IS
    'Deletes a space that is not active, with its embeddings and its HNSW index.';
