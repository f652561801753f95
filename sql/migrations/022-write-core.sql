-- One write core (sql/functions/004-write.sql, brain._store_memories) and
-- the write guard (sql/functions/024-write-core.sql): a client role changes
-- the memory tables only through the API.
--
-- The core takes the ids of the memories it stores in the order of a batch.
GRANT USAGE ON SEQUENCE brain.memory_memory_id_seq TO brain_user;

-- What no application role needs: emptying a table (TRUNCATE passes row-level
-- security), triggers of its own, foreign keys pointing at pybrain's tables.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'p') ORDER BY 1
    LOOP
        EXECUTE format('REVOKE TRUNCATE, TRIGGER, REFERENCES ON brain.%I FROM brain_user', t);
    END LOOP;
END
$$;

-- Memories written around the gate before this release (a client's own
-- INSERT or UPDATE) are brought under it: a headline on several lines or with
-- hidden characters is cleaned, and the injection signals of the text as
-- stored are added to its flags (a confirmation stays only when no reason
-- was added). Each change has an audit row (actor 'migration 022'). (On a
-- new database the gate's functions come after the migrations, and there is
-- nothing to bring under it.)
DO $$
DECLARE
    fixed bigint[];
    ws bigint;
BEGIN
    IF pg_catalog.to_regprocedure('brain.injection_signals(text)') IS NULL
       OR pg_catalog.to_regprocedure('brain.clean_headline(text)') IS NULL
       OR NOT EXISTS (SELECT FROM brain.memory) THEN
        RETURN;
    END IF;
    FOR ws IN SELECT w.workspace_id FROM brain.workspace w ORDER BY 1 LOOP
        PERFORM pg_catalog.set_config('brain.workspace', ws::text, true);
        WITH bad AS (
            SELECT m.workspace_id, m.memory_id, brain.clean_headline(m.headline) AS h,
                   -- (as brain._turn_signals: a captured turn's User: / Assistant: is its speaker)
                   ARRAY(SELECT s FROM unnest(brain.injection_signals(CASE
                             WHEN m.metadata->>'role' IN ('user', 'assistant')
                                  AND lower(left(ltrim(m.headline || E'\n' || m.body), length(m.metadata->>'role') + 1))
                                      = (m.metadata->>'role') || ':'
                             THEN substr(ltrim(m.headline || E'\n' || m.body), length(m.metadata->>'role') + 2)
                             ELSE m.headline || E'\n' || m.body END)) AS s
                         WHERE s <> ALL (m.flag_reasons)) AS added
            FROM brain.memory m
            WHERE m.workspace_id = ws
        ), upd AS (
            UPDATE brain.memory m
            SET headline = CASE WHEN b.h <> '' THEN b.h ELSE m.headline END,
                flag_reasons = m.flag_reasons || b.added,
                flag_confirmed_at = CASE WHEN cardinality(b.added) = 0 THEN m.flag_confirmed_at END,
                flag_confirmed_by = CASE WHEN cardinality(b.added) = 0 THEN m.flag_confirmed_by END,
                updated_at = now()
            FROM bad b
            WHERE m.workspace_id = b.workspace_id AND m.memory_id = b.memory_id
              AND (b.h <> m.headline AND b.h <> '' OR cardinality(b.added) > 0)
            RETURNING m.memory_id
        )
        SELECT array_agg(upd.memory_id ORDER BY upd.memory_id) INTO fixed FROM upd;
        IF cardinality(fixed) > 0 THEN
            INSERT INTO brain.audit (workspace_id, memory_id, action, actor, detail)
            SELECT ws, f.id, 'update', 'migration 022',
                   jsonb_build_object('reason', 'written around the write gate: headline cleaned, flags added')
            FROM unnest(fixed) AS f(id);
        END IF;
    END LOOP;
END
$$;
