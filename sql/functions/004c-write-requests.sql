-- Request keys (migration 030): a write sent again with the key of a call that
-- committed is answered with that call's answer, and changes nothing.
--
-- A client that lost the answer to a write (a failover, a connection cut while
-- its COMMIT was under way) cannot know whether it took effect. The writes that
-- would apply twice when sent again (brain.rate, brain.annotate,
-- brain.create_action_item) take a request_key. Such a write first calls
-- brain._request_answer, before it reads or locks anything: NULL when the key is
-- new in the workspace, which this transaction then holds (a concurrent call
-- with the same key waits at its insert until this one ends, then finds the
-- answer); else the answer kept for it, which the write returns as it is. Its
-- last step is brain._keep_answer. A call that fails keeps nothing: its
-- transaction takes the key back with everything else. Keys are per workspace
-- (row-level security, and the key's digest is the second column of the primary
-- key), so a key another workspace used is a new key here. Maintenance forgets a
-- key after request_key_hours (brain.maintain).

-- The answer kept for request_key, or NULL when the key is new (NULL too for no
-- key: the write goes on as without one). The same key with another function or
-- other arguments (compared as sent: jsonb of the write's arguments) is BR023.
CREATE OR REPLACE FUNCTION brain._request_answer(request_key text, function_name text, arguments jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint;
    key_digest bytea;
    request_digest bytea := sha256(convert_to(arguments::text, 'UTF8'));
    kept record;
BEGIN
    IF request_key IS NULL THEN
        RETURN NULL;
    END IF;
    -- (the key itself is never repeated: a client may make it of anything)
    IF length(request_key) > 255 OR brain.trim_space(request_key) = '' OR request_key ~ '[[:cntrl:]]' THEN
        PERFORM brain._raise('BR009', 'A request_key is 1 to 255 characters, not blank, without control characters.',
            jsonb_build_object('field', 'request_key', 'characters', length(request_key)),
            'Make a new key (a UUID) for each request, and send a request again with its own key.');
    END IF;
    ws := brain.current_workspace('write');
    key_digest := sha256(convert_to(request_key, 'UTF8'));
    INSERT INTO brain.request_answer (workspace_id, key_hash, function_name, request_hash)
    VALUES (ws, key_digest, _request_answer.function_name, request_digest)
    ON CONFLICT (workspace_id, key_hash) DO NOTHING;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    SELECT * INTO kept FROM brain.request_answer r WHERE r.workspace_id = ws AND r.key_hash = key_digest;
    IF kept.function_name IS DISTINCT FROM _request_answer.function_name OR kept.request_hash <> request_digest THEN
        PERFORM brain._raise('BR023',
            CASE WHEN kept.function_name = _request_answer.function_name
                 THEN format('This request_key was sent with another request: brain.%s with other arguments.',
                             kept.function_name)
                 ELSE format('This request_key was sent with another request: brain.%s, not brain.%s.',
                             kept.function_name, _request_answer.function_name) END,
            jsonb_build_object('function', kept.function_name, 'first_sent', kept.created_at),
            'A request key names one request: send the same arguments again to get its answer, '
            'or a new key (a UUID) with a new request.');
    END IF;
    RETURN kept.answer;
END
$$;

-- The answer of the write that holds request_key (brain._request_answer), kept
-- for the same request sent again. Nothing without a key.
-- (The statements that write here name no function of schema brain: the write
-- guard reads the call stack, statements' texts included, for a public one.)
CREATE OR REPLACE FUNCTION brain._keep_answer(request_key text, answer jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    key_digest bytea := sha256(convert_to(request_key, 'UTF8'));
BEGIN
    IF request_key IS NULL THEN
        RETURN;
    END IF;
    UPDATE brain.request_answer r SET answer = _keep_answer.answer
    WHERE r.workspace_id = ws AND r.key_hash = key_digest;
END
$$;

-- Kept answers older than request_key_hours at clock (maintenance's), forgotten;
-- how many.
CREATE OR REPLACE FUNCTION brain._forget_request_keys(clock timestamptz)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    before timestamptz := brain._clock(clock)
                          - make_interval(hours => (brain.setting('request_key_hours'))::integer);
BEGIN
    RETURN brain._delete_request_answers(before);  -- as the owner (migration 034)
END
$$;
