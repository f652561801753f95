-- Context packs: a named, budgeted set of memories a session loads
-- (migration 023).

-- ---------------------------------------------------------------------------
-- Context packs

CREATE OR REPLACE FUNCTION brain._get_pack(name text)
RETURNS brain.pack
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p brain.pack;
BEGIN
    SELECT * INTO p FROM brain.pack k
    WHERE k.workspace_id = brain.current_workspace() AND k.name = lower(brain.trim_space(_get_pack.name))
      AND k.state = 'active';
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', 'No context pack of that name in this workspace.',
            jsonb_build_object('field', 'name'), 'See the packs with brain.list_packs() (brain pack list).');
    END IF;
    RETURN p;
END
$$;

-- The injection signals of a pack's own text (its description and query), as
-- a memory's are read at its write: a pack has no flag column (migration 023),
-- so they are read where a pack is shown. A flagged pack is not attached at
-- boot, its query is not rendered, and list_packs and render_pack name its reasons.
CREATE OR REPLACE FUNCTION brain._pack_signals(description text, query text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.injection_signals(concat_ws(E'\n', description, query))
$$;

-- The text a pack's embedding is made of: its query, else its name and description.
CREATE OR REPLACE FUNCTION brain._pack_embedding_input(name text, description text, query text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(nullif(brain.trim_space(query), ''),
                    brain.trim_space(replace(name, '-', ' ') || E'\n' || coalesce(description, '')))
$$;

-- Ids without NULLs and repeats, in their first order.
CREATE OR REPLACE FUNCTION brain._distinct_ids(ids bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(ARRAY(SELECT u.x FROM unnest(ids) WITH ORDINALITY AS u(x, n)
                          WHERE u.x IS NOT NULL GROUP BY u.x ORDER BY min(u.n)), '{}')
$$;

CREATE OR REPLACE FUNCTION brain.create_pack(
    name text,
    query text DEFAULT NULL,
    memory_ids bigint[] DEFAULT NULL,
    filters jsonb DEFAULT '{}',
    token_budget integer DEFAULT NULL,
    description text DEFAULT '',
    project text DEFAULT '',
    embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    source text DEFAULT NULL,
    check_only boolean DEFAULT false
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint;
    v_name text := lower(brain.trim_space(coalesce(name, '')));
    v_query text := nullif(brain.trim_space(brain.clean_body(query)), '');
    v_desc text := brain.trim_space(brain.clean_body(coalesce(description, '')));
    v_budget integer := coalesce(token_budget, (brain.setting('pack_token_budget'))::integer);
    v_ids bigint[] := brain._distinct_ids(memory_ids);
    v_filters jsonb := coalesce(filters, '{}');
    missing bigint[];
    space brain.embedding_space;
    vec public.vector;
    old brain.pack;
    p brain.pack;
    action text;
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('name', name, 'query', query, 'description', description,
                                                     'filters', filters, 'project', project, 'source', source));
    ws := brain.current_workspace('write');
    IF v_name !~ '^[a-z0-9][a-z0-9_-]{0,62}$' THEN
        PERFORM brain._raise('BR009', 'A pack''s name is 1 to 63 lowercase letters, digits, - and _.',
            jsonb_build_object('field', 'name', 'type', 'text'), 'Example: onboarding, deploy-runbook.');
    END IF;
    IF v_query IS NULL AND cardinality(v_ids) = 0 THEN
        PERFORM brain._raise('BR009', 'A pack is a query or a list of memory ids.', NULL,
            'Give query => ''how we deploy'' (and filters), or memory_ids => ARRAY[12, 15].');
    END IF;
    IF length(v_query) > 2000 OR length(v_desc) > 2000 THEN
        PERFORM brain._raise('BR005', 'A pack''s query and description are at most 2000 characters each.', NULL,
            'Keep them short: the members carry the content.');
    END IF;
    IF cardinality(v_ids) > 200 THEN
        PERFORM brain._raise('BR005', format('A pack lists at most 200 memories, not %s.', cardinality(v_ids)), NULL,
            'Use a query instead, or split it into several packs.');
    END IF;
    PERFORM brain._check_setting_argument('pack_token_budget', 'token_budget', v_budget, 'A pack''s token budget');
    IF jsonb_typeof(v_filters) <> 'object'
       OR EXISTS (SELECT FROM jsonb_object_keys(v_filters) AS k WHERE k NOT IN ('kinds', 'categories', 'tags'))
       OR EXISTS (SELECT FROM jsonb_each(v_filters) AS e WHERE jsonb_typeof(e.value) <> 'array'
                  OR EXISTS (SELECT FROM jsonb_array_elements(e.value) AS x WHERE jsonb_typeof(x) <> 'string'))
       OR EXISTS (SELECT FROM jsonb_array_elements_text(coalesce(v_filters->'kinds', '[]')) AS k
                  WHERE k NOT IN ('rule', 'fact', 'incident', 'task', 'trajectory')) THEN
        PERFORM brain._raise('BR009', 'A pack''s filters are {"kinds": [...], "categories": [...], "tags": [...]}.',
            jsonb_build_object('field', 'filters', 'type', jsonb_typeof(v_filters),
                               'allowed', jsonb_build_object('kinds', jsonb_build_array('rule', 'fact', 'incident', 'task', 'trajectory'))),
            'Example: {"kinds": ["rule", "trajectory"], "tags": ["deploy"]}.');
    END IF;
    missing := ARRAY(SELECT x FROM unnest(v_ids) AS x
                     WHERE NOT EXISTS (SELECT FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = x));
    IF cardinality(missing) > 0 THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', missing[1]),
            jsonb_build_object('missing', missing), 'Take ids from brain search or brain.list_recent.');
    END IF;
    IF check_only THEN
        RETURN jsonb_build_object('action', 'valid', 'name', v_name,
                                  'embedding_input', brain._pack_embedding_input(v_name, v_desc, v_query));
    END IF;
    IF embedding IS NOT NULL THEN
        space := brain._resolve_space(embedding_space);
        vec := brain._check_vector(embedding, space);
    END IF;

    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.pack ' || v_name));
    SELECT * INTO old FROM brain.pack k WHERE k.workspace_id = ws AND k.name = v_name AND k.state = 'active' FOR UPDATE;
    IF FOUND THEN
        IF old.query IS NOT DISTINCT FROM v_query AND old.memory_ids = v_ids AND old.filters = v_filters
           AND old.token_budget = v_budget AND old.description = v_desc AND old.project = coalesce(project, '') THEN
            action := 'unchanged';
            UPDATE brain.pack k SET space_id = coalesce(space.space_id, k.space_id),
                                    embedding = coalesce(vec, k.embedding)
            WHERE k.workspace_id = ws AND k.pack_id = old.pack_id RETURNING * INTO p;
        ELSE
            action := 'updated';
            UPDATE brain.pack k
            SET query = v_query, memory_ids = v_ids, filters = v_filters, token_budget = v_budget,
                description = v_desc, project = coalesce(create_pack.project, ''), version = k.version + 1,
                space_id = space.space_id, embedding = vec, updated_at = now()
            WHERE k.workspace_id = ws AND k.pack_id = old.pack_id RETURNING * INTO p;
        END IF;
    ELSE
        action := 'created';
        INSERT INTO brain.pack (workspace_id, name, description, project, query, filters, memory_ids, token_budget,
                                space_id, embedding, created_by)
        VALUES (ws, v_name, v_desc, coalesce(create_pack.project, ''), v_query, v_filters, v_ids, v_budget,
                space.space_id, vec, coalesce(nullif(source, ''), nullif(current_setting('brain.actor', true), ''), session_user))
        RETURNING * INTO p;
    END IF;
    IF action <> 'unchanged' THEN
        UPDATE brain.pack k SET members = brain._pack_members(p)
        WHERE k.workspace_id = ws AND k.pack_id = p.pack_id RETURNING * INTO p;
        PERFORM brain._audit_many(ARRAY[NULL]::bigint[], 'pack', source,
            jsonb_build_object('op', action, 'pack', v_name, 'pack_id', p.pack_id, 'version', p.version));
    END IF;
    RETURN jsonb_build_object('action', action, 'pack_id', p.pack_id, 'name', p.name, 'version', p.version,
                              'embedding_pending', p.embedding IS NULL,
                              'embedding_input', brain._pack_embedding_input(p.name, p.description, p.query));
END
$$;
COMMENT ON FUNCTION brain.create_pack IS
    'Defines (or redefines: version + 1) a named context pack: a query with filters (kinds, categories, tags) or a list of memory ids, a token budget (default pack_token_budget), a description and a project; embedding is that of its query (else of its name and description), which boot_session compares with the task. Secrets refused, audited (action pack). Returns action (created, updated, unchanged), pack_id, name, version.';

-- The current members of a pack: listed ids followed to the end of their
-- supersede chain (or forget replacement), active and unflagged ones only;
-- for a query, what search finds for it (the pack's embedding as the
-- query's, when in the active space).
CREATE OR REPLACE FUNCTION brain._pack_members(p brain.pack)
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    active_space bigint := (SELECT s.space_id FROM brain.embedding_space s WHERE s.workspace_id = ws AND s.state = 'active');
BEGIN
    IF p.query IS NULL THEN
        RETURN ARRAY(
            SELECT c.id FROM (
                SELECT DISTINCT ON (cur.id) cur.id, u.n
                FROM unnest(p.memory_ids) WITH ORDINALITY AS u(id, n)
                CROSS JOIN LATERAL (SELECT brain.current_version(coalesce(
                    (SELECT m.replaced_by FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = u.id
                       AND m.state = 'tombstoned'), u.id)) AS id) AS cur
                JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = cur.id
                WHERE m.state = 'active' AND NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at)
                ORDER BY cur.id, u.n) AS c
            ORDER BY c.n);
    END IF;
    RETURN ARRAY(
        SELECT s.id
        FROM brain.search(query => p.query,
                          query_embedding => CASE WHEN p.space_id = active_space THEN p.embedding::real[]::double precision[] END,
                          kinds => nullif(ARRAY(SELECT jsonb_array_elements_text(p.filters->'kinds')), '{}'),
                          categories => nullif(ARRAY(SELECT jsonb_array_elements_text(p.filters->'categories')), '{}'),
                          tags => nullif(ARRAY(SELECT jsonb_array_elements_text(p.filters->'tags')), '{}'),
                          project => nullif(p.project, ''), max_results => 50) AS s
        JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = s.id
        WHERE NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at) AND s.via_skill_trigger IS NULL
        ORDER BY s.score DESC, s.id);
END
$$;

CREATE OR REPLACE FUNCTION brain.render_pack(
    name text,
    token_budget integer DEFAULT NULL,
    session bigint DEFAULT NULL,
    record boolean DEFAULT true
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    p brain.pack := brain._get_pack(name);
    budget integer := least(coalesce(token_budget, p.token_budget), p.token_budget);
    ids bigint[];
    heading text;
    flags text[];
    items jsonb := '[]';
    total integer;
    shown bigint[] := '{}';
    r record;
    line_tokens integer;
    cut integer := 0;
BEGIN
    IF budget < 20 THEN
        PERFORM brain._raise('BR009', 'A pack is rendered within at least 20 tokens.', jsonb_build_object('token_budget', budget),
            'Give a larger token_budget, or leave it out for the pack''s own.');
    END IF;
    ids := brain._pack_members(p);
    -- The pack keeps itself current: another set of members is a new version.
    IF ids IS DISTINCT FROM p.members AND brain.workspace_access(ws) <> 'read' THEN
        UPDATE brain.pack k SET members = ids, version = k.version + 1, updated_at = now()
        WHERE k.workspace_id = ws AND k.pack_id = p.pack_id RETURNING * INTO p;
    END IF;
    flags := brain._pack_signals(p.description, p.query);
    -- A flagged pack's query is not shown (its members are each read as any memory).
    heading := format('## Context pack %s v%s (%s)', p.name, p.version,
                      CASE WHEN cardinality(flags) > 0 THEN 'FLAGGED: ' || array_to_string(flags, ', ')
                           WHEN p.query IS NOT NULL THEN 'query ' || brain.quote_text(p.query) ELSE 'listed memories' END);
    total := brain.estimate_tokens(heading) + 1;
    FOR r IN
        -- (a member that states the old value of a superseded memory says so: brain.stale)
        SELECT m.memory_id, m.kind, m.headline, u.n, brain._stale_line(ws, m.memory_id) AS stale
        FROM unnest(ids) WITH ORDINALITY AS u(id, n)
        JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = u.id
        ORDER BY u.n
    LOOP
        line_tokens := brain._line_tokens(format('#%s %s %s%s', r.memory_id, r.kind, brain.quote_text(r.headline),
                                                 r.stale));
        IF total + line_tokens > budget THEN
            cut := cut + 1;
            CONTINUE;
        END IF;
        total := total + line_tokens;
        shown := shown || r.memory_id;
        items := items || jsonb_build_array(jsonb_build_object('id', r.memory_id, 'kind', r.kind, 'headline', r.headline,
            'quoted', brain.quote_text(r.headline), 'stale', r.stale, 'tokens', line_tokens));
    END LOOP;
    IF record AND cardinality(shown) > 0 THEN
        PERFORM brain.record_injection('pack', shown, total, cut > 0, session);
    END IF;
    RETURN jsonb_build_object('name', p.name, 'version', p.version, 'pack_id', p.pack_id, 'heading', heading,
        'flag_reasons', to_jsonb(flags), 'items', items, 'tokens', total, 'budget', budget, 'truncated', cut > 0, 'left_out', cut,
        'text', heading || E'\n' || coalesce((SELECT string_agg(format('- #%s %s %s%s', i->>'id', i->>'kind', i->>'quoted',
                                                                      i->>'stale'), E'\n')
                                              FROM jsonb_array_elements(items) AS i), ''));
END
$$;
COMMENT ON FUNCTION brain.render_pack IS
    'Renders a context pack within its token budget (or a smaller one) by the boot payload''s rules: one line per member, "- #id kind" and the headline as a quoted JSON string (and, for a member that states the old value of a superseded memory, "(depends on #<superseded>, changed by #<change>: brain stale)"), members that do not fit left out (truncated, left_out). Members are current: a superseded one is replaced by its successor, a forgotten one drops out (or its replacement comes in), flagged ones are left out; when they changed, the pack''s version moves. A pack whose description or query shows injection signals (brain.injection_signals) has them in flag_reasons, and its heading says FLAGGED with them instead of showing its query. Records the injection (trigger pack) unless record => false.';

-- PL/pgSQL, as every public function that writes (it records the injection):
-- the write guard trusts only frames that name their schema.
CREATE OR REPLACE FUNCTION brain.load_pack(name text, token_budget integer DEFAULT NULL, session bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain.render_pack(load_pack.name, load_pack.token_budget, load_pack.session, true);
END
$$;
COMMENT ON FUNCTION brain.load_pack IS 'A context pack rendered for an agent (brain.render_pack), its injection recorded.';

-- flag_reasons added: another result type, so the function is made anew.
DO $$
BEGIN
    IF (SELECT NOT ('flag_reasons' = ANY (p.proargnames)) FROM pg_proc p
        WHERE p.oid = to_regprocedure('brain.list_packs(text)')) THEN
        DROP FUNCTION brain.list_packs(text);
    END IF;
END
$$;
CREATE OR REPLACE FUNCTION brain.list_packs(project text DEFAULT NULL)
RETURNS TABLE (pack_id bigint, name text, version integer, description text, project text, query text, filters jsonb,
               memory_ids bigint[], members integer, token_budget integer, embedded boolean, created_by text,
               created_at timestamptz, updated_at timestamptz, flag_reasons text[])
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT k.pack_id, k.name, k.version, k.description, k.project, k.query, k.filters, k.memory_ids,
           cardinality(k.members), k.token_budget, k.embedding IS NOT NULL, k.created_by, k.created_at, k.updated_at,
           brain._pack_signals(k.description, k.query)
    FROM brain.pack k
    WHERE k.workspace_id = brain.current_workspace() AND k.state = 'active'
      AND (list_packs.project IS NULL OR k.project IN (list_packs.project, ''))
    ORDER BY k.name
$$;
COMMENT ON FUNCTION brain.list_packs IS 'The active context packs (of a project and the global ones), by name, each with the injection signals of its description and query (flag_reasons, empty when none).';

CREATE OR REPLACE FUNCTION brain.drop_pack(name text, source text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p brain.pack := brain._get_pack(name);
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object('source', source));
    UPDATE brain.pack k SET state = 'dropped', dropped_at = now(), updated_at = now()
    WHERE k.workspace_id = p.workspace_id AND k.pack_id = p.pack_id;
    PERFORM brain._audit_many(ARRAY[NULL]::bigint[], 'pack', source,
        jsonb_build_object('op', 'dropped', 'pack', p.name, 'pack_id', p.pack_id, 'version', p.version));
    RETURN jsonb_build_object('action', 'dropped', 'pack_id', p.pack_id, 'name', p.name, 'version', p.version);
END
$$;
COMMENT ON FUNCTION brain.drop_pack IS 'Drops a context pack (kept as dropped, audited); its name is free again.';

-- A listed member superseded, forgotten or archived: the packs that list it
-- follow it (its successor or replacement in its place, or nothing), and
-- their version moves.
CREATE OR REPLACE FUNCTION brain._pack_follow()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    successor bigint := CASE NEW.state WHEN 'superseded' THEN NEW.superseded_by
                                       WHEN 'tombstoned' THEN NEW.replaced_by END;
BEGIN
    UPDATE brain.pack k
    SET memory_ids = brain._distinct_ids(array_replace(k.memory_ids, NEW.memory_id, successor)),
        members = brain._distinct_ids(array_replace(k.members, NEW.memory_id, successor)),
        version = k.version + 1, updated_at = now()
    WHERE k.workspace_id = NEW.workspace_id AND k.state = 'active' AND k.memory_ids @> ARRAY[NEW.memory_id]
      AND (successor IS NOT NULL OR cardinality(k.memory_ids) > 1 OR k.query IS NOT NULL);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS memory_pack_follow ON brain.memory;
CREATE TRIGGER memory_pack_follow AFTER UPDATE OF state ON brain.memory
    FOR EACH ROW WHEN (OLD.state = 'active' AND NEW.state <> 'active')
    EXECUTE FUNCTION brain._pack_follow();

-- The best matching pack of a boot's scope for a task embedding, when its
-- relevance reaches floor.
CREATE OR REPLACE FUNCTION brain._best_pack(ws bigint, projects text[], s brain.embedding_space, vec public.vector,
                                            floor double precision)
RETURNS TABLE (name text, similarity double precision, relevance double precision)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT x.name, x.similarity, x.relevance
    FROM (SELECT k.name, 1 - (k.embedding OPERATOR(public.<=>) vec) AS similarity,
                 brain.relevance(1 - (k.embedding OPERATOR(public.<=>) vec), NULL,
                                 ARRAY[s.relevance_center, s.relevance_slope]) AS relevance
          FROM brain.pack k
          WHERE k.workspace_id = ws AND k.state = 'active' AND k.project = ANY (projects)
            AND k.space_id = s.space_id AND vec IS NOT NULL
            AND cardinality(brain._pack_signals(k.description, k.query)) = 0  -- a flagged pack is not attached
          ORDER BY k.embedding OPERATOR(public.<=>) vec, k.pack_id
          LIMIT 1) AS x
    WHERE x.relevance >= floor
$$;

-- ---------------------------------------------------------------------------
-- Packs in an export (docs/export-format.md): one line per active pack after
-- the sessions; imported with their listed ids mapped to the imported memories.

CREATE OR REPLACE FUNCTION brain.export_packs(project text DEFAULT NULL)
RETURNS TABLE (doc jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('record', 'pack', 'id', k.pack_id, 'name', k.name, 'version', k.version,
                              'description', k.description, 'project', k.project, 'query', k.query,
                              'filters', k.filters, 'memory_ids', to_jsonb(k.memory_ids),
                              'token_budget', k.token_budget, 'created_by', k.created_by,
                              'created_at', k.created_at, 'updated_at', k.updated_at)
    FROM brain.pack k
    WHERE k.workspace_id = brain.current_workspace() AND k.state = 'active'
      AND (export_packs.project IS NULL OR k.project = export_packs.project)
    ORDER BY k.pack_id
$$;
COMMENT ON FUNCTION brain.export_packs IS
    'The active context packs of the workspace (or of one project) as export lines {"record": "pack", name, description, project, query, filters, memory_ids, token_budget, ...} (docs/export-format.md).';

CREATE OR REPLACE FUNCTION brain.import_packs(docs jsonb, id_map jsonb DEFAULT '{}', project text DEFAULT NULL)
RETURNS TABLE (item integer, old_id bigint, action text, name text, pack_id bigint, version integer,
               embedding_input text, error_code text, error text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    d jsonb;
    n integer := 0;
    ids bigint[];
    out jsonb;
BEGIN
    IF docs IS NULL OR jsonb_typeof(docs) <> 'array' THEN
        PERFORM brain._raise('BR009', 'Packs are imported as a JSON array of pack lines.', NULL,
            'Pass the lines with "record": "pack" of an export.');
    END IF;
    FOR d IN SELECT x FROM jsonb_array_elements(docs) AS x LOOP
        n := n + 1;
        BEGIN
            -- Listed memories by their new ids; those the import did not bring are left out.
            ids := ARRAY(SELECT (id_map->>(x.v))::bigint
                         FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(d->'memory_ids') = 'array'
                                                             THEN d->'memory_ids' ELSE '[]' END)
                              WITH ORDINALITY AS x(v, o)
                         WHERE id_map ? x.v ORDER BY x.o);
            IF EXISTS (SELECT FROM brain.pack k WHERE k.workspace_id = brain.current_workspace()
                       AND k.name = lower(brain.trim_space(d->>'name')) AND k.state = 'active') THEN
                RETURN QUERY SELECT n, (d->>'id')::bigint, 'skipped'::text, d->>'name', NULL::bigint, NULL::integer,
                                    NULL::text, NULL::text, 'a pack of that name exists'::text;
                CONTINUE;
            END IF;
            out := brain.create_pack(name => d->>'name', query => d->>'query', memory_ids => ids,
                                     filters => coalesce(d->'filters', '{}'),
                                     token_budget => (d->>'token_budget')::integer,
                                     description => coalesce(d->>'description', ''),
                                     project => coalesce(import_packs.project, d->>'project', ''),
                                     source => 'import');
            RETURN QUERY SELECT n, (d->>'id')::bigint, out->>'action', out->>'name', (out->>'pack_id')::bigint,
                                (out->>'version')::integer, out->>'embedding_input', NULL::text, NULL::text;
        EXCEPTION WHEN SQLSTATE 'BR001' OR SQLSTATE 'BR005' OR SQLSTATE 'BR007' OR SQLSTATE 'BR009'
                       OR SQLSTATE 'BR010' OR data_exception THEN
            RETURN QUERY SELECT n, (d->>'id')::bigint, 'rejected'::text, left(d->>'name', 63), NULL::bigint,
                                NULL::integer, NULL::text, SQLSTATE::text, SQLERRM::text;
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION brain.import_packs IS
    'Loads the pack lines of an export (brain.export_packs) through brain.create_pack: listed ids mapped by id_map ({"old id": new id}, from brain.import_memories), ids the import did not bring left out; a pack whose name exists is skipped, a refused one (BR codes, secrets included) reported. One row per line with its action and the text to embed.';

-- ---------------------------------------------------------------------------
-- Snapshots: what sessions left for resuming (end_session's snapshot), as a timeline.

CREATE OR REPLACE FUNCTION brain.list_snapshots(project text DEFAULT NULL, max_results integer DEFAULT 50)
RETURNS TABLE (session_id bigint, source text, project text, at timestamptz, summary text, status text,
               blockers jsonb, pending jsonb, handoff text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x.session_id, x.source, x.project, x.at, x.snapshot->>'summary', x.snapshot->>'status',
           CASE WHEN jsonb_typeof(x.snapshot->'blockers') = 'array' THEN x.snapshot->'blockers' ELSE '[]' END,
           CASE WHEN jsonb_typeof(x.snapshot->'pending') = 'array' THEN x.snapshot->'pending' ELSE '[]' END,
           x.text
    FROM ((SELECT o.session_id, o.source, o.project, o.ended_at AS at, o.snapshot, o.handoff AS text
           FROM brain.session o
           WHERE o.workspace_id = brain.current_workspace() AND o.snapshot IS NOT NULL AND o.ended_at IS NOT NULL
             AND (list_snapshots.project IS NULL OR o.project = list_snapshots.project))
          UNION ALL
          (SELECT l.session_id, l.source, l.project, l.created_at, l.snapshot, l.text
           FROM brain.handoff l
           WHERE l.workspace_id = brain.current_workspace() AND l.snapshot IS NOT NULL
             AND (list_snapshots.project IS NULL OR l.project = list_snapshots.project))) AS x
    ORDER BY x.at DESC, x.session_id DESC NULLS LAST
    LIMIT least(greatest(coalesce(max_results, 50), 1), 1000)
$$;
COMMENT ON FUNCTION brain.list_snapshots IS
    'The snapshots sessions left (end_session''s summary, status, blockers, pending, with the handoff), of a project or all, newest first: the timeline a boot after a gap resumes from.';
