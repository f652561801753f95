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
    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.embedding_space'));
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
    index_name text;
BEGIN
    PERFORM brain.current_workspace('write');
    IF target.state = 'active' THEN
        PERFORM brain._raise('BR011', format('Space %s is the active one.', embedding_space),
            jsonb_build_object('space', embedding_space),
            'Activate another space first (brain reembed --to <provider:model>).');
    END IF;
    DELETE FROM brain.embedding e
    WHERE e.workspace_id = target.workspace_id AND e.space_id = target.space_id;
    GET DIAGNOSTICS removed = ROW_COUNT;
    FOR index_name IN SELECT i.indexname FROM brain._space_indexes(target.space_id) AS i LOOP
        EXECUTE format('DROP INDEX IF EXISTS brain.%I', index_name);
    END LOOP;
    EXECUTE format('DROP INDEX IF EXISTS brain.%I', brain._pattern_index_name(target));
    -- and the boot's statements of its PATTERN rules (015-boot.sql)
    EXECUTE format('DROP FUNCTION IF EXISTS brain.%I(bigint, text[], public.vector, integer, boolean)',
                   brain._boot_patterns_name(target));
    DELETE FROM brain.embedding_space s
    WHERE s.workspace_id = target.workspace_id AND s.space_id = target.space_id;
    RETURN jsonb_build_object('space', embedding_space, 'embeddings_removed', removed);
END
$$;
COMMENT ON FUNCTION brain.drop_embedding_space IS
    'Deletes a space that is not active, with its embeddings and its HNSW indexes.';

-- The HNSW indexes of a space: its current one, and one a rebuild replaced
-- until brain.index_vectors drops it.
CREATE OR REPLACE FUNCTION brain._space_indexes(space_id bigint)
RETURNS TABLE (indexname text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT i.indexname::text FROM pg_catalog.pg_indexes i
    WHERE i.schemaname = 'brain'
      AND (i.indexname = 'embedding_hnsw_' || space_id OR i.indexname LIKE 'embedding\_hnsw\_' || space_id || '\_%')
$$;

-- brain.index_vectors's rebuild: a new HNSW index of a space of this
-- workspace, beside the old one, holding every vector stored so far; then
-- the space's indexed_through names it. Searches go on with the old index
-- meanwhile; writers of embeddings (in every workspace) wait until the
-- transaction ends. Returns the space as it is now.
CREATE OR REPLACE FUNCTION brain._build_space_index(space_id bigint)
RETURNS brain.embedding_space
LANGUAGE plpgsql
SECURITY DEFINER  -- creates an index and moves the watermark, which need the table owner
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    s brain.embedding_space;
    top bigint;
    n bigint;
BEGIN
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = brain.current_workspace() AND es.space_id = _build_space_index.space_id;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR012', format('No embedding space #%s in this workspace.', space_id), NULL,
            'See brain.active_embedding_space().');
    END IF;
    -- No vector the new index should hold can be stored while it is built.
    LOCK TABLE brain.embedding IN SHARE MODE;
    SELECT coalesce(max(e.ingest_seq), 0), count(*) INTO top, n
    FROM brain.embedding e WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id;
    IF top <= s.indexed_through THEN
        RETURN s;
    END IF;
    -- pgvector builds the graph in memory while it fits in maintenance_work_mem
    -- (a vector and about 1 kB of links each); past that it inserts vector by
    -- vector, several times slower. Up to 2 GB, never less than the session's;
    -- for this transaction only, which ends with the build.
    PERFORM set_config('maintenance_work_mem',
        greatest(least(n * (s.dims * 4 + 1024) * 5 / 4 / 1024, 2 * 1024 * 1024),
                 pg_size_bytes(current_setting('maintenance_work_mem')) / 1024)::text || 'kB', true);
    s.indexed_through := top;
    EXECUTE brain._space_index_sql(s);
    UPDATE brain.embedding_space es SET indexed_through = top
    WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id;
    RETURN s;
END
$$;

-- Drops the indexes of a space of this workspace that a rebuild replaced,
-- when its current index is in place; 0 when there are none. Dropping needs
-- the table to itself: it takes that lock only if it is free at once (NOWAIT;
-- else lock_not_available), so it never queues searches and writers behind it.
CREATE OR REPLACE FUNCTION brain._drop_replaced_indexes(space_id bigint)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER  -- drops indexes, which needs the table owner
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.embedding_space;
    index_name text;
    n integer := 0;
BEGIN
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = brain.current_workspace() AND es.space_id = _drop_replaced_indexes.space_id;
    IF NOT FOUND OR to_regclass(format('brain.%I', brain._space_index_name(s))) IS NULL THEN
        RETURN 0;
    END IF;
    FOR index_name IN SELECT i.indexname FROM brain._space_indexes(s.space_id) AS i
                      WHERE i.indexname <> brain._space_index_name(s) LOOP
        IF n = 0 THEN
            LOCK TABLE brain.embedding IN ACCESS EXCLUSIVE MODE NOWAIT;
        END IF;
        EXECUTE format('DROP INDEX brain.%I', index_name);
        n := n + 1;
    END LOOP;
    -- and search's functions that walked them (005e-search-vector.sql); the new index's
    -- is written when the function files are next applied
    FOR index_name IN SELECT p.proname FROM pg_catalog.pg_proc p
                      WHERE p.pronamespace = 'brain'::regnamespace
                        AND p.proname LIKE '\_search\_vector\_' || s.space_id || '\_%'
                        AND p.proname <> brain._search_vector_name(s) LOOP
        EXECUTE format('DROP FUNCTION brain.%I(brain.search_request, integer, boolean)', index_name);
    END LOOP;
    RETURN n;
END
$$;

-- One indexer per space at a time: takes the space's indexer lock (without
-- `wait`, only if it is free) and returns the space as it is behind it (a
-- rebuild may have moved its watermark); NULL when the lock was not free.
CREATE OR REPLACE FUNCTION brain._lock_indexer(s brain.embedding_space, wait boolean)
RETURNS brain.embedding_space
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF wait THEN
        PERFORM pg_advisory_xact_lock(brain._lock_key(s.workspace_id, 'brain.index_vectors ' || s.space_id));
    ELSIF NOT pg_try_advisory_xact_lock(brain._lock_key(s.workspace_id, 'brain.index_vectors ' || s.space_id)) THEN
        RETURN NULL;
    END IF;
    SELECT * INTO s FROM brain.embedding_space es
    WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id;
    RETURN s;
END
$$;

-- Moves the oldest max_rows waiting vectors of space s into its HNSW index
-- one by one and runs their near-identical dedup, with the writers of their
-- kinds and projects waiting (and those of also_kind / also_project, the
-- caller's own, all taken in one order). Without `wait` it does nothing
-- while another indexer works on the space. How many it moved and folded.
CREATE OR REPLACE FUNCTION brain._insert_waiting(s brain.embedding_space, max_rows integer, wait boolean,
                                                 also_kind text DEFAULT NULL, also_project text DEFAULT NULL,
                                                 OUT indexed integer, OUT folded integer)
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ids bigint[];
BEGIN
    indexed := 0;
    folded := 0;
    s := brain._lock_indexer(s, wait);
    IF s.space_id IS NULL THEN
        RETURN;
    END IF;
    ids := ARRAY(SELECT w.memory_id FROM brain._waiting_vectors(s) AS w
                 ORDER BY w.ingest_seq, w.memory_id LIMIT max_rows);
    PERFORM brain._lock_writes_of(ids, also_kind, also_project);
    UPDATE brain.embedding e SET ingest_seq = 0
    WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.memory_id = ANY (ids)
      AND e.ingest_seq > s.indexed_through;
    GET DIAGNOSTICS indexed = ROW_COUNT;
    folded := brain._fold_near_identical(s, ids);
END
$$;

-- The dedup a rebuild owes, for the oldest batches it took in (about
-- max_rows vectors, whole batches), with the writers of their kinds and
-- projects waiting; then folded_through moves past them. How many it folded.
CREATE OR REPLACE FUNCTION brain._fold_indexed(s brain.embedding_space, max_rows integer)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    through bigint;
    ids bigint[];
    n integer;
BEGIN
    SELECT max(w.ingest_seq) INTO through
    FROM (SELECT e.ingest_seq FROM brain.embedding e
          WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id
            AND e.ingest_seq > 0 AND e.ingest_seq > s.folded_through AND e.ingest_seq <= s.indexed_through
          ORDER BY e.ingest_seq LIMIT max_rows) AS w;
    through := coalesce(through, s.indexed_through);
    ids := ARRAY(SELECT e.memory_id FROM brain.embedding e
                 WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id
                   AND e.ingest_seq > 0 AND e.ingest_seq > s.folded_through AND e.ingest_seq <= through
                 ORDER BY e.memory_id);
    PERFORM brain._lock_writes_of(ids);
    n := brain._fold_near_identical(s, ids);
    UPDATE brain.embedding_space es SET folded_through = least(through, es.indexed_through)
    WHERE es.workspace_id = s.workspace_id AND es.space_id = s.space_id;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION brain.index_vectors(embedding_space text DEFAULT NULL, max_rows integer DEFAULT 1000)
RETURNS jsonb
LANGUAGE plpgsql
-- Moves the space's watermarks and builds and drops its indexes, which need
-- the table owner; everything it touches is of the caller's workspace.
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    s brain.embedding_space := brain._resolve_space(embedding_space);
    started timestamptz := clock_timestamp();
    how text := 'none';
    busy boolean := false;
    n_indexed integer := 0;
    n_folded integer := 0;
    n_waiting bigint;
    n_in_index bigint;
    done record;
BEGIN
    PERFORM brain.current_workspace('write');
    IF max_rows IS NULL OR max_rows < 1 THEN
        PERFORM brain._raise('BR009', 'max_rows is at least 1.', jsonb_build_object('max_rows', max_rows),
            'The default is 1000.');
    END IF;
    s := brain._lock_indexer(s, true);

    -- One step per call, in its own transaction; callers repeat until 'none'.
    -- 1. The index a rebuild replaced (single writes go into both until then).
    BEGIN
        IF brain._drop_replaced_indexes(s.space_id) > 0 THEN
            how := 'dropped';
        END IF;
    EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
        busy := true;  -- someone is using the table: another time; go on with the rest
    END;
    IF how = 'none' AND s.folded_through < s.indexed_through THEN
        -- 2. The dedup owed by the vectors a rebuild took in.
        n_folded := brain._fold_indexed(s, max_rows);
        how := 'folded';
    ELSIF how = 'none' THEN
        SELECT count(*) INTO n_waiting FROM brain._waiting_vectors(s);
        SELECT count(*) INTO n_in_index FROM brain.embedding e
        WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.ingest_seq <= s.indexed_through;
        IF n_waiting > 0
           AND n_waiting >= n_in_index * (brain.setting('index_rebuild_share'))::double precision THEN
            -- 3. Many waiting: a new index of the whole space, built in memory,
            --    costs less than inserting them one by one. Not while an old
            --    index is still to be dropped.
            IF NOT busy THEN
                s := brain._build_space_index(s.space_id);
                how := 'rebuilt';
                n_indexed := n_waiting;
            END IF;
        ELSIF n_waiting > 0 THEN
            -- 4. A few: into the index one by one, with their dedup.
            done := brain._insert_waiting(s, max_rows, true);
            how := 'inserted';
            n_indexed := done.indexed;
            n_folded := done.folded;
        END IF;
        IF how = 'none' AND busy THEN
            how := 'busy';
        END IF;
    END IF;
    SELECT count(*) INTO n_waiting FROM brain._waiting_vectors(s);
    RETURN jsonb_build_object('space', s.provider || ':' || s.model, 'action', how,
                              'indexed', n_indexed, 'folded', n_folded, 'waiting', n_waiting,
                              'seconds', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
END
$$;
COMMENT ON FUNCTION brain.index_vectors IS
    'Takes the vectors that large observe_batch calls left out of the HNSW index into it, one step per call (repeat until action is none): drops an index a rebuild replaced (dropped; when the table is in use it goes on with the other steps, and says busy if none had work); runs the near-identical dedup owed by vectors a rebuild took in (folded: a fold keeps the longer text and tombstones the other); rebuilds the space''s index in memory when the waiting vectors are at least index_rebuild_share (0.25) of the indexed ones (rebuilt: writers of embeddings wait meanwhile, searches go on); or inserts the oldest max_rows and runs their dedup (inserted). `brain worker` calls it.';
