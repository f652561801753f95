-- The write path's helpers: memories as JSON, audit, the gate, exact dedup and the
-- distinguishing terms, marking a memory superseded, the check at commit's registration,
-- the checks of a set of drafts (brain._check_drafts). The core that uses them:
-- 004a-write-core.sql; the near verdict and folds, 004e-write-folds.sql; the API of one
-- memory, 006-write-api.sql.

-- Memories as JSON documents: common columns plus their kind's details and annotations,
-- one query for many ids (the audit snapshots of a batch). No SET clause: the planner
-- inlines it into its callers (memory_json, _audit_many); every name in it is qualified.
CREATE OR REPLACE FUNCTION brain._memory_docs(ids bigint[])
RETURNS TABLE (memory_id bigint, doc jsonb)
LANGUAGE sql STABLE
AS $$
    SELECT m.memory_id,
           jsonb_build_object('id', m.memory_id)
           || (to_jsonb(m) - 'memory_id' - 'normalized' - 'normalized_hash' - 'workspace_id' - 'tsv' - 'fact_terms')
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

-- Audit rows for many memories at once, each with a snapshot of the memory as it is now
-- (checked: the caller scanned actor and detail for secrets already, a write's one scan).
DROP FUNCTION IF EXISTS brain._audit_many(bigint[], text, text, jsonb);
CREATE OR REPLACE FUNCTION brain._audit_many(ids bigint[], action text, actor text, detail jsonb DEFAULT '{}',
                                             checked boolean DEFAULT false)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    -- the actor and the detail (reasons, notes) hold no secret; the snapshot was checked when written
    SELECT brain._refuse_secrets(jsonb_build_object('source', actor) || coalesce(detail, '{}')) WHERE NOT checked;
    INSERT INTO brain.audit (workspace_id, memory_id, action, actor, detail, snapshot)
    SELECT brain.current_workspace(), x.id, action,
           coalesce(nullif(actor, ''), nullif(current_setting('brain.actor', true), ''), session_user),
           coalesce(detail, '{}'), d.doc
    FROM unnest(ids) WITH ORDINALITY AS x(id, n)
    LEFT JOIN brain._memory_docs(ids) AS d ON d.memory_id = x.id
    ORDER BY x.n
$$;

DROP FUNCTION IF EXISTS brain._audit(bigint, text, text, jsonb);
CREATE OR REPLACE FUNCTION brain._audit(id bigint, action text, actor text, detail jsonb DEFAULT '{}',
                                        checked boolean DEFAULT false)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain._audit_many(ARRAY[id], action, actor, detail, checked)
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

-- Common English words a capital letter does not make a name (brain.distinguishing_terms).
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
         -- (a sentence's end and a digit looked for without a pattern: these run for
         -- every word, and a write runs more patterns than a backend keeps compiled)
         LATERAL (SELECT m.g[2] AS tok, m.n = 1 OR translate(m.g[1], E'.!?:;\n', '') <> m.g[1] AS starts) AS w
    WHERE translate(w.tok, '0123456789', '') <> w.tok
       OR w.tok ~ '[[:alnum:]][_./:@#][[:alnum:]]'
       OR w.tok ~ '^[[:alpha:]].*[[:upper:]]'
       OR w.tok ~ '^[[:upper:]]' AND NOT w.starts AND NOT (lower(w.tok) = ANY (brain._common_words()))
$$;
COMMENT ON FUNCTION brain.distinguishing_terms IS
    'The terms that tell one fact from another: numbers, dates, versions, identifiers, paths, hosts, acronyms, camelCase and names (capitalized words inside a sentence that are not common English words), lowercased. Texts with different terms never fold together (docs/ranking.md).';

-- A memory's distinguishing terms: those the write path stored (fact_terms),
-- else computed from its text. (No SET clause: inlined into its callers.)
CREATE OR REPLACE FUNCTION brain._terms_of(stored text[], headline text, body text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(stored, brain.distinguishing_terms(headline || E'\n' || body))
$$;

-- True when two texts carry the same distinguishing terms: the condition of
-- every near-identical fold, whatever the cosine of their vectors.
CREATE OR REPLACE FUNCTION brain._same_terms(a text, b text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.distinguishing_terms(a) = brain.distinguishing_terms(b)
$$;

-- brain._distinct_facts over terms already computed (brain.distinguishing_terms,
-- or a memory's stored fact_terms): each has a term the other lacks.
CREATE OR REPLACE FUNCTION brain._terms_differ(ta text[], tb text[])
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM unnest(ta) AS x WHERE NOT x = ANY (tb))
       AND EXISTS (SELECT FROM unnest(tb) AS x WHERE NOT x = ANY (ta))
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
    SELECT brain._terms_differ(brain.distinguishing_terms(a), brain.distinguishing_terms(b))
$$;


-- Marks old superseded by new_id (a supersede, or a write whose related-hit
-- policy is supersede): linked, out of default reads, a rule DEPRECATED, audited, what states its old value marked.
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
    PERFORM brain._mark_dependents(old, new_id);
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

-- The checks of the write core, over a set of drafts, each in turn: no field
-- holds a secret, the related policy is known, a trajectory comes with its
-- steps, the session's pending action items allow the write, the gate passes
-- the cleaned text, the kind fields belong to the kind and lie in their
-- ranges, the metadata and skill trigger are well formed, and a skill's name
-- is free (locked until the transaction ends). The first draft that fails
-- raises its error (BR001-BR009); brain._write checks its one draft here.
CREATE OR REPLACE FUNCTION brain._check_drafts(drafts brain.memory_draft[], p_on_related text DEFAULT 'refuse',
                                               p_reason text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    d brain.memory_draft;
    v_headline text;
    v_body text;
    v_origin text;
    v_severity text;
    existing bigint;
BEGIN
    FOREACH d IN ARRAY coalesce(drafts, '{}') LOOP
        v_headline := brain.clean_headline(d.headline);
        v_body := brain.trim_space(brain.clean_body(coalesce(d.body, '')));
        v_origin := coalesce(d.origin, 'explicit');
        v_severity := CASE WHEN d.kind = 'rule' THEN coalesce(upper((d.rule).severity), 'PATTERN')
                           ELSE upper((d.rule).severity) END;
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

        IF d.skill_trigger IS NOT NULL THEN
            -- A skill's name is unique among active memories; its supersede keeps the name
            -- (a lock keyed by the workspace's secret, which no other workspace can hold).
            PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.skill ' || (d.skill_trigger->>'name')));
            SELECT m.memory_id INTO existing FROM brain.memory m
            WHERE m.workspace_id = ws AND m.state = 'active' AND m.skill_trigger IS NOT NULL
              AND m.skill_trigger->>'name' = d.skill_trigger->>'name'
              AND m.memory_id IS DISTINCT FROM d.supersedes;
            IF FOUND THEN
                PERFORM brain._raise('BR009',
                    format('A skill of that name exists: #%s.', existing),
                    jsonb_build_object('field', 'skill_trigger.name', 'id', existing),
                    format('Supersede #%s to change the skill, or choose another name.', existing));
            END IF;
        END IF;
    END LOOP;
END
$$;
