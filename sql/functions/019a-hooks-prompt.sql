-- What a prompt brings up (UserPromptSubmit): brain.prompt_context and what
-- it judges a line by (the turns, answers and ages it reads: 019-hooks.sql).

-- What a prompt asks about, as a line must hold it: the words of what it asks
-- (brain._asked_text) that some active memory of the workspace states (holds,
-- and is not a captured prompt that only asks), each a tsquery (with the words
-- for the same thing, as search weighs it) and its idf. brain._holds_subject
-- judges a memory by them. A word no memory holds is left out: most prompts say
-- something new ("the nightly export failed again"), and search's verdict
-- already counts such words; so is a word only questions hold ("Which Node
-- version …?" asked before): it names nothing the store states, and an answer
-- ("The frontend builds with Node 24") need not repeat it. With a project: for
-- each word, whether the project's or global memories state it (inside) and
-- whether another project's do (outside). unnamed: two words of what it asks
-- that stand together (one after the other, letters only) and that no memory
-- states, "the kestrel billing worker" before anything names the billing
-- worker: a thing the store does not know ("listen", alone, may be the
-- question's frame; a number is a value, not a name). pair_a, pair_b: the
-- places in words of two words that stand together in what it asks ("staging
-- database"; a phrase weighed whole pairs with itself): a line that holds
-- both names a thing the question names, as one that holds only its frame
-- words and the project's name ("The kestrel gateway listens on port 5005")
-- does not.
-- As the owner of schema brain, in the caller's own workspace
-- (brain._caller_workspace), as search reads the words of a query: a caller's
-- statement under row-level security cannot use the full-text index (`@@` is
-- not leakproof), and read every memory of the workspace for each word, 10 ms a
-- word at 10,000 memories. It tells only what the caller's own statements could.
DROP FUNCTION IF EXISTS brain._prompt_subject(bigint, text);
DROP FUNCTION IF EXISTS brain._prompt_subject(text, text);
CREATE FUNCTION brain._prompt_subject(prompt text, project text,
                                      OUT words tsquery[], OUT idf double precision[],
                                      OUT inside boolean[], OUT outside boolean[],
                                      OUT unnamed boolean, OUT pair_a integer[], OUT pair_b integer[])
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Each word's lookups planned for that word: a rare one through its posting list, a
-- common one by reading memories until one holds it (a plan for any word would read
-- every memory for the one, or build the other's whole posting list).
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    ws bigint := brain._caller_workspace();
    t record;
    q tsquery;
    asked text := brain._asked_text(prompt);
    unheld text[] := '{}';  -- the words of what it asks that no memory states
    seen text[] := '{}';  -- the words brain._lexical_terms weighed (some memory holds each)
    kept text[] := '{}';  -- the word of each of words
    l text;
BEGIN
    words := '{}'; idf := '{}';
    inside := CASE WHEN project IS NOT NULL THEN '{}' END;
    outside := CASE WHEN project IS NOT NULL THEN '{}' END;
    FOR t IN SELECT brain.word_tsquery(coalesce(x.grp, ARRAY[x.lexeme])) AS q, x.idf, x.lexeme
             FROM brain._lexical_terms(asked, ws, brain._settings(),
                                       (SELECT coalesce(sum(c.docs), 0) FROM brain.lexical_corpus c
                                        WHERE c.workspace_id = ws))
                  WITH ORDINALITY AS x(lexeme, docs, idf, searched, grp, n)
             ORDER BY x.n
    LOOP
        q := t.q;
        seen := seen || t.lexeme;
        IF NOT EXISTS (SELECT FROM brain.memory m
                       WHERE m.workspace_id = ws AND m.tsv @@ q AND m.state = 'active'
                         AND NOT brain._only_asks_turn(m.metadata, m.headline, m.body)) THEN
            unheld := unheld || t.lexeme;
            CONTINUE;
        END IF;
        words := words || q;
        idf := idf || t.idf;
        kept := kept || t.lexeme;
        IF project IS NOT NULL THEN
            inside := inside || EXISTS (SELECT FROM brain.memory m
                                        WHERE m.workspace_id = ws AND m.tsv @@ q AND m.state = 'active'
                                          AND m.project IN (_prompt_subject.project, '')  -- (the project's and global memories)
                                          AND NOT brain._only_asks_turn(m.metadata, m.headline, m.body));
            outside := outside || EXISTS (SELECT FROM brain.memory m
                                          WHERE m.workspace_id = ws AND m.tsv @@ q AND m.state = 'active'
                                            AND m.project NOT IN (_prompt_subject.project, '')
                                            AND NOT brain._only_asks_turn(m.metadata, m.headline, m.body));
        END IF;
    END LOOP;
    -- and the words no memory holds at all (brain._lexical_terms leaves them out; a
    -- word of a phrase it weighed whole is held on its own, as every memory holding
    -- the phrase holds it)
    FOR l IN SELECT a.lexeme FROM unnest(to_tsvector('english'::regconfig, asked)) AS a
             WHERE NOT a.lexeme = ANY (seen)
    LOOP
        q := quote_literal(l)::tsquery;
        IF NOT EXISTS (SELECT FROM brain.memory m
                       WHERE m.workspace_id = ws AND m.tsv @@ q AND m.state = 'active'
                         AND NOT brain._only_asks_turn(m.metadata, m.headline, m.body)) THEN
            unheld := unheld || l;
        END IF;
    END LOOP;
    -- (positions count the words left out of the text vector too: "billing worker"
    -- are 6 and 7 in "Which port does the kestrel billing worker listen on now?")
    unnamed := cardinality(unheld) > 1 AND EXISTS (
        SELECT FROM unnest(to_tsvector('english'::regconfig, asked)) AS a
        CROSS JOIN unnest(a.positions) AS pa(p)
        JOIN unnest(to_tsvector('english'::regconfig, asked)) AS b ON b.lexeme = ANY (unheld)
        CROSS JOIN unnest(b.positions) AS pb(p)
        WHERE a.lexeme = ANY (unheld) AND pb.p = pa.p + 1
          AND translate(a.lexeme || b.lexeme, '0123456789', '') = a.lexeme || b.lexeme);
    pair_a := '{}'; pair_b := '{}';
    IF unnamed THEN  -- (only such a question reads them)
        SELECT coalesce(array_agg(a.i ORDER BY a.i, b.i), '{}'), coalesce(array_agg(b.i ORDER BY a.i, b.i), '{}')
        INTO pair_a, pair_b
        FROM unnest(kept) WITH ORDINALITY AS a(l, i)
        JOIN unnest(kept) WITH ORDINALITY AS b(l, i)
          ON CASE WHEN strpos(a.l, ' ') > 0 THEN b.i = a.i
                  ELSE EXISTS (SELECT FROM unnest(to_tsvector('english'::regconfig, asked)) AS x
                               CROSS JOIN unnest(x.positions) AS px(p)
                               JOIN unnest(to_tsvector('english'::regconfig, asked)) AS y ON y.lexeme = b.l
                               CROSS JOIN unnest(y.positions) AS py(p)
                               WHERE x.lexeme = a.l AND py.p = px.p + 1) END;
    END IF;
END
$$;

-- Whether another project than this one (and the global memories) states what
-- q asks, in the caller's own workspace: the prompt hook's test of a line whose
-- subject only other projects state. As the owner, for the full-text index
-- (brain._prompt_subject says why).
CREATE OR REPLACE FUNCTION brain._stated_elsewhere(q tsquery, project text)
RETURNS boolean
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan  -- (planned for its words, as brain._prompt_subject's)
AS $$
DECLARE
    ws bigint := brain._caller_workspace();  -- (first, whatever the arguments)
BEGIN
    RETURN EXISTS (SELECT FROM brain.memory d
                   WHERE d.workspace_id = ws AND d.state = 'active'
                     AND d.project NOT IN (_stated_elsewhere.project, '') AND d.tsv @@ _stated_elsewhere.q
                     AND NOT brain._only_asks_turn(d.metadata, d.headline, d.body));
END
$$;

-- Whether a line holding these words of a question (places in
-- brain._prompt_subject's words) holds two that stand together in it.
CREATE OR REPLACE FUNCTION brain._names_pair(held bigint[], pair_a integer[], pair_b integer[])
RETURNS boolean
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM unnest(pair_a, pair_b) AS p(a, b) WHERE p.a = ANY (held) AND p.b = ANY (held))
$$;

-- Whether the memories of a line (a hit, and the reply shown for it) are about
-- what the prompt asks (brain._prompt_subject): they do not lack `lacking` words
-- of the question, or more, each rarer than every word they hold (its idf over
-- the rarest held one's times slack, the setting prompt_subject_slack). With
-- lacking 2, one rare word may be the question's frame ("Which port does the
-- staging database listen on?" and "Staging database is shop-stg-db-2 on port
-- 6432"), two are a subject the line does not name: "Which port does the kestrel
-- billing worker listen on?" is not about "The kestrel gateway listens on port
-- 5005", which lacks "billing" and "worker". A prompt none of whose words a
-- memory states judges none.
CREATE OR REPLACE FUNCTION brain._holds_subject(ws bigint, ids bigint[], words tsquery[],
                                                idf double precision[], slack double precision,
                                                lacking integer)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*) FILTER (WHERE NOT x.held AND x.idf > x.top * slack) < lacking
    FROM (SELECT w.*, coalesce(max(w.idf) FILTER (WHERE w.held) OVER (), 0) AS top
          FROM (SELECT i.idf, EXISTS (SELECT FROM brain.memory m
                                      WHERE m.workspace_id = ws AND m.memory_id = ANY (ids) AND m.tsv @@ i.q) AS held
                FROM unnest(words, idf) AS i(q, idf)) AS w) AS x
$$;

-- Whether the memories of a line (a hit, and the reply shown for it) speak of
-- the thing a prompt states a new value of, when the line states a value too:
-- the prompt would restate one of them as a newer statement of its value
-- (brain._restates_statement, the line's memory the older, the prompt the
-- newer: the words a change is said with name nothing). "We moved the osprey
-- search indexer to port 20035." and "The osprey search indexer listens on
-- port 6484": the same thing; "We moved the osprey scheduler to port 20022.":
-- another thing's value, which shares the prompt's "moved" and "osprey" and
-- names the scheduler; "Port 6484" names nothing the prompt lacks. A line none
-- of whose memories states a value is not judged here. naming: the prompt's
-- naming words (brain._naming_words); said: its full-text vector. Each memory
-- read once. (PL/pgSQL, as brain._restates is: planned when first run.)
DROP FUNCTION IF EXISTS brain._speaks_of_stated(bigint, bigint[], text[], text[]);
CREATE OR REPLACE FUNCTION brain._speaks_of_stated(ws bigint, ids bigint[], prompt text, naming text[],
                                                   said tsvector, short integer)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN coalesce((
        SELECT NOT bool_or(cardinality(brain.distinguishing_terms(t.text)) > 0)
               OR bool_or(brain._restates_statement(t.text, brain._naming_of(m.naming_words, t.text),
                                                    prompt, naming, said, short))
        FROM brain.memory m
        CROSS JOIN LATERAL (SELECT brain._statement_text(m.origin, m.headline, m.body) AS text) AS t
        WHERE m.workspace_id = ws AND m.memory_id = ANY (ids)), true);
END
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
    calling bigint;  -- the session booted for the calling client session
    booted bigint[];  -- what its boot showed: not shown again
    subject record;  -- what the prompt asks about (brain._prompt_subject)
    slack double precision := (brain.setting('prompt_subject_slack'))::double precision;
    short_words integer := (brain.setting('prompt_subject_words'))::integer;
    foreign_q tsquery;  -- the question's words only other projects state
    outside boolean[];  -- each word of the subject: some other project states it
    stated text[];  -- what a prompt that states a value names (brain._speaks_of_stated)
    said tsvector;  -- the prompt's words, of a prompt that does not end in a question mark
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
    -- a captured turn is shown whole up to its share of the budget (set for each
    -- line in the loop below)
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
    calling := coalesce(brain._session(),
                        (SELECT s.session_id FROM brain.session s
                         WHERE s.workspace_id = ws AND exclude_ref_prefix IS NOT NULL
                           AND s.client_info->>'client_session' = rtrim(exclude_ref_prefix, '/')
                         ORDER BY s.started_at DESC, s.session_id DESC LIMIT 1));
    booted := ARRAY(SELECT DISTINCT x FROM brain.injection i CROSS JOIN unnest(i.items) AS x
                    WHERE i.workspace_id = ws AND i.session_id = calling AND i.trigger = 'boot');
    IF brain.trim_space(coalesce(prompt, '')) <> '' THEN
        subject := brain._prompt_subject(prompt, project);
        -- A prompt that says a value changed rather than asks ("We moved the osprey
        -- search indexer to port 20035.": a value, a word a change is said with, no
        -- question mark at its end): what it names, less the words it says the change
        -- with. ("The build failed with exit code 137 on runner 4." says no change.)
        IF right(rtrim(prompt), 1) <> '?' THEN
            said := to_tsvector('english'::regconfig, prompt);
            IF tsvector_to_array(said) && brain._change_words()
               AND cardinality(brain.distinguishing_terms(prompt)) > 0 THEN
                stated := brain._naming_words(prompt);
                -- (a prompt naming nothing but the change judges no line)
                IF cardinality(brain._naming_less_change(stated)) = 0 THEN
                    stated := NULL;
                END IF;
            END IF;
        END IF;
        -- What the question names that only other projects state ("the osprey gateway",
        -- where the gateway is kestrel's): a line of this project lacks it, and is
        -- another thing's when another project states it beside the rest the line
        -- holds (below). Each word of the subject: whether another project states it.
        IF project IS NOT NULL THEN
            SELECT string_agg('(' || w.q::text || ')', ' & ') FILTER (WHERE NOT w.inside)::tsquery
            INTO foreign_q FROM unnest(subject.words, subject.inside) AS w(q, inside);
            outside := subject.outside;
        END IF;
        -- Each line on its own, once some hit is relevant (its verdict,
        -- brain.search_result's relevance with the query's unheld words counted,
        -- reaches the floor, or a skill the prompt triggers): a hit whose verdict
        -- reaches the floor, unless its line is short (a headline, or a turn, of
        -- prompt_subject_words words or fewer) and lacks two words of the question
        -- rarer than every word it holds (brain._holds_subject, lacking 2): "The
        -- kestrel gateway listens on port 5005" is near "Which port does the
        -- kestrel billing worker listen on?" in words and vector, and names
        -- another thing; and a captured turn below the floor that lacks no such
        -- word (lacking 1), as a long turn that speaks of the question among other
        -- things does with a low verdict. The rest of search's ranking is another
        -- topic's, and a line of it is noise the agent learns to skip. The turns
        -- of the calling session itself (exclude_ref_prefix) that the agent has in
        -- front of it (stored after its last compaction) are left out, and so are
        -- flagged memories and what the session's boot showed.
        FOR hit IN
            WITH found AS MATERIALIZED (
                SELECT s.id, s.kind, s.headline, s.verdict, s.via_skill_trigger, s.newer_related, s.neighbour_of,
                       s.ordinality AS n,
                       -- the words its line shows: a turn's text, else the headline
                       brain.word_count(CASE WHEN m.origin = 'observed' AND m.metadata ? 'turn'
                                             THEN coalesce(nullif(m.body, ''), m.headline) ELSE m.headline END) AS words,
                       m.origin = 'observed' AND m.metadata ? 'turn' AS turn,
                       -- the words of the question it states (brain._prompt_subject's, by
                       -- place; none for a captured prompt that only asks: search shows
                       -- the reply that answers it in its place)
                       ARRAY(SELECT w.i FROM unnest(subject.words) WITH ORDINALITY AS w(q, i)
                             WHERE m.tsv @@ w.q AND NOT oa.asks) AS held,
                       -- it states an old value (brain.stale): a line of the topic, marked
                       EXISTS (SELECT FROM brain.stale_mark x
                               WHERE x.workspace_id = ws AND x.memory_id = m.memory_id) AS stale,
                       -- (what the agent has in front of it is not shown again, and still
                       -- names what it is about)
                       NOT (exclude_ref_prefix IS NOT NULL AND m.source_system IS NOT DISTINCT FROM exclude_source_system
                            AND starts_with(coalesce(m.source_ref, ''), exclude_ref_prefix)
                            AND (compacted IS NULL OR m.created_at > compacted))
                       AND NOT m.memory_id = ANY (booted) AS shown
                FROM brain.search(query => prompt, query_embedding => query_embedding,
                                  embedding_space => embedding_space, project => project,
                                  -- four times the lines: a prompt and the reply that answers it
                                  -- may both be hits (one line), and a hit may not hold the
                                  -- subject; each result costs search a preview
                                  max_results => least(n_max * 4, 100), min_relevance => 0) WITH ORDINALITY AS s
                JOIN brain.memory m ON m.workspace_id = ws AND m.memory_id = s.id
                CROSS JOIN LATERAL (SELECT brain._only_asks_turn(m.metadata, m.headline, m.body) AS asks) AS oa
                WHERE NOT brain._is_flagged(m.flag_reasons, m.flag_confirmed_at)),
            kept AS (SELECT * FROM found f WHERE f.shown)
            -- in search's order: a current fact before the older memories and turns it
            -- may contradict, a reply in the place of the prompt that only asked
            SELECT k.id, k.kind, k.headline, k.via_skill_trigger,
                   -- what a newer memory may replace: the hit, or the reply a prompt that
                   -- only asked stands beside (its line shows that reply)
                   coalesce(k.newer_related, r.newer_related) AS newer_related,
                   CASE WHEN k.newer_related IS NULL AND r.newer_related IS NOT NULL THEN r.id ELSE k.id END AS older_id,
                   k.verdict >= floor AS relevant, k.words, k.turn,
                   k.held || coalesce(r.held, '{}') AS held, k.stale OR coalesce(r.stale, false) AS stale,
                   -- a short line (relevant, or a turn let in below the floor) whose
                   -- subject another relevant hit names better: that one states every
                   -- word of the question this line states, and more: "The osprey cache
                   -- listens on port 7774" beside "The osprey scheduler listens on port
                   -- 7140" for "Which port does the osprey scheduler listen on?" (one
                   -- word, which brain._holds_subject lets pass as the question's frame).
                   -- Not by a line of its own chain of statements (its newer, one older
                   -- than it or than its newer), nor a line stating an old value: those
                   -- are shown, marked. The other may be one the agent has in front of it
                   -- (not shown again), and is relevant as a line is: its verdict reaches
                   -- the floor, or it states every word of the question (by words alone,
                   -- without a vector, a verdict is lower).
                   k.words <= short_words AND NOT k.stale AND NOT coalesce(r.stale, false) AND EXISTS (
                       SELECT FROM found d
                       CROSS JOIN LATERAL (SELECT k.held || coalesce(r.held, '{}') AS own) AS o
                       WHERE d.id <> k.id AND d.id IS DISTINCT FROM r.id
                         AND (d.verdict >= floor OR cardinality(d.held) = cardinality(subject.words))
                         -- (not the line's newer, nor one older than it, nor one older than its newer)
                         AND NOT coalesce(d.id IN (k.newer_related, r.newer_related), false)
                         AND NOT coalesce(d.newer_related IN (k.id, r.id, k.newer_related, r.newer_related), false)
                         AND d.held @> o.own AND NOT o.own @> d.held) AS dominated
            FROM kept k LEFT JOIN kept r ON r.id = k.neighbour_of
            WHERE EXISTS (SELECT FROM kept x WHERE x.verdict >= floor OR x.via_skill_trigger IS NOT NULL)
            ORDER BY k.n
        LOOP
            EXIT WHEN shown >= n_max;
            -- A captured turn: the reply that answers it, whole (up to its share of the budget).
            CONTINUE WHEN hit.via_skill_trigger IS NULL AND hit.dominated;
            -- A short line when the question names what only other projects state: left
            -- out when another project states that beside every word of the question the
            -- line holds that other projects state too ("The kestrel gateway listens on
            -- port 5005" beside "The osprey cache listens on port 7774": the line is the
            -- cache's, not the gateway's). A frame word another project states alone
            -- ("the version string in the footer") leaves the line be.
            CONTINUE WHEN hit.via_skill_trigger IS NULL AND foreign_q IS NOT NULL
                          AND hit.words <= short_words AND NOT hit.stale
                          -- (a line none of whose words another project states shares
                          -- nothing with that one: NULL, no match)
                          AND brain._stated_elsewhere(
                                  foreign_q && (SELECT string_agg('(' || subject.words[h.i]::text || ')', ' & ')::tsquery
                                                FROM unnest(hit.held) AS h(i) WHERE outside[h.i]),
                                  prompt_context.project);
            turn := brain._turn_answer(ws, hit.id);
            -- A short line that states another thing's value than the one a prompt states
            -- one of: left out (brain._speaks_of_stated). A line of its own chain of
            -- statements, or stating an old value, stays, marked.
            CONTINUE WHEN hit.via_skill_trigger IS NULL AND stated IS NOT NULL AND hit.words <= short_words
                          AND NOT hit.stale AND hit.newer_related IS NULL
                          AND NOT brain._speaks_of_stated(ws, ARRAY[hit.id, turn.answer_id], prompt, stated, said,
                                                          short_words);
            -- A question about a thing no memory names (brain._prompt_subject's unnamed):
            -- such a line holds two words that stand together in the question ("Should
            -- the nightly export job use the staging database?" and "Staging database
            -- is shop-stg-db-2 on port 6432"), or it is another thing's ("The kestrel
            -- gateway listens on port 5005" for the kestrel billing worker's port).
            CONTINUE WHEN hit.via_skill_trigger IS NULL
                          AND NOT CASE WHEN hit.relevant
                                       THEN hit.words > short_words
                                            OR (NOT subject.unnamed OR brain._names_pair(hit.held, subject.pair_a, subject.pair_b))
                                               AND brain._holds_subject(ws, ARRAY[hit.id, turn.answer_id], subject.words,
                                                                        subject.idf, slack, 2)
                                       ELSE hit.turn
                                            AND (NOT subject.unnamed OR brain._names_pair(hit.held, subject.pair_a, subject.pair_b))
                                            AND brain._holds_subject(ws, ARRAY[hit.id, turn.answer_id], subject.words,
                                                                     subject.idf, slack, 1) END;
            -- a captured turn's share: what is left of the budget, split evenly among
            -- the lines still to come, less each line's own cost (its newline, and about
            -- 60 characters of "- #id kind, age: ", the quotes, " → #id: " and a mark
            -- that a newer memory may replace it): prompt_context_max lines of turns
            -- fit, and what a short line (a headline) leaves goes to the lines after it
            turn_chars := greatest(100, ((budget - total) / (n_max - shown) - 1) * 4 - 60);
            own_id := NULL;
            IF turn.answer_id IS NOT NULL THEN
                -- A prompt that does not only ask (it says something: "I finished the
                -- book today. Any suggestions?", "Rotate the credentials.") is shown in
                -- its own words, then the reply, the two within the line's share.
                SELECT t.turn_id, t.text INTO own_id, own_text FROM brain._turn_text(ws, hit.id) AS t;
                IF own_id = turn.answer_id THEN
                    -- a reply: the prompt it answers comes first when it says something
                    -- (the person's own words are often what is asked about later:
                    -- "I bought it about three weeks ago")
                    SELECT t.prompt_id, t.text INTO own_id, own_text FROM brain._turn_prompt(ws, hit.id) AS t;
                END IF;
                IF own_id IS NULL OR own_id = turn.answer_id OR own_id = ANY (ids)
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
            -- (an active one stands until a person confirms the change: the line says how)
            line := line || CASE WHEN hit.newer_related IS NOT NULL
                                 THEN format(' (older: #%s is newer and may replace it%s)', hit.newer_related,
                                             CASE WHEN (SELECT m.state FROM brain.memory m
                                                        WHERE m.workspace_id = ws AND m.memory_id = hit.older_id) = 'active'
                                                  THEN format('; if so: brain supersede %s', hit.older_id) ELSE '' END)
                                 ELSE '' END
                    -- what the line shows states the old value of a superseded memory (brain.stale)
                    || coalesce((SELECT brain._stale_mark_text((x->>'on')::bigint, (x->>'by')::bigint)
                                 FROM unnest(ARRAY[own_id, turn.answer_id, hit.id]) WITH ORDINALITY AS i(id, n)
                                 CROSS JOIN LATERAL brain._stale_of(ws, i.id) AS x
                                 WHERE x IS NOT NULL ORDER BY i.n LIMIT 1), '');
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
        PERFORM brain.record_injection('prompt', ids, total, false, calling);
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
    'The few memories a prompt brings up, for a hook to add to the agent''s context: brain.search over the prompt, each hit kept on its own verdict (brain.search_result''s verdict at least the setting min_relevance, or a skill the prompt triggers: a prompt no memory is about gets nothing, a prompt about one topic no lines of another: a short line lacking two words of the question rarer than all it holds, or one another relevant hit names better, stating every word of the question it states and more, or, for a prompt that says a value changed rather than asks, one that states another thing''s value (brain._speaks_of_stated), is left out unless it is marked older or stale), leaving out flagged memories, what the boot of the calling session showed (its boot injection), and the memories of exclude_source_system whose source_ref starts with exclude_ref_prefix (the calling session''s own turns, "<client session>/") stored after that session''s last compaction (brain.hand_off_transcript, compaction => true, or a session of it booted with client_info.start compact): those the agent has in front of it. Stored text is quoted (brain.quote_text), as in the boot payload. A captured turn is shown as the reply that answers it (for a prompt, the last assistant turn before the next prompt), whole up to its share of the budget; a prompt that says something (not one that only asks, brain._only_asks) comes first in its own words, then " → " and that reply, the two within the line''s share; in search''s order (a current fact before the older memories and turns it may contradict, a reply in the place of the prompt that only asked); each line says its age ("- #12 fact, 3d ago: ..."), and a memory or turn that a newer one among the results may contradict (search''s newer_related) says so: "(older: #N is newer and may replace it)", and an active one how a person confirms it ("; if so: brain supersede <id>"); a line that states the old value of a superseded memory says so: "(depends on #<superseded>, changed by #<change>: brain stale)". At most prompt_context_max (5) lines, never over prompt_context_tokens (500, brain.estimate_tokens), inside <pybrain-context>…</pybrain-context> (what the capture hooks never store back); the prompt is searched for without what it marks <private>, and by its first 4000 characters. text is NULL when nothing is relevant.';
