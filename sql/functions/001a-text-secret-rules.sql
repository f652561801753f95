-- The secret scanner's rules: one per format, the checks a candidate must pass,
-- and the decodings and variants of a text that the scan also reads.

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
