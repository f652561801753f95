-- Belief revision: supersede, unsupersede, forget, and recall with a banner
-- that points at the current truth.

CREATE OR REPLACE FUNCTION brain._get_memory(id bigint, lock boolean DEFAULT false)
RETURNS brain.memory
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory;
BEGIN
    IF lock THEN
        SELECT * INTO mem FROM brain.memory m
        WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = id FOR UPDATE;
    ELSE
        SELECT * INTO mem FROM brain.memory m
        WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = id;
    END IF;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', id),
            jsonb_build_object('id', id), 'Find memories with brain search or brain.list_recent.');
    END IF;
    RETURN mem;
END
$$;

CREATE OR REPLACE FUNCTION brain.current_version(id bigint)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH RECURSIVE chain AS (
        SELECT m.memory_id, m.superseded_by, 0 AS depth
        FROM brain.memory m
        WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = id
        UNION ALL
        SELECT m.memory_id, m.superseded_by, chain.depth + 1
        FROM chain
        JOIN brain.memory m ON m.workspace_id = brain.current_workspace()
                            AND m.memory_id = chain.superseded_by
        WHERE chain.depth < 10000
    )
    SELECT memory_id FROM chain ORDER BY depth DESC LIMIT 1
$$;
COMMENT ON FUNCTION brain.current_version IS
    'The end of a memory''s supersede chain: the memory that holds the current belief (itself when not superseded).';

-- A write sent with on_related => 'supersede' that found no memory to replace
-- is refused, saying why: what the writer asked for did not happen, and two
-- active memories would state the old and the new value. near_ids/near_sims:
-- the write's lookup (brain._near_write) of its kind and project.
CREATE OR REPLACE FUNCTION brain._nothing_to_supersede(kind text, project text, origin text,
                                                       space brain.embedding_space, vec public.vector,
                                                       near_ids bigint[], near_sims real[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    candidate brain.memory;
    sim real;
    why text;
BEGIN
    IF origin NOT IN ('explicit', 'overlay') THEN
        why := format('a write of origin %s is a record of what was said and replaces nothing', origin);
    ELSIF kind = 'incident' THEN
        why := 'incidents are not matched by similarity';
    ELSIF vec IS NULL THEN
        why := 'the write has no embedding (queued for the worker), so no related memory could be looked up';
    ELSE
        -- (the write took an authored memory at this similarity: one found is captured)
        SELECT x.memory_id, x.similarity INTO candidate.memory_id, sim
        FROM unnest(near_ids, near_sims) AS x(memory_id, similarity)
        WHERE x.similarity >= space.related
        ORDER BY x.similarity DESC, x.memory_id
        LIMIT 1;
        SELECT * INTO candidate FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = candidate.memory_id;
        IF candidate.memory_id IS NOT NULL THEN
            why := format('the related #%s "%s" (similarity %s) is a captured %s (origin %s), which a write never '
                          'replaces', candidate.memory_id, candidate.headline, round(sim::numeric, 3),
                          CASE WHEN candidate.origin = 'observed' THEN 'turn' ELSE 'text' END, candidate.origin);
        ELSE
            SELECT x.memory_id, x.similarity INTO candidate.memory_id, sim
            FROM brain._nearest_k(space, vec, kind, ARRAY[project], NULL, 1) AS x;
            SELECT * INTO candidate FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = candidate.memory_id;
            why := CASE WHEN candidate.memory_id IS NULL
                        THEN format('no active %s in %s to supersede', kind,
                                    CASE WHEN project = '' THEN 'the global scope' ELSE format('project %s', project) END)
                        ELSE format('the nearest %s, #%s "%s", has similarity %s, below the related threshold %s',
                                    kind, candidate.memory_id, candidate.headline, round(sim::numeric, 3),
                                    round(space.related::numeric, 3)) END;
        END IF;
    END IF;
    PERFORM brain._raise('BR010', format('Nothing to supersede: %s; nothing was stored.', why),
        jsonb_build_object('on_related', 'supersede', 'candidate', candidate.memory_id,
                           'similarity', round(sim::numeric, 3), 'threshold', space.related),
        CASE WHEN candidate.memory_id IS NOT NULL
             THEN format('To replace #%1$s, supersede it by its id: brain supersede %1$s HEADLINE --reason ... '
                         '(SQL: brain.supersede(old_id => %1$s, ...)); ', candidate.memory_id)
             ELSE 'To replace a memory, supersede it by its id: brain supersede ID HEADLINE --reason ... '
                  '(SQL: brain.supersede(old_id => ID, ...)); ' END
        || 'to keep both, store this one with --on-related store (SQL: on_related => ''store'').');
END
$$;

-- A memory about to change by action (supersede, forget): the reason given
-- first (BR014: needs, with an example), then the memory, locked, and the
-- lifecycle's leave for the action from its state (BR011).
CREATE OR REPLACE FUNCTION brain._changing(id bigint, action text, reason text, needs text, example text)
RETURNS brain.memory
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory;
BEGIN
    PERFORM brain._require_text(reason, 'BR014', needs, example);
    mem := brain._get_memory(id, lock => true);
    PERFORM brain._check_transition(mem, action);
    RETURN mem;
END
$$;

CREATE OR REPLACE FUNCTION brain.supersede(
    old_id bigint,
    headline text,
    reason text,
    body text DEFAULT '',
    source text DEFAULT NULL,
    inherit_pinned boolean DEFAULT false,
    embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    severity text DEFAULT NULL,
    category text DEFAULT NULL,
    tags text[] DEFAULT NULL,
    skill_trigger jsonb DEFAULT NULL,
    metadata jsonb DEFAULT NULL,
    session_id bigint DEFAULT NULL,
    check_only boolean DEFAULT false,
    on_related text DEFAULT 'refuse'
)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    old brain.memory;
    old_rule brain.rule;
    old_fact brain.fact;
    old_task brain.task;
    old_incident brain.incident;
    recorded boolean;
    d brain.memory_draft;
    r brain.write_result;
BEGIN
    old := brain._changing(old_id, 'supersede', reason, 'A supersede needs a reason.',
        'Say why the old memory is no longer true, e.g. reason => ''v0.7 changed the start-up''.');

    SELECT * INTO old_rule FROM brain.rule t WHERE t.workspace_id = ws AND t.memory_id = old.memory_id;
    SELECT * INTO old_fact FROM brain.fact t WHERE t.workspace_id = ws AND t.memory_id = old.memory_id;
    SELECT * INTO old_task FROM brain.task t WHERE t.workspace_id = ws AND t.memory_id = old.memory_id;
    SELECT * INTO old_incident FROM brain.incident t WHERE t.workspace_id = ws AND t.memory_id = old.memory_id;

    -- the new version: the old one's kind, scope, provenance and kind fields, with what was given;
    -- a captured turn or text (a record of what was said) is replaced by an authored memory:
    -- explicit, its own category and source, none of the record's transcript reference or role
    recorded := old.origin NOT IN ('explicit', 'overlay');
    d := brain._draft_details(
        brain._draft(old.kind, headline, body, coalesce(category, CASE WHEN NOT recorded THEN old.category END),
                     CASE WHEN recorded THEN 'explicit' ELSE old.origin END, old.project,
                     tags => coalesce(tags, CASE WHEN NOT recorded THEN old.tags END), importance => old.importance,
                     pinned => inherit_pinned AND old.pinned, skill_trigger => coalesce(skill_trigger, old.skill_trigger),
                     metadata => coalesce(metadata, CASE WHEN NOT recorded THEN old.metadata END),
                     embedding => embedding, embedding_space => embedding_space, source_agent => source,
                     session_id => session_id, source_system => CASE WHEN NOT recorded THEN old.source_system END,
                     source_ref => CASE WHEN NOT recorded THEN old.source_ref END, expires_at => old.expires_at,
                     supersedes => old.memory_id),
        CASE WHEN old.kind = 'rule' THEN coalesce(severity, old_rule.severity) ELSE severity END,
        old_fact.halflife_days,
        CASE WHEN old_task.status = 'stale' THEN 'open' ELSE old_task.status END,
        old_task.priority, old_task.due_at,
        old_incident.what_was_wrong, old_incident.what_is_correct, old_incident.error_message,
        old_incident.command_attempted, old_incident.related_files, old_incident.complexity);
    r := brain._write(d, check_only, on_related, reason);
    IF check_only THEN
        RETURN r;
    END IF;
    IF r.memory_id = old.memory_id THEN
        PERFORM brain._raise('BR011', format('The new text is the same as memory #%s.', old.memory_id),
            jsonb_build_object('id', old.memory_id), 'Change the text, or leave the memory as it is.');
    END IF;

    PERFORM brain._mark_superseded(old, r.memory_id, reason, source);
    PERFORM brain._note_use(ARRAY[old.memory_id], 'supersede', session_id);
    RETURN r;
END
$$;
COMMENT ON FUNCTION brain.supersede IS
    'Replaces a belief: the new text goes through the same write gate (kind, project and kind details are inherited; pinning only with inherit_pinned; a captured turn or text is replaced by an authored memory: origin explicit, the given category and source, none of the record''s transcript reference, role or tags), the old memory is kept, marked superseded and linked to the new one, and leaves default reads. A rule''s old version becomes DEPRECATED. reason is required. on_related (refuse, store, supersede) decides what a related hit on another memory does, as in brain.remember.';

CREATE OR REPLACE FUNCTION brain.unsupersede(id bigint, source text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    old brain.memory := brain._get_memory(id, lock => true);
    successor brain.memory;
BEGIN
    PERFORM brain._check_transition(old, 'unsupersede');
    successor := brain._get_memory(old.superseded_by, lock => true);
    IF successor.state = 'superseded' THEN
        PERFORM brain._raise('BR011',
            format('#%s, which replaced #%s, has itself been superseded by #%s.', successor.memory_id,
                   old.memory_id, successor.superseded_by),
            jsonb_build_object('id', old.memory_id, 'successor', successor.memory_id,
                               'successor_superseded_by', successor.superseded_by),
            format('Unsupersede #%s first.', successor.memory_id));
    END IF;

    -- A successor created by this supersede is withdrawn with it; a memory that
    -- existed on its own (the supersede deduplicated onto it) stays.
    IF successor.supersedes = old.memory_id AND successor.state = 'active' THEN
        UPDATE brain.memory m
        SET state = 'tombstoned', forget_reason = format('supersede of #%s reverted', old.memory_id),
            forgotten_at = now(), updated_at = now()
        WHERE m.workspace_id = ws AND m.memory_id = successor.memory_id;
        PERFORM brain._audit(successor.memory_id, 'forget', source,
            jsonb_build_object('reason', 'unsupersede', 'restored', old.memory_id));
    END IF;

    BEGIN
        UPDATE brain.memory m
        SET state = 'active', superseded_by = NULL, superseded_at = NULL, supersede_reason = NULL,
            updated_at = now()
        WHERE m.workspace_id = ws AND m.memory_id = old.memory_id;
    EXCEPTION WHEN unique_violation THEN
        PERFORM brain._raise('BR011',
            format('An active memory with the same text as #%s exists now.', old.memory_id),
            jsonb_build_object('id', old.memory_id), 'Forget or supersede that memory first.');
    END;
    UPDATE brain.rule t SET severity = t.prior_severity, prior_severity = NULL
    WHERE t.workspace_id = ws AND t.memory_id = old.memory_id AND t.prior_severity IS NOT NULL;
    -- the memories it marked as stating the old value are current again
    PERFORM brain._unmark_dependents(old.memory_id, successor.memory_id);
    PERFORM brain._audit(old.memory_id, 'unsupersede', source,
        jsonb_build_object('was_superseded_by', successor.memory_id));
    RETURN old.memory_id;
END
$$;
COMMENT ON FUNCTION brain.unsupersede IS
    'Reverts a supersede: the old memory is active again (a deprecated rule gets its severity back), the marks of the memories that state its old value go (brain.stale), and the memory created by that supersede is tombstoned. Refused when the successor has itself been superseded.';

CREATE OR REPLACE FUNCTION brain.forget(id bigint, reason text, replaced_by bigint DEFAULT NULL,
                                        source text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    mem brain.memory;
BEGIN
    mem := brain._changing(id, 'forget', reason, 'Forgetting a memory needs a reason.',
        'Say why, e.g. reason => ''the service was decommissioned''.');
    IF replaced_by IS NOT NULL THEN
        IF replaced_by = mem.memory_id THEN
            PERFORM brain._raise('BR009', 'A memory cannot replace itself.', NULL,
                'Leave replaced_by out, or name the memory that holds the truth now.');
        END IF;
        IF (brain._get_memory(replaced_by)).state = 'tombstoned' THEN
            PERFORM brain._raise('BR011', format('#%s was forgotten and cannot replace anything.', replaced_by),
                jsonb_build_object('replaced_by', replaced_by), 'Name a current memory, or none.');
        ELSIF (brain._get_memory(replaced_by)).state = 'superseded' THEN
            PERFORM brain._raise('BR011', format('#%s is superseded and cannot replace anything.', replaced_by),
                jsonb_build_object('replaced_by', replaced_by, 'current', brain.current_version(replaced_by)),
                format('Name the current version, #%s.', brain.current_version(replaced_by)));
        END IF;
    END IF;

    UPDATE brain.memory m
    SET state = 'tombstoned', forget_reason = brain.trim_space(reason), replaced_by = forget.replaced_by,
        forgotten_at = now(), updated_at = now()
    WHERE m.workspace_id = ws AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, 'forget', source,
        jsonb_build_object('reason', brain.trim_space(reason), 'replaced_by', replaced_by));
    RETURN mem.memory_id;
END
$$;
COMMENT ON FUNCTION brain.forget IS
    'Tombstones a memory with a reason (and optionally the memory that replaces it). The row and its audit trail stay; only an explicit prune deletes.';

-- The items folded into a memory, oldest fold first.
CREATE OR REPLACE FUNCTION brain._folds(id bigint)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'fold_id', f.fold_id, 'folded_memory_id', f.folded_memory_id, 'displaced', f.displaced,
               'headline', f.headline, 'body', f.body, 'metadata', f.metadata,
               'source_agent', f.source_agent, 'session_id', f.session_id,
               'source_system', f.source_system, 'source_ref', f.source_ref, 'source_hash', f.source_hash,
               'created_at', f.item_created_at, 'similarity', f.similarity, 'folded_at', f.folded_at)
           ORDER BY f.fold_id), '[]')
    FROM brain.memory_fold f
    WHERE f.workspace_id = brain.current_workspace() AND f.memory_id = id
$$;

-- A recall is a read and a count. brain.recall_view is the read (a streaming
-- replica serves it: pybrain.client.REPLICA_READS), brain.count_recall the
-- count (the primary's); brain.recall does both in one call. A client with a
-- replica calls the view there and then the count on the primary, so its
-- answer shows the memory as it was before this recall was counted.
CREATE OR REPLACE FUNCTION brain.recall_view(id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    mem brain.memory := brain._get_memory(id);
    current_id bigint;
    current_headline text;
    banner text;
BEGIN
    IF mem.state = 'superseded' THEN
        current_id := brain.current_version(mem.memory_id);
        SELECT m.headline INTO current_headline FROM brain.memory m
        WHERE m.workspace_id = ws AND m.memory_id = current_id;
        banner := format('SUPERSEDED on %s by #%s (reason: %s). Current version: #%s "%s".',
            to_char(mem.superseded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), mem.superseded_by,
            mem.supersede_reason, current_id, current_headline);
    ELSIF mem.state = 'tombstoned' THEN
        banner := format('FORGOTTEN: %s.', mem.forget_reason)
            || CASE WHEN mem.replaced_by IS NOT NULL
                    THEN format(' Replaced by #%s.', brain.current_version(mem.replaced_by)) ELSE '' END;
        -- NULL when nothing replaced it: a forgotten belief has no current version.
        current_id := CASE WHEN mem.replaced_by IS NOT NULL THEN brain.current_version(mem.replaced_by) END;
    ELSIF mem.state = 'archived' THEN
        banner := 'ARCHIVED: kept for reference, not in default search.';
    END IF;

    RETURN brain.memory_json(mem.memory_id)
        || jsonb_build_object('banner', banner, 'current_id',
                              CASE WHEN mem.state = 'tombstoned' THEN current_id
                                   ELSE coalesce(current_id, mem.memory_id) END,
                              'folds', brain._folds(mem.memory_id));
END
$$;
COMMENT ON FUNCTION brain.recall_view IS
    'The whole memory as brain.recall returns it, counting nothing: what a streaming replica serves of a recall (brain.count_recall counts it on the primary).';

CREATE OR REPLACE FUNCTION brain.count_recall(id bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    mem brain.memory := brain._get_memory(id);
BEGIN
    -- A reader's recall is not counted: counting is a write.
    IF brain.workspace_access(ws) <> 'read' THEN
        UPDATE brain.memory m
        SET access_count = m.access_count + 1, last_accessed = now()
        WHERE m.workspace_id = ws AND m.memory_id = mem.memory_id;
        -- Recalling a fact resets its decay: a dormant fact is active again.
        PERFORM brain._refresh_dormancy(mem.memory_id);
        -- Loading a trajectory's steps is a use of it.
        IF mem.kind = 'trajectory' THEN
            UPDATE brain.trajectory t SET times_used = t.times_used + 1, last_used_at = now()
            WHERE t.workspace_id = ws AND t.memory_id = mem.memory_id;
        END IF;
    END IF;
    -- Recalled in a session that was shown it: that injection was used.
    PERFORM brain._note_use(ARRAY[mem.memory_id], 'recall');
    -- A trajectory's steps loaded in a session are an injection of their own.
    IF mem.kind = 'trajectory' AND brain._session() IS NOT NULL THEN
        PERFORM brain.record_injection('trajectory', ARRAY[mem.memory_id],
                                       brain.estimate_tokens(brain.trajectory_text(mem.memory_id)));
    END IF;
END
$$;
COMMENT ON FUNCTION brain.count_recall IS
    'Counts a recall of a memory as brain.recall does (its access, a dormant fact active again, a trajectory''s use, the use of an injection that showed it in the session) and returns nothing: the primary''s half of a recall whose memory a replica read (brain.recall_view).';

CREATE OR REPLACE FUNCTION brain.recall(id bigint)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain.count_recall(id);
    RETURN brain.recall_view(id);
END
$$;
COMMENT ON FUNCTION brain.recall IS
    'The whole memory as JSON, and counts the access; folds lists the near-identical items folded into it (brain.memory_fold), each with its own text, metadata, provenance and time. A superseded memory carries a banner naming the current version at the end of its supersede chain; a forgotten one says why. Its halves, for a client that reads from a replica: brain.recall_view (the read) and brain.count_recall (the count).';
