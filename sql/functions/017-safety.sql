-- Flagged memories: text that reads like an instruction to the agent
-- (brain.injection_signals) is stored with its reasons and kept out of the
-- boot payload until a person confirms it.

CREATE OR REPLACE FUNCTION brain.list_flagged(include_confirmed boolean DEFAULT false, max_results integer DEFAULT 50)
RETURNS TABLE (id bigint, kind text, project text, origin text, headline text, flag_reasons text[],
               confirmed_at timestamptz, confirmed_by text, created_at timestamptz)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.kind, m.project, m.origin, m.headline, m.flag_reasons, m.flag_confirmed_at,
           m.flag_confirmed_by, m.created_at
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND cardinality(m.flag_reasons) > 0
      AND m.state = 'active'
      AND (include_confirmed OR m.flag_confirmed_at IS NULL)
    ORDER BY m.created_at DESC, m.memory_id DESC
    LIMIT max_results
$$;
COMMENT ON FUNCTION brain.list_flagged IS
    'Active memories flagged as possible instructions to the agent, with their reasons, newest first: those waiting for a person (and the confirmed ones with include_confirmed).';

CREATE OR REPLACE FUNCTION brain.confirm_flagged(id bigint, source text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mem brain.memory := brain._get_memory(id, lock => true);
BEGIN
    IF cardinality(mem.flag_reasons) = 0 THEN
        PERFORM brain._raise('BR011', format('Memory #%s is not flagged.', mem.memory_id),
            jsonb_build_object('id', mem.memory_id), 'Nothing to do.');
    END IF;
    UPDATE brain.memory m
    SET flag_confirmed_at = pg_catalog.now(),
        flag_confirmed_by = coalesce(nullif(source, ''), nullif(current_setting('brain.actor', true), ''), session_user)
    WHERE m.workspace_id = mem.workspace_id AND m.memory_id = mem.memory_id;
    PERFORM brain._audit(mem.memory_id, 'confirm', source, jsonb_build_object('confirmed_flag', mem.flag_reasons));
    RETURN jsonb_build_object('id', mem.memory_id, 'flag_reasons', mem.flag_reasons, 'confirmed', true);
END
$$;
COMMENT ON FUNCTION brain.confirm_flagged IS
    'A person confirms a flagged memory: it is data, not an attack. It then enters the boot payload like any other.';
