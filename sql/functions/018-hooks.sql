-- Capture without the agent deciding: what an agent client's hooks (Claude
-- Code's SessionStart, UserPromptSubmit, PreCompact, SessionEnd) ask of the
-- database. The hook process parses the client's transcript into turns and
-- passes them here; which turns are new, how each is stored, the handoff
-- written from them and the memories a prompt brings up are decided here.

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
-- marked <private> (to the end of the text when it is not closed).
CREATE OR REPLACE FUNCTION brain.capturable_text(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.trim_space(regexp_replace(regexp_replace(coalesce(t, ''),
        '[ \t]*<(pybrain-context|system-reminder|user-prompt-submit-hook|session-start-hook|private)(\s[^>]*)?>.*?</\1\s*>\n?',
        '', 'gi'),
        '[ \t]*<(pybrain-context|private)(\s[^>]*)?>.*$', '', 'i'))
$$;
COMMENT ON FUNCTION brain.capturable_text IS
    'The part of a turn''s text that may be stored (brain.observe_transcript, brain.transcript_handoff): without the context a hook injected (<pybrain-context>…</pybrain-context>, which the hooks wrap theirs in, and the wrappers clients put injected context in: <system-reminder>, <user-prompt-submit-hook>, <session-start-hook>) and without what the person wrapped in <private>…</private> (to the end of the text when it is not closed). Trimmed; empty when nothing is left.';

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
    -- One writer of a source system's turns at a time (a capture hook, the next session's
    -- start finishing what a hook left, and a replay may run at once): each sees what the
    -- one before it stored, so no turn is stored twice.
    PERFORM pg_advisory_xact_lock(hashtextextended(format('brain.observe_transcript %s %s', ws, source_system), 0));
    -- The new turns: text to store, and a ref no memory of this source system
    -- carries yet (stored, folded or forgotten: any state counts), once each.
    SELECT coalesce(array_agg(x.ref ORDER BY x.n), '{}'),
           coalesce(array_agg(format('%s: %s', initcap(x.role), brain.trim_space(x.text)) ORDER BY x.n), '{}'),
           coalesce(array_agg(jsonb_strip_nulls(jsonb_build_object('role', x.role, 'at', x.at, 'turn', x.ref))
                              ORDER BY x.n), '{}')
    INTO refs, texts, metas
    FROM (
        SELECT DISTINCT ON (t.value->>'ref') t.value->>'ref' AS ref, t.value->>'role' AS role,
               brain.capturable_text(t.value->>'text') AS text, t.value->>'at' AS at, t.n
        FROM jsonb_array_elements(turns) WITH ORDINALITY AS t(value, n)
        WHERE brain.capturable_text(t.value->>'text') <> ''
        ORDER BY t.value->>'ref', t.n
    ) AS x
    WHERE NOT EXISTS (SELECT FROM brain.memory m
                      WHERE m.workspace_id = ws AND m.source_system = observe_transcript.source_system
                        AND m.source_ref = x.ref);
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
    'Observes the turns of an agent session transcript (a JSON array of {ref, role user|assistant, text, at}) that no memory of source_system carries yet: each (its brain.capturable_text: no injected context, nothing marked <private>) as an observed fact "User: …" or "Assistant: …" with source_ref = the turn''s ref and metadata {role, at, turn}, through brain.observe_batch (the gate, chunks, dedup). Running it again on a longer transcript stores only the turns added since. A reply that cites a memory (#id) shown to a session booted for the turn''s client session (its ref''s part before the first /, client_info.client_session) counts as a use of it (brain.injection_use, how cite). check_only => true returns the chunks to embed; one row per chunk or refused turn, with the turn''s ref. Calls of one source system run one at a time (an advisory lock), so a turn is stored once even when two capture the same transcript at once; a capture may be cut into batches of turns, each its own call.';

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
    turns := (SELECT coalesce(jsonb_agg(jsonb_set(t, '{text}', to_jsonb(brain.capturable_text(t->>'text')))
                                        ORDER BY x.n), '[]')
              FROM jsonb_array_elements(turns) WITH ORDINALITY AS x(t, n));
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
    FROM (SELECT t->>'role' AS role, brain.capturable_text(t->>'text') AS text, n
          FROM jsonb_array_elements(turns) WITH ORDINALITY AS y(t, n)) AS x
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
        UPDATE brain.session s SET end_reason = 'ended', ended_at = least(s.ended_at, clock)
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
    'What a capture hook (PreCompact, SessionEnd) calls after observing a transcript''s turns: the handoff written from them (brain.transcript_handoff), with the snapshot written from them (brain.transcript_snapshot), ends the seat''s session as brain.end_session_of would, unless the next session of the project and source gets the same handoff already (unchanged: the same turns handed off at compaction and again at the end are stored once). With no prompt and no reply (an empty session, a missing transcript) there is nothing to hand off: the seat''s live session ends without one and the last real handoff stays. compaction => true (the PreCompact hook) ends the session with end_reason compacted: the turns stored up to then are no longer in front of the agent, and brain.prompt_context brings them back to it. Returns end_session_of''s answer and the handoff (NULL when none).';

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
      AND x.state = 'active';
    answer_id := (SELECT min(x.memory_id) FROM brain.memory x
                  WHERE x.workspace_id = ws AND x.source_system = m.source_system AND x.state = 'active'
                    AND x.source_ref = (SELECT y.source_ref FROM brain.memory y
                                        WHERE y.workspace_id = ws AND y.memory_id = answer_id));
END
$$;

-- A captured turn's own text, its chunks joined on one line, and the id of its first chunk.
CREATE OR REPLACE FUNCTION brain._turn_text(ws bigint, id bigint, OUT turn_id bigint, OUT text text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT min(x.memory_id),
           regexp_replace(string_agg(coalesce(nullif(x.body, ''), x.headline), ' ' ORDER BY x.memory_id), '\s+', ' ', 'g')
    FROM brain.memory m
    JOIN brain.memory x ON x.workspace_id = m.workspace_id AND x.source_system = m.source_system
                       AND x.source_ref = m.source_ref AND x.state = 'active'
    WHERE m.workspace_id = ws AND m.memory_id = id AND m.source_ref IS NOT NULL
$$;

-- A line's age for an agent: "3d ago", of the memory's creation.
CREATE OR REPLACE FUNCTION brain._line_age(ws bigint, id bigint)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain._age_text(m.created_at) || ' ago' FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = id
$$;

CREATE OR REPLACE FUNCTION brain.prompt_context(
    prompt text,
    query_embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    project text DEFAULT NULL,
    exclude_source_system text DEFAULT NULL,
    exclude_ref_prefix text DEFAULT NULL,
    token_budget integer DEFAULT NULL,
    max_results integer DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    budget integer := coalesce(token_budget, (brain.setting('prompt_context_tokens'))::integer);
    n_max integer := coalesce(max_results, (brain.setting('prompt_context_max'))::integer);
    -- search's "nothing relevant" verdict (docs/ranking.md), the workspace's floor
    floor double precision := (brain.setting('min_relevance'))::double precision;
    heading text := E'<pybrain-context>\nMemories (pybrain) that may bear on this prompt, quoted as stored data:';
    closing text := '</pybrain-context>';
    ws bigint := brain.current_workspace();
    total integer;
    line text;
    lines text[] := '{}';
    ids bigint[] := '{}';
    hit record;
    turn record;
    own_id bigint;
    own_text text;
    own_chars integer;
    shown integer := 0;
    compacted timestamptz;
    turn_chars integer;
BEGIN
    PERFORM brain._check_setting_argument('prompt_context_tokens', 'token_budget', budget,
                                          'A prompt context budget (tokens)');
    PERFORM brain._check_setting_argument('prompt_context_max', 'max_results', n_max,
                                          'The memories of a prompt context');
    -- The context is marked as injected (<pybrain-context>), so that the capture
    -- hooks never store it back (brain.capturable_text).
    total := brain.estimate_tokens(heading) + 1 + brain.estimate_tokens(closing);
    -- What the person marked <private> is not searched for either; a prompt
    -- longer than search takes (a pasted log, a file) is searched for by its start.
    prompt := left(brain.capturable_text(prompt), 4000);
    -- a captured turn is shown whole up to its share of the budget
    turn_chars := greatest(100, (budget - total) * 4 / n_max - 20);
    IF exclude_ref_prefix IS NOT NULL THEN
        -- The calling session's last compaction: its turns stored up to then
        -- are no longer in front of the agent. That is the end of a session
        -- booted for this client session that brain.hand_off_transcript
        -- (compaction => true) ended, or the start of one booted after a
        -- compaction (client_info.start 'compact', as the SessionStart hook
        -- boots it): when the PreCompact hook could not reach the database and
        -- its turns were written later from the spool, only the start says so.
        SELECT max(CASE WHEN s.end_reason = 'compacted' THEN greatest(s.ended_at, s.started_at)
                        ELSE s.started_at END)
        INTO compacted FROM brain.session s
        WHERE s.workspace_id = ws AND (s.end_reason = 'compacted' OR s.client_info->>'start' = 'compact')
          AND s.client_info->>'client_session' = rtrim(exclude_ref_prefix, '/');
    END IF;
    IF brain.trim_space(coalesce(prompt, '')) <> '' THEN
        -- Relevant: the rule search answers with (its min_relevance verdict:
        -- nothing when no candidate is relevant; else its ranking, which it
        -- never trims: an evidence turn's relevance is often low). The turns
        -- of the calling session itself (exclude_ref_prefix) that the agent
        -- has in front of it (stored after its last compaction) are left out,
        -- and so are flagged memories; the verdict is asked again of the hits
        -- left (a result's verdict, brain.search_result): when what made it
        -- was only among those left out, nothing is relevant.
        FOR hit IN
            WITH kept AS MATERIALIZED (
                SELECT s.id, s.kind, s.headline, s.verdict, s.via_skill_trigger, s.newer_related, s.ordinality AS n
                FROM brain.search(query => prompt, query_embedding => query_embedding,
                                  embedding_space => embedding_space, project => project,
                                  -- twice the lines: a prompt and the reply that answers it may
                                  -- both be hits (one line); each result costs search a preview
                                  max_results => n_max * 2) WITH ORDINALITY AS s
                JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = s.id
                WHERE NOT (exclude_ref_prefix IS NOT NULL AND m.source_system IS NOT DISTINCT FROM exclude_source_system
                           AND starts_with(coalesce(m.source_ref, ''), exclude_ref_prefix)
                           AND (compacted IS NULL OR m.created_at > compacted))
                  AND NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at))
            -- in search's order: a current fact before the older memories and turns it
            -- may contradict, a reply in the place of the prompt that only asked
            SELECT k.id, k.kind, k.headline, k.newer_related
            FROM kept k
            WHERE EXISTS (SELECT FROM kept r WHERE r.verdict >= floor OR r.via_skill_trigger IS NOT NULL)
            ORDER BY k.n
        LOOP
            EXIT WHEN shown >= n_max;
            -- A captured turn: the reply that answers it, whole (up to its share of the budget).
            turn := brain._turn_answer(ws, hit.id);
            own_id := NULL;
            IF turn.answer_id IS NOT NULL THEN
                -- A prompt that does not only ask (it says something: "I finished the
                -- book today. Any suggestions?", "Rotate the credentials.") is shown in
                -- its own words, then the reply, the two within the line's share.
                SELECT t.turn_id, t.text INTO own_id, own_text FROM brain._turn_text(ws, hit.id) AS t;
                IF own_id = turn.answer_id OR own_id = ANY (ids)
                   OR brain._only_asks(regexp_replace(own_text, '^User: ', '')) THEN
                    own_id := NULL;
                END IF;
            END IF;
            IF own_id IS NOT NULL THEN
                own_chars := least(char_length(own_text),
                                   greatest(turn_chars / 2, turn_chars - char_length(turn.answer) - 12));
                line := format('- #%s %s, %s: %s', own_id, hit.kind, brain._line_age(ws, own_id), brain.quote_text(
                               CASE WHEN char_length(own_text) > own_chars
                                    THEN left(own_text, own_chars - 1) || '…' ELSE own_text END));
                IF turn.answer_id = ANY (ids) THEN
                    turn.answer_id := NULL;  -- shown already
                ELSE
                    line := line || format(' → #%s: %s', turn.answer_id, brain.quote_text(
                               CASE WHEN char_length(turn.answer) > turn_chars - own_chars
                                    THEN left(turn.answer, greatest(turn_chars - own_chars, 40) - 1) || '…'
                                    ELSE turn.answer END));
                END IF;
            ELSIF turn.answer_id IS NOT NULL THEN
                CONTINUE WHEN turn.answer_id = ANY (ids);
                line := format('- #%s %s, %s: %s', turn.answer_id, hit.kind, brain._line_age(ws, turn.answer_id), brain.quote_text(
                               CASE WHEN char_length(turn.answer) > turn_chars
                                    THEN left(turn.answer, turn_chars - 1) || '…' ELSE turn.answer END));
            ELSE
                line := format('- #%s %s, %s: %s', hit.id, hit.kind, brain._line_age(ws, hit.id),
                               brain.quote_text(hit.headline));
            END IF;
            -- a newer memory among the results may say otherwise (search's newer_related:
            -- of a memory, a turn, a superseded memory): the agent is told which one is current
            line := line || CASE WHEN hit.newer_related IS NOT NULL
                                 THEN format(' (older: #%s is newer and may replace it)', hit.newer_related) ELSE '' END;
            CONTINUE WHEN total + brain.estimate_tokens(line) + 1 > budget;
            total := total + brain.estimate_tokens(line) + 1;
            lines := lines || line;
            shown := shown + 1;
            ids := ids || CASE WHEN own_id IS NULL THEN ARRAY[coalesce(turn.answer_id, hit.id)]
                               WHEN turn.answer_id IS NULL THEN ARRAY[own_id]
                               ELSE ARRAY[own_id, turn.answer_id] END;
        END LOOP;
    END IF;
    IF cardinality(ids) > 0 THEN
        -- The injection, for the session booted for the calling client session when there is one.
        PERFORM brain.record_injection('prompt', ids, total, false,
            coalesce(brain._session(),
                     (SELECT s.session_id FROM brain.session s
                      WHERE s.workspace_id = ws AND exclude_ref_prefix IS NOT NULL
                        AND s.client_info->>'client_session' = rtrim(exclude_ref_prefix, '/')
                      ORDER BY s.started_at DESC, s.session_id DESC LIMIT 1)));
    END IF;
    RETURN jsonb_build_object(
        'text', CASE WHEN cardinality(ids) > 0
                     THEN heading || E'\n' || array_to_string(lines, E'\n') || E'\n' || closing END,
        'ids', to_jsonb(ids),
        'tokens', CASE WHEN cardinality(ids) > 0 THEN total ELSE 0 END,
        'budget', budget);
END
$$;
COMMENT ON FUNCTION brain.prompt_context IS
    'The few memories a prompt brings up, for a hook to add to the agent''s context: brain.search over the prompt with its "nothing relevant" verdict (the setting min_relevance: nothing when no candidate is relevant, else the ranking, never trimmed), leaving out flagged memories and the memories of exclude_source_system whose source_ref starts with exclude_ref_prefix (the calling session''s own turns, "<client session>/") stored after that session''s last compaction (brain.hand_off_transcript, compaction => true, or a session of it booted with client_info.start compact): those the agent has in front of it; when no hit left has a verdict (brain.search_result) reaching min_relevance, nothing is relevant. Stored text is quoted (brain.quote_text), as in the boot payload. A captured turn is shown as the reply that answers it (for a prompt, the last assistant turn before the next prompt), whole up to its share of the budget; a prompt that says something (not one that only asks, brain._only_asks) comes first in its own words, then " → " and that reply, the two within the line''s share; in search''s order (a current fact before the older memories and turns it may contradict, a reply in the place of the prompt that only asked); each line says its age ("- #12 fact, 3d ago: ..."), and a memory or turn that a newer one among the results may contradict (search''s newer_related) says so: "(older: #N is newer and may replace it)". At most prompt_context_max (5) lines, never over prompt_context_tokens (500, brain.estimate_tokens), inside <pybrain-context>…</pybrain-context> (what the capture hooks never store back); the prompt is searched for without what it marks <private>, and by its first 4000 characters. text is NULL when nothing is relevant.';

-- Sessions a capture hook never ended: the client crashed, was killed, or its
-- hook failed (no PreCompact, no SessionEnd), so the turns of its transcript
-- were never stored. The next session of the seat captures them while the
-- transcript is still on disk (brain.capture_ended_session).
CREATE OR REPLACE FUNCTION brain.uncaptured_sessions(
    source text,
    project text DEFAULT '',
    cwd text DEFAULT NULL,
    host text DEFAULT NULL,
    max_results integer DEFAULT 3,
    now timestamptz DEFAULT NULL
)
RETURNS TABLE (session_id bigint, client_session text, transcript text, end_reason text, started_at timestamptz,
               ended_at timestamptz)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    -- Each is handed out twice at most (client_info.capture_attempts): a
    -- transcript too long to capture within a hook's deadline is not tried
    -- at every start; one whose capture was left part-done (brain.leave_capture:
    -- its turns are stored in batches, so every try stores more) ten times.
    RETURN QUERY
    WITH claimed AS (
        UPDATE brain.session s
        SET client_info = s.client_info || jsonb_build_object(
                'capture_attempts', coalesce((s.client_info->>'capture_attempts')::integer, 0) + 1)
        WHERE s.workspace_id = brain.current_workspace() AND s.session_id IN (
            SELECT x.session_id FROM brain.session x
            WHERE x.workspace_id = brain.current_workspace() AND x.source = uncaptured_sessions.source
              AND x.project = coalesce(uncaptured_sessions.project, '')
              -- a project's seat is the project (a repository: any of its folders);
              -- a global session's is its folder
              AND (coalesce(uncaptured_sessions.project, '') <> ''
                   OR x.cwd IS NOT DISTINCT FROM uncaptured_sessions.cwd)
              AND x.host IS NOT DISTINCT FROM uncaptured_sessions.host
              -- ended otherwise than by a capture hook (ended, compacted) or by hand,
              -- or by a capture hook that had no time to store every turn (brain.leave_capture)
              AND x.status = 'ended' AND (x.end_reason NOT IN ('ended', 'compacted') OR x.client_info ? 'capture_left')
              AND jsonb_typeof(x.client_info->'transcript') = 'string'
              AND jsonb_typeof(x.client_info->'client_session') = 'string'
              AND NOT x.client_info ? 'captured_at' AND NOT x.client_info ? 'imported_from'
              -- (a capture left part-done makes progress at each try: up to 10)
              AND coalesce((x.client_info->>'capture_attempts')::integer, 0)
                  < CASE WHEN x.client_info ? 'capture_left' THEN 10 ELSE 2 END
              AND x.started_at > brain._clock(uncaptured_sessions.now) - interval '7 days'
            ORDER BY x.started_at DESC, x.session_id DESC
            LIMIT greatest(coalesce(max_results, 3), 0))
        RETURNING s.session_id, s.client_info->>'client_session' AS client_session,
                  s.client_info->>'transcript' AS transcript, s.end_reason, s.started_at, s.ended_at)
    SELECT c.session_id, c.client_session, c.transcript, c.end_reason, c.started_at, c.ended_at
    FROM claimed AS c
    ORDER BY c.started_at DESC, c.session_id DESC;
END
$$;
COMMENT ON FUNCTION brain.uncaptured_sessions IS
    'Hands out the sessions of a seat (source, project and host; and the folder, cwd, of a session without a project) that ended without a capture hook (rebooted, heartbeat expired, process gone: the client crashed or its hook failed), or whose capture hook left turns it had no time to store (brain.leave_capture), and whose transcript (client_info.transcript, client_info.client_session, as the hooks boot them) was never captured: the newest first, at most max_results (3), started in the last 7 days, each twice at most (client_info.capture_attempts; a capture left part-done ten times). The next session start captures them (brain.capture_ended_session).';

CREATE OR REPLACE FUNCTION brain.capture_ended_session(
    session bigint,
    turns jsonb,
    client text DEFAULT 'the agent',
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session := brain._get_session(session);
    clock timestamptz := brain._clock(capture_ended_session.now);
    handoff text;
    result jsonb;
    last_turn timestamptz;
BEGIN
    IF s.status <> 'ended' THEN
        PERFORM brain._raise('BR011', format('Session #%s is still active: its own hooks capture it.', s.session_id),
            jsonb_build_object('session', s.session_id), 'brain.uncaptured_sessions lists the sessions to capture.');
    END IF;
    IF s.client_info ? 'capture_left' THEN
        -- Its capture hook wrote the handoff from every turn and stored what it had time
        -- for; the rest is stored now: only the mark changes.
        UPDATE brain.session x SET client_info = (x.client_info - 'capture_left') || jsonb_build_object('captured_at', clock)
        WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
        RETURN jsonb_build_object('session', s.session_id, 'ended', false, 'handoff', NULL, 'stored', false);
    END IF;
    -- Its last sign of life is its last turn, when the transcript says it lived past
    -- its last hook: handoffs come in the order sessions ended (brain._handoff_time).
    BEGIN
        SELECT max((t->>'at')::timestamptz) INTO last_turn
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(turns) = 'array' THEN turns ELSE '[]' END) AS t
        WHERE t->>'at' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d';
    EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format OR invalid_time_zone_displacement_value THEN
        last_turn := NULL;
    END;
    IF last_turn > s.heartbeat_at THEN
        UPDATE brain.session x SET heartbeat_at = least(last_turn, x.ended_at)
        WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    END IF;
    handoff := brain.transcript_handoff(turns, format('the next session''s start (it had ended: %s)', s.end_reason),
                                        client, s.client_info->>'client_session');
    IF handoff IS NOT NULL THEN
        -- a handoff for the next sessions (brain.end_session keeps it, stored apart, once)
        result := brain.end_session(s.session_id, handoff, brain.transcript_snapshot(turns), clock);
    ELSE
        result := jsonb_build_object('session', s.session_id, 'ended', false);
    END IF;
    UPDATE brain.session x SET client_info = x.client_info || jsonb_build_object('captured_at', clock)
    WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    RETURN result || jsonb_build_object('handoff', handoff,
                                        'stored', handoff IS NOT NULL AND NOT coalesce((result->>'unchanged')::boolean, false));
END
$$;
COMMENT ON FUNCTION brain.capture_ended_session IS
    'After the turns of an uncaptured session''s transcript are observed (brain.uncaptured_sessions, brain.observe_transcript), writes the handoff from them (brain.transcript_handoff; none when there is nothing to hand off or the transcript is gone) for the next sessions of its project and source, and marks the session captured (client_info.captured_at), so that it is captured once. stored says whether a handoff was stored (the next boot shows it). BR011 for a session still active. A session whose capture hook left turns (brain.leave_capture) has its handoff already: it is only marked captured.';

CREATE OR REPLACE FUNCTION brain.leave_capture(
    session bigint,
    transcript text,
    client_session text,
    now timestamptz DEFAULT NULL
)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s brain.session := brain._get_session(session);
    clock timestamptz := brain._clock(leave_capture.now);
BEGIN
    IF s.status <> 'ended' THEN
        PERFORM brain._raise('BR011', format('Session #%s is still active: its own hooks capture it.', s.session_id),
            jsonb_build_object('session', s.session_id), 'End it first (brain.hand_off_transcript).');
    END IF;
    PERFORM brain._require_text(transcript, 'BR009', 'Name the transcript whose turns are left: its path.',
        'The transcript_path of the hook''s input.');
    PERFORM brain._require_text(client_session, 'BR009', 'Name the client session whose turns are left.',
        'The session_id of the hook''s input.');
    IF s.client_info ? 'client_session' AND s.client_info->>'client_session' IS DISTINCT FROM client_session THEN
        -- another client session's (the hook's own was never booted): not marked
        RETURN jsonb_build_object('session', s.session_id, 'capture_left', NULL);
    END IF;
    UPDATE brain.session x
    SET client_info = (x.client_info - 'captured_at')
        || jsonb_build_object('capture_left', clock, 'transcript', transcript, 'client_session', client_session)
    WHERE x.workspace_id = s.workspace_id AND x.session_id = s.session_id;
    RETURN jsonb_build_object('session', s.session_id, 'capture_left', clock);
END
$$;
COMMENT ON FUNCTION brain.leave_capture IS
    'What a capture hook (SessionEnd) calls when its time ran out before it stored every turn of its transcript: it has ended the session with the handoff written from all of them (brain.hand_off_transcript) and stored the first ones (brain.observe_transcript, in batches); the session is marked (client_info.capture_left, with the transcript''s path and client session), so that the next session start of its seat stores the rest (brain.uncaptured_sessions hands it out, up to ten times, each try storing more; brain.capture_ended_session then marks it captured without a second handoff). A session booted for another client session is not marked (capture_left NULL: the hook keeps its input for later instead). BR011 for a session still active.';
