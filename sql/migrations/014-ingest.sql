-- Document ingest with provenance (sql/functions/020-ingest.sql, docs/ingest.md).
--
-- An ingested document is keyed by (source_system, project, source_ref): the
-- ref is the document's stable external id (a path relative to the ingest
-- root, a URL). Each of its chunks is one memory carrying that ref, its
-- ordinal in the document (source_chunk, from 1) and the hash of the whole
-- document as last ingested (source_hash). One active memory per chunk
-- position: the rule that makes re-ingest idempotent. Memories written by
-- remember and observe leave source_chunk NULL and are not bound by it.

ALTER TABLE brain.memory ADD COLUMN source_chunk integer CHECK (source_chunk >= 1);
COMMENT ON COLUMN brain.memory.source_chunk IS
    'An ingested chunk''s position in its document (1 = first); NULL for memories not written by brain.ingest_documents.';

CREATE UNIQUE INDEX memory_source_chunk ON brain.memory
    (workspace_id, source_system, project, source_ref, source_chunk)
    WHERE state = 'active' AND source_chunk IS NOT NULL;

-- A renamed document is found by its hash.
CREATE INDEX memory_source_hash ON brain.memory (workspace_id, source_system, project, source_hash)
    WHERE state = 'active' AND source_chunk IS NOT NULL;

-- brain.search filters by source_system and source_ref (exact, or every ref
-- under a folder: a prefix); text_pattern_ops serves the prefix in any collation.
CREATE INDEX memory_source_ref_prefix ON brain.memory (workspace_id, source_ref text_pattern_ops)
    WHERE source_ref IS NOT NULL;

-- brain.search takes source_system and source_ref.
DROP FUNCTION IF EXISTS brain.search(text, double precision[], text, text[], text[], text, text[], text[],
                                     timestamptz, timestamptz, boolean, boolean, boolean, timestamptz,
                                     integer, timestamptz);
