-- Request keys: a write sent again after its acknowledgement was lost (a
-- failover, a connection cut during the COMMIT) is answered as the first time
-- and changes nothing. The writes that would apply twice (brain.rate,
-- brain.annotate, brain.create_action_item) take a request_key; the first
-- call's answer is kept here, in its workspace, until maintenance forgets it
-- after the setting request_key_hours (sql/functions/004c-write-requests.sql).
-- The key and the arguments are kept as SHA-256 digests: whatever a client
-- makes its key of, and whatever it sent, no text of it is kept.
CREATE TABLE brain.request_answer (
    workspace_id  bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace,
    key_hash      bytea NOT NULL CHECK (length(key_hash) = 32),
    function_name text NOT NULL,
    request_hash  bytea NOT NULL CHECK (length(request_hash) = 32),
    answer        jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, key_hash)
);
CREATE INDEX request_answer_created ON brain.request_answer (workspace_id, created_at);
COMMENT ON TABLE brain.request_answer IS
    'The answer of each write sent with a request key: the key''s digest, the function, the digest of its arguments as sent, the answer it returned. The same key with the same arguments is answered with it; with others, refused (BR023). Forgotten by maintenance after request_key_hours.';

-- Row-level security as on every tenant table (migration 013): reading needs
-- any membership, keeping an answer write access (the writes that keep one
-- need it). Clients change it only through the API (the write guard,
-- sql/functions/004b-write-guard.sql).
ALTER TABLE brain.request_answer ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.request_answer FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON brain.request_answer FOR SELECT
    USING (workspace_id = brain.current_workspace());
CREATE POLICY workspace_insert ON brain.request_answer FOR INSERT
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_update ON brain.request_answer FOR UPDATE
    USING (workspace_id = brain.current_workspace('write'))
    WITH CHECK (workspace_id = (SELECT brain.current_workspace('write')));
CREATE POLICY workspace_delete ON brain.request_answer FOR DELETE
    USING (workspace_id = brain.current_workspace('write'));
GRANT SELECT, INSERT, UPDATE, DELETE ON brain.request_answer TO brain_user;

-- The writes take the key as a last argument: the old signatures go
-- (sql/functions/ creates the new ones).
DROP FUNCTION IF EXISTS brain.rate(bigint, text, text);
DROP FUNCTION IF EXISTS brain.annotate(bigint, text, text);
DROP FUNCTION IF EXISTS brain.create_action_item(text, text, text, bigint, boolean);
