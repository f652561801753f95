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

-- BR009 unless a count a caller asks for (max_results, max_rows, buckets) lies
-- between 1 and most; the detail names the argument and what it was.
CREATE OR REPLACE FUNCTION brain._check_count(arg text, given integer, most integer, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF given IS NULL OR given NOT BETWEEN 1 AND most THEN
        PERFORM brain._raise('BR009', format('%s lies between 1 and %s.', arg, most),
            jsonb_build_object(arg, given), hint);
    END IF;
END
$$;

-- The check of a text argument that may not be left out or blank (a reason,
-- a note, an event): `code` with the message and hint when it is.
CREATE OR REPLACE FUNCTION brain._require_text(given text, code text, message text, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF given IS NULL OR brain.trim_space(given) = '' THEN
        PERFORM brain._raise(code, message, NULL, hint);
    END IF;
END
$$;

-- The clock of a call that changes something (maintenance, prune, sessions,
-- tasks): a client's `now` may replay the past, never run ahead of the
-- server's clock (it would end other agents' sessions, archive and prune
-- early). NULL is the server's clock. Reading functions (search, boot_payload,
-- metrics) take their `now` as given: it changes only what the caller sees.
CREATE OR REPLACE FUNCTION brain._clock(now timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT least(coalesce(now, pg_catalog.now()), pg_catalog.now())
$$;

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
-- looked for in the lowercased text, for a case-insensitive rule; a hint
-- that starts with ~ is a regular expression the lowercased text matches), which
-- keeps a clean text's scan to a few regular expressions. Earlier rules win
-- where two hits overlap. docs/security.md lists the rules.
CREATE OR REPLACE FUNCTION brain.secret_rules()
RETURNS TABLE (rule integer, kind text, pattern text, grp integer, "check" text, source text, hints text[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT row_number() OVER ()::integer, r.kind, r.pattern, r.grp, r."check", r.source, r.hints::text[] FROM (VALUES
        ('private-key', $p$-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[^-]*(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)?$p$, 0, 'pem', 'gitleaks private-key; detect-secrets PrivateKeyDetector', '{"PRIVATE KEY"}'),
        -- a PEM body without its armour: base64 of a DER private key (SEQUENCE,
        -- then INTEGER version: PKCS#1, PKCS#8, SEC1 EC) or an OpenSSH key, over lines
        ('private-key', $p$(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{2}[AQgw]IBA|MI[E-H][A-Za-z0-9+/]AgE[AB]|M[A-H][A-Za-z0-9+/]CAQ|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{40,}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/]{4,})*={0,2}$p$, 0, 'pem-body', 'gitleaks private-key (the body alone: DER of a private key, or openssh-key-v1, in base64)', '{"~mii[a-z0-9+/]{2}[aqgw]iba|mi[e-h][a-z0-9+/]age[ab]|m[a-h][a-z0-9+/]caq|b3blbnnzac1rzxktdje"}'),
        ('private-key', $p$(?i)Private-Lines:[ \t]*\d+[ \t]*\r?\n((?:[ \t]*[A-Za-z0-9+/]+={0,2}[ \t]*(?:\r?\n|$))+)$p$, 1, 'pem', 'PuTTY key files (PuTTY-User-Key-File-2 and -3: the Private-Lines)', '{"private-lines"}'),
        ('aws-access-key-id', $p$\m(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}\M$p$, 0, NULL, 'gitleaks aws-access-token; detect-secrets AWSKeyDetector', '{"AKIA","ASIA","ABIA","ACCA","AGPA","AIDA","AIPA","ANPA","ANVA","APKA","AROA","ASCA"}'),
        ('aws-access-key-id', $p$\m(?:akia|asia)[0-9a-z]{16}\M$p$, 0, 'lower-id', 'the same, lower-cased', '{"akia","asia"}'),
        ('aws-secret-key', $p$(?i)\maws\w*secret\w*["']?\s*(?:[:=]|=>)\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])$p$, 1, NULL, 'detect-secrets AWSKeyDetector (aws_secret_access_key lines)', '{"aws"}'),
        ('github-token', $p$\m(?:[gG][hH][pPoOuUsSrR]_[A-Za-z0-9]{36,255}|[gG][iI][tT][hH][uU][bB]_[pP][aA][tT]_[A-Za-z0-9_]{22,255})$p$, 0, 'provider', 'gitleaks github-pat, github-oauth, github-app-token, github-fine-grained-pat', '{"ghp_","gho_","ghu_","ghs_","ghr_","github_pat_"}'),
        ('gitlab-token', $p$\m(?:[gG][lL][pP][aA][tT]|glptt|gldt|glrt|glcbt|glffct|glimt|glsoat|glagent)-[A-Za-z0-9_-]{20,}$p$, 0, 'provider', 'gitleaks gitlab-pat, gitlab-ptt, gitlab-deploy-token, gitlab-runner-authentication-token', '{"glpat-","glptt-","gldt-","glrt-","glcbt-","glffct-","glimt-","glsoat-","glagent-"}'),
        ('huggingface-token', $p$\m(?:[hH][fF]_|api_org_)[A-Za-z0-9]{30,}\M$p$, 0, 'provider', 'gitleaks huggingface-access-token, huggingface-organization-api-token', '{"hf_","api_org_"}'),
        ('npm-token', $p$\m[nN][pP][mM]_[A-Za-z0-9]{36}\M$p$, 0, 'provider', 'gitleaks npm-access-token; detect-secrets NpmDetector', '{"npm_"}'),
        ('pypi-token', $p$\mpypi-AgE[A-Za-z0-9_-]{50,}$p$, 0, NULL, 'gitleaks pypi-upload-token; detect-secrets PypiTokenDetector', '{"pypi-AgE"}'),
        ('sendgrid-api-key', $p$\mSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$p$, 0, NULL, 'gitleaks sendgrid-api-token; detect-secrets SendGridDetector', '{"SG."}'),
        ('slack-token', $p$\mxox[abposre]-[A-Za-z0-9-]{10,}$p$, 0, NULL, 'gitleaks slack-bot-token, slack-user-token, slack-app-token; detect-secrets SlackDetector', '{"xox"}'),
        ('slack-webhook', $p$https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{30,}$p$, 0, NULL, 'gitleaks slack-webhook-url; detect-secrets SlackDetector', '{"hooks.slack.com"}'),
        ('stripe-key', $p$\m[sSrR][kK]_(?:[lL][iI][vV][eE]|[tT][eE][sS][tT]|[pP][rR][oO][dD])_[0-9A-Za-z]{16,}$p$, 0, 'provider', 'gitleaks stripe-access-token; detect-secrets StripeDetector', '{"sk_","rk_"}'),
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
        ('telegram-bot-token', $p$(?<![0-9])\d{5,16}:A[A-Za-z0-9_-]{32,34}(?![A-Za-z0-9_-])$p$, 0, 'token', 'gitleaks telegram-bot-api-token; detect-secrets TelegramBotTokenDetector', '{":A"}'),
        ('databricks-token', $p$\mdapi[a-f0-9]{32}(?:-\d)?\M$p$, 0, NULL, 'gitleaks databricks-api-token', '{"dapi"}'),
        ('square-token', $p$\m(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43})(?![A-Za-z0-9_-])$p$, 0, NULL, 'gitleaks square-access-token, square-secret; detect-secrets SquareOAuthDetector', '{"EAAA","sq0"}'),
        ('vault-token', $p$\mhv[sb]\.[A-Za-z0-9_-]{24,}$p$, 0, NULL, 'gitleaks vault-service-token, vault-batch-token', '{"hvs.","hvb."}'),
        ('grafana-token', $p$\m(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})$p$, 0, NULL, 'gitleaks grafana-service-account-token, grafana-cloud-api-token', '{"glsa_","glc_"}'),
        ('linear-api-key', $p$\mlin_api_[A-Za-z0-9]{40}\M$p$, 0, NULL, 'gitleaks linear-api-key', '{"lin_api_"}'),
        ('postman-api-key', $p$\mPMAK-[a-f0-9]{24}-[a-f0-9]{34}\M$p$, 0, NULL, 'gitleaks postman-api-token', '{"PMAK-"}'),
        ('doppler-token', $p$\mdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\M$p$, 0, NULL, 'gitleaks doppler-api-token', '{"dp."}'),
        ('age-secret-key', $p$\mAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\M$p$, 0, NULL, 'gitleaks age-secret-key', '{"AGE-SECRET-KEY-1"}'),
        ('discord-bot-token', $p$(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])$p$, 0, 'token', 'gitleaks discord-api-token (the bot token: base64 of the bot id, a time, an HMAC)', '{"~\\.[a-z0-9_-]{6,7}\\."}'),
        ('atlassian-api-token', $p$\mATATT3[A-Za-z0-9_=-]{150,}$p$, 0, NULL, 'gitleaks atlassian-api-token (ATATT3…)', '{"ATATT3"}'),
        ('firebase-server-key', $p$\mAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}$p$, 0, NULL, 'gitleaks gcp firebase cloud messaging server keys (AAAA…:APA91b…)', '{":APA91b"}'),
        ('jwt', $p$\meyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$p$, 0, NULL, 'gitleaks jwt; detect-secrets JwtTokenDetector', '{"eyJ"}'),
        ('http-basic-auth', $p$(?i)\mauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})$p$, 1, NULL, 'detect-secrets BasicAuthDetector (Authorization: Basic headers)', '{"basic"}'),
        ('http-bearer-token', $p$(?i)\mbearer\s+([A-Za-z0-9._~+/-]{16,}=*)$p$, 1, 'token', 'gitleaks generic bearer tokens (Authorization: Bearer headers)', '{"bearer"}'),
        ('url-credentials', $p$\m[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'"<>]*:([^\s/@'"<>]+)@$p$, 1, 'password', 'detect-secrets BasicAuthDetector (user:password@ in URLs, redis://:password@)', '{"://"}'),
        ('url-credentials', $p$(?i)[?&;](?:auth|token|access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token|api[_-]?key|apikey|secret|client[_-]?secret|pass|passwd|password|pwd|pw)=([^&\s#'"<>]{8,})$p$, 1, 'token', 'gitleaks generic-api-key in a URL''s query (?auth=, &token=, ?access_token=, …)', '{"auth=","token=","key=","secret=","pass=","pw=","pwd=","passwd=","password="}'),
        ('pgpass-password', $p$(?n)^[ \t]*(?:[A-Za-z0-9*._-]+|\[[0-9A-Fa-f:]+\]):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:((?:[^\s:\\]|\\.)+)[ \t]*(?:$)$p$, 1, 'pgpass', 'PostgreSQL .pgpass lines (host:port:database:user:password)', '{"~:([0-9]{1,5}|\\*):[^:\\s]+:[^:\\s]+:"}'),
        ('docker-auth', $p$(?i)"auth"\s*:\s*"([A-Za-z0-9+/]{16,}={0,2})"$p$, 1, 'token', 'Docker config.json auths (base64 user:password)', '{"\"auth\""}'),
        ('aws-secret-key', $p$(?<![A-Za-z0-9/+=])(?<![A-Za-z0-9/+=]{60}\n)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])$p$, 0, 'aws-bare', 'gitleaks aws secret keys without a keyword: 40 characters of base64, mixed case and digits, high entropy', NULL),
        ('assigned-secret', $p$(?i)(?:^|[^A-Za-z0-9])(?:[A-Za-z0-9_.-]*(?:passwd|password|passphrase|pwd)[A-Za-z0-9_.-]*|(?:[A-Za-z0-9]+[_.-])*(?:pass|pw))["']?\s*(?:[:=]|:=|=>)\s*["']?([^\s"'`<>,;(){}\[\]=][^\s"'`<>,;(){}\[\]]{7,})$p$, 1, 'password-value', 'detect-secrets KeywordDetector (password keys, pass and pw too: any value that is not a placeholder or a reference)', '{"pass","pw"}'),
        ('assigned-secret', $p$(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*(?:secret|token|passwd|password|passphrase|pwd|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|private[_.-]?key|credentials?)[A-Za-z0-9_.-]*["']?\s*(?:[:=]|:=|=>)\s*["']?([^\s"'`<>,;(){}\[\]=][^\s"'`<>,;(){}\[\]]{7,})$p$, 1, 'assignment', 'gitleaks generic-api-key (entropy 3.5); detect-secrets KeywordDetector', '{"secret","token","passw","pwd","key","credential"}'),
        -- A password of letters only: assigned with =, := or =>, as a line's
        -- own `password: value` (YAML, .env) or as a quoted JSON value.
        ('assigned-secret', $p$(?i)(?:^|[^A-Za-z0-9])(?:[A-Za-z0-9_.-]*(?:passwd|password|passphrase|pwd)[A-Za-z0-9_.-]*|(?:[A-Za-z0-9]+[_.-])*(?:pass|pw))["']?\s*(?:=|:=|=>)\s*["']?([A-Za-z]{8,})(?![A-Za-z0-9_.(\[{-])$p$, 1, 'password-letters', 'detect-secrets KeywordDetector (a password of letters only, assigned)', '{"pass","pw"}'),
        ('assigned-secret', $p$(?in)^[ \t-]*["']?[A-Za-z0-9_.-]*(?:passwd|password|passphrase|pwd)[A-Za-z0-9_.-]*["']?[ \t]*:[ \t]*["']?([A-Za-z]{8,})["']?[ \t]*(?=\n|$)$p$, 1, 'password-letters', 'detect-secrets KeywordDetector (a password of letters only, a YAML or .env line)', '{"passw","pwd"}'),
        ('assigned-secret', $p$(?i)["'][A-Za-z0-9_.-]*(?:passwd|password|passphrase|pwd)[A-Za-z0-9_.-]*["']\s*:\s*["']([A-Za-z]{8,})["']$p$, 1, 'password-letters', 'detect-secrets KeywordDetector (a password of letters only, a JSON value)', '{"passw","pwd"}'),
        ('netrc-password', $p$(?i)\m(?:machine\s+[a-z0-9][a-z0-9._-]*|default)(?:\s+(?:login|account)\s+\S+)*\s+password\s+([^\s"'`]+)$p$, 1, 'netrc', 'detect-secrets KeywordDetector (.netrc machine / login / password entries)', '{"machine","default"}'),
        ('hex-secret', $p$(?i)\m(?:secret|token|api[ _.-]?key|apikey|auth[ _.-]?key|access[ _.-]?key|passw(?:or)?d|credentials?)s?["']?(?:\s*(?:[:=]|:=|=>|\mis\M|\mwas\M|\mreads\M))*\s*["']?([0-9a-f]{32,})(?![0-9A-Za-z])$p$, 1, 'hex', 'gitleaks generic-api-key (hex values after a secret''s name, in a sentence or a header)', '{"secret","token","key","passw","pwd","credential"}'),
        -- The first part of a provider token cut short (a key given in halves):
        -- its prefix and eight characters or more, with a digit.
        ('partial-token', $p$\m(?:gh[pousr]_|github_pat_|glpat-|xox[abposre]-|sk-ant-|sk_live_|rk_live_|hf_|npm_|AKIA|ASIA|AIza|ya29\.|dop_v1_|shpat_|hvs\.|lin_api_|pypi-AgE|GOCSPX-|whsec_|glsa_|dapi)[A-Za-z0-9]{8,}$p$, 0, 'fragment', 'the prefixes of gitleaks'' provider rules, the token cut short', '{"ghp_","gho_","ghu_","ghs_","ghr_","github_pat_","glpat-","xox","sk-ant-","sk_live_","rk_live_","hf_","npm_","AKIA","ASIA","AIza","ya29.","dop_v1_","shpat_","hvs.","lin_api_","pypi-AgE","GOCSPX-","whsec_","glsa_","dapi"}')
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
             v !~ '^[$%{]' AND v !~ '^[0-9.:_-]+$' AND rtrim(v, '.,;:!?') ~ '[^A-Za-z]'
             AND v !~ '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'
             AND v !~ '^(https?|file)://' AND v !~ '^/|^\./|^~/'
        WHEN check_name = 'mixed' THEN v ~ '[0-9]' AND v ~ '[A-Z]' AND v ~ '[a-z]'
        WHEN check_name = 'token' THEN v ~ '[0-9]' AND v ~ '[A-Za-z]' AND brain._entropy(v) >= 3.5
        WHEN check_name = 'password-letters' THEN
             -- a word that says something about the password, or a name in
             -- camelCase or capitals (a variable), is no password
             lower(v) !~ '^(required|optional|mandatory|disabled|enabled|incorrect|invalid|expired|username|usernames|passwords?|default|defaults|hidden|masked|unchanged|unknown|missing|generated|random|encrypted|hashed|protected|forbidden|inherit|inherited|prompted|environment|settings|variable|placeholder|anything|something|whatever|secrets?|changeme|example|examples|notrequired|provided|supplied|rotated|redacted|omitted|ignored|none|empty|blank|sensitive|string|boolean|integer|credentials?)$'
             AND v !~ '^[a-z]+([A-Z][a-z0-9]*)+$' AND v !~ '^[A-Z]+$'
        WHEN check_name = 'netrc' THEN v !~ '^[$%{<]' AND length(v) >= 4
        WHEN check_name = 'pgpass' THEN v !~ '^[$%{<*]' AND length(v) >= 4 AND v !~ '^[0-9.]+$'
        -- a provider token, not its example (ghp_xxxx…, sk_live_0000…)
        WHEN check_name = 'provider' THEN v !~ '([A-Za-z0-9])\1{5}'
        WHEN check_name = 'lower-id' THEN regexp_count(v, '[0-9]') >= 2
        -- a PEM block with a body (a line of base64, cut short too), not two
        -- armour lines quoted in a sentence
        WHEN check_name = 'pem' THEN v ~ '(^|\n|\\n)[ \t]*[A-Za-z0-9+/]{4}'
        WHEN check_name = 'pem-body' THEN length(v) >= 100
        WHEN check_name = 'hex' THEN v ~ '[0-9]' AND v ~ '[A-Fa-f]'
        WHEN check_name = 'fragment' THEN (v ~ '[0-9]' OR (regexp_count(v, '[a-z][A-Z]') + regexp_count(v, '[A-Z]{2}[a-z]') >= 2 AND v !~ '([A-Z][a-z]{2,}){2,}$'))
             AND brain._entropy(v) >= 2.5
        WHEN check_name = 'aws-bare' THEN (regexp_count(v, '[0-9]') >= 3 OR (v ~ '[0-9]' AND v ~ '[/+]'))
             AND regexp_count(v, '[A-Z]') >= 5
             AND regexp_count(v, '[a-z]') >= 5 AND brain._entropy(v) >= 4.3
        WHEN check_name = 'assignment' THEN
             v !~ '^[$%{]'                                   -- ${VAR}, %(var)s, {{ var }}
             AND v !~ '^[0-9.:_-]+$'                         -- numbers, versions, times
             AND v ~ '[0-9]'                                 -- a word or a dotted name is a reference
             AND v ~ '[A-Za-z]'
             AND v !~ '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'
             AND v !~ '^(https?|file)://'
             AND v !~ '^/|^\./|^~/'                          -- a path
             AND v !~ '^[A-Za-z_]+&[A-Za-z_]+='               -- a query string: token_type=bearer&expires_in=3600
             AND brain._entropy(v) >= 3.5
        ELSE true END
$$;

-- A column of the rules as an array, for brain._scan_rules: an immutable call
-- with a constant argument, which the planner folds into a constant once per
-- session, so a scan does not read brain.secret_rules() again. Hints are
-- flattened: hint i belongs to rule hint_rule[i].
CREATE OR REPLACE FUNCTION brain._secret_rule_column(col text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE col
        WHEN 'kind' THEN (SELECT array_agg(r.kind ORDER BY r.rule) FROM brain.secret_rules() AS r)
        WHEN 'pattern' THEN (SELECT array_agg(r.pattern ORDER BY r.rule) FROM brain.secret_rules() AS r)
        WHEN 'grp' THEN (SELECT array_agg(r.grp::text ORDER BY r.rule) FROM brain.secret_rules() AS r)
        WHEN 'check' THEN (SELECT array_agg(r."check" ORDER BY r.rule) FROM brain.secret_rules() AS r)
        WHEN 'unhinted' THEN (SELECT coalesce(array_agg(r.rule::text ORDER BY r.rule), '{}')
                              FROM brain.secret_rules() AS r WHERE r.hints IS NULL)
        WHEN 'hint_rule' THEN (SELECT array_agg(r.rule::text ORDER BY r.rule, h.n)
                               FROM brain.secret_rules() AS r, unnest(r.hints) WITH ORDINALITY AS h(t, n))
        WHEN 'hint_lower' THEN (SELECT array_agg(CASE WHEN left(h.t, 1) = '~' THEN h.t ELSE lower(h.t) END ORDER BY r.rule, h.n)
                                FROM brain.secret_rules() AS r, unnest(r.hints) WITH ORDINALITY AS h(t, n))
        -- one regular expression for every hint, lowercased: a text (lowercased)
        -- that does not match it holds no hint at all
        -- (the short hints with what follows them: "sk" alone is in every "task")
        WHEN 'hint_any' THEN ARRAY[(SELECT string_agg(DISTINCT CASE h.t
                                        WHEN 'SK' THEN 'sk[0-9a-f]{32}'
                                        WHEN ':A' THEN ':a[a-z0-9_-]{32}'
                                        WHEN '-us' THEN '[0-9a-f]-us[0-9]'
                                        WHEN 'pass' THEN 'pass[^a-z]'
                                        WHEN 'pw' THEN 'pw[^a-z]'
                                        ELSE CASE WHEN left(h.t, 1) = '~' THEN substr(h.t, 2)
                                             ELSE regexp_replace(lower(h.t), '([.\[\](){}*+?^$|\\])', '\\\1', 'g') END END, '|')
                                    FROM brain.secret_rules() AS r, unnest(r.hints) AS h(t))]
    END
$$;

-- One pass of the rules over a text: each hit's rule, kind, first character
-- and the character after it. A rule runs only on a text that holds one of
-- its hints; hinted_only leaves out the rules without hints (the bare AWS
-- key: a reversed text holds it forwards too).
CREATE OR REPLACE FUNCTION brain._scan_rules(t text, hinted_only boolean DEFAULT false,
                                             OUT rules integer[], OUT kinds text[],
                                             OUT starts integer[], OUT ends integer[])
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lt text := lower(t);
    todo integer[];
    pat text;
    grp integer;
    n integer;
    s integer;
    e integer;
BEGIN
    rules := '{}'; kinds := '{}'; starts := '{}'; ends := '{}';
    IF t IS NULL OR t = '' THEN
        RETURN;
    END IF;
    IF lt !~ (brain._secret_rule_column('hint_any'))[1] THEN
        -- no hint anywhere (one pass): only the rules without hints
        IF hinted_only THEN
            RETURN;
        END IF;
        todo := brain._secret_rule_column('unhinted')::integer[];
    ELSE
    -- (each hint lowercased, looked for in the lowercased text: a case-sensitive
    -- rule may run on a text that cannot match it, never the other way)
    SELECT array_agg(DISTINCT x.r ORDER BY x.r)::integer[] INTO todo
    FROM (SELECT h.r FROM unnest(brain._secret_rule_column('hint_rule'),
                                 brain._secret_rule_column('hint_lower')) AS h(r, hint)
          WHERE CASE WHEN left(h.hint, 1) = '~' THEN lt ~ substr(h.hint, 2) ELSE strpos(lt, h.hint) > 0 END
          UNION ALL
          SELECT u.r FROM unnest(brain._secret_rule_column('unhinted')) AS u(r)
          WHERE NOT hinted_only) AS x;
    END IF;
    IF todo IS NULL OR todo = '{}' THEN
        RETURN;
    END IF;
    FOREACH n IN ARRAY todo LOOP
        pat := (brain._secret_rule_column('pattern'))[n];
        CONTINUE WHEN t !~ pat;
        grp := (brain._secret_rule_column('grp')::integer[])[n];
        FOR i IN 1 .. regexp_count(t, pat) LOOP
            s := regexp_instr(t, pat, 1, i, 0, '', grp);
            e := regexp_instr(t, pat, 1, i, 1, '', grp);
            CONTINUE WHEN s = 0 OR e <= s;
            CONTINUE WHEN NOT brain._secret_candidate_ok((brain._secret_rule_column('check'))[n], substr(t, s, e - s));
            rules := rules || n;
            kinds := kinds || (brain._secret_rule_column('kind'))[n];
            starts := starts || s;
            ends := ends || e;
        END LOOP;
    END LOOP;
END
$$;

-- The ways a secret is written so that the rules do not see it, each undone
-- in a copy of the text (brain._secret_variant): the stretches a pattern
-- finds, and what each stretch reads as.
--   unicode  characters outside ASCII: NFKC (full-width letters, ligatures,
--            no-break spaces), Cyrillic and Greek letters that look Latin,
--            and invisible characters (zero-width, soft hyphens, bidi) dropped
--   escapes  HTML entities (&#103; &#x67; &amp;), percent-encoding and
--            \xNN / \uNNNN escapes
--   blobs    base64 (and base64url) and hex runs that decode to text
--   spacing  a token written one character at a time, with spaces or line
--            breaks between the characters
--   joins    a token cut into pieces joined by line breaks (a JWT over
--            lines, a backslash continuation) or by string concatenation
--            ("ghp_ab" + "cd", "ab" "cd")
--   markup   token characters with markdown or HTML between them: backslash
--            escapes (ghp\_…), tags and comments (<b>, <span class=…>,
--            <!-- -->), emphasis and code marks (**, ~~, `), table cell
--            separators (| ghp_ab | cd |)
--   groups   a token written in groups of four, with dashes or spaces
--            between them (ghp_-AbCd-EfGh-…, AKIA ABCD EFGH …)
CREATE OR REPLACE FUNCTION brain._secret_stretch(how text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE how
        WHEN 'unicode' THEN '[^\u0001-\u007f]+'
        WHEN 'escapes' THEN '(?:&#[0-9]{1,7};?|&#[xX][0-9a-fA-F]{1,6};?|&[A-Za-z]{2,8};|%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4})+'
        WHEN 'blobs' THEN '[A-Za-z0-9+/_-]{16,}={0,2}'
        WHEN 'spacing' THEN '(?<!\S)(?:\S\s{1,3}){7,}\S(?!\S)'
        WHEN 'joins' THEN '[A-Za-z0-9_./+=-]{6,}(?:(?:[ \t]*\\?\r?\n[ \t]*|["''`][ \t]*\+?[ \t]*["''`]|[ \t]+\+[ \t]+)[A-Za-z0-9_./+=-]{6,})+'
        WHEN 'markup' THEN '[A-Za-z0-9_./+=-]{2,}(?:(?:\\(?=[!-/:-@\[-`{-~])|</?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,200})?/?>|<!--(?:[^-]|-[^-])*-->|\*{1,3}|~~|`{1,3}|[ \t]*\|[ \t]*)+[A-Za-z0-9_./+=-]{2,})+'
        WHEN 'groups' THEN '(?<![A-Za-z0-9_-])[A-Za-z0-9_]{1,12}(?:[- ][A-Za-z0-9]{4}){3,}(?:[- ][A-Za-z0-9]{1,3})?(?![A-Za-z0-9_-])'
    END
$$;

-- What a stretch reads as (NULL: it reads as itself).
CREATE OR REPLACE FUNCTION brain._secret_decode(x text, how text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b bytea;
    d text;
    h text;
BEGIN
    IF how = 'unicode' THEN
        IF current_setting('server_encoding') <> 'UTF8' THEN
            RETURN NULL;
        END IF;
        d := translate(regexp_replace(normalize(x, NFKC),
                             '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]', '', 'g'),
                         'аАВсСеЕһНіІјЈКкМоОрРѕЅТуУхХԁԛԝԜӏӀүɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧονριϲακτυχ',
                         'aABcCeEhHiIjJKkMoOpPsSTyYxXdqwWlIygABEZHIKMNOPTYXovpicaktux');
        -- an ellipsis (… as ...), common in prose, hides no token
        RETURN CASE WHEN d !~ '^[.]+$' THEN d END;
    ELSIF how = 'escapes' THEN
        SELECT string_agg(CASE
                   WHEN m[1] ~ '^&#[0-9]' THEN CASE WHEN btrim(m[1], '&#;')::integer BETWEEN 32 AND 55295
                       THEN chr(btrim(m[1], '&#;')::integer) ELSE m[1] END
                   WHEN m[1] ~ '^&#[xX][0-9a-fA-F]{1,4};?$' THEN CASE
                       WHEN ('x' || lpad(rtrim(substr(m[1], 4), ';'), 8, '0'))::bit(32)::integer BETWEEN 32 AND 55295
                       THEN chr(('x' || lpad(rtrim(substr(m[1], 4), ';'), 8, '0'))::bit(32)::integer) ELSE m[1] END
                   WHEN m[1] ~ '^(%|\\x)' AND ('x' || lpad(right(m[1], 2), 8, '0'))::bit(32)::integer BETWEEN 32 AND 126
                       THEN chr(('x' || lpad(right(m[1], 2), 8, '0'))::bit(32)::integer)
                   WHEN m[1] ~ '^\\u' AND ('x' || lpad(right(m[1], 4), 8, '0'))::bit(32)::integer BETWEEN 32 AND 55295
                       THEN chr(('x' || lpad(right(m[1], 4), 8, '0'))::bit(32)::integer)
                   WHEN m[1] ~ '^&[A-Za-z]' THEN coalesce(jsonb_build_object(
                       'amp', '&', 'lt', '<', 'gt', '>', 'quot', '"', 'apos', '''', 'nbsp', ' ', 'sol', '/',
                       'lowbar', '_', 'period', '.', 'colon', ':', 'equals', '=', 'plus', '+', 'hyphen', '-',
                       'dash', '-', 'num', '#', 'excl', '!', 'dollar', '$', 'percnt', '%', 'commat', '@',
                       'tilde', '~', 'comma', ',', 'semi', ';', 'quest', '?', 'lpar', '(', 'rpar', ')',
                       'lsqb', '[', 'rsqb', ']', 'lcub', '{', 'rcub', '}', 'ast', '*', 'bsol', '\', 'Hat', '^',
                       'grave', '`', 'verbar', '|', 'vert', '|')
                       ->> rtrim(substr(m[1], 2), ';'), m[1])
                   ELSE m[1] END, '' ORDER BY n)
        INTO d
        FROM regexp_matches(x, '&#[0-9]{1,7};?|&#[xX][0-9a-fA-F]{1,6};?|&[A-Za-z]{2,8};|%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}', 'g')
             WITH ORDINALITY AS t(m, n);
        RETURN nullif(d, x);
    ELSIF how = 'blobs' THEN
        -- text only: a run that decodes to binary (an image, a hash) reads as
        -- itself; so does a run without a digit (a long identifier: base64 of
        -- 12 characters or more of text holds a digit, as good as always)
        IF x !~ '[0-9]' THEN
            RETURN NULL;
        END IF;
        h := CASE WHEN x ~ '^0x' THEN substr(x, 3) ELSE x END;
        IF h ~ '^[0-9a-fA-F]+$' AND length(h) % 2 = 0 THEN
            b := decode(h, 'hex');
        ELSIF x ~ '[0-9A-Z]' THEN
            h := rtrim(translate(x, '-_', '+/'), '=');
            h := CASE length(h) % 4 WHEN 1 THEN left(h, -1) WHEN 2 THEN h || '==' WHEN 3 THEN h || '=' ELSE h END;
            b := decode(h, 'base64');
        ELSE
            RETURN NULL;
        END IF;
        d := encode(b, 'escape');
        IF d ~ '\\[0-7]{3}' OR d ~ '[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f]' THEN
            RETURN NULL;
        END IF;
        RETURN replace(d, '\\', '\');
    ELSIF how = 'spacing' THEN
        RETURN regexp_replace(x, '\s', '', 'g');
    ELSIF how = 'joins' THEN
        -- pieces of a token hold a digit and a capital; words at the ends of
        -- two lines of prose do not
        IF x !~ '[0-9]' OR x !~ '[A-Z]' THEN
            RETURN NULL;
        END IF;
        RETURN regexp_replace(x, '[ \t]*\\?\r?\n[ \t]*|["''`][ \t]*\+?[ \t]*["''`]|[ \t]+\+[ \t]+', '', 'g');
    ELSIF how = 'markup' THEN
        -- escapes, tags and marks removed; the cells of a table row joined,
        -- every run of one to four neighbours (which cells hold the token's
        -- pieces is not said), one run a line. Words of prose and of
        -- tables hold no piece of letters and digits, or are short.
        IF x !~ '[A-Za-z][A-Za-z0-9_+/=.-]*[0-9]|[0-9][A-Za-z0-9_+/=.-]*[A-Za-z]' OR length(x) < 16 THEN
            RETURN NULL;
        END IF;
        d := regexp_replace(x, '\\(?=[!-/:-@\[-`{-~])|</?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,200})?/?>|<!--(?:[^-]|-[^-])*-->|\*{1,3}|~~|`{1,3}', '', 'g');
        IF d ~ '\|' THEN
            SELECT string_agg(array_to_string(c[i:i + w], ''), E'\n' ORDER BY i, w) INTO d
            FROM (SELECT regexp_split_to_array(d, '[ \t]*\|[ \t]*') AS c) AS cells,
                 generate_series(1, array_length(c, 1)) AS i, generate_series(0, 3) AS w
            WHERE i + w <= array_length(c, 1) AND length(array_to_string(c[i:i + w], '')) >= 16;
        END IF;
        RETURN d;
    ELSIF how = 'groups' THEN
        IF x !~ '[0-9]' THEN
            RETURN NULL;
        END IF;
        RETURN regexp_replace(x, '[- ]', '', 'g');
    END IF;
    RETURN NULL;
END
$$;

-- A copy of a text with each stretch of one kind (brain._secret_stretch)
-- replaced by what it reads as, and the map back: segment i of the copy
-- starts at ds[i] (dl[i] characters) and comes from os[i] (ol[i]) of the
-- text; plain[i] when it is the text itself. Only the changed stretches and
-- 120 characters either side are copied (a key = value line and a token fit
-- in that): the rules then read a few lines, not the whole document again.
-- v is NULL when nothing changed.
CREATE OR REPLACE FUNCTION brain._secret_variant(t text, how text,
                                                 OUT v text, OUT os integer[], OUT ol integer[],
                                                 OUT ds integer[], OUT dl integer[], OUT plain boolean[])
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    re text := brain._secret_stretch(how);
    ctx constant integer := 120;
    stretches text[];
    gaps text[];
    decoded text[];
    x text;
    d text;
    o integer := 1;
    run_start integer := 1;   -- where the plain text since the last changed stretch starts
    seen_change boolean := false;
BEGIN
    -- (one pass each: the stretches, and the text between them)
    SELECT array_agg(m[1] ORDER BY n) INTO stretches FROM regexp_matches(t, re, 'g') WITH ORDINALITY AS s(m, n);
    IF stretches IS NULL THEN
        RETURN;
    END IF;
    SELECT array_agg(brain._secret_decode(s, how) ORDER BY n) INTO decoded
    FROM unnest(stretches) WITH ORDINALITY AS u(s, n);
    IF NOT EXISTS (SELECT FROM unnest(stretches, decoded) AS u(s, d) WHERE u.d <> u.s) THEN
        RETURN;
    END IF;
    gaps := regexp_split_to_array(t, re);
    v := ''; os := '{}'; ol := '{}'; ds := '{}'; dl := '{}'; plain := '{}';
    FOR i IN 1 .. array_length(gaps, 1) + 1 LOOP
        IF i <= array_length(gaps, 1) THEN
            o := o + length(gaps[i]);
        END IF;
        IF i <= array_length(stretches, 1) THEN
            x := stretches[i];
            d := decoded[i];
            IF d IS NULL OR d = x THEN
                o := o + length(x);
                CONTINUE;
            END IF;
        ELSE
            x := NULL;
        END IF;
        -- the plain text from run_start to o - 1: its end after a change, its start before one
        IF o > run_start THEN
            IF seen_change AND (x IS NULL OR o - run_start > 2 * ctx) THEN
                os := os || run_start; ol := ol || least(ctx, o - run_start); ds := ds || (length(v) + 1);
                dl := dl || least(ctx, o - run_start); plain := plain || true;
                v := v || substr(t, run_start, least(ctx, o - run_start));
                run_start := greatest(run_start + ctx, o - ctx);
                IF x IS NOT NULL THEN
                    os := os || run_start; ol := ol || 0; ds := ds || (length(v) + 1); dl := dl || 3;
                    plain := plain || false;
                    v := v || E'\n\u0001\n';
                END IF;
            ELSIF NOT seen_change THEN
                run_start := greatest(run_start, o - ctx);
            END IF;
            IF x IS NOT NULL AND o > run_start THEN
                os := os || run_start; ol := ol || (o - run_start); ds := ds || (length(v) + 1);
                dl := dl || (o - run_start); plain := plain || true;
                v := v || substr(t, run_start, o - run_start);
            END IF;
        END IF;
        EXIT WHEN x IS NULL;
        os := os || o; ol := ol || length(x); ds := ds || (length(v) + 1); dl := dl || length(d);
        plain := plain || false;
        v := v || d;
        seen_change := true;
        o := o + length(x);
        run_start := o;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION brain.scan_secrets(t text)
RETURNS TABLE (kind text, start_at integer, end_at integer)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p record;
    var record;
    h_rule integer[];
    h_kind text[];
    h_start integer[];
    h_end integer[];
    how text;
    k integer := 0;
    len integer;
    s integer;
    e integer;
BEGIN
    IF t IS NULL OR t = '' THEN
        RETURN;
    END IF;
    len := length(t);
    p := brain._scan_rules(t);
    h_rule := p.rules; h_kind := p.kinds; h_start := p.starts; h_end := p.ends;
    -- The text read backwards (a reversed token, a reversed `password = ...`).
    p := brain._scan_rules(reverse(t), hinted_only => true);
    FOR i IN 1 .. coalesce(array_length(p.rules, 1), 0) LOOP
        h_rule := h_rule || (p.rules[i] + 1000);
        h_kind := h_kind || p.kinds[i];
        h_start := h_start || (len - p.ends[i] + 2);
        h_end := h_end || (len - p.starts[i] + 2);
    END LOOP;
    -- The text with each way of hiding undone, one way at a time; a hit in
    -- the copy is reported where the stretch it came from stands in the text.
    FOREACH how IN ARRAY ARRAY['unicode', 'escapes', 'blobs', 'spacing', 'joins', 'markup', 'groups'] LOOP
        k := k + 1;
        -- (each way is looked for in one pass first: most texts use none)
        CONTINUE WHEN how = 'unicode' AND (t !~ '[^\u0001-\u007f]' OR current_setting('server_encoding') <> 'UTF8'
                                           OR normalize(t, NFKC) = t AND t !~ '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\u0370-\u03ff\u0400-\u052f\u0261]');
        CONTINUE WHEN how = 'escapes' AND t !~ '&#|&[A-Za-z]{2,8};|%[0-9A-Fa-f]{2}|\\[xu][0-9A-Fa-f]{2}';
        CONTINUE WHEN how IN ('blobs', 'spacing', 'joins', 'markup', 'groups') AND t !~ brain._secret_stretch(how);
        var := brain._secret_variant(t, how);
        CONTINUE WHEN var.v IS NULL;
        p := brain._scan_rules(var.v);
        FOR i IN 1 .. coalesce(array_length(p.rules, 1), 0) LOOP
            s := NULL; e := NULL;
            FOR j IN 1 .. array_length(var.os, 1) LOOP
                IF s IS NULL AND p.starts[i] < var.ds[j] + var.dl[j] THEN
                    s := CASE WHEN var.plain[j] THEN var.os[j] + p.starts[i] - var.ds[j] ELSE var.os[j] END;
                END IF;
                IF p.ends[i] - 1 < var.ds[j] + var.dl[j] THEN
                    e := CASE WHEN var.plain[j] THEN var.os[j] + p.ends[i] - var.ds[j] ELSE var.os[j] + var.ol[j] END;
                    EXIT;
                END IF;
            END LOOP;
            CONTINUE WHEN s IS NULL OR e IS NULL OR e <= s;
            h_rule := h_rule || (p.rules[i] + 1000 * (k + 1));
            h_kind := h_kind || p.kinds[i];
            h_start := h_start || s;
            h_end := h_end || e;
        END LOOP;
    END LOOP;
    -- A hit that overlaps a hit of an earlier rule (or of the text as sent) is that hit.
    RETURN QUERY
        SELECT h.k, h.s, h.e - 1
        FROM unnest(h_rule, h_kind, h_start, h_end) AS h(r, k, s, e)
        WHERE NOT EXISTS (SELECT FROM unnest(h_rule, h_start, h_end) AS o(r, s, e)
                          WHERE o.r < h.r AND o.s < h.e AND h.s < o.e)
        ORDER BY h.s;
END
$$;
COMMENT ON FUNCTION brain.scan_secrets IS
    'The secrets in a text: each one''s kind and its position (first and last character, counted from 1). Never the value. The text is read as sent, backwards, and with each way of hiding a token undone (NFKC and look-alike letters, entities and escapes, base64 and hex, spaced-out characters, pieces joined, markdown and HTML marks and table cells, groups of four): a hidden secret is reported where its stretch stands.';

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
    FROM (SELECT CASE WHEN f0 ~ '[a-zA-Z][аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ]|[аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ][a-zA-Z]'
                      THEN pg_catalog.translate(f0, 'аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ',
                                                    'aeopcyxijsdhlqwvABEKMHOPCTXSIJYQWaopvikuxyABEZHIKMNOPTYX')
                      ELSE f0 END AS f
          FROM (SELECT CASE WHEN pg_catalog.octet_length(t) = pg_catalog.length(t) OR t IS NFKC NORMALIZED THEN t
                            ELSE normalize(t, NFKC) END AS f0
                OFFSET 0) AS n0
          OFFSET 0) AS n  -- folded once, not once per reason
    CROSS JOIN LATERAL (VALUES
        ('override-phrase', n.f ~* '\m(?:(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|of|my|these)\s+)*(?:previous|prior|above|earlier|preceding|system|existing|original|safety|other)\s+(?:instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|context|constraints?)|(?:ignore|disregard|forget)\s+(?:everything|anything|all|whatever)\s+(?:(?:that\s+)?(?:was\s+|you\s+were\s+|i\s+|you\s+have\s+been\s+)?(?:said|told|written|stated|given)\M|(?:above|before|prior|previously|earlier)\M)|(?:ignore|disregard)\s+(?:(?:what|anything|whatever)\s+the\s+(?:user|human)\s+(?:says|asks|wants|types|writes)|(?:the\s+|any\s+)?(?:user|human)(?:''s)?\s+(?:instructions|requests|wishes|messages)\M)|you are now|from now on,? you|new instructions\s*:|do not (?:tell|inform|mention (?:this )?to) the user|without telling the user|developer mode enabled|(?:enter|activate|act in|respond in) developer mode|jailbreak|act as (?:an? )?(?:unrestricted|different)|pretend (?:that )?you are|pretend to be|your (?:real|true|new) (?:instructions|task|goal) (?:is|are))'),
        ('role-marker', n.f ~* '(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*(?:#+\s*)?(?:system|assistant|developer|human|user)\s*(?:prompt\s*)?:(?!=)|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*#+\s*(?:instruction|response|input)\s*:|<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|instructions?)>'),
        ('tool-call', n.f ~* '"(?:tool_use|tool_calls|function_call|tool_call|tool_result|recipient_name|tool_name)"|<(?:tool_call|tool_use|tool_result|function_calls|function_results|invoke|antml:\w+)[\s>]|"(?:name|tool|function)"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|args|input|parameters|params)"\s*:|"(?:arguments|args|input|parameters|params)"\s*:\s*\{[^{}]*\}\s*,\s*"(?:name|tool|function)"\s*:\s*"|"type"\s*:\s*"(?:tool_use|function)"'),
        ('external-link', n.f ~* '!\[[^\]]*\]\(\s*<?(?:https?:)?//|\[[^\]]*\]\(\s*<?(?:https?:)?//|<(?:img|iframe|script|a|link)\M[^>]*(?:src|href)\s*=\s*["'']?(?:https?:)?//'),
        ('payload-heading', n.f ~* '(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*#+\s*(?:pybrain memory|BLOCKER rules|Pinned memories|PATTERN rules|Open tasks|Skills[ \t]*(?:\(|[\n\r\u000b\u000c\u0085\u2028\u2029]|$)|Handoff from|Other sessions|Action items to acknowledge|Context pack \S+ v\d|How similar problems were solved|Where the project stood)'),
        ('wrapper-tag', n.f ~* '(?<!`)</?(?:pybrain-context|system-reminder|user-prompt-submit-hook|session-start-hook|command-name|command-message|command-args|command-contents|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|context-window|system-prompt|user-memory|project-instructions)(?:\s[^>]*)?>'),
        ('shell-pipe', n.f ~* '\m(?:curl|wget)\M[^\n\r\u000b\u000c\u0085\u2028\u2029]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*(?!\s+-m\s+json\.tool)|perl|ruby|node|php|iex)\M|\m(?:(?:ba|z|k|da)?sh|eval|source|python[0-9.]*)\s+(?:-c\s+)?["'']?(?:\$\(|<\(|`)\s*(?:curl|wget)\M'),
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
