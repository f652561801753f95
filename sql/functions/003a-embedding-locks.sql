-- The advisory locks of writes: per scope (a workspace's memories of one kind
-- and project), per near pair, and for the check at commit.

-- The key of a scope (a workspace's memories of one kind and project) for the
-- advisory locks of writes (brain._lock_writes, _lock_writes_shared,
-- _lock_commits, _lock_near) and the order the check at commit takes them in:
-- one definition, inlined where it is called. With part, the key of one pair
-- of the scope and that part (a memory id: brain._lock_near). salt is the
-- workspace's secret of writes (brain._scope_salt), which a role computes for
-- its own workspace only: until migration 034 the key was drawn from the
-- workspace's id, and a member of another workspace could hold it in an idle
-- transaction and keep this workspace's writes of a kind and project waiting.
CREATE OR REPLACE FUNCTION brain._scope_key(salt text, kind text, project text, part bigint DEFAULT NULL)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT pg_catalog.hashtext(salt || '/' || kind || '/' || project
                               || CASE WHEN part IS NULL THEN '' ELSE '/' || part END)
$$;

-- The secret of a workspace's write locks: drawn from its channel
-- (brain._lock_key), for the current workspace only (BR020 otherwise).
CREATE OR REPLACE FUNCTION brain._scope_salt(ws bigint)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN brain._lock_key(ws, 'brain.write')::text;
END
$$;

-- Writers of one kind and project take turns while semantic dedup runs, so two
-- near-identical texts written at once cannot both miss each other.
CREATE OR REPLACE FUNCTION brain._lock_writes(kind text, project text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_xact_lock(hashtext('brain.write'),
                                 brain._scope_key(brain._scope_salt(brain.current_workspace()), kind, project))
$$;

-- A write of one memory with an embedding (brain._write) takes the lock of its
-- kind and project shared: such writers do not wait for one another there,
-- only for the batches and deferred dedup that take it exclusively
-- (brain._lock_writes); among themselves, brain._lock_near and the check at
-- commit (brain._commit_check) decide who waits.
CREATE OR REPLACE FUNCTION brain._lock_writes_shared(kind text, project text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_xact_lock_shared(hashtext('brain.write'),
                                        brain._scope_key(brain._scope_salt(brain.current_workspace()), kind, project))
$$;

-- The commits of single writes of one kind and project take turns behind
-- this lock, taken by brain._commit_check when the transaction commits and
-- held to the end of the commit: the check behind it sees every write of the
-- scope that committed before, so of two near-duplicates written at once the
-- second to commit finds the first. Only the check and the commit wait; the
-- lookup, the insert and the HNSW insert run in parallel.
CREATE OR REPLACE FUNCTION brain._lock_commits(kind text, project text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_advisory_xact_lock(hashtext('brain.write.commit'),
                                 brain._scope_key(brain._scope_salt(brain.current_workspace()), kind, project))
$$;

-- Writers whose semantic dedup could decide against each other usually take
-- turns before their lookup; others do not wait. A write of a kind and
-- project locks that scope's pair with each memory its lookup returned (ids,
-- from brain._near_write: the scope's nearest or, in a larger scope, the
-- space's nearest vectors whatever their memory, and the scope's near ones;
-- one key per pair, taken in key order, so lockers never wait in a cycle);
-- while the scope holds fewer than 5 memories (fewer than 5 ids), it also
-- locks the scope's key, so the first writers of a project take turns. Two
-- near-identical texts mostly lie near the same stored vectors, so the
-- second waits for the first and, looking again behind the locks
-- (brain._write does when a transaction ended meanwhile), sees it and gets
-- the result of a write made after it; two unrelated texts lock different
-- pairs, and so do two writes of different scopes near the same memories,
-- and neither waits. Nothing guarantees a shared neighbour (a space crowded
-- near one text and not the other, an approximate walk): what makes the race
-- certain is the check at commit (brain._commit_check); these locks make it
-- rare that the check has to refuse a write. Held to the end of the
-- transaction.
DROP FUNCTION IF EXISTS brain._lock_near(brain.embedding_space, public.vector, text, text, bigint);
CREATE OR REPLACE FUNCTION brain._lock_near(s brain.embedding_space, kind text, project text, ids bigint[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key integer;
    salt text := brain._scope_salt(s.workspace_id);
BEGIN
    IF (SELECT count(DISTINCT i) FROM unnest(ids) AS i) < 5 THEN
        PERFORM pg_advisory_xact_lock(hashtext('brain.write.few'), brain._scope_key(salt, kind, project));
    END IF;
    FOR key IN SELECT DISTINCT brain._scope_key(salt, kind, project, i)
               FROM unnest(ids) AS i ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(hashtext('brain.write.near'), key);
    END LOOP;
END
$$;

-- Whether a transaction other than this one has ended (committed or rolled
-- back) since the snapshot s was taken: what a query run now could see beyond
-- what one run in s saw. A transaction that ends advances the snapshot's xmax
-- or leaves the list of those in progress; this transaction's own ids are in
-- neither. A lookup whose snapshot nothing has ended since need not be run
-- again: it would find the same rows.
CREATE OR REPLACE FUNCTION brain._ended_since(s pg_snapshot)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_snapshot_xmax(n) <> pg_snapshot_xmax(s)
           OR EXISTS (SELECT FROM pg_snapshot_xip(s) AS x WHERE pg_visible_in_snapshot(x, n))
    FROM (SELECT pg_current_snapshot() AS n) AS t
$$;

-- _lock_writes for the kinds and projects of several memories (and for
-- also_kind / also_project), in one fixed order, so two callers that lock
-- several never wait for each other in a cycle.
CREATE OR REPLACE FUNCTION brain._lock_writes_of(ids bigint[], also_kind text DEFAULT NULL,
                                                 also_project text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT m.kind, m.project FROM brain.memory m
        WHERE m.workspace_id = brain.current_workspace() AND m.memory_id = ANY (ids)
        UNION
        SELECT also_kind, also_project WHERE also_kind IS NOT NULL
        ORDER BY 1, 2
    LOOP
        PERFORM brain._lock_writes(g.kind, g.project);
    END LOOP;
END
$$;
