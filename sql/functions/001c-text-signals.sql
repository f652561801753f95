-- Signals and metadata of a text: flags, injection signals, the GUARDRAIL-stacking
-- check, tags, people, topics and action items, and ages as text.

-- A memory waiting for a person: flagged at write time and not yet confirmed.
CREATE OR REPLACE FUNCTION brain._is_flagged(flag_reasons text[], flag_confirmed_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT cardinality(flag_reasons) > 0 AND flag_confirmed_at IS NULL
$$;

-- Signs that a text speaks to the agent instead of recording something:
-- each reason found. Deterministic: patterns only (docs/security.md).
-- The patterns read the text folded: NFKC (full-width and other compatibility
-- forms become ASCII; skipped for a text already in NFKC), and the common
-- Cyrillic and Greek look-alikes of Latin letters become those letters when one
-- touches a Latin letter (a word that mixes scripts; a translate over the whole
-- text costs more than all the patterns). Every line break (\n, \r, \v, \f,
-- U+0085, U+2028, U+2029) starts a line. Hidden characters are looked for in
-- the text as sent. One regular expression per reason: a backend caches 32 compiled ones,
-- and every write runs these (docs/security.md).
CREATE OR REPLACE FUNCTION brain.injection_signals(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(x.reason ORDER BY x.reason), '{}')
    FROM (SELECT CASE WHEN pg_catalog.octet_length(f0) <> pg_catalog.length(f0)
                           AND f0 ~ '[a-zA-Z][аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ]|[аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ][a-zA-Z]'
                      THEN pg_catalog.translate(f0, 'аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ',
                                                    'aeopcyxijsdhlqwvABEKMHOPCTXSIJYQWaopvikuxyABEZHIKMNOPTYX')
                      ELSE f0 END AS f
          FROM (SELECT CASE WHEN pg_catalog.octet_length(t) = pg_catalog.length(t) OR t IS NFKC NORMALIZED THEN t
                            ELSE normalize(t, NFKC) END AS f0
                OFFSET 0) AS n0
          OFFSET 0) AS n  -- folded once, not once per reason
    -- (lowercased for the words each pattern needs, looked for first: İ as I, as the patterns fold it)
    CROSS JOIN LATERAL (SELECT pg_catalog.lower(pg_catalog.translate(n.f, 'İ', 'I')) AS lf OFFSET 0) AS l
    CROSS JOIN LATERAL (VALUES
        ('override-phrase', CASE WHEN strpos(l.lf, 'ignore') > 0 OR strpos(l.lf, 'disregard') > 0
                                      OR strpos(l.lf, 'forget') > 0 OR strpos(l.lf, 'override') > 0
                                      OR strpos(l.lf, 'bypass') > 0 OR strpos(l.lf, 'skip') > 0
                                      OR strpos(l.lf, 'you are now') > 0 OR strpos(l.lf, 'from now on') > 0
                                      OR strpos(l.lf, 'new instructions') > 0 OR strpos(l.lf, 'the user') > 0
                                      OR strpos(l.lf, 'developer mode') > 0 OR strpos(l.lf, 'jailbreak') > 0
                                      OR strpos(l.lf, 'act as ') > 0 OR strpos(l.lf, 'pretend ') > 0
                                      OR strpos(l.lf, 'your real ') > 0 OR strpos(l.lf, 'your true ') > 0
                                      OR strpos(l.lf, 'your new ') > 0
                                 THEN n.f ~* '\m(?:(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|of|my|these)\s+)*(?:previous|prior|above|earlier|preceding|system|existing|original|safety|other)\s+(?:instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|context|constraints?)|(?:ignore|disregard|forget)\s+(?:everything|anything|all|whatever)\s+(?:(?:that\s+)?(?:was\s+|you\s+were\s+|i\s+|you\s+have\s+been\s+)?(?:said|told|written|stated|given)\M|(?:above|before|prior|previously|earlier)\M)|(?:ignore|disregard)\s+(?:(?:what|anything|whatever)\s+the\s+(?:user|human)\s+(?:says|asks|wants|types|writes)|(?:the\s+|any\s+)?(?:user|human)(?:''s)?\s+(?:instructions|requests|wishes|messages)\M)|you are now|from now on,? you|new instructions\s*:|do not (?:tell|inform|mention (?:this )?to) the user|without telling the user|developer mode enabled|(?:enter|activate|act in|respond in) developer mode|jailbreak|act as (?:an? )?(?:unrestricted|different)|pretend (?:that )?you are|pretend to be|your (?:real|true|new) (?:instructions|task|goal) (?:is|are))' ELSE false END),
        ('role-marker', CASE WHEN strpos(l.lf, '<') > 0 OR strpos(l.lf, '[') > 0
                                 OR strpos(l.lf, ':') > 0
                                    AND (strpos(l.lf, 'system') > 0 OR strpos(l.lf, 'assistant') > 0
                                         OR strpos(l.lf, 'developer') > 0 OR strpos(l.lf, 'human') > 0
                                         OR strpos(l.lf, 'user') > 0 OR strpos(l.lf, 'instruction') > 0
                                         OR strpos(l.lf, 'response') > 0 OR strpos(l.lf, 'input') > 0)
                            THEN n.f ~* '(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*(?:#+\s*)?(?:system|assistant|developer|human|user)\s*(?:prompt\s*)?:(?!=)|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*#+\s*(?:instruction|response|input)\s*:|<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|instructions?)>' ELSE false END),
        ('tool-call', CASE WHEN strpos(l.lf, '"') > 0 OR strpos(l.lf, '<') > 0
                            THEN n.f ~* '"(?:tool_use|tool_calls|function_call|tool_call|tool_result|recipient_name|tool_name)"|<(?:tool_call|tool_use|tool_result|function_calls|function_results|invoke|antml:\w+)[\s>]|"(?:name|tool|function)"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|args|input|parameters|params)"\s*:|"(?:arguments|args|input|parameters|params)"\s*:\s*\{[^{}]*\}\s*,\s*"(?:name|tool|function)"\s*:\s*"|"type"\s*:\s*"(?:tool_use|function)"' ELSE false END),
        ('external-link', CASE WHEN strpos(l.lf, '//') > 0
                            THEN n.f ~* '!\[[^\]]*\]\(\s*<?(?:https?:)?//|\[[^\]]*\]\(\s*<?(?:https?:)?//|<(?:img|iframe|script|a|link)\M[^>]*(?:src|href)\s*=\s*["'']?(?:https?:)?//' ELSE false END),
        ('payload-heading', CASE WHEN strpos(l.lf, '#') > 0
                            THEN n.f ~* '(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*#+\s*(?:pybrain memory|BLOCKER rules|Pinned memories|PATTERN rules|Open tasks|Skills[ \t]*(?:\(|[\n\r\u000b\u000c\u0085\u2028\u2029]|$)|Handoff from|Other sessions|Action items to acknowledge|Context pack \S+ v\d|How similar problems were solved|Where the project stood)' ELSE false END),
        ('wrapper-tag', CASE WHEN strpos(l.lf, '<') > 0
                            THEN n.f ~* '(?<!`)</?(?:pybrain-context|system-reminder|user-prompt-submit-hook|session-start-hook|command-name|command-message|command-args|command-contents|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|context-window|system-prompt|user-memory|project-instructions)(?:\s[^>]*)?>' ELSE false END),
        ('shell-pipe', CASE WHEN strpos(l.lf, 'curl') > 0 OR strpos(l.lf, 'wget') > 0
                            THEN n.f ~* '\m(?:curl|wget)\M[^\n\r\u000b\u000c\u0085\u2028\u2029]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*(?!\s+-m\s+json\.tool)|perl|ruby|node|php|iex)\M|\m(?:(?:ba|z|k|da)?sh|eval|source|python[0-9.]*)\s+(?:-c\s+)?["'']?(?:\$\(|<\(|`)\s*(?:curl|wget)\M' ELSE false END),
        ('hidden-characters', t ~ '[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0001-\U000e007f]'
                              OR strpos(t, '<!--') > 0)
    ) AS x(reason, found)
    WHERE x.found
$$;
COMMENT ON FUNCTION brain.injection_signals IS
    'Why a text looks like an instruction to the agent: override-phrase, role-marker (chat roles, template tokens, ### Instruction: / ### Response:), tool-call, external-link, payload-heading (a heading of the boot payload''s own), wrapper-tag (the tags pybrain and agent clients wrap injected context in: <pybrain-context>, <system-reminder>, <command-name>, ...), shell-pipe (a download piped to a shell or interpreter), hidden-characters. Read after NFKC and with common Cyrillic and Greek look-alikes of Latin letters as those letters; every Unicode line break (\r, \v, \f, U+0085, U+2028, U+2029) starts a line. Empty when none. Deterministic (patterns only).';

-- The injection signals of a turn of a conversation, observed with its role
-- in metadata ({"role": "user" | "assistant"}): the "User: " / "Assistant: "
-- its writer put in front of it (brain.observe_transcript does) names the
-- turn's speaker, which metadata records; it is not a role marker in the
-- turn's text. The rest of the text is read as any other.
CREATE OR REPLACE FUNCTION brain._turn_signals(t text, meta jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.injection_signals(CASE
        WHEN meta->>'role' IN ('user', 'assistant')
             AND lower(left(ltrim(t), length(meta->>'role') + 1)) = (meta->>'role') || ':'
        THEN substr(ltrim(t), length(meta->>'role') + 2)
        ELSE t END)
$$;

CREATE OR REPLACE FUNCTION brain.guardrail_stamps(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(sum(least(regexp_count(line, '\mguardrail\M', 1, 'i'),
                              regexp_count(line, '\d{4}-\d{2}-\d{2}'))), 0)::integer
    FROM regexp_split_to_table(coalesce(t, ''), '\n') AS line
$$;
COMMENT ON FUNCTION brain.guardrail_stamps IS
    'Date-stamped GUARDRAIL markers: per line, the smaller of the GUARDRAIL words and the YYYY-MM-DD dates on it. Two or more means merged guardrails.';

CREATE OR REPLACE FUNCTION brain.extract_tags(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(m[1])), '{}')
    FROM regexp_matches(coalesce(t, ''), '(?:^|[^\w&/])#([A-Za-z][\w-]*\w|[A-Za-z])', 'g') AS m
$$;
COMMENT ON FUNCTION brain.extract_tags IS '#hashtags, lowercased (not C#, not URL fragments).';

CREATE OR REPLACE FUNCTION brain.extract_people(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(m[1])), '{}')
    FROM regexp_matches(coalesce(t, ''), '(?:^|[^\w.@])@([A-Za-z][\w.-]*\w|[A-Za-z])', 'g') AS m
$$;
COMMENT ON FUNCTION brain.extract_people IS '@mentions, lowercased (e-mail addresses are not mentions).';

CREATE OR REPLACE FUNCTION brain.extract_topics(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(word ORDER BY first_at), '{}')
    FROM (
        SELECT m[1] AS word, min(ord) AS first_at
        FROM regexp_matches(coalesce(t, ''), '[a-z0-9,;:)][ \t]+([A-Z][A-Za-z0-9]*[A-Z0-9a-z]{2,})', 'g')
             WITH ORDINALITY AS x(m, ord)
        WHERE m[1] NOT IN ('The', 'This', 'That', 'These', 'Those', 'When', 'Then', 'And',
                           'But', 'For', 'With', 'Not', 'Always', 'Never', 'Use', 'Don')
        GROUP BY m[1]
        ORDER BY min(ord)
        LIMIT 10
    ) AS topic
$$;
COMMENT ON FUNCTION brain.extract_topics IS
    'Capitalized words that do not start a sentence (names, products, acronyms): up to 10, in order of appearance.';

CREATE OR REPLACE FUNCTION brain.extract_action_items(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(s ORDER BY ord), '{}')
    FROM (
        SELECT btrim(s) AS s, ord
        FROM regexp_split_to_table(coalesce(t, ''), '(?<=[.!?])\s+|\n+') WITH ORDINALITY AS x(s, ord)
        WHERE s ~* '\m(need to|needs to|must|follow up|follow-up|todo|to-do|action item|remember to|don''t forget|make sure to)\M'
        ORDER BY ord
        LIMIT 10
    ) AS item
$$;
COMMENT ON FUNCTION brain.extract_action_items IS
    'Sentences that ask for an action ("need to", "must", "follow up", "todo", "remember to", ...): up to 10.';

-- How long ago, as every line an agent is shown says it (the prompt context, the
-- boot payload; brain search and the MCP tools say it the same way in Python,
-- pybrain.render.age): 40s, 12m, 5h, 3d, 7w, 4mo, 2y.
CREATE OR REPLACE FUNCTION brain._age_text(at timestamptz, now timestamptz DEFAULT pg_catalog.now())
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN at IS NULL THEN '?'
                WHEN s < 60 THEN s || 's'
                WHEN s < 3600 THEN s / 60 || 'm'
                WHEN s < 86400 THEN s / 3600 || 'h'
                WHEN s < 14 * 86400 THEN s / 86400 || 'd'
                WHEN s < 61 * 86400 THEN s / (7 * 86400) || 'w'
                WHEN s < 730 * 86400 THEN s / (30 * 86400) || 'mo'
                ELSE s / (365 * 86400) || 'y' END
    FROM (SELECT greatest(0, floor(extract(epoch FROM now - at)))::bigint AS s) AS x
$$;
COMMENT ON FUNCTION brain._age_text IS
    'How long before now a time was, in one unit: 40s, 12m, 5h, 3d, 7w, 4mo, 2y (? for none).';
