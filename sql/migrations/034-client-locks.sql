-- Clients take no table lock beyond the ones their statements take.
--
-- PostgreSQL lets a role LOCK a table in every mode when it holds UPDATE,
-- DELETE, TRUNCATE or MAINTAIN on the table (LockTableAclCheck: SELECT allows
-- ACCESS SHARE, INSERT up to ROW EXCLUSIVE), and consults no column's
-- privileges there. Application roles held UPDATE and DELETE on the memory
-- tables: any member could LOCK TABLE brain.memory IN ACCESS EXCLUSIVE MODE in
-- an idle transaction and stop every workspace's search and remember. Now no
-- role but the owner holds one of those four on a table or view of schema
-- brain: UPDATE is granted on each column instead (UPDATE statements, ON
-- CONFLICT DO UPDATE and SELECT ... FOR UPDATE work as before; LOCK TABLE
-- takes ROW EXCLUSIVE at most), and the API's few deletions run as the owner
-- (sql/functions/004d-write-deletes.sql).
DO $$
DECLARE
    g record;
    cols text;
BEGIN
    FOR g IN
        SELECT c.oid, c.relname, a.grantee, a.privilege_type
        FROM pg_catalog.pg_class c
        CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) AS a
        WHERE c.relnamespace = 'brain'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
          AND a.grantee <> c.relowner
          AND a.privilege_type IN ('UPDATE', 'DELETE', 'TRUNCATE', 'MAINTAIN')
        ORDER BY 2, 3, 4
    LOOP
        EXECUTE format('REVOKE %s ON brain.%I FROM %s', g.privilege_type, g.relname,
                       CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.grantee::regrole::text) END);
        IF g.privilege_type = 'UPDATE' THEN
            SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
            FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = g.oid AND a.attnum > 0 AND NOT a.attisdropped;
            EXECUTE format('GRANT UPDATE (%s) ON brain.%I TO %s', cols, g.relname,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.grantee::regrole::text) END);
        END IF;
    END LOOP;
END
$$;

-- The write locks' key takes the workspace's secret (sql/functions/003a-embedding-locks.sql).
DROP FUNCTION IF EXISTS brain._scope_key(bigint, text, text, bigint);
