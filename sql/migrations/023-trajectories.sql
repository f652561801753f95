-- Trajectories, context packs and injection telemetry (BrainX V3, seed 004).
--
-- A trajectory ("how we solved it") is a memory of kind 'trajectory': its
-- headline and body (the problem and the outcome) go through the write gate,
-- dedup, supersede, search, export and row-level security as every memory's
-- do, and its kind table holds what only a trajectory has: the problem and
-- the outcome apart, the ordered steps, and how often it was recorded (folds
-- count) and used (loaded or injected).
--
-- A context pack is a named, versioned definition (a query and filters, or a
-- list of memory ids, and a token budget), rendered through the boot
-- payload's data-block rules. It is not a memory: it holds no text of its
-- own but its name and description, and its embedding (of that text, or of
-- its query) lives beside it.
--
-- Every injection (boot payload, search results, prompt hook, pack,
-- trajectory) is one row of brain.injection; a later recall, rating,
-- supersede or citation of an injected memory in the same session is one
-- row of brain.injection_use. Both are append-only for clients.

ALTER TABLE brain.memory DROP CONSTRAINT memory_kind_check;
ALTER TABLE brain.memory ADD CONSTRAINT memory_kind_check
    CHECK (kind IN ('rule', 'fact', 'incident', 'task', 'trajectory'));

CREATE TABLE brain.trajectory (
    workspace_id   bigint NOT NULL DEFAULT brain.current_workspace(),
    memory_id      bigint NOT NULL,
    problem        text NOT NULL DEFAULT '',
    outcome        text NOT NULL DEFAULT '',
    steps          jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(steps) = 'array'),
    times_recorded integer NOT NULL DEFAULT 1 CHECK (times_recorded >= 1),
    times_used     integer NOT NULL DEFAULT 0 CHECK (times_used >= 0),
    last_used_at   timestamptz,
    PRIMARY KEY (workspace_id, memory_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory ON DELETE CASCADE
);
COMMENT ON TABLE brain.trajectory IS
    'The kind table of trajectories: problem, outcome, ordered steps (action, tool, command, files, result, failed), how often recorded (near-duplicates fold and count) and used (recalled or injected).';

CREATE TABLE brain.pack (
    workspace_id  bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    pack_id       bigint GENERATED ALWAYS AS IDENTITY,
    name          text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    description   text NOT NULL DEFAULT '',
    project       text NOT NULL DEFAULT '',
    query         text,
    filters       jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(filters) = 'object'),
    memory_ids    bigint[] NOT NULL DEFAULT '{}',
    token_budget  integer NOT NULL CHECK (token_budget BETWEEN 50 AND 20000),
    version       integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    members       bigint[] NOT NULL DEFAULT '{}',
    space_id      bigint,
    embedding     public.vector,
    state         text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'dropped')),
    created_by    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    dropped_at    timestamptz,
    PRIMARY KEY (workspace_id, pack_id),
    FOREIGN KEY (workspace_id, space_id) REFERENCES brain.embedding_space ON DELETE SET NULL (space_id),
    CHECK (query IS NOT NULL OR cardinality(memory_ids) > 0),
    CHECK ((embedding IS NULL) = (space_id IS NULL))
);
CREATE UNIQUE INDEX pack_name ON brain.pack (workspace_id, name) WHERE state = 'active';
CREATE INDEX pack_members ON brain.pack USING gin (memory_ids) WHERE state = 'active';
COMMENT ON TABLE brain.pack IS
    'Context packs: a named definition (query and filters, or memory ids, and a token budget) rendered by brain.render_pack; version moves when the definition or its members change. members: the ids of its last rendering.';

CREATE TABLE brain.injection (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    injection_id bigint GENERATED ALWAYS AS IDENTITY,
    session_id   bigint,
    trigger      text NOT NULL CHECK (trigger IN ('boot', 'search', 'prompt', 'pack', 'trajectory')),
    at           timestamptz NOT NULL DEFAULT now(),
    items        bigint[] NOT NULL DEFAULT '{}',
    tokens       integer NOT NULL DEFAULT 0 CHECK (tokens >= 0),
    truncated    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (workspace_id, injection_id)
);
CREATE INDEX injection_session ON brain.injection (workspace_id, session_id, at) WHERE session_id IS NOT NULL;
CREATE INDEX injection_at ON brain.injection (workspace_id, at DESC);
COMMENT ON TABLE brain.injection IS
    'Every injection of memory into an agent''s context: session, trigger, the memory ids shown, estimated tokens, and whether the budget cut it.';

CREATE TABLE brain.injection_use (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace(),
    injection_id bigint NOT NULL,
    memory_id    bigint NOT NULL,
    how          text NOT NULL CHECK (how IN ('recall', 'rate', 'supersede', 'cite')),
    at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, injection_id, memory_id),
    FOREIGN KEY (workspace_id, injection_id) REFERENCES brain.injection ON DELETE CASCADE
);
COMMENT ON TABLE brain.injection_use IS
    'An injected memory the same session later recalled, rated, superseded or cited: the first use of each item of an injection.';

-- A boot looks for the project's last session (the gap since it) and its last
-- snapshot: both in index order, whatever the number of sessions.
CREATE INDEX session_project_started ON brain.session (workspace_id, project, started_at DESC);
CREATE INDEX session_project_snapshot ON brain.session (workspace_id, project, ended_at DESC)
    WHERE snapshot IS NOT NULL;
CREATE INDEX handoff_project_snapshot ON brain.handoff (workspace_id, project, created_at DESC)
    WHERE snapshot IS NOT NULL;
-- The prompt hook finds the session booted for its client session (to record
-- its injection under it) by the client's session id.
CREATE INDEX session_client_session ON brain.session
    (workspace_id, (client_info->>'client_session'), started_at DESC);

-- Packs are audited as memories are (the audit row names no memory).
ALTER TABLE brain.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE brain.audit ADD CONSTRAINT audit_action_check CHECK (action IN (
    'insert', 'update', 'dedup', 'supersede', 'unsupersede', 'forget', 'archive', 'restore', 'rate',
    'annotate', 'pin', 'unpin', 'confirm', 'prune', 'pack'));

-- Row-level security as on every tenant table (migration 013): reading needs
-- any membership; changing trajectories and packs needs write, recording an
-- injection (session bookkeeping, as a boot is) read.
DO $$
DECLARE
    t text;
    need text;
BEGIN
    FOREACH t IN ARRAY ARRAY['trajectory', 'pack', 'injection', 'injection_use'] LOOP
        need := CASE WHEN t IN ('injection', 'injection_use') THEN 'read' ELSE 'write' END;
        EXECUTE format('ALTER TABLE brain.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE brain.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY workspace_isolation ON brain.%I FOR SELECT'
                       ' USING (workspace_id = brain.current_workspace())', t);
        EXECUTE format('CREATE POLICY workspace_insert ON brain.%I FOR INSERT'
                       ' WITH CHECK (workspace_id = (SELECT brain.current_workspace(%L)))', t, need);
        EXECUTE format('CREATE POLICY workspace_update ON brain.%I FOR UPDATE'
                       ' USING (workspace_id = brain.current_workspace(%L))'
                       ' WITH CHECK (workspace_id = (SELECT brain.current_workspace(%L)))', t, need, need);
        EXECUTE format('CREATE POLICY workspace_delete ON brain.%I FOR DELETE'
                       ' USING (workspace_id = brain.current_workspace(%L))', t, need);
    END LOOP;
END
$$;

-- The same privileges as the tables of their kind: a kind table as the
-- others, packs as memories, injections as tool events (append-only).
GRANT SELECT, INSERT, UPDATE, DELETE ON brain.trajectory, brain.pack TO brain_user;
GRANT SELECT, INSERT ON brain.injection, brain.injection_use TO brain_user;
