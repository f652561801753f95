-- The import that loads memory documents into a workspace through the write
-- gate, with new ids, their states, supersede chains, annotations and fold
-- records kept (docs/export-format.md).

-- A document's text array field, or NULL when it has none.
CREATE OR REPLACE FUNCTION brain._doc_texts(doc jsonb, field text)
RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE jsonb_typeof(doc->field)
               WHEN 'array' THEN ARRAY(SELECT x FROM jsonb_array_elements_text(doc->field) WITH ORDINALITY AS a(x, n)
                                       ORDER BY a.n)
               WHEN 'string' THEN ARRAY[doc->>field]
           END
$$;

-- A time a document claims (created_at, ...): NULL when absent, never
-- infinite, and with clamp never later than the import (a date in the future
-- would rank it as new forever).
CREATE OR REPLACE FUNCTION brain._doc_time(doc jsonb, field text, clamp boolean DEFAULT true)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t timestamptz := (doc->>field)::timestamptz;
BEGIN
    IF NOT isfinite(t) THEN
        PERFORM brain._raise('BR009', format('%s is not a finite time.', field), jsonb_build_object('field', field),
            'Give an ISO 8601 time, e.g. 2026-03-02T09:00:00Z, or leave the field out.');
    END IF;
    RETURN CASE WHEN clamp AND t IS NOT NULL THEN least(t, now()) ELSE t END;
END
$$;

-- The first field of a memory document whose value is not of its type, named
-- with the type (never with the value): why a cast of the import failed.
CREATE OR REPLACE FUNCTION brain._doc_bad_field(doc jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT x.field, x.value, x.type, x.label
        FROM (SELECT k.field, k.type, k.label, doc->>k.field AS value, k.n
              FROM unnest(
                       ARRAY['id', 'supersedes', 'superseded_by', 'replaced_by', 'importance', 'upvotes',
                             'downvotes', 'access_count', 'record_version', 'priority', 'halflife_days', 'pinned',
                             'foldable', 'created_at', 'updated_at', 'last_accessed', 'superseded_at',
                             'expires_at', 'last_confirmed_at', 'forgotten_at', 'archived_at', 'dormant_after',
                             'due_at', 'status_changed_at', 'flag_confirmed_at'],
                       ARRAY['bigint', 'bigint', 'bigint', 'bigint', 'real', 'integer', 'integer', 'integer',
                             'integer', 'smallint', 'double precision', 'boolean', 'boolean', 'timestamptz',
                             'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz',
                             'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz',
                             'timestamptz'],
                       ARRAY['whole number', 'memory id', 'memory id', 'memory id', 'number', 'whole number',
                             'whole number', 'whole number', 'whole number', 'whole number', 'number', 'boolean',
                             'boolean', 'time', 'time', 'time', 'time', 'time', 'time', 'time', 'time', 'time',
                             'time', 'time', 'time']) WITH ORDINALITY AS k(field, type, label, n)
              UNION ALL
              SELECT format('annotations[%s].created_at', a.n), 'timestamptz', 'time', a.a->>'created_at', 100 + a.n
              FROM jsonb_array_elements(CASE WHEN jsonb_typeof(doc->'annotations') = 'array'
                                             THEN doc->'annotations' ELSE '[]' END) WITH ORDINALITY AS a(a, n)) AS x
        WHERE x.value IS NOT NULL
        ORDER BY x.n
    LOOP
        BEGIN
            EXECUTE format('SELECT %L::%s', f.value, f.type);
        EXCEPTION WHEN data_exception THEN
            RETURN format('%s is not a %s', f.field, f.label);
        END;
    END LOOP;
    RETURN NULL;
END
$$;

DROP FUNCTION IF EXISTS brain.import_memories(jsonb, text, text, boolean);
-- Stage 1 of brain.import_memories for one memory document d (the item-th):
-- checked, gated and stored with its kind row, annotations, vectors and
-- trajectory; one row per part (a long text is split into parts), created or
-- skipped as a duplicate, each created one carrying its links, fold records
-- and audit detail for the stages that need every document's new id. A
-- document the gate refuses, or with a value not of its field's type, is one
-- row, rejected, and nothing of it is kept; any other error stops the import.
-- A file is data, not authority: its ranking and trust fields count only
-- when an admin trusts it (v_trust); its times and provenance are its claims,
-- kept as such (metadata.import), under v_label.
CREATE OR REPLACE FUNCTION brain._import_document(item integer, d jsonb, source text, project text,
                                                  semantic_dedup boolean, v_trust boolean, v_label text)
RETURNS SETOF brain.staged_memory
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    parts brain.staged_memory[] := '{}';  -- its parts, stored or skipped
    v_old bigint;     -- the id the file gives it
    v_kind text;
    v_state text;
    v_origin text;
    v_project text;
    v_category text;
    v_severity text;
    v_text text;
    v_head text;
    h text;
    b text;
    pieces text[];
    n_parts integer;
    v_norm text;
    v_meta jsonb;
    v_tags text[];
    v_created timestamptz;
    v_halflife double precision;
    extra text;
    found_id bigint;
    new_id bigint;
    imp brain.memory_draft;  -- a document as the memory to store (brain._store_memories)
    n_vec integer;
    sp brain.embedding_space;
    v jsonb;
    v_raw text;       -- the document's text as the file has it: what the injection signals read
    v_flags text[];
    v_mark jsonb;     -- metadata.import
    bad text;
BEGIN
    BEGIN
        IF jsonb_typeof(d) IS DISTINCT FROM 'object' THEN
            PERFORM brain._raise('BR009', 'A memory document is a JSON object.', NULL,
                'See docs/export-format.md.');
        END IF;
        IF d ? 'invalid' THEN
            -- an importer's report of an entry it could not read
            -- (said in pybrain's importers' own words; anything else a caller sent is not repeated)
            PERFORM brain._raise('BR009',
                CASE WHEN d->>'invalid' ~ '^((-?Infinity|NaN) is not a JSON number|A number in this entry is NaN or infinite, which JSON does not allow|A memory( row)? is a JSON object, not [a-z]{1,20}|The file is not UTF-8 text)\.$'
                     THEN d->>'invalid' ELSE 'The importer could not read this entry.' END,
                jsonb_build_object('field', 'invalid', 'line', CASE WHEN jsonb_typeof(d->'line') = 'number' THEN d->'line' END),
                'Fix the entry at its source and import again.');
        END IF;
        v_old := (d->>'id')::bigint;
        v_kind := coalesce(d->>'kind', 'fact');
        v_state := coalesce(d->>'state', 'active');
        -- (overlay, human context that outranks derived material, is a trusted file's only)
        v_origin := coalesce(d->>'origin', 'explicit');
        IF v_origin = 'overlay' AND NOT v_trust THEN
            v_origin := 'explicit';
        END IF;
        v_project := coalesce(_import_document.project, d->>'project', '');
        v_category := d->>'category';
        v_meta := coalesce(d->'metadata', '{}');
        v_created := coalesce(brain._doc_time(d, 'created_at'), now());
        IF v_state NOT IN ('active', 'superseded', 'archived', 'tombstoned') THEN
            PERFORM brain._raise('BR009', 'Unknown state: a memory is active, superseded, archived or tombstoned.',
                jsonb_build_object('field', 'state', 'allowed', jsonb_build_array('active', 'superseded', 'archived', 'tombstoned')),
                'Leave state out for an active memory.');
        END IF;
        IF jsonb_typeof(v_meta) <> 'object' THEN
            PERFORM brain._raise('BR009', 'metadata is a JSON object.', NULL, 'Example: {"ticket": "OPS-12"}.');
        END IF;
        -- What the file claims and what it was not trusted with.
        v_mark := jsonb_build_object('import', jsonb_build_object(
            'source', v_label, 'trusted', v_trust,
            'claims', (SELECT coalesce(jsonb_agg(c.f ORDER BY c.n), '[]') FROM unnest(ARRAY[
                           'created_at', 'updated_at', 'superseded_at', 'forgotten_at', 'archived_at',
                           'status_changed_at', 'source_agent', 'source_system', 'source_ref', 'source_hash'])
                           WITH ORDINALITY AS c(f, n)
                       WHERE d ? c.f AND d->c.f <> 'null'),
            -- a time the file puts after the import is stored as the import's: the file's, here
            'later_than_import', (SELECT coalesce(jsonb_object_agg(c.f, d->c.f), '{}') FROM unnest(ARRAY[
                                      'created_at', 'updated_at', 'superseded_at', 'forgotten_at',
                                      'archived_at', 'status_changed_at']) AS c(f)
                                  WHERE (d->>c.f)::timestamptz > now()),
            'not_taken', CASE WHEN v_trust THEN '[]'::jsonb ELSE
                             (SELECT coalesce(jsonb_agg(c.f), '[]') FROM unnest(ARRAY[
                                  'pinned', 'importance', 'upvotes', 'downvotes', 'access_count', 'last_accessed',
                                  'last_confirmed_at', 'dormant_after', 'flag_reasons', 'flag_confirmed_at',
                                  'flag_confirmed_by']) AS c(f)
                              WHERE d ? c.f AND d->c.f NOT IN ('null', 'false', '0', '[]'))
                             || CASE WHEN d->>'origin' = 'overlay' THEN '["origin"]'::jsonb ELSE '[]' END
                             || CASE WHEN d->'skill_trigger'->'always_on' = 'true'::jsonb
                                     THEN '["skill_trigger.always_on"]'::jsonb ELSE '[]' END END));
        -- the severity the rule was written with (a superseded rule is DEPRECATED)
        v_severity := CASE WHEN v_kind <> 'rule' THEN d->>'severity'
                           WHEN upper(d->>'severity') = 'DEPRECATED' OR v_state = 'superseded'
                           THEN upper(coalesce(nullif(d->>'prior_severity', ''), 'PATTERN'))
                           ELSE upper(coalesce(d->>'severity', 'PATTERN')) END;
        -- Everything stored with the memory is scanned by the gate.
        extra := concat_ws(E'\n', v_meta::text, (d->'skill_trigger')::text, (d->'tags')::text,
            d->>'what_was_wrong', d->>'what_is_correct', d->>'error_message', d->>'command_attempted',
            d->>'source_ref', d->>'status_note', d->>'supersede_reason', d->>'forget_reason',
            d->>'source_agent', d->>'source_system', d->>'source_hash', d->>'flag_confirmed_by',
            (d->'flag_reasons')::text,
            (SELECT string_agg(concat_ws(E'\n', a->>'note', a->>'source'), E'\n') FROM jsonb_array_elements(
                 CASE WHEN jsonb_typeof(d->'annotations') = 'array' THEN d->'annotations' ELSE '[]' END) AS a),
            (SELECT string_agg(concat_ws(E'\n', x->>'headline', x->>'body', x->>'metadata'), E'\n')
             FROM jsonb_array_elements(
                 CASE WHEN jsonb_typeof(d->'folds') = 'array' THEN d->'folds' ELSE '[]' END) AS x));

        -- A document with a headline is one memory; a document with only a
        -- text (an importer's note or message) gets a derived headline, and
        -- a text too long for one memory is split into parts sharing its source_ref.
        -- Headlines and bodies are cleaned as every write's (one visible line;
        -- no hidden characters), and the text is flagged as every write's.
        IF d ? 'headline' THEN
            v_raw := concat_ws(E'\n', d->>'headline', d->>'body');
            pieces := ARRAY[brain.trim_space(brain.clean_body(coalesce(d->>'body', '')))];
            v_head := brain.clean_headline(d->>'headline');
        ELSE
            v_raw := concat_ws(E'\n', d->>'title', d->>'text');
            v_text := brain.trim_space(brain.clean_body(coalesce(d->>'text', '')));
            v_head := coalesce(nullif(brain.clean_headline(d->>'title'), ''),
                               brain.clean_headline(brain.derive_headline(v_text)));
            IF brain.word_count(v_head) > 15 OR length(v_head) > 300 THEN
                v_head := brain.derive_headline(v_head);
            END IF;
            IF brain.word_count(v_text) > 400 OR length(v_text) > 20000 THEN
                pieces := ARRAY(SELECT c.body FROM brain.chunk_text(v_text) AS c ORDER BY c.chunk);
            ELSIF brain.normalize_text(v_text) = brain.normalize_text(v_head) THEN
                pieces := ARRAY[''];
            ELSE
                pieces := ARRAY[v_text];
            END IF;
        END IF;
        n_parts := cardinality(pieces);
        -- (a turn of a conversation, metadata.role user or assistant, is read as observe reads it)
        v_flags := brain._turn_signals(v_raw, v_meta);
        IF v_trust AND jsonb_typeof(d->'flag_reasons') = 'array' THEN
            -- A trusted file adds its flags; it takes none of the gate's away.
            v_flags := ARRAY(SELECT DISTINCT x FROM unnest(v_flags || ARRAY(
                                 SELECT brain.clean_headline(r) FROM jsonb_array_elements_text(d->'flag_reasons') AS r))
                                 AS x WHERE x <> '' ORDER BY x);
        END IF;

        FOR k IN 1 .. n_parts LOOP
            h := CASE WHEN n_parts = 1 THEN v_head ELSE format('%s (part %s/%s)', v_head, k, n_parts) END;
            b := pieces[k];
            -- No field of an imported document may hold a secret (as in brain._write).
            PERFORM brain._refuse_secrets(jsonb_build_object('headline', h, 'body', b, 'document', extra));
            PERFORM brain._gate(v_kind, h, b, v_severity, v_category, v_origin, extra);
            v_norm := brain.normalize_text(h, b);

            -- Duplicates: an active memory with the same text (kind, project),
            -- or the same record (text, state and creation time) stored before.
            IF v_state = 'active' THEN
                found_id := (brain._exact_duplicate(v_kind, v_project, v_norm, NULL)).memory_id;
            ELSE
                SELECT m.memory_id INTO found_id FROM brain.memory m
                WHERE m.workspace_id = ws AND m.kind = v_kind AND m.project = v_project
                  AND m.normalized_hash = md5(v_norm)::uuid AND m.normalized = v_norm
                  AND (m.created_at = v_created OR NOT d ? 'created_at')
                  AND (m.state = v_state OR v_state = 'superseded' AND m.state = 'archived')
                ORDER BY m.memory_id LIMIT 1;
            END IF;
            IF found_id IS NOT NULL THEN
                parts := parts || jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                    'item', item, 'chunk', CASE WHEN n_parts > 1 THEN k END, 'action', 'skipped',
                    'memory_id', found_id, 'previous_id', v_old, 'vectors', 0));
                CONTINUE;
            END IF;
            IF jsonb_typeof(d->'skill_trigger') IN ('string', 'number', 'boolean', 'array')
               OR jsonb_typeof(d->'skill_trigger') = 'object'
                  AND coalesce(d->'skill_trigger'->>'name', '') !~ '^[a-z0-9][a-z0-9-]*$' THEN
                PERFORM brain._raise('BR009', 'A skill_trigger is an object with a lowercase, hyphenated name.',
                    jsonb_build_object('field', 'skill_trigger', 'type', jsonb_typeof(d->'skill_trigger')),
                    'Example: {"name": "db-migrations", "keywords": ["migration"], "projects": [], "always_on": false}.');
            END IF;
            IF d->'skill_trigger' IS NOT NULL AND jsonb_typeof(d->'skill_trigger') = 'object' AND v_state = 'active'
               AND EXISTS (SELECT FROM brain.memory m
                           WHERE m.workspace_id = ws AND m.state = 'active' AND m.skill_trigger IS NOT NULL
                             AND m.skill_trigger->>'name' = d->'skill_trigger'->>'name') THEN
                PERFORM brain._raise('BR009',
                    'A skill of that name exists in this workspace.',
                    jsonb_build_object('field', 'skill_trigger.name'),
                    'Supersede the existing skill, or rename the imported one.');
            END IF;

            v_tags := ARRAY(SELECT s.t FROM (
                                SELECT lower(brain.trim_space(u.t)) AS t, min(u.n) AS n
                                FROM unnest(coalesce(brain._doc_texts(d, 'tags'), '{}')
                                            || brain.extract_tags(h || E'\n' || b)) WITH ORDINALITY AS u(t, n)
                                WHERE brain.trim_space(u.t) <> ''
                                GROUP BY 1) AS s
                            ORDER BY s.n);
            v_halflife := coalesce((d->>'halflife_days')::double precision,
                                   (brain.setting('fact_halflife_days'))::double precision);
            IF NOT (v_halflife > 0 AND v_halflife < 'Infinity') THEN
                PERFORM brain._raise('BR009', 'halflife_days is a positive, finite number of days.',
                    jsonb_build_object('field', 'halflife_days'), 'The default is 7 days; leave it out for that.');
            END IF;
            IF v_trust AND NOT coalesce((d->>'importance')::real, 0.5) BETWEEN 0 AND 1 THEN
                PERFORM brain._raise('BR009', 'importance is a number between 0 and 1.',
                    jsonb_build_object('field', 'importance'), 'The default is 0.5; leave it out for that.');
            END IF;

            -- through the one write core (brain._store_memories)
            imp := NULL;
            imp.kind := v_kind;
            imp.category := coalesce(v_category, 'note');
            imp.origin := v_origin;
            imp.project := v_project;
            imp.headline := h;
            imp.body := b;
            imp.normalized := v_norm;
            imp.tags := v_tags;
            imp.people := coalesce(brain._doc_texts(d, 'people'), brain.extract_people(h || E'\n' || b));
            imp.topics := coalesce(brain._doc_texts(d, 'topics'), brain.extract_topics(h || E'\n' || b));
            imp.action_items := coalesce(brain._doc_texts(d, 'action_items'),
                                         brain.extract_action_items(h || E'\n' || b));
            imp.metadata := v_meta || CASE WHEN n_parts > 1 THEN jsonb_build_object('chunk', k, 'chunks', n_parts)
                                           ELSE '{}' END || v_mark;
            -- a superseded memory is linked to its successor in step 2
            imp.state := CASE WHEN v_state = 'superseded' THEN 'archived' ELSE v_state END;
            imp.pinned := v_trust AND coalesce((d->>'pinned')::boolean, false);
            -- (a skill always_on is in every boot payload, as a pin is: a trusted file's only)
            imp.skill_trigger := CASE WHEN NOT v_trust AND jsonb_typeof(d->'skill_trigger') = 'object'
                                           AND d->'skill_trigger' ? 'always_on'
                                      THEN jsonb_set(d->'skill_trigger', '{always_on}', 'false')
                                      ELSE nullif(d->'skill_trigger', 'null') END;
            imp.importance := CASE WHEN v_trust THEN coalesce((d->>'importance')::real, 0.5) ELSE 0.5 END;
            imp.upvotes := CASE WHEN v_trust THEN coalesce((d->>'upvotes')::integer, 0) ELSE 0 END;
            imp.downvotes := CASE WHEN v_trust THEN coalesce((d->>'downvotes')::integer, 0) ELSE 0 END;
            imp.access_count := CASE WHEN v_trust THEN coalesce((d->>'access_count')::integer, 0) ELSE 0 END;
            imp.last_accessed := CASE WHEN v_trust THEN brain._doc_time(d, 'last_accessed') END;
            imp.source_agent := d->>'source_agent';
            imp.source_system := d->>'source_system';
            imp.source_ref := d->>'source_ref';
            imp.source_hash := d->>'source_hash';
            imp.superseded_at := brain._doc_time(d, 'superseded_at');
            imp.supersede_reason := d->>'supersede_reason';
            imp.expires_at := brain._doc_time(d, 'expires_at', clamp => false);
            imp.last_confirmed_at := CASE WHEN v_trust THEN brain._doc_time(d, 'last_confirmed_at') END;
            imp.forget_reason := d->>'forget_reason';
            imp.dedup_pending := coalesce(_import_document.semantic_dedup, false) AND v_state = 'active'
                                 AND v_kind <> 'incident';
            imp.record_version := coalesce((d->>'record_version')::integer, 1);
            imp.created_at := v_created;
            imp.updated_at := greatest(v_created, coalesce(brain._doc_time(d, 'updated_at'), v_created));
            imp.dormant_after := CASE WHEN v_trust AND d ? 'dormant_after'
                                      THEN brain._doc_time(d, 'dormant_after', clamp => false)
                                      WHEN v_kind = 'fact' AND NOT brain._undecaying(v_origin)
                                      THEN brain._dormant_after(
                                               CASE WHEN v_trust THEN greatest(v_created, brain._doc_time(d, 'last_accessed'),
                                                                               brain._doc_time(d, 'last_confirmed_at'))
                                                    ELSE v_created END, v_halflife) END;
            imp.forgotten_at := brain._doc_time(d, 'forgotten_at');
            imp.archived_at := brain._doc_time(d, 'archived_at');
            imp.foldable := coalesce((d->>'foldable')::boolean, true);
            imp.flag_reasons := v_flags;
            imp.flag_confirmed_at := CASE WHEN v_trust THEN brain._doc_time(d, 'flag_confirmed_at') END;
            imp.flag_confirmed_by := CASE WHEN v_trust AND brain._doc_time(d, 'flag_confirmed_at') IS NOT NULL
                                          THEN coalesce(nullif(brain.clean_headline(d->>'flag_confirmed_by'), ''),
                                                        v_label) END;
            -- the kind row's fields as the file gives them (a superseded rule is deprecated)
            imp.rule := ROW(CASE WHEN v_state = 'superseded' THEN 'DEPRECATED' ELSE v_severity END,
                            CASE WHEN v_state = 'superseded' THEN v_severity
                                 ELSE upper(nullif(d->>'prior_severity', '')) END)::brain.rule_detail;
            imp.fact := ROW(v_halflife)::brain.fact_detail;
            imp.incident := ROW(d->>'what_was_wrong', d->>'what_is_correct', d->>'error_message',
                                d->>'command_attempted', brain._doc_texts(d, 'related_files'),
                                d->>'complexity')::brain.incident_detail;
            imp.task := ROW(d->>'status', (d->>'priority')::smallint, brain._doc_time(d, 'due_at', clamp => false),
                            d->>'status_note', coalesce(brain._doc_time(d, 'status_changed_at'), v_created)
                            )::brain.task_detail;
            -- (its vectors, of the spaces the file names, are written below: no wake-up here)
            new_id := (brain._store_memories(ARRAY[imp], vectors_later => true))[1];
            IF new_id IS NULL THEN
                -- an earlier document of this import has the same text
                found_id := (brain._exact_duplicate(v_kind, v_project, v_norm, NULL)).memory_id;
                parts := parts || jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                    'item', item, 'chunk', CASE WHEN n_parts > 1 THEN k END, 'action', 'skipped',
                    'memory_id', found_id, 'previous_id', v_old, 'vectors', 0));
                CONTINUE;
            END IF;

            IF v_kind = 'trajectory' THEN
                PERFORM brain._import_trajectory(new_id, d, v_trust);
            END IF;

            IF k = 1 THEN
                -- Who wrote an annotation is the file's claim, named as such unless trusted.
                INSERT INTO brain.annotation (workspace_id, memory_id, note, source, created_at)
                SELECT ws, new_id, brain.trim_space(brain.clean_body(a->>'note')),
                       CASE WHEN v_trust THEN a->>'source'
                            WHEN nullif(brain.clean_headline(a->>'source'), '') IS NULL THEN v_label
                            ELSE format('%s (claimed by %s)', brain.clean_headline(a->>'source'), v_label) END,
                       coalesce(brain._doc_time(a, 'created_at'), now())
                FROM jsonb_array_elements(CASE WHEN jsonb_typeof(d->'annotations') = 'array'
                                               THEN d->'annotations' ELSE '[]' END) WITH ORDINALITY AS x(a, n)
                ORDER BY x.n;
                IF EXISTS (SELECT FROM jsonb_array_elements(CASE WHEN jsonb_typeof(d->'folds') = 'array'
                                                                 THEN d->'folds' ELSE '[]' END) AS x(f)
                           WHERE jsonb_typeof(x.f) <> 'object' OR brain.trim_space(coalesce(x.f->>'headline', '')) = ''
                              OR jsonb_typeof(coalesce(x.f->'metadata', '{}')) <> 'object'
                              OR (x.f->>'item_created_at')::timestamptz IS NULL AND x.f ? 'item_created_at'
                              OR (x.f->>'folded_at')::timestamptz IS NULL AND x.f ? 'folded_at'
                              OR (x.f->>'similarity')::real IS NULL AND x.f ? 'similarity'
                              OR (x.f->>'folded_memory_id')::bigint IS NULL AND x.f ? 'folded_memory_id'
                                 AND x.f->'folded_memory_id' <> 'null') THEN
                    PERFORM brain._raise('BR009', 'A fold record is an object with a headline (docs/export-format.md).',
                        jsonb_build_object('field', 'folds', 'type', jsonb_typeof(d->'folds')), 'Fix or leave out the folds of this memory.');
                END IF;
            END IF;

            -- Vectors of a space this workspace has (same provider, model and
            -- dimensions); others are left out and the worker embeds the memory.
            n_vec := 0;
            FOR v IN SELECT x FROM jsonb_array_elements(CASE WHEN jsonb_typeof(d->'vectors') = 'array'
                                                             THEN d->'vectors' ELSE '[]' END) AS x LOOP
                CONTINUE WHEN n_parts > 1;
                SELECT * INTO sp FROM brain.embedding_space s
                WHERE s.workspace_id = ws AND s.provider = v->>'provider' AND s.model = v->>'model'
                  AND s.dims = (v->>'dims')::integer;
                CONTINUE WHEN NOT FOUND;
                PERFORM brain._store_vectors(ARRAY[new_id], ARRAY[
                    brain._check_vector(ARRAY(SELECT x::double precision
                                              FROM jsonb_array_elements_text(v->'values') WITH ORDINALITY AS e(x, n)
                                              ORDER BY e.n), sp)], sp.space_id);
                n_vec := n_vec + 1;
            END LOOP;

            parts := parts || jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
                'item', item, 'chunk', CASE WHEN n_parts > 1 THEN k END, 'action', 'created',
                'memory_id', new_id, 'previous_id', v_old, 'vectors', n_vec,
                -- what is written once every document has its new id: its links (through
                -- the map of the file's ids), its fold records and its audit row
                'input', jsonb_build_object(
                    'linked', (d->>'supersedes') IS NOT NULL OR (d->>'superseded_by') IS NOT NULL
                              OR (d->>'replaced_by') IS NOT NULL OR v_state = 'superseded',
                    'supersedes', (d->>'supersedes')::bigint, 'superseded_by', (d->>'superseded_by')::bigint,
                    'replaced_by', (d->>'replaced_by')::bigint, 'state', v_state,
                    'folds', CASE WHEN k = 1 AND jsonb_typeof(d->'folds') = 'array'
                                       AND jsonb_array_length(d->'folds') > 0 THEN d->'folds' END,
                    'audit', jsonb_build_object('import', coalesce(_import_document.source, 'import'))
                             || CASE WHEN v_old IS NOT NULL THEN jsonb_build_object('imported_id', v_old) ELSE '{}' END
                             || CASE WHEN v_state <> 'active' THEN jsonb_build_object('state', v_state) ELSE '{}' END)));
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE NOT LIKE 'BR%' AND SQLSTATE NOT LIKE '22%' AND SQLSTATE NOT LIKE '23%' THEN
            RAISE;
        END IF;
        -- A value of the wrong type is named by its field and type, never repeated.
        bad := CASE WHEN SQLSTATE LIKE '22%' THEN brain._doc_bad_field(d) END;
        -- The document is refused whole (its parts too); the rest goes on.
        RETURN NEXT jsonb_populate_record(NULL::brain.staged_memory, jsonb_build_object(
            'item', item, 'action', 'rejected', 'previous_id', v_old, 'vectors', 0,
            'error_code', CASE WHEN SQLSTATE LIKE 'BR%' THEN SQLSTATE::text ELSE 'BR009' END,
            'error', CASE WHEN SQLSTATE LIKE 'BR%' OR SQLSTATE LIKE '23%' THEN SQLERRM
                          WHEN bad IS NOT NULL THEN bad || '.'
                          ELSE 'A value of the document is not of its field''s type.' END));
        RETURN;
    END;
    RETURN QUERY SELECT * FROM unnest(parts);
END
$$;

CREATE OR REPLACE FUNCTION brain.import_memories(
    docs jsonb,
    source text DEFAULT NULL,
    project text DEFAULT NULL,
    semantic_dedup boolean DEFAULT false,
    trust_file boolean DEFAULT false
)
RETURNS TABLE (item integer, chunk integer, old_id bigint, action text, memory_id bigint,
               vectors integer, error_code text, error text)
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    -- One row per part stored or skipped and per document refused, in document order
    -- (brain.staged_memory, from brain._import_document).
    staged brain.staged_memory[];
    r record;
BEGIN
    IF docs IS NULL OR jsonb_typeof(docs) <> 'array' THEN
        PERFORM brain._raise('BR009', 'import_memories takes a JSON array of memory documents.',
            jsonb_build_object('type', jsonb_typeof(docs)), 'See docs/export-format.md for a document''s fields.');
    END IF;
    PERFORM brain._refuse_secrets(jsonb_build_object('source', import_memories.source));
    IF coalesce(import_memories.trust_file, false) THEN
        PERFORM brain._require_admin(ws);
    END IF;

    -- 1. Each document through the gate and into the workspace, in order
    --    (brain._import_document); the links wait until every document has its new id.
    -- (one pass over the array: indexing a large jsonb reads it whole each time)
    staged := ARRAY(
        SELECT s
        FROM jsonb_array_elements(docs) WITH ORDINALITY AS x(doc, n),
             brain._import_document(x.n::integer, x.doc, import_memories.source, import_memories.project,
                                    import_memories.semantic_dedup, coalesce(import_memories.trust_file, false),
                                    coalesce(nullif(brain.clean_headline(import_memories.source), ''), 'import')) AS s
        ORDER BY x.n, s.chunk NULLS FIRST);

    -- 2. The links, through the map of the file's ids to the new ones (each document's
    --    first part): supersede chains, forget replacements and fold records. A
    --    superseded memory whose successor was not imported stays out of default reads
    --    as archived.
    WITH map AS (
        SELECT s.previous_id AS old_id, s.memory_id AS new_id
        FROM unnest(staged) AS s
        WHERE s.action IN ('created', 'skipped') AND coalesce(s.chunk, 1) = 1 AND s.previous_id IS NOT NULL)
    UPDATE brain.memory m
    SET supersedes = ms.new_id,
        superseded_by = CASE WHEN u.st = 'superseded' THEN mb.new_id END,
        replaced_by = mr.new_id,
        state = CASE WHEN u.st = 'superseded' AND mb.new_id IS NOT NULL THEN 'superseded' ELSE m.state END,
        archived_at = CASE WHEN u.st = 'superseded' AND mb.new_id IS NULL
                           THEN coalesce(m.archived_at, m.superseded_at, now()) ELSE m.archived_at END
    FROM (SELECT s.memory_id AS id, (s.input->>'supersedes')::bigint AS sup,
                 (s.input->>'superseded_by')::bigint AS by_id, (s.input->>'replaced_by')::bigint AS repl,
                 s.input->>'state' AS st
          FROM unnest(staged) AS s
          WHERE s.action = 'created' AND (s.input->>'linked')::boolean) AS u
    LEFT JOIN map AS ms ON ms.old_id = u.sup
    LEFT JOIN map AS mb ON mb.old_id = u.by_id
    LEFT JOIN map AS mr ON mr.old_id = u.repl
    WHERE m.workspace_id = ws AND m.memory_id = u.id;
    WITH map AS (
        SELECT s.previous_id AS old_id, s.memory_id AS new_id
        FROM unnest(staged) AS s
        WHERE s.action IN ('created', 'skipped') AND coalesce(s.chunk, 1) = 1 AND s.previous_id IS NOT NULL)
    INSERT INTO brain.memory_fold (workspace_id, memory_id, folded_memory_id, displaced, headline, body, metadata,
        source_agent, session_id, source_system, source_ref, source_hash, item_created_at, similarity, folded_at)
    SELECT ws, u.memory_id, mp.new_id, coalesce((x.f->>'displaced')::boolean, false), brain.clean_headline(x.f->>'headline'),
           brain.trim_space(brain.clean_body(coalesce(x.f->>'body', ''))), coalesce(x.f->'metadata', '{}'),
           x.f->>'source_agent', NULL, x.f->>'source_system', x.f->>'source_ref', x.f->>'source_hash',
           least(coalesce((x.f->>'item_created_at')::timestamptz, now()), now()),
           coalesce((x.f->>'similarity')::real, 1), least(coalesce((x.f->>'folded_at')::timestamptz, now()), now())
    FROM unnest(staged) WITH ORDINALITY AS u
    CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(u.input->'folds') = 'array'
                                                 THEN u.input->'folds' ELSE '[]' END) WITH ORDINALITY AS x(f, k)
    LEFT JOIN map AS mp ON mp.old_id = (x.f->>'folded_memory_id')::bigint
    WHERE u.action = 'created'
    ORDER BY u.ordinality, x.k;

    -- 3. One audit row per memory stored, with its snapshot as imported (links included).
    -- (through brain._audit: only the owner's audit helpers may write the audit table)
    FOR r IN
        SELECT s.memory_id AS id, s.input->'audit' AS detail
        FROM unnest(staged) WITH ORDINALITY AS s
        WHERE s.action = 'created'
        ORDER BY s.ordinality
    LOOP
        PERFORM brain._audit(r.id, 'insert', nullif(import_memories.source, ''), r.detail);
    END LOOP;

    RETURN QUERY
    SELECT s.item, s.chunk, s.previous_id, s.action, s.memory_id, s.vectors, s.error_code, s.error
    FROM unnest(staged) WITH ORDINALITY AS s
    ORDER BY s.ordinality;
END
$$;COMMENT ON FUNCTION brain.import_memories IS
    'Loads memory documents (docs/export-format.md: an export''s lines, or an importer''s) into the workspace, in order, through the write gate: each gets a new id; its headline and body are cleaned and its text flagged (brain.injection_signals) as any write''s; states, supersede chains, forget replacements, annotations and fold records are kept, links remapped to the new ids. A file is data, not authority: pins, ratings, importance, access counts, decay times, flags, the origin overlay and a skill''s always_on are taken from it only with trust_file => true (an admin of the workspace); its times (never later than the import) and provenance are kept as its claims, recorded in metadata.import, and an annotation''s author is named as claimed unless trusted. A document with only a text gets a derived headline (its title when given) and is split into parts when too long. Refused documents (BR codes, secrets included; a value of the wrong type is named by its field, never repeated) are reported and the rest stored; an active text already stored (same kind and project) or a record already imported is skipped. Vectors are kept for the workspace''s spaces of the same provider, model and dimensions; other memories wait for `brain worker`. semantic_dedup => true lets the worker''s embedding run semantic dedup on the imported active memories. One row per document (per part) with its action: created, skipped or rejected.';
