-- Handoffs that arrive after their session has ended (its heartbeat expired,
-- its process exited, maintenance ended it, or it was ended before), or when
-- no session can be named: never dropped, kept for the next session of the
-- same project and source like a session's own handoff.

CREATE TABLE brain.handoff (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    handoff_id   bigint GENERATED ALWAYS AS IDENTITY,
    source       text NOT NULL CHECK (source ~ '^\S+$'),
    project      text NOT NULL DEFAULT '',
    session_id   bigint,                                    -- the ended session it was written for; NULL: none found
    text         text,
    snapshot     jsonb,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, handoff_id),
    FOREIGN KEY (workspace_id, session_id) REFERENCES brain.session (workspace_id, session_id),
    CHECK (text IS NOT NULL OR snapshot IS NOT NULL)
);
CREATE INDEX handoff_latest ON brain.handoff (workspace_id, project, source, created_at DESC);

ALTER TABLE brain.handoff ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.handoff
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());
GRANT SELECT, INSERT ON brain.handoff TO brain_user;

-- The session `brain end` targets is found by its seat: source, project, cwd and host.
CREATE INDEX session_seat ON brain.session (workspace_id, source, project, cwd, started_at DESC);
