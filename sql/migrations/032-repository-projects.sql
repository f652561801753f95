-- A project is named by what its repository proves, not by its folder's name:
-- each identity a repository was seen with (its remote's normalized URL, its
-- root commit; a folder outside git, or a repository with neither, by its host
-- and path) maps to the project its sessions, turns and handoffs are filed
-- under. The first repository seen with a folder name keeps that name (so
-- the projects an older release named by folder stay where they are); another
-- repository of the same name gets its own, name@<short id>
-- (sql/functions/019c-hooks-projects.sql, brain.repository_project).
CREATE TABLE brain.repository (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    identity     text NOT NULL CHECK (identity ~ '^(remote|root|path):\S'),
    project      text NOT NULL CHECK (project <> ''),
    label        text NOT NULL,
    -- the identity that claimed the project's name: one a project
    claimed      boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, identity)
);
CREATE UNIQUE INDEX repository_claim ON brain.repository (workspace_id, project) WHERE claimed;
CREATE INDEX repository_project ON brain.repository (workspace_id, project);
ALTER TABLE brain.repository ALTER COLUMN workspace_id SET STATISTICS 0;
COMMENT ON TABLE brain.repository IS
    'Which project each repository identity (remote:<normalized URL>, root:<root commit>, path:<host>:<folder>) is filed under; label is the folder name people read. claimed: the identity that took the project''s name (one a project).';

-- Row-level security as on every tenant table (migration 013). Clients change
-- it only through the API (the write guard, sql/functions/004b-write-guard.sql).
ALTER TABLE brain.repository ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.repository FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.repository FOR SELECT
    USING (workspace_id = brain.current_workspace());
CREATE POLICY workspace_insert ON brain.repository FOR INSERT
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_update ON brain.repository FOR UPDATE
    USING (workspace_id = brain.current_workspace('write'))
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_delete ON brain.repository FOR DELETE
    USING (workspace_id = brain.current_workspace('write'));
GRANT SELECT, INSERT, UPDATE, DELETE ON brain.repository TO brain_user;
