-- The workspace of a row-level security policy, looked up once a statement:
-- each condition `workspace_id = brain.current_workspace(...)` becomes
-- `workspace_id = (SELECT brain.current_workspace(...))`, an InitPlan the
-- executor runs once, where the function call was made for every row the
-- condition filtered (every tuple of an HNSW walk, every row a write's
-- neighbour lookup read). The policies and what they admit are the same;
-- the INSERT checks were written so already.
DO $$
DECLARE
    p record;
    pattern constant text := '(?<!SELECT )brain\.current_workspace\(([^()]*)\)';
    once constant text := '(SELECT brain.current_workspace(\1))';
BEGIN
    FOR p IN SELECT pol.tablename, pol.policyname, pol.qual, pol.with_check
             FROM pg_catalog.pg_policies pol
             WHERE pol.schemaname = 'brain'
               AND (pol.qual ~ pattern OR pol.with_check ~ pattern)
             ORDER BY 1, 2
    LOOP
        IF p.qual ~ pattern THEN
            EXECUTE format('ALTER POLICY %I ON brain.%I USING (%s)', p.policyname, p.tablename,
                           regexp_replace(p.qual, pattern, once, 'g'));
        END IF;
        IF p.with_check ~ pattern THEN
            EXECUTE format('ALTER POLICY %I ON brain.%I WITH CHECK (%s)', p.policyname, p.tablename,
                           regexp_replace(p.with_check, pattern, once, 'g'));
        END IF;
    END LOOP;
END
$$;
