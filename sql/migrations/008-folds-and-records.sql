-- What a user stores stays findable (docs/ranking.md, docs/sql-api.md):
--
-- * A near-identical fold keeps what it folds. Each fold leaves a row in
--   brain.memory_fold holding the item whose text no longer is the
--   survivor's: its headline, body, metadata, provenance and time, so a
--   memory's text, metadata and provenance always describe one item and
--   recall of the survivor lists what was folded into it.
-- * Folding of observed and artifact rows can be switched off per embedding
--   space (fold_observed) and per write (brain.memory.foldable).
-- * Observed and artifact memories are records, not beliefs: they do not go
--   dormant unless the setting episodic_decay says so (dormant_after NULL).
-- * Writes take a policy for a related hit (on_related), so remember,
--   supersede and observe_batch change signature.

CREATE TABLE brain.memory_fold (
    workspace_id     bigint NOT NULL DEFAULT brain.current_workspace(),
    fold_id          bigint GENERATED ALWAYS AS IDENTITY,
    memory_id        bigint NOT NULL,
    folded_memory_id bigint,
    displaced        boolean NOT NULL DEFAULT false,
    headline         text NOT NULL,
    body             text NOT NULL DEFAULT '',
    metadata         jsonb NOT NULL DEFAULT '{}',
    source_agent     text,
    session_id       bigint,
    source_system    text,
    source_ref       text,
    source_hash      text,
    item_created_at  timestamptz NOT NULL,
    similarity       real NOT NULL,
    folded_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, fold_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory (workspace_id, memory_id) ON DELETE CASCADE
);
CREATE INDEX memory_fold_memory ON brain.memory_fold (workspace_id, memory_id);
CREATE INDEX memory_fold_folded ON brain.memory_fold (workspace_id, folded_memory_id)
    WHERE folded_memory_id IS NOT NULL;
COMMENT ON TABLE brain.memory_fold IS
    'One row per near-identical fold: the item whose text is no longer the survivor''s (memory_id). displaced: the survivor''s own earlier text, replaced by a longer folded one; folded_memory_id: the memory the item was stored as, if it had one.';
ALTER TABLE brain.memory_fold ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.memory_fold
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());
GRANT SELECT, INSERT ON brain.memory_fold TO brain_user;

ALTER TABLE brain.embedding_space ADD COLUMN fold_observed boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN brain.embedding_space.fold_observed IS
    'Near-identical folding of observed and artifact rows in this space; off: they are deduplicated exactly only.';
GRANT UPDATE (fold_observed) ON brain.embedding_space TO brain_user;

ALTER TABLE brain.memory ADD COLUMN foldable boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN brain.memory.foldable IS
    'false when the write that stored it switched near-identical folding off: no later dedup folds it.';

-- Records stored before this release went dormant like beliefs: no longer.
UPDATE brain.memory SET dormant_after = NULL
WHERE origin IN ('observed', 'artifact') AND dormant_after IS NOT NULL;

DROP FUNCTION IF EXISTS brain._write(text, text, text, text, text, text, text, text[], double precision, boolean,
    jsonb, jsonb, double precision[], text, text, bigint, text, text, text, timestamptz, double precision, text,
    integer, timestamptz, text, text, text, text, text[], text, boolean, bigint);
DROP FUNCTION IF EXISTS brain.remember(text, text, text, text, text, text, text, text[], double precision, boolean,
    jsonb, jsonb, double precision[], text, text, bigint, text, text, text, timestamptz, double precision, text,
    integer, timestamptz, text, text, text, text, text[], text, boolean);
DROP FUNCTION IF EXISTS brain.supersede(bigint, text, text, text, text, boolean, double precision[], text, text,
    text, text[], jsonb, jsonb, bigint, boolean);
DROP FUNCTION IF EXISTS brain.observe(text, text, text, text, text, text, text, bigint, jsonb,
    double precision[], text, boolean);
DROP FUNCTION IF EXISTS brain.observe_batch(text[], text, text, text, text, text[], text, bigint, jsonb[],
    double precision[], text, boolean);
DROP FUNCTION IF EXISTS brain._keep_longer(bigint, text, text, text, text, text[], public.vector, bigint, real,
    text, jsonb);
DROP FUNCTION IF EXISTS brain._fold_into(brain.memory, bigint, real, public.vector, bigint);
-- A write's dedup looks at its nearest few candidates (brain._nearest_k), not the nearest one.
DROP FUNCTION IF EXISTS brain._nearest(brain.embedding_space, public.vector, text, text, bigint);
