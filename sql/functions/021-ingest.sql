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
-- name, and the output columns are only assigned through the o_ arrays.
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    v_system text := brain.trim_space(coalesce(ingest_documents.source_system, ''));
    v_project text := coalesce(ingest_documents.project, '');
    v_scopes text[] := coalesce(ingest_documents.scopes, '{}');
    v_agent text := ingest_documents.source_agent;
    v_listing text[];
    chunk_tokens integer := brain._chunk_tokens(ingest_documents.embedding_space);
    n_vectors integer := CASE WHEN array_ndims(ingest_documents.embeddings) = 2
                              THEN array_length(ingest_documents.embeddings, 1) ELSE 0 END;
    dims integer := CASE WHEN array_ndims(ingest_documents.embeddings) = 2
                         THEN array_length(ingest_documents.embeddings, 2) END;
    n_docs integer;
    d jsonb;
    -- the documents sent, in order
    d_ref text[] := '{}';
    d_hash text[] := '{}';
    d_text text[] := '{}';
    d_format text[] := '{}';
    d_chunks jsonb[] := '{}';
    d_action text[] := '{}';
    d_prev text[] := '{}';
    claimed text[] := '{}';
    removed_refs text[];
    doomed bigint[];  -- the chunks of documents removed at source
    cnt integer;
    same boolean;
    prev text;
    -- one output row per document and per chunk, in order
    n integer := 0;
    doc_start integer;
    o_ref text[] := '{}';
    o_chunk integer[] := '{}';
    o_action text[] := '{}';
    o_id bigint[] := '{}';
    o_prev_id bigint[] := '{}';
    o_prev_ref text[] := '{}';
    o_head text[] := '{}';
    o_body text[] := '{}';
    o_sect text[] := '{}';
    o_norm text[] := '{}';
    o_meta jsonb[] := '{}';
    o_hash text[] := '{}';
    o_flag jsonb[] := '{}';
    o_code text[] := '{}';
    o_err text[] := '{}';
    o_red jsonb[] := '{}';
    o_dup integer[] := '{}';  -- a chunk that repeats an earlier chunk of this call: that chunk's row
    -- a document's chunks
    obs record;
    k_head text[];
    k_body text[];
    k_sect text[];
    k_norm text[];
    k_key uuid[];
    k_act text[];
    k_id bigint[];
    k_dup integer[];
    k_first integer[];  -- the earlier chunk of the document with the same text, if any
    k_hit bigint[];     -- the active fact of the project with the same text, if any
    nk integer;
    ol_id bigint[];
    ol_key uuid[];
    ol_sect text[];
    ol_chunk integer[];
    ol_used boolean[];
    seen_key uuid[] := '{}';   -- the keys of chunks this call stores, and their rows
    seen_row integer[] := '{}';
    pos integer;
    hit bigint;
    meta jsonb;
    -- writing
    space brain.embedding_space;
    vecs public.vector[];
    seq bigint := 0;
    defer boolean := false;
    w_rows integer[];
    new_ids bigint[];
    created bigint[];
    moved bigint[];
    gone bigint[];
    pair record;
    retitled boolean;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('source_system', ingest_documents.source_system,
                                                     'project', ingest_documents.project,
                                                     'source_agent', v_agent));
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
    n_docs := jsonb_array_length(documents);
    FOR i IN 1 .. n_docs LOOP
        d := documents -> (i - 1);
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
        IF (d ->> 'ref') = ANY (d_ref) THEN
            PERFORM brain._raise('BR009', format('Document %s repeats the ref of an earlier one.', i),
                jsonb_build_object('document', i), 'Send each ref once.');
        END IF;
        d_ref := d_ref || (d ->> 'ref');
        d_hash := d_hash || (d ->> 'hash');
        d_text := d_text || (d ->> 'text');
        d_format := d_format || (d ->> 'format');
        d_chunks := d_chunks || (d -> 'chunks');
    END LOOP;
    v_listing := coalesce(listing, '{}') || d_ref;
    IF NOT check_only THEN
        -- One ingest at a time per source and project: each sees what the one before it wrote.
        PERFORM pg_advisory_xact_lock(hashtext('brain.ingest'), hashtext(ws || '/' || v_system || '/' || v_project));
    END IF;

    -- 1. What became of each document: unchanged (same hash), changed, new,
    --    or renamed (its hash under a ref in scope that is gone).
    FOR i IN 1 .. n_docs LOOP
        SELECT count(*), bool_and(m.source_hash IS NOT DISTINCT FROM d_hash[i]) INTO cnt, same
        FROM brain.memory m
        WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
          AND m.source_ref = d_ref[i] AND m.state = 'active' AND m.source_chunk IS NOT NULL;
        d_prev[i] := NULL;
        IF cnt > 0 THEN
            d_action[i] := CASE WHEN same THEN 'unchanged' ELSE 'changed' END;
            CONTINUE;
        END IF;
        SELECT min(m.source_ref) INTO prev
        FROM brain.memory m
        WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
          AND m.source_hash = d_hash[i] AND m.state = 'active' AND m.source_chunk IS NOT NULL
          AND m.source_ref <> ALL (v_listing) AND m.source_ref <> ALL (claimed)
          AND EXISTS (SELECT FROM unnest(v_scopes) AS s WHERE brain._in_scope(m.source_ref, s));
        IF prev IS NOT NULL THEN
            d_action[i] := 'renamed';
            d_prev[i] := prev;
            claimed := claimed || prev;
        ELSE
            d_action[i] := 'new';
        END IF;
    END LOOP;
    -- The documents in scope that are not in the listing: removed at source.
    SELECT coalesce(array_agg(DISTINCT m.source_ref), '{}'),
           coalesce(array_agg(m.memory_id ORDER BY m.source_ref, m.source_chunk), '{}')
    INTO removed_refs, doomed
    FROM brain.memory m
    WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
      AND m.state = 'active' AND m.source_chunk IS NOT NULL
      AND m.source_ref <> ALL (v_listing) AND m.source_ref <> ALL (claimed)
      AND EXISTS (SELECT FROM unnest(v_scopes) AS s WHERE brain._in_scope(m.source_ref, s));

    -- 2. The chunks of new and changed documents, matched against their old ones.
    FOR i IN 1 .. n_docs LOOP
        doc_start := n;
        n := n + 1;
        o_ref[n] := d_ref[i]; o_chunk[n] := NULL; o_action[n] := d_action[i]; o_id[n] := NULL;
        o_prev_id[n] := NULL; o_prev_ref[n] := d_prev[i]; o_head[n] := NULL; o_body[n] := NULL; o_sect[n] := NULL;
        o_norm[n] := NULL; o_meta[n] := NULL; o_hash[n] := d_hash[i]; o_flag[n] := NULL;
        o_code[n] := NULL; o_err[n] := NULL; o_red[n] := NULL; o_dup[n] := NULL;
        CONTINUE WHEN d_action[i] IN ('unchanged', 'renamed');
        -- (sent without its text: reported, and left for a call that sends it)
        CONTINUE WHEN d_text[i] IS NULL;
        BEGIN
            PERFORM brain._refuse_secrets(jsonb_build_object('source_ref', d_ref[i], 'format', d_format[i]));
            -- Stored with its secrets redacted and its hidden characters removed.
            obs := brain._clean_observed(d_text[i]);
            o_red[n] := obs.redacted;
            IF brain.trim_space(coalesce(obs.cleaned, '')) = '' THEN
                PERFORM brain._raise('BR009', format('Document %s is empty.', i),
                    jsonb_build_object('document', i), 'Only documents with text are ingested.');
            END IF;
            IF d_chunks[i] IS NOT NULL THEN
                -- The chunks a check_only call returned for this text, sent back so
                -- they are not cut again: scanned for secrets again like any text.
                PERFORM brain._refuse_secrets(jsonb_build_object('chunks', d_chunks[i]));
                SELECT array_agg(c.value ->> 'headline' ORDER BY c.n), array_agg(c.value ->> 'body' ORDER BY c.n),
                       array_agg(c.value ->> 'section' ORDER BY c.n)
                INTO k_head, k_body, k_sect
                FROM jsonb_array_elements(d_chunks[i]) WITH ORDINALITY AS c(value, n);
            ELSE
                SELECT array_agg(c.headline ORDER BY c.chunk), array_agg(c.body ORDER BY c.chunk),
                       array_agg(c.section ORDER BY c.chunk)
                INTO k_head, k_body, k_sect
                FROM brain.chunk_text(obs.cleaned, brain._titled_chunk_tokens(chunk_tokens, d_ref[i])) AS c;
            END IF;
            nk := cardinality(k_body);
            k_norm := '{}'; k_key := '{}';
            k_act := array_fill(NULL::text, ARRAY[nk]);
            k_id := array_fill(NULL::bigint, ARRAY[nk]);
            k_dup := array_fill(NULL::integer, ARRAY[nk]);
            FOR k IN 1 .. nk LOOP
                -- A text that fits its headline is not repeated as a body.
                IF nk = 1 AND brain.normalize_text(k_body[k]) = brain.normalize_text(k_head[k]) THEN
                    k_body[k] := '';
                END IF;
                PERFORM brain._gate('fact', k_head[k], k_body[k], NULL, 'reference', 'artifact', NULL);
                k_norm[k] := brain.normalize_text(k_head[k], k_body[k]);
                k_key[k] := md5(k_norm[k])::uuid;
            END LOOP;
            SELECT coalesce(array_agg(m.memory_id ORDER BY m.source_chunk), '{}'),
                   coalesce(array_agg(m.normalized_hash ORDER BY m.source_chunk), '{}'),
                   coalesce(array_agg(coalesce(m.metadata ->> 'section', '') ORDER BY m.source_chunk), '{}'),
                   coalesce(array_agg(m.source_chunk ORDER BY m.source_chunk), '{}')
            INTO ol_id, ol_key, ol_sect, ol_chunk
            FROM brain.memory m
            WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
              AND m.source_ref = d_ref[i] AND m.state = 'active' AND m.source_chunk IS NOT NULL;
            ol_used := array_fill(false, ARRAY[cardinality(ol_id)]);
            -- a. The same text as an old chunk: unchanged (it may have moved).
            FOR k IN 1 .. nk LOOP
                FOR j IN 1 .. cardinality(ol_id) LOOP
                    IF NOT ol_used[j] AND ol_key[j] = k_key[k] THEN
                        k_act[k] := 'unchanged'; k_id[k] := ol_id[j]; ol_used[j] := true;
                        EXIT;
                    END IF;
                END LOOP;
            END LOOP;
            -- b. The same text as another active memory of the project, or as a
            --    chunk stored earlier in this call: a duplicate, not stored again.
            --    (Chunks of documents removed at source do not count: they go first.)
            --    The first chunk of each text, in one pass (a search of the chunks before
            --    each one made a document of n chunks cost n² / 2 comparisons).
            k_first := ARRAY(SELECT CASE WHEN f.first < f.k THEN f.first END
                             FROM (SELECT u.k, min(u.k) OVER (PARTITION BY u.key) AS first
                                   FROM unnest(k_key) WITH ORDINALITY AS u(key, k)) AS f
                             ORDER BY f.k);
            -- The active facts of the project with the text of a chunk, looked up for all
            -- the chunks at once (one lookup a chunk scanned every fact of the project
            -- when the planner took the table for small, after a large ingest).
            k_hit := ARRAY(SELECT h.id
                           FROM unnest(k_key, k_norm) WITH ORDINALITY AS u(key, norm, k)
                           LEFT JOIN (SELECT m.memory_id AS id, m.normalized_hash AS key, m.normalized AS norm
                                      FROM brain.memory m
                                      WHERE m.workspace_id = ws AND m.kind = 'fact' AND m.project = v_project
                                        AND m.state = 'active' AND m.normalized_hash = ANY (k_key)
                                        AND m.memory_id <> ALL (doomed)) AS h
                             ON h.key = u.key AND h.norm = u.norm
                           ORDER BY u.k);
            FOR k IN 1 .. nk LOOP
                CONTINUE WHEN k_act[k] IS NOT NULL;
                pos := array_position(seen_key, k_key[k]);
                IF pos IS NOT NULL THEN
                    k_act[k] := 'duplicate'; k_dup[k] := seen_row[pos];
                    CONTINUE;
                END IF;
                -- the same text as an earlier chunk of this document (a repeated
                -- paragraph or example): that chunk's memory, stored once
                pos := k_first[k];
                IF pos IS NOT NULL THEN
                    k_act[k] := 'duplicate';
                    IF k_act[pos] IN ('unchanged', 'duplicate') THEN
                        k_id[k] := k_id[pos]; k_dup[k] := k_dup[pos];
                    ELSE
                        k_dup[k] := n + pos;  -- its row below, stored in this call
                    END IF;
                    CONTINUE;
                END IF;
                hit := k_hit[k];
                IF hit IS NOT NULL THEN
                    k_act[k] := 'duplicate'; k_id[k] := hit;
                END IF;
            END LOOP;
            -- c. A changed chunk supersedes the old chunk of its section, in order.
            FOR k IN 1 .. nk LOOP
                CONTINUE WHEN k_act[k] IS NOT NULL;
                FOR j IN 1 .. cardinality(ol_id) LOOP
                    IF NOT ol_used[j] AND ol_sect[j] = coalesce(k_sect[k], '') THEN
                        k_act[k] := 'changed'; k_id[k] := ol_id[j]; ol_used[j] := true;
                        EXIT;
                    END IF;
                END LOOP;
                k_act[k] := coalesce(k_act[k], 'new');
            END LOOP;
            FOR k IN 1 .. nk LOOP
                n := n + 1;
                -- the ref is the chunk's title: embedded with its text (brain.embedding_input)
                meta := jsonb_build_object('chunk', k, 'chunks', nk, 'title', d_ref[i])
                        || CASE WHEN k_sect[k] IS NOT NULL THEN jsonb_build_object('section', k_sect[k]) ELSE '{}' END
                        || CASE WHEN d_format[i] IS NOT NULL THEN jsonb_build_object('format', d_format[i]) ELSE '{}' END;
                o_ref[n] := d_ref[i]; o_chunk[n] := k; o_action[n] := k_act[k];
                o_id[n] := CASE WHEN k_act[k] IN ('unchanged', 'duplicate') THEN k_id[k] END;
                o_prev_id[n] := CASE WHEN k_act[k] = 'changed' THEN k_id[k] END;
                o_prev_ref[n] := NULL; o_head[n] := k_head[k]; o_body[n] := k_body[k]; o_sect[n] := k_sect[k]; o_norm[n] := k_norm[k];
                o_meta[n] := meta; o_hash[n] := d_hash[i]; o_flag[n] := to_jsonb(obs.signals);
                o_code[n] := NULL; o_err[n] := NULL; o_red[n] := NULL;
                o_dup[n] := CASE WHEN k_dup[k] IS NOT NULL THEN k_dup[k] END;
                IF k_act[k] IN ('new', 'changed') THEN
                    seen_key := seen_key || k_key[k];
                    seen_row := seen_row || n;
                END IF;
            END LOOP;
            -- d. Old chunks left over: gone from the document.
            FOR j IN 1 .. cardinality(ol_id) LOOP
                CONTINUE WHEN ol_used[j];
                n := n + 1;
                o_ref[n] := d_ref[i]; o_chunk[n] := ol_chunk[j]; o_action[n] := 'removed'; o_id[n] := ol_id[j];
                o_prev_id[n] := NULL; o_prev_ref[n] := NULL; o_head[n] := NULL; o_body[n] := NULL; o_sect[n] := NULL;
                o_norm[n] := NULL; o_meta[n] := NULL; o_hash[n] := NULL; o_flag[n] := NULL;
                o_code[n] := NULL; o_err[n] := NULL; o_red[n] := NULL; o_dup[n] := NULL;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            IF SQLSTATE NOT LIKE 'BR%' THEN
                RAISE;
            END IF;
            -- the document is reported and left as it was; the rest goes on
            d_action[i] := 'rejected';
            n := doc_start + 1;
            o_action[n] := 'rejected'; o_code[n] := SQLSTATE; o_err[n] := SQLERRM; o_red[n] := NULL;
            -- the chunks it had queued as seen are dropped with it
            pos := coalesce(array_position(ARRAY(SELECT r > doc_start FROM unnest(seen_row) AS r), true), 0);
            IF pos > 0 THEN
                seen_key := seen_key[1:pos - 1]; seen_row := seen_row[1:pos - 1];
            END IF;
        END;
    END LOOP;
    -- 3. The documents removed at source, with their chunks.
    FOR pair IN
        SELECT m.source_ref AS r, m.source_chunk AS c, m.memory_id AS id
        FROM brain.memory m
        WHERE m.workspace_id = ws AND m.memory_id = ANY (doomed)
        ORDER BY m.source_ref, m.source_chunk
    LOOP
        IF n = 0 OR o_ref[n] IS DISTINCT FROM pair.r OR o_action[n] NOT IN ('removed') THEN
            n := n + 1;
            o_ref[n] := pair.r; o_chunk[n] := NULL; o_action[n] := 'removed'; o_id[n] := NULL;
            o_prev_id[n] := NULL; o_prev_ref[n] := NULL; o_head[n] := NULL; o_body[n] := NULL; o_sect[n] := NULL;
            o_norm[n] := NULL; o_meta[n] := NULL; o_hash[n] := NULL; o_flag[n] := NULL;
            o_code[n] := NULL; o_err[n] := NULL; o_red[n] := NULL; o_dup[n] := NULL;
        END IF;
        n := n + 1;
        o_ref[n] := pair.r; o_chunk[n] := pair.c; o_action[n] := 'removed'; o_id[n] := pair.id;
        o_prev_id[n] := NULL; o_prev_ref[n] := NULL; o_head[n] := NULL; o_body[n] := NULL; o_sect[n] := NULL;
        o_norm[n] := NULL; o_meta[n] := NULL; o_hash[n] := NULL; o_flag[n] := NULL;
        o_code[n] := NULL; o_err[n] := NULL; o_red[n] := NULL; o_dup[n] := NULL;
    END LOOP;
    o_ref := o_ref[1:n]; o_chunk := o_chunk[1:n]; o_action := o_action[1:n]; o_id := o_id[1:n];
    o_prev_id := o_prev_id[1:n]; o_prev_ref := o_prev_ref[1:n]; o_head := o_head[1:n]; o_body := o_body[1:n];
    o_sect := o_sect[1:n];
    o_norm := o_norm[1:n]; o_meta := o_meta[1:n]; o_hash := o_hash[1:n]; o_flag := o_flag[1:n];
    o_code := o_code[1:n]; o_err := o_err[1:n]; o_red := o_red[1:n]; o_dup := o_dup[1:n];
    -- the rows to store, in order: one embedding row each
    -- (Queries read the o_ arrays through unnest: a subscript per row would
    -- copy the whole array for each row.)
    w_rows := ARRAY(SELECT u.j FROM unnest(o_chunk, o_action) WITH ORDINALITY AS u(c, a, j)
                    WHERE u.c IS NOT NULL AND u.a IN ('new', 'changed') ORDER BY u.j);

    IF check_only THEN
        RETURN QUERY
        SELECT u.r, u.c, u.a, u.id, u.pid, u.pref, u.h, u.sec, u.b,
               CASE WHEN u.c IS NOT NULL AND u.a IN ('new', 'changed') THEN brain.embedding_input(u.h, u.b, u.r) END,
               u.code, u.err, u.red
        FROM unnest(o_ref, o_chunk, o_action, o_id, o_prev_id, o_prev_ref, o_head, o_sect, o_body, o_code,
                    o_err, o_red) WITH ORDINALITY AS u(r, c, a, id, pid, pref, h, sec, b, code, err, red, j)
        ORDER BY u.j;
        RETURN;
    END IF;

    -- 4. The embeddings: one row per chunk to store, in order.
    IF embeddings IS NOT NULL THEN
        IF n_vectors <> cardinality(w_rows) THEN
            PERFORM brain._raise('BR012', format('%s embedding rows for %s chunks to store.', n_vectors,
                                                 cardinality(w_rows)),
                jsonb_build_object('rows', n_vectors, 'chunks', cardinality(w_rows)),
                'Run with check_only => true first: it returns the chunks to embed, in order.');
        END IF;
        space := brain._write_space(ingest_documents.embedding_space);
        vecs := ARRAY(SELECT brain._check_vector(ARRAY(SELECT unnest(embeddings[r:r][1:dims])), space)
                      FROM generate_series(1, n_vectors) AS r
                      ORDER BY r);
        -- As brain.observe_batch: a large batch leaves its vectors out of the
        -- HNSW index until brain.index_vectors (`brain worker`) indexes them.
        defer := n_vectors >= (brain.setting('index_defer_rows'))::integer;
        IF defer AND (SELECT count(*) FROM (SELECT FROM brain._waiting_vectors(space)
                                            LIMIT (brain.setting('index_pending_max'))::integer) AS w)
                     >= (brain.setting('index_pending_max'))::integer THEN
            PERFORM brain._insert_waiting(space, n_vectors, false, 'fact', v_project);
        END IF;
    END IF;
    PERFORM brain._lock_writes('fact', v_project);
    IF defer THEN
        seq := nextval('brain.embedding_ingest_seq');
    END IF;

    -- 5. Out of the way first: the chunks of removed documents and the
    --    chunks gone from changed ones (tombstoned), and the positions of the
    --    old chunks of changed documents (each takes its new one below).
    gone := ARRAY(SELECT u.id FROM unnest(o_id, o_action) WITH ORDINALITY AS u(id, a, j)
                  WHERE u.a = 'removed' AND u.id IS NOT NULL ORDER BY u.j);
    UPDATE brain.memory m
    SET state = 'tombstoned', forget_reason = 'removed at source', forgotten_at = now(), updated_at = now()
    WHERE m.workspace_id = ws AND m.memory_id = ANY (gone);
    PERFORM brain._audit_many(gone, 'forget', v_agent, jsonb_build_object('reason', 'removed at source'));
    UPDATE brain.memory m
    SET source_chunk = NULL
    WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project AND m.state = 'active'
      AND m.source_chunk IS NOT NULL
      AND m.source_ref IN (SELECT d_ref[i] FROM generate_series(1, n_docs) AS i
                           WHERE d_action[i] = 'changed' AND d_text[i] IS NOT NULL);

    -- 6. The new chunks, their fact rows and embeddings.
    --    (through the one write core)
    new_ids := brain._store_memories(ARRAY(
        SELECT jsonb_populate_record(NULL::brain.memory, jsonb_build_object(
                   'kind', 'fact', 'category', 'reference', 'origin', 'artifact', 'project', v_project,
                   'headline', u.h, 'body', u.b, 'normalized', u.nm, 'metadata', u.meta, 'source_agent', v_agent,
                   'source_system', v_system, 'source_ref', u.r, 'source_chunk', u.c, 'source_hash', u.sh,
                   'supersedes', u.pid, 'dedup_pending', vecs IS NULL, 'foldable', false, 'flag_reasons', u.flag,
                   -- indexed with the chunk, not its text: the document and the heading path
                   -- (docs/ranking.md); a document is a thread of chunks in order, for neighbours
                   'context', brain._observed_context(jsonb_build_object('title', u.r), NULL, u.meta ->> 'section',
                                                      NULL, NULL),
                   'thread', u.r, 'position', u.c))
        FROM unnest(o_ref, o_chunk, o_action, o_head, o_body, o_norm, o_meta, o_hash, o_prev_id, o_flag)
             WITH ORDINALITY AS u(r, c, a, h, b, nm, meta, sh, pid, flag, j)
        WHERE u.c IS NOT NULL AND u.a IN ('new', 'changed')
        ORDER BY u.j),
        vectors => vecs, space_id => space.space_id, ingest_seq => seq, audit => jsonb_build_object('actor', v_agent));
    new_ids := coalesce(new_ids, '{}');
    FOR w IN 1 .. cardinality(w_rows) LOOP
        o_id[w_rows[w]] := new_ids[w];
    END LOOP;
    FOR j IN 1 .. n LOOP
        IF o_dup[j] IS NOT NULL THEN
            o_id[j] := o_id[o_dup[j]];
        END IF;
    END LOOP;

    -- 7. A changed chunk's old version is superseded by it: the chain of brain.history.
    FOR pair IN
        SELECT u.pid AS old_id, u.id AS new_id
        FROM unnest(o_prev_id, o_id, o_action, o_chunk) WITH ORDINALITY AS u(pid, id, a, c, j)
        WHERE u.a = 'changed' AND u.c IS NOT NULL ORDER BY u.j
    LOOP
        PERFORM brain._mark_superseded(brain._get_memory(pair.old_id), pair.new_id, 'changed at source', v_agent);
    END LOOP;

    -- 8. Unchanged chunks of changed documents take their new position and
    --    the document's hash; renamed documents' chunks move to the new ref.
    moved := ARRAY(SELECT u.id FROM unnest(o_id, o_action, o_chunk) WITH ORDINALITY AS u(id, a, c, j)
                   WHERE u.a = 'unchanged' AND u.c IS NOT NULL ORDER BY u.j);
    UPDATE brain.memory m
    SET source_chunk = x.c, position = x.c, source_hash = x.sh,
        -- (a chunk stored before chunks had a title keeps none: its vector was made without)
        metadata = m.metadata - 'chunk' - 'chunks' - 'section' - 'format'
                   || CASE WHEN m.metadata ? 'title' THEN x.meta ELSE x.meta - 'title' END,
        context = brain._observed_context(jsonb_build_object('title', m.source_ref), NULL, x.meta ->> 'section',
                                          NULL, NULL),
        updated_at = now()
    FROM unnest(o_id, o_chunk, o_hash, o_meta, o_action) AS x(id, c, sh, meta, a)
    WHERE x.a = 'unchanged' AND x.c IS NOT NULL
      AND m.workspace_id = ws AND m.memory_id = x.id;
    PERFORM brain._audit_many(moved, 'update', v_agent, jsonb_build_object('reason', 'document changed at source'));
    moved := '{}';
    FOR i IN 1 .. n_docs LOOP
        CONTINUE WHEN d_action[i] <> 'renamed';
        WITH mv AS (
            UPDATE brain.memory m
            SET source_ref = d_ref[i], thread = d_ref[i],
                context = brain._observed_context(jsonb_build_object('title', d_ref[i]), NULL,
                                                  m.metadata ->> 'section', NULL, NULL),
                metadata = CASE WHEN m.metadata ? 'title' THEN m.metadata || jsonb_build_object('title', d_ref[i])
                                ELSE m.metadata END,
                updated_at = now()
            WHERE m.workspace_id = ws AND m.source_system = v_system AND m.project = v_project
              AND m.source_ref = d_prev[i] AND m.state = 'active' AND m.source_chunk IS NOT NULL
            RETURNING m.memory_id, m.metadata ? 'title' AS titled
        ), stale AS (
            -- A chunk's title is embedded with it: its vectors (in every space) are
            -- made again under the new ref, by `brain ingest` or `brain worker`.
            DELETE FROM brain.embedding e
            USING mv
            WHERE mv.titled AND e.workspace_id = ws AND e.memory_id = mv.memory_id
            RETURNING e.memory_id
        )
        SELECT array_agg(mv.memory_id ORDER BY mv.memory_id), bool_or(mv.titled) INTO created, retitled FROM mv;
        IF retitled THEN
            PERFORM pg_notify('brain_embedding', '');  -- a wake-up only: any role may LISTEN
        END IF;
        PERFORM brain._audit_many(coalesce(created, '{}'), 'update', v_agent,
            jsonb_build_object('reason', 'renamed at source', 'from', d_prev[i], 'to', d_ref[i]));
    END LOOP;

    RETURN QUERY
    SELECT u.r, u.c, u.a, u.id, u.pid, u.pref, u.h, u.sec, NULL::text, NULL::text, u.code, u.err, u.red
    FROM unnest(o_ref, o_chunk, o_action, o_id, o_prev_id, o_prev_ref, o_head, o_sect, o_code, o_err, o_red)
         WITH ORDINALITY AS u(r, c, a, id, pid, pref, h, sec, code, err, red, j)
    ORDER BY u.j;
END
$$;
COMMENT ON FUNCTION brain.ingest_documents IS
    'Keeps documents in step with their source. documents: [{ref, hash, text, format}]; a new or changed document sent without its text is reported (action new or changed, no chunk rows) and left for a call that sends it, so a first call with refs and hashes alone says which texts are needed. Each document is one or more artifact facts (category reference) keyed by (source_system, project, source_ref) with source_chunk = the chunk''s position and source_hash = the document''s hash. A document with its stored hash is unchanged (nothing embedded, nothing written); a new ref with the hash of a ref in scope and not in the listing is renamed (its memories move, history kept); a changed one keeps its unchanged chunks, supersedes a changed chunk''s old version (reason "changed at source"), adds new chunks and tombstones gone ones; refs in scopes ('''' every ref, a folder ending in / the refs under it) that are neither sent nor in listing (every ref of the run, when documents is one batch of it) are removed at source (tombstoned, reason "removed at source"). Text is stored with secrets redacted (redacted lists them), chunked by brain.chunk_text; a chunk repeating an active memory is a duplicate and not stored. One row per document (chunk NULL) and per chunk: action unchanged | renamed | new | changed | removed | duplicate | rejected. check_only => true writes nothing and returns each chunk (headline, section, body) and the embedding_input of each chunk to store; embeddings then holds one row per such chunk, in order (NULL: stored and queued for brain worker), and a document may carry the chunks check_only returned ([{headline, section, body}], unchanged and duplicate ones too) so they are not cut again (they are scanned for secrets and gated again).';
