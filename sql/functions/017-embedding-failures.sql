-- Texts the embedder refuses. `brain worker` reports each refusal here; the
-- database decides when the text is tried again (backoff) and when it is
-- parked (dead letter), so one bad text never blocks the queue behind it.

CREATE OR REPLACE FUNCTION brain.embedding_failed(
    memory_id bigint,
    error text,
    status integer DEFAULT NULL,
    embedding_space text DEFAULT NULL
)
RETURNS TABLE (attempts integer, parked boolean, next_attempt_at timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    ws bigint := brain.current_workspace();
    space brain.embedding_space := brain._resolve_space(embedding_failed.embedding_space);
    max_attempts integer := greatest(1, (brain.setting('embedding_max_attempts'))::integer);
    delay double precision := greatest(0, (brain.setting('embedding_retry_seconds'))::double precision);
    mem brain.memory;
    msg text;
    f brain.embedding_failure;
BEGIN
    SELECT * INTO mem FROM brain.memory m
    WHERE m.workspace_id = ws AND m.memory_id = embedding_failed.memory_id;
    IF NOT FOUND THEN
        PERFORM brain._raise('BR010', format('No memory #%s in this workspace.', embedding_failed.memory_id),
            jsonb_build_object('id', embedding_failed.memory_id),
            'Take ids from brain.pending_embeddings().');
    END IF;
    IF status IS NOT NULL AND status NOT BETWEEN 100 AND 599 THEN
        PERFORM brain._raise('BR009', 'status is an HTTP status (100 to 599).',
            jsonb_build_object('field', 'status', 'type', 'integer'), 'Pass the provider''s HTTP status, or NULL.');
    END IF;
    -- A short reason on one line, never the text itself: a provider may echo its input.
    msg := left(regexp_replace(coalesce(error, ''), '\s+', ' ', 'g'), 300);
    msg := replace(msg, brain.embedding_input(mem.headline, mem.body, brain._embedding_title(mem.origin, mem.metadata)),
                   '[the text]');
    msg := replace(msg, brain.embedding_input(mem.headline, mem.body), '[the text]');
    IF length(mem.headline) >= 8 THEN
        msg := replace(msg, mem.headline, '[the text]');
    END IF;
    msg := left(btrim(msg), 200);
    IF msg = '' THEN
        msg := 'no reason given';
    END IF;

    INSERT INTO brain.embedding_failure AS e
        (workspace_id, space_id, memory_id, attempts, last_status, last_error, next_attempt_at, parked_at)
    VALUES (ws, space.space_id, mem.memory_id, 1, status, msg,
            now() + make_interval(secs => delay),
            CASE WHEN max_attempts <= 1 THEN now() END)
    ON CONFLICT ON CONSTRAINT embedding_failure_pkey DO UPDATE
    SET attempts = e.attempts + 1,
        last_status = excluded.last_status,
        last_error = excluded.last_error,
        last_failed_at = now(),
        -- the wait doubles with each failure, at most a day
        next_attempt_at = now() + make_interval(secs => least(86400, delay * 2 ^ least(e.attempts, 20))),
        parked_at = CASE WHEN e.attempts + 1 >= max_attempts THEN coalesce(e.parked_at, now()) END
    RETURNING * INTO f;
    RETURN QUERY SELECT f.attempts, f.parked_at IS NOT NULL, f.next_attempt_at;
END
$$;
COMMENT ON FUNCTION brain.embedding_failed IS
    'Records that the embedder refused a memory''s text (HTTP status and a short reason, with the memory''s text cut out should the provider quote it): brain.pending_embeddings leaves it out for embedding_retry_seconds, doubled after each failure, and after embedding_max_attempts failures parks it until brain.retry_failed_embeddings. A successful brain.attach_embedding clears the record.';

CREATE OR REPLACE FUNCTION brain.failed_embeddings(embedding_space text DEFAULT NULL,
                                                   max_results integer DEFAULT 50)
RETURNS TABLE (memory_id bigint, headline text, attempts integer, last_status integer, last_error text,
               first_failed_at timestamptz, last_failed_at timestamptz, next_attempt_at timestamptz,
               parked boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT f.memory_id, m.headline, f.attempts, f.last_status, f.last_error, f.first_failed_at,
           f.last_failed_at, f.next_attempt_at, f.parked_at IS NOT NULL
    FROM brain.embedding_failure f
    JOIN brain.memory m ON m.workspace_id = f.workspace_id AND m.memory_id = f.memory_id
    WHERE f.workspace_id = brain.current_workspace()
      AND f.space_id = (brain._resolve_space(failed_embeddings.embedding_space)).space_id
    ORDER BY f.parked_at IS NULL, f.last_failed_at DESC, f.memory_id
    LIMIT greatest(max_results, 0)
$$;
COMMENT ON FUNCTION brain.failed_embeddings IS
    'The memories whose text the embedder of a space (the active one by default) refused: parked ones first, then those waiting for another try, with the attempts, the last HTTP status and reason.';

CREATE OR REPLACE FUNCTION brain.retry_failed_embeddings(embedding_space text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql  -- (the write guard trusts a PL/pgSQL frame: it names its schema)
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    released bigint;
BEGIN
    -- as the owner (migration 034: clients hold no DELETE)
    released := brain._delete_embedding_failures((brain._resolve_space(retry_failed_embeddings.embedding_space)).space_id);
    RETURN released;
END
$$;
COMMENT ON FUNCTION brain.retry_failed_embeddings IS
    'Forgets the failures of a space (the active one by default): parked and waiting texts are due again for `brain worker`, with a fresh count of attempts. The number of texts released.';
