-- The write path: gate, exact and semantic dedup, extraction, kind rows,
-- audit, and the queue of writes that still need an embedding.

-- Memories as JSON documents: common columns plus their kind's details and
-- annotations. One query for many ids (the audit snapshots of a batch).
-- No SET clause, so the planner inlines it into its callers (memory_json,
-- _audit_many) like a view; every name in it is qualified.
CREATE OR REPLACE FUNCTION brain._memory_docs(ids bigint[])
RETURNS TABLE (memory_id bigint, doc jsonb)
LANGUAGE sql STABLE
AS $$
    SELECT m.memory_id,
           jsonb_build_object('id', m.memory_id)
           || (to_jsonb(m) - 'memory_id' - 'normalized' - 'normalized_hash' - 'workspace_id' - 'tsv')
           || coalesce(CASE m.kind
                  WHEN 'rule' THEN (SELECT to_jsonb(r) - 'workspace_id' - 'memory_id' FROM brain.rule r
                                    WHERE r.workspace_id = m.workspace_id AND r.memory_id = m.memory_id)
                  WHEN 'fact' THEN (SELECT to_jsonb(f) - 'workspace_id' - 'memory_id' FROM brain.fact f
                                    WHERE f.workspace_id = m.workspace_id AND f.memory_id = m.memory_id)
                  WHEN 'incident' THEN (SELECT to_jsonb(i) - 'workspace_id' - 'memory_id' FROM brain.incident i
                                        WHERE i.workspace_id = m.workspace_id AND i.memory_id = m.memory_id)
                  WHEN 'task' THEN (SELECT to_jsonb(t) - 'workspace_id' - 'memory_id' FROM brain.task t
                                    WHERE t.workspace_id = m.workspace_id AND t.memory_id = m.memory_id)
                  WHEN 'trajectory' THEN (SELECT to_jsonb(t) - 'workspace_id' - 'memory_id' FROM brain.trajectory t
                                          WHERE t.workspace_id = m.workspace_id AND t.memory_id = m.memory_id)
              END, '{}')
           || jsonb_build_object('annotations', coalesce(
                  (SELECT jsonb_agg(jsonb_build_object('id', a.annotation_id, 'note', a.note,
                                                       'source', a.source, 'created_at', a.created_at)
                                    ORDER BY a.annotation_id)
                   FROM brain.annotation a
                   WHERE a.workspace_id = m.workspace_id AND a.memory_id = m.memory_id), '[]'))
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = ANY (ids)
$$;

CREATE OR REPLACE FUNCTION brain.memory_json(id bigint)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT d.doc FROM brain._memory_docs(ARRAY[id]) AS d
$$;
COMMENT ON FUNCTION brain.memory_json IS
    'One memory as JSON: its columns and its kind''s details (severity, halflife, incident details, task status). NULL when absent.';

-- Audit rows for many memories at once, each with a snapshot of the memory as it is now.
CREATE OR REPLACE FUNCTION brain._audit_many(ids bigint[], action text, actor text, detail jsonb DEFAULT '{}')
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    -- the actor and the detail (reasons, notes) hold no secret; the snapshot was checked when written
    SELECT brain._refuse_secrets(jsonb_build_object('source', actor) || coalesce(detail, '{}'));
    INSERT INTO brain.audit (workspace_id, memory_id, action, actor, detail, snapshot)
    SELECT brain.current_workspace(), x.id, action,
           coalesce(nullif(actor, ''), nullif(current_setting('brain.actor', true), ''), session_user),
           coalesce(detail, '{}'), d.doc
    FROM unnest(ids) WITH ORDINALITY AS x(id, n)
    LEFT JOIN brain._memory_docs(ids) AS d ON d.memory_id = x.id
    ORDER BY x.n
$$;

CREATE OR REPLACE FUNCTION brain._audit(id bigint, action text, actor text, detail jsonb DEFAULT '{}')
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain._audit_many(ARRAY[id], action, actor, detail)
$$;

-- Every gate rule that needs no database state. Raises the rule's BR code.
CREATE OR REPLACE FUNCTION brain._gate(kind text, headline text, body text, severity text,
                                       category text, origin text, extra_text text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    words integer;
BEGIN
    IF kind IS NULL OR kind NOT IN ('rule', 'fact', 'incident', 'task', 'trajectory') THEN
        PERFORM brain._raise('BR001', 'Unknown kind: kind is rule, fact, incident, task or trajectory.',
            jsonb_build_object('field', 'kind', 'type', 'text',
                               'allowed', jsonb_build_array('rule', 'fact', 'incident', 'task', 'trajectory')),
            'Use rule (how to behave), fact (what is true), incident (what happened), task (what to do) or trajectory (how a problem was solved: brain.record_trajectory).');
    END IF;
    IF kind = 'rule' AND severity IS DISTINCT FROM 'BLOCKER' AND severity IS DISTINCT FROM 'PATTERN' THEN
        PERFORM brain._raise('BR002', 'A rule''s severity must be BLOCKER or PATTERN.',
            jsonb_build_object('field', 'severity', 'type', 'text', 'allowed', jsonb_build_array('BLOCKER', 'PATTERN')),
            CASE WHEN severity = 'DEPRECATED'
                 THEN 'A rule becomes DEPRECATED only when it is superseded: use brain.supersede.'
                 ELSE 'BLOCKER: never do otherwise. PATTERN: the usual way.' END);
    END IF;
    IF kind <> 'rule' AND severity IS NOT NULL THEN
        PERFORM brain._raise('BR002', format('Only rules have a severity; this is a %s.', kind),
            jsonb_build_object('field', 'severity', 'kind', kind), 'Leave severity out.');
    END IF;
    IF headline IS NULL OR brain.trim_space(headline) = '' THEN
        PERFORM brain._raise('BR003', 'A memory needs a headline.', NULL,
            'Give a one-line summary of at most 15 words.');
    END IF;
    words := brain.word_count(headline);
    IF words > 15 OR length(headline) > 300 THEN
        PERFORM brain._raise('BR004',
            format('The headline has %s words and %s characters; the limit is 15 words and 300 characters.',
                   words, length(headline)),
            jsonb_build_object('words', words, 'characters', length(headline), 'max_words', 15),
            'Shorten the headline and move the detail into the body.');
    END IF;
    -- The character bound runs first so a huge body is refused without splitting it.
    IF length(body) > 20000 THEN
        PERFORM brain._raise('BR005',
            format('The body has %s characters; the limit is 400 words and 20000 characters.', length(body)),
            jsonb_build_object('characters', length(body), 'max_words', 400, 'max_characters', 20000),
            'Store one atomic memory per idea: split it into several memories.');
    END IF;
    words := brain.word_count(body);
    IF words > 400 THEN
        PERFORM brain._raise('BR005', format('The body has %s words; the limit is 400.', words),
            jsonb_build_object('words', words, 'max_words', 400),
            'Store one atomic memory per idea: split it into several memories.');
    END IF;
    IF brain.guardrail_stamps(body) >= 2 THEN
        PERFORM brain._raise('BR006', 'The body stacks several date-stamped GUARDRAIL markers.',
            jsonb_build_object('markers', brain.guardrail_stamps(body)),
            'Each guardrail is its own rule; to change one, supersede it instead of appending to it.');
    END IF;
    -- (Secrets: the callers scan every field first, brain._refuse_secrets.)
    IF category IS NOT NULL AND category NOT IN ('decision', 'idea', 'meeting', 'person', 'insight',
            'journal', 'reference', 'procedural', 'episodic', 'learning', 'gotcha', 'action',
            'feature_request', 'note') THEN
        PERFORM brain._raise('BR009', 'Unknown category.',
            jsonb_build_object('field', 'category', 'type', 'text',
                               'allowed', jsonb_build_array('decision', 'idea', 'meeting', 'person', 'insight',
                                   'journal', 'reference', 'procedural', 'episodic', 'learning', 'gotcha', 'action',
                                   'feature_request', 'note')),
            'Use one of the allowed categories (docs/sql-api.md), or leave category out.');
    END IF;
    IF origin IS NULL OR origin NOT IN ('explicit', 'artifact', 'observed', 'overlay') THEN
        PERFORM brain._raise('BR009', 'Unknown origin: origin is explicit, artifact, observed or overlay.',
            jsonb_build_object('field', 'origin', 'type', 'text',
                               'allowed', jsonb_build_array('explicit', 'artifact', 'observed', 'overlay')),
            'explicit: written by an agent or person; overlay: human context that outranks derived material; observed and artifact rows go through brain.observe_batch.');
    END IF;
END
$$;

-- The active memory with exactly this normalized text, kind and project, as a
-- 'skipped' write result (all NULL when there is none).
CREATE OR REPLACE FUNCTION brain._exact_duplicate(kind text, project text, normalized text, embedding_input text)
RETURNS brain.write_result
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ROW('skipped', m.memory_id, m.memory_id, 1, false, embedding_input)::brain.write_result
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.kind = _exact_duplicate.kind
      AND m.project = _exact_duplicate.project AND m.state = 'active'
      AND m.normalized_hash = md5(_exact_duplicate.normalized)::uuid AND m.normalized = _exact_duplicate.normalized
$$;

-- Common English words that a capital letter at a sentence's start does not
-- make a name: left out of brain.distinguishing_terms.
CREATE OR REPLACE FUNCTION brain._common_words()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT '{a,about,above,after,again,against,ah,all,also,although,always,am,an,and,another,any,anyone,
        anything,anyway,are,around,as,ask,at,avoid,awesome,back,be,because,been,before,being,below,best,
        better,between,both,but,by,can,cannot,check,could,did,do,does,doing,done,don''t,down,during,each,
        either,else,ensure,even,every,everyone,everything,exactly,fine,first,for,from,further,get,give,go,
        good,got,great,had,has,have,having,he,hello,her,here,here''s,hers,hey,hi,him,his,how,however,i,
        i''d,i''ll,i''m,i''ve,if,in,instead,into,is,isn''t,it,it''s,its,just,keep,last,let,let''s,like,make,
        many,may,maybe,me,might,more,most,much,must,my,need,never,new,next,no,nor,not,note,nothing,now,of,
        off,often,ok,okay,on,once,one,only,or,other,our,ours,out,over,own,perfect,please,prefer,probably,
        quite,rather,really,right,same,see,she,should,since,so,some,someone,something,sometimes,soon,
        still,such,sure,take,thank,thanks,than,that,that''s,the,their,theirs,them,then,there,there''s,these,
        they,they''re,thing,things,think,this,those,though,through,to,today,too,try,under,until,up,us,
        use,used,uses,using,usually,very,was,we,we''re,well,were,what,what''s,when,where,whether,which,
        while,who,whose,why,will,with,within,without,would,wow,yes,yet,you,you''re,your,yours,yeah,
        actually,alright,absolutely,certainly,definitely,indeed,overall,otherwise,also,both,oh,
        add,added,remove,run,runs,set,start,stop,follow,read,write,store,find,show,tell,look,want,know,
        feel,said,says,say,answer,question,user,assistant,step,steps,finally,additionally,
        furthermore,moreover,meanwhile,besides,regarding,based,given,unfortunately,hopefully,
        interesting,understood,noted,correct,true,false,yesterday,tomorrow,tonight,morning,
        monday,tuesday,wednesday,thursday,friday,saturday,sunday}'::text[]
$$;

-- The terms that tell one fact from another: numbers, dates and versions (any
-- token with a digit), identifiers, paths, hosts and addresses (tokens with
-- an inner _ . / : @ #), acronyms and camelCase, and names: capitalized words
-- inside a sentence that are not common English words. (A capital at a
-- sentence's start says nothing: every headline has one.) Lowercased,
-- distinct, sorted. Two texts whose terms differ never fold into one memory.
CREATE OR REPLACE FUNCTION brain.distinguishing_terms(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(w.tok) ORDER BY lower(w.tok)), '{}')
    FROM regexp_matches(coalesce(t, ''), '([^[:alnum:]]*)([[:alnum:]]+(?:[._/:@+#''-][[:alnum:]]+)*)', 'g')
             WITH ORDINALITY AS m(g, n),
         LATERAL (SELECT m.g[2] AS tok, m.n = 1 OR m.g[1] ~ '[.!?:;\n]' AS starts) AS w
    WHERE w.tok ~ '[0-9]'
       OR w.tok ~ '[[:alnum:]][_./:@#][[:alnum:]]'
       OR w.tok ~ '^[[:alpha:]].*[[:upper:]]'
       OR w.tok ~ '^[[:upper:]]' AND NOT w.starts AND NOT (lower(w.tok) = ANY (brain._common_words()))
$$;
COMMENT ON FUNCTION brain.distinguishing_terms IS
    'The terms that tell one fact from another: numbers, dates, versions, identifiers, paths, hosts, acronyms, camelCase and names (capitalized words inside a sentence that are not common English words), lowercased. Texts with different terms never fold together (docs/ranking.md).';

-- True when two texts carry the same distinguishing terms: the condition of
-- every near-identical fold, whatever the cosine of their vectors.
CREATE OR REPLACE FUNCTION brain._same_terms(a text, b text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.distinguishing_terms(a) = brain.distinguishing_terms(b)
$$;

-- True when each text has a distinguishing term the other lacks (Prod and 17
-- against Staging and 16): two facts, not a restatement, so the related gate
-- lets the new one through. A text that only adds terms to the other (it
-- extends it) is still related.
CREATE OR REPLACE FUNCTION brain._distinct_facts(a text, b text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM unnest(ta) AS x WHERE NOT x = ANY (tb))
       AND EXISTS (SELECT FROM unnest(tb) AS x WHERE NOT x = ANY (ta))
    FROM (SELECT brain.distinguishing_terms(a) AS ta, brain.distinguishing_terms(b) AS tb) AS t
$$;

-- Whether a near-identical pair may fold: same distinguishing terms, not two
-- chunks of one source (parts of a document are distinct by position), and
-- folding allowed for the new item (its write, and for observed and artifact
-- rows its space).
CREATE OR REPLACE FUNCTION brain._may_fold(kept brain.memory, headline text, body text, origin text,
                                           source_ref text, foldable boolean, s brain.embedding_space)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(foldable, true)
       AND (origin IN ('explicit', 'overlay') OR s.fold_observed)
       AND (source_ref IS NULL OR kept.source_ref IS DISTINCT FROM source_ref)
       -- records of their sources (observations that name one) stay apart
       AND NOT (origin = 'observed' AND source_ref IS NOT NULL)
       AND NOT (kept.origin = 'observed' AND kept.source_ref IS NOT NULL)
       AND brain._same_terms(kept.headline || E'\n' || kept.body, headline || E'\n' || body)
$$;

-- A memory's tags with the #hashtags of a text and the given tags added:
-- lowercased, trimmed, distinct. (One expression: inlined into its callers.)
CREATE OR REPLACE FUNCTION brain._merged_tags(existing text[], full_text text, tags text[])
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT ARRAY(SELECT DISTINCT lower(brain.trim_space(t))
                 FROM unnest(existing || brain.extract_tags(full_text) || coalesce(tags, '{}')) AS t
                 WHERE brain.trim_space(t) <> '')
$$;

-- A near-identical item folds into the active memory target. The survivor
-- keeps the longer text (a rule's text never changes) together with that
-- item's metadata and provenance, so text, metadata and provenance always
-- describe one item; the other item goes into brain.memory_fold whole (when
-- it is the survivor's own earlier text, as displaced). The survivor gains
-- the item's tags and people. Audited with audit_detail (no audit row when
-- it is NULL). Returns the write's result: updated or skipped.
CREATE OR REPLACE FUNCTION brain._fold_item(target bigint, kind text, headline text, body text,
                                            normalized text, tags text[], metadata jsonb, source_agent text,
                                            session_id bigint, source_system text, source_ref text,
                                            source_hash text, item_created_at timestamptz,
                                            folded_memory_id bigint, vec public.vector, space_id bigint,
                                            similarity real, actor text, audit_detail jsonb)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    ws bigint := brain.current_workspace();
    full_text text := headline || E'\n' || body;
    kept brain.memory;
    fold bigint;
BEGIN
    SELECT * INTO kept FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = target;
    -- An observation's text is a record: never replaced by a later, longer one.
    IF kind = 'rule' OR kept.origin = 'observed' OR length(normalized) <= length(kept.normalized) THEN
        INSERT INTO brain.memory_fold AS f (workspace_id, memory_id, folded_memory_id, headline, body, metadata,
            source_agent, session_id, source_system, source_ref, source_hash, item_created_at, similarity)
        VALUES (ws, target, folded_memory_id, headline, coalesce(body, ''), coalesce(metadata, '{}'),
            source_agent, session_id, source_system, source_ref, source_hash,
            coalesce(item_created_at, now()), similarity)
        RETURNING f.fold_id INTO fold;
        UPDATE brain.memory m
        SET tags = brain._merged_tags(m.tags, full_text, tags),
            people = ARRAY(SELECT DISTINCT p FROM unnest(m.people || brain.extract_people(full_text)) AS p)
        WHERE m.workspace_id = ws AND m.memory_id = target
          AND NOT (m.tags @> (brain.extract_tags(full_text) || coalesce(tags, '{}'))
                   AND m.people @> brain.extract_people(full_text));
        IF audit_detail IS NOT NULL THEN
            PERFORM brain._audit(target, 'update', actor,
                jsonb_build_object('reason', 'near-identical item folded in', 'similarity', similarity,
                                   'fold_id', fold) || audit_detail);
        END IF;
        RETURN ROW('skipped'::text, target, target, similarity, false,
                   brain.embedding_input(headline, body))::brain.write_result;
    END IF;
    -- The new text is longer: it becomes the survivor's, with its own metadata
    -- and provenance; the survivor's earlier item is kept as displaced.
    INSERT INTO brain.memory_fold AS f (workspace_id, memory_id, folded_memory_id, displaced, headline, body,
        metadata, source_agent, session_id, source_system, source_ref, source_hash, item_created_at, similarity)
    VALUES (ws, target, target, true, kept.headline, kept.body, kept.metadata, kept.source_agent,
        kept.session_id, kept.source_system, kept.source_ref, kept.source_hash, kept.created_at, similarity)
    RETURNING f.fold_id INTO fold;
    UPDATE brain.memory m
    SET headline = _fold_item.headline, body = _fold_item.body, normalized = _fold_item.normalized,
        tags = brain._merged_tags(m.tags, full_text, tags),
        people = brain.extract_people(full_text), topics = brain.extract_topics(full_text),
        action_items = brain.extract_action_items(full_text), metadata = coalesce(_fold_item.metadata, '{}'),
        source_agent = _fold_item.source_agent, session_id = _fold_item.session_id,
        source_system = _fold_item.source_system, source_ref = _fold_item.source_ref,
        source_hash = _fold_item.source_hash, updated_at = now(),
        -- The stored text's flags are its own: the new text is read by the
        -- injection detector as any write's (a turn with its role, as observe
        -- reads it), and a confirmation was of the text it replaces.
        flag_reasons = brain._turn_signals(concat_ws(E'\n', _fold_item.headline, _fold_item.body),
                                           coalesce(_fold_item.metadata, '{}')),
        flag_confirmed_at = NULL, flag_confirmed_by = NULL
    WHERE m.workspace_id = ws AND m.memory_id = target;
    UPDATE brain.embedding e SET embedding = vec, embedded_at = now()
    WHERE e.workspace_id = ws AND e.space_id = _fold_item.space_id AND e.memory_id = target;
    IF audit_detail IS NOT NULL THEN
        PERFORM brain._audit(target, 'update', actor,
            jsonb_build_object('reason', 'near-identical write with a longer text', 'similarity', similarity,
                               'fold_id', fold) || audit_detail);
    END IF;
    RETURN ROW('updated'::text, target, target, similarity, false,
               brain.embedding_input(headline, body))::brain.write_result;
END
$$;

-- Folds a stored memory found near-identical to an older one (target) into
-- it: the memory is tombstoned, pointing at target, and its item is folded
-- into target (brain._fold_item). For writes whose dedup ran after they were
-- stored (queued, or written in bulk and indexed later), so their ids stay
-- resolvable.
CREATE OR REPLACE FUNCTION brain._fold_into(mem brain.memory, target bigint, similarity real,
                                            vec public.vector, space_id bigint, actor text DEFAULT NULL)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
BEGIN
    UPDATE brain.memory m
    SET state = 'tombstoned', replaced_by = target,
        forget_reason = format('near-identical to #%s (similarity %s)', target, round(similarity::numeric, 3)),
        forgotten_at = now(), updated_at = now()
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, 'dedup', actor, jsonb_build_object('kept', target, 'similarity', similarity));
    RETURN brain._fold_item(target, mem.kind, mem.headline, mem.body, mem.normalized, mem.tags, mem.metadata,
                            mem.source_agent, mem.session_id, mem.source_system, mem.source_ref, mem.source_hash,
                            mem.created_at, mem.memory_id, vec, space_id, similarity, actor,
                            jsonb_build_object('from', mem.memory_id));
END
$$;

-- Near-identical dedup owed by memories stored with an embedding in space s
-- (ids) but not compared yet: each is folded into its nearest older active
-- memory of its kind and project when they are near-identical and may fold
-- (brain._may_fold). Incidents are kept apart, as in observe_batch. Returns
-- the number folded.
-- brain.index_vectors calls it for the vectors it just indexed, taken oldest
-- first, so the older memories they are compared with are in the HNSW index
-- (only a batch that committed after a younger one could still wait).
CREATE OR REPLACE FUNCTION brain._fold_near_identical(s brain.embedding_space, ids bigint[])
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    g record;
    hit record;
    mem brain.memory;
    kept brain.memory;
    folded bigint[] := '{}';
    kept_ids bigint[] := '{}';
    target bigint;
BEGIN
    FOR g IN
        SELECT m.kind, m.project, array_agg(m.memory_id ORDER BY m.memory_id) AS ids
        FROM brain.memory m
        WHERE m.workspace_id = s.workspace_id AND m.memory_id = ANY (ids) AND m.state = 'active'
          AND m.kind <> 'incident' AND m.foldable
        GROUP BY m.kind, m.project
    LOOP
        -- All looked up first, then folded oldest first: a hit on a memory
        -- folded earlier in this pass goes to where that one went.
        FOR hit IN
            SELECT x.memory_id, x.nearest, x.similarity
            FROM brain._nearest_older(s, g.ids, g.kind, g.project, waiting => false) AS x
            WHERE x.similarity >= s.near_identical
            ORDER BY x.memory_id
        LOOP
            target := coalesce(kept_ids[array_position(folded, hit.nearest)], hit.nearest);
            SELECT * INTO mem FROM brain.memory m
            WHERE m.workspace_id = s.workspace_id AND m.memory_id = hit.memory_id;
            SELECT * INTO kept FROM brain.memory m
            WHERE m.workspace_id = s.workspace_id AND m.memory_id = target;
            CONTINUE WHEN kept.state IS DISTINCT FROM 'active'
                OR NOT brain._may_fold(kept, mem.headline, mem.body, mem.origin, mem.source_ref, mem.foldable, s);
            PERFORM brain._fold_into(mem, target, hit.similarity,
                (SELECT e.embedding FROM brain.embedding e
                 WHERE e.workspace_id = s.workspace_id AND e.space_id = s.space_id AND e.memory_id = mem.memory_id),
                s.space_id);
            folded := folded || hit.memory_id;
            kept_ids := kept_ids || target;
        END LOOP;
    END LOOP;
    RETURN cardinality(folded);
END
$$;

-- Marks old superseded by new_id (a supersede, or a write whose related-hit
-- policy is supersede): linked, out of default reads, a rule DEPRECATED, audited.
CREATE OR REPLACE FUNCTION brain._mark_superseded(old brain.memory, new_id bigint, reason text, source text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
BEGIN
    UPDATE brain.memory m
    SET state = 'superseded', superseded_by = new_id, superseded_at = now(),
        supersede_reason = brain.trim_space(reason), updated_at = now()
    WHERE m.workspace_id = ws AND m.memory_id = old.memory_id;
    IF old.kind = 'rule' THEN
        UPDATE brain.rule t SET severity = 'DEPRECATED', prior_severity = t.severity
        WHERE t.workspace_id = ws AND t.memory_id = old.memory_id;
    END IF;
    PERFORM brain._audit(old.memory_id, 'supersede', source,
        jsonb_build_object('superseded_by', new_id, 'reason', brain.trim_space(reason)));
END
$$;

-- Semantic dedup of single writes is certain at commit. A write with an
-- embedding (brain._write) registers its new memory here: the space, its
-- on_related policy and the snapshot its duplicate lookup ran in. The list is
-- a transaction-local setting, so a write rolled back with its savepoint
-- leaves it too; inserting the memory's vector then queues the check
-- (trigger embedding_commit_check), which runs when the transaction commits.
CREATE OR REPLACE FUNCTION brain._check_at_commit(id bigint, space_id bigint, on_related text, lookup pg_snapshot)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT set_config('brain.commit_checks',
        (coalesce(nullif(current_setting('brain.commit_checks', true), ''), '{}')::jsonb
         || jsonb_build_object(id::text, jsonb_build_object('space', space_id, 'on_related', on_related,
                                                             'lookup', lookup::text)))::text,
        true)
$$;

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
-- the first that would fold or meet the related gate decides); a candidate its
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
    folds boolean;
BEGIN
    IF checks IS NULL THEN
        RETURN NULL;  -- an earlier row of this commit checked them all
    END IF;
    PERFORM set_config('brain.commit_checks', '', true);
    ws := brain.current_workspace();
    FOR g IN
        SELECT DISTINCT brain._scope_key(ws, m.kind, m.project) AS key, m.kind, m.project
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
        vec := (SELECT e.embedding FROM brain.embedding e
                WHERE e.workspace_id = ws AND e.space_id = w.space_id AND e.memory_id = w.id);
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
            folds := near.similarity >= space.near_identical
                     AND brain._may_fold(kept, mem.headline, mem.body, mem.origin, mem.source_ref, mem.foldable, space);
            CONTINUE WHEN NOT folds AND NOT (mem.origin IN ('explicit', 'overlay')
                AND NOT brain._distinct_facts(kept.headline || E'\n' || kept.body, mem.headline || E'\n' || mem.body));
            IF concurrent AND (folds OR w.on_related <> 'store') THEN
                PERFORM brain._raise('BR022',
                    format('A concurrent write stored a %s %s first: #%s "%s" (similarity %s); this transaction is rolled back.',
                           CASE WHEN folds THEN 'near-identical' ELSE 'related' END, mem.kind, kept.memory_id,
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

-- The one write core: every new memory of every path (brain._write for
-- remember and supersede, brain.observe_batch, brain.ingest_documents,
-- brain.import_memories) is stored by this INSERT, and by no other. The
-- callers run the gate's checks that need their own context first (BR
-- codes naming their fields, secrets refused or redacted, dedup); here each
-- row is brought to the gate's normal form whatever its caller built: the
-- workspace is the caller's, the headline is one clean line and the body
-- clean text, the flags are the caller's and those of the text as sent
-- (brain._turn_signals of sent[i], when given), tags, people, topics and
-- action items are extracted when the caller gave none, and ranking and
-- trust fields (pinned, votes, importance, access counts, confirmation)
-- start at their defaults unless the caller set them. Client roles cannot
-- call it to any effect: the write guard (sql/functions/024-write-core.sql)
-- lets a table change only inside one of the API's functions.
-- Returns one id per item, in order: NULL when an active memory of the same
-- kind, project and text existed (ON CONFLICT: nothing stored).
CREATE OR REPLACE FUNCTION brain._store_memories(items brain.memory[], sent text[] DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();  -- (write access: the insert policy checks it, once)
    n integer := coalesce(cardinality(items), 0);
    ids bigint[];
    stored bigint[];
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
                   || ARRAY(SELECT s FROM unnest(brain._turn_signals(sent[u.ordinality], u.metadata)) AS s
                            WHERE s <> ALL (coalesce(u.flag_reasons, '{}'))) AS flags
            OFFSET 0) AS f
        ORDER BY u.ordinality
        ON CONFLICT (workspace_id, kind, project, normalized_hash) WHERE state = 'active' DO NOTHING
        RETURNING m.memory_id
    )
    SELECT coalesce(array_agg(ins.memory_id), '{}') INTO stored FROM ins;
    IF cardinality(stored) = n THEN
        RETURN ids;
    END IF;
    RETURN ARRAY(SELECT CASE WHEN ids[j] = ANY (stored) THEN ids[j] END FROM generate_series(1, n) AS j ORDER BY j);
END
$$;

-- A draft of a memory (brain.memory_draft, migration 028) with what every
-- write has: its kind, text and scope; no tags, an empty metadata object, not
-- pinned, foldable, no vector, no provenance, no kind fields. The function a
-- caller names fills in the rest of what it was given and hands the draft to
-- brain._write.
CREATE OR REPLACE FUNCTION brain._draft(kind text, headline text, body text DEFAULT '', category text DEFAULT NULL,
                                        origin text DEFAULT 'explicit', project text DEFAULT '')
RETURNS brain.memory_draft
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ROW(kind, headline, body, category, origin, project, '{}'::text[], NULL, false, NULL, '{}'::jsonb,
               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true, NULL, NULL, NULL, NULL)::brain.memory_draft
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
    d.rule := CASE WHEN severity IS NOT NULL THEN ROW(severity)::brain.rule_detail END;
    d.fact := CASE WHEN halflife_days IS NOT NULL THEN ROW(halflife_days)::brain.fact_detail END;
    d.task := CASE WHEN num_nonnulls(status, priority, due_at) > 0
                   THEN ROW(status, priority, due_at)::brain.task_detail END;
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
    v_severity text := CASE WHEN d.kind = 'rule' THEN coalesce(upper((d.rule).severity), 'PATTERN')
                          ELSE upper((d.rule).severity) END;
    v_normalized text;
    full_text text;
    space brain.embedding_space;
    vec public.vector;
    near record;
    existing brain.memory;
    related brain.memory;
    related_sim real;
    lookup pg_snapshot;
    near_ids bigint[];  -- the lookup's near memories of the kind and project (brain._near_write)
    near_sims real[];
    lock_ids bigint[];  -- those and the space's 5 nearest (brain._lock_near)
    new_row brain.memory;
    r brain.write_result;
BEGIN
    -- Before any check that could repeat a value: no field may hold a secret.
    PERFORM brain._refuse_secrets(jsonb_build_object('kind', d.kind, 'headline', d.headline, 'body', d.body,
        'category', d.category, 'origin', d.origin, 'project', d.project, 'severity', (d.rule).severity, 'tags', d.tags,
        'metadata', d.metadata, 'skill_trigger', d.skill_trigger, 'source_agent', d.source_agent,
        'source_system', d.source_system, 'source_ref', d.source_ref, 'source_hash', d.source_hash,
        'status', (d.task).status, 'what_was_wrong', (d.incident).what_was_wrong, 'what_is_correct', (d.incident).what_is_correct,
        'error_message', (d.incident).error_message, 'command_attempted', (d.incident).command_attempted,
        'related_files', (d.incident).related_files, 'complexity', (d.incident).complexity, 'on_related', p_on_related,
        'reason', p_reason));
    IF p_on_related IS NULL OR p_on_related NOT IN ('refuse', 'store', 'supersede') THEN
        PERFORM brain._raise('BR009', 'on_related is refuse, store or supersede.',
            jsonb_build_object('field', 'on_related', 'type', 'text',
                               'allowed', jsonb_build_array('refuse', 'store', 'supersede')),
            'refuse (the default) reports a related memory; store keeps both; supersede replaces it.');
    END IF;
    -- A trajectory's steps come with it (brain.record_trajectory).
    IF d.kind = 'trajectory' AND nullif(current_setting('brain.trajectory', true), '') IS NULL THEN
        PERFORM brain._raise('BR001', 'A trajectory is recorded with its steps.',
            jsonb_build_object('kind', d.kind),
            'Use brain.record_trajectory(problem => ..., steps => ..., outcome => ...) (brain trajectory record); '
            'a newer solution supersedes an older one with supersedes => <id>.');
    END IF;
    -- Pending action items block every write of the session they wait for.
    PERFORM brain._check_write_allowed(d.session_id);
    PERFORM brain._gate(d.kind, v_headline, v_body, v_severity, d.category, v_origin,
        concat_ws(E'\n', d.metadata::text, d.skill_trigger::text, array_to_string(d.tags, ' '),
                  (d.incident).what_was_wrong, (d.incident).what_is_correct, (d.incident).error_message, (d.incident).command_attempted,
                  d.source_ref));

    IF d.kind <> 'task' AND ((d.task).status IS NOT NULL OR (d.task).priority IS NOT NULL OR (d.task).due_at IS NOT NULL) THEN
        PERFORM brain._raise('BR009', 'status, priority and due_at belong to tasks.',
            jsonb_build_object('kind', d.kind), 'Leave them out, or store a task.');
    END IF;
    IF d.kind = 'task' AND ((d.task).status IS NOT NULL AND (d.task).status NOT IN ('open', 'blocked', 'done')
                            OR (d.task).priority IS NOT NULL AND (d.task).priority NOT BETWEEN 1 AND 5) THEN
        PERFORM brain._raise('BR009', 'A new task is open, blocked or done, with priority 1 (highest) to 5.',
            jsonb_build_object('fields', jsonb_build_array('status', 'priority'),
                               'allowed', jsonb_build_object('status', jsonb_build_array('open', 'blocked', 'done'),
                                                             'priority', '1 to 5')),
            'Leave status out for an open task; stale is set by maintenance.');
    END IF;
    IF d.kind <> 'fact' AND (d.fact).halflife_days IS NOT NULL THEN
        PERFORM brain._raise('BR009', 'halflife_days belongs to facts.', jsonb_build_object('kind', d.kind),
            'Only facts decay: leave halflife_days out.');
    END IF;
    IF (d.fact).halflife_days IS NOT NULL AND NOT (d.fact).halflife_days > 0 THEN
        PERFORM brain._raise('BR009', 'halflife_days must be positive.',
            jsonb_build_object('field', 'halflife_days', 'type', 'a positive number of days'), 'The default is 7 days.');
    END IF;
    IF d.kind <> 'incident' AND ((d.incident).what_was_wrong IS NOT NULL OR (d.incident).what_is_correct IS NOT NULL
            OR (d.incident).error_message IS NOT NULL OR (d.incident).command_attempted IS NOT NULL
            OR cardinality((d.incident).related_files) > 0 OR (d.incident).complexity IS NOT NULL) THEN
        PERFORM brain._raise('BR009', 'Learning details belong to incidents.', jsonb_build_object('kind', d.kind),
            'Store what went wrong as an incident, or leave the incident fields out.');
    END IF;
    IF (d.incident).complexity IS NOT NULL AND (d.incident).complexity NOT IN ('simple', 'medium', 'complex') THEN
        PERFORM brain._raise('BR009', 'complexity is simple, medium or complex.',
            jsonb_build_object('field', 'complexity', 'type', 'text',
                               'allowed', jsonb_build_array('simple', 'medium', 'complex')),
            'Use simple, medium or complex, or leave it out.');
    END IF;
    IF d.importance IS NOT NULL AND NOT d.importance BETWEEN 0 AND 1 THEN
        PERFORM brain._raise('BR009', 'importance lies between 0 and 1.',
            jsonb_build_object('field', 'importance', 'type', 'a number from 0 to 1'), 'The default is 0.5.');
    END IF;
    IF d.metadata IS NOT NULL AND jsonb_typeof(d.metadata) <> 'object' THEN
        PERFORM brain._raise('BR009', 'metadata is a JSON object.', NULL, 'Example: ''{"ticket": "OPS-12"}''.');
    END IF;
    IF d.skill_trigger IS NOT NULL AND (jsonb_typeof(d.skill_trigger) <> 'object'
            OR coalesce(d.skill_trigger->>'name', '') !~ '^[a-z0-9][a-z0-9-]*$'
            OR jsonb_typeof(coalesce(d.skill_trigger->'keywords', '[]')) <> 'array'
            OR jsonb_typeof(coalesce(d.skill_trigger->'projects', '[]')) <> 'array'
            OR jsonb_typeof(coalesce(d.skill_trigger->'always_on', 'false')) <> 'boolean'
            OR EXISTS (SELECT FROM jsonb_array_elements(coalesce(d.skill_trigger->'keywords', '[]')
                                                        || coalesce(d.skill_trigger->'projects', '[]')) AS x
                       WHERE jsonb_typeof(x) <> 'string')) THEN
        PERFORM brain._raise('BR009', 'A skill_trigger is an object with a lowercase, hyphenated name.',
            jsonb_build_object('field', 'skill_trigger', 'type', jsonb_typeof(d.skill_trigger)),
            'Example: {"name": "db-migrations", "keywords": ["migration"], "projects": [], "always_on": false}: keywords and projects are arrays of strings, always_on a boolean.');
    END IF;

    full_text := v_headline || E'\n' || v_body;
    IF d.skill_trigger IS NOT NULL THEN
        -- A skill's name is unique among active memories; its supersede keeps the name.
        PERFORM pg_advisory_xact_lock(hashtext('brain.skill'), hashtext(ws || '/' || (d.skill_trigger->>'name')));
        SELECT * INTO existing FROM brain.memory m
        WHERE m.workspace_id = ws AND m.state = 'active' AND m.skill_trigger IS NOT NULL
          AND m.skill_trigger->>'name' = d.skill_trigger->>'name'
          AND m.memory_id IS DISTINCT FROM d.supersedes;
        IF FOUND THEN
            PERFORM brain._raise('BR009',
                format('A skill of that name exists: #%s.', existing.memory_id),
                jsonb_build_object('field', 'skill_trigger.name', 'id', existing.memory_id),
                format('Supersede #%s to change the skill, or choose another name.', existing.memory_id));
        END IF;
    END IF;
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
        -- The nearest first: the first that carries the same information and is
        -- near-identical takes the write in (a fold); the first related one that
        -- is not a distinct fact meets the write's on_related policy (authored
        -- memories only). Texts that differ in a number, date, version,
        -- identifier or name are distinct memories.
        FOR near IN
            SELECT x.memory_id, x.similarity
            FROM unnest(near_ids, near_sims) AS x(memory_id, similarity)
            WHERE x.similarity >= space.related
            ORDER BY x.similarity DESC, x.memory_id
        LOOP
            SELECT * INTO existing FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = near.memory_id;
            IF near.similarity >= space.near_identical
               AND brain._may_fold(existing, v_headline, v_body, v_origin, d.source_ref, d.foldable, space) THEN
                RETURN brain._fold_item(near.memory_id, d.kind, v_headline, v_body, v_normalized, d.tags,
                    d.metadata, d.source_agent, d.session_id, d.source_system, d.source_ref, d.source_hash,
                    now(), NULL, vec, space.space_id, near.similarity, d.source_agent, '{}');
            END IF;
            -- (a captured turn or text, observed or an artifact, is a record of what was
            -- said: it never meets the policy of a write, nor is it replaced by one)
            IF v_origin IN ('explicit', 'overlay') AND existing.origin IN ('explicit', 'overlay')
               AND NOT brain._distinct_facts(existing.headline || E'\n' || existing.body, full_text) THEN
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
                EXIT;
            END IF;
        END LOOP;
    END IF;

    new_row.kind := d.kind;
    new_row.category := d.category;
    new_row.origin := v_origin;
    new_row.project := v_project;
    new_row.headline := v_headline;
    new_row.body := v_body;
    new_row.normalized := v_normalized;
    new_row.tags := ARRAY(SELECT DISTINCT lower(brain.trim_space(t))
                          FROM unnest(coalesce(d.tags, '{}') || brain.extract_tags(full_text)) AS t
                          WHERE brain.trim_space(t) <> '');
    new_row.metadata := d.metadata;
    new_row.pinned := d.pinned;
    new_row.skill_trigger := d.skill_trigger;
    new_row.importance := d.importance;
    new_row.source_agent := d.source_agent;
    new_row.session_id := d.session_id;
    new_row.source_system := d.source_system;
    new_row.source_ref := d.source_ref;
    new_row.source_hash := d.source_hash;
    new_row.supersedes := d.supersedes;
    new_row.expires_at := d.expires_at;
    new_row.dedup_pending := vec IS NULL;
    new_row.dormant_after := CASE WHEN d.kind = 'fact' AND NOT brain._undecaying(v_origin) THEN brain._dormant_after(now(),
        coalesce((d.fact).halflife_days, (brain.setting('fact_halflife_days'))::double precision)) END;
    new_row.foldable := d.foldable;
    -- flagged as the text was sent, before cleaning (brain._store_memories)
    existing.memory_id := (brain._store_memories(ARRAY[new_row], ARRAY[concat_ws(E'\n', d.headline, d.body)]))[1];

    IF existing.memory_id IS NULL THEN
        -- Another transaction stored the same text first.
        RETURN brain._exact_duplicate(d.kind, v_project, v_normalized, brain.embedding_input(v_headline, v_body));
    END IF;

    CASE d.kind
        WHEN 'rule' THEN
            INSERT INTO brain.rule (workspace_id, memory_id, severity) VALUES (ws, existing.memory_id, v_severity);
        WHEN 'fact' THEN
            INSERT INTO brain.fact (workspace_id, memory_id, halflife_days)
            VALUES (ws, existing.memory_id,
                    coalesce((d.fact).halflife_days, (brain.setting('fact_halflife_days'))::double precision));
        WHEN 'incident' THEN
            INSERT INTO brain.incident (workspace_id, memory_id, what_was_wrong, what_is_correct,
                error_message, command_attempted, related_files, complexity)
            VALUES (ws, existing.memory_id, (d.incident).what_was_wrong, (d.incident).what_is_correct, (d.incident).error_message,
                (d.incident).command_attempted, coalesce((d.incident).related_files, '{}'), (d.incident).complexity);
        WHEN 'task' THEN
            INSERT INTO brain.task (workspace_id, memory_id, status, priority, due_at)
            VALUES (ws, existing.memory_id, coalesce((d.task).status, 'open'), coalesce((d.task).priority, 3), (d.task).due_at);
        WHEN 'trajectory' THEN
            -- checked again here: the setting is the caller's to set
            PERFORM brain._insert_trajectory(existing.memory_id, current_setting('brain.trajectory', true)::jsonb);
    END CASE;

    IF vec IS NOT NULL THEN
        IF d.kind <> 'incident' THEN
            PERFORM brain._check_at_commit(existing.memory_id, space.space_id, p_on_related, lookup);
        END IF;
        INSERT INTO brain.embedding (workspace_id, space_id, memory_id, embedding)
        VALUES (ws, space.space_id, existing.memory_id, vec);
    ELSE
        PERFORM pg_notify('brain_embedding', '');  -- a wake-up only: any role may LISTEN
    END IF;

    PERFORM brain._audit(existing.memory_id, 'insert', d.source_agent,
        CASE WHEN d.supersedes IS NULL THEN '{}'::jsonb
             ELSE jsonb_build_object('supersedes', d.supersedes) END
        || CASE WHEN related.memory_id IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('related', related.memory_id, 'similarity', related_sim,
                                        'on_related', p_on_related) END);
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

CREATE OR REPLACE FUNCTION brain.remember(
    kind text,
    headline text,
    body text DEFAULT '',
    category text DEFAULT NULL,
    origin text DEFAULT 'explicit',
    project text DEFAULT '',
    severity text DEFAULT NULL,
    tags text[] DEFAULT '{}',
    importance double precision DEFAULT NULL,
    pinned boolean DEFAULT false,
    skill_trigger jsonb DEFAULT NULL,
    metadata jsonb DEFAULT '{}',
    embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    source_agent text DEFAULT NULL,
    session_id bigint DEFAULT NULL,
    source_system text DEFAULT NULL,
    source_ref text DEFAULT NULL,
    source_hash text DEFAULT NULL,
    expires_at timestamptz DEFAULT NULL,
    halflife_days double precision DEFAULT NULL,
    status text DEFAULT NULL,
    priority integer DEFAULT NULL,
    due_at timestamptz DEFAULT NULL,
    what_was_wrong text DEFAULT NULL,
    what_is_correct text DEFAULT NULL,
    error_message text DEFAULT NULL,
    command_attempted text DEFAULT NULL,
    related_files text[] DEFAULT '{}',
    complexity text DEFAULT NULL,
    check_only boolean DEFAULT false,
    on_related text DEFAULT 'refuse',
    reason text DEFAULT NULL
)
RETURNS brain.write_result
LANGUAGE plpgsql  -- (the write guard trusts a PL/pgSQL frame: it names its schema)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d brain.memory_draft := brain._draft_details(brain._draft(kind, headline, body, category, origin, project),
        severity, halflife_days, status, priority, due_at, what_was_wrong, what_is_correct, error_message,
        command_attempted, related_files, complexity);
BEGIN
    d.tags := tags;
    d.importance := importance;
    d.pinned := pinned;
    d.skill_trigger := skill_trigger;
    d.metadata := metadata;
    d.embedding := embedding;
    d.embedding_space := embedding_space;
    d.source_agent := source_agent;
    d.session_id := session_id;
    d.source_system := source_system;
    d.source_ref := source_ref;
    d.source_hash := source_hash;
    d.expires_at := expires_at;
    RETURN brain._write(d, check_only, on_related, reason);
END
$$;
COMMENT ON FUNCTION brain.remember IS
    'Stores a memory through the write gate: validation (BR001-BR007, BR009), exact dedup, semantic dedup against the active embedding space (near-identical with the same distinguishing terms: folded, the longer text kept and the other recorded in brain.memory_fold; related and not a distinct fact: the on_related policy decides — refuse (BR008, the default), store (created, duplicate_of names the related memory) or supersede (the related memory is superseded by the new one, with reason or a generated one)), extraction of tags, people, topics and action items, and an audit row. Without an embedding the memory is stored and queued for `brain worker`. check_only => true validates and returns the embedding input without writing.';

CREATE OR REPLACE FUNCTION brain.attach_embedding(
    memory_id bigint,
    embedding double precision[],
    embedding_space text DEFAULT NULL
)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    space brain.embedding_space := brain._resolve_space(embedding_space);
    vec public.vector := brain._check_vector(embedding, space);
    mem brain.memory;
    kept brain.memory;
    near record;
    r brain.write_result;
BEGIN
    SELECT * INTO mem FROM brain.memory m
    WHERE m.workspace_id = ws AND m.memory_id = attach_embedding.memory_id FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', attach_embedding.memory_id),
            jsonb_build_object('id', attach_embedding.memory_id),
            'Take ids from brain.pending_embeddings().');
    END IF;

    INSERT INTO brain.embedding AS e (workspace_id, space_id, memory_id, embedding)
    VALUES (ws, space.space_id, mem.memory_id, vec)
    ON CONFLICT ON CONSTRAINT embedding_pkey
    DO UPDATE SET embedding = excluded.embedding, embedded_at = now();
    DELETE FROM brain.embedding_failure f
    WHERE f.workspace_id = ws AND f.space_id = space.space_id AND f.memory_id = mem.memory_id;

    r := ROW('embedded', mem.memory_id, NULL, NULL, false,
             brain.embedding_input(mem.headline, mem.body, brain._embedding_title(mem.origin, mem.metadata)));
    IF NOT mem.dedup_pending OR space.state <> 'active' OR mem.state <> 'active' THEN
        RETURN r;
    END IF;

    UPDATE brain.memory m SET dedup_pending = false
    WHERE m.workspace_id = ws AND m.memory_id = mem.memory_id;
    IF mem.kind = 'incident' THEN
        RETURN r;
    END IF;

    PERFORM brain._lock_writes(mem.kind, mem.project);
    FOR near IN
        SELECT x.memory_id, x.similarity
        FROM brain._near_write(space, vec, mem.kind, mem.project, mem.memory_id, space.related) AS x
        WHERE x.decides
        ORDER BY x.similarity DESC, x.memory_id
    LOOP
        SELECT * INTO kept FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = near.memory_id;
        IF near.similarity >= space.near_identical
           AND brain._may_fold(kept, mem.headline, mem.body, mem.origin, mem.source_ref, mem.foldable, space) THEN
            -- Near-identical: fold the queued memory into the existing one.
            RETURN brain._fold_into(mem, near.memory_id, near.similarity, vec, space.space_id);
        END IF;
        IF mem.origin IN ('explicit', 'overlay')
           AND NOT brain._distinct_facts(kept.headline || E'\n' || kept.body, mem.headline || E'\n' || mem.body) THEN
            -- Related, and the writer is gone and cannot be told to supersede:
            -- keep the memory and flag the pair (authored memories only, as in remember).
            UPDATE brain.memory m
            SET metadata = m.metadata || jsonb_build_object('possible_duplicate_of', near.memory_id,
                                                            'similarity', near.similarity)
            WHERE m.workspace_id = ws AND m.memory_id = mem.memory_id;
            r.duplicate_of := near.memory_id;
            r.similarity := near.similarity;
            RETURN r;
        END IF;
    END LOOP;
    RETURN r;
END
$$;
COMMENT ON FUNCTION brain.attach_embedding IS
    'Stores a memory''s embedding in a space (the active one by default). For a write that was queued without one, then runs semantic dedup: near-identical with the same distinguishing terms folds it into the existing memory (the longer text kept, the other recorded in brain.memory_fold; the queued memory is tombstoned pointing there); related and not a distinct fact flags it in metadata.possible_duplicate_of.';

CREATE OR REPLACE FUNCTION brain.pending_embeddings(embedding_space text DEFAULT NULL,
                                                    max_results integer DEFAULT 64)
RETURNS TABLE (memory_id bigint, embedding_input text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH space AS MATERIALIZED (
        SELECT s.space_id, s.state FROM brain._resolve_space(pending_embeddings.embedding_space) AS s
    )
    SELECT m.memory_id, brain.embedding_input(m.headline, m.body, brain._embedding_title(m.origin, m.metadata))
    FROM brain.memory m, space
    WHERE m.workspace_id = brain.current_workspace()
      AND m.state <> 'tombstoned'
      AND (NOT EXISTS (SELECT FROM brain.embedding e
                       WHERE e.workspace_id = m.workspace_id AND e.space_id = space.space_id
                         AND e.memory_id = m.memory_id)
           -- embedded while its space was still being filled: the dedup is still owed
           OR m.dedup_pending AND m.state = 'active' AND space.state = 'active')
      -- a text the embedder refused waits for its next try, or is parked (brain.embedding_failed)
      AND NOT EXISTS (SELECT FROM brain.embedding_failure f
                      WHERE f.workspace_id = m.workspace_id AND f.space_id = space.space_id
                        AND f.memory_id = m.memory_id
                        AND (f.parked_at IS NOT NULL OR f.next_attempt_at > now()))
    ORDER BY m.dedup_pending DESC, m.memory_id
    LIMIT max_results
$$;
COMMENT ON FUNCTION brain.pending_embeddings IS
    'Memories that have no embedding in a space (the active one by default), and queued writes whose dedup is still owed, queued writes first: the work list of `brain worker` and `brain reembed`. Texts the embedder refused are left out until their next try is due, and for good once parked (brain.embedding_failed).';
