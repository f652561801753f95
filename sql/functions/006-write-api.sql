-- The write API of one memory: brain.remember, and the queue of writes that
-- still need an embedding (brain.attach_embedding, brain.pending_embeddings).

CREATE OR REPLACE FUNCTION brain.remember(
    kind text,
    headline text,
    body text DEFAULT '',
    category text DEFAULT NULL,
    origin text DEFAULT 'explicit',
    project text DEFAULT '',
    severity text DEFAULT NULL,
    tags text[] DEFAULT '{}',
    importance double precision DEFAULT NULL,
    pinned boolean DEFAULT false,
    skill_trigger jsonb DEFAULT NULL,
    metadata jsonb DEFAULT '{}',
    embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    source_agent text DEFAULT NULL,
    session_id bigint DEFAULT NULL,
    source_system text DEFAULT NULL,
    source_ref text DEFAULT NULL,
    source_hash text DEFAULT NULL,
    expires_at timestamptz DEFAULT NULL,
    halflife_days double precision DEFAULT NULL,
    status text DEFAULT NULL,
    priority integer DEFAULT NULL,
    due_at timestamptz DEFAULT NULL,
    what_was_wrong text DEFAULT NULL,
    what_is_correct text DEFAULT NULL,
    error_message text DEFAULT NULL,
    command_attempted text DEFAULT NULL,
    related_files text[] DEFAULT '{}',
    complexity text DEFAULT NULL,
    check_only boolean DEFAULT false,
    on_related text DEFAULT 'refuse',
    reason text DEFAULT NULL
)
RETURNS brain.write_result
LANGUAGE plpgsql  -- (the write guard trusts a PL/pgSQL frame: it names its schema)
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain._write(brain._draft_details(
        brain._draft(kind, headline, body, category, origin, project, tags => tags, importance => importance,
                     pinned => pinned, skill_trigger => skill_trigger, metadata => metadata, embedding => embedding,
                     embedding_space => embedding_space, source_agent => source_agent, session_id => session_id,
                     source_system => source_system, source_ref => source_ref, source_hash => source_hash,
                     expires_at => expires_at),
        severity, halflife_days, status, priority, due_at, what_was_wrong, what_is_correct, error_message,
        command_attempted, related_files, complexity), check_only, on_related, reason);
END
$$;
COMMENT ON FUNCTION brain.remember IS
    'Stores a memory through the write gate: validation (BR001-BR007, BR009), exact dedup, semantic dedup against the active embedding space (near-identical with the same distinguishing terms: folded, the longer text kept and the other recorded in brain.memory_fold; related and not a distinct fact: the on_related policy decides — refuse (BR008, the default), store (created, duplicate_of names the related memory) or supersede (the related memory, a distinct fact of another value too, is superseded by the new one, with reason or a generated one; none found: BR010 saying why)), extraction of tags, people, topics and action items, and an audit row. Without an embedding the memory is stored and queued for `brain worker`. check_only => true validates and returns the embedding input without writing.';

CREATE OR REPLACE FUNCTION brain.attach_embedding(
    memory_id bigint,
    embedding double precision[],
    embedding_space text DEFAULT NULL
)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    space brain.embedding_space := brain._resolve_space(embedding_space);
    vec public.vector := brain._check_vector(embedding, space);
    mem brain.memory;
    near record;
    r brain.write_result;
BEGIN
    SELECT * INTO mem FROM brain.memory m
    WHERE m.workspace_id = ws AND m.memory_id = attach_embedding.memory_id FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', attach_embedding.memory_id),
            jsonb_build_object('id', attach_embedding.memory_id),
            'Take ids from brain.pending_embeddings().');
    END IF;

    PERFORM brain._store_vectors(ARRAY[mem.memory_id], ARRAY[vec], space.space_id, replace => true);
    IF EXISTS (SELECT FROM brain.embedding_failure f
               WHERE f.workspace_id = ws AND f.space_id = space.space_id AND f.memory_id = mem.memory_id) THEN
        PERFORM brain._delete_embedding_failures(space.space_id, ARRAY[mem.memory_id]);  -- as the owner
    END IF;

    r := ROW('embedded', mem.memory_id, NULL, NULL, false,
             brain.embedding_input(mem.headline, mem.body, brain._embedding_title(mem.origin, mem.metadata)));
    IF NOT mem.dedup_pending OR space.state <> 'active' OR mem.state <> 'active' THEN
        RETURN r;
    END IF;

    UPDATE brain.memory m SET dedup_pending = false
    WHERE m.workspace_id = ws AND m.memory_id = mem.memory_id;
    IF mem.kind = 'incident' THEN
        RETURN r;
    END IF;

    PERFORM brain._lock_writes(mem.kind, mem.project);
    SELECT v.* INTO near
    FROM (SELECT array_agg(x.memory_id) AS ids, array_agg(x.similarity) AS sims
          FROM brain._near_write(space, vec, mem.kind, mem.project, mem.memory_id, space.related) AS x
          WHERE x.decides) AS l,
         brain._first_verdict(mem, l.ids, l.sims, space) AS v;
    IF near.verdict = 'fold' THEN
        -- Near-identical: fold the queued memory into the existing one.
        RETURN brain._fold_into(mem, (near.kept).memory_id, near.similarity, vec, space.space_id);
    END IF;
    IF near.verdict = 'related' THEN
        -- Related, and the writer is gone and cannot be told to supersede:
        -- keep the memory and flag the pair (authored memories only, as in remember).
        UPDATE brain.memory m
        SET metadata = m.metadata || jsonb_build_object('possible_duplicate_of', (near.kept).memory_id,
                                                        'similarity', near.similarity)
        WHERE m.workspace_id = ws AND m.memory_id = mem.memory_id;
        r.duplicate_of := (near.kept).memory_id;
        r.similarity := near.similarity;
    END IF;
    RETURN r;
END
$$;
COMMENT ON FUNCTION brain.attach_embedding IS
    'Stores a memory''s embedding in a space (the active one by default). For a write that was queued without one, then runs semantic dedup: near-identical with the same distinguishing terms folds it into the existing memory (the longer text kept, the other recorded in brain.memory_fold; the queued memory is tombstoned pointing there); related and not a distinct fact flags it in metadata.possible_duplicate_of.';

CREATE OR REPLACE FUNCTION brain.pending_embeddings(embedding_space text DEFAULT NULL,
                                                    max_results integer DEFAULT 64)
RETURNS TABLE (memory_id bigint, embedding_input text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH space AS MATERIALIZED (
        SELECT s.space_id, s.state FROM brain._resolve_space(pending_embeddings.embedding_space) AS s
    )
    SELECT m.memory_id, brain.embedding_input(m.headline, m.body, brain._embedding_title(m.origin, m.metadata))
    FROM brain.memory m, space
    WHERE m.workspace_id = brain.current_workspace()
      AND m.state <> 'tombstoned'
      AND (NOT EXISTS (SELECT FROM brain.embedding e
                       WHERE e.workspace_id = m.workspace_id AND e.space_id = space.space_id
                         AND e.memory_id = m.memory_id)
           -- embedded while its space was still being filled: the dedup is still owed
           OR m.dedup_pending AND m.state = 'active' AND space.state = 'active')
      -- a text the embedder refused waits for its next try, or is parked (brain.embedding_failed)
      AND NOT EXISTS (SELECT FROM brain.embedding_failure f
                      WHERE f.workspace_id = m.workspace_id AND f.space_id = space.space_id
                        AND f.memory_id = m.memory_id
                        AND (f.parked_at IS NOT NULL OR f.next_attempt_at > now()))
    ORDER BY m.dedup_pending DESC, m.memory_id
    LIMIT max_results
$$;
COMMENT ON FUNCTION brain.pending_embeddings IS
    'Memories that have no embedding in a space (the active one by default), and queued writes whose dedup is still owed, queued writes first: the work list of `brain worker` and `brain reembed`. Texts the embedder refused are left out until their next try is due, and for good once parked (brain.embedding_failed).';
