-- capture_context: keep the sentences of a text that state a decision, an
-- action, a gotcha or an insight, and store each through the write gate.

CREATE OR REPLACE FUNCTION brain.capture_sentences(t text)
RETURNS TABLE (n integer, sentence text, kind text, category text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH split AS (
        SELECT brain.trim_space(regexp_replace(s, '^\s*([-*•]|\d+[.)])\s+', '')) AS s, ord
        FROM regexp_split_to_table(coalesce(t, ''), '(?<=[.!?])\s+|\n+') WITH ORDINALITY AS x(s, ord)
    ), classified AS (
        SELECT s, ord, CASE
            WHEN s ~* '\m(need to|needs to|must|todo|to-do|follow up|follow-up|action item|next step|remember to|don''t forget|make sure to)\M'
                THEN 'action'
            WHEN s ~* '\m(decided|decide to|we chose|chose to|going with|switched to|switch to|we will use|agreed|settled on|opted for|decision)\M'
                THEN 'decision'
            WHEN s ~* '\m(gotcha|watch out|careful|beware|pitfall|does not work|doesn''t work|broke|breaks|fails when|caveat)\M'
                THEN 'gotcha'
            WHEN s ~* '\m(learned|realized|realised|discovered|turns out|turned out|insight|the key is|works because|til)\M'
                THEN 'insight'
        END AS category
        FROM split
        WHERE brain.word_count(s) >= 4
    )
    SELECT row_number() OVER (ORDER BY ord)::integer, s,
           CASE WHEN category = 'action' THEN 'task' ELSE 'fact' END, category
    FROM classified
    WHERE category IS NOT NULL
$$;
COMMENT ON FUNCTION brain.capture_sentences IS
    'The sentences of a text worth keeping, by keyword: action (need to, must, todo, follow up, next step, remember to, ...) -> task; decision (decided, chose, going with, switched to, agreed, settled on, ...), gotcha (watch out, careful, pitfall, does not work, fails when, ...), insight (learned, realized, discovered, turns out, the key is, ...) -> fact. Sentences under 4 words are ignored; the first matching class wins in that order.';

CREATE OR REPLACE FUNCTION brain.capture_context(
    text text,
    source text DEFAULT NULL,
    project text DEFAULT '',
    session_id bigint DEFAULT NULL,
    embeddings double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    check_only boolean DEFAULT false
)
RETURNS TABLE (n integer, sentence text, category text, action text, memory_id bigint, duplicate_of bigint,
               similarity real, embedding_input text, reason text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    dims integer := CASE WHEN array_ndims(embeddings) = 2 THEN array_length(embeddings, 2) END;
    row_no integer := 0;
    c record;
    vector double precision[];
    r brain.write_result;
    detail jsonb;
BEGIN
    IF embeddings IS NOT NULL AND array_ndims(embeddings) <> 2 THEN
        PERFORM brain._raise('BR012', 'embeddings is a two-dimensional array: one row per captured sentence.', NULL,
            'Run with check_only => true first: it returns the sentences to embed, in order.');
    END IF;
    PERFORM brain._refuse_secrets(jsonb_build_object('source', source, 'project', project));
    -- Captured text is observed text: its secrets are redacted, the rest is kept.
    FOR c IN SELECT * FROM brain.capture_sentences(brain.redact_secrets(capture_context.text)) LOOP
        n := c.n; sentence := c.sentence; category := c.category;
        memory_id := NULL; duplicate_of := NULL; similarity := NULL; embedding_input := NULL; reason := NULL;
        BEGIN
            vector := NULL;
            IF embeddings IS NOT NULL AND NOT check_only THEN
                row_no := row_no + 1;
                IF row_no > array_length(embeddings, 1) THEN
                    -- A sentence the gate refuses has no row: let the gate speak first.
                    PERFORM brain._write(brain._draft(c.kind, c.sentence, '', c.category, 'explicit', project,
                                                      source_agent => source, session_id => session_id), true);
                    PERFORM brain._raise('BR012', 'Fewer embedding rows than captured sentences.',
                        jsonb_build_object('rows', array_length(embeddings, 1)),
                        'Run with check_only => true first: it returns the sentences to embed, in order.');
                END IF;
                vector := ARRAY(SELECT unnest(embeddings[row_no:row_no][1:dims]));
            END IF;
            r := brain._write(brain._draft(c.kind,
                CASE WHEN brain.word_count(c.sentence) <= 15 THEN c.sentence ELSE brain.derive_headline(c.sentence) END,
                CASE WHEN brain.word_count(c.sentence) <= 15 THEN '' ELSE c.sentence END,
                c.category, 'explicit', project, metadata => jsonb_build_object('auto_captured', true),
                embedding => vector, embedding_space => embedding_space, source_agent => source,
                session_id => session_id), check_only);
            action := r.action; memory_id := r.memory_id; duplicate_of := r.duplicate_of;
            similarity := r.similarity; embedding_input := r.embedding_input;
            IF r.action = 'skipped' THEN
                reason := CASE WHEN r.similarity = 1 THEN format('already stored as #%s', r.memory_id)
                               ELSE format('near-identical to #%s', r.memory_id) END;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            IF SQLSTATE NOT LIKE 'BR%' OR SQLSTATE IN ('BR012', 'BR013') THEN
                RAISE;
            END IF;
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            -- A duplicate or a refused sentence is skipped, not an error; it had its
            -- embedding row, since check_only listed it as valid only if the gate passed.
            IF SQLSTATE = 'BR008' THEN
                action := 'skipped';
                duplicate_of := (detail::jsonb->>'duplicate_of')::bigint;
                similarity := (detail::jsonb->>'similarity')::real;
                reason := format('related to #%s', duplicate_of);
            ELSE
                IF embeddings IS NOT NULL AND NOT check_only THEN
                    row_no := row_no - 1;  -- check_only gave no row to a sentence the gate refuses
                END IF;
                action := 'rejected';
                reason := SQLERRM;
            END IF;
        END;
        RETURN NEXT;
    END LOOP;
    IF embeddings IS NOT NULL AND NOT check_only AND row_no <> array_length(embeddings, 1) THEN
        PERFORM brain._raise('BR012', format('%s embedding rows for %s captured sentences.',
                                             array_length(embeddings, 1), row_no), NULL,
            'Run with check_only => true first: it returns the sentences to embed, in order.');
    END IF;
END
$$;
COMMENT ON FUNCTION brain.capture_context IS
    'Stores the decisions, actions, gotchas and insights of a text (brain.capture_sentences) through the write gate, marked metadata.auto_captured. Duplicates are skipped with a reason, refused sentences reported, never raised. embeddings holds one row per sentence that check_only => true returns as valid.';
