-- Observability: every tool call and CLI command, with its latency and outcome.

CREATE TABLE brain.tool_event (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    event_id     bigint GENERATED ALWAYS AS IDENTITY,
    tool         text NOT NULL,
    channel      text NOT NULL CHECK (channel IN ('mcp', 'cli', 'sql')),
    session_id   bigint,
    started_at   timestamptz NOT NULL,
    latency_ms   double precision NOT NULL CHECK (latency_ms >= 0),
    ok           boolean NOT NULL,
    error_code   text,
    error        text,
    PRIMARY KEY (workspace_id, event_id)
);
CREATE INDEX tool_event_recent ON brain.tool_event (workspace_id, started_at DESC);
CREATE INDEX tool_event_errors ON brain.tool_event (workspace_id, started_at DESC) WHERE NOT ok;

ALTER TABLE brain.tool_event ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.tool_event
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());
GRANT SELECT, INSERT ON brain.tool_event TO brain_user;
