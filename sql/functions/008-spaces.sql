-- Embedding spaces over time: indexing vectors written in bulk
-- (brain.index_vectors), and moving to another embedding model: fill a new
-- space in the background (brain.pending_embeddings + brain.attach_embedding,
-- resumable), then switch in one transaction; the old space can then be dropped.

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

-- The index build of brain.index_vectors: a new HNSW index of the space under
-- a temporary name, holding every vector of the space stored so far. Returns
-- the space as it is once brain._swap_space_index puts that index in place.
CREATE OR REPLACE FUNCTION brain._build_space_index(s brain.embedding_space)
RETURNS brain.embedding_space
LANGUAGE plpgsql
SECURITY DEFINER  -- creates an index, which needs the table owner
SET search_path = pg_catalog, public, pg_temp
-- restored when the function returns (set below for the build)
SET maintenance_work_mem = '64MB'
AS $$
DECLARE
    n bigint;
    need_kb bigint;
BEGIN
    -- Writers of embeddings (in every workspace) wait from here to the end of
    -- the transaction, so no vector the new index should hold is missed;
    -- searches go on with the old index.
    LOCK TABLE brain.embedding IN SHARE MODE;
    SELECT coalesce(max(e.ingest_seq), 0), count(*) INTO s.indexed_through, n
    FROM brain.embedding e WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id;
    s.indexed_through := greatest(s.indexed_through,
        (SELECT es.indexed_through FROM brain.embedding_space es
         WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id));
    -- pgvector builds the graph in memory while it fits in maintenance_work_mem
    -- (a vector and about 1 kB of links each); past that it inserts vector by
    -- vector, several times slower. At most 2 GB, and never less than the server's.
    need_kb := n * (s.dims * 4 + 1024) * 5 / 4 / 1024;
    PERFORM set_config('maintenance_work_mem',
        greatest(least(need_kb, 2 * 1024 * 1024), pg_size_bytes(current_setting('maintenance_work_mem')) / 1024,
                 64 * 1024)::text || 'kB', true);
    EXECUTE brain._space_index_sql(s, 'embedding_hnsw_' || s.space_id || '_next');
    RETURN s;
END
$$;

-- Puts the index built by brain._build_space_index in place of the space's
-- index. Searches wait for the lock this takes only until the transaction ends.
CREATE OR REPLACE FUNCTION brain._swap_space_index(s brain.embedding_space)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER  -- drops and renames an index, which needs the table owner
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('DROP INDEX IF EXISTS brain.%I', 'embedding_hnsw_' || s.space_id);
    EXECUTE format('ALTER INDEX brain.%I RENAME TO %I',
                   'embedding_hnsw_' || s.space_id || '_next', 'embedding_hnsw_' || s.space_id);
    UPDATE brain.embedding_space es SET indexed_through = s.indexed_through
    WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id;
END
$$;

CREATE OR REPLACE FUNCTION brain.index_vectors(embedding_space text DEFAULT NULL, max_rows integer DEFAULT 1000)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    s brain.embedding_space := brain._resolve_space(embedding_space);
    started timestamptz := clock_timestamp();
    n_waiting bigint;
    n_indexed bigint;
    ids bigint[];
    how text;
    folded integer;
    g record;
BEGIN
    IF max_rows IS NULL OR max_rows < 1 THEN
        PERFORM brain._raise('BR009', 'max_rows is at least 1.', jsonb_build_object('max_rows', max_rows),
            'The default is 1000.');
    END IF;
    -- One indexer per space at a time; read the space again behind the lock.
    PERFORM pg_advisory_xact_lock(hashtext('brain.index_vectors'), s.space_id::integer);
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id;
    SELECT count(*) INTO n_waiting FROM brain.embedding e
    WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.ingest_seq > s.indexed_through;
    IF n_waiting = 0 THEN
        RETURN jsonb_build_object('space', s.provider || ':' || s.model, 'action', 'none', 'indexed', 0,
                                  'folded', 0, 'waiting', 0, 'seconds', 0);
    END IF;
    SELECT count(*) INTO n_indexed FROM brain.embedding e
    WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.ingest_seq <= s.indexed_through;

    IF n_waiting >= n_indexed * (brain.setting('index_rebuild_share'))::double precision THEN
        -- Many waiting: a new index of the whole space, built in memory, costs
        -- less than inserting them one by one (docs/scaling.md).
        how := 'rebuilt';
        s := brain._build_space_index(s);
        ids := ARRAY(SELECT e.memory_id FROM brain.embedding e
                     WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id
                       AND e.ingest_seq > (SELECT es.indexed_through FROM brain.embedding_space es
                                           WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id)
                       AND e.ingest_seq <= s.indexed_through
                     ORDER BY e.memory_id);
        -- dedup on the new index (s names it: its indexed_through), writers still waiting
        folded := brain._fold_near_identical(s, ids);
        PERFORM brain._swap_space_index(s);
    ELSE
        -- A few: into the index one by one, the oldest max_rows, with the
        -- writers of their kinds and projects waiting (taken in order: no deadlock).
        how := 'inserted';
        FOR g IN
            SELECT DISTINCT m.kind, m.project
            FROM (SELECT e.memory_id FROM brain.embedding e
                  WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id
                    AND e.ingest_seq > s.indexed_through
                  ORDER BY e.ingest_seq, e.memory_id LIMIT max_rows) AS w
            JOIN brain.memory m ON m.workspace_id = s.workspace_id AND m.memory_id = w.memory_id
            ORDER BY 1, 2
        LOOP
            PERFORM brain._lock_writes(g.kind, g.project);
        END LOOP;
        WITH batch AS (
            SELECT e.memory_id FROM brain.embedding e
            WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.ingest_seq > s.indexed_through
            ORDER BY e.ingest_seq, e.memory_id LIMIT max_rows
        ), moved AS (
            UPDATE brain.embedding e SET ingest_seq = 0
            FROM batch
            WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.memory_id = batch.memory_id
            RETURNING e.memory_id
        )
        SELECT array_agg(moved.memory_id ORDER BY moved.memory_id) INTO ids FROM moved;
        folded := brain._fold_near_identical(s, ids);
    END IF;
    RETURN jsonb_build_object('space', s.provider || ':' || s.model, 'action', how,
                              'indexed', cardinality(ids), 'folded', folded,
                              'waiting', greatest(n_waiting - cardinality(ids), 0),
                              'seconds', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
END
$$;
COMMENT ON FUNCTION brain.index_vectors IS
    'Takes vectors that large observe_batch calls left out of the HNSW index into it, and runs their near-identical dedup (a fold keeps the longer text and tombstones the other). When they are at least index_rebuild_share (0.25) of the indexed ones, the space''s index is rebuilt in memory with them (writers of embeddings wait meanwhile, searches go on); otherwise the oldest max_rows are inserted. Returns what it did and how many still wait. `brain worker` calls it.';
