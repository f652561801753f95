-- Capture without the agent deciding: what an agent client's hooks (Claude
-- Code's SessionStart, UserPromptSubmit, PreCompact, SessionEnd) ask of the
-- database. The hook process parses the client's transcript into turns and
-- passes them here; which turns are new, how each is stored and the handoff
-- written from them are decided here. The memories a prompt brings up:
-- 019a-hooks-prompt.sql; sessions left uncaptured: 019b-hooks-uncaptured.sql.

-- Turns as observe_transcript and transcript_handoff take them: a JSON array
-- of {"ref": stable id, "role": "user" | "assistant", "text": ..., "at": time}.
-- BR009 for anything else.
CREATE OR REPLACE FUNCTION brain._check_turns(turns jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad bigint;
BEGIN
    IF turns IS NULL OR jsonb_typeof(turns) <> 'array' THEN
        PERFORM brain._raise('BR009', 'Turns are a JSON array of {ref, role, text, at} objects.',
            jsonb_build_object('turns', jsonb_typeof(turns)),
            'Example: [{"ref": "4f1c…", "role": "user", "text": "…", "at": "2026-01-01T10:00:00Z"}]');
    END IF;
    SELECT t.n INTO bad
    FROM jsonb_array_elements(turns) WITH ORDINALITY AS t(value, n)
    WHERE jsonb_typeof(t.value) <> 'object'
       OR jsonb_typeof(t.value->'ref') IS DISTINCT FROM 'string' OR brain.trim_space(t.value->>'ref') = ''
       OR t.value->>'role' IS NULL OR t.value->>'role' NOT IN ('user', 'assistant')
       OR jsonb_typeof(t.value->'text') IS DISTINCT FROM 'string'
       OR t.value ? 'at' AND jsonb_typeof(t.value->'at') NOT IN ('string', 'null')
    ORDER BY t.n
    LIMIT 1;
    IF bad IS NOT NULL THEN
        PERFORM brain._raise('BR009',
            'A turn is an object with a ref (a non-empty string), a role (user or assistant), a text and an optional at.',
            jsonb_build_object('turn', bad, 'fields', jsonb_build_array('ref', 'role', 'text', 'at'),
                               'allowed', jsonb_build_object('role', jsonb_build_array('user', 'assistant'))),
            'Pass only the user prompts and assistant replies of the transcript, each with its line''s id.');
    END IF;
END
$$;

-- The part of a turn's text that may be stored: without what a hook injected
-- (the <pybrain-context> the hooks wrap their context in, and the wrappers
-- agent clients put injected context in: <system-reminder>,
-- <user-prompt-submit-hook>, <session-start-hook>) and without what the person
-- marked <private>: a span closed in the text, all before a </private> that no
-- <private> opens there (the span began in an earlier message), and all after a
-- <private> not closed there.
CREATE OR REPLACE FUNCTION brain.capturable_text(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.trim_space(regexp_replace(regexp_replace(regexp_replace(coalesce(t, ''),
        '[ \t]*<(pybrain-context|system-reminder|user-prompt-submit-hook|session-start-hook|private)(\s[^>]*)?>.*?</\1\s*>\n?',
        '', 'gi'),
        '^.*</private\s*>\n?', '', 'i'),
        '[ \t]*<(pybrain-context|private)(\s[^>]*)?>.*$', '', 'i'))
$$;
COMMENT ON FUNCTION brain.capturable_text IS
    'The part of a turn''s text that may be stored (brain.observe_transcript, brain.transcript_handoff): without the context a hook injected (<pybrain-context>…</pybrain-context>, which the hooks wrap theirs in, and the wrappers clients put injected context in: <system-reminder>, <user-prompt-submit-hook>, <session-start-hook>) and without what the person wrapped in <private>…</private>: everything before a </private> that no <private> of the text opens (the span began in an earlier message), and everything after a <private> the text does not close. Trimmed; empty when nothing is left. A span that goes on over several messages of one speaker: brain.capturable_turns.';

-- Whether a text leaves a <private> span open (its last <private> or
-- </private> tag opens one), closes one (the last tag closes), or neither
-- (NULL: no tag).
CREATE OR REPLACE FUNCTION brain._private_left_open(t text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN tag IS NULL THEN NULL ELSE tag !~ '^</' END
    FROM (SELECT substring(coalesce(t, '') FROM '(?i)^.*(</?private(?:\s[^>]*)?>)') AS tag) AS x
$$;

-- The turns of a transcript with each text replaced by what may be stored of
-- it, spans of <private> closed across messages: a <private> one message of a
-- speaker leaves open hides that speaker's next messages up to the
-- </private> that closes it (the other speaker's messages between are theirs).
CREATE OR REPLACE FUNCTION brain.capturable_turns(turns jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_agg(
               CASE WHEN jsonb_typeof(value) = 'object'
                    THEN jsonb_set(value, '{text}', to_jsonb(brain.capturable_text(
                             CASE WHEN open_before THEN '<private>' ELSE '' END || coalesce(value->>'text', ''))))
                    ELSE value END
               ORDER BY n), '[]')
    FROM (SELECT value, n,
                 coalesce(lag(open_after) OVER (PARTITION BY role ORDER BY n), false) AS open_before
          FROM (SELECT value, n, role,
                       -- the state after a turn: its last tag's, else that of the last turn before it with one
                       coalesce(first_value(tag) OVER (PARTITION BY role, tagged ORDER BY n), false) AS open_after
                FROM (SELECT value, n, role, tag, count(tag) OVER (PARTITION BY role ORDER BY n) AS tagged
                      FROM (SELECT value, n, value->>'role' AS role, brain._private_left_open(value->>'text') AS tag
                            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(turns) = 'array' THEN turns ELSE '[]' END)
                                 WITH ORDINALITY AS x(value, n)) AS a) AS b) AS c) AS d
$$;
COMMENT ON FUNCTION brain.capturable_turns IS
    'The turns of a transcript (a JSON array of {ref, role, text, at}, in order) with each text replaced by what may be stored of it (brain.capturable_text), spans of <private> closed across messages: a <private> that one message of a speaker (role) leaves open hides that speaker''s next messages up to the </private> that closes it, and a </private> with no <private> in its message hides what precedes it there. What the hooks store, hand off and write in a snapshot (brain.observe_transcript, brain.transcript_handoff, brain.transcript_snapshot); a capture cut into batches passes its turns through it first, so a span open at a batch''s end stays open in the next.';

CREATE OR REPLACE FUNCTION brain.observe_transcript(
    turns jsonb,
    source_system text,
    project text DEFAULT '',
    source_agent text DEFAULT NULL,
    embeddings double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    check_only boolean DEFAULT false
)
RETURNS TABLE (item integer, ref text, chunk integer, action text, memory_id bigint, duplicate_of bigint,
               similarity real, embedding_input text, error_code text, error text, provisional boolean)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    ws bigint := brain.current_workspace();
    refs text[];
    texts text[];
    metas jsonb[];
BEGIN
    IF source_system IS NULL OR source_system !~ '^\S+$' THEN
        PERFORM brain._raise('BR009', 'A transcript is observed under its source_system: one word naming the client.',
            jsonb_build_object('field', 'source_system', 'type', 'one word'), 'For example claude-code.');
    END IF;
    PERFORM brain._check_turns(turns);
    -- what may be stored of each turn, <private> spans closed across messages
    turns := brain.capturable_turns(turns);
    -- One writer of a source system's turns at a time (a capture hook, the next session's
    -- start finishing what a hook left, and a replay may run at once): each sees what the
    -- one before it stored, so no turn is stored twice.
    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.observe_transcript ' || source_system));
    -- The new turns: text to store, and a ref no memory of this source system
    -- carries yet (stored, folded or forgotten: any state counts), once each.
    SELECT coalesce(array_agg(x.ref ORDER BY x.n), '{}'),
           coalesce(array_agg(format('%s: %s', initcap(x.role), brain.trim_space(x.text)) ORDER BY x.n), '{}'),
           coalesce(array_agg(jsonb_strip_nulls(jsonb_build_object('role', x.role, 'at', x.at, 'turn', x.ref))
                              ORDER BY x.n), '{}')
    INTO refs, texts, metas
    FROM (
        SELECT DISTINCT ON (t.value->>'ref') t.value->>'ref' AS ref, t.value->>'role' AS role,
               t.value->>'text' AS text, t.value->>'at' AS at, t.n
        FROM jsonb_array_elements(turns) WITH ORDINALITY AS t(value, n)
        WHERE t.value->>'text' <> ''
        ORDER BY t.value->>'ref', t.n
    ) AS x
    -- (a trajectory read from the transcript names the prompt that started its work as its
    -- source_ref: it is not that turn)
    WHERE NOT EXISTS (SELECT FROM brain.memory m
                      WHERE m.workspace_id = ws AND m.source_system = observe_transcript.source_system
                        AND m.source_ref = x.ref AND m.kind <> 'trajectory');
    IF cardinality(refs) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT o.item, refs[o.item], o.chunk, o.action, o.memory_id, o.duplicate_of, o.similarity, o.embedding_input,
           o.error_code, o.error, o.provisional
    FROM brain.observe_batch(texts => texts, kind => 'fact', project => coalesce(project, ''), origin => 'observed',
                             source_system => source_system, source_refs => refs, source_agent => source_agent,
                             metadata => metas, embeddings => embeddings, embedding_space => embedding_space,
                             check_only => check_only) AS o;
    IF NOT check_only THEN
        -- A reply that cites a memory (#id) the session was shown uses it (injection
        -- telemetry, as brain._note_cites counts a write's citations). A hook's
        -- connection names no session (brain._session()): the sessions are those
        -- booted for the client session the turn's ref starts with ("<client session>/…").
        INSERT INTO brain.injection_use (workspace_id, injection_id, memory_id, how)
        SELECT i.workspace_id, i.injection_id, c.id, 'cite'
        FROM (SELECT DISTINCT split_part(refs[k], '/', 1) AS client_session, m[1]::bigint AS id
              FROM generate_subscripts(refs, 1) AS k
              CROSS JOIN LATERAL regexp_matches(texts[k], '(?:^|[^[:alnum:]&])#([0-9]{1,18})\M', 'g') AS m
              WHERE metas[k]->>'role' = 'assistant' AND strpos(refs[k], '/') > 1) AS c
        JOIN brain.session s ON s.workspace_id = ws AND s.client_info->>'client_session' = c.client_session
        JOIN brain.injection i ON i.workspace_id = ws AND i.session_id = s.session_id AND c.id = ANY (i.items)
        ON CONFLICT DO NOTHING;
    END IF;
END
$$;
COMMENT ON FUNCTION brain.observe_transcript IS
    'Observes the turns of an agent session transcript (a JSON array of {ref, role user|assistant, text, at}) that no memory of source_system carries yet: each (its capturable text, brain.capturable_turns: no injected context, nothing marked <private>, spans closed across one speaker''s messages) as an observed fact "User: …" or "Assistant: …" with source_ref = the turn''s ref and metadata {role, at, turn}, through brain.observe_batch (the gate, chunks, dedup). Running it again on a longer transcript stores only the turns added since. A reply that cites a memory (#id) shown to a session booted for the turn''s client session (its ref''s part before the first /, client_info.client_session) counts as a use of it (brain.injection_use, how cite). check_only => true returns the chunks to embed; one row per chunk or refused turn, with the turn''s ref. Calls of one source system run one at a time (an advisory lock), so a turn is stored once even when two capture the same transcript at once; a capture may be cut into batches of turns, each its own call.';

-- A quoted turn for a handoff: cut to `chars`, or left out when it looks like it holds a secret.
CREATE OR REPLACE FUNCTION brain._handoff_quote(t text, chars integer)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN t IS NULL THEN NULL
        WHEN cardinality(brain.find_secrets(t)) > 0 THEN '(left out: it looks like it holds a secret)'
        WHEN length(brain.trim_space(t)) > chars THEN left(brain.trim_space(t), chars - 1) || '…'
        ELSE brain.trim_space(t)
    END
$$;

CREATE OR REPLACE FUNCTION brain.transcript_handoff(
    turns jsonb,
    event text,
    client text DEFAULT 'the agent',
    transcript text DEFAULT NULL
)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    quote integer := greatest(200, ((brain.setting('handoff_max_chars'))::integer - 400) / 2);
    n_user integer;
    n_assistant integer;
    last_user text;
    last_reply text;
    head text;
BEGIN
    PERFORM brain._check_turns(turns);
    PERFORM brain._require_text(event, 'BR009', 'Say what ended the session: the event of the hook that writes the handoff.',
        'For example: session end (logout), or compaction (auto).');
    -- What may be stored of each turn (brain.capturable_text) is what may be handed off.
    turns := brain.capturable_turns(turns);
    SELECT count(*) FILTER (WHERE t->>'role' = 'user' AND brain.trim_space(t->>'text') <> ''),
           count(*) FILTER (WHERE t->>'role' = 'assistant' AND brain.trim_space(t->>'text') <> '')
    INTO n_user, n_assistant
    FROM jsonb_array_elements(turns) AS t;
    IF n_user + n_assistant = 0 THEN
        RETURN NULL;  -- nothing to hand off: the last real handoff stays the one the next session gets
    END IF;
    SELECT t->>'text' INTO last_user FROM jsonb_array_elements(turns) WITH ORDINALITY AS x(t, n)
    WHERE t->>'role' = 'user' AND brain.trim_space(t->>'text') <> '' ORDER BY x.n DESC LIMIT 1;
    SELECT t->>'text' INTO last_reply FROM jsonb_array_elements(turns) WITH ORDINALITY AS x(t, n)
    WHERE t->>'role' = 'assistant' AND brain.trim_space(t->>'text') <> '' ORDER BY x.n DESC LIMIT 1;
    head := format('Written from the transcript of %s at %s: %s prompt%s and %s repl%s%s.',
                   coalesce(nullif(brain.trim_space(client), ''), 'the agent'), brain.trim_space(event),
                   n_user, CASE WHEN n_user = 1 THEN '' ELSE 's' END,
                   n_assistant, CASE WHEN n_assistant = 1 THEN 'y' ELSE 'ies' END,
                   CASE WHEN n_user + n_assistant > 0 AND transcript IS NOT NULL
                        THEN format(', observed as memories (source_ref %s/…)', transcript) ELSE '' END);
    RETURN concat_ws(E'\n', head,
                     'Last request: ' || brain._handoff_quote(last_user, quote),
                     'Last reply: ' || brain._handoff_quote(last_reply, quote));
END
$$;
COMMENT ON FUNCTION brain.transcript_handoff IS
    'The handoff a hook writes from a session transcript (turns as brain.observe_transcript takes them) when the session ends or is compacted: how many prompts and replies, the last request and the last reply (each cut to fit handoff_max_chars, left out when it looks like it holds a secret), of the turns'' brain.capturable_text (no injected context, nothing marked <private>). NULL when the turns hold no prompt and no reply: there is nothing to hand off.';

-- The snapshot a hook writes with its handoff (brain.end_session's snapshot,
-- shown by a boot after a gap and by brain.list_snapshots), from the same
-- turns and the same parts of them (brain.capturable_text): the request that
-- started the session as its summary, whether the last request was answered,
-- and that request as pending when it was not. The same turns give the same
-- snapshot (a compaction and the end hand off one).
CREATE OR REPLACE FUNCTION brain.transcript_snapshot(turns jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    roles text[];
    texts text[];
    first_user text;
    i integer;
BEGIN
    PERFORM brain._check_turns(turns);
    -- each turn's capturable text once (a long session has thousands)
    SELECT coalesce(array_agg(x.role ORDER BY x.n), '{}'), coalesce(array_agg(x.text ORDER BY x.n), '{}')
    INTO roles, texts
    FROM (SELECT t->>'role' AS role, t->>'text' AS text, n
          FROM jsonb_array_elements(brain.capturable_turns(turns)) WITH ORDINALITY AS y(t, n)) AS x
    WHERE x.text <> '';
    IF NOT 'user' = ANY (roles) THEN
        RETURN NULL;
    END IF;
    -- the first request that is not only an acknowledgement (else the first)
    FOR i IN 1 .. cardinality(roles) LOOP
        CONTINUE WHEN roles[i] <> 'user';
        first_user := coalesce(first_user, texts[i]);
        IF NOT brain._acknowledges(texts[i]) THEN
            first_user := texts[i];
            EXIT;
        END IF;
    END LOOP;
    RETURN jsonb_build_object(
        'summary', brain._handoff_quote(first_user, 300),
        'status', CASE WHEN roles[cardinality(roles)] = 'user' THEN 'the last request has no reply yet'
                       ELSE 'the last request was answered' END,
        'blockers', '[]'::jsonb,
        'pending', CASE WHEN roles[cardinality(roles)] = 'user'
                        THEN jsonb_build_array(brain._handoff_quote(texts[cardinality(texts)], 300))
                        ELSE '[]'::jsonb END);
END
$$;
COMMENT ON FUNCTION brain.transcript_snapshot IS
    'The snapshot a capture hook writes with its handoff, from the turns of a transcript (as brain.transcript_handoff takes them, of their brain.capturable_text): summary, the first request that is not only an acknowledgement; status, whether the last request was answered; pending, that request when it was not; blockers empty. Each text cut to 300 characters, left out when it looks like it holds a secret. NULL when the turns hold no request.';

-- The time of the last turn of a transcript's turns (as the hooks read them: `at`, the
-- line's timestamp); NULL when none says a readable one.
CREATE OR REPLACE FUNCTION brain._last_turn_at(turns jsonb)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    last_turn timestamptz;
BEGIN
    SELECT max((t->>'at')::timestamptz) INTO last_turn
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(turns) = 'array' THEN turns ELSE '[]' END) AS t
    WHERE jsonb_typeof(t) = 'object' AND t->>'at' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d';
    RETURN last_turn;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format OR invalid_time_zone_displacement_value THEN
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION brain.hand_off_transcript(
    turns jsonb,
    event text,
    source text,
    project text DEFAULT '',
    cwd text DEFAULT NULL,
    host text DEFAULT NULL,
    host_processes jsonb DEFAULT NULL,
    client text DEFAULT 'the agent',
    transcript text DEFAULT NULL,
    compaction boolean DEFAULT false,
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    clock timestamptz := brain._clock(hand_off_transcript.now);
    handoff text := brain.transcript_handoff(turns, event, client, transcript);
    live bigint;
    own bigint;
    result jsonb;
BEGIN
    -- The session booted for this client session (transcript: its id), live first: with
    -- two windows in one folder the seat alone would name the other window's.
    -- (It is ended before the sweep of gone sessions runs, once, on whichever path this
    -- takes: a hook written later from the spool runs when its client has gone.)
    IF transcript IS NOT NULL AND source ~ '^\S+$' THEN
        SELECT s.session_id INTO own FROM brain.session s
        WHERE s.workspace_id = brain.current_workspace() AND s.source = hand_off_transcript.source
          AND s.project = coalesce(hand_off_transcript.project, '')
          AND s.host IS NOT DISTINCT FROM hand_off_transcript.host
          AND s.client_info->>'client_session' = hand_off_transcript.transcript AND s.started_at <= clock
        ORDER BY s.status = 'active' DESC, s.started_at DESC, s.session_id DESC
        LIMIT 1;
    END IF;
    IF own IS NOT NULL THEN
        -- A capture hook written later from the spool runs when its client has gone: a
        -- sweep (this one's or another hook's) may have ended its session as a crash. The
        -- hook says how it ended: the label, and the time, are its.
        -- Its handoffs (this one, and one a later start wrote from its transcript when it
        -- took it for a crash) count from its last sign of life, as a crash's do
        -- (client_info.ended_late: the handoffs written until now): its last turn, or this
        -- hook's own time when it is earlier than the sweep's (a hook kept in the spool,
        -- written later), never the time a live hook that ran late reached the database.
        UPDATE brain.session s
        SET end_reason = 'ended', ended_at = least(s.ended_at, clock),
            heartbeat_at = least(greatest(s.heartbeat_at, brain._last_turn_at(turns),
                                          CASE WHEN clock < s.ended_at THEN clock END),
                                 s.ended_at, clock),
            client_info = s.client_info || jsonb_build_object(
                'ended_late', greatest(clock, brain._info_time(s.client_info, 'captured_at')))
        WHERE s.workspace_id = brain.current_workspace() AND s.session_id = own AND s.status = 'ended'
          AND s.end_reason IN ('process gone', 'heartbeat expired', 'rebooted');
    END IF;
    IF handoff IS NOT NULL THEN
        -- (brain.end_session stores no handoff the next session gets already)
        IF own IS NOT NULL THEN
            result := brain.end_session(own, handoff, brain.transcript_snapshot(turns), clock);
            -- then the others gone, as brain.end_session_of does (after: this one's client
            -- may be gone too, when the hook is written later from the spool)
            PERFORM brain._sweep_sessions(clock, host, host_processes);
        ELSIF transcript IS NOT NULL THEN
            -- A client session no start registered (its start hook never reached the
            -- database): its handoff is stored for no session, counting from now; no other
            -- session of the seat (another window's, a crashed one's) is ended or given it.
            PERFORM brain._sweep_sessions(clock, host, host_processes);
            result := brain._store_handoff(source, project, NULL, handoff, brain.transcript_snapshot(turns), clock);
        ELSE
            result := brain.end_session_of(source, project, cwd, host, handoff, brain.transcript_snapshot(turns),
                                           host_processes, clock);
        END IF;
        result := result || jsonb_build_object('handoff', handoff);
        IF compaction AND (result->>'ended')::boolean THEN
            -- The turns stored so far are compacted away: brain.prompt_context may bring them back.
            UPDATE brain.session s SET end_reason = 'compacted'
            WHERE s.workspace_id = brain.current_workspace() AND s.session_id = (result->>'session')::bigint;
        END IF;
        RETURN result;
    END IF;
    -- Nothing to hand off (no prompt, no reply, no transcript): the seat's live
    -- session ends without a handoff, and the last real one stays.
    IF source IS NULL OR source !~ '^\S+$' THEN
        PERFORM brain._raise('BR009', 'A session is found by its source: one word naming the client.',
            jsonb_build_object('field', 'source', 'type', 'one word'), 'The source the session was booted with, e.g. claude-code.');
    END IF;
    IF own IS NOT NULL THEN
        -- its own session, ended before the sweep (which would take its gone client for a
        -- crash); none when it has ended already: another window's is not this one's
        SELECT s.session_id INTO live FROM brain.session s
        WHERE s.workspace_id = brain.current_workspace() AND s.session_id = own AND s.status = 'active';
    ELSIF transcript IS NOT NULL THEN
        -- (a client session no start registered: no other session is its to end)
        PERFORM brain._sweep_sessions(clock, host, host_processes);
    ELSE
        PERFORM brain._sweep_sessions(clock, host, host_processes);
        SELECT s.session_id INTO live FROM brain.session s
        WHERE s.workspace_id = brain.current_workspace() AND s.source = hand_off_transcript.source
          AND s.project = coalesce(hand_off_transcript.project, '') AND s.cwd IS NOT DISTINCT FROM hand_off_transcript.cwd
          AND s.host IS NOT DISTINCT FROM hand_off_transcript.host AND s.status = 'active' AND s.started_at <= clock
        ORDER BY s.started_at DESC, s.session_id DESC
        LIMIT 1;
    END IF;
    IF live IS NOT NULL THEN
        result := brain.end_session(live, NULL, NULL, clock) || jsonb_build_object('handoff', NULL);
        IF live IS NOT DISTINCT FROM own THEN
            PERFORM brain._sweep_sessions(clock, host, host_processes);
        END IF;
        IF compaction THEN
            UPDATE brain.session s SET end_reason = 'compacted'
            WHERE s.workspace_id = brain.current_workspace() AND s.session_id = live;
        END IF;
        RETURN result;
    END IF;
    RETURN jsonb_build_object('session', NULL, 'ended', false, 'source', source, 'project', coalesce(project, ''),
                              'handoff', NULL);
END
$$;
COMMENT ON FUNCTION brain.hand_off_transcript IS
    'What a capture hook (PreCompact, SessionEnd) calls after observing a transcript''s turns: the handoff written from them (brain.transcript_handoff), with the snapshot written from them (brain.transcript_snapshot), ends the session booted for its client session (transcript), or, with no client session named, the seat''s session as brain.end_session_of would (a client session no start registered ends no other session: its handoff is stored for no session, counting from then), unless the next session of the project gets the same handoff already (unchanged: the same turns handed off at compaction and again at the end are stored once). With no prompt and no reply (an empty session, a missing transcript) there is nothing to hand off: the seat''s live session ends without one and the last real handoff stays. compaction => true (the PreCompact hook) ends the session with end_reason compacted: the turns stored up to then are no longer in front of the agent, and brain.prompt_context brings them back to it. Returns end_session_of''s answer and the handoff (NULL when none).';

-- The turns, answers and ages brain.prompt_context (019a-hooks-prompt.sql) reads.

-- Whether a prompt only asks: its text ends with a question mark and holds no
-- sentence that ends otherwise (a full stop or an exclamation mark before a
-- space, or a line break) before it. What such a prompt brings is in its
-- reply; a prompt that also states something ("I finished the book today.
-- Any suggestions?") carries what the person said in its own words.
CREATE OR REPLACE FUNCTION brain._only_asks(t text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT pg_catalog.right(pg_catalog.rtrim(t), 1) = '?'
       AND pg_catalog.rtrim(t) OPERATOR(pg_catalog.!~) '[.!][[:space:]]|\n'
$$;

-- Whether a memory is a captured prompt that only asks (brain._only_asks): its
-- words name nothing the store states.
CREATE OR REPLACE FUNCTION brain._only_asks_turn(metadata jsonb, headline text, body text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(metadata OPERATOR(pg_catalog.->>) 'role' OPERATOR(pg_catalog.=) 'user', false)
       AND brain._only_asks(pg_catalog.regexp_replace(coalesce(nullif(body, ''), headline), '^User: ', ''))
$$;

-- The text a prompt hook shows for a captured turn of a transcript (an
-- observed memory whose metadata has its role and turn, its source_ref
-- "<transcript>/<line>"): for a prompt, the reply that answers it (the last
-- assistant turn before the next prompt: the one after its tool calls), else
-- the turn itself; its chunks joined, on one line. NULL for other memories.
CREATE OR REPLACE FUNCTION brain._turn_answer(ws bigint, id bigint, OUT answer_id bigint, OUT answer text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m brain.memory;
    prefix text;
    next_prompt bigint;
BEGIN
    SELECT * INTO m FROM brain.memory x WHERE x.workspace_id = ws AND x.memory_id = id;
    IF NOT FOUND OR m.source_system IS NULL OR position('/' IN coalesce(m.source_ref, '')) = 0
       OR m.metadata->>'role' NOT IN ('user', 'assistant') OR NOT m.metadata ? 'turn' THEN
        RETURN;
    END IF;
    -- the transcript's memories: source_refs from "<transcript>/" up to "<transcript>0"
    -- ('/' + 1), compared byte by byte as memory_source_ref_prefix orders them
    prefix := regexp_replace(m.source_ref, '[^/]*$', '');
    answer_id := m.memory_id;
    IF m.metadata->>'role' = 'user' THEN
        SELECT min(x.memory_id) INTO next_prompt FROM brain.memory x
        WHERE x.workspace_id = ws AND x.source_ref ~>=~ prefix AND x.source_ref ~<~ (left(prefix, -1) || '0')
          AND x.source_system = m.source_system
          AND x.memory_id > m.memory_id AND x.metadata->>'role' = 'user' AND x.source_ref <> m.source_ref;
        SELECT x.memory_id INTO answer_id FROM brain.memory x
        WHERE x.workspace_id = ws AND x.source_ref ~>=~ prefix AND x.source_ref ~<~ (left(prefix, -1) || '0')
          AND x.source_system = m.source_system
          AND x.memory_id > m.memory_id AND x.memory_id < coalesce(next_prompt, 9223372036854775807)
          AND x.metadata->>'role' = 'assistant' AND x.state = 'active'
          AND NOT brain._is_flagged(x.flag_reasons, x.flag_confirmed_at)
        ORDER BY x.memory_id DESC
        LIMIT 1;
        IF answer_id IS NULL THEN
            answer_id := m.memory_id;  -- not answered (yet): the prompt itself
        END IF;
    END IF;
    SELECT regexp_replace(string_agg(coalesce(nullif(x.body, ''), x.headline), ' ' ORDER BY x.memory_id), '\s+', ' ', 'g')
    INTO answer
    FROM brain.memory x
    WHERE x.workspace_id = ws AND x.source_system = m.source_system
      AND x.source_ref = (SELECT y.source_ref FROM brain.memory y WHERE y.workspace_id = ws AND y.memory_id = answer_id)
      AND x.state = 'active' AND x.kind <> 'trajectory';
    answer_id := (SELECT min(x.memory_id) FROM brain.memory x
                  WHERE x.workspace_id = ws AND x.source_system = m.source_system AND x.state = 'active'
                    AND x.kind <> 'trajectory'
                    AND x.source_ref = (SELECT y.source_ref FROM brain.memory y
                                        WHERE y.workspace_id = ws AND y.memory_id = answer_id));
END
$$;

-- A captured turn's own text, its chunks joined on one line, and the id of its first chunk
-- (not a trajectory read from the transcript, which names the turn's prompt as its source).
CREATE OR REPLACE FUNCTION brain._turn_text(ws bigint, id bigint, OUT turn_id bigint, OUT text text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT min(x.memory_id),
           regexp_replace(string_agg(coalesce(nullif(x.body, ''), x.headline), ' ' ORDER BY x.memory_id), '\s+', ' ', 'g')
    FROM brain.memory m
    JOIN brain.memory x ON x.workspace_id = m.workspace_id AND x.source_system = m.source_system
                       AND x.source_ref = m.source_ref AND x.state = 'active' AND x.kind <> 'trajectory'
    WHERE m.workspace_id = ws AND m.memory_id = id AND m.source_ref IS NOT NULL
$$;

-- The prompt a captured reply answers: the last user turn of its transcript
-- before it, its chunks joined on one line, and the id of its first chunk. NULL
-- for other memories (a prompt, an authored memory, a turn without a transcript).
CREATE OR REPLACE FUNCTION brain._turn_prompt(ws bigint, id bigint, OUT prompt_id bigint, OUT text text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m brain.memory;
    prefix text;
BEGIN
    SELECT * INTO m FROM brain.memory x WHERE x.workspace_id = ws AND x.memory_id = id;
    IF NOT FOUND OR m.source_system IS NULL OR position('/' IN coalesce(m.source_ref, '')) = 0
       OR m.metadata->>'role' IS DISTINCT FROM 'assistant' OR NOT m.metadata ? 'turn' THEN
        RETURN;
    END IF;
    -- the transcript's memories, as brain._turn_answer reads them
    prefix := regexp_replace(m.source_ref, '[^/]*$', '');
    SELECT x.memory_id INTO prompt_id FROM brain.memory x
    WHERE x.workspace_id = ws AND x.source_ref ~>=~ prefix AND x.source_ref ~<~ (left(prefix, -1) || '0')
      AND x.source_system = m.source_system AND x.memory_id < m.memory_id
      AND x.metadata->>'role' = 'user' AND x.state = 'active' AND x.kind <> 'trajectory'
      AND NOT brain._is_flagged(x.flag_reasons, x.flag_confirmed_at)
    ORDER BY x.memory_id DESC
    LIMIT 1;
    IF prompt_id IS NOT NULL THEN
        SELECT t.turn_id, t.text INTO prompt_id, text FROM brain._turn_text(ws, prompt_id) AS t;
    END IF;
END
$$;

-- A line's age for an agent: "3d ago", of the memory's creation.
CREATE OR REPLACE FUNCTION brain._line_age(ws bigint, id bigint)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain._age_text(m.created_at) || ' ago' FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = id
$$;
