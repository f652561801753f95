-- Secrets and stored-text safety (docs/security.md): the flag of memories whose
-- text reads like an instruction to the agent, the flag in search results, the
-- redaction report of observe_batch, and server logging that never writes a
-- refused statement or its parameters.

-- A flagged memory: the reasons brain.injection_signals gave at write time.
-- It stays out of the boot payload until a person confirms it.
ALTER TABLE brain.memory
    ADD COLUMN flag_reasons text[] NOT NULL DEFAULT '{}',
    ADD COLUMN flag_confirmed_at timestamptz,
    ADD COLUMN flag_confirmed_by text;
CREATE INDEX memory_flagged ON brain.memory (workspace_id, memory_id)
    WHERE flag_reasons <> '{}' AND flag_confirmed_at IS NULL;

-- Search shows the flag beside each result.
ALTER TYPE brain.search_result ADD ATTRIBUTE flag_reasons text[];

-- observe_batch and observe report what they redacted: a new result column.
DROP FUNCTION IF EXISTS brain.observe(text, text, text, text, text, text, text, bigint, jsonb,
                                      double precision[], text, boolean, boolean);
DROP FUNCTION IF EXISTS brain.observe_batch(text[], text, text, text, text, text[], text, bigint, jsonb[],
                                            double precision[], text, boolean, boolean);

-- An action item blocks the sessions of its project; a global one, which only
-- an admin of the workspace may raise, those of every project.
ALTER TABLE brain.action_item ADD COLUMN all_projects boolean NOT NULL DEFAULT false;
DROP FUNCTION IF EXISTS brain.create_action_item(text, text, text, bigint, timestamptz);

-- Action items are rate-limited per session: the count looks up a session's recent items.
CREATE INDEX action_item_created_by ON brain.action_item (workspace_id, created_by, created_at);

-- A refused statement is not written to the server log, nor the parameters of
-- any statement (both are superuser settings: set when a superuser migrates).
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER DATABASE %I SET log_min_error_statement = panic', current_database());
        EXECUTE format('ALTER DATABASE %I SET log_parameter_max_length_on_error = 0', current_database());
        EXECUTE format('ALTER DATABASE %I SET log_parameter_max_length = 0', current_database());
    END IF;
END
$$;
