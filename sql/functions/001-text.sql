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
COMMENT ON FUNCTION brain.embedding_input(text, text) IS
    'The text an embedder sees for a memory: the headline, a blank line, the body (the body alone when it starts with the headline).';

-- The text an embedder sees for a memory with a title (a document's, for its
-- chunks: docs/ranking.md, "What the embedder sees"): the title first, as the
-- start of the location path when the headline is the chunk's heading path
-- (docs/guide.md > Guide > Webhooks), else on a line of its own; then the text
-- as brain.embedding_input(headline, body) gives it. The title is cut to 24
-- estimated tokens (brain._embedded_title), and the chunks of a titled text
-- are cut that much shorter (brain.observe_batch, brain.ingest_documents), so
-- the whole still fits the embedder's window. Without a title:
-- brain.embedding_input(headline, body).
-- (PL/pgSQL: brain._embedded_title is defined with the token estimate, later.)
CREATE OR REPLACE FUNCTION brain.embedding_input(headline text, body text, title text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := brain._embedded_title(title);
    h text := brain.trim_space(coalesce(headline, ''));
    text_part text := brain.embedding_input(headline, body);
BEGIN
    IF t IS NULL THEN
        RETURN text_part;
    END IF;
    -- The headline said apart from the body and not its start: the heading path
    -- of a chunk (or another headline that names the text), read on from the title.
    IF h <> '' AND brain.trim_space(coalesce(body, '')) NOT IN ('', text_part) THEN
        RETURN t || ' > ' || text_part;
    END IF;
    RETURN t || E'\n\n' || text_part;
END
$$;
COMMENT ON FUNCTION brain.embedding_input(text, text, text) IS
    'The text an embedder sees for a memory with a title (a document chunk): the title first (cut to 24 estimated tokens), joined to the headline as one location path (docs/guide.md > Guide > Webhooks) when the headline is said apart from the body, else on its own line; then brain.embedding_input(headline, body). A NULL or empty title: brain.embedding_input(headline, body).';

-- The title a stored memory is embedded with: metadata.title of an observed
-- or artifact memory (brain.observe_batch keeps the caller's, brain.ingest_documents
-- sets the document's ref); authored memories are embedded by their text alone.
CREATE OR REPLACE FUNCTION brain._embedding_title(origin text, metadata jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN origin IN ('observed', 'artifact') AND jsonb_typeof(metadata -> 'title') = 'string'
                THEN metadata ->> 'title' END
$$;

CREATE OR REPLACE FUNCTION brain.word_count(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_count(coalesce(t, ''), '[^\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+')
$$;
COMMENT ON FUNCTION brain.word_count IS 'Number of words separated by white space (no-break spaces included).';

-- The secret scanner. One rule per format, modelled on the rule sets of
-- gitleaks (config/gitleaks.toml) and Yelp's detect-secrets (its plugins):
-- provider tokens by their documented prefixes, then credentials found by
-- where they stand (a header, a URL, a `key = value` line). `grp` is the
-- capture group that holds the secret (0: the whole match), so a redaction
-- keeps `aws_secret_access_key = ` and replaces only the value. `check` names
-- a test the candidate must also pass (brain._secret_candidate_ok). `hints`:
-- a rule runs only on a text that holds one of these strings (lowercase, and
-- looked for in the lowercased text, for a case-insensitive rule), which
-- keeps a clean text's scan to a few regular expressions. Earlier rules win
-- where two hits overlap. docs/security.md lists the rules.
CREATE OR REPLACE FUNCTION brain.secret_rules()
RETURNS TABLE (rule integer, kind text, pattern text, grp integer, "check" text, source text, hints text[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT row_number() OVER ()::integer, r.kind, r.pattern, r.grp, r."check", r.source, r.hints::text[] FROM (VALUES
        ('private-key', $p$-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[^-]*(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)?$p$, 0, NULL, 'gitleaks private-key; detect-secrets PrivateKeyDetector', '{"PRIVATE KEY"}'),
        ('aws-access-key-id', $p$\m(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}\M$p$, 0, NULL, 'gitleaks aws-access-token; detect-secrets AWSKeyDetector', '{"AKIA","ASIA","ABIA","ACCA","AGPA","AIDA","AIPA","ANPA","ANVA","APKA","AROA","ASCA"}'),
        ('aws-secret-key', $p$(?i)\maws\w*secret\w*["']?\s*(?:[:=]|=>)\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])$p$, 1, NULL, 'detect-secrets AWSKeyDetector (aws_secret_access_key lines)', '{"aws"}'),
        ('github-token', $p$\m(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})$p$, 0, NULL, 'gitleaks github-pat, github-oauth, github-app-token, github-fine-grained-pat', '{"ghp_","gho_","ghu_","ghs_","ghr_","github_pat_"}'),
        ('gitlab-token', $p$\m(?:glpat|glptt|gldt|glrt|glcbt|glffct|glimt|glsoat|glagent)-[A-Za-z0-9_-]{20,}$p$, 0, NULL, 'gitleaks gitlab-pat, gitlab-ptt, gitlab-deploy-token, gitlab-runner-authentication-token', '{"glpat-","glptt-","gldt-","glrt-","glcbt-","glffct-","glimt-","glsoat-","glagent-"}'),
        ('huggingface-token', $p$\m(?:hf_|api_org_)[A-Za-z0-9]{30,}\M$p$, 0, NULL, 'gitleaks huggingface-access-token, huggingface-organization-api-token', '{"hf_","api_org_"}'),
        ('npm-token', $p$\mnpm_[A-Za-z0-9]{36}\M$p$, 0, NULL, 'gitleaks npm-access-token; detect-secrets NpmDetector', '{"npm_"}'),
        ('pypi-token', $p$\mpypi-AgE[A-Za-z0-9_-]{50,}$p$, 0, NULL, 'gitleaks pypi-upload-token; detect-secrets PypiTokenDetector', '{"pypi-AgE"}'),
        ('sendgrid-api-key', $p$\mSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$p$, 0, NULL, 'gitleaks sendgrid-api-token; detect-secrets SendGridDetector', '{"SG."}'),
        ('slack-token', $p$\mxox[abposre]-[A-Za-z0-9-]{10,}$p$, 0, NULL, 'gitleaks slack-bot-token, slack-user-token, slack-app-token; detect-secrets SlackDetector', '{"xox"}'),
        ('slack-webhook', $p$https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{30,}$p$, 0, NULL, 'gitleaks slack-webhook-url; detect-secrets SlackDetector', '{"hooks.slack.com"}'),
        ('stripe-key', $p$\m(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{16,}$p$, 0, NULL, 'gitleaks stripe-access-token; detect-secrets StripeDetector', '{"sk_","rk_"}'),
        ('stripe-webhook-secret', $p$\mwhsec_[A-Za-z0-9]{32,}$p$, 0, NULL, 'Stripe webhook signing secrets', '{"whsec_"}'),
        ('twilio-api-key', $p$\mSK[0-9a-fA-F]{32}\M$p$, 0, NULL, 'gitleaks twilio-api-key; detect-secrets TwilioKeyDetector', '{"SK"}'),
        ('azure-storage-key', $p$(?i)\mAccountKey\s*=\s*([A-Za-z0-9+/]{86}==)$p$, 1, NULL, 'detect-secrets AzureStorageKeyDetector', '{"accountkey"}'),
        ('azure-ad-client-secret', $p$(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])$p$, 1, NULL, 'gitleaks azure-ad-client-secret', '{"Q~"}'),
        ('azure-sas-token', $p$(?i)[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})$p$, 1, NULL, 'Azure shared access signatures (sig= of an SAS URL)', '{"sig="}'),
        ('gcp-api-key', $p$\mAIza[0-9A-Za-z_-]{35}$p$, 0, NULL, 'gitleaks gcp-api-key', '{"AIza"}'),
        ('gcp-oauth-secret', $p$\mGOCSPX-[A-Za-z0-9_-]{28}$p$, 0, NULL, 'Google OAuth client secrets', '{"GOCSPX-"}'),
        ('gcp-access-token', $p$\mya29\.[0-9A-Za-z_-]{30,}$p$, 0, NULL, 'Google OAuth access tokens', '{"ya29."}'),
        ('anthropic-api-key', $p$\msk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}$p$, 0, NULL, 'gitleaks anthropic-api-key, anthropic-admin-api-key', '{"sk-ant-"}'),
        ('openai-api-key', $p$\msk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}$p$, 0, 'token', 'gitleaks openai-api-key; detect-secrets OpenAIDetector', '{"sk-"}'),
        ('digitalocean-token', $p$\mdo[opr]_v1_[a-f0-9]{64}\M$p$, 0, NULL, 'gitleaks digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token', '{"dop_v1_","doo_v1_","dor_v1_"}'),
        ('shopify-token', $p$\mshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\M$p$, 0, NULL, 'gitleaks shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret', '{"shpat_","shpca_","shppa_","shpss_"}'),
        ('mailchimp-api-key', $p$\m[0-9a-f]{32}-us\d{1,2}\M$p$, 0, NULL, 'gitleaks mailchimp-api-key; detect-secrets MailchimpDetector', '{"-us"}'),
        ('telegram-bot-token', $p$\m\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])$p$, 0, NULL, 'gitleaks telegram-bot-api-token; detect-secrets TelegramBotTokenDetector', '{":AA"}'),
        ('databricks-token', $p$\mdapi[a-f0-9]{32}(?:-\d)?\M$p$, 0, NULL, 'gitleaks databricks-api-token', '{"dapi"}'),
        ('square-token', $p$\m(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43})(?![A-Za-z0-9_-])$p$, 0, NULL, 'gitleaks square-access-token, square-secret; detect-secrets SquareOAuthDetector', '{"EAAA","sq0"}'),
        ('vault-token', $p$\mhv[sb]\.[A-Za-z0-9_-]{24,}$p$, 0, NULL, 'gitleaks vault-service-token, vault-batch-token', '{"hvs.","hvb."}'),
        ('grafana-token', $p$\m(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})$p$, 0, NULL, 'gitleaks grafana-service-account-token, grafana-cloud-api-token', '{"glsa_","glc_"}'),
        ('linear-api-key', $p$\mlin_api_[A-Za-z0-9]{40}\M$p$, 0, NULL, 'gitleaks linear-api-key', '{"lin_api_"}'),
        ('postman-api-key', $p$\mPMAK-[a-f0-9]{24}-[a-f0-9]{34}\M$p$, 0, NULL, 'gitleaks postman-api-token', '{"PMAK-"}'),
        ('doppler-token', $p$\mdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\M$p$, 0, NULL, 'gitleaks doppler-api-token', '{"dp."}'),
        ('age-secret-key', $p$\mAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\M$p$, 0, NULL, 'gitleaks age-secret-key', '{"AGE-SECRET-KEY-1"}'),
        ('jwt', $p$\meyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$p$, 0, NULL, 'gitleaks jwt; detect-secrets JwtTokenDetector', '{"eyJ"}'),
        ('http-basic-auth', $p$(?i)\mauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})$p$, 1, NULL, 'detect-secrets BasicAuthDetector (Authorization: Basic headers)', '{"basic"}'),
        ('http-bearer-token', $p$(?i)\mbearer\s+([A-Za-z0-9._~+/-]{16,}=*)$p$, 1, 'token', 'gitleaks generic bearer tokens (Authorization: Bearer headers)', '{"bearer"}'),
        ('url-credentials', $p$\m[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'"<>]*:([^\s/@'"<>]+)@$p$, 1, 'password', 'detect-secrets BasicAuthDetector (user:password@ in URLs, redis://:password@)', '{"://"}'),
        ('docker-auth', $p$(?i)"auth"\s*:\s*"([A-Za-z0-9+/]{16,}={0,2})"$p$, 1, 'token', 'Docker config.json auths (base64 user:password)', '{"\"auth\""}'),
        ('aws-secret-key', $p$(?<![A-Za-z0-9/+=])(?<![A-Za-z0-9/+=]{60}\n)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])$p$, 0, 'aws-bare', 'gitleaks aws secret keys without a keyword: 40 characters of base64, mixed case and digits, high entropy', NULL),
        ('assigned-secret', $p$(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*(?:passwd|password|passphrase|pwd)[A-Za-z0-9_.-]*["']?\s*(?:[:=]|:=|=>)\s*["']?([^\s"'`<>,;(){}\[\]=][^\s"'`<>,;(){}\[\]]{7,})$p$, 1, 'password-value', 'detect-secrets KeywordDetector (password keys: any value that is not a placeholder or a reference)', '{"passw","pwd"}'),
        ('assigned-secret', $p$(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*(?:secret|token|passwd|password|passphrase|pwd|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|private[_.-]?key|credentials?)[A-Za-z0-9_.-]*["']?\s*(?:[:=]|:=|=>)\s*["']?([^\s"'`<>,;(){}\[\]=][^\s"'`<>,;(){}\[\]]{7,})$p$, 1, 'assignment', 'gitleaks generic-api-key (entropy 3.5); detect-secrets KeywordDetector', '{"secret","token","passw","pwd","key","credential"}')
    ) AS r(kind, pattern, grp, "check", source, hints)
$$;
COMMENT ON FUNCTION brain.secret_rules IS
    'The secret scanner''s rules in order (an earlier rule wins an overlap): the kind reported, the pattern, the capture group holding the secret, the extra check and the public rule it follows (docs/security.md).';

-- Shannon entropy of a text in bits per character.
CREATE OR REPLACE FUNCTION brain._entropy(t text)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(-sum(c.n::double precision / length(t) * log(2, c.n::numeric / length(t))::double precision), 0)
    FROM (SELECT count(*) AS n FROM regexp_split_to_table(t, '') AS ch GROUP BY ch) AS c
$$;

-- The second test of a candidate the pattern found. Placeholders, variable
-- references and ordinary words are no secrets.
CREATE OR REPLACE FUNCTION brain._secret_candidate_ok(check_name text, v text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN check_name IS NULL THEN true
        -- a placeholder or an earlier redaction
        WHEN v ~* '^(\*+|x+|\.\.\.+|<[^>]*>|\$\{?[\w.:-]+\}?|%\(?\w+\)?s?|\{\{.*\}\}|\[redacted:[a-z0-9-]+\]|pass(word)?|secret|changeme|example|your[_-]?\w*|redacted|null|none|undefined|true|false)$'
            THEN false
        WHEN check_name = 'password' THEN v !~ '^[$%{]'
        WHEN check_name = 'password-value' THEN
             v !~ '^[$%{]' AND v !~ '^[0-9.:_-]+$' AND v ~ '[^A-Za-z]'
             AND v !~ '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'
             AND v !~ '^(https?|file)://' AND v !~ '^/|^\./|^~/'
        WHEN check_name = 'mixed' THEN v ~ '[0-9]' AND v ~ '[A-Z]' AND v ~ '[a-z]'
        WHEN check_name = 'token' THEN v ~ '[0-9]' AND v ~ '[A-Za-z]' AND brain._entropy(v) >= 3.5
        WHEN check_name = 'aws-bare' THEN regexp_count(v, '[0-9]') >= 3 AND regexp_count(v, '[A-Z]') >= 5
             AND regexp_count(v, '[a-z]') >= 5 AND brain._entropy(v) >= 4.3
        WHEN check_name = 'assignment' THEN
             v !~ '^[$%{]'                                   -- ${VAR}, %(var)s, {{ var }}
             AND v !~ '^[0-9.:_-]+$'                         -- numbers, versions, times
             AND v ~ '[0-9]'                                 -- a word or a dotted name is a reference
             AND v ~ '[A-Za-z]'
             AND v !~ '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'
             AND v !~ '^(https?|file)://'
             AND v !~ '^/|^\./|^~/'                          -- a path
             AND brain._entropy(v) >= 3.5
        ELSE true END
$$;

CREATE OR REPLACE FUNCTION brain.scan_secrets(t text)
RETURNS TABLE (kind text, start_at integer, end_at integer)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    n integer;
    s integer;
    e integer;
    h_rule integer[] := '{}';
    h_kind text[] := '{}';
    h_start integer[] := '{}';
    h_end integer[] := '{}';
    lt text;
    hint text;
    hinted boolean;
BEGIN
    IF t IS NULL OR t = '' THEN
        RETURN;
    END IF;
    lt := lower(t);
    FOR r IN SELECT * FROM brain.secret_rules() AS x ORDER BY x.rule LOOP
        IF r.hints IS NOT NULL THEN
            -- (a loop of simple expressions: no query per rule)
            hinted := false;
            FOREACH hint IN ARRAY r.hints LOOP
                IF strpos(CASE WHEN starts_with(r.pattern, '(?i)') THEN lt ELSE t END, hint) > 0 THEN
                    hinted := true;
                    EXIT;
                END IF;
            END LOOP;
            CONTINUE WHEN NOT hinted;
        END IF;
        CONTINUE WHEN t !~ r.pattern;
        n := regexp_count(t, r.pattern);
        FOR i IN 1 .. n LOOP
            s := regexp_instr(t, r.pattern, 1, i, 0, '', r.grp);
            e := regexp_instr(t, r.pattern, 1, i, 1, '', r.grp);
            CONTINUE WHEN s = 0 OR e <= s;
            CONTINUE WHEN NOT brain._secret_candidate_ok(r."check", substr(t, s, e - s));
            h_rule := h_rule || r.rule;
            h_kind := h_kind || r.kind;
            h_start := h_start || s;
            h_end := h_end || e;
        END LOOP;
    END LOOP;
    -- A hit that overlaps a hit of an earlier rule is that hit.
    RETURN QUERY
        SELECT h.k, h.s, h.e - 1
        FROM unnest(h_rule, h_kind, h_start, h_end) AS h(r, k, s, e)
        WHERE NOT EXISTS (SELECT FROM unnest(h_rule, h_start, h_end) AS o(r, s, e)
                          WHERE o.r < h.r AND o.s < h.e AND h.s < o.e)
        ORDER BY h.s;
END
$$;
COMMENT ON FUNCTION brain.scan_secrets IS
    'The secrets in a text: each one''s kind and its position (first and last character, counted from 1). Never the value.';

CREATE OR REPLACE FUNCTION brain.find_secrets(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT s.kind ORDER BY s.kind), '{}') FROM brain.scan_secrets(t) AS s
$$;
COMMENT ON FUNCTION brain.find_secrets IS
    'The kinds of secret found in a text (brain.scan_secrets): empty when clean.';

CREATE OR REPLACE FUNCTION brain.redact_secrets(t text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hit record;
BEGIN
    FOR hit IN SELECT * FROM brain.scan_secrets(t) AS s ORDER BY s.start_at DESC LOOP
        t := overlay(t PLACING '[redacted:' || hit.kind || ']' FROM hit.start_at FOR hit.end_at - hit.start_at + 1);
    END LOOP;
    RETURN t;
END
$$;
COMMENT ON FUNCTION brain.redact_secrets IS
    'The text with each secret replaced by [redacted:KIND] (the key of a `key = value` line and the rest of a URL are kept).';

-- The text of a field to scan: a string as it is; an array or an object as its
-- strings one per line (JSON escapes would hide a line break before a token),
-- then as JSON (its keys and numbers).
CREATE OR REPLACE FUNCTION brain._field_text(v jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE jsonb_typeof(v)
        WHEN 'string' THEN v #>> '{}'
        WHEN 'null' THEN NULL
        WHEN 'array' THEN concat_ws(E'\n', (SELECT string_agg(x #>> '{}', E'\n')
                                            FROM jsonb_path_query(v, 'strict $.**') AS x
                                            WHERE jsonb_typeof(x) = 'string'), v::text)
        WHEN 'object' THEN concat_ws(E'\n', (SELECT string_agg(x #>> '{}', E'\n')
                                             FROM jsonb_path_query(v, 'strict $.**') AS x
                                             WHERE jsonb_typeof(x) = 'string'), v::text)
        ELSE v::text END
$$;

-- Refuses fields that hold a secret: BR007 naming the field, the kind and the
-- position, never the value. fields: {"name": text or any JSON}. Every caller
-- runs it before any other check that could repeat a value in a message.
CREATE OR REPLACE FUNCTION brain._refuse_secrets(fields jsonb, outcome text DEFAULT 'nothing was stored')
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hits jsonb;
    first jsonb;
BEGIN
    -- One scan of all the fields together; each field alone only when it found something.
    IF NOT EXISTS (SELECT FROM brain.scan_secrets((
            SELECT string_agg(brain._field_text(f.value), E'\n\u0001\n')
            FROM jsonb_each(fields) AS f WHERE jsonb_typeof(f.value) <> 'null'))) THEN
        RETURN;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('field', f.key, 'kind', s.kind, 'start', s.start_at, 'end', s.end_at)
                     ORDER BY f.ord, s.start_at)
    INTO hits
    FROM jsonb_each(fields) WITH ORDINALITY AS f(key, value, ord)
    CROSS JOIN LATERAL brain.scan_secrets(brain._field_text(f.value)) AS s;
    IF hits IS NULL THEN
        RETURN;
    END IF;
    first := hits->0;
    PERFORM brain._raise('BR007',
        format('The %s holds what looks like a secret (%s at character %s)%s; %s.',
               replace(first->>'field', '_', ' '), first->>'kind', first->>'start',
               CASE WHEN jsonb_array_length(hits) > 1
                    THEN format(' and %s more', jsonb_array_length(hits) - 1) ELSE '' END, outcome),
        jsonb_build_object('secrets', hits,
                           'patterns', (SELECT jsonb_agg(DISTINCT h->>'kind') FROM jsonb_array_elements(hits) AS h)),
        'Remove the secret and refer to where it is kept (a vault path or an environment variable name).');
END
$$;

-- An observed text as stored: secrets redacted, control and bidi characters
-- removed; with what was redacted where (positions in the text as sent) and
-- the injection signals of the text as sent.
CREATE OR REPLACE FUNCTION brain._clean_observed(t text, OUT cleaned text, OUT redacted jsonb, OUT signals text[])
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hit record;
BEGIN
    cleaned := t;
    signals := brain.injection_signals(t);
    FOR hit IN SELECT * FROM brain.scan_secrets(t) AS s ORDER BY s.start_at DESC LOOP
        cleaned := overlay(cleaned PLACING '[redacted:' || hit.kind || ']'
                           FROM hit.start_at FOR hit.end_at - hit.start_at + 1);
        redacted := jsonb_build_object('kind', hit.kind, 'start', hit.start_at, 'end', hit.end_at)
                    || coalesce(redacted, '[]');
    END LOOP;
    cleaned := brain.clean_body(cleaned);
END
$$;

CREATE OR REPLACE FUNCTION brain.check_text(text text, field text DEFAULT 'text')
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object(coalesce(field, 'text'), check_text.text),
                                  'it was not used');
    RETURN true;
END
$$;
COMMENT ON FUNCTION brain.check_text IS
    'true when a text holds no secret, else BR007 naming the field, kind and position. Clients call it before they send a text (a search query, a boot task) to an embedding provider.';

-- Headlines are one line of visible text: line breaks and tabs become spaces,
-- control (Cc) and format (Cf) characters go: bidi overrides and isolates,
-- zero-width characters, the invisible tag characters.
CREATE OR REPLACE FUNCTION brain.clean_headline(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT brain.trim_space(regexp_replace(regexp_replace(
        regexp_replace(t, '[\r\n\t\u000b\u000c\u0085\u2028\u2029]+', ' ', 'g'),
        '[\u0000-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001-\U000e007f]',
        '', 'g'), ' {2,}', ' ', 'g'))
$$;
COMMENT ON FUNCTION brain.clean_headline IS
    'A headline as stored: one line (line breaks and tabs folded to spaces), without control or format characters (bidi overrides, zero-width, tag characters).';

-- Bodies keep their lines (\r\n becomes \n) and tabs, and lose the other
-- control characters, the bidi controls and the tag characters.
CREATE OR REPLACE FUNCTION brain.clean_body(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_replace(regexp_replace(t, '\r\n?|[\u0085\u2028\u2029]', E'\n', 'g'),
        '[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\U000e0001-\U000e007f]',
        '', 'g')
$$;
COMMENT ON FUNCTION brain.clean_body IS
    'A body as stored: lines and tabs kept, other control characters, bidi controls and tag characters removed.';

-- Stored text as the boot payload and the CLI show it: a JSON string literal on
-- one line. Quotes, backslashes and line breaks are escaped (to_json), and so
-- is every invisible character (Cc, Cf, line and paragraph separators): the
-- text can neither close its quotes nor start a line of its own.
CREATE OR REPLACE FUNCTION brain.quote_text(t text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text := to_json(coalesce(t, ''))::text;
    ch text;
    cp integer;
BEGIN
    FOR ch IN
        SELECT DISTINCT m[1]
        FROM regexp_matches(q, '([\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001-\U000e007f])', 'g') AS m
    LOOP
        cp := ascii(ch);
        q := replace(q, ch, CASE WHEN cp < 65536 THEN '\u' || lpad(to_hex(cp), 4, '0')
                                 ELSE '\u' || to_hex(55296 + ((cp - 65536) >> 10))
                                      || '\u' || to_hex(56320 + ((cp - 65536) & 1023)) END);
    END LOOP;
    RETURN q;
END
$$;
COMMENT ON FUNCTION brain.quote_text IS
    'A stored text as a one-line JSON string literal, every quote, line break and invisible character escaped: how the boot payload shows stored text, so that it cannot close its quotes or start a line (a heading, a list item) of the payload.';

-- A memory waiting for a person: flagged at write time and not yet confirmed.
CREATE OR REPLACE FUNCTION brain._is_flagged(flag_reasons text[], flag_confirmed_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT cardinality(flag_reasons) > 0 AND flag_confirmed_at IS NULL
$$;

-- Signs that a text speaks to the agent instead of recording something:
-- each reason found. Deterministic: patterns only (docs/security.md).
CREATE OR REPLACE FUNCTION brain.injection_signals(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(x.reason ORDER BY x.reason), '{}') FROM (VALUES
        ('override-phrase', t ~* '\m(ignore|disregard|forget|override|bypass|skip)\s+(all\s+|any\s+|the\s+|your\s+|of\s+)*(previous|prior|above|earlier|preceding|system|existing|original|safety|other)\s+(instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|context|constraints?)'
                            OR t ~* '\m(you are now|from now on,? you|new instructions\s*:|do not (tell|inform|mention (this )?to) the user|without telling the user|developer mode|jailbreak|act as (an? )?(unrestricted|different)|pretend (that )?you are|your (real|true|new) (instructions|task|goal) (is|are))'),
        ('role-marker', t ~* '(^|\n)\s*(#+\s*)?(system|assistant|developer|human|user)\s*(prompt\s*)?:'
                        OR t ~* '<\|(im_start|im_end|system|assistant|user|endoftext)\|>|\[/?INST\]|<</?SYS>>|</?(system|assistant|instructions?)>'),
        ('tool-call', t ~* '"(tool_use|tool_calls|function_call|tool_call)"|<(tool_call|function_calls|invoke|antml:\w+)[\s>]|"name"\s*:\s*"[^"]+"\s*,\s*"(arguments|input|parameters)"\s*:'
                      OR t ~* '"type"\s*:\s*"(tool_use|function)"'),
        ('external-link', t ~* '!\[[^\]]*\]\(\s*<?(https?:)?//|\[[^\]]*\]\(\s*<?(https?:)?//|<(img|iframe|script|a|link)\M[^>]*(src|href)\s*=\s*["'']?(https?:)?//'),
        ('payload-heading', t ~* '(^|\n)\s*#+\s*(pybrain memory|BLOCKER rules|Pinned memories|PATTERN rules|Open tasks|Skills|Handoff from|Other sessions|Action items to acknowledge)'),
        ('hidden-characters', t ~ '[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0001-\U000e007f]'
                              OR t ~ '<!--')
    ) AS x(reason, found)
    WHERE x.found
$$;
COMMENT ON FUNCTION brain.injection_signals IS
    'Why a text looks like an instruction to the agent: override-phrase, role-marker, tool-call, external-link, payload-heading (a heading of the boot payload''s own), hidden-characters. Empty when none. Deterministic (patterns only).';

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
