-- Document ingest (docs/ingest.md): files, folders and streams kept in step
-- with their source. A document is keyed by (source_system, project,
-- source_ref); each of its chunks is one artifact memory with the document's
-- ref, its position (source_chunk) and the hash of the document as last
-- ingested (source_hash). brain.ingest_documents decides everything: which
-- documents are unchanged (nothing to embed, nothing written), renamed (the
-- memories move to the new ref), changed (unchanged chunks stay, changed ones
-- supersede their old version, new ones are added, gone ones tombstoned), new,
-- or removed at source (their chunks tombstoned).

-- Whether a scope covers a ref: '' every ref, a scope ending in / every ref
-- under it, any other scope that ref alone.
CREATE OR REPLACE FUNCTION brain._in_scope(ref text, scope text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT scope = '' OR ref = scope OR right(scope, 1) = '/' AND starts_with(ref, scope)
$$;

-- Stage 2 of brain.ingest_documents for one document: its row (chunk NULL)
-- and, for a new or changed document sent with its text, its chunks matched
-- against its chunks as last ingested: the same text unchanged (it may have
-- moved); the same text as a chunk stored earlier in this call (seen: its
-- normalized text's md5 to that chunk's place in the batch), as an earlier
-- chunk of this document, or as another active fact of the project: a
-- duplicate, not stored again (chunks of documents removed at source, doomed,
-- do not count); a changed chunk taking the place of the old chunk of its
-- section it is most like; else new. Old chunks left over are removed. A document
-- the gate refuses is its row alone, rejected with the error; any other error
-- stops the batch. base: the place in the batch before the document's row.
CREATE OR REPLACE FUNCTION brain._stage_document(doc brain.staged_memory, source_system text, project text,
                                                 chunk_tokens integer, seen jsonb, doomed bigint[], base integer)
RETURNS SETOF brain.staged_memory
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
-- (called once per document: planned once, not once per call)
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    obs record;
    chunks brain.staged_memory[];  -- its chunks, in order: chunk k at base + 1 + k in the batch
    old brain.staged_memory[];     -- its chunks as last ingested; action 'kept' once a chunk takes one
    firsts integer[];              -- per chunk, the first earlier chunk of the document with its text
    j integer;
    pair record;                   -- a chunk and an old chunk of its section (k, o)
BEGIN
    -- (sent without its text: reported, and left for a call that sends it)
    IF doc.action NOT IN ('new', 'changed') OR doc.input ->> 'text' IS NULL THEN
        RETURN NEXT jsonb_populate_record(doc, '{"input": null}');
        RETURN;
    END IF;
    BEGIN
        PERFORM brain._refuse_secrets(jsonb_build_object('source_ref', doc.source_ref, 'format', doc.input ->> 'format'));
        -- Stored with its secrets redacted and its hidden characters removed.
        obs := brain._clean_observed(doc.input ->> 'text');
        doc.redacted := obs.redacted;
        IF brain.trim_space(coalesce(obs.cleaned, '')) = '' THEN
            PERFORM brain._raise('BR009', format('Document %s is empty.', doc.item),
                jsonb_build_object('document', doc.item), 'Only documents with text are ingested.');
        END IF;
        IF doc.input -> 'chunks' IS NOT NULL THEN
            -- The chunks a check_only call returned for this text, sent back so
            -- they are not cut again: scanned for secrets again like any text.
            PERFORM brain._refuse_secrets(jsonb_build_object('chunks', doc.input -> 'chunks'));
        END IF;
        chunks := ARRAY(
            SELECT jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                       'item', doc.item, 'chunk', c.k, 'headline', c.headline, 'section', c.section, 'body', c.body,
                       'normalized', brain.normalize_text(c.headline, c.body),
                       -- the ref is the chunk's title: embedded with its text (brain.embedding_input)
                       'metadata', jsonb_build_object('chunk', c.k, 'chunks', c.n, 'title', doc.source_ref)
                                   || CASE WHEN c.section IS NOT NULL THEN jsonb_build_object('section', c.section)
                                           ELSE '{}' END
                                   || CASE WHEN doc.input ->> 'format' IS NOT NULL
                                           THEN jsonb_build_object('format', doc.input ->> 'format') ELSE '{}' END,
                       'source_ref', doc.source_ref, 'source_hash', doc.source_hash, 'flags', obs.signals))
            FROM (SELECT x.headline, x.section, x.k, x.n,
                         -- A text that fits its headline is not repeated as a body.
                         CASE WHEN x.n = 1 AND brain.normalize_text(x.body) = brain.normalize_text(x.headline)
                              THEN '' ELSE x.body END AS body
                  FROM (SELECT e.value ->> 'headline' AS headline, e.value ->> 'body' AS body,
                               e.value ->> 'section' AS section, e.k::integer AS k, count(*) OVER () AS n
                        FROM jsonb_array_elements(doc.input -> 'chunks') WITH ORDINALITY AS e(value, k)
                        UNION ALL
                        SELECT t.headline, t.body, t.section, t.chunk, count(*) OVER ()
                        FROM brain.chunk_text(obs.cleaned, brain._titled_chunk_tokens(chunk_tokens, doc.source_ref)) AS t
                        WHERE doc.input -> 'chunks' IS NULL) AS x) AS c
            ORDER BY c.k);
        PERFORM brain._gate('fact', c.headline, c.body, NULL, 'reference', 'artifact', NULL) FROM unnest(chunks) AS c;
        old := ARRAY(SELECT jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                         'item', doc.item, 'chunk', m.source_chunk, 'normalized', m.normalized,
                         'section', coalesce(m.metadata ->> 'section', ''), 'memory_id', m.memory_id))
                     FROM brain.memory m
                     WHERE m.workspace_id = ws AND m.source_system = _stage_document.source_system
                       AND m.project = _stage_document.project AND m.source_ref = doc.source_ref
                       AND m.state = 'active' AND m.source_chunk IS NOT NULL
                     ORDER BY m.source_chunk);
        -- a. The same text as an old chunk: unchanged (it may have moved).
        FOR k IN 1 .. cardinality(chunks) LOOP
            j := (SELECT min(o) FROM generate_series(1, cardinality(old)) AS o
                  WHERE (old[o]).action IS NULL AND (old[o]).normalized = (chunks[k]).normalized);
            IF j IS NOT NULL THEN
                chunks[k].action := 'unchanged'; chunks[k].memory_id := (old[j]).memory_id; old[j].action := 'kept';
            END IF;
        END LOOP;
        -- b. Duplicates. The first chunk of each text, in one pass (a search of the chunks
        --    before each one made a document of n chunks cost n² / 2 comparisons); the
        --    active facts of the project with the text of a chunk, looked up for all the
        --    chunks at once (one lookup a chunk scanned every fact of the project when the
        --    planner took the table for small, after a large ingest).
        firsts := ARRAY(SELECT CASE WHEN f.first < f.k THEN f.first END
                        FROM (SELECT c.chunk AS k, min(c.chunk) OVER (PARTITION BY c.normalized) AS first
                              FROM unnest(chunks) AS c) AS f
                        ORDER BY f.k);
        chunks := ARRAY(
            SELECT jsonb_populate_record(c, jsonb_build_object('existing', h.id))
            FROM unnest(chunks) AS c
            LEFT JOIN (SELECT min(m.memory_id) AS id, m.normalized AS norm
                       FROM brain.memory m
                       WHERE m.workspace_id = ws AND m.kind = 'fact' AND m.project = _stage_document.project
                         AND m.state = 'active'
                         AND m.normalized_hash = ANY (ARRAY(SELECT md5(u.normalized)::uuid FROM unnest(chunks) AS u))
                         AND m.memory_id <> ALL (doomed)
                       GROUP BY m.normalized) AS h ON h.norm = c.normalized
            ORDER BY c.chunk);
        FOR k IN 1 .. cardinality(chunks) LOOP
            CONTINUE WHEN (chunks[k]).action IS NOT NULL;
            IF seen ? md5((chunks[k]).normalized) THEN
                chunks[k].action := 'duplicate';
                chunks[k].first_of := (seen ->> md5((chunks[k]).normalized))::integer;
            ELSIF firsts[k] IS NOT NULL THEN
                -- the same text as an earlier chunk of this document (a repeated
                -- paragraph or example): that chunk's memory, stored once
                j := firsts[k];
                chunks[k].action := 'duplicate';
                IF (chunks[j]).action IN ('unchanged', 'duplicate') THEN
                    chunks[k].memory_id := (chunks[j]).memory_id;
                    chunks[k].first_of := (chunks[j]).first_of;
                ELSE
                    chunks[k].first_of := base + 1 + j;  -- its row, stored in this call
                END IF;
            ELSIF (chunks[k]).existing IS NOT NULL THEN
                chunks[k].action := 'duplicate';
                chunks[k].memory_id := (chunks[k]).existing;
            END IF;
        END LOOP;
        -- c. A changed chunk supersedes the old chunk of its section it is most like: the
        --    pairs of a section, most alike first (trigram similarity of their texts; past
        --    PAIRS pairs in all, in order alone), each chunk and old chunk taken once. An item
        --    reworded while another of its section was removed supersedes its own version.
        FOR pair IN
            SELECT p.k, p.o
            FROM (SELECT c.k, o.o, count(*) OVER () AS pairs,
                         public.similarity((chunks[c.k]).normalized, (old[o.o]).normalized) AS alike
                  FROM generate_series(1, cardinality(chunks)) AS c(k)
                  JOIN generate_series(1, cardinality(old)) AS o(o)
                    ON (old[o.o]).section = coalesce((chunks[c.k]).section, '')
                  WHERE (chunks[c.k]).action IS NULL AND (old[o.o]).action IS NULL) AS p
            ORDER BY CASE WHEN p.pairs <= 20000 THEN p.alike END DESC NULLS LAST, p.k, p.o
        LOOP
            CONTINUE WHEN (chunks[pair.k]).action IS NOT NULL OR (old[pair.o]).action IS NOT NULL;
            chunks[pair.k].action := 'changed';
            chunks[pair.k].previous_id := (old[pair.o]).memory_id;
            old[pair.o].action := 'kept';
        END LOOP;
        FOR k IN 1 .. cardinality(chunks) LOOP
            CONTINUE WHEN (chunks[k]).action IS NOT NULL;
            chunks[k].action := 'new';
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE NOT LIKE 'BR%' THEN
            RAISE;
        END IF;
        -- the document is reported and left as it was; the rest goes on
        RETURN NEXT jsonb_populate_record(doc, jsonb_build_object('input', NULL, 'action', 'rejected',
                                                                  'error_code', SQLSTATE, 'error', SQLERRM, 'redacted', NULL));
        RETURN;
    END;
    RETURN NEXT jsonb_populate_record(doc, '{"input": null}');
    RETURN QUERY SELECT * FROM unnest(chunks);
    -- d. Old chunks left over: gone from the document.
    RETURN QUERY
    SELECT r.*
    FROM unnest(old) AS o
    CROSS JOIN LATERAL jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
               'item', doc.item, 'chunk', o.chunk, 'source_ref', doc.source_ref, 'action', 'removed',
               'memory_id', o.memory_id)) AS r
    WHERE o.action IS NULL;
END
$$;

CREATE OR REPLACE FUNCTION brain.ingest_documents(
    documents jsonb,
    source_system text DEFAULT 'files',
    project text DEFAULT '',
    scopes text[] DEFAULT NULL,
    listing text[] DEFAULT NULL,
    embeddings double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    check_only boolean DEFAULT false,
    source_agent text DEFAULT NULL
)
RETURNS TABLE (ref text, chunk integer, action text, memory_id bigint, previous_id bigint, previous_ref text,
               headline text, section text, body text, embedding_input text, error_code text, error text,
               redacted jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
-- Columns win over variables: parameters are qualified with the function's
-- name, and the output columns are only assigned in the final query.
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    v_system text := brain.trim_space(coalesce(ingest_documents.source_system, ''));
    v_project text := coalesce(ingest_documents.project, '');
    v_scopes text[] := coalesce(ingest_documents.scopes, '{}');
    v_listing text[];
    claimed text[] := '{}';  -- the refs renamed documents came from
    doomed bigint[];         -- the chunks of documents removed at source
    -- The documents sent, one row each (brain.staged_memory), in order; then the
    -- rows reported: one per document and per chunk, in order; what is stored.
    docs brain.staged_memory[];
    staged brain.staged_memory[] := '{}';
    places integer[];        -- the places of the chunks to store: one embedding row each
    items brain.memory_draft[];  -- the memories stored for them, with their vectors
    seen jsonb := '{}';      -- those of them so far, by the md5 of their text
    space brain.embedding_space;
    seq bigint := 0;
    chunk_tokens integer := brain._chunk_tokens(ingest_documents.embedding_space);
    ids bigint[];
    d jsonb;
    r record;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('source_system', ingest_documents.source_system,
                                                     'project', ingest_documents.project,
                                                     'source_agent', ingest_documents.source_agent));
    IF v_system = '' OR v_system ~ '[\r\n]' THEN
        PERFORM brain._raise('BR009', 'Documents are ingested under a source_system: one line naming where they come from.',
            jsonb_build_object('field', 'source_system', 'type', 'one line of text'), 'For example files, or wiki.');
    END IF;
    IF documents IS NULL OR jsonb_typeof(documents) <> 'array' THEN
        PERFORM brain._raise('BR009', 'documents is a JSON array of {ref, hash, text}.', NULL,
            'Example: ''[{"ref": "docs/guide.md", "hash": "…", "text": "# Guide …"}]''.');
    END IF;
    IF array_position(v_scopes, NULL) IS NOT NULL OR array_position(listing, NULL) IS NOT NULL THEN
        PERFORM brain._raise('BR009', 'A scope is a ref, a folder ending in /, or '''' for every ref; a listing holds refs.',
            NULL, 'Leave NULL entries out of scopes and listing.');
    END IF;
    IF embeddings IS NOT NULL AND array_ndims(embeddings) <> 2 THEN
        PERFORM brain._raise('BR012', 'embeddings is a two-dimensional array: one row per chunk to embed.', NULL,
            'Run with check_only => true first: it returns the chunks to embed, in order.');
    END IF;
    docs := ARRAY(SELECT jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                             'item', e.n, 'input', e.d, 'source_ref', e.d ->> 'ref', 'source_hash', e.d ->> 'hash',
                             'first_of', min(e.n) OVER (PARTITION BY e.d ->> 'ref')))
                  FROM jsonb_array_elements(documents) WITH ORDINALITY AS e(d, n)
                  ORDER BY e.n);
    FOR i IN 1 .. cardinality(docs) LOOP
        d := (docs[i]).input;
        IF jsonb_typeof(d) <> 'object' OR jsonb_typeof(d -> 'ref') IS DISTINCT FROM 'string'
           OR jsonb_typeof(d -> 'hash') IS DISTINCT FROM 'string'
           OR brain.trim_space(d ->> 'ref') = '' OR d ->> 'ref' ~ '[\r\n]' OR brain.trim_space(d ->> 'hash') = ''
           OR coalesce(jsonb_typeof(d -> 'text'), 'null') NOT IN ('string', 'null')
           OR coalesce(jsonb_typeof(d -> 'format'), 'null') NOT IN ('string', 'null')
           OR d ? 'chunks' AND (jsonb_typeof(d -> 'chunks') <> 'array' OR jsonb_typeof(d -> 'text') <> 'string'
                                  OR EXISTS (SELECT FROM jsonb_array_elements(d -> 'chunks') AS c
                                             WHERE jsonb_typeof(c -> 'headline') IS DISTINCT FROM 'string'
                                                OR jsonb_typeof(c -> 'body') IS DISTINCT FROM 'string'
                                                OR coalesce(jsonb_typeof(c -> 'section'), 'null')
                                                   NOT IN ('string', 'null'))
                                  OR jsonb_array_length(d -> 'chunks') = 0) THEN
            PERFORM brain._raise('BR009', format('Document %s needs a ref (one line), a hash and, when sent, a text.', i),
                jsonb_build_object('document', i),
                'Each document is {"ref": "docs/guide.md", "hash": "…", "text": "…"}; text may be left out. chunks, when sent with the text, are [{headline, section, body}] as check_only returned them.');
        END IF;
        IF (docs[i]).first_of <> i THEN
            PERFORM brain._raise('BR009', format('Document %s repeats the ref of an earlier one.', i),
                jsonb_build_object('document', i), 'Send each ref once.');
        END IF;
    END LOOP;
    v_listing := coalesce(listing, '{}') || ARRAY(SELECT d.source_ref FROM unnest(docs) AS d ORDER BY d.item);
    IF NOT check_only THEN
        -- One ingest at a time per source and project: each sees what the one before it wrote.
        PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.ingest ' || v_system || '/' || v_project));
    END IF;

    -- 1. What became of each document: unchanged (same hash), changed, new,
    --    or renamed (its hash under a ref in scope that is gone).
    FOR i IN 1 .. cardinality(docs) LOOP
        docs[i].first_of := NULL;
        docs[i].action := (SELECT CASE WHEN count(*) = 0 THEN NULL
                                       WHEN bool_and(m.source_hash IS NOT DISTINCT FROM (docs[i]).source_hash)
                                       THEN 'unchanged' ELSE 'changed' END
                           FROM brain.memory m
                           WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
                             AND m.source_ref = (docs[i]).source_ref AND m.state = 'active'
                             AND m.source_chunk IS NOT NULL);
        CONTINUE WHEN (docs[i]).action IS NOT NULL;
        docs[i].previous_ref := (
            SELECT min(m.source_ref)
            FROM brain.memory m
            WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
              AND m.source_hash = (docs[i]).source_hash AND m.state = 'active' AND m.source_chunk IS NOT NULL
              AND m.source_ref <> ALL (v_listing) AND m.source_ref <> ALL (claimed)
              AND EXISTS (SELECT FROM unnest(v_scopes) AS s WHERE brain._in_scope(m.source_ref, s)));
        docs[i].action := CASE WHEN (docs[i]).previous_ref IS NOT NULL THEN 'renamed' ELSE 'new' END;
        claimed := claimed || ARRAY(SELECT (docs[i]).previous_ref WHERE (docs[i]).previous_ref IS NOT NULL);
    END LOOP;
    -- The documents in scope that are not in the listing: removed at source.
    doomed := ARRAY(SELECT m.memory_id
                    FROM brain.memory m
                    WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
                      AND m.state = 'active' AND m.source_chunk IS NOT NULL
                      AND m.source_ref <> ALL (v_listing) AND m.source_ref <> ALL (claimed)
                      AND EXISTS (SELECT FROM unnest(v_scopes) AS s WHERE brain._in_scope(m.source_ref, s))
                    ORDER BY m.source_ref, m.source_chunk);

    -- 2. Each document's row, and the chunks of new and changed ones matched
    --    against their old ones (brain._stage_document).
    FOR i IN 1 .. cardinality(docs) LOOP
        FOR r IN
            SELECT s FROM brain._stage_document(docs[i], v_system, v_project, chunk_tokens, seen, doomed,
                                                cardinality(staged)) AS s
        LOOP
            staged[cardinality(staged) + 1] := r.s;
            IF (r.s).chunk IS NOT NULL AND (r.s).action IN ('new', 'changed') THEN
                seen := seen || jsonb_build_object(md5((r.s).normalized), cardinality(staged));
            END IF;
        END LOOP;
    END LOOP;
    -- 3. The documents removed at source, with their chunks.
    FOR r IN
        SELECT jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                   'source_ref', x.ref, 'chunk', x.chunk, 'action', 'removed', 'memory_id', x.id)) AS s
        FROM (SELECT m.source_ref AS ref, NULL::integer AS chunk, NULL::bigint AS id
              FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = ANY (doomed)
              GROUP BY m.source_ref
              UNION ALL
              SELECT m.source_ref, m.source_chunk, m.memory_id
              FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = ANY (doomed)) AS x
        ORDER BY x.ref, x.chunk NULLS FIRST
    LOOP
        staged[cardinality(staged) + 1] := r.s;
    END LOOP;
    places := ARRAY(SELECT p FROM generate_series(1, cardinality(staged)) AS p
                    WHERE (staged[p]).chunk IS NOT NULL AND (staged[p]).action IN ('new', 'changed') ORDER BY p);

    IF check_only THEN
        RETURN QUERY
        SELECT s.source_ref, s.chunk, s.action, s.memory_id, s.previous_id, s.previous_ref, s.headline, s.section,
               s.body, CASE WHEN s.chunk IS NOT NULL AND s.action IN ('new', 'changed')
                            THEN brain.embedding_input(s.headline, s.body, s.source_ref) END,
               s.error_code, s.error, s.redacted
        FROM unnest(staged) WITH ORDINALITY AS s
        ORDER BY s.ordinality;
        RETURN;
    END IF;

    -- 4. The embeddings: one row per chunk to store, in order.
    IF embeddings IS NOT NULL THEN
        space := brain._write_space(ingest_documents.embedding_space);
        staged := brain._stage_vectors(staged, embeddings, space, places);
    END IF;
    -- (as brain.observe_batch: a large batch's vectors wait for brain.index_vectors)
    seq := brain._batch_turn(space, cardinality(places), 'fact', v_project);

    -- 5. Out of the way first: the chunks of removed documents and the
    --    chunks gone from changed ones (tombstoned), and the positions of the
    --    old chunks of changed documents (each takes its new one below).
    ids := ARRAY(SELECT s.memory_id FROM unnest(staged) WITH ORDINALITY AS s
                 WHERE s.action = 'removed' AND s.memory_id IS NOT NULL ORDER BY s.ordinality);
    UPDATE brain.memory m
    SET state = 'tombstoned', forget_reason = 'removed at source', forgotten_at = now(), updated_at = now()
    WHERE m.workspace_id = ws AND m.memory_id = ANY (ids);
    PERFORM brain._audit_many(ids, 'forget', ingest_documents.source_agent, jsonb_build_object('reason', 'removed at source'));
    UPDATE brain.memory m
    SET source_chunk = NULL
    WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project AND m.state = 'active'
      AND m.source_chunk IS NOT NULL
      -- (the documents chunked in this call: new and changed ones sent with their text, not refused)
      AND m.source_ref IN (SELECT s.source_ref FROM unnest(staged) AS s WHERE s.item IS NOT NULL AND s.chunk IS NOT NULL);

    -- 6. The new chunks, their fact rows and embeddings (through the one write core);
    --    a chunk repeating one stored in this call takes its memory.
    items := ARRAY(
        SELECT jsonb_populate_record(NULL::brain.memory_draft, jsonb_build_object(
                   'kind', 'fact', 'category', 'reference', 'origin', 'artifact', 'project', v_project,
                   'headline', s.headline, 'body', s.body, 'normalized', s.normalized, 'metadata', s.metadata,
                   'source_agent', ingest_documents.source_agent, 'source_system', v_system,
                   'source_ref', s.source_ref, 'source_chunk', s.chunk, 'source_hash', s.source_hash,
                   'supersedes', s.previous_id, 'dedup_pending', embeddings IS NULL, 'foldable', false,
                   'flag_reasons', to_jsonb(s.flags),
                   -- indexed with the chunk, not its text: the document and the heading path
                   -- (docs/ranking.md); a document is a thread of chunks in order, for neighbours
                   'context', brain._observed_context(jsonb_build_object('title', s.source_ref), NULL,
                                                      s.metadata ->> 'section', NULL, NULL),
                   'thread', s.source_ref, 'position', s.chunk))
        FROM unnest(staged) WITH ORDINALITY AS s
        WHERE s.chunk IS NOT NULL AND s.action IN ('new', 'changed')
        ORDER BY s.ordinality);
    FOR k IN 1 .. cardinality(places) LOOP
        items[k].vector := (staged[places[k]]).vector;
    END LOOP;
    ids := coalesce(brain._store_memories(items, space_id => space.space_id, ingest_seq => seq,
                                          audit => jsonb_build_object('actor', ingest_documents.source_agent)), '{}');
    FOR k IN 1 .. cardinality(places) LOOP
        staged[places[k]].memory_id := ids[k];
    END LOOP;
    FOR p IN 1 .. cardinality(staged) LOOP
        IF (staged[p]).first_of IS NOT NULL THEN
            staged[p].memory_id := (staged[(staged[p]).first_of]).memory_id;
        END IF;
    END LOOP;

    -- 7. A changed chunk's old version is superseded by it: the chain of brain.history.
    FOR r IN
        SELECT s.previous_id AS old_id, s.memory_id AS new_id
        FROM unnest(staged) WITH ORDINALITY AS s
        WHERE s.action = 'changed' AND s.chunk IS NOT NULL ORDER BY s.ordinality
    LOOP
        PERFORM brain._mark_superseded(brain._get_memory(r.old_id), r.new_id, 'changed at source',
                                       ingest_documents.source_agent);
    END LOOP;

    -- 8. Unchanged chunks of changed documents take their new position and
    --    the document's hash; renamed documents' chunks move to the new ref.
    ids := ARRAY(SELECT s.memory_id FROM unnest(staged) WITH ORDINALITY AS s
                 WHERE s.action = 'unchanged' AND s.chunk IS NOT NULL ORDER BY s.ordinality);
    UPDATE brain.memory m
    SET source_chunk = x.chunk, position = x.chunk, source_hash = x.source_hash,
        -- (a chunk stored before chunks had a title keeps none: its vector was made without)
        metadata = m.metadata - 'chunk' - 'chunks' - 'section' - 'format'
                   || CASE WHEN m.metadata ? 'title' THEN x.metadata ELSE x.metadata - 'title' END,
        context = brain._observed_context(jsonb_build_object('title', m.source_ref), NULL, x.metadata ->> 'section',
                                          NULL, NULL),
        updated_at = now()
    FROM unnest(staged) AS x
    WHERE x.action = 'unchanged' AND x.chunk IS NOT NULL
      AND m.workspace_id = ws AND m.memory_id = x.memory_id;
    PERFORM brain._audit_many(ids, 'update', ingest_documents.source_agent,
                              jsonb_build_object('reason', 'document changed at source'));
    FOR i IN 1 .. cardinality(docs) LOOP
        CONTINUE WHEN (docs[i]).action <> 'renamed';
        WITH mv AS (
            UPDATE brain.memory m
            SET source_ref = (docs[i]).source_ref, thread = (docs[i]).source_ref,
                context = brain._observed_context(jsonb_build_object('title', (docs[i]).source_ref), NULL,
                                                  m.metadata ->> 'section', NULL, NULL),
                metadata = CASE WHEN m.metadata ? 'title'
                                THEN m.metadata || jsonb_build_object('title', (docs[i]).source_ref)
                                ELSE m.metadata END,
                updated_at = now()
            WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
              AND m.source_ref = (docs[i]).previous_ref AND m.state = 'active' AND m.source_chunk IS NOT NULL
            RETURNING m.memory_id, m.metadata ? 'title' AS titled
        )
        SELECT coalesce(array_agg(mv.memory_id ORDER BY mv.memory_id), '{}') AS moved,
               coalesce(bool_or(mv.titled), false) AS retitled,
               coalesce(array_agg(mv.memory_id) FILTER (WHERE mv.titled), '{}') AS titled
        INTO r FROM mv;
        IF r.retitled THEN
            -- A chunk's title is embedded with it: its vectors (in every space) are
            -- made again under the new ref, by `brain ingest` or `brain worker`
            -- (deleted as the owner: clients hold no DELETE, migration 034).
            PERFORM brain._delete_embeddings(r.titled);
            PERFORM pg_notify('brain_embedding', '');  -- a wake-up only: any role may LISTEN
        END IF;
        PERFORM brain._audit_many(r.moved, 'update', ingest_documents.source_agent,
            jsonb_build_object('reason', 'renamed at source', 'from', (docs[i]).previous_ref, 'to', (docs[i]).source_ref));
    END LOOP;

    RETURN QUERY
    SELECT s.source_ref, s.chunk, s.action, s.memory_id, s.previous_id, s.previous_ref, s.headline, s.section,
           NULL::text, NULL::text, s.error_code, s.error, s.redacted
    FROM unnest(staged) WITH ORDINALITY AS s
    ORDER BY s.ordinality;
END
$$;
COMMENT ON FUNCTION brain.ingest_documents IS
    'Keeps documents in step with their source. documents: [{ref, hash, text, format}]; a new or changed document sent without its text is reported (action new or changed, no chunk rows) and left for a call that sends it, so a first call with refs and hashes alone says which texts are needed. Each document is one or more artifact facts (category reference) keyed by (source_system, project, source_ref) with source_chunk = the chunk''s position and source_hash = the document''s hash. A document with its stored hash is unchanged (nothing embedded, nothing written); a new ref with the hash of a ref in scope and not in the listing is renamed (its memories move, history kept); a changed one keeps its unchanged chunks, supersedes a changed chunk''s old version (reason "changed at source"), adds new chunks and tombstones gone ones; refs in scopes ('''' every ref, a folder ending in / the refs under it) that are neither sent nor in listing (every ref of the run, when documents is one batch of it) are removed at source (tombstoned, reason "removed at source"). Text is stored with secrets redacted (redacted lists them), chunked by brain.chunk_text; a chunk repeating an active memory is a duplicate and not stored. One row per document (chunk NULL) and per chunk: action unchanged | renamed | new | changed | removed | duplicate | rejected. check_only => true writes nothing and returns each chunk (headline, section, body) and the embedding_input of each chunk to store; embeddings then holds one row per such chunk, in order (NULL: stored and queued for brain worker), and a document may carry the chunks check_only returned ([{headline, section, body}], unchanged and duplicate ones too) so they are not cut again (they are scanned for secrets and gated again).';
