-- Export and import: every memory of a workspace as one JSON document
-- (docs/export-format.md), the sessions and handoffs with it and their import,
-- and the row counts a backup is checked by. The import of memories:
-- 020a-transfer-import.sql.

CREATE OR REPLACE FUNCTION brain.export_header(include_vectors boolean DEFAULT false, project text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'format', 'pybrain-memories',
        'version', 2,
        'source', jsonb_build_object(
            'system', 'pybrain',
            'workspace_id', w.workspace_id,
            'workspace', w.name,
            'database', current_database(),
            'schema', (SELECT max(g.name) FROM brain.migration g)),
        'exported_at', now(),
        'project', export_header.project,
        'include_vectors', coalesce(include_vectors, false),
        'memories', (SELECT count(*) FROM brain.memory m
                     WHERE m.workspace_id = w.workspace_id
                       AND (export_header.project IS NULL OR m.project = export_header.project)),
        'sessions', (SELECT count(*) FROM brain.session x
                     WHERE x.workspace_id = w.workspace_id
                       AND (export_header.project IS NULL OR x.project = export_header.project)),
        'handoffs', (SELECT count(*) FROM brain.handoff x
                     WHERE x.workspace_id = w.workspace_id
                       AND (export_header.project IS NULL OR x.project = export_header.project)))
    FROM brain.workspace w
    WHERE w.workspace_id = brain.current_workspace()
$$;
COMMENT ON FUNCTION brain.export_header IS
    'The first line of an export (docs/export-format.md): format pybrain-memories, version 2, the source workspace and schema, the time, and the number of memories, sessions and handoffs (stored apart from their session) that follow.';

CREATE OR REPLACE FUNCTION brain.export_memories(
    include_vectors boolean DEFAULT false,
    project text DEFAULT NULL,
    after_id bigint DEFAULT 0,
    max_results integer DEFAULT NULL
)
RETURNS TABLE (memory_id bigint, doc jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT d.memory_id,
           (d.doc - 'dedup_pending')
           || jsonb_build_object('folds', coalesce(
                  (SELECT jsonb_agg(jsonb_build_object(
                              'folded_memory_id', f.folded_memory_id, 'displaced', f.displaced,
                              'headline', f.headline, 'body', f.body, 'metadata', f.metadata,
                              'source_agent', f.source_agent, 'session_id', f.session_id,
                              'source_system', f.source_system, 'source_ref', f.source_ref,
                              'source_hash', f.source_hash, 'item_created_at', f.item_created_at,
                              'similarity', f.similarity, 'folded_at', f.folded_at)
                          ORDER BY f.fold_id)
                   FROM brain.memory_fold f
                   WHERE f.workspace_id = brain.current_workspace() AND f.memory_id = d.memory_id), '[]'))
           || CASE WHEN export_memories.include_vectors THEN jsonb_build_object('vectors', coalesce(
                  (SELECT jsonb_agg(jsonb_build_object('provider', s.provider, 'model', s.model, 'dims', s.dims,
                                                       'values', (e.embedding::text)::jsonb)
                                    ORDER BY s.space_id)
                   FROM brain.embedding e
                   JOIN brain.embedding_space s ON s.workspace_id = e.workspace_id AND s.space_id = e.space_id
                   WHERE e.workspace_id = brain.current_workspace() AND e.memory_id = d.memory_id), '[]'))
                   ELSE '{}'::jsonb END
    FROM brain._memory_docs(ARRAY(
             SELECT m.memory_id FROM brain.memory m
             WHERE m.workspace_id = brain.current_workspace()
               AND (export_memories.project IS NULL OR m.project = export_memories.project)
               AND m.memory_id > coalesce(export_memories.after_id, 0)
             ORDER BY m.memory_id
             LIMIT export_memories.max_results)) AS d
    ORDER BY d.memory_id
$$;
COMMENT ON FUNCTION brain.export_memories IS
    'Every memory of the workspace (or of one project) as one JSON document, by id: its columns, kind details, annotations, fold records (brain.memory_fold) and, with include_vectors, its embeddings with their space. Page with after_id and max_results. The format is docs/export-format.md.';

-- Sessions and handoffs: what the next session of a project is
-- given (brain._last_handoff), carried by an export after its memories.
CREATE OR REPLACE FUNCTION brain.export_sessions(project text DEFAULT NULL)
RETURNS TABLE (doc jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.doc FROM (
        SELECT 1 AS part, s.session_id AS id,
               jsonb_build_object('record', 'session', 'id', s.session_id, 'source', s.source, 'project', s.project,
                                  'cwd', s.cwd, 'host', s.host, 'client_info', s.client_info,
                                  'current_task', s.current_task, 'status', s.status, 'started_at', s.started_at,
                                  'heartbeat_at', s.heartbeat_at, 'ended_at', s.ended_at, 'end_reason', s.end_reason,
                                  'handoff', s.handoff, 'snapshot', s.snapshot) AS doc
        FROM brain.session s
        WHERE s.workspace_id = brain.current_workspace()
          AND (export_sessions.project IS NULL OR s.project = export_sessions.project)
        UNION ALL
        SELECT 2, h.handoff_id,
               jsonb_build_object('record', 'handoff', 'id', h.handoff_id, 'source', h.source, 'project', h.project,
                                  'session_id', h.session_id, 'text', h.text, 'snapshot', h.snapshot,
                                  'created_at', h.created_at)
        FROM brain.handoff h
        WHERE h.workspace_id = brain.current_workspace()
          AND (export_sessions.project IS NULL OR h.project = export_sessions.project)
    ) AS x
    ORDER BY x.part, x.id
$$;
COMMENT ON FUNCTION brain.export_sessions IS
    'The sessions of the workspace (or of one project) with their handoffs and snapshots, then the handoffs stored apart from their session (brain.handoff), as export lines {"record": "session" | "handoff", ...} (docs/export-format.md). A session''s process (pid) stays out: it means nothing elsewhere.';

CREATE OR REPLACE FUNCTION brain.import_sessions(docs jsonb, project text DEFAULT NULL)
RETURNS TABLE (item integer, line text, old_id bigint, action text, new_id bigint, error_code text, error text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    d jsonb;
    n integer := 0;
    v_project text;
    v_started timestamptz;
    v_ended timestamptz;
    v_session bigint;
    map_old bigint[] := '{}';
    map_new bigint[] := '{}';
BEGIN
    IF docs IS NULL OR jsonb_typeof(docs) <> 'array' THEN
        PERFORM brain._raise('BR009', 'Session records are a JSON array of export lines.',
            jsonb_build_object('docs', jsonb_typeof(docs)), 'Pass the lines of an export whose record is session or handoff.');
    END IF;
    -- Sessions first (handoffs name them), each in the order given.
    FOR d, n IN SELECT x.value, x.n::integer FROM jsonb_array_elements(docs) WITH ORDINALITY AS x(value, n)
                ORDER BY x.value->>'record' DESC, x.n LOOP
        item := n; line := d->>'record'; old_id := NULL;
        action := NULL; new_id := NULL; error_code := NULL; error := NULL;
        BEGIN
            old_id := (d->>'id')::bigint;
            v_project := coalesce(import_sessions.project, d->>'project', '');
            PERFORM brain._refuse_secrets(jsonb_build_object('source', d->>'source', 'project', v_project,
                                                             'cwd', d->>'cwd', 'host', d->>'host',
                                                             'client_info', d->'client_info',
                                                             'current_task', d->>'current_task'),
                                          'it was not imported');
            IF line = 'session' THEN
                PERFORM brain._check_handoff(d->>'handoff', nullif(d->'snapshot', 'null'));
                v_started := (d->>'started_at')::timestamptz;
                IF d->>'source' IS NULL OR d->>'source' !~ '^\S+$' OR v_started IS NULL THEN
                    PERFORM brain._raise('BR009', 'A session record has a source (one word) and a started_at.',
                        jsonb_build_object('id', old_id), 'Import the lines of a pybrain export as they are.');
                END IF;
                -- An imported session is not live here: it has ended, when it last showed a sign of life.
                v_ended := coalesce((d->>'ended_at')::timestamptz, (d->>'heartbeat_at')::timestamptz, v_started);
                SELECT x.session_id INTO v_session FROM brain.session x
                WHERE x.workspace_id = ws AND x.source = d->>'source' AND x.project = v_project
                  AND x.started_at = v_started AND x.cwd IS NOT DISTINCT FROM d->>'cwd'
                LIMIT 1;
                IF v_session IS NOT NULL THEN
                    action := 'skipped';
                ELSE
                    INSERT INTO brain.session (workspace_id, source, project, cwd, host, client_info, current_task,
                                               status, started_at, heartbeat_at, ended_at, end_reason, handoff,
                                               snapshot)
                    VALUES (ws, d->>'source', v_project, d->>'cwd', d->>'host',
                            CASE WHEN jsonb_typeof(d->'client_info') = 'object' THEN d->'client_info' ELSE '{}' END
                            || jsonb_build_object('imported_from', old_id),
                            nullif(brain.clean_headline(d->>'current_task'), ''), 'ended', v_started,
                            greatest(v_started, coalesce((d->>'heartbeat_at')::timestamptz, v_started)),
                            greatest(v_started, v_ended),
                            CASE WHEN d->>'status' = 'ended' THEN coalesce(d->>'end_reason', 'ended') ELSE 'imported' END,
                            nullif(brain.trim_space(brain.clean_body(d->>'handoff')), ''), nullif(d->'snapshot', 'null'))
                    RETURNING session_id INTO v_session;
                    action := 'created';
                END IF;
                new_id := v_session;
                map_old := map_old || old_id;
                map_new := map_new || v_session;
            ELSIF line = 'handoff' THEN
                PERFORM brain._check_handoff(d->>'text', nullif(d->'snapshot', 'null'));
                IF d->>'source' IS NULL OR d->>'source' !~ '^\S+$' OR (d->>'created_at') IS NULL
                   OR (nullif(brain.trim_space(d->>'text'), '') IS NULL AND nullif(d->'snapshot', 'null') IS NULL) THEN
                    PERFORM brain._raise('BR009', 'A handoff record has a source (one word), a created_at and a text or a snapshot.',
                        jsonb_build_object('id', old_id), 'Import the lines of a pybrain export as they are.');
                END IF;
                v_session := map_new[array_position(map_old, (d->>'session_id')::bigint)];
                SELECT x.handoff_id INTO new_id FROM brain.handoff x
                WHERE x.workspace_id = ws AND x.source = d->>'source' AND x.project = v_project
                  AND x.created_at = (d->>'created_at')::timestamptz
                  AND x.text IS NOT DISTINCT FROM nullif(brain.trim_space(brain.clean_body(d->>'text')), '')
                LIMIT 1;
                IF new_id IS NOT NULL THEN
                    action := 'skipped';
                ELSE
                    INSERT INTO brain.handoff (workspace_id, source, project, session_id, text, snapshot, created_at)
                    VALUES (ws, d->>'source', v_project, v_session,
                            nullif(brain.trim_space(brain.clean_body(d->>'text')), ''), nullif(d->'snapshot', 'null'),
                            (d->>'created_at')::timestamptz)
                    RETURNING handoff_id INTO new_id;
                    action := 'created';
                END IF;
            ELSE
                PERFORM brain._raise('BR009', 'An export line''s record is session or handoff here.',
                    jsonb_build_object('field', 'record', 'allowed', jsonb_build_array('session', 'handoff')),
                    'Memories go through brain.import_memories, packs through brain.import_packs.');
            END IF;
        EXCEPTION WHEN OTHERS THEN
            IF SQLSTATE NOT LIKE 'BR%' AND SQLSTATE NOT IN ('22007', '22008', '22P02') THEN
                RAISE;
            END IF;
            -- (a value of the wrong type is named by its field's type, never repeated)
            action := 'rejected'; new_id := NULL;
            error_code := CASE WHEN SQLSTATE LIKE 'BR%' THEN SQLSTATE ELSE 'BR009' END;
            error := CASE WHEN SQLSTATE LIKE 'BR%' THEN SQLERRM
                          ELSE 'A value of the line is not of its field''s type: started_at, heartbeat_at, ended_at '
                               'and created_at are times, id and session_id whole numbers.' END;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION brain.import_sessions IS
    'Loads the session and handoff lines of an export (brain.export_sessions) into the workspace, in project when given: sessions as ended ones (an imported session is not live here; one that was live ends as imported) with their handoffs and snapshots, then the handoffs stored apart, linked to the imported sessions. A secret is refused (BR007), a malformed line rejected, each reported as a row; a line already imported (the same source, project, start and cwd; the same handoff text and time) is skipped. The next session of the project gets the newest handoff, as it would have.';

CREATE OR REPLACE FUNCTION brain.database_counts()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'workspaces', (SELECT count(*) FROM brain.workspace),
        'memories', (SELECT jsonb_object_agg(s.state, coalesce(c.n, 0))
                     FROM unnest(ARRAY['active', 'superseded', 'archived', 'tombstoned']) AS s(state)
                     LEFT JOIN (SELECT m.state, count(*) AS n FROM brain.memory m GROUP BY m.state) AS c
                            ON c.state = s.state),
        'audit', (SELECT count(*) FROM brain.audit),
        'annotations', (SELECT count(*) FROM brain.annotation),
        'folds', (SELECT count(*) FROM brain.memory_fold),
        'embeddings', (SELECT count(*) FROM brain.embedding),
        'sessions', (SELECT count(*) FROM brain.session),
        'handoffs', (SELECT count(*) FROM brain.handoff))
$$;
COMMENT ON FUNCTION brain.database_counts IS
    'Row counts a backup is checked by: memories per state, audit rows, annotations, folds, embeddings, sessions, handoffs and workspaces — every workspace''s for a superuser (`brain backup` and `brain restore` read them as the database owner), the rows row-level security shows otherwise.';

-- A JSON value with each secret in its text redacted (its strings, keys and
-- numbers as JSON text); a value whose redaction is no longer JSON becomes
-- {"redacted": "it held a secret"}. The value itself when it holds none.
CREATE OR REPLACE FUNCTION brain._redact_json(v jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF v IS NULL OR brain.find_secrets(brain._field_text(v)) = '{}' THEN
        RETURN v;
    END IF;
    BEGIN
        v := brain.redact_secrets(v::text)::jsonb;
    EXCEPTION WHEN invalid_text_representation THEN
        RETURN jsonb_build_object('redacted', 'it held a secret');
    END;
    -- a secret found only in the strings as read one per line (a key cut by an escape)
    IF brain.find_secrets(brain._field_text(v)) <> '{}' THEN
        RETURN jsonb_build_object('redacted', 'it held a secret');
    END IF;
    RETURN v;
END
$$;

-- A restored database's rows through the gate, as an import's (brain restore
-- runs it as the superuser in the fresh database, after its counts were
-- checked and before it takes the target's place). A backup's checksums prove
-- that the file is the one written, not who wrote its rows: a row edited
-- behind the API (in the database before the backup, or in the file with its
-- checksums forged) is data like an import's. So, in every workspace:
--   - every secret in a memory's texts (headline, body, context, tags, the
--     reasons and sources, metadata), an incident's texts, an annotation, a
--     handoff, a session's texts and snapshots, a scratch value and an
--     action item is redacted as an observed text is ([redacted:KIND]);
--   - a memory whose text shows injection signals (brain._turn_signals, as a
--     write and an import read it) is flagged with them, and like an imported
--     one it comes back unconfirmed, unpinned and without its votes: nothing
--     in a file can confirm a flag, a confirmation is a person's;
--   - each memory changed gets an audit row (update, actor restore, detail
--     {"restore_gate": ...}), and the answer lists every change: memories by
--     id (fields redacted with their kinds, flags added, what was cleared)
--     and the other tables' texts as counts per column. Never a value.
-- A rule's text is redacted too (the trigger that keeps a rule's text fixed is
-- off for this statement only: the text the gate changes is not an edit).
CREATE OR REPLACE FUNCTION brain._gate_restored()
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m record;
    h text; b text; ctx text; meta jsonb; v_tags text[];
    sreason text; freason text; sref text;
    norm text;
    kinds text[];
    sig text[];
    added text[];
    change jsonb;
    memories jsonb := '[]';
    others jsonb := '{}';
    col record;
    n bigint;
BEGIN
    PERFORM brain._require_owner('pass restored rows through the gate');
    ALTER TABLE brain.memory DISABLE TRIGGER rule_text_is_immutable;
    FOR m IN SELECT * FROM brain.memory ORDER BY memory_id LOOP
        change := '{}';
        kinds := '{}';
        h := m.headline; b := m.body; ctx := m.context; meta := m.metadata; v_tags := m.tags;
        sreason := m.supersede_reason; freason := m.forget_reason; sref := m.source_ref;
        -- (one scan of the row's texts together: most rows hold nothing)
        IF EXISTS (SELECT FROM brain.scan_secrets(concat_ws(E'\n\u0001\n', m.headline, m.body, m.context,
                       array_to_string(m.tags, E'\n'), m.supersede_reason, m.forget_reason, m.source_ref,
                       m.source_agent, m.source_system, brain._field_text(m.metadata)))) THEN
            SELECT coalesce(array_agg(x.what ORDER BY x.ord), '{}') INTO kinds
            FROM (SELECT DISTINCT ON (f.name, s.kind) f.ord, f.name || ': ' || s.kind AS what
                  FROM (VALUES (1, 'headline', m.headline), (2, 'body', m.body), (3, 'context', m.context),
                               (4, 'tags', array_to_string(m.tags, E'\n')),
                               (5, 'supersede_reason', m.supersede_reason), (6, 'forget_reason', m.forget_reason),
                               (7, 'source_ref', m.source_ref), (8, 'metadata', brain._field_text(m.metadata)))
                       AS f(ord, name, t)
                  CROSS JOIN LATERAL brain.scan_secrets(f.t) AS s) AS x;
            h := brain.clean_headline(brain.redact_secrets(h));
            b := brain.redact_secrets(b);
            ctx := brain.redact_secrets(ctx);
            v_tags := ARRAY(SELECT brain.redact_secrets(t) FROM unnest(v_tags) AS t);
            sreason := brain.redact_secrets(sreason);
            freason := brain.redact_secrets(freason);
            sref := brain.redact_secrets(sref);
            meta := brain._redact_json(meta);
            change := jsonb_build_object('redacted', to_jsonb(kinds));
        END IF;
        sig := brain._turn_signals(concat_ws(E'\n', h, b), meta);
        added := ARRAY(SELECT s FROM unnest(sig) AS s WHERE s <> ALL (m.flag_reasons));
        IF cardinality(sig) > 0 AND (cardinality(added) > 0 OR m.flag_confirmed_at IS NOT NULL OR m.pinned
                                     OR m.upvotes <> 0 OR m.downvotes <> 0) THEN
            change := change || jsonb_build_object('flagged', to_jsonb(added));
            IF m.flag_confirmed_at IS NOT NULL THEN
                change := change || jsonb_build_object('unconfirmed', true);
            END IF;
            IF m.pinned THEN
                change := change || jsonb_build_object('unpinned', true);
            END IF;
            IF m.upvotes <> 0 OR m.downvotes <> 0 THEN
                change := change || jsonb_build_object('votes_cleared', true);
            END IF;
        END IF;
        CONTINUE WHEN change = '{}';
        norm := CASE WHEN h = m.headline AND b = m.body THEN m.normalized ELSE brain.normalize_text(h, b) END;
        FOR attempt IN 1 .. 2 LOOP
            BEGIN
                UPDATE brain.memory AS u
                SET headline = h, body = b, context = ctx, tags = v_tags, metadata = meta,
                    supersede_reason = sreason, forget_reason = freason, source_ref = sref, normalized = norm,
                    flag_reasons = CASE WHEN change ? 'flagged' THEN u.flag_reasons || added ELSE u.flag_reasons END,
                    flag_confirmed_at = CASE WHEN change ? 'flagged' THEN NULL ELSE u.flag_confirmed_at END,
                    flag_confirmed_by = CASE WHEN change ? 'flagged' THEN NULL ELSE u.flag_confirmed_by END,
                    pinned = CASE WHEN change ? 'flagged' THEN false ELSE u.pinned END,
                    upvotes = CASE WHEN change ? 'flagged' THEN 0 ELSE u.upvotes END,
                    downvotes = CASE WHEN change ? 'flagged' THEN 0 ELSE u.downvotes END
                WHERE u.memory_id = m.memory_id;
                EXIT;
            EXCEPTION WHEN unique_violation THEN
                IF attempt = 2 THEN
                    RAISE;
                END IF;
                -- the redacted text is another active memory's: kept apart by its id
                norm := brain.normalize_text(h, b) || ' #' || m.memory_id;
            END;
        END LOOP;
        INSERT INTO brain.audit (workspace_id, memory_id, action, actor, detail)
        VALUES (m.workspace_id, m.memory_id, 'update', 'restore', jsonb_build_object('restore_gate', change));
        memories := memories || (jsonb_build_object('id', m.memory_id, 'workspace', m.workspace_id) || change);
    END LOOP;
    ALTER TABLE brain.memory ENABLE TRIGGER rule_text_is_immutable;
    -- The other texts a boot, a search or a person reads: redacted in place, counted.
    FOR col IN SELECT * FROM (VALUES
            ('incident', 'what_was_wrong', false), ('incident', 'what_is_correct', false),
            ('incident', 'error_message', false), ('incident', 'command_attempted', false),
            ('annotation', 'note', false), ('annotation', 'source', false),
            ('handoff', 'text', false), ('handoff', 'snapshot', true),
            ('session', 'current_task', false), ('session', 'handoff', false), ('session', 'end_reason', false),
            ('session', 'snapshot', true), ('session', 'client_info', true),
            ('scratch', 'value', false), ('action_item', 'text', false), ('action_item', 'response_note', false),
            ('task', 'status_note', false)) AS c(tbl, name, is_json) LOOP
        IF col.is_json THEN
            EXECUTE format('UPDATE brain.%I SET %I = brain._redact_json(%I)'
                           ' WHERE %I IS NOT NULL AND brain.find_secrets(brain._field_text(%I)) <> ''{}''',
                           col.tbl, col.name, col.name, col.name, col.name);
        ELSE
            EXECUTE format('UPDATE brain.%I SET %I = brain.redact_secrets(%I)'
                           ' WHERE %I IS NOT NULL AND brain.find_secrets(%I) <> ''{}''',
                           col.tbl, col.name, col.name, col.name, col.name);
        END IF;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            others := others || jsonb_build_object(col.tbl || '.' || col.name, n);
        END IF;
    END LOOP;
    RETURN jsonb_build_object('memories', memories, 'redacted', others);
END
$$;
COMMENT ON FUNCTION brain._gate_restored IS
    'A restored database''s rows through the gate, as an import''s (brain restore, as the superuser, before the database takes the target''s place): secrets redacted in every stored text, memories whose text shows injection signals flagged, unconfirmed, unpinned and without votes, an audit row per memory changed. Returns what it changed: memories by id (fields and kinds redacted, flags added, what was cleared) and other texts redacted, counted per column; never a value.';
