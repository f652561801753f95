-- Curation: ratings, annotations, pins, confirmation, and workspace statistics.

CREATE OR REPLACE FUNCTION brain.rate(id bigint, direction text, source text DEFAULT NULL,
                                      request_key text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- sent again with its key: the first call's answer, and nothing counted (004c-write-requests.sql)
    kept jsonb := brain._request_answer(request_key, 'rate',
        jsonb_build_object('id', id, 'direction', direction, 'source', source));
    mem brain.memory;
    answer jsonb;
BEGIN
    IF kept IS NOT NULL THEN
        RETURN kept;
    END IF;
    mem := brain._get_memory(id, lock => true);
    PERFORM brain._refuse_secrets(jsonb_build_object('direction', direction, 'source', source));
    IF direction IS NULL OR lower(direction) NOT IN ('up', 'down') THEN
        PERFORM brain._raise('BR009', 'A rating is up or down.',
            jsonb_build_object('field', 'direction'), 'Rate up a memory that helped, down one that misled.');
    END IF;
    UPDATE brain.memory m
    SET upvotes = m.upvotes + (lower(direction) = 'up')::integer,
        downvotes = m.downvotes + (lower(direction) = 'down')::integer
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id
    RETURNING m.upvotes, m.downvotes INTO mem.upvotes, mem.downvotes;
    PERFORM brain._audit(mem.memory_id, 'rate', source, jsonb_build_object('direction', lower(direction)));
    PERFORM brain._note_use(ARRAY[mem.memory_id], 'rate');
    answer := jsonb_build_object('id', mem.memory_id, 'upvotes', mem.upvotes, 'downvotes', mem.downvotes,
                                 'rating', mem.upvotes - mem.downvotes);
    PERFORM brain._keep_answer(request_key, answer);
    RETURN answer;
END
$$;
COMMENT ON FUNCTION brain.rate IS
    'Counts a rating (up or down). The rating (up - down) weighs the memory in search. With a request_key, the same call sent again is answered as the first time and counts nothing (docs/sql-api.md, "Requests sent again").';

CREATE OR REPLACE FUNCTION brain.annotate(id bigint, note text, source text DEFAULT NULL,
                                          request_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- sent again with its key: the annotation the first call stored (004c-write-requests.sql)
    kept jsonb := brain._request_answer(request_key, 'annotate',
        jsonb_build_object('id', id, 'note', note, 'source', source));
    mem brain.memory;
    new_id bigint;
BEGIN
    IF kept IS NOT NULL THEN
        RETURN kept::bigint;
    END IF;
    mem := brain._get_memory(id);
    PERFORM brain._require_text(note, 'BR009', 'An annotation needs a note.',
        'Say what to know about the memory: a correction, a gotcha, a link.');
    IF brain.word_count(note) > 400 OR length(note) > 20000 THEN
        PERFORM brain._raise('BR005', 'The note is longer than 400 words or 20000 characters.',
            jsonb_build_object('words', brain.word_count(note), 'characters', length(note)),
            'Keep annotations short.');
    END IF;
    PERFORM brain._refuse_secrets(jsonb_build_object('note', note, 'source', source));
    INSERT INTO brain.annotation (workspace_id, memory_id, note, source)
    VALUES (mem.workspace_id, mem.memory_id, brain.trim_space(note), source)
    RETURNING annotation_id INTO new_id;
    PERFORM brain._audit(mem.memory_id, 'annotate', source,
        jsonb_build_object('annotation_id', new_id, 'note', brain.trim_space(note)));
    PERFORM brain._keep_answer(request_key, to_jsonb(new_id));
    RETURN new_id;
END
$$;
COMMENT ON FUNCTION brain.annotate IS
    'Attaches a note (a correction, a gotcha) to a memory; recall shows its annotations. Returns the annotation id. With a request_key, the same call sent again returns the same id and stores nothing.';

CREATE OR REPLACE FUNCTION brain._set_pinned(id bigint, value boolean, source text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory := brain._get_memory(id, lock => true);
BEGIN
    IF mem.state = 'tombstoned' THEN
        PERFORM brain._raise('BR011', format('Memory #%s was forgotten.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id), 'Pin its replacement, if there is one.');
    END IF;
    IF mem.pinned = value THEN
        RETURN false;
    END IF;
    UPDATE brain.memory m SET pinned = value, updated_at = now()
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, CASE WHEN value THEN 'pin' ELSE 'unpin' END, source);
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION brain.pin(id bigint, source text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql  -- (the write guard trusts a PL/pgSQL frame: it names its schema)
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN RETURN brain._set_pinned(id, true, source); END $$;
COMMENT ON FUNCTION brain.pin IS 'Pins a memory (loaded at boot, weighted up in search). False when it already was.';

CREATE OR REPLACE FUNCTION brain.unpin(id bigint, source text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql  -- (the write guard trusts a PL/pgSQL frame: it names its schema)
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN RETURN brain._set_pinned(id, false, source); END $$;
COMMENT ON FUNCTION brain.unpin IS 'Unpins a memory. False when it was not pinned.';

CREATE OR REPLACE FUNCTION brain.confirm(id bigint, source text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory := brain._get_memory(id, lock => true);
BEGIN
    IF mem.state NOT IN ('active', 'archived') THEN
        PERFORM brain._raise('BR011', format('Memory #%s is %s; only a current memory can be confirmed.',
                                             mem.memory_id, mem.state),
            jsonb_build_object('id', mem.memory_id, 'state', mem.state,
                               'current', brain.current_version(mem.memory_id)),
            'Confirm the current version instead.');
    END IF;
    UPDATE brain.memory m SET last_confirmed_at = now(), updated_at = now()
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._refresh_dormancy(mem.memory_id);
    PERFORM brain._audit(mem.memory_id, 'confirm', source);
    RETURN jsonb_build_object('id', mem.memory_id, 'last_confirmed_at', now(),
        'dormant_after', (SELECT m.dormant_after FROM brain.memory m
                          WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id));
END
$$;
COMMENT ON FUNCTION brain.confirm IS
    'Records that a memory is still true: resets a fact''s decay (a dormant fact is active again).';

-- Memories of this workspace still without an embedding in the active space.
CREATE OR REPLACE FUNCTION brain._pending_embedding_count()
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*)
    FROM brain.memory m, brain.active_embedding_space() AS space
    WHERE m.workspace_id = brain.current_workspace() AND m.state <> 'tombstoned'
      AND NOT EXISTS (SELECT FROM brain.embedding e
                      WHERE e.workspace_id = m.workspace_id AND e.space_id = space.space_id
                        AND e.memory_id = m.memory_id)
$$;

-- The active space's texts the embedder refused: waiting for another try, and parked.
CREATE OR REPLACE FUNCTION brain._embedding_failures()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('retrying', count(*) FILTER (WHERE f.parked_at IS NULL),
                              'parked', count(*) FILTER (WHERE f.parked_at IS NOT NULL))
    FROM brain.embedding_failure f, brain.active_embedding_space() AS space
    WHERE f.workspace_id = brain.current_workspace() AND f.space_id = space.space_id
$$;

CREATE OR REPLACE FUNCTION brain.stats()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH m AS (
        SELECT * FROM brain.memory WHERE workspace_id = brain.current_workspace()
    ), space AS (
        SELECT * FROM brain.active_embedding_space()
    )
    SELECT jsonb_build_object(
        'workspace', brain.current_workspace(),
        'memories', (SELECT count(*) FROM m),
        'by_kind', coalesce((SELECT jsonb_object_agg(kind, n) FROM
                             (SELECT kind, count(*) AS n FROM m WHERE state = 'active' GROUP BY kind) x), '{}'),
        'by_state', coalesce((SELECT jsonb_object_agg(state, n) FROM
                              (SELECT state, count(*) AS n FROM m GROUP BY state) x), '{}'),
        'dormant_facts', (SELECT count(*) FROM m WHERE state = 'active' AND dormant_after <= now()),
        'pinned', (SELECT count(*) FROM m WHERE state = 'active' AND pinned),
        'skills', (SELECT count(*) FROM m WHERE state = 'active' AND skill_trigger IS NOT NULL),
        'annotations', (SELECT count(*) FROM brain.annotation a
                        WHERE a.workspace_id = brain.current_workspace()),
        'active_space', (SELECT CASE WHEN space.space_id IS NOT NULL
                                     THEN space.provider || ':' || space.model END FROM space),
        'pending_embeddings', brain._pending_embedding_count(),
        'embedding_failures', brain._embedding_failures(),
        -- vectors of large batches that wait for brain.index_vectors
        'unindexed_vectors', (SELECT count(*) FROM space, brain._waiting_vectors(space) AS w),
        'oldest', (SELECT min(created_at) FROM m),
        'newest', (SELECT max(created_at) FROM m)
    )
$$;
COMMENT ON FUNCTION brain.stats IS
    'Counts for this workspace: memories by kind (active) and state, dormant facts, pins, skills, annotations, the active space, its pending embeddings, the texts its embedder refused (retrying, parked) and the vectors waiting for its HNSW index.';
