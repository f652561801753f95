-- Sessions and what passes between them: the registry, handoffs and
-- snapshots, action items, the scratchpad, and boot telemetry.

CREATE TABLE brain.session (
    workspace_id   bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    session_id     bigint GENERATED ALWAYS AS IDENTITY,
    source         text NOT NULL CHECK (source ~ '^\S+$'),   -- claude, cursor, a script...
    project        text NOT NULL DEFAULT '',
    cwd            text,
    pid            integer,
    pid_started_at timestamptz,
    host           text,
    client_info    jsonb NOT NULL DEFAULT '{}',
    current_task   text,
    status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
    started_at     timestamptz NOT NULL,
    heartbeat_at   timestamptz NOT NULL,
    ended_at       timestamptz,
    end_reason     text,
    handoff        text,
    snapshot       jsonb,
    PRIMARY KEY (workspace_id, session_id),
    CHECK ((status = 'ended') = (ended_at IS NOT NULL))
);
CREATE INDEX session_live ON brain.session (workspace_id, heartbeat_at) WHERE status = 'active';
CREATE INDEX session_project ON brain.session (workspace_id, project, status);
CREATE INDEX session_process ON brain.session (workspace_id, host, pid) WHERE status = 'active';
CREATE INDEX session_handoff ON brain.session (workspace_id, project, source, ended_at DESC)
    WHERE status = 'ended' AND handoff IS NOT NULL;

CREATE TABLE brain.action_item (
    workspace_id    bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    action_item_id  bigint GENERATED ALWAYS AS IDENTITY,
    text            text NOT NULL,
    project         text NOT NULL DEFAULT '',
    for_source      text,                                   -- NULL: every source
    created_by      bigint,                                 -- the session that raised it
    created_at      timestamptz NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'acknowledged')),
    acknowledged_by bigint,
    acknowledged_at timestamptz,
    response        text CHECK (response IN ('will_execute', 'already_done', 'not_relevant')),
    response_note   text,
    PRIMARY KEY (workspace_id, action_item_id),
    FOREIGN KEY (workspace_id, created_by) REFERENCES brain.session (workspace_id, session_id),
    FOREIGN KEY (workspace_id, acknowledged_by) REFERENCES brain.session (workspace_id, session_id),
    CHECK ((status = 'acknowledged') = (response IS NOT NULL))
);
CREATE INDEX action_item_pending ON brain.action_item (workspace_id, project) WHERE status = 'pending';

-- Small key/value notes of a session or a project; not memories.
CREATE TABLE brain.scratch (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    scope        text NOT NULL CHECK (scope IN ('session', 'project')),
    scope_key    text NOT NULL,                             -- the session id or the project name
    key          text NOT NULL,
    value        text NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, scope, scope_key, key)
);

-- Injection telemetry: what each boot put into an agent's context.
CREATE TABLE brain.boot_event (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    boot_id      bigint GENERATED ALWAYS AS IDENTITY,
    session_id   bigint NOT NULL,
    at           timestamptz NOT NULL,
    budget       integer NOT NULL,
    tokens       integer NOT NULL,
    sections     jsonb NOT NULL,                            -- items per section
    dropped      jsonb NOT NULL,                            -- items left out to meet the budget
    PRIMARY KEY (workspace_id, boot_id),
    FOREIGN KEY (workspace_id, session_id) REFERENCES brain.session (workspace_id, session_id)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['session', 'action_item', 'scratch', 'boot_event']
    LOOP
        EXECUTE format('ALTER TABLE brain.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY workspace_isolation ON brain.%I
                 USING (workspace_id = brain.current_workspace())
                 WITH CHECK (workspace_id = brain.current_workspace())', t);
    END LOOP;
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON brain.session, brain.action_item, brain.scratch, brain.boot_event
    TO brain_user;

-- A live session as brain.list_active_sessions lists it.
CREATE TYPE brain.session_brief AS (
    session_id   bigint,
    source       text,
    project      text,
    cwd          text,
    pid          integer,
    host         text,
    current_task text,
    started_at   timestamptz,
    heartbeat_at timestamptz
);
