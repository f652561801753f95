-- What a definer flaw reaches, and what one workspace can learn of another.
--
-- A space belongs to one workspace, so what the planner knew of space_id (its
-- most common values) gave EXPLAIN ... WHERE space_id = n the vector count of
-- another workspace's space. As workspace_id (migration 027), the column is no
-- longer sampled; every migrate then sets what the planner knows of it to one
-- value for every space (brain._hide_workspace_sizes).
--
-- The rest of this release's changes run at every migrate, from the catalog:
-- brain_owner holds no role any more (brain._claim_objects revokes the ADMIN it
-- held on each application role, and brain_server gets SET on each from the
-- installer instead), and a space's index size is no client's to read
-- (brain._hide_index_sizes). From this migration on, on a database whose
-- schema brain_owner owns, a migration runs as brain_owner (pybrain/db.py).
-- Plain statements, no DO block: an upgrade runs this as brain_owner, which
-- may use plpgsql only when the installer is a superuser (pybrain/db.py).
ALTER TABLE brain.embedding ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE brain.embedding_failure ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE brain.embedding_space ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE brain.pack ALTER COLUMN space_id SET STATISTICS 0;
