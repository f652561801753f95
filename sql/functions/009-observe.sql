-- Observed memories: chat turns, tool output, runtime events and document
-- chunks, written in batches. Each gets a derived headline; long text is split
-- into chunks that share a source_ref; dedup is exact or near-identical only.

CREATE OR REPLACE FUNCTION brain.derive_headline(t text, max_words integer DEFAULT 12)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN cardinality(w) <= max_words THEN array_to_string(w, ' ')
                ELSE array_to_string(w[1:max_words], ' ') || ' …' END
    FROM (SELECT regexp_split_to_array(
                     brain.trim_space(regexp_replace(split_part(brain.trim_space(coalesce(t, '')), E'\n', 1),
                                                     '\s+', ' ', 'g')), ' ') AS w) AS x
$$;
COMMENT ON FUNCTION brain.derive_headline IS
    'A headline for observed text: the first line''s first max_words words, with an ellipsis when cut.';

CREATE OR REPLACE FUNCTION brain.chunk_text(t text, max_words integer DEFAULT 300)
RETURNS TABLE (chunk integer, body text)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    sentence text;
    words text[];
    current_words integer := 0;
    current_text text := '';
    n integer := 0;
BEGIN
    IF brain.word_count(t) <= max_words THEN
        chunk := 1;
        body := brain.trim_space(t);
        RETURN NEXT;
        RETURN;
    END IF;
    -- Whole sentences while they fit; a sentence longer than a chunk is cut by words.
    FOR sentence IN SELECT s FROM regexp_split_to_table(brain.trim_space(t), '(?<=[.!?])\s+|\n\s*\n') AS s
                    WHERE s !~ '^\s*$'
    LOOP
        words := regexp_split_to_array(brain.trim_space(sentence), '\s+');
        WHILE cardinality(words) > 0 LOOP
            IF current_words > 0 AND current_words + cardinality(words) > max_words THEN
                n := n + 1; chunk := n; body := current_text; RETURN NEXT;
                current_words := 0; current_text := '';
            END IF;
            IF cardinality(words) > max_words THEN
                n := n + 1; chunk := n; body := array_to_string(words[1:max_words], ' '); RETURN NEXT;
                words := words[max_words + 1:];
            ELSE
                current_text := CASE WHEN current_text = '' THEN '' ELSE current_text || ' ' END
                                || array_to_string(words, ' ');
                current_words := current_words + cardinality(words);
                words := '{}';
            END IF;
        END LOOP;
    END LOOP;
    IF current_words > 0 THEN
        n := n + 1; chunk := n; body := current_text; RETURN NEXT;
    END IF;
END
$$;
COMMENT ON FUNCTION brain.chunk_text IS
    'Splits text into chunks of at most max_words words, at sentence boundaries where possible.';

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
    check_only boolean DEFAULT false
)
RETURNS TABLE (item integer, chunk integer, action text, memory_id bigint, duplicate_of bigint,
               similarity real, embedding_input text, error_code text, error text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    n_items integer := coalesce(cardinality(texts), 0);
    dims integer := CASE WHEN array_ndims(embeddings) = 2 THEN array_length(embeddings, 2) END;
    row_no integer := 0;
    item_first_row integer;
    pieces_of text[];
    pieces record;
    n_chunks integer;
    ref text;
    head text;
    vector double precision[];
    r brain.write_result;
    results brain.write_result[];
    inputs text[];
BEGIN
    IF origin IS NULL OR origin NOT IN ('observed', 'artifact') THEN
        PERFORM brain._raise('BR009', 'observe stores observed events or artifact chunks.',
            jsonb_build_object('origin', origin), 'Authored memories go through brain.remember.');
    END IF;
    IF kind IS NULL OR kind NOT IN ('fact', 'incident') THEN
        PERFORM brain._raise('BR009', 'Observed memories are facts or incidents.',
            jsonb_build_object('kind', kind), 'Rules and tasks are authored: use brain.remember.');
    END IF;
    IF source_refs IS NOT NULL AND cardinality(source_refs) <> n_items
       OR metadata IS NOT NULL AND cardinality(metadata) <> n_items THEN
        PERFORM brain._raise('BR009', 'source_refs and metadata need one entry per text.',
            jsonb_build_object('texts', n_items, 'source_refs', cardinality(source_refs),
                               'metadata', cardinality(metadata)),
            'Pass one entry per text (NULL entries are allowed), or leave the array out.');
    END IF;
    IF embeddings IS NOT NULL AND array_ndims(embeddings) <> 2 THEN
        PERFORM brain._raise('BR012', 'embeddings is a two-dimensional array: one row per chunk.', NULL,
            'Run with check_only => true first: it returns the chunks to embed, in order.');
    END IF;

    FOR i IN 1 .. n_items LOOP
        item := i;
        item_first_row := row_no;
        BEGIN
            results := '{}';
            inputs := '{}';
            pieces_of := ARRAY(SELECT c.body FROM brain.chunk_text(texts[i]) AS c ORDER BY c.chunk);
            n_chunks := cardinality(pieces_of);
            ref := coalesce(source_refs[i], CASE WHEN n_chunks > 1 THEN md5(texts[i]) END);
            head := brain.derive_headline(texts[i]);
            FOR pieces IN SELECT p.n::integer AS n, p.body FROM unnest(pieces_of) WITH ORDINALITY AS p(body, n) LOOP
                vector := NULL;
                IF embeddings IS NOT NULL AND NOT check_only THEN
                    row_no := row_no + 1;
                    IF row_no > array_length(embeddings, 1) THEN
                        -- An item the gate refuses has no row: let the gate speak first.
                        PERFORM brain._write(kind, head, pieces.body, 'episodic', origin, project, NULL, '{}', NULL,
                            false, NULL, coalesce(metadata[i], '{}'), NULL, NULL, source_agent, session_id,
                            source_system, ref, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, true, NULL);
                        PERFORM brain._raise('BR012', 'Fewer embedding rows than chunks.',
                            jsonb_build_object('rows', array_length(embeddings, 1)),
                            'Run with check_only => true first: it returns the chunks to embed, in order.');
                    END IF;
                    vector := ARRAY(SELECT unnest(embeddings[row_no:row_no][1:dims]));
                END IF;
                r := brain._write(kind,
                    CASE WHEN n_chunks = 1 THEN head ELSE format('%s (part %s/%s)', head, pieces.n, n_chunks) END,
                    CASE WHEN n_chunks = 1 AND brain.normalize_text(pieces.body) = brain.normalize_text(head)
                         THEN '' ELSE pieces.body END,
                    'episodic', origin, project, NULL, '{}', NULL, false, NULL,
                    coalesce(metadata[i], '{}') || CASE WHEN n_chunks > 1
                        THEN jsonb_build_object('chunk', pieces.n, 'chunks', n_chunks) ELSE '{}' END,
                    vector, embedding_space, source_agent, session_id, source_system, ref, md5(texts[i]),
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, check_only, NULL);
                results := results || r;
            END LOOP;
            FOR c IN 1 .. cardinality(results) LOOP
                chunk := c;
                action := results[c].action;
                memory_id := results[c].memory_id;
                duplicate_of := results[c].duplicate_of;
                similarity := results[c].similarity;
                embedding_input := results[c].embedding_input;
                error_code := NULL;
                error := NULL;
                RETURN NEXT;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            -- Embedding errors (one embedder made every row) and pending action
            -- items (they block the session) concern the whole batch.
            IF SQLSTATE NOT LIKE 'BR%' OR SQLSTATE IN ('BR012', 'BR013') THEN
                RAISE;
            END IF;
            -- One bad item is reported and skipped; the rest of the batch is stored.
            -- Its embedding rows are not consumed: check_only returned no chunks for it.
            row_no := item_first_row;
            chunk := NULL; action := 'rejected'; memory_id := NULL; duplicate_of := NULL;
            similarity := NULL; embedding_input := NULL; error_code := SQLSTATE; error := SQLERRM;
            RETURN NEXT;
        END;
    END LOOP;
    IF embeddings IS NOT NULL AND NOT check_only AND row_no <> array_length(embeddings, 1) THEN
        PERFORM brain._raise('BR012', format('%s embedding rows for %s chunks.',
                                             array_length(embeddings, 1), row_no), NULL,
            'Run with check_only => true first: it returns the chunks to embed, in order.');
    END IF;
END
$$;
COMMENT ON FUNCTION brain.observe_batch IS
    'Stores many observed texts (chat turns, tool output, events) or artifact chunks in one call: derived headlines, long texts split into chunks sharing a source_ref, exact and near-identical dedup only. embeddings holds one row per chunk in order (check_only => true returns the chunks). An item the gate refuses is reported (action rejected, error_code) and the rest stored.';

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
    check_only boolean DEFAULT false
)
RETURNS TABLE (item integer, chunk integer, action text, memory_id bigint, duplicate_of bigint,
               similarity real, embedding_input text, error_code text, error text)
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT * FROM brain.observe_batch(ARRAY[observe.text], observe.kind, observe.project, observe.origin,
        observe.source_system, CASE WHEN observe.source_ref IS NULL THEN NULL ELSE ARRAY[observe.source_ref] END,
        observe.source_agent, observe.session_id,
        CASE WHEN observe.metadata IS NULL THEN NULL ELSE ARRAY[observe.metadata] END,
        observe.embeddings, observe.embedding_space, observe.check_only)
$$;
COMMENT ON FUNCTION brain.observe IS 'brain.observe_batch for one text.';
