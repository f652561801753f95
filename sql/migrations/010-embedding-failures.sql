-- Embedding failures: a memory whose text the provider refuses (or answers
-- with a vector that is not finite) is retried with backoff and, after
-- setting embedding_max_attempts tries, parked, so the rows behind it are
-- embedded meanwhile. One row per memory and embedding space; a successful
-- brain.attach_embedding deletes it.

CREATE TABLE brain.embedding_failure (
    workspace_id    bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    space_id        bigint NOT NULL,
    memory_id       bigint NOT NULL,
    attempts        integer NOT NULL CHECK (attempts > 0),
    last_status     integer,
    last_error      text NOT NULL,
    first_failed_at timestamptz NOT NULL DEFAULT now(),
    last_failed_at  timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL,
    parked_at       timestamptz,
    PRIMARY KEY (workspace_id, space_id, memory_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, space_id) REFERENCES brain.embedding_space ON DELETE CASCADE
);
-- pending_embeddings looks a memory up by (workspace, space, memory): the key; a
-- memory's deletion (prune) finds its records by (workspace, memory): this index.
CREATE INDEX embedding_failure_memory ON brain.embedding_failure (workspace_id, memory_id);

ALTER TABLE brain.embedding_failure ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.embedding_failure
    USING (workspace_id = brain.current_workspace())
    WITH CHECK (workspace_id = brain.current_workspace());
GRANT SELECT, INSERT, UPDATE, DELETE ON brain.embedding_failure TO brain_user;
