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
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = 'space_id' AND NOT a.attisdropped
             WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind IN ('r', 'p')
    LOOP
        EXECUTE format('ALTER TABLE brain.%I ALTER COLUMN space_id SET STATISTICS 0', t.relname);
    END LOOP;
END
$$;
