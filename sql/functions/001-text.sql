-- Text rules: errors, normalization, word counts, secret detection, the
-- GUARDRAIL-stacking check and metadata extraction. All pure functions.

CREATE OR REPLACE FUNCTION brain._raise(code text, message text, detail jsonb, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Absent parts are left out, not sent empty.
    IF detail IS NOT NULL AND hint IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = detail::text, HINT = hint;
    ELSIF detail IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = detail::text;
    ELSIF hint IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, HINT = hint;
    ELSE
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
    END IF;
END
$$;
COMMENT ON FUNCTION brain._raise IS
    'Raises a pybrain error: SQLSTATE class BR, a message, a JSON DETAIL and a HINT (docs/errors.md).';

-- trim_space, normalize_text, embedding_input and word_count are single
-- expressions over built-ins: without a SET clause the planner inlines them
-- into their callers (a SET clause turns every use into a function call).
CREATE OR REPLACE FUNCTION brain.trim_space(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_replace(t, '^[\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g')
$$;
COMMENT ON FUNCTION brain.trim_space IS 'The text without leading and trailing white space of any kind.';

CREATE OR REPLACE FUNCTION brain.normalize_text(headline text, body text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT lower(brain.trim_space(regexp_replace(coalesce(headline, '') || ' ' || coalesce(body, ''),
                                                 '\s+', ' ', 'g')))
$$;
COMMENT ON FUNCTION brain.normalize_text IS
    'Headline and body lowercased with runs of white space folded: the key of exact dedup.';

CREATE OR REPLACE FUNCTION brain.embedding_input(headline text, body text DEFAULT '')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN brain.trim_space(coalesce(body, '')) = '' THEN brain.trim_space(headline)
                -- A derived headline (observed text) is the body's own start: say it once.
                WHEN starts_with(regexp_replace(body, '\s+', ' ', 'g'),
                                 regexp_replace(brain.trim_space(headline), ' …( \(part \d+/\d+\))?$', ''))
                    THEN brain.trim_space(body)
                ELSE brain.trim_space(headline) || E'\n\n' || brain.trim_space(body) END
$$;
COMMENT ON FUNCTION brain.embedding_input IS
    'The text an embedder sees for a memory: the headline, a blank line, the body (the body alone when it starts with the headline).';

CREATE OR REPLACE FUNCTION brain.word_count(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_count(coalesce(t, ''), '[^\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+')
$$;
COMMENT ON FUNCTION brain.word_count IS 'Number of words separated by white space (no-break spaces included).';

CREATE OR REPLACE FUNCTION brain.find_secrets(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(p.name ORDER BY p.name), '{}')
    FROM (VALUES
        ('aws_access_key',    '\m(AKIA|ASIA)[0-9A-Z]{16}\M'),
        ('api_key',           '\msk-(ant-|proj-)?[A-Za-z0-9_-]{20,}'),
        ('github_token',      '\m(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})'),
        ('slack_token',       '\mxox[abprs]-[A-Za-z0-9-]{10,}'),
        ('google_api_key',    '\mAIza[0-9A-Za-z_-]{35}'),
        ('stripe_key',        '\m[rs]k_(live|test)_[0-9A-Za-z]{16,}'),
        ('jwt',               '\meyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}'),
        ('private_key',       '-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----'),
        ('dsn_with_password', '[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:([^\s/@]+)@'),
        ('assigned_secret',   '(?i)(api[_-]?key|secret|token|passwd|password)["'']?\s*[:=]\s*["'']?[^\s"''<>$%{][^\s"''<>]{11,}')
    ) AS p(name, pattern)
    WHERE t ~ p.pattern
      AND (p.name <> 'dsn_with_password'
           -- a documented placeholder (user:password@, user:***@, user:${PW}@) is no secret
           OR EXISTS (SELECT FROM regexp_matches(t, p.pattern, 'g') AS m
                      WHERE m[1] !~* '^(\*+|x+|\.\.\.|<[^>]*>|\$\{?\w+\}?|%\(?\w+\)?s?|pass(word)?|secret|changeme)$'))
$$;
COMMENT ON FUNCTION brain.find_secrets IS
    'Names of the secret patterns found in a text (API keys, tokens, JWTs, private keys, DSNs with passwords). Empty when clean.';

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
