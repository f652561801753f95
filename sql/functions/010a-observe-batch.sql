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

-- Stage 1 of brain.observe_batch for one of its texts: the text cleaned
-- (secrets redacted, hidden characters removed), split into chunks headed by
-- their heading path or their own first line, each chunk through the gate.
-- A text the gate refuses is one row with its error (and no chunk); any other
-- error stops the batch.
CREATE OR REPLACE FUNCTION brain._stage_observed(item integer, said text, kind text, origin text,
                                                 source_ref text, metadata jsonb, context text, thread text,
                                                 "position" integer, chunk_tokens integer)
RETURNS SETOF brain.staged_memory
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
-- (called once per text: planned once, not once per call)
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    obs record;
    text_hash text;  -- of the text as stored: its chunks' source_hash, and their ref when none is given
    staged brain.staged_memory[];
BEGIN
    BEGIN
        PERFORM brain._refuse_secrets(jsonb_build_object('metadata', metadata, 'source_ref', source_ref,
                                                         'context', context, 'thread', thread));
        PERFORM brain._check_length('context', context, 4000);
        PERFORM brain._check_length('thread', thread, 2000);
        -- The text is stored with its secrets redacted and its hidden characters removed.
        obs := brain._clean_observed(said);
        IF metadata->>'role' IN ('user', 'assistant') THEN
            obs.signals := brain._turn_signals(said, metadata);  -- its speaker is no role marker
        END IF;
        IF metadata IS NOT NULL AND jsonb_typeof(metadata) <> 'object' THEN
            PERFORM brain._raise('BR009', 'metadata is a JSON object.', NULL, 'Example: ''{"ticket": "OPS-12"}''.');
        END IF;
        text_hash := md5(obs.cleaned);
        staged := ARRAY(
            SELECT ROW(_stage_observed.item, c.chunk, NULL, c.headline, c.body,
                       -- An observation with its source named is a record of that source: the
                       -- same text from another source (a repeated question, another session's
                       -- turn) is stored as its own record, and only the same source's is a
                       -- duplicate (a transcript read again).
                       brain.normalize_text(c.headline, c.body) || coalesce(E'\n@' || _stage_observed.source_ref, ''),
                       coalesce(_stage_observed.metadata, '{}')
                       || CASE WHEN c.n > 1 THEN jsonb_build_object('chunk', c.chunk, 'chunks', c.n) ELSE '{}' END
                       || CASE WHEN c.n > 1 AND c.section IS NOT NULL
                               THEN jsonb_build_object('section', c.section) ELSE '{}' END,
                       c.section, c.ref, text_hash, obs.signals,
                       -- a thread given, or the chunks of one long text: a document in chunk order
                       coalesce(_stage_observed.thread, CASE WHEN c.n > 1 THEN c.ref END),
                       CASE WHEN _stage_observed.thread IS NOT NULL
                            THEN coalesce(_stage_observed.position, _stage_observed.item)
                            WHEN c.n > 1 THEN c.chunk END,
                       NULL, obs.cleaned, obs.redacted, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, NULL, NULL)::brain.staged_memory
            FROM (SELECT x.chunk, x.headline, x.section, x.n,
                         -- A text that fits its headline is not repeated as a body.
                         CASE WHEN x.n = 1 AND brain.normalize_text(x.body) = brain.normalize_text(x.headline)
                              THEN '' ELSE x.body END AS body,
                         coalesce(_stage_observed.source_ref, CASE WHEN x.n > 1 THEN text_hash END) AS ref
                  FROM (SELECT t.*, count(*) OVER () AS n
                        -- (a titled text's chunks leave room for the title they are embedded with)
                        FROM brain.chunk_text(obs.cleaned, brain._titled_chunk_tokens(chunk_tokens,
                                 brain._embedding_title(_stage_observed.origin, metadata))) AS t) AS x) AS c
            ORDER BY c.chunk);
        PERFORM brain._gate(kind, s.headline, s.body, NULL, 'episodic', origin,
                            concat_ws(E'\n', s.metadata::text, s.source_ref))
        FROM unnest(staged) AS s;
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE NOT LIKE 'BR%' THEN
            RAISE;
        END IF;
        staged := ARRAY[jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                            'item', _stage_observed.item, 'error_code', SQLSTATE, 'error', SQLERRM, 'action', 'rejected'))];
    END;
    RETURN QUERY SELECT * FROM unnest(staged);
END
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
    v_project text := coalesce(project, '');
    -- The chunks the gate let through, in batch order, and the texts it refused
    -- (brain.staged_memory), carried through the stages below.
    staged brain.staged_memory[];
    refused brain.staged_memory[];
    space brain.embedding_space;
    -- the batch's ingest_seq when its vectors wait for brain.index_vectors, else 0
    seq bigint := 0;
    -- near-identical dedup still owed by the rows this call reports created
    owed boolean;
    stored integer[];  -- the places of the chunks stored (brain._store_memories)
    items brain.memory_draft[];  -- the memories stored for them, with their vectors
    ids bigint[];      -- their new ids; then the ids of the rows created, in batch order
    hit record;
    target bigint;
    kept brain.memory;
    mem brain.memory;
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
    IF source_refs IS NOT NULL AND cardinality(source_refs) <> coalesce(cardinality(texts), 0)
       OR metadata IS NOT NULL AND cardinality(metadata) <> coalesce(cardinality(texts), 0)
       OR contexts IS NOT NULL AND cardinality(contexts) <> coalesce(cardinality(texts), 0)
       OR threads IS NOT NULL AND cardinality(threads) <> coalesce(cardinality(texts), 0)
       OR positions IS NOT NULL AND cardinality(positions) <> coalesce(cardinality(texts), 0) THEN
        PERFORM brain._raise('BR009', 'source_refs, metadata, contexts, threads and positions need one entry per text.',
            jsonb_build_object('texts', coalesce(cardinality(texts), 0), 'source_refs', cardinality(source_refs),
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

    -- 1. Stage: each text cleaned, chunked and through the gate (brain._stage_observed);
    --    a refused text is reported and skipped, the rest of the batch goes on.
    staged := ARRAY(
        SELECT s
        FROM (SELECT brain._chunk_tokens(observe_batch.embedding_space) AS tokens) AS t,
             generate_series(1, coalesce(cardinality(texts), 0)) AS i,
             brain._stage_observed(i, texts[i], observe_batch.kind, observe_batch.origin,
                                   source_refs[i], observe_batch.metadata[i], contexts[i], threads[i],
                                   positions[i], t.tokens) AS s
        ORDER BY s.item, s.chunk);
    refused := ARRAY(SELECT s FROM unnest(staged) AS s WHERE s.error_code IS NOT NULL);
    -- Each chunk with its context (docs/ranking.md), indexed with it, not part of its text: the
    -- turns before and after it are those of this batch in its thread (their text as stored).
    staged := ARRAY(
        WITH turn AS (
            SELECT DISTINCT ON (threads[s.item], coalesce(positions[s.item], s.item))
                   threads[s.item] AS thread, coalesce(positions[s.item], s.item) AS pos, s.said
            FROM unnest(staged) AS s
            WHERE s.error_code IS NULL AND threads[s.item] IS NOT NULL
            ORDER BY threads[s.item], coalesce(positions[s.item], s.item), s.item, s.chunk)
        SELECT jsonb_populate_record(s, jsonb_build_object('context',
                   brain._observed_context(s.metadata, contexts[s.item], s.section, b.said, a.said)))
        FROM unnest(staged) AS s
        LEFT JOIN turn AS b ON b.thread = threads[s.item] AND b.pos = coalesce(positions[s.item], s.item) - 1
        LEFT JOIN turn AS a ON a.thread = threads[s.item] AND a.pos = coalesce(positions[s.item], s.item) + 1
        WHERE s.error_code IS NULL
        ORDER BY s.item, s.chunk);

    IF check_only THEN
        RETURN QUERY
        SELECT s.item, s.chunk, 'valid'::text, NULL::bigint, NULL::bigint, NULL::real,
               brain.embedding_input(s.headline, s.body, brain._embedding_title(observe_batch.origin, s.metadata)),
               NULL::text, NULL::text, false, s.redacted
        FROM unnest(staged) AS s
        UNION ALL
        SELECT s.item, NULL, s.action, NULL, NULL, NULL, NULL, s.error_code, s.error, false, NULL
        FROM unnest(refused) AS s
        ORDER BY 1, 2 NULLS FIRST;
        RETURN;
    END IF;

    -- 2. The embeddings: one row per chunk that passed, in order.
    IF embeddings IS NOT NULL THEN
        space := brain._write_space(embedding_space);
        staged := brain._stage_vectors(staged, embeddings, space);
        -- (a large batch's vectors wait for brain.index_vectors: brain._batch_turn)
        seq := brain._batch_turn(space, cardinality(staged), kind, v_project);
    END IF;

    -- 3. Exact duplicates: of an active memory, or of an earlier chunk of this batch.
    staged := ARRAY(
        SELECT jsonb_populate_record(x.s, jsonb_build_object(
                   'existing', (brain._exact_duplicate(observe_batch.kind, v_project, (x.s).normalized, NULL)).memory_id,
                   'first_of', min(x.j) OVER (PARTITION BY (x.s).normalized)))
        FROM (SELECT s, row_number() OVER (ORDER BY s.item, s.chunk) AS j FROM unnest(staged) AS s) AS x
        ORDER BY x.j);

    -- 4. The new memories, their kind rows and embeddings (or one wake-up of the worker),
    --    through the one write core; a later chunk with the text of an earlier one takes its id.
    stored := ARRAY(SELECT j FROM generate_series(1, cardinality(staged)) AS j
                    WHERE (staged[j]).existing IS NULL AND (staged[j]).first_of = j ORDER BY j);
    items := ARRAY(
        SELECT jsonb_populate_record(NULL::brain.memory_draft, jsonb_build_object(
                   'kind', observe_batch.kind, 'category', 'episodic', 'origin', observe_batch.origin,
                   'project', v_project, 'headline', s.headline, 'body', s.body, 'normalized', s.normalized,
                   'metadata', s.metadata, 'source_agent', observe_batch.source_agent,
                   'session_id', observe_batch.session_id, 'source_system', observe_batch.source_system,
                   'source_ref', s.source_ref, 'source_hash', s.source_hash, 'dedup_pending', embeddings IS NULL,
                   'dormant_after', d.dormant, 'foldable', coalesce(observe_batch.fold, true),
                   'flag_reasons', to_jsonb(s.flags), 'context', s.context, 'thread', s.thread, 'position', s.position))
        FROM (SELECT s.*, row_number() OVER (ORDER BY s.item, s.chunk) AS j FROM unnest(staged) AS s) AS s,
             -- records do not go dormant unless episodic_decay says so (brain._undecaying)
             (SELECT CASE WHEN observe_batch.kind = 'fact' AND NOT brain._undecaying(observe_batch.origin)
                          THEN brain._dormant_after(now(), (brain.setting('fact_halflife_days'))::double precision)
                     END AS dormant) AS d
        WHERE s.existing IS NULL AND s.first_of = s.j
        ORDER BY s.j);
    FOR k IN 1 .. cardinality(stored) LOOP
        items[k].vector := (staged[stored[k]]).vector;
    END LOOP;
    ids := brain._store_memories(items, space_id => space.space_id, ingest_seq => seq,
                                 audit => jsonb_build_object('actor', source_agent));
    FOR k IN 1 .. cardinality(stored) LOOP
        staged[stored[k]].stored_id := ids[k];
    END LOOP;
    FOR j IN 1 .. cardinality(staged) LOOP
        IF (staged[j]).first_of <> j THEN
            staged[j].stored_id := (staged[(staged[j]).first_of]).stored_id;
        END IF;
    END LOOP;
    -- the rows this call created, in batch order
    ids := ARRAY(SELECT (staged[j]).stored_id FROM generate_series(1, cardinality(staged)) AS j
                 WHERE (staged[j]).first_of = j AND (staged[j]).stored_id IS NOT NULL ORDER BY j);

    -- 5. Near-identical: each new fact's nearest active memory of its kind and
    --    project among those older than it (stored before, or earlier in this
    --    batch). A hit whose near verdict is fold (the same distinguishing
    --    terms, not a chunk of the same source, folding on for the write and
    --    the space: brain._near_verdict) folds the new row into that memory
    --    (brain._fold_into: the row is tombstoned pointing there, the longer
    --    text kept, the other item recorded in brain.memory_fold).
    --    (A batch whose vectors wait for the index is compared when indexed;
    --    unless an index rebuild that began after this batch took its
    --    ingest_seq holds them already: then no later pass would.)
    owed := kind <> 'incident' AND coalesce(fold, true) AND (embeddings IS NULL OR space.fold_observed);
    IF embeddings IS NOT NULL AND kind <> 'incident' AND cardinality(ids) > 0
       AND (seq = 0 OR seq <= (SELECT es.indexed_through FROM brain.embedding_space es
                               WHERE es.workspace_id = space.workspace_id AND es.space_id = space.space_id)) THEN
        owed := false;
        -- (all looked up before any row is folded: the sort reads them all first)
        FOR hit IN
            SELECT x.memory_id AS id, x.nearest, x.similarity,
                   (SELECT min(j) FROM generate_series(1, cardinality(staged)) AS j
                    WHERE (staged[j]).stored_id = x.memory_id) AS j
            FROM brain._nearest_older(space, ids, observe_batch.kind, v_project) AS x
            WHERE x.similarity >= space.near_identical
            ORDER BY 4
        LOOP
            -- An earlier row of this batch may itself have been folded: follow it.
            target := coalesce((SELECT (staged[j]).memory_id FROM generate_series(1, cardinality(staged)) AS j
                                WHERE (staged[j]).stored_id = hit.nearest ORDER BY j LIMIT 1), hit.nearest);
            SELECT * INTO kept FROM brain.memory m WHERE m.workspace_id = space.workspace_id AND m.memory_id = target;
            SELECT * INTO mem FROM brain.memory m WHERE m.workspace_id = space.workspace_id AND m.memory_id = hit.id;
            CONTINUE WHEN brain._near_verdict(kept, mem, hit.similarity, space) IS DISTINCT FROM 'fold';
            staged[hit.j].action := (brain._fold_into(mem, target, hit.similarity, (staged[hit.j]).vector,
                                                      space.space_id, observe_batch.source_agent)).action;
            staged[hit.j].memory_id := target;
            staged[hit.j].duplicate_of := target;
            staged[hit.j].similarity := hit.similarity;
        END LOOP;
    END IF;

    -- 6. One result row per chunk, and one per refused text, in batch order.
    FOR j IN 1 .. cardinality(staged) LOOP
        CONTINUE WHEN (staged[j]).action IS NOT NULL;
        -- the memory it repeats: an active one, where the earlier chunk with its text went, or
        -- (stored by another transaction first) the one that holds its text now
        target := CASE WHEN (staged[j]).existing IS NOT NULL THEN (staged[j]).existing
                       WHEN (staged[j]).first_of <> j
                       THEN coalesce((staged[(staged[j]).first_of]).memory_id,
                                     (staged[(staged[j]).first_of]).stored_id,
                                     (staged[(staged[j]).first_of]).existing)
                       WHEN (staged[j]).stored_id IS NULL
                       THEN (brain._exact_duplicate(kind, v_project, (staged[j]).normalized, NULL)).memory_id
                       ELSE (staged[j]).stored_id END;
        -- created, else skipped: the same text as an active memory, as an earlier chunk, or as
        -- what another transaction stored first
        staged[j].action := CASE WHEN (staged[j]).existing IS NULL AND (staged[j]).first_of = j
                                      AND (staged[j]).stored_id IS NOT NULL THEN 'created' ELSE 'skipped' END;
        staged[j].memory_id := target;
        IF (staged[j]).action = 'skipped' THEN
            staged[j].duplicate_of := target;
            staged[j].similarity := 1;
        END IF;
    END LOOP;

    RETURN QUERY
    SELECT s.item, s.chunk, s.action, s.memory_id, s.duplicate_of, s.similarity,
           brain.embedding_input(s.headline, s.body, brain._embedding_title(observe_batch.origin, s.metadata)),
           NULL::text, NULL::text, s.action = 'created' AND owed, s.redacted
    FROM unnest(staged) AS s
    UNION ALL
    SELECT s.item, NULL, s.action, NULL, NULL, NULL, NULL, s.error_code, s.error, false, NULL
    FROM unnest(refused) AS s
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
