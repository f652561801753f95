-- Dependent staleness: when a memory is superseded, the active memories of its
-- project that state its old value (a port, a version, a host: a
-- distinguishing term the old memory has and the new one lacks) are marked as
-- depending on a changed fact, with a link to the change. Search ranks a
-- marked memory below the current statement and every reader shows the mark;
-- brain.stale lists what a change left to review. Undoing the supersede
-- (brain.unsupersede) takes its marks away (sql/functions/007a-revise-stale.sql).
CREATE TABLE brain.stale_mark (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    memory_id    bigint NOT NULL,
    changed_id   bigint NOT NULL,
    change_id    bigint NOT NULL,
    old_values   text[] NOT NULL CHECK (cardinality(old_values) > 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, memory_id, changed_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, changed_id) REFERENCES brain.memory ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, change_id) REFERENCES brain.memory ON DELETE CASCADE
);
CREATE INDEX stale_mark_changed ON brain.stale_mark (workspace_id, changed_id);
CREATE INDEX stale_mark_change ON brain.stale_mark (workspace_id, change_id);
COMMENT ON TABLE brain.stale_mark IS
    'A memory that states the old value of a superseded one: memory_id depends on changed_id (the superseded memory), which change_id replaced; old_values are the values it states. Written by a supersede, removed by its undo.';

-- Row-level security as on every tenant table (migration 013): reading needs
-- any membership, writing marks write access (the supersede that writes them
-- needs it). Clients change it only through the API (the write guard,
-- sql/functions/004b-write-guard.sql).
ALTER TABLE brain.stale_mark ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.stale_mark FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.stale_mark FOR SELECT
    USING (workspace_id = (SELECT brain.current_workspace()));
CREATE POLICY workspace_insert ON brain.stale_mark FOR INSERT
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_update ON brain.stale_mark FOR UPDATE
    USING (workspace_id = (SELECT brain.current_workspace('write')))
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_delete ON brain.stale_mark FOR DELETE
    USING (workspace_id = (SELECT brain.current_workspace('write')));
-- As migration 034 grants: UPDATE column by column and no DELETE, so that no
-- client can LOCK the table beyond ROW EXCLUSIVE; an undo's marks are deleted
-- by the owner (brain._delete_stale_marks, sql/functions/004d-write-deletes.sql).
GRANT SELECT, INSERT ON brain.stale_mark TO brain_user;
GRANT UPDATE (change_id, old_values, created_at) ON brain.stale_mark TO brain_user;

-- A search result says when it depends on a changed fact: {"on": the
-- superseded memory, "by": the memory that replaced it, "values": the old
-- values it states}.
ALTER TYPE brain.search_result ADD ATTRIBUTE stale jsonb;
COMMENT ON COLUMN brain.search_result.stale IS
    'When this memory states the old value of a superseded one: {"on": superseded id, "by": the id that replaced it, "values": the old values}; NULL otherwise.';
