-- Vectors written in bulk wait outside the HNSW index until brain.index_vectors
-- covers them. Inserting one vector into an HNSW index of 100k costs about
-- 2.5 ms; building the index from the table costs about 0.3 ms a vector
-- (docs/scaling.md), so a large batch is cheaper to index by a rebuild.
--
-- A space's index holds the vectors whose ingest_seq is at most the space's
-- indexed_through. Vectors written one at a time have ingest_seq 0 and go
-- straight into the index; a large observe_batch gives its vectors the next
-- value of brain.embedding_ingest_seq, above every indexed_through, and
-- searches rank them exactly until the index takes them in. The vectors a
-- rebuild took in are compared with older memories (near-identical dedup)
-- afterwards: those with ingest_seq above folded_through still are owed that.

ALTER TABLE brain.embedding ADD COLUMN ingest_seq bigint NOT NULL DEFAULT 0 CHECK (ingest_seq >= 0);
ALTER TABLE brain.embedding_space
    ADD COLUMN indexed_through bigint NOT NULL DEFAULT 0 CHECK (indexed_through >= 0),
    ADD COLUMN folded_through bigint NOT NULL DEFAULT 0 CHECK (folded_through <= indexed_through);
COMMENT ON COLUMN brain.embedding.ingest_seq IS
    '0: in the space''s HNSW index from the start. Otherwise the bulk write that stored it: in the index once the space''s indexed_through reaches it.';
COMMENT ON COLUMN brain.embedding_space.indexed_through IS
    'The space''s HNSW index holds the vectors with ingest_seq up to this value; later ones are ranked exactly.';
COMMENT ON COLUMN brain.embedding_space.folded_through IS
    'Vectors with ingest_seq up to this value have had their near-identical dedup.';

-- Only brain.index_vectors moves the watermarks (through SECURITY DEFINER helpers).
REVOKE UPDATE ON brain.embedding_space FROM brain_user;
GRANT UPDATE (near_identical, related, state, activated_at) ON brain.embedding_space TO brain_user;

CREATE SEQUENCE brain.embedding_ingest_seq;
GRANT USAGE ON SEQUENCE brain.embedding_ingest_seq TO brain_user;

-- The vectors not yet indexed, found by range (ingest_seq > indexed_through).
CREATE INDEX embedding_unindexed ON brain.embedding (workspace_id, space_id, ingest_seq) WHERE ingest_seq > 0;

-- brain._nearest_older gains a parameter (sql/functions/003-embedding.sql).
DROP FUNCTION IF EXISTS brain._nearest_older(brain.embedding_space, bigint[], text, text);

-- Every existing space's index gets the predicate that leaves unindexed
-- vectors out: built anew, in memory when it fits.
SET LOCAL maintenance_work_mem = '256MB';
DO $$
DECLARE
    s record;
BEGIN
    FOR s IN SELECT es.space_id, es.dims FROM brain.embedding_space es LOOP
        EXECUTE format('DROP INDEX IF EXISTS brain.%I', 'embedding_hnsw_' || s.space_id);
        EXECUTE format(
            'CREATE INDEX %I ON brain.embedding USING hnsw ((embedding::public.vector(%s)) public.vector_cosine_ops)'
            ' WITH (m = 16, ef_construction = 128) WHERE space_id = %s AND ingest_seq <= 0',
            'embedding_hnsw_' || s.space_id, s.dims, s.space_id);
    END LOOP;
END
$$;
