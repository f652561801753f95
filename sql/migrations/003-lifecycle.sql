-- Lifecycle and maintenance: a record of every maintenance run.

CREATE TABLE brain.maintenance_run (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    run_id       bigint GENERATED ALWAYS AS IDENTITY,
    ran_at       timestamptz NOT NULL,            -- the `now` the run used
    started_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    counts       jsonb NOT NULL,
    PRIMARY KEY (workspace_id, run_id)
);
CREATE INDEX maintenance_run_latest ON brain.maintenance_run (workspace_id, ran_at DESC);

ALTER TABLE brain.maintenance_run ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.maintenance_run
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());
GRANT SELECT, INSERT ON brain.maintenance_run TO brain_user;

-- Archive and prune need to find rows by when they left the active state.
CREATE INDEX memory_archived_at ON brain.memory (workspace_id, archived_at) WHERE state = 'archived';
CREATE INDEX memory_forgotten_at ON brain.memory (workspace_id, forgotten_at) WHERE state = 'tombstoned';
