-- The near verdict and the folds of semantic dedup: whether a new memory
-- folds into a near one, meets it as related or neither
-- (brain._near_verdict, for every write path and the check at commit), and
-- the fold itself (brain._fold_item; brain._fold_into for a memory stored
-- before its dedup ran, brain._fold_near_identical for vectors indexed later).

-- A memory's distinguishing terms: those it was stored with (fact_terms, migration
-- 036), else computed from its text (a row written before, a new one not yet
-- stored). PL/pgSQL: its body names a column a database of an earlier release
-- gets only from that migration.
CREATE OR REPLACE FUNCTION brain._memory_terms(m brain.memory)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain._terms_of(m.fact_terms, m.headline, m.body);
END
$$;

-- Whether a near-identical pair may fold: same distinguishing terms, not two
-- chunks of one source (parts of a document are distinct by position), and
-- folding allowed for the new item (its write, and for observed and artifact rows its space).
CREATE OR REPLACE FUNCTION brain._may_fold(kept brain.memory, item brain.memory, s brain.embedding_space)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(item.foldable, true)
       AND (item.origin IN ('explicit', 'overlay') OR s.fold_observed)
       AND (item.source_ref IS NULL OR kept.source_ref IS DISTINCT FROM item.source_ref)
       -- records of their sources (observations that name one) stay apart
       AND NOT (item.origin = 'observed' AND item.source_ref IS NOT NULL)
       AND NOT (kept.origin = 'observed' AND kept.source_ref IS NOT NULL)
       AND brain._memory_terms(kept) = brain._memory_terms(item)
$$;

-- The near verdict of a new memory (item) on an active memory of its kind
-- and project (kept) at this similarity of their vectors in space s:
-- * 'fold': near-identical, and it may fold (brain._may_fold);
-- * 'related': at least related, both authored (a captured turn or text is a
--   record of what was said: it never meets the policy of a write, nor is it
--   replaced by one), and not a distinct fact (texts that differ in a number,
--   date, version, identifier or name are distinct memories) unless the
--   write's policy (on_related) is supersede: then any related authored
--   memory is one it may replace (brain._nothing_to_supersede says why when
--   none is found);
-- * NULL: neither.
-- A write takes its near memories nearest first; the first with a verdict
-- decides (brain._write, its check at commit, brain.attach_embedding). A
-- batch's rows and vectors indexed later only fold.
CREATE OR REPLACE FUNCTION brain._near_verdict(kept brain.memory, item brain.memory, similarity real,
                                               s brain.embedding_space, on_related text DEFAULT NULL)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN similarity >= s.near_identical AND brain._may_fold(kept, item, s) THEN 'fold'
                WHEN similarity >= s.related AND item.origin IN ('explicit', 'overlay')
                     AND kept.origin IN ('explicit', 'overlay')
                     AND (on_related = 'supersede'
                          OR NOT brain._terms_differ(brain._memory_terms(kept), brain._memory_terms(item)))
                THEN 'related' END
$$;

-- The first of a new memory's near memories (ids, at the similarities sims:
-- its lookup's, brain._near_write) with a verdict, nearest first: that memory
-- (kept), its similarity and the verdict; no row when none has one. The
-- decision of brain._write and brain.attach_embedding.
CREATE OR REPLACE FUNCTION brain._first_verdict(item brain.memory, ids bigint[], sims real[], s brain.embedding_space,
                                                on_related text DEFAULT NULL)
RETURNS TABLE (kept brain.memory, similarity real, verdict text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT k, x.similarity, v.verdict
    FROM unnest(ids, sims) AS x(memory_id, similarity)
    JOIN brain.memory k ON k.workspace_id = s.workspace_id AND k.memory_id = x.memory_id
    CROSS JOIN LATERAL (SELECT brain._near_verdict(k, item, x.similarity, s, on_related) AS verdict) AS v
    WHERE x.similarity >= s.related AND v.verdict IS NOT NULL
    ORDER BY x.similarity DESC, x.memory_id
    LIMIT 1
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

-- A near-identical item (a memory as stored, or as a write would store it)
-- folds into the active memory target. The survivor keeps the longer text (a
-- rule's text never changes) together with that item's metadata and
-- provenance, so text, metadata and provenance always describe one item; the
-- other item goes into brain.memory_fold whole (when it is the survivor's own
-- earlier text, as displaced; item.memory_id: the memory the item was, when it
-- was stored; item.created_at: when it was written, now when NULL). The
-- survivor gains the item's tags and people; vec (in space space_id) becomes
-- the survivor's vector with its text. Audited with audit_detail (no audit row
-- when it is NULL). Returns the write's result: updated or skipped.
CREATE OR REPLACE FUNCTION brain._fold_item(target bigint, item brain.memory, similarity real, vec public.vector,
                                            space_id bigint, actor text, audit_detail jsonb)
RETURNS brain.write_result
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    ws bigint := brain.current_workspace();
    full_text text := item.headline || E'\n' || item.body;
    kept brain.memory;
    fold bigint;
    action text := 'skipped';
BEGIN
    SELECT * INTO kept FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = target;
    -- An observation's text is a record: never replaced by a later, longer one.
    IF item.kind = 'rule' OR kept.origin = 'observed' OR length(item.normalized) <= length(kept.normalized) THEN
        INSERT INTO brain.memory_fold AS f (workspace_id, memory_id, folded_memory_id, headline, body, metadata,
            source_agent, session_id, source_system, source_ref, source_hash, item_created_at, similarity)
        VALUES (ws, target, item.memory_id, item.headline, coalesce(item.body, ''), coalesce(item.metadata, '{}'),
            item.source_agent, item.session_id, item.source_system, item.source_ref, item.source_hash,
            coalesce(item.created_at, now()), similarity)
        RETURNING f.fold_id INTO fold;
        UPDATE brain.memory m
        SET tags = brain._merged_tags(m.tags, full_text, item.tags),
            people = ARRAY(SELECT DISTINCT p FROM unnest(m.people || brain.extract_people(full_text)) AS p)
        WHERE m.workspace_id = ws AND m.memory_id = target
          AND NOT (m.tags @> (brain.extract_tags(full_text) || coalesce(item.tags, '{}'))
                   AND m.people @> brain.extract_people(full_text));
    ELSE
        -- The new text is longer: it becomes the survivor's, with its own metadata
        -- and provenance; the survivor's earlier item is kept as displaced.
        action := 'updated';
        INSERT INTO brain.memory_fold AS f (workspace_id, memory_id, folded_memory_id, displaced, headline, body,
            metadata, source_agent, session_id, source_system, source_ref, source_hash, item_created_at, similarity)
        VALUES (ws, target, target, true, kept.headline, kept.body, kept.metadata, kept.source_agent,
            kept.session_id, kept.source_system, kept.source_ref, kept.source_hash, kept.created_at, similarity)
        RETURNING f.fold_id INTO fold;
        UPDATE brain.memory m
        SET headline = item.headline, body = item.body, normalized = item.normalized,
            tags = brain._merged_tags(m.tags, full_text, item.tags),
            people = brain.extract_people(full_text), topics = brain.extract_topics(full_text),
            action_items = brain.extract_action_items(full_text), metadata = coalesce(item.metadata, '{}'),
            source_agent = item.source_agent, session_id = item.session_id, source_system = item.source_system,
            source_ref = item.source_ref, source_hash = item.source_hash, updated_at = now(),
            -- The stored text's flags are its own: the new text is read by the
            -- injection detector as any write's (a turn with its role, as observe
            -- reads it), and a confirmation was of the text it replaces.
            flag_reasons = brain._turn_signals(concat_ws(E'\n', item.headline, item.body),
                                               coalesce(item.metadata, '{}')),
            flag_confirmed_at = NULL, flag_confirmed_by = NULL
        WHERE m.workspace_id = ws AND m.memory_id = target;
        UPDATE brain.embedding e SET embedding = vec, embedded_at = now()
        WHERE e.workspace_id = ws AND e.space_id = _fold_item.space_id AND e.memory_id = target;
    END IF;
    IF audit_detail IS NOT NULL THEN
        PERFORM brain._audit(target, 'update', actor,
            jsonb_build_object('reason', CASE WHEN action = 'updated' THEN 'near-identical write with a longer text'
                                              ELSE 'near-identical item folded in' END,
                               'similarity', similarity, 'fold_id', fold) || audit_detail);
    END IF;
    RETURN ROW(action, target, target, similarity, false,
               brain.embedding_input(item.headline, item.body))::brain.write_result;
END
$$;

-- Folds a stored memory found near-identical to an older one (target) into
-- it: the memory is tombstoned, pointing at target, and its item is folded
-- into target (brain._fold_item). For writes whose dedup ran after they were
-- stored (queued, or written in bulk and indexed later), so their ids stay resolvable.
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
    RETURN brain._fold_item(target, mem, similarity, vec, space_id, actor, jsonb_build_object('from', mem.memory_id));
END
$$;

-- Near-identical dedup owed by memories stored with an embedding in space s
-- (ids) but not compared yet: each is folded into its nearest older active
-- memory of its kind and project when their verdict is fold
-- (brain._near_verdict). Incidents are kept apart, as in observe_batch. Returns
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
                OR brain._near_verdict(kept, mem, hit.similarity, s) IS DISTINCT FROM 'fold';
            PERFORM brain._fold_into(mem, target, hit.similarity, brain._stored_vector(s, mem.memory_id), s.space_id);
            folded := folded || hit.memory_id;
            kept_ids := kept_ids || target;
        END LOOP;
    END LOOP;
    RETURN cardinality(folded);
END
$$;

