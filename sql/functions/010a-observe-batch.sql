-- Observed memories written: chat turns, tool output, runtime events and
-- document chunks, in batches (brain.observe_batch, brain.observe); dedup is
-- exact or near-identical only.

-- The context of an observed chunk: who spoke and when (metadata speaker or
-- role, date or session_date), its title and heading path (metadata title,
-- the chunk's section), the caller's own context, and the start of the turns
-- before and after it in its thread. At most 2000 characters.
CREATE OR REPLACE FUNCTION brain._observed_context(meta jsonb, given text, section text, before text, after text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT nullif(left(concat_ws(E'\n',
        nullif(concat_ws(' ', coalesce(meta->>'speaker', meta->>'role'), coalesce(meta->>'date', meta->>'session_date')), ''),
        nullif(concat_ws(' > ', meta->>'title', section), ''),
        brain.trim_space(given),
        'before: ' || brain._first_words(regexp_replace(before, '\s+', ' ', 'g'), 40),
        'after: ' || brain._first_words(regexp_replace(after, '\s+', ' ', 'g'), 40)), 2000), '')
$$;

CREATE OR REPLACE FUNCTION brain.observe_batch(
    texts text[],
    kind text DEFAULT 'fact',
    project text DEFAULT '',
    origin text DEFAULT 'observed',
    source_system text DEFAULT NULL,
    source_refs text[] DEFAULT NULL,
    source_agent text DEFAULT NULL,
    session_id bigint DEFAULT NULL,
    metadata jsonb[] DEFAULT NULL,
    embeddings double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    check_only boolean DEFAULT false,
    fold boolean DEFAULT NULL,
    contexts text[] DEFAULT NULL,
    threads text[] DEFAULT NULL,
    positions integer[] DEFAULT NULL
)
RETURNS TABLE (item integer, chunk integer, action text, memory_id bigint, duplicate_of bigint,
               similarity real, embedding_input text, error_code text, error text, provisional boolean,
               redacted jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
-- Columns win over variables (ON CONFLICT names columns that are also parameters here):
-- parameters are qualified with the function name wherever a table is in scope.
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    v_project text := coalesce(project, '');
    halflife double precision := (brain.setting('fact_halflife_days'))::double precision;
    -- records do not go dormant unless episodic_decay says so (brain._undecaying)
    dormant timestamptz := CASE WHEN brain._undecaying(origin) THEN NULL
                                ELSE brain._dormant_after(now(), halflife) END;
    n_items integer := coalesce(cardinality(texts), 0);
    n_vectors integer := CASE WHEN array_ndims(embeddings) = 2 THEN array_length(embeddings, 1) ELSE 0 END;
    dims integer := CASE WHEN array_ndims(embeddings) = 2 THEN array_length(embeddings, 2) END;
    -- One entry per chunk the gate let through, in batch order (n of them).
    n integer := 0;
    c_item integer[] := '{}';
    c_chunk integer[] := '{}';
    c_head text[] := '{}';
    c_body text[] := '{}';
    c_norm text[] := '{}';
    c_key uuid[] := '{}';  -- md5 of c_norm: the exact-dedup key
    c_meta jsonb[] := '{}';
    c_ref text[] := '{}';
    c_hash text[] := '{}';
    c_red jsonb[] := '{}';   -- the secrets redacted from the chunk's text: kind, start, end in the text as sent
    c_flag jsonb[] := '{}';  -- the text's injection signals (brain.injection_signals)
    c_ctx text[] := '{}';    -- context indexed with the chunk (brain._observed_context)
    c_thread text[] := '{}';
    c_pos integer[] := '{}';
    c_section text[] := '{}';
    obs record;
    -- The items the gate refused.
    bad_item integer[] := '{}';
    bad_code text[] := '{}';
    bad_message text[] := '{}';
    item_start integer;
    pieces text[];
    n_chunks integer;
    heads text[];
    sections text[];
    chunk_tokens integer := brain._chunk_tokens(embedding_space);
    ref text;
    text_hash text;
    h text;
    b text;
    meta jsonb;
    space brain.embedding_space;
    vecs public.vector[];
    existing_id bigint[];
    first_of integer[];
    new_id bigint[];
    sel integer[];  -- the chunks stored (brain._store_memories)
    got bigint[];
    created bigint[];
    near_id bigint[];
    near_sim real[];
    -- the batch's ingest_seq when its vectors wait for brain.index_vectors, else 0
    seq bigint := 0;
    defer boolean;
    -- The outcome of each chunk.
    res_action text[];
    res_id bigint[];
    res_dup bigint[];
    res_sim real[];
    target bigint;
    pos integer;
    hit record;
    r brain.write_result;
    mem brain.memory;
    kept brain.memory;
    -- near-identical dedup still owed by the rows this call reports created
    owed boolean := false;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('kind', kind, 'origin', origin, 'project', project,
                                                     'source_system', source_system, 'source_agent', source_agent));
    IF origin IS NULL OR origin NOT IN ('observed', 'artifact') THEN
        PERFORM brain._raise('BR009', 'observe stores observed events or artifact chunks.',
            jsonb_build_object('field', 'origin', 'allowed', jsonb_build_array('observed', 'artifact')), 'Authored memories go through brain.remember.');
    END IF;
    IF kind IS NULL OR kind NOT IN ('fact', 'incident') THEN
        PERFORM brain._raise('BR009', 'Observed memories are facts or incidents.',
            jsonb_build_object('field', 'kind', 'allowed', jsonb_build_array('fact', 'incident')), 'Rules and tasks are authored: use brain.remember.');
    END IF;
    IF source_refs IS NOT NULL AND cardinality(source_refs) <> n_items
       OR metadata IS NOT NULL AND cardinality(metadata) <> n_items
       OR contexts IS NOT NULL AND cardinality(contexts) <> n_items
       OR threads IS NOT NULL AND cardinality(threads) <> n_items
       OR positions IS NOT NULL AND cardinality(positions) <> n_items THEN
        PERFORM brain._raise('BR009', 'source_refs, metadata, contexts, threads and positions need one entry per text.',
            jsonb_build_object('texts', n_items, 'source_refs', cardinality(source_refs),
                               'metadata', cardinality(metadata), 'contexts', cardinality(contexts),
                               'threads', cardinality(threads), 'positions', cardinality(positions)),
            'Pass one entry per text (NULL entries are allowed), or leave the array out.');
    END IF;
    IF embeddings IS NOT NULL AND array_ndims(embeddings) <> 2 THEN
        PERFORM brain._raise('BR012', 'embeddings is a two-dimensional array: one row per chunk.', NULL,
            'Run with check_only => true first: it returns the chunks to embed, in order.');
    END IF;
    -- Pending action items block every write of the session they wait for.
    PERFORM brain._check_write_allowed(session_id);

    -- 1. Chunks, headlines and the gate, item by item: a refused item is
    --    reported and skipped, the rest of the batch goes on.
    FOR i IN 1 .. n_items LOOP
        item_start := n;
        BEGIN
            PERFORM brain._refuse_secrets(jsonb_build_object('metadata', metadata[i], 'source_ref', source_refs[i],
                                                             'context', contexts[i], 'thread', threads[i]));
            PERFORM brain._check_length('context', contexts[i], 4000);
            PERFORM brain._check_length('thread', threads[i], 2000);
            -- The text is stored with its secrets redacted and its hidden characters removed.
            obs := brain._clean_observed(texts[i]);
            IF metadata[i]->>'role' IN ('user', 'assistant') THEN
                obs.signals := brain._turn_signals(texts[i], metadata[i]);  -- its speaker is no role marker
            END IF;
            texts[i] := obs.cleaned;
            IF metadata[i] IS NOT NULL AND jsonb_typeof(metadata[i]) <> 'object' THEN
                PERFORM brain._raise('BR009', 'metadata is a JSON object.', NULL,
                    'Example: ''{"ticket": "OPS-12"}''.');
            END IF;
            -- Each chunk headed by its heading path, or by its own first line
            -- (a titled text's chunks leave room for the title they are embedded with).
            SELECT array_agg(c.body ORDER BY c.chunk), array_agg(c.headline ORDER BY c.chunk),
                   array_agg(c.section ORDER BY c.chunk)
            INTO pieces, heads, sections
            FROM brain.chunk_text(texts[i], brain._titled_chunk_tokens(chunk_tokens,
                     brain._embedding_title(observe_batch.origin, metadata[i]))) AS c;
            n_chunks := cardinality(pieces);
            text_hash := md5(texts[i]);
            ref := coalesce(source_refs[i], CASE WHEN n_chunks > 1 THEN text_hash END);
            FOR k IN 1 .. n_chunks LOOP
                h := heads[k];
                -- A text that fits its headline is not repeated as a body.
                b := CASE WHEN n_chunks = 1 AND brain.normalize_text(pieces[k]) = brain.normalize_text(h)
                          THEN '' ELSE pieces[k] END;
                meta := coalesce(metadata[i], '{}')
                        || CASE WHEN n_chunks > 1 THEN jsonb_build_object('chunk', k, 'chunks', n_chunks)
                                ELSE '{}' END
                        || CASE WHEN n_chunks > 1 AND sections[k] IS NOT NULL
                                THEN jsonb_build_object('section', sections[k]) ELSE '{}' END;
                PERFORM brain._gate(kind, h, b, NULL, 'episodic', origin, concat_ws(E'\n', meta::text, ref));
                n := n + 1;
                c_item[n] := i;
                c_chunk[n] := k;
                c_head[n] := h;
                c_body[n] := b;
                -- An observation with its source named is a record of that source: the
                -- same text from another source (a repeated question, another session's
                -- turn) is stored as its own record, and only the same source's is a
                -- duplicate (a transcript read again).
                c_norm[n] := brain.normalize_text(h, b)
                             || CASE WHEN source_refs[i] IS NOT NULL THEN E'\n@' || source_refs[i] ELSE '' END;
                c_key[n] := md5(c_norm[n])::uuid;
                c_meta[n] := meta;
                c_ref[n] := ref;
                c_hash[n] := text_hash;
                c_red[n] := obs.redacted;
                c_flag[n] := to_jsonb(obs.signals);
                -- a thread given, or the chunks of one long text: a document in chunk order
                c_thread[n] := coalesce(threads[i], CASE WHEN n_chunks > 1 THEN ref END);
                c_pos[n] := CASE WHEN threads[i] IS NOT NULL THEN coalesce(positions[i], i)
                                 WHEN n_chunks > 1 THEN k END;
                c_section[n] := sections[k];
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            IF SQLSTATE NOT LIKE 'BR%' THEN
                RAISE;
            END IF;
            n := item_start;  -- its chunks are dropped (and need no embedding rows)
            bad_item := bad_item || i;
            bad_code := bad_code || SQLSTATE::text;
            bad_message := bad_message || SQLERRM;
        END;
    END LOOP;
    c_item := c_item[1:n]; c_chunk := c_chunk[1:n]; c_head := c_head[1:n]; c_body := c_body[1:n];
    c_norm := c_norm[1:n]; c_key := c_key[1:n]; c_meta := c_meta[1:n]; c_ref := c_ref[1:n]; c_hash := c_hash[1:n];
    c_red := c_red[1:n]; c_flag := c_flag[1:n];
    c_thread := c_thread[1:n]; c_pos := c_pos[1:n]; c_section := c_section[1:n];
    -- 1b. Context (docs/ranking.md): indexed with each chunk, not part of its text.
    c_ctx := ARRAY(
        SELECT brain._observed_context(c_meta[j], contexts[c_item[j]], c_section[j],
                   -- the turns before and after it in its thread, of this batch (their text as stored)
                   (SELECT texts[x.i] FROM generate_series(1, n_items) AS x(i)
                    WHERE threads IS NOT NULL AND threads[x.i] = threads[c_item[j]] AND x.i <> ALL (bad_item)
                      AND coalesce(positions[x.i], x.i) = coalesce(positions[c_item[j]], c_item[j]) - 1 LIMIT 1),
                   (SELECT texts[x.i] FROM generate_series(1, n_items) AS x(i)
                    WHERE threads IS NOT NULL AND threads[x.i] = threads[c_item[j]] AND x.i <> ALL (bad_item)
                      AND coalesce(positions[x.i], x.i) = coalesce(positions[c_item[j]], c_item[j]) + 1 LIMIT 1))
        FROM generate_series(1, n) AS j ORDER BY j);

    IF check_only THEN
        RETURN QUERY
        SELECT u.item, u.chunk, 'valid'::text, NULL::bigint, NULL::bigint, NULL::real,
               brain.embedding_input(u.h, u.b, brain._embedding_title(observe_batch.origin, u.meta)),
               NULL::text, NULL::text, false, u.red
        FROM unnest(c_item, c_chunk, c_head, c_body, c_red, c_meta) AS u(item, chunk, h, b, red, meta)
        UNION ALL
        SELECT x.item, NULL, 'rejected', NULL, NULL, NULL, NULL, x.code, x.message, false, NULL
        FROM unnest(bad_item, bad_code, bad_message) AS x(item, code, message)
        ORDER BY 1, 2 NULLS FIRST;
        RETURN;
    END IF;

    -- 2. The embeddings: one row per chunk that passed, in order.
    IF embeddings IS NOT NULL THEN
        IF n_vectors <> n THEN
            PERFORM brain._raise('BR012', format('%s embedding rows for %s chunks.', n_vectors, n),
                jsonb_build_object('rows', n_vectors, 'chunks', n),
                'Run with check_only => true first: it returns the chunks to embed, in order.');
        END IF;
        space := brain._write_space(embedding_space);
        -- Each row through the same checks as one embedding of brain.remember.
        -- (Row r as a one-dimensional array: its slice, unnested. Grouping
        -- all the elements back into rows cost three times as long.)
        vecs := ARRAY(SELECT brain._check_vector(ARRAY(SELECT unnest(embeddings[r:r][1:dims])), space)
                      FROM generate_series(1, n_vectors) AS r
                      ORDER BY r);
        -- A large batch leaves its vectors out of the HNSW index (an insert there
        -- costs 1.5-2.5 ms a vector): searches rank them exactly, and
        -- brain.index_vectors (`brain worker`) indexes them and runs their
        -- near-identical dedup later. When index_pending_max vectors already
        -- wait, the batch first moves as many as it adds into the index (before
        -- it takes its own write lock), so exact ranking never covers more.
        defer := n >= (brain.setting('index_defer_rows'))::integer;
        IF defer THEN
            IF (SELECT count(*) FROM (SELECT FROM brain._waiting_vectors(space)
                                      LIMIT (brain.setting('index_pending_max'))::integer) AS w)
               >= (brain.setting('index_pending_max'))::integer THEN
                -- (not while the worker indexes the space: it is on it already)
                PERFORM brain._insert_waiting(space, n, false, kind, v_project);
            END IF;
        END IF;
        PERFORM brain._lock_writes(kind, v_project);
        -- Taken behind the lock, so within a kind and project ingest_seq follows
        -- memory_id, the order brain.index_vectors compares them in.
        IF defer THEN
            seq := nextval('brain.embedding_ingest_seq');
        END IF;
    END IF;

    -- 3. Exact duplicates: of an active memory, or of an earlier chunk of this batch.
    SELECT array_agg(x.existing ORDER BY x.j), array_agg(x.fst ORDER BY x.j)
    INTO existing_id, first_of
    FROM (SELECT u.j, min(u.j) OVER (PARTITION BY u.nm) AS fst,
                 (brain._exact_duplicate(observe_batch.kind, v_project, u.nm, NULL)).memory_id AS existing
          FROM unnest(c_norm) WITH ORDINALITY AS u(nm, j)) AS x;

    -- 4. The new memories, their kind rows and embeddings (or one wake-up of the worker).
    --    (through the one write core; a later chunk with the text of an earlier one takes its id)
    sel := ARRAY(SELECT u.j FROM unnest(existing_id, first_of) WITH ORDINALITY AS u(existing, fst, j)
                 WHERE u.existing IS NULL AND u.fst = u.j ORDER BY u.j);
    got := brain._store_memories(ARRAY(
        SELECT jsonb_populate_record(NULL::brain.memory, jsonb_build_object(
                   'kind', observe_batch.kind, 'category', 'episodic', 'origin', observe_batch.origin,
                   'project', v_project, 'headline', c_head[s.j], 'body', c_body[s.j], 'normalized', c_norm[s.j],
                   'metadata', c_meta[s.j], 'source_agent', observe_batch.source_agent,
                   'session_id', observe_batch.session_id, 'source_system', observe_batch.source_system,
                   'source_ref', c_ref[s.j], 'source_hash', c_hash[s.j], 'dedup_pending', vecs IS NULL,
                   'dormant_after', CASE WHEN observe_batch.kind = 'fact' THEN dormant END,
                   'foldable', coalesce(observe_batch.fold, true), 'flag_reasons', c_flag[s.j],
                   'context', c_ctx[s.j], 'thread', c_thread[s.j], 'position', c_pos[s.j]))
        FROM unnest(sel) WITH ORDINALITY AS s(j, k) ORDER BY s.k),
        vectors => CASE WHEN vecs IS NOT NULL THEN ARRAY(SELECT vecs[s.j] FROM unnest(sel) WITH ORDINALITY AS s(j, k)
                                                         ORDER BY s.k) END,
        space_id => space.space_id, ingest_seq => seq, audit => jsonb_build_object('actor', source_agent));
    new_id := array_fill(NULL::bigint, ARRAY[n]);
    FOR k IN 1 .. cardinality(sel) LOOP
        new_id[sel[k]] := got[k];
    END LOOP;
    FOR k IN 1 .. n LOOP
        IF first_of[k] <> k THEN
            new_id[k] := new_id[first_of[k]];
        END IF;
    END LOOP;

    created := ARRAY(SELECT u.id FROM unnest(new_id, first_of) WITH ORDINALITY AS u(id, fst, j)
                     WHERE u.fst = u.j AND u.id IS NOT NULL ORDER BY u.j);

    res_action := array_fill(NULL::text, ARRAY[n]);
    res_id := array_fill(NULL::bigint, ARRAY[n]);
    res_dup := array_fill(NULL::bigint, ARRAY[n]);
    res_sim := array_fill(NULL::real, ARRAY[n]);


    -- 5. Near-identical: each new fact's nearest active memory of its kind and
    --    project among those older than it (stored before, or earlier in this
    --    batch). A hit that may fold (the same distinguishing terms, not a
    --    chunk of the same source, folding on for the write and the space:
    --    brain._may_fold) folds the new row into that memory
    --    (brain._fold_into: the row is tombstoned pointing there, the longer
    --    text kept, the other item recorded in brain.memory_fold).
    --    (A batch whose vectors wait for the index is compared when indexed;
    --    unless an index rebuild that began after this batch took its
    --    ingest_seq holds them already: then no later pass would.)
    owed := kind <> 'incident' AND coalesce(fold, true)
            AND (vecs IS NULL OR space.fold_observed);
    IF vecs IS NOT NULL AND kind <> 'incident' AND cardinality(created) > 0
       AND (seq = 0 OR seq <= (SELECT es.indexed_through FROM brain.embedding_space es
                               WHERE es.workspace_id = ws AND es.space_id = space.space_id)) THEN
        owed := false;
        -- in the order of created (all looked up before any row is folded)
        SELECT array_agg(x.nearest ORDER BY array_position(created, x.memory_id)),
               array_agg(x.similarity ORDER BY array_position(created, x.memory_id))
        INTO near_id, near_sim
        FROM brain._nearest_older(space, created, observe_batch.kind, v_project) AS x;
        FOR hit IN
            SELECT u.id, u.near, u.sim, array_position(new_id, u.id) AS j
            FROM unnest(created, near_id, near_sim) AS u(id, near, sim)
            WHERE u.sim >= space.near_identical
            ORDER BY 4
        LOOP
            -- An earlier row of this batch may itself have been folded: follow it.
            target := hit.near;
            pos := array_position(new_id, target);
            IF pos IS NOT NULL AND res_id[pos] IS NOT NULL THEN
                target := res_id[pos];
            END IF;
            SELECT * INTO kept FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = target;
            SELECT * INTO mem FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = hit.id;
            CONTINUE WHEN NOT brain._may_fold(kept, mem.headline, mem.body, mem.origin, mem.source_ref,
                                              mem.foldable, space);
            r := brain._fold_into(mem, target, hit.sim, vecs[hit.j], space.space_id, observe_batch.source_agent);
            res_action[hit.j] := r.action;
            res_id[hit.j] := target;
            res_dup[hit.j] := target;
            res_sim[hit.j] := hit.sim;
        END LOOP;
    END IF;

    -- 6. One result row per chunk, and one per refused item, in batch order.
    FOR j IN 1 .. n LOOP
        CONTINUE WHEN res_action[j] IS NOT NULL;
        IF existing_id[j] IS NOT NULL THEN
            res_action[j] := 'skipped'; res_id[j] := existing_id[j]; res_dup[j] := existing_id[j]; res_sim[j] := 1;
        ELSIF first_of[j] <> j THEN
            -- the same text as an earlier chunk of the batch: where that one went
            target := coalesce(res_id[first_of[j]], new_id[first_of[j]], existing_id[first_of[j]]);
            res_action[j] := 'skipped'; res_id[j] := target; res_dup[j] := target; res_sim[j] := 1;
        ELSIF new_id[j] IS NULL THEN
            -- another transaction stored the same text first
            r := brain._exact_duplicate(kind, v_project, c_norm[j], NULL);
            res_action[j] := 'skipped'; res_id[j] := r.memory_id; res_dup[j] := r.memory_id; res_sim[j] := 1;
        ELSE
            res_action[j] := 'created'; res_id[j] := new_id[j];
        END IF;
    END LOOP;

    RETURN QUERY
    SELECT u.item, u.chunk, u.act, u.id, u.dup, u.sim,
           brain.embedding_input(u.h, u.b, brain._embedding_title(observe_batch.origin, u.meta)), NULL::text, NULL::text,
           u.act = 'created' AND owed, u.red
    FROM unnest(c_item, c_chunk, res_action, res_id, res_dup, res_sim, c_head, c_body, c_red, c_meta)
         AS u(item, chunk, act, id, dup, sim, h, b, red, meta)
    UNION ALL
    SELECT x.item, NULL, 'rejected', NULL, NULL, NULL, NULL, x.code, x.message, false, NULL
    FROM unnest(bad_item, bad_code, bad_message) AS x(item, code, message)
    ORDER BY 1, 2 NULLS FIRST;
END
$$;
COMMENT ON FUNCTION brain.observe_batch IS
    'Stores many observed texts (chat turns, tool output, events) or artifact chunks in one call: derived headlines, long texts split into chunks sharing a source_ref, exact and near-identical dedup only. embeddings holds one row per chunk in order (check_only => true returns the chunks). An item the gate refuses is reported (action rejected, error_code) and the rest stored. Secrets in a text are redacted ([redacted:KIND]) and reported in `redacted` (kind, start, end in the text as sent); a secret in metadata or a source_ref refuses its item (BR007), in project, source_system or source_agent the batch. A batch of index_defer_rows (100) chunks or more leaves its vectors out of the HNSW index, searched exactly, until brain.index_vectors indexes them and runs their near-identical dedup: such rows (and rows queued without embeddings) are reported created with provisional = true, and brain.write_outcomes gives their final outcome. Near-identical rows fold only when they carry the same distinguishing terms; fold => false (or the space''s fold_observed = false) stores them apart, deduplicated exactly only.';

CREATE OR REPLACE FUNCTION brain.observe(
    text text,
    kind text DEFAULT 'fact',
    project text DEFAULT '',
    origin text DEFAULT 'observed',
    source_system text DEFAULT NULL,
    source_ref text DEFAULT NULL,
    source_agent text DEFAULT NULL,
    session_id bigint DEFAULT NULL,
    metadata jsonb DEFAULT NULL,
    embeddings double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    check_only boolean DEFAULT false,
    fold boolean DEFAULT NULL
)
RETURNS TABLE (item integer, chunk integer, action text, memory_id bigint, duplicate_of bigint,
               similarity real, embedding_input text, error_code text, error text, provisional boolean,
               redacted jsonb)
LANGUAGE plpgsql  -- (the write guard trusts a PL/pgSQL frame: it names its schema)
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT * FROM brain.observe_batch(ARRAY[observe.text], observe.kind, observe.project, observe.origin,
        observe.source_system, CASE WHEN observe.source_ref IS NULL THEN NULL ELSE ARRAY[observe.source_ref] END,
        observe.source_agent, observe.session_id,
        CASE WHEN observe.metadata IS NULL THEN NULL ELSE ARRAY[observe.metadata] END,
        observe.embeddings, observe.embedding_space, observe.check_only, observe.fold);
END
$$;
COMMENT ON FUNCTION brain.observe IS 'brain.observe_batch for one text.';

CREATE OR REPLACE FUNCTION brain.write_outcomes(memory_ids bigint[])
RETURNS TABLE (memory_id bigint, outcome text, current_id bigint, state text, provisional boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.id,
           CASE WHEN m.memory_id IS NULL THEN 'unknown'
                WHEN m.state = 'tombstoned' AND m.replaced_by IS NOT NULL
                     AND EXISTS (SELECT FROM brain.audit a
                                 WHERE a.workspace_id = m.workspace_id AND a.memory_id = m.memory_id
                                   AND a.action = 'dedup')
                     THEN 'folded'
                WHEN m.state = 'tombstoned' THEN 'forgotten'
                ELSE m.state END,
           CASE WHEN m.state = 'tombstoned' AND m.replaced_by IS NOT NULL THEN brain.current_version(m.replaced_by)
                WHEN m.memory_id IS NOT NULL THEN brain.current_version(m.memory_id) END,
           m.state,
           coalesce(m.state = 'active' AND m.foldable AND m.kind <> 'incident'
                    AND (m.dedup_pending
                         OR EXISTS (SELECT FROM brain.embedding e
                                    JOIN brain.embedding_space s ON s.workspace_id = e.workspace_id
                                                                 AND s.space_id = e.space_id
                                    WHERE e.workspace_id = m.workspace_id AND e.memory_id = m.memory_id
                                      AND s.state = 'active' AND s.fold_observed
                                      AND e.ingest_seq > s.folded_through)), false)
    FROM unnest(memory_ids) WITH ORDINALITY AS x(id, n)
    LEFT JOIN brain.memory m ON m.workspace_id = brain.current_workspace() AND m.memory_id = x.id
    ORDER BY x.n
$$;
COMMENT ON FUNCTION brain.write_outcomes IS
    'The final outcome of memories a write reported: active (or another state), folded (tombstoned into current_id, the memory that holds its item now: brain.recall(current_id) lists it under folds), forgotten, or unknown; provisional while their near-identical dedup is still owed (queued without an embedding, or waiting for brain.index_vectors).';
