-- The lexical leg's word frequencies, per workspace (issue 28, and issue 30's
-- cross-tenant signal).
--
-- brain.lexical_terms skipped counting words the planner's statistics listed
-- as common, and estimated words past its counting cap from them. Those
-- statistics are the whole table's: a member of one workspace read, through
-- the idf and the estimate, how often a word only another workspace holds
-- appears. brain.analyze_lexemes fills this table from a sample of one
-- workspace's memories (brain.maintain refreshes it as the workspace grows),
-- and the leg reads nothing else.
CREATE TABLE brain.lexeme_stat (
    workspace_id bigint NOT NULL DEFAULT brain.current_workspace() REFERENCES brain.workspace ON DELETE CASCADE,
    lexeme       text NOT NULL,
    share        double precision NOT NULL CHECK (share > 0 AND share <= 1),
    PRIMARY KEY (workspace_id, lexeme)
);
COMMENT ON TABLE brain.lexeme_stat IS
    'The most common lexemes of a workspace''s memories and the share of its memories holding each, from a sample (brain.analyze_lexemes).';

CREATE TABLE brain.lexeme_sample (
    workspace_id bigint PRIMARY KEY DEFAULT brain.current_workspace() REFERENCES brain.workspace ON DELETE CASCADE,
    docs         bigint NOT NULL,   -- the workspace's memories when sampled
    sampled      integer NOT NULL,  -- memories read
    least_share  double precision NOT NULL,  -- a lexeme not listed is held by at most this share
    analyzed_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE brain.lexeme_sample IS
    'When brain.analyze_lexemes last sampled a workspace, how many memories it read, and the share below which lexemes are not listed.';

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['lexeme_stat', 'lexeme_sample'] LOOP
        EXECUTE format('ALTER TABLE brain.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE brain.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY workspace_isolation ON brain.%I FOR SELECT'
                       ' USING (workspace_id = brain.current_workspace())', t);
        EXECUTE format('CREATE POLICY workspace_insert ON brain.%I FOR INSERT'
                       ' WITH CHECK (workspace_id = (SELECT brain.current_workspace(''write'')))', t);
        EXECUTE format('CREATE POLICY workspace_update ON brain.%I FOR UPDATE'
                       ' USING (workspace_id = brain.current_workspace(''write''))'
                       ' WITH CHECK (workspace_id = (SELECT brain.current_workspace(''write'')))', t);
        EXECUTE format('CREATE POLICY workspace_delete ON brain.%I FOR DELETE'
                       ' USING (workspace_id = brain.current_workspace(''write''))', t);
        -- written only by brain.analyze_lexemes (as the owner)
        EXECUTE format('GRANT SELECT ON brain.%I TO brain_user', t);
    END LOOP;
END
$$;
