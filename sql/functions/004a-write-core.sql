-- The write core: the check at commit, the one INSERT of memory rows
-- (brain._store_memories, from the drafts every writer hands it), the draft
-- a write is made of (brain._draft, migrations 028 and 037) and brain._write,
-- which writes one memory from its draft.

-- The full (64-bit) id of a recent transaction from its 32-bit xid (a row's
-- xmin), taken within 2^31 of this transaction's id.
CREATE OR REPLACE FUNCTION brain._full_xid(x xid)
RETURNS xid8
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT greatest(c + (x::text::bigint - c % 4294967296 + 6442450944) % 4294967296 - 2147483648, 0)::text::xid8
    FROM (SELECT pg_current_xact_id()::text::bigint AS c) AS t
$$;

-- The check at commit (a deferred constraint trigger on brain.embedding; the
-- first row of a commit checks every write registered by brain._check_at_commit).
-- It takes the commit lock of each kind and project written (brain._lock_commits,
-- in key order, so two commits never wait for each other in a cycle) and then
-- looks again for each new memory's duplicates, with a snapshot taken behind
-- the lock: under READ COMMITTED it sees every write of the scope that
-- committed before, and the lock is held until this commit is complete. The
-- candidates are replayed as brain._write's lookup takes them (nearest first,
-- the first with a verdict, brain._near_verdict, decides); a candidate its
-- lookup could not see (committed by another transaction after the lookup's
-- snapshot) that would have folded the write, or met a related gate whose
-- policy is not store, means the write would not have been stored had it
-- come second: the transaction is refused (BR022) and rolls back, so the
-- memory that committed first is the only one. Sent again, the write meets it
-- as any later write does. Memories this transaction wrote after the lookup
-- are passed over (their own lookups saw this one). The check only reads,
-- so behind the lock it never waits for anything else.
CREATE OR REPLACE FUNCTION brain._commit_check()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    checks jsonb := nullif(current_setting('brain.commit_checks', true), '')::jsonb;
    ws bigint;
    salt text;
    g record;
    w record;
    near record;
    mem brain.memory;
    kept brain.memory;
    kept_xmin xid;
    space brain.embedding_space;
    vec public.vector;
    own xid[];
    concurrent boolean;
    verdict text;
BEGIN
    IF checks IS NULL THEN
        RETURN NULL;  -- an earlier row of this commit checked them all
    END IF;
    PERFORM set_config('brain.commit_checks', '', true);
    ws := brain.current_workspace();
    salt := brain._scope_salt(ws);
    FOR g IN
        SELECT DISTINCT brain._scope_key(salt, m.kind, m.project) AS key, m.kind, m.project
        FROM brain.memory m
        -- an array, not IN (SELECT k::bigint ...): the cast (not LEAKPROOF) in the join
        -- condition kept row-level security from using the key, and read the workspace
        WHERE m.workspace_id = ws AND m.memory_id = ANY (ARRAY(SELECT k::bigint FROM jsonb_object_keys(checks) AS k))
        ORDER BY 1, 2, 3
    LOOP
        PERFORM brain._lock_commits(g.kind, g.project);
    END LOOP;

    FOR w IN
        SELECT e.k::bigint AS id, (e.v->>'space')::bigint AS space_id, e.v->>'on_related' AS on_related,
               (e.v->>'lookup')::pg_snapshot AS lookup
        FROM jsonb_each(checks) AS e(k, v)
        ORDER BY 1
    LOOP
        SELECT * INTO mem FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = w.id;
        CONTINUE WHEN NOT FOUND OR mem.state <> 'active';
        -- Behind the lock: when no other transaction has ended since the lookup,
        -- looking again would find what the lookup found.
        CONTINUE WHEN NOT brain._ended_since(w.lookup);
        SELECT * INTO space FROM brain.embedding_space s WHERE s.workspace_id = ws AND s.space_id = w.space_id;
        vec := brain._stored_vector(space, w.id);
        CONTINUE WHEN vec IS NULL;
        FOR near IN
            SELECT x.memory_id, x.similarity
            FROM brain._near_write(space, vec, mem.kind, mem.project, mem.memory_id, space.related) AS x
            WHERE x.decides
            ORDER BY x.similarity DESC, x.memory_id
        LOOP
            SELECT * INTO kept FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = near.memory_id;
            kept_xmin := (SELECT m.xmin FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = near.memory_id);
            IF own IS NULL THEN
                -- this transaction's ids (its subtransactions' too): the ones it holds locks on
                own := ARRAY(SELECT l.transactionid FROM pg_catalog.pg_locks l
                             WHERE l.locktype = 'transactionid' AND l.pid = pg_backend_pid()
                               AND l.mode = 'ExclusiveLock' AND l.granted);
            END IF;
            CONTINUE WHEN kept_xmin = ANY (own);
            concurrent := NOT pg_visible_in_snapshot(brain._full_xid(kept_xmin), w.lookup);
            verdict := brain._near_verdict(kept, mem, near.similarity, space, w.on_related);
            CONTINUE WHEN verdict IS NULL;
            IF concurrent AND (verdict = 'fold' OR w.on_related <> 'store') THEN
                PERFORM brain._raise('BR022',
                    format('A concurrent write stored a %s %s first: #%s "%s" (similarity %s); this transaction is rolled back.',
                           CASE WHEN verdict = 'fold' THEN 'near-identical' ELSE 'related' END, mem.kind, kept.memory_id,
                           kept.headline, round(near.similarity::numeric, 3)),
                    jsonb_build_object('memory_id', mem.memory_id, 'duplicate_of', kept.memory_id,
                                       'similarity', near.similarity, 'headline', kept.headline),
                    format('Nothing of this transaction was stored. Send it again: the write then meets #%s as '
                           'any later write does (folded into it, or refused as related with BR008).',
                           kept.memory_id));
            END IF;
            EXIT;
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS embedding_commit_check ON brain.embedding;
CREATE CONSTRAINT TRIGGER embedding_commit_check AFTER INSERT ON brain.embedding
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (nullif(current_setting('brain.commit_checks', true), '')::jsonb ? NEW.memory_id::text)
    EXECUTE FUNCTION brain._commit_check();

-- The vectors of memories in a space (ids and vectors in step; a NULL id or
-- vector is left out), the one place an embedding row is written: for the
-- memories the write core stores, for a memory embedded later (the worker's,
-- brain.attach_embedding: replace, a vector made again takes the old one's
-- place) and for an import's vectors of each space it names. ingest_seq: the
-- batch's, when its vectors wait for brain.index_vectors. Returns the rows
-- written.
CREATE OR REPLACE FUNCTION brain._store_vectors(ids bigint[], vectors public.vector[], space_id bigint,
                                                ingest_seq bigint DEFAULT 0, replace boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    written integer;
BEGIN
    INSERT INTO brain.embedding AS e (workspace_id, space_id, memory_id, embedding, ingest_seq)
    SELECT brain.current_workspace(), _store_vectors.space_id, u.id, u.v, coalesce(_store_vectors.ingest_seq, 0)
    FROM unnest(ids, vectors) AS u(id, v)
    WHERE u.id IS NOT NULL AND u.v IS NOT NULL
    ON CONFLICT ON CONSTRAINT embedding_pkey DO UPDATE
    SET embedding = excluded.embedding, embedded_at = now()
    WHERE _store_vectors.replace;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END
$$;

-- The one write core: every new memory of every path (brain._write for
-- remember and supersede, brain.observe_batch, brain.ingest_documents,
-- brain.import_memories) is stored by this INSERT, and by no other. The
-- callers run the gate's checks that need their own context first (BR
-- codes naming their fields, secrets refused or redacted, dedup); here each
-- row is brought to the gate's normal form whatever its caller built: the
-- workspace is the caller's, the headline is one clean line and the body
-- clean text, the flags are the caller's and those of the text as sent
-- (brain._turn_signals of its sent, when given), tags, people, topics and
-- action items are extracted when the caller gave none, and ranking and
-- trust fields (pinned, votes, importance, access counts, confirmation)
-- start at their defaults unless the caller set them. Client roles cannot
-- call it to any effect: the write guard (sql/functions/004b-write-guard.sql)
-- lets a table change only inside one of the API's functions.
-- Returns one id per item, in order: NULL when an active memory of the same
-- kind, project and text existed (ON CONFLICT: nothing stored).
--
-- Each item is a draft (brain.memory_draft, migration 037), the row and all
-- else of each memory stored: its kind row (rule, fact, incident, task) from
-- its kind fields (NULL: the kind's defaults: PATTERN, the workspace's fact
-- half-life, an open task of priority 3), its vector in space space_id (at
-- ingest_seq, 0 when NULL; items without one: the worker embeds them, woken
-- by one notification, as it is for vectors the index takes in later,
-- ingest_seq above 0; not when vectors_later: the caller writes them, as an
-- import does for the spaces its file names), the check at commit
-- of each vector when check_at_commit names the write's related policy and its
-- lookup's snapshot ({"on_related": ..., "lookup": ...}, brain._check_at_commit),
-- and one audit row each when audit names the actor and the detail ({"actor":
-- ..., "detail": {...}}; NULL: the caller audits later, as an import does once
-- its links are set).
CREATE OR REPLACE FUNCTION brain._store_memories(items brain.memory_draft[], space_id bigint DEFAULT NULL,
                                                 ingest_seq bigint DEFAULT NULL, audit jsonb DEFAULT NULL,
                                                 check_at_commit jsonb DEFAULT NULL,
                                                 vectors_later boolean DEFAULT false)
RETURNS bigint[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();  -- (write access: the insert policy checks it, once)
    n integer := coalesce(cardinality(items), 0);
    ids bigint[];
    stored bigint[];
    vectors public.vector[];
BEGIN
    IF n = 0 THEN
        RETURN '{}';
    END IF;
    -- Ids taken in order, so that the answer is aligned with the items and
    -- memory_id follows the order of the batch.
    ids := ARRAY(SELECT nextval('brain.memory_memory_id_seq') FROM generate_series(1, n));
    WITH ins AS (
        INSERT INTO brain.memory AS m (
            workspace_id, memory_id, kind, category, origin, project, headline, body, normalized, tags, people,
            topics, action_items, metadata, state, pinned, skill_trigger, importance, upvotes, downvotes,
            access_count, last_accessed, source_agent, session_id, source_system, source_ref, source_hash,
            supersedes, superseded_at, supersede_reason, expires_at, last_confirmed_at, forget_reason,
            dedup_pending, record_version, created_at, updated_at, dormant_after, forgotten_at, archived_at,
            foldable, flag_reasons, flag_confirmed_at, flag_confirmed_by, source_chunk, context, thread, position)
        OVERRIDING SYSTEM VALUE
        SELECT ws, ids[u.ordinality], u.kind, coalesce(u.category, 'note'), coalesce(u.origin, 'explicit'),
               coalesce(u.project, ''), x.h, x.b, coalesce(u.normalized, brain.normalize_text(x.h, x.b)),
               coalesce(u.tags, ARRAY(SELECT DISTINCT lower(brain.trim_space(t))
                                      FROM unnest(brain.extract_tags(x.h || E'\n' || x.b)) AS t
                                      WHERE brain.trim_space(t) <> '')),
               coalesce(u.people, brain.extract_people(x.h || E'\n' || x.b)),
               coalesce(u.topics, brain.extract_topics(x.h || E'\n' || x.b)),
               coalesce(u.action_items, brain.extract_action_items(x.h || E'\n' || x.b)),
               coalesce(u.metadata, '{}'), coalesce(u.state, 'active'), coalesce(u.pinned, false), u.skill_trigger,
               coalesce(u.importance, 0.5), coalesce(u.upvotes, 0), coalesce(u.downvotes, 0),
               coalesce(u.access_count, 0), u.last_accessed, u.source_agent, u.session_id, u.source_system,
               u.source_ref, u.source_hash, u.supersedes, u.superseded_at, u.supersede_reason, u.expires_at,
               u.last_confirmed_at, u.forget_reason, coalesce(u.dedup_pending, false),
               coalesce(u.record_version, 1), coalesce(u.created_at, now()),
               coalesce(u.updated_at, u.created_at, now()), u.dormant_after, u.forgotten_at, u.archived_at,
               coalesce(u.foldable, true), f.flags,
               CASE WHEN cardinality(f.flags) > 0 THEN u.flag_confirmed_at END,
               CASE WHEN cardinality(f.flags) > 0 AND u.flag_confirmed_at IS NOT NULL THEN u.flag_confirmed_by END,
               u.source_chunk, u.context, u.thread, u.position
        FROM unnest(items) WITH ORDINALITY AS u
        -- (OFFSET 0: each computed once per row, not once per column that uses it)
        CROSS JOIN LATERAL (SELECT brain.clean_headline(u.headline) AS h, brain.clean_body(coalesce(u.body, '')) AS b
                            OFFSET 0) AS x
        CROSS JOIN LATERAL (
            SELECT coalesce(u.flag_reasons, '{}')
                   || ARRAY(SELECT s FROM unnest(brain._turn_signals(u.sent, u.metadata)) AS s
                            WHERE s <> ALL (coalesce(u.flag_reasons, '{}'))) AS flags
            OFFSET 0) AS f
        ORDER BY u.ordinality
        ON CONFLICT (workspace_id, kind, project, normalized_hash) WHERE state = 'active' DO NOTHING
        RETURNING m.memory_id
    )
    SELECT coalesce(array_agg(ins.memory_id), '{}') INTO stored FROM ins;
    IF cardinality(stored) < n THEN
        -- (a join: a search of stored for each id cost n x stored comparisons)
        ids := ARRAY(SELECT s.id FROM unnest(ids) WITH ORDINALITY AS u(id, j)
                     LEFT JOIN unnest(stored) AS s(id) ON s.id = u.id ORDER BY u.j);
    END IF;
    IF cardinality(stored) = 0 THEN
        RETURN ids;
    END IF;

    -- the kind rows
    INSERT INTO brain.rule (workspace_id, memory_id, severity, prior_severity)
    SELECT ws, u.id, coalesce(upper((x.r).severity), 'PATTERN'), upper((x.r).prior_severity)
    FROM unnest(ids) WITH ORDINALITY AS u(id, j)
    CROSS JOIN LATERAL (SELECT (items[u.j]).rule AS r) AS x
    WHERE u.id IS NOT NULL AND (items[u.j]).kind = 'rule';
    INSERT INTO brain.fact (workspace_id, memory_id, halflife_days)
    SELECT ws, u.id, coalesce((x.f).halflife_days, (brain.setting('fact_halflife_days'))::double precision)
    FROM unnest(ids) WITH ORDINALITY AS u(id, j)
    CROSS JOIN LATERAL (SELECT (items[u.j]).fact AS f) AS x
    WHERE u.id IS NOT NULL AND (items[u.j]).kind = 'fact';
    INSERT INTO brain.incident (workspace_id, memory_id, what_was_wrong, what_is_correct, error_message,
                                command_attempted, related_files, complexity)
    SELECT ws, u.id, (x.i).what_was_wrong, (x.i).what_is_correct, (x.i).error_message, (x.i).command_attempted,
           coalesce((x.i).related_files, '{}'), (x.i).complexity
    FROM unnest(ids) WITH ORDINALITY AS u(id, j)
    CROSS JOIN LATERAL (SELECT (items[u.j]).incident AS i) AS x
    WHERE u.id IS NOT NULL AND (items[u.j]).kind = 'incident';
    INSERT INTO brain.task (workspace_id, memory_id, status, priority, due_at, status_note, status_changed_at)
    SELECT ws, u.id, coalesce((x.t).status, 'open'), coalesce((x.t).priority, 3), (x.t).due_at, (x.t).status_note,
           coalesce((x.t).status_changed_at, now())
    FROM unnest(ids) WITH ORDINALITY AS u(id, j)
    CROSS JOIN LATERAL (SELECT (items[u.j]).task AS t) AS x
    WHERE u.id IS NOT NULL AND (items[u.j]).kind = 'task';

    -- the vectors (after their checks at commit are registered: the trigger's
    -- condition is read as each row goes in)
    vectors := ARRAY(SELECT u.vector FROM unnest(items) WITH ORDINALITY AS u ORDER BY u.ordinality);
    IF check_at_commit IS NOT NULL THEN
        PERFORM brain._check_at_commit(u.id, space_id, check_at_commit->>'on_related',
                                       (check_at_commit->>'lookup')::pg_snapshot)
        FROM unnest(ids, vectors) AS u(id, v)
        WHERE u.id IS NOT NULL AND u.v IS NOT NULL;
    END IF;
    IF EXISTS (SELECT FROM unnest(vectors) AS v WHERE v IS NOT NULL) THEN
        PERFORM brain._store_vectors(ids, vectors, _store_memories.space_id, coalesce(ingest_seq, 0));
    END IF;
    IF NOT vectors_later
       AND (EXISTS (SELECT FROM unnest(vectors) AS v WHERE v IS NULL) OR coalesce(ingest_seq, 0) > 0) THEN
        PERFORM pg_notify('brain_embedding', '');  -- a wake-up only: any role may LISTEN
    END IF;

    IF audit IS NOT NULL THEN
        PERFORM brain._audit_many(ARRAY(SELECT i FROM unnest(ids) AS i WHERE i IS NOT NULL), 'insert',
                                  audit->>'actor', coalesce(audit->'detail', '{}'));
    END IF;
    RETURN ids;
END
$$;

-- A draft of a memory (brain.memory_draft, migrations 028 and 037): what the
-- function a caller names was given, by name (its kind, text and scope; tags,
-- metadata, vector, provenance, expiry and the memory it replaces), with the
-- defaults of a write: no tags, an empty metadata object, not pinned,
-- foldable, no kind fields (brain._draft_details adds them). The one filler of
-- a draft's fields; the caller hands the draft to brain._write.
CREATE OR REPLACE FUNCTION brain._draft(kind text, headline text, body text DEFAULT '', category text DEFAULT NULL,
                                        origin text DEFAULT 'explicit', project text DEFAULT '',
                                        tags text[] DEFAULT '{}', importance double precision DEFAULT NULL,
                                        pinned boolean DEFAULT false, skill_trigger jsonb DEFAULT NULL,
                                        metadata jsonb DEFAULT '{}', embedding double precision[] DEFAULT NULL,
                                        embedding_space text DEFAULT NULL, source_agent text DEFAULT NULL,
                                        session_id bigint DEFAULT NULL, source_system text DEFAULT NULL,
                                        source_ref text DEFAULT NULL, source_hash text DEFAULT NULL,
                                        expires_at timestamptz DEFAULT NULL, supersedes bigint DEFAULT NULL)
RETURNS brain.memory_draft
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d brain.memory_draft;  -- (the kind fields, and what a batch or an import sets besides: none)
BEGIN
    d.kind := kind; d.headline := headline; d.body := body; d.category := category; d.origin := origin;
    d.project := project; d.tags := tags; d.importance := importance; d.pinned := pinned;
    d.skill_trigger := skill_trigger; d.metadata := metadata; d.embedding := embedding;
    d.embedding_space := embedding_space; d.source_agent := source_agent; d.session_id := session_id;
    d.source_system := source_system; d.source_ref := source_ref; d.source_hash := source_hash;
    d.expires_at := expires_at; d.supersedes := supersedes; d.foldable := true;
    RETURN d;
END
$$;

-- The kind fields of a draft, as the flat API takes them: each detail is set
-- when one of its fields is given, whatever the kind, so that brain._write
-- refuses a field of another kind as before.
CREATE OR REPLACE FUNCTION brain._draft_details(d brain.memory_draft, severity text, halflife_days double precision,
                                                status text, priority integer, due_at timestamptz,
                                                what_was_wrong text, what_is_correct text, error_message text,
                                                command_attempted text, related_files text[], complexity text)
RETURNS brain.memory_draft
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    d.rule := CASE WHEN severity IS NOT NULL THEN ROW(severity, NULL)::brain.rule_detail END;
    d.fact := CASE WHEN halflife_days IS NOT NULL THEN ROW(halflife_days)::brain.fact_detail END;
    d.task := CASE WHEN num_nonnulls(status, priority, due_at) > 0
                   THEN ROW(status, priority, due_at, NULL, NULL)::brain.task_detail END;
    d.incident := CASE WHEN num_nonnulls(what_was_wrong, what_is_correct, error_message, command_attempted,
                                         complexity) > 0 OR cardinality(related_files) > 0
                       THEN ROW(what_was_wrong, what_is_correct, error_message, command_attempted,
                                related_files, complexity)::brain.incident_detail END;
    RETURN d;
END
$$;

-- The write core: one memory from its draft, through the gate (secrets, kind
-- fields, the gate's checks), exact and near-identical dedup, the related
-- policy (p_on_related, p_reason), then stored with its kind row, vector and
-- audit. p_check_only validates and returns the embedding input.
CREATE OR REPLACE FUNCTION brain._write(
    d brain.memory_draft, p_check_only boolean, p_on_related text DEFAULT 'refuse', p_reason text DEFAULT NULL)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    v_headline text := brain.clean_headline(d.headline);
    v_body text := brain.trim_space(brain.clean_body(coalesce(d.body, '')));
    v_project text := coalesce(d.project, '');
    v_origin text := coalesce(d.origin, 'explicit');
    v_normalized text;
    full_text text;
    space brain.embedding_space;
    vec public.vector;
    near record;
    existing brain.memory;
    related brain.memory;
    related_sim real;
    item brain.memory;  -- the new memory as its near verdicts and a fold see it
    lookup pg_snapshot;
    near_ids bigint[];  -- the lookup's near memories of the kind and project (brain._near_write)
    near_sims real[];
    lock_ids bigint[];  -- those and the space's 5 nearest (brain._lock_near)
    r brain.write_result;
BEGIN
    PERFORM brain._check_drafts(ARRAY[d], p_on_related, p_reason);
    full_text := v_headline || E'\n' || v_body;
    IF p_check_only THEN
        r := ROW('valid', NULL, NULL, NULL, NULL, brain.embedding_input(v_headline, v_body));
        RETURN r;
    END IF;

    IF d.embedding IS NOT NULL THEN
        IF current_setting('transaction_isolation') = 'repeatable read' THEN
            PERFORM brain._raise('BR009', 'A write with an embedding cannot run under REPEATABLE READ.',
                jsonb_build_object('transaction_isolation', 'repeatable read'),
                'Use READ COMMITTED (the default) or SERIALIZABLE: under REPEATABLE READ the duplicate check at '
                'commit would not see a near-duplicate that another transaction committed meanwhile.');
        END IF;
        space := brain._write_space(d.embedding_space);
        vec := brain._check_vector(d.embedding, space);
        -- Only writers that could conflict take turns (brain._lock_near; the
        -- check at commit, brain._commit_check, makes the race certain).
        PERFORM brain._lock_writes_shared(d.kind, v_project);
        IF d.kind <> 'incident' THEN
            lookup := pg_current_snapshot();  -- what the lookup saw at least
            SELECT coalesce(array_agg(x.memory_id) FILTER (WHERE x.decides), '{}'),
                   coalesce(array_agg(x.similarity) FILTER (WHERE x.decides), '{}'),
                   coalesce(array_agg(x.memory_id), '{}')
            INTO near_ids, near_sims, lock_ids
            FROM brain._near_write(space, vec, d.kind, v_project, d.supersedes, space.related) AS x;
            PERFORM brain._lock_near(space, d.kind, v_project, lock_ids);
        END IF;
    END IF;

    v_normalized := brain.normalize_text(v_headline, v_body);
    r := brain._exact_duplicate(d.kind, v_project, v_normalized, brain.embedding_input(v_headline, v_body));
    IF r.memory_id IS NOT NULL THEN
        RETURN r;
    END IF;
    -- the draft becomes the memory to store: flagged as the text was sent, before
    -- cleaning (brain._store_memories), its text in normal form (its vector: below)
    d.sent := concat_ws(E'\n', d.headline, d.body);
    d.headline := v_headline;
    d.body := v_body;
    d.origin := v_origin;
    d.project := v_project;
    d.normalized := v_normalized;
    d.embedding := NULL;

    IF vec IS NOT NULL AND d.kind <> 'incident' THEN
        -- The nearest memories as the lookup before the locks found them when no
        -- other transaction has ended since (nothing new to see: the same rows),
        -- else looked up again behind the locks. What this lookup cannot see, the
        -- check at commit will.
        IF brain._ended_since(lookup) THEN
            lookup := pg_current_snapshot();
            SELECT coalesce(array_agg(x.memory_id), '{}'), coalesce(array_agg(x.similarity), '{}')
            INTO near_ids, near_sims
            FROM brain._near_write(space, vec, d.kind, v_project, d.supersedes, space.related) AS x
            WHERE x.decides;
        END IF;
        -- The nearest with a verdict (brain._first_verdict) decides: a fold
        -- takes the write in, a related one meets the write's on_related policy.
        item := jsonb_populate_record(NULL::brain.memory, to_jsonb(d));
        -- (its terms once, for every near memory's verdict: theirs are stored)
        item.fact_terms := CASE WHEN cardinality(near_ids) > 0
                                THEN brain.distinguishing_terms(item.headline || E'\n' || item.body) END;
        SELECT * INTO near FROM brain._first_verdict(item, near_ids, near_sims, space, p_on_related);
        IF near.verdict = 'fold' THEN
            RETURN brain._fold_item((near.kept).memory_id, item, near.similarity, vec, space.space_id,
                                    d.source_agent, '{}');
        END IF;
        IF near.verdict = 'related' THEN
            existing := near.kept;
            IF p_on_related = 'refuse' THEN
                PERFORM brain._raise('BR008',
                    format('A related %s already exists: #%s "%s" (similarity %s).', d.kind,
                           existing.memory_id, existing.headline, round(near.similarity::numeric, 3)),
                    jsonb_build_object('duplicate_of', existing.memory_id, 'similarity', near.similarity,
                                       'headline', existing.headline, 'threshold', space.related,
                                       'on_related', jsonb_build_array('refuse', 'store', 'supersede')),
                    format('If the new text corrects or extends it, supersede it: brain supersede %1$s ... '
                           '(SQL: brain.supersede(old_id => %1$s, ...)), or replace it in this write: '
                           '--on-related supersede (SQL: on_related => ''supersede''). If both are true, '
                           'store it anyway: --on-related store (SQL: on_related => ''store'').', existing.memory_id));
            END IF;
            related := existing;
            related_sim := near.similarity;
        END IF;
    END IF;
    IF p_on_related = 'supersede' AND related.memory_id IS NULL AND d.supersedes IS NULL THEN
        PERFORM brain._nothing_to_supersede(d.kind, v_project, v_origin, space, vec, near_ids, near_sims);
    END IF;

    d.tags := ARRAY(SELECT DISTINCT lower(brain.trim_space(t))
                    FROM unnest(coalesce(d.tags, '{}') || brain.extract_tags(full_text)) AS t
                    WHERE brain.trim_space(t) <> '');
    d.vector := vec;
    d.dedup_pending := vec IS NULL;
    d.dormant_after := CASE WHEN d.kind = 'fact' AND NOT brain._undecaying(v_origin) THEN brain._dormant_after(now(),
        coalesce((d.fact).halflife_days, (brain.setting('fact_halflife_days'))::double precision)) END;
    -- the row, its kind row and vector (with the check at commit of a write that
    -- looked for its near memories), in the one write core
    existing.memory_id := (brain._store_memories(ARRAY[d], space_id => space.space_id,
        check_at_commit => CASE WHEN vec IS NOT NULL AND d.kind <> 'incident'
                                THEN jsonb_build_object('on_related', p_on_related, 'lookup', lookup::text) END))[1];

    IF existing.memory_id IS NULL THEN
        -- Another transaction stored the same text first.
        RETURN brain._exact_duplicate(d.kind, v_project, v_normalized, brain.embedding_input(v_headline, v_body));
    END IF;
    IF d.kind = 'trajectory' THEN
        -- checked again here: the setting is the caller's to set
        PERFORM brain._insert_trajectory(existing.memory_id, current_setting('brain.trajectory', true)::jsonb);
    END IF;

    -- (the source and on_related were scanned with the draft; the rest are ids and a figure)
    PERFORM brain._audit(existing.memory_id, 'insert', d.source_agent,
        CASE WHEN d.supersedes IS NULL THEN '{}'::jsonb
             ELSE jsonb_build_object('supersedes', d.supersedes) END
        || CASE WHEN related.memory_id IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('related', related.memory_id, 'similarity', related_sim,
                                        'on_related', p_on_related) END, checked => true);
    IF related.memory_id IS NOT NULL AND p_on_related = 'supersede' THEN
        PERFORM brain._mark_superseded(related, existing.memory_id,
            coalesce(nullif(brain.trim_space(p_reason), ''),
                     format('replaced by the related write #%s (similarity %s)', existing.memory_id,
                            round(related_sim::numeric, 3))),
            d.source_agent);
    END IF;
    -- A memory this session was shown and now cites (#id) counts as used.
    PERFORM brain._note_cites(full_text, d.session_id);
    r := ROW('created', existing.memory_id, related.memory_id, related_sim, vec IS NULL,
             brain.embedding_input(v_headline, v_body));
    RETURN r;
END
$$;

-- A batch writer's embeddings attached to its staged chunks (brain.staged_memory):
-- one row per chunk at places (every chunk when NULL), in order, each through
-- the same checks as the embedding of one brain.remember.
CREATE OR REPLACE FUNCTION brain._stage_vectors(staged brain.staged_memory[], embeddings double precision[],
                                                space brain.embedding_space, places integer[] DEFAULT NULL)
RETURNS brain.staged_memory[]
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    vecs public.vector[];
BEGIN
    IF coalesce(array_length(embeddings, 1), 0) <> coalesce(cardinality(places), cardinality(staged), 0) THEN
        PERFORM brain._raise('BR012', format('%s embedding rows for %s chunks%s.', coalesce(array_length(embeddings, 1), 0),
                                             coalesce(cardinality(places), cardinality(staged), 0),
                                             CASE WHEN places IS NOT NULL THEN ' to store' ELSE '' END),
            jsonb_build_object('rows', coalesce(array_length(embeddings, 1), 0),
                               'chunks', coalesce(cardinality(places), cardinality(staged), 0)),
            'Run with check_only => true first: it returns the chunks to embed, in order.');
    END IF;
    places := coalesce(places, ARRAY(SELECT generate_series(1, coalesce(cardinality(staged), 0))));
    -- (Row r as a one-dimensional array: its slice, unnested. Grouping all the
    -- elements back into rows cost three times as long.)
    vecs := ARRAY(SELECT brain._check_vector(ARRAY(SELECT unnest(embeddings[r:r][1:array_length(embeddings, 2)])), space)
                  FROM generate_series(1, cardinality(places)) AS r
                  ORDER BY r);
    FOR k IN 1 .. cardinality(places) LOOP
        staged[places[k]].vector := vecs[k];
    END LOOP;
    RETURN staged;
END
$$;

-- A batch writer's turn to store rows of a kind and project (brain._lock_writes),
-- with n vectors in space (NULL: none sent); returns the batch's ingest_seq
-- when its vectors wait for brain.index_vectors, else 0. A large batch
-- leaves its vectors out of the HNSW index (an insert there costs 1.5-2.5 ms
-- a vector): searches rank them exactly, and brain.index_vectors (`brain
-- worker`) indexes them and runs their near-identical dedup later. When
-- index_pending_max vectors already wait, the batch first moves as many as it
-- adds into the index (before it takes its own write lock; not while the
-- worker indexes the space: it is on it already), so exact ranking never
-- covers more.
CREATE OR REPLACE FUNCTION brain._batch_turn(space brain.embedding_space, n integer, kind text, project text)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
BEGIN
    IF space.space_id IS NOT NULL AND n >= (brain.setting('index_defer_rows'))::integer
       AND (SELECT count(*) FROM (SELECT FROM brain._waiting_vectors(space)
                                  LIMIT (brain.setting('index_pending_max'))::integer) AS w)
           >= (brain.setting('index_pending_max'))::integer THEN
        PERFORM brain._insert_waiting(space, n, false, kind, project);
    END IF;
    PERFORM brain._lock_writes(kind, project);
    -- Taken behind the lock, so within a kind and project ingest_seq follows
    -- memory_id, the order brain.index_vectors compares them in.
    RETURN CASE WHEN space.space_id IS NOT NULL AND n >= (brain.setting('index_defer_rows'))::integer
                THEN nextval('brain.embedding_ingest_seq') ELSE 0 END;
END
$$;
