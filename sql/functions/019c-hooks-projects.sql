-- The project of a repository: named by what the repository proves (its
-- remote's URL, its root commit), labelled by its folder's name.
--
-- A client (the hooks, `brain mcp --repository`, `brain import`) reads a
-- repository's identities from its .git (each remote's URL, the root commit)
-- and asks brain.repository_project which project they are filed under. The
-- first repository seen with a folder name gets that name; another repository
-- of the same name gets name@<short id>. An older release named a repository's
-- project by its folder; the first repository seen with that name after the
-- upgrade keeps it (brain init registers the folders of the older release's
-- sessions first, oldest first: brain.unfiled_folders), and the older
-- release's global sessions are re-filed under the project their folder's
-- repository has now (brain.refile_sessions).

-- The key of a remote's URL: host and path, lower case, without scheme, user,
-- password, port, trailing .git or slashes, so that git@github.com:a/b.git,
-- ssh://git@github.com:22/a/b and https://github.com/a/b/ are one. NULL for a
-- remote on this machine's disk (a path, file://): nothing another clone shares.
CREATE OR REPLACE FUNCTION brain._remote_key(url text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT nullif(regexp_replace(regexp_replace(lower(
        CASE
            WHEN u ~* '^file:' OR u ~ '^[./~]' OR u = '' THEN NULL
            WHEN u ~* '^[a-z][a-z0-9+.-]*://' THEN
                regexp_replace(u, '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?([^/:@]+)(?::[0-9]*)?(/.*)?$', '\1\2')
            WHEN u ~ '^[^/]+:' THEN  -- scp-like: [user@]host:path
                regexp_replace(u, '^(?:[^@/:]*@)?([^/:@]+):(.*)$', '\1/\2')
        END), '(\.git)?/*$', ''), '//+', '/', 'g'), '')
    FROM (SELECT brain.trim_space(coalesce(url, '')) AS u) AS x
$$;

-- A client's identities as keys: remote:<url> by brain._remote_key (a remote on
-- disk is left out), root:<commit> in lower case, path:<host>:<folder> as given.
CREATE OR REPLACE FUNCTION brain._repository_keys(identities text[])
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    i text;
    k text;
    keys text[] := '{}';
BEGIN
    IF cardinality(identities) > 32 THEN
        PERFORM brain._raise('BR005', format('%s identities of one repository; the limit is 32.', cardinality(identities)),
            jsonb_build_object('identities', cardinality(identities)), 'Give its remotes, its root commits, or its folder.');
    END IF;
    FOREACH i IN ARRAY coalesce(identities, '{}') LOOP
        IF i IS NULL OR length(i) > 2000 OR i !~ '^(remote|root|path):\S' THEN
            PERFORM brain._raise('BR009',
                'A repository identity is remote:<URL>, root:<commit> or path:<host>:<folder>.',
                jsonb_build_object('field', 'identities', 'type', 'remote:, root: or path:'),
                'For example remote:git@github.com:acme/billing.git or root:3f2a1b0c9d8e...');
        END IF;
        k := CASE
            WHEN i LIKE 'remote:%' THEN 'remote:' || brain._remote_key(substr(i, 8))
            WHEN i LIKE 'root:%' THEN CASE WHEN substr(i, 6) ~* '^[0-9a-f]{40,64}$' THEN lower(i) END
            ELSE i
        END;
        IF i LIKE 'root:%' AND k IS NULL THEN
            PERFORM brain._raise('BR009', 'A root commit is its full hexadecimal id.',
                jsonb_build_object('field', 'identities', 'type', 'root:<40 or 64 hex digits>'),
                'git rev-list --max-parents=0 HEAD prints it.');
        END IF;
        IF k IS NOT NULL AND NOT k = ANY (keys) THEN
            keys := keys || k;
        END IF;
    END LOOP;
    RETURN keys;
END
$$;

CREATE OR REPLACE FUNCTION brain.repository_project(
    identities text[],
    label text,
    fallback text DEFAULT NULL,
    claim boolean DEFAULT true
)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    keys text[] := brain._repository_keys(identities);
    place text := (brain._repository_keys(ARRAY[fallback]))[1];
    name text := left(coalesce(nullif(regexp_replace(brain.trim_space(coalesce(label, '')), '[[:cntrl:]]', '', 'g'), ''),
                               'repository'), 200);
    found text;
    short text;
    candidate text;
BEGIN
    IF place IS NOT NULL AND place !~ '^path:' THEN
        PERFORM brain._raise('BR009', 'The fallback of a repository is its folder: path:<host>:<folder>.',
            jsonb_build_object('field', 'fallback', 'type', 'path:<host>:<folder>'), 'Give the folder of a repository with no commit.');
    END IF;
    IF cardinality(keys) = 0 AND place IS NULL THEN
        PERFORM brain._raise('BR009', 'Name the repository: a remote, a root commit, or its folder.',
            jsonb_build_object('field', 'identities'), 'A folder outside git is path:<host>:<folder>.');
    END IF;
    SELECT r.project INTO found FROM brain.repository r
    WHERE r.workspace_id = ws AND r.identity = ANY (keys)
    ORDER BY array_position(keys, r.identity) LIMIT 1;
    IF found IS NULL AND place IS NOT NULL THEN
        -- the folder's project from before it had a commit or a remote, unless that
        -- project is another repository's already (a clone put where one was deleted)
        SELECT r.project INTO found FROM brain.repository r
        WHERE r.workspace_id = ws AND r.identity = place
          AND (cardinality(keys) = 0
               OR NOT EXISTS (SELECT FROM brain.repository o
                              WHERE o.workspace_id = ws AND o.project = r.project AND o.identity !~ '^path:'));
    END IF;
    IF found IS NULL AND NOT claim THEN
        RETURN NULL;
    END IF;
    IF cardinality(keys) = 0 THEN
        keys := ARRAY[place];
    END IF;
    IF found IS NULL THEN
        -- the folder's name, unless another repository took it: then name@<short id>
        short := CASE WHEN keys[1] LIKE 'root:%' THEN substr(keys[1], 6)
                      ELSE encode(sha256(convert_to(keys[1], 'UTF8')), 'hex') END;
        FOREACH candidate IN ARRAY ARRAY[name, name || '@' || left(short, 7), name || '@' || left(short, 12),
                                         name || '@' || short] LOOP
            INSERT INTO brain.repository (workspace_id, identity, project, label, claimed)
            VALUES (ws, keys[1], candidate, name, true)
            ON CONFLICT DO NOTHING
            RETURNING project INTO found;
            EXIT WHEN found IS NOT NULL;
            -- (or another call filed this repository meanwhile)
            SELECT r.project INTO found FROM brain.repository r WHERE r.workspace_id = ws AND r.identity = keys[1];
            EXIT WHEN found IS NOT NULL;
        END LOOP;
    END IF;
    -- (only what is not filed yet: a repository fully filed is looked up, never written)
    INSERT INTO brain.repository (workspace_id, identity, project, label)
    SELECT ws, k, found, name FROM unnest(keys || place) AS k
    WHERE k IS NOT NULL
      AND NOT EXISTS (SELECT FROM brain.repository r WHERE r.workspace_id = ws AND r.identity = k)
    ON CONFLICT DO NOTHING;
    RETURN found;
END
$$;
COMMENT ON FUNCTION brain.repository_project IS
    'The project of a repository, named by what it proves: identities are its remotes (remote:<URL>, normalized so that git@github.com:a/b.git and https://github.com/a/b are one: brain._remote_key), its root commits (root:<commit>), or, for a folder outside git or a repository with neither, path:<host>:<folder>; label is its folder''s name. The project of the first identity already filed (in the order given) is returned, and the others are filed under it too (a remote added later, a clone of the same history); fallback (path:<host>:<folder>) gives the folder''s project from before the repository had a commit or a remote, unless a repository of its own holds that project. Else, with claim (the default), the repository is filed under its folder''s name when no other repository has that name, else under name@<short id> (the root commit''s first 7 digits, or of the digest of the remote): two repositories of one folder name are two projects, and the projects an older release named by folder stay with the first repository seen with that name. Without claim, NULL when nothing is filed yet.';

-- The folders of the sessions an older release filed (started before migration
-- repository-projects was applied) that a client should file now, oldest first:
-- those with a global session (project ''), and, before any repository is filed
-- in the workspace, every one of them (so that the repository that made a
-- project keeps its name). Of this host's sessions (and those that name none).
CREATE OR REPLACE FUNCTION brain.unfiled_folders(host text DEFAULT NULL)
RETURNS TABLE (cwd text, first_started timestamptz, global_sessions bigint, projects text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    upgraded timestamptz := coalesce((SELECT min(m.applied_at) FROM brain.migration m
                                      WHERE m.name LIKE '%-repository-projects.sql'), 'infinity');
    filed boolean := EXISTS (SELECT FROM brain.repository r WHERE r.workspace_id = ws);
BEGIN
    RETURN QUERY
    SELECT s.cwd, min(s.started_at), count(*) FILTER (WHERE s.project = ''),
           array_agg(DISTINCT s.project) FILTER (WHERE s.project <> '')
    FROM brain.session s
    WHERE s.workspace_id = ws AND s.cwd IS NOT NULL AND s.cwd <> '' AND s.started_at < upgraded
      AND (s.host IS NULL OR unfiled_folders.host IS NULL OR s.host = unfiled_folders.host)
    GROUP BY s.cwd
    HAVING count(*) FILTER (WHERE s.project = '') > 0 OR NOT filed
    ORDER BY min(s.started_at), s.cwd;
END
$$;
COMMENT ON FUNCTION brain.unfiled_folders IS
    'The folders (cwd) of the sessions an older release recorded (started before the migration that files repositories by identity) that a client should file now, oldest first: each folder with a global session (project ''''), and, while no repository is filed in the workspace, every folder (so that the repository that made a project keeps its name). Sessions of host (or that name none). With the first start, the number of global sessions and the projects its sessions had. brain init files them (brain.repository_project, brain.refile_sessions).';

CREATE OR REPLACE FUNCTION brain.refile_sessions(folders jsonb, host text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace('write');
    upgraded timestamptz := coalesce((SELECT min(m.applied_at) FROM brain.migration m
                                      WHERE m.name LIKE '%-repository-projects.sql'), 'infinity');
    moved bigint[];
    n_handoffs bigint;
    turns bigint[];
    kept bigint;
BEGIN
    IF jsonb_typeof(folders) IS DISTINCT FROM 'array'
       OR EXISTS (SELECT FROM jsonb_array_elements(folders) AS f
                  WHERE jsonb_typeof(f) <> 'object' OR coalesce(f->>'cwd', '') = ''
                     OR coalesce(brain.trim_space(f->>'project'), '') = '') THEN
        PERFORM brain._raise('BR009', 'folders is a JSON array of {"cwd": folder, "project": name}, neither empty.',
            jsonb_build_object('field', 'folders', 'type', 'array of {cwd, project}'),
            'brain.unfiled_folders lists the folders; brain.repository_project names each one''s project.');
    END IF;
    -- the global sessions those folders recorded before the upgrade
    WITH f AS (SELECT DISTINCT ON (x->>'cwd') x->>'cwd' AS cwd, brain.trim_space(x->>'project') AS project
               FROM jsonb_array_elements(folders) AS x),
    s AS (UPDATE brain.session s SET project = f.project
          FROM f
          WHERE s.workspace_id = ws AND s.project = '' AND s.cwd = f.cwd AND s.started_at < upgraded
            AND (s.host IS NULL OR refile_sessions.host IS NULL OR s.host = refile_sessions.host)
          RETURNING s.session_id)
    SELECT coalesce(array_agg(s.session_id), '{}') INTO moved FROM s;
    -- their handoffs
    UPDATE brain.handoff h SET project = s.project
    FROM brain.session s
    WHERE h.workspace_id = ws AND s.workspace_id = ws AND s.session_id = ANY (moved)
      AND h.session_id = s.session_id AND h.project = '';
    GET DIAGNOSTICS n_handoffs = ROW_COUNT;
    -- the turns captured from their transcripts (source_ref <client session>/...), and what
    -- was recorded from them; a turn the project holds already, word for word, stays where it is
    WITH t AS (SELECT DISTINCT ON (m.memory_id) m.memory_id, s.project
               FROM brain.session s
               JOIN brain.memory m
                 ON m.workspace_id = ws AND m.project = '' AND m.source_system IS NOT NULL
                AND left(m.source_ref, length(s.client_info->>'client_session') + 1)
                    = (s.client_info->>'client_session') || '/'
               WHERE s.workspace_id = ws AND s.session_id = ANY (moved)
                 AND coalesce(s.client_info->>'client_session', '') <> ''),
    u AS (UPDATE brain.memory m SET project = t.project
          FROM t
          WHERE m.workspace_id = ws AND m.memory_id = t.memory_id
            AND NOT (m.state = 'active'
                     AND EXISTS (SELECT FROM brain.memory d
                                 WHERE d.workspace_id = ws AND d.state = 'active' AND d.kind = m.kind
                                   AND d.project = t.project AND d.normalized_hash = m.normalized_hash))
          RETURNING m.memory_id)
    SELECT coalesce(array_agg(u.memory_id), '{}') INTO turns FROM u;
    SELECT count(*) INTO kept
    FROM brain.session s
    JOIN brain.memory m
      ON m.workspace_id = ws AND m.project = '' AND m.source_system IS NOT NULL
     AND left(m.source_ref, length(s.client_info->>'client_session') + 1) = (s.client_info->>'client_session') || '/'
    WHERE s.workspace_id = ws AND s.session_id = ANY (moved) AND coalesce(s.client_info->>'client_session', '') <> '';
    IF cardinality(turns) > 0 THEN
        PERFORM brain._audit_many(turns, 'update', NULL,
                                  jsonb_build_object('refiled', 'to the project of the folder its session ran in'));
    END IF;
    RETURN jsonb_build_object('sessions', cardinality(moved), 'handoffs', n_handoffs, 'turns', cardinality(turns),
                              'kept', kept);
END
$$;
COMMENT ON FUNCTION brain.refile_sessions IS
    'Files the global sessions an older release recorded (project '''', started before the migration that files repositories by identity) under the project of the folder they ran in: folders is [{"cwd", "project"}] (brain.unfiled_folders lists the folders, brain.repository_project names each one''s project), of host''s sessions (and those that name none). Their handoffs and the turns captured from their transcripts (source_ref <client session>/…, and what was recorded from them) go with them, each memory audited (update, refiled); a turn its project holds already word for word stays global (kept). Returns {sessions, handoffs, turns, kept}. Write access.';
