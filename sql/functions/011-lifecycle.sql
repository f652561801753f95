-- Each kind's lifecycle: immutable rules, task transitions, archive and
-- restore, a memory's history, and its tier.

-- The lifecycle as one table: every change of a memory's state and of a
-- task's status, and the action that makes it. The functions that change a
-- state check it first (brain._check_transition, for the refusals a caller
-- reads), and triggers check every change against it, whatever function or
-- statement made it (a change no row allows is refused, BR011).
CREATE OR REPLACE FUNCTION brain.lifecycle()
RETURNS TABLE (subject text, action text, from_state text, to_state text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT * FROM (VALUES
        ('memory', 'supersede', 'active', 'superseded'),
        ('memory', 'supersede', 'archived', 'superseded'),
        ('memory', 'supersede trajectory', 'active', 'superseded'),
        ('memory', 'unsupersede', 'superseded', 'active'),
        -- the memory an unsupersede withdraws (its supersede created it)
        ('memory', 'withdraw', 'active', 'tombstoned'),
        ('memory', 'forget', 'active', 'tombstoned'),
        ('memory', 'forget', 'archived', 'tombstoned'),
        -- a near-identical write folded into another memory; a document's chunk gone at its source
        ('memory', 'fold', 'active', 'tombstoned'),
        ('memory', 'remove at source', 'active', 'tombstoned'),
        ('memory', 'archive', 'active', 'archived'),
        -- brain.maintain: an incident untouched, a memory past its expiry
        ('memory', 'expire', 'active', 'archived'),
        ('memory', 'restore', 'archived', 'active'),
        ('memory', 'restore', 'tombstoned', 'active'),
        ('task', 'update', 'open', 'blocked'),
        ('task', 'update', 'open', 'done'),
        ('task', 'update', 'blocked', 'open'),
        ('task', 'update', 'blocked', 'done'),
        ('task', 'update', 'stale', 'open'),
        ('task', 'update', 'stale', 'blocked'),
        ('task', 'update', 'stale', 'done'),
        -- brain.maintain: open or blocked and idle for task_stale_days
        ('task', 'go stale', 'open', 'stale'),
        ('task', 'go stale', 'blocked', 'stale')
    ) AS t(subject, action, from_state, to_state)
$$;
COMMENT ON FUNCTION brain.lifecycle IS
    'Every allowed change of a memory''s state (subject memory) and of a task''s status (subject task), with the action that makes it: supersede, unsupersede, forget, archive, restore and the rest. The functions that change a state check it, and triggers refuse any change of state or status it does not hold (BR011).';

-- Refuses action on mem unless the lifecycle allows it from mem's state: the
-- refusal a caller of supersede, unsupersede, forget, archive or restore
-- reads, each in one place.
CREATE OR REPLACE FUNCTION brain._check_transition(mem brain.memory, action text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM brain.lifecycle() AS l
               WHERE l.subject = 'memory' AND l.action = _check_transition.action AND l.from_state = mem.state) THEN
        RETURN;
    END IF;
    IF action = 'supersede' AND mem.state = 'superseded' THEN
        PERFORM brain._raise('BR011',
            format('Memory #%s is already superseded by #%s.', mem.memory_id, mem.superseded_by),
            jsonb_build_object('id', mem.memory_id, 'superseded_by', mem.superseded_by,
                               'current', brain.current_version(mem.memory_id)),
            format('Supersede the current version, #%s, instead.', brain.current_version(mem.memory_id)));
    ELSIF action = 'supersede' AND mem.state = 'tombstoned' THEN
        PERFORM brain._raise('BR011', format('Memory #%s was forgotten.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id, 'forget_reason', mem.forget_reason),
            'Store the new text with brain.remember.');
    ELSIF action = 'supersede trajectory' THEN
        PERFORM brain._raise('BR011', format('Trajectory #%s is %s.', mem.memory_id, mem.state),
            jsonb_build_object('id', mem.memory_id, 'state', mem.state,
                               'current', brain.current_version(mem.memory_id)),
            format('Supersede the current version, #%s, instead.', brain.current_version(mem.memory_id)));
    ELSIF action = 'unsupersede' THEN
        PERFORM brain._raise('BR011', format('Memory #%s is not superseded (it is %s).', mem.memory_id, mem.state),
            jsonb_build_object('id', mem.memory_id, 'state', mem.state),
            'Only a superseded memory can be restored by unsupersede.');
    ELSIF action = 'forget' AND mem.state = 'tombstoned' THEN
        PERFORM brain._raise('BR011', format('Memory #%s is already forgotten.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id, 'forget_reason', mem.forget_reason),
            'Nothing to do: it is out of every default read.');
    ELSIF action = 'forget' AND mem.state = 'superseded' THEN
        PERFORM brain._raise('BR011',
            format('Memory #%s is superseded by #%s and already out of default reads.', mem.memory_id,
                   mem.superseded_by),
            jsonb_build_object('id', mem.memory_id, 'current', brain.current_version(mem.memory_id)),
            format('Forget the current version, #%s, if the belief itself is wrong.',
                   brain.current_version(mem.memory_id)));
    ELSIF action = 'archive' THEN
        PERFORM brain._raise('BR011', format('Memory #%s is %s; only an active memory is archived.',
                                             mem.memory_id, mem.state),
            jsonb_build_object('id', mem.memory_id, 'state', mem.state), 'Nothing to do.');
    ELSIF action = 'restore' AND mem.state = 'superseded' THEN
        PERFORM brain._raise('BR011', format('Memory #%s is superseded by #%s.', mem.memory_id, mem.superseded_by),
            jsonb_build_object('id', mem.memory_id, 'superseded_by', mem.superseded_by),
            format('Revert the supersede with brain.unsupersede(%s).', mem.memory_id));
    ELSIF action = 'restore' AND mem.state = 'active' THEN
        PERFORM brain._raise('BR011', format('Memory #%s is active.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id), 'Nothing to restore.');
    ELSE
        PERFORM brain._raise('BR011', format('Memory #%s is %s: %s does not apply.', mem.memory_id, mem.state, action),
            jsonb_build_object('id', mem.memory_id, 'state', mem.state, 'action', action), NULL);
    END IF;
END
$$;

-- Whatever changes a memory's state or a task's status: the lifecycle holds
-- the change. TG_ARGV: the subject (memory, task) and its column.
CREATE OR REPLACE FUNCTION brain._follows_lifecycle()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    what text := TG_ARGV[0];
    old_state text := to_jsonb(OLD) ->> TG_ARGV[1];
    new_state text := to_jsonb(NEW) ->> TG_ARGV[1];
BEGIN
    IF NOT EXISTS (SELECT FROM brain.lifecycle() AS l
                   WHERE l.subject = what AND l.from_state = old_state
                     AND l.to_state = new_state) THEN
        PERFORM brain._raise('BR011',
            format('A %s does not go from %s to %s.', CASE WHEN what = 'task' THEN 'task''s status' ELSE 'memory' END,
                   old_state, new_state),
            jsonb_build_object('id', OLD.memory_id, 'from', old_state, 'to', new_state),
            'brain.lifecycle() lists the changes there are and the functions that make them.');
    END IF;
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER memory_follows_lifecycle
    BEFORE UPDATE OF state ON brain.memory
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION brain._follows_lifecycle('memory', 'state');
CREATE OR REPLACE TRIGGER task_follows_lifecycle
    BEFORE UPDATE OF status ON brain.task
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION brain._follows_lifecycle('task', 'status');

CREATE OR REPLACE FUNCTION brain._rule_is_immutable()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._raise('BR015', format('Rule #%s cannot be edited: a rule''s text never changes.', OLD.memory_id),
        jsonb_build_object('id', OLD.memory_id),
        format('Supersede it with the corrected rule: brain.supersede(old_id => %s, headline => ..., reason => ...).',
               OLD.memory_id));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER rule_text_is_immutable
    BEFORE UPDATE OF headline, body, normalized, kind ON brain.memory
    FOR EACH ROW
    WHEN (OLD.kind = 'rule' AND (NEW.headline IS DISTINCT FROM OLD.headline
                                 OR NEW.body IS DISTINCT FROM OLD.body
                                 OR NEW.kind IS DISTINCT FROM OLD.kind))
    EXECUTE FUNCTION brain._rule_is_immutable();

-- A rule's severity changes only with its supersede (to DEPRECATED) or its
-- unsupersede (back to what it was).
CREATE OR REPLACE FUNCTION brain._rule_severity_follows_supersede()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    memory_state text;
BEGIN
    SELECT m.state INTO memory_state FROM brain.memory m
    WHERE m.workspace_id = NEW.workspace_id AND m.memory_id = NEW.memory_id;
    IF NEW.severity = 'DEPRECATED' AND memory_state = 'superseded'
       OR OLD.severity = 'DEPRECATED' AND memory_state = 'active' AND NEW.severity = OLD.prior_severity THEN
        RETURN NEW;
    END IF;
    PERFORM brain._raise('BR015',
        format('Rule #%s keeps severity %s: severity changes only through supersede.', OLD.memory_id, OLD.severity),
        jsonb_build_object('id', OLD.memory_id, 'severity', OLD.severity),
        format('Supersede rule #%s with the new severity: brain.supersede(old_id => %s, ..., severity => ...).',
               OLD.memory_id, OLD.memory_id));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER rule_severity_follows_supersede
    BEFORE UPDATE OF severity ON brain.rule
    FOR EACH ROW
    WHEN (NEW.severity IS DISTINCT FROM OLD.severity)
    EXECUTE FUNCTION brain._rule_severity_follows_supersede();

CREATE OR REPLACE FUNCTION brain.update_task(
    id bigint,
    status text DEFAULT NULL,
    note text DEFAULT NULL,
    priority integer DEFAULT NULL,
    due_at timestamptz DEFAULT NULL,
    source text DEFAULT NULL,
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := brain._clock(update_task.now);
    mem brain.memory := brain._get_memory(id, lock => true);
    task brain.task;
    target text;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('status', status, 'note', note, 'source', source));
    IF mem.kind <> 'task' THEN
        PERFORM brain._raise('BR009', format('Memory #%s is a %s, not a task.', mem.memory_id, mem.kind),
            jsonb_build_object('id', mem.memory_id, 'kind', mem.kind), 'Only tasks have a status.');
    END IF;
    IF mem.state <> 'active' THEN
        PERFORM brain._raise('BR011', format('Task #%s is %s.', mem.memory_id, mem.state),
            jsonb_build_object('id', mem.memory_id, 'state', mem.state,
                               'current', brain.current_version(mem.memory_id)),
            'Update the current version of the task.');
    END IF;
    IF length(note) > 2000 THEN
        PERFORM brain._raise('BR005',
            'A task note is at most 2000 characters and holds no secrets.',
            jsonb_build_object('characters', length(note), 'patterns', brain.find_secrets(note)),
            'Keep the note short; refer to where a secret is kept instead of writing it.');
    END IF;
    IF priority IS NOT NULL AND priority NOT BETWEEN 1 AND 5 THEN
        PERFORM brain._raise('BR009', 'priority runs from 1 (highest) to 5.',
            jsonb_build_object('field', 'priority', 'type', 'integer'), 'The default is 3.');
    END IF;
    SELECT * INTO task FROM brain.task t WHERE t.workspace_id = mem.workspace_id AND t.memory_id = mem.memory_id;
    -- Any update of a stale task reopens it.
    target := coalesce(lower(status), CASE WHEN task.status = 'stale' THEN 'open' ELSE task.status END);
    IF target NOT IN ('open', 'blocked', 'done') THEN
        PERFORM brain._raise('BR009', 'A task is set to open, blocked or done.',
            jsonb_build_object('field', 'status'), 'stale is set by maintenance when a task sits idle.');
    END IF;
    IF target <> task.status AND NOT EXISTS (
           SELECT FROM brain.lifecycle() AS l
           WHERE l.subject = 'task' AND l.action = 'update' AND l.from_state = task.status AND l.to_state = target) THEN
        PERFORM brain._raise('BR011', format('Task #%s is %s and cannot become %s.', mem.memory_id, task.status, target),
            jsonb_build_object('id', mem.memory_id, 'from', task.status, 'to', target,
                               'allowed', (SELECT jsonb_object_agg(f.s, coalesce(
                                                      (SELECT jsonb_agg(l.to_state ORDER BY l.n)
                                                       FROM brain.lifecycle() WITH ORDINALITY AS l(subject, action, from_state, to_state, n)
                                                       WHERE l.subject = 'task' AND l.action = 'update' AND l.from_state = f.s),
                                                      '[]'))
                                           FROM unnest(ARRAY['open', 'blocked', 'stale', 'done']) AS f(s))),
            'A done task stays done: store a new task for new work.');
    END IF;
    UPDATE brain.task t
    SET status = target, status_note = coalesce(note, t.status_note),
        priority = coalesce(update_task.priority, t.priority), due_at = coalesce(update_task.due_at, t.due_at),
        status_changed_at = CASE WHEN target <> task.status THEN clock ELSE t.status_changed_at END
    WHERE t.workspace_id = mem.workspace_id AND t.memory_id = mem.memory_id;
    UPDATE brain.memory m SET updated_at = clock
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, 'update', source,
        jsonb_build_object('from', task.status, 'to', target, 'note', note, 'priority', priority, 'due_at', due_at));
    RETURN jsonb_build_object('id', mem.memory_id, 'from', task.status, 'status', target);
END
$$;
COMMENT ON FUNCTION brain.update_task IS
    'Moves a task along open <-> blocked -> done (any update reopens a stale task), and sets its note, priority or due date. Audited.';

-- (archived_at is the server's time: an archive dated years ago would let
-- prune's floor go at once)
DROP FUNCTION IF EXISTS brain.archive(bigint, text, text, timestamptz);
CREATE OR REPLACE FUNCTION brain.archive(id bigint, reason text, source text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory := brain._get_memory(id, lock => true);
BEGIN
    PERFORM brain._require_text(reason, 'BR014', 'Archiving a memory needs a reason.',
        'Say why it is retired, e.g. reason => ''project finished''.');
    PERFORM brain._check_transition(mem, 'archive');
    UPDATE brain.memory m
    SET state = 'archived', archived_at = pg_catalog.now(), updated_at = pg_catalog.now()
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, 'archive', source, jsonb_build_object('reason', brain.trim_space(reason)));
    RETURN mem.memory_id;
END
$$;
COMMENT ON FUNCTION brain.archive IS
    'Retires an active memory: kept and recallable, out of default search and boot. brain.restore undoes it.';

CREATE OR REPLACE FUNCTION brain.restore(id bigint, source text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory := brain._get_memory(id, lock => true);
BEGIN
    PERFORM brain._check_transition(mem, 'restore');
    BEGIN
        -- Archived and forgotten memories come back; a restored fact starts its decay anew.
        UPDATE brain.memory m
        SET state = 'active', archived_at = NULL, forgotten_at = NULL, forget_reason = NULL, replaced_by = NULL,
            last_accessed = pg_catalog.now(), updated_at = pg_catalog.now()
        WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    EXCEPTION WHEN unique_violation THEN
        PERFORM brain._raise('BR011', format('An active memory with the same text as #%s exists.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id), 'Use that memory instead, or forget it first.');
    END;
    PERFORM brain._refresh_dormancy(mem.memory_id);
    PERFORM brain._audit(mem.memory_id, 'restore', source, jsonb_build_object('from', mem.state));
    RETURN mem.memory_id;
END
$$;
COMMENT ON FUNCTION brain.restore IS
    'Brings an archived or forgotten (tombstoned) memory back to active. A superseded one is restored with brain.unsupersede.';

CREATE OR REPLACE FUNCTION brain.history(id bigint)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH RECURSIVE linked(memory_id) AS (
        SELECT m.memory_id FROM brain.memory m
        WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = history.id
        UNION
        SELECT n.memory_id
        FROM linked l
        JOIN brain.memory o ON o.workspace_id = brain.current_workspace() AND o.memory_id = l.memory_id
        -- both directions of both links: superseded_by, and supersedes (kept after an unsupersede)
        JOIN brain.memory n ON n.workspace_id = brain.current_workspace()
                           AND (n.superseded_by = l.memory_id OR n.supersedes = l.memory_id
                                OR n.memory_id = o.superseded_by OR n.memory_id = o.supersedes)
    )
    SELECT CASE WHEN NOT EXISTS (SELECT FROM linked) THEN NULL ELSE jsonb_build_object(
        'id', history.id,
        'current_id', brain.current_version(history.id),
        'chain', (SELECT jsonb_agg(jsonb_build_object(
                      'id', m.memory_id, 'headline', m.headline, 'state', m.state, 'created_at', m.created_at,
                      'superseded_by', m.superseded_by, 'superseded_at', m.superseded_at,
                      'reason', m.supersede_reason) ORDER BY m.created_at, m.memory_id)
                  FROM linked l JOIN brain.memory m ON m.workspace_id = brain.current_workspace()
                                                   AND m.memory_id = l.memory_id),
        'events', coalesce((SELECT jsonb_agg(jsonb_build_object(
                      'id', a.memory_id, 'action', a.action, 'actor', a.actor, 'at', a.at, 'detail', a.detail)
                      ORDER BY a.at, a.audit_id)
                  FROM brain.audit a
                  WHERE a.workspace_id = brain.current_workspace()
                    AND a.memory_id IN (SELECT memory_id FROM linked)), '[]'))
    END
$$;
COMMENT ON FUNCTION brain.history IS
    'A memory''s whole supersede chain (every version, oldest first) and the audit events of all its versions. NULL when the memory does not exist.';

CREATE OR REPLACE FUNCTION brain.memory_tier(state text, kind text, pinned boolean, dormant_after timestamptz,
                                             expires_at timestamptz, last_touch timestamptz,
                                             now timestamptz DEFAULT now())
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN state <> 'active' THEN 'archive'
        WHEN dormant_after <= now OR expires_at <= now THEN 'cold'
        WHEN pinned OR last_touch > now - make_interval(days => (brain.setting('hot_days'))::integer) THEN 'hot'
        ELSE 'warm'
    END
$$;
COMMENT ON FUNCTION brain.memory_tier IS
    'hot: pinned or touched within hot_days (7); warm: other active memories; cold: dormant facts and expired memories; archive: archived, superseded or forgotten.';

CREATE OR REPLACE VIEW brain.memory_tiers AS
    SELECT m.memory_id AS id, m.kind, m.project, m.headline, m.state,
           brain.memory_tier(m.state, m.kind, m.pinned, m.dormant_after, m.expires_at,
                             greatest(m.created_at, m.last_accessed, m.last_confirmed_at)) AS tier,
           CASE WHEN f.memory_id IS NOT NULL
                THEN brain.decay_score(greatest(m.created_at, m.last_accessed, m.last_confirmed_at),
                                       f.halflife_days) END AS decay
    FROM brain.memory m
    LEFT JOIN brain.fact f ON f.workspace_id = m.workspace_id AND f.memory_id = m.memory_id
    WHERE m.workspace_id = brain.current_workspace();
COMMENT ON VIEW brain.memory_tiers IS 'Each memory of this workspace with its tier (hot, warm, cold, archive) and a fact''s decay score.';
GRANT SELECT ON brain.memory_tiers TO brain_user;
