-- The secret scanner's rules: one per format, the checks a candidate must pass,
-- and one pass of the rules over a text (the decodings: 001d-text-secret-decoding.sql).

-- The secret scanner. One rule per format, modelled on the rule sets of
-- gitleaks (config/gitleaks.toml) and Yelp's detect-secrets (its plugins):
-- provider tokens by their documented prefixes, then credentials found by
-- where they stand (a header, a URL, a `key = value` line). `grp` is the
-- capture group that holds the secret (0: the whole match), so a redaction
-- keeps `aws_secret_access_key = ` and replaces only the value. `check` names
-- a test the candidate must also pass (brain._secret_candidate_ok). `hints`:
-- a rule runs only on a text that holds one of these strings (lowercase, and
-- looked for in the lowercased text, for a case-insensitive rule; a hint
-- ~LITERAL~REGEX is a regular expression the lowercased text matches, tried only
-- on a text that holds the literal), which keeps a clean text's scan to a few
-- regular expressions. Earlier rules win
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
        ('private-key', $p$(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{2}[AQgw]IBA|MI[E-H][A-Za-z0-9+/]AgE[AB]|M[A-H][A-Za-z0-9+/]CAQ|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/]{40,}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/]{4,})*={0,2}$p$, 0, 'pem-body', 'gitleaks private-key (the body alone: DER of a private key, or openssh-key-v1, in base64)', '{"~iba~mii[a-z0-9+/]{2}[aqgw]iba","~age~mi[e-h][a-z0-9+/]age[ab]","~caq~m[a-h][a-z0-9+/]caq","b3blbnnzac1rzxktdje"}'),
        ('private-key', $p$(?i)Private-Lines:[ \t]*\d+[ \t]*\r?\n((?:[ \t]*[A-Za-z0-9+/]+={0,2}[ \t]*(?:\r?\n|$))+)$p$, 1, 'pem', 'PuTTY key files (PuTTY-User-Key-File-2 and -3: the Private-Lines)', '{"private-lines"}'),
        ('aws-access-key-id', $p$\m(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}\M$p$, 0, NULL, 'gitleaks aws-access-token; detect-secrets AWSKeyDetector', '{"A3T","AKIA","ASIA","ABIA","ACCA","AGPA","AIDA","AIPA","ANPA","ANVA","APKA","AROA","ASCA"}'),
        ('aws-access-key-id', $p$\m(?:akia|asia)[0-9a-z]{16}\M$p$, 0, 'lower-id', 'the same, lower-cased', '{"akia","asia"}'),
        ('aws-secret-key', $p$(?i)\maws\w*secret\w*["']?\s*(?:[:=]|=>)\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])$p$, 1, NULL, 'detect-secrets AWSKeyDetector (aws_secret_access_key lines)', '{"aws"}'),
        ('github-token', $p$\m(?:[gG][hH][pPoOuUsSrR]_[A-Za-z0-9]{36,255}|[gG][iI][tT][hH][uU][bB]_[pP][aA][tT]_[A-Za-z0-9_]{22,255})$p$, 0, 'provider', 'gitleaks github-pat, github-oauth, github-app-token, github-fine-grained-pat', '{"ghp_","gho_","ghu_","ghs_","ghr_","github_pat_"}'),
        ('gitlab-token', $p$\m(?:[gG][lL][pP][aA][tT]|glptt|gldt|glrt|glcbt|glffct|glimt|glsoat|glagent|glft|gloas)-[A-Za-z0-9_-]{20,}$p$, 0, 'provider', 'gitleaks gitlab-pat, gitlab-pat-routable, gitlab-ptt, gitlab-deploy-token, gitlab-runner-authentication-token (and -routable), gitlab-cicd-job-token, gitlab-feature-flag-client-token, gitlab-incoming-mail-token, gitlab-scim-token, gitlab-kubernetes-agent-token, gitlab-feed-token, gitlab-oauth-app-secret', '{"glpat-","glptt-","gldt-","glrt-","glcbt-","glffct-","glimt-","glsoat-","glagent-","glft-","gloas-"}'),
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
        ('discord-bot-token', $p$(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])$p$, 0, 'token', 'gitleaks discord-api-token (the bot token: base64 of the bot id, a time, an HMAC)', '{"~.~\\.[a-z0-9_-]{6,7}\\."}'),
        ('atlassian-api-token', $p$\mATATT3[A-Za-z0-9_=-]{150,}$p$, 0, NULL, 'gitleaks atlassian-api-token (ATATT3…)', '{"ATATT3"}'),
        ('firebase-server-key', $p$\mAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}$p$, 0, NULL, 'gitleaks gcp firebase cloud messaging server keys (AAAA…:APA91b…)', '{":APA91b"}'),
        -- gitleaks' default configuration, rule by rule (tests/data/gitleaks-rules.txt):
        -- provider tokens by their own prefixes and shapes
        ('onepassword-secret-key', $p$\mA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\M$p$, 0, NULL, 'gitleaks 1password-secret-key', '{"A3-"}'),
        ('onepassword-token', $p$\mops_eyJ[A-Za-z0-9+/]{100,}={0,3}$p$, 0, NULL, 'gitleaks 1password-service-account-token', '{"ops_eyJ"}'),
        ('adobe-client-secret', $p$\mp8e-[A-Za-z0-9]{32}\M$p$, 0, NULL, 'gitleaks adobe-client-secret', '{"p8e-"}'),
        ('airtable-token', $p$\mpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\M$p$, 0, NULL, 'gitleaks airtable-personnal-access-token', '{"airtable"}'),
        ('alibaba-access-key-id', $p$\mLTAI[A-Za-z0-9]{20}\M$p$, 0, 'provider', 'gitleaks alibaba-access-key-id', '{"LTAI"}'),
        ('artifactory-token', $p$\m(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\M$p$, 0, NULL, 'gitleaks artifactory-api-key, artifactory-reference-token', '{"AKCp","cmVmd"}'),
        ('authress-key', $p$\m(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}$p$, 0, NULL, 'gitleaks authress-service-client-access-key', '{".acc_",".acc-"}'),
        ('aws-bedrock-api-key', $p$\m(?:ABSK[A-Za-z0-9+/]{109,255}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&-]*)$p$, 0, NULL, 'gitleaks aws-amazon-bedrock-api-key-long-lived, -short-lived', '{"ABSK","bedrock-api-key-"}'),
        ('clickhouse-api-key', $p$\m4b1d[A-Za-z0-9]{38}\M$p$, 0, NULL, 'gitleaks clickhouse-cloud-api-secret-key', '{"4b1d"}'),
        ('clojars-token', $p$(?i)\mCLOJARS_[a-z0-9]{60}\M$p$, 0, NULL, 'gitleaks clojars-api-token', '{"clojars_"}'),
        ('cloudflare-origin-ca-key', $p$\mv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\M$p$, 0, NULL, 'gitleaks cloudflare-origin-ca-key', '{"v1.0-"}'),
        ('defined-networking-token', $p$\mdnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}$p$, 0, NULL, 'gitleaks defined-networking-api-token', '{"dnkey-"}'),
        ('duffel-token', $p$\mduffel_(?:test|live)_[A-Za-z0-9_=-]{43}$p$, 0, NULL, 'gitleaks duffel-api-token', '{"duffel_"}'),
        ('dynatrace-token', $p$\mdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\M$p$, 0, NULL, 'gitleaks dynatrace-api-token', '{"dt0c01."}'),
        ('easypost-token', $p$\mEZ[AT]K[A-Za-z0-9]{54}\M$p$, 0, NULL, 'gitleaks easypost-api-token, easypost-test-api-token', '{"EZAK","EZTK"}'),
        ('facebook-token', $p$(?:(?<![0-9])[0-9]{15,16}(?:\||%7[Cc])[0-9A-Za-z_-]{27,40}(?![0-9A-Za-z_-])|\mEAA[MC][A-Za-z0-9]{100,})$p$, 0, NULL, 'gitleaks facebook-access-token, facebook-page-access-token', '{"facebook","EAAM","EAAC"}'),
        ('flutterwave-key', $p$\mFLW(?:SECK|PUBK)(?:_TEST)?-[A-Ha-h0-9]{12,32}(?:-X)?$p$, 0, NULL, 'gitleaks flutterwave-encryption-key, flutterwave-public-key, flutterwave-secret-key', '{"FLWSECK","FLWPUBK"}'),
        ('flyio-token', $p$\m(?:fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})$p$, 0, NULL, 'gitleaks flyio-access-token', '{"fo1_","fm1a_","fm1r_","fm2_"}'),
        ('frameio-token', $p$\mfio-u-[A-Za-z0-9_=-]{64}$p$, 0, NULL, 'gitleaks frameio-api-token', '{"fio-u-"}'),
        ('gitlab-token', $p$\m(?:GR1348941[A-Za-z0-9_-]{20}|_gitlab_session=[0-9a-z]{32})$p$, 0, NULL, 'gitleaks gitlab-rrt, gitlab-session-cookie', '{"GR1348941","_gitlab_session="}'),
        ('grafana-token', $p$(?i)\meyJrIjoi[A-Za-z0-9]{70,}={0,3}$p$, 0, NULL, 'gitleaks grafana-api-key', '{"eyJrIjoi"}'),
        ('harness-api-key', $p$\m(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}\M$p$, 0, NULL, 'gitleaks harness-api-key', '{"pat.","sat."}'),
        ('terraform-token', $p$\m[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}$p$, 0, NULL, 'gitleaks hashicorp-tf-api-token', '{".atlasv1."}'),
        ('heroku-api-key', $p$\mHRKU-AA[0-9A-Za-z_-]{58}$p$, 0, NULL, 'gitleaks heroku-api-key-v2', '{"HRKU-AA"}'),
        ('infracost-token', $p$\mico-[A-Za-z0-9]{32}\M$p$, 0, 'token', 'gitleaks infracost-api-token', '{"ico-"}'),
        ('intra42-secret', $p$\ms-s4t2(?:ud|af)-[a-f0-9]{64}\M$p$, 0, NULL, 'gitleaks intra42-client-secret', '{"s-s4t2"}'),
        ('maxmind-license-key', $p$\m[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\M$p$, 0, NULL, 'gitleaks maxmind-license-key', '{"_mmk"}'),
        ('teams-webhook', $p$https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[^\s"'<>]{20,}$p$, 0, NULL, 'gitleaks microsoft-teams-webhook', '{"webhook.office.com"}'),
        ('notion-token', $p$\mntn_[0-9]{11}[A-Za-z0-9]{35}\M$p$, 0, NULL, 'gitleaks notion-api-token', '{"ntn_"}'),
        ('octopus-api-key', $p$\mAPI-[A-Z0-9]{26}\M$p$, 0, 'token', 'gitleaks octopus-deploy-api-key', '{"API-"}'),
        ('openshift-token', $p$\msha256~[A-Za-z0-9_-]{43}$p$, 0, NULL, 'gitleaks openshift-user-token', '{"sha256~"}'),
        ('perplexity-api-key', $p$\mpplx-[A-Za-z0-9]{48}\M$p$, 0, NULL, 'gitleaks perplexity-api-key', '{"pplx-"}'),
        ('planetscale-token', $p$\mpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}$p$, 0, NULL, 'gitleaks planetscale-api-token, planetscale-oauth-token, planetscale-password', '{"pscale_"}'),
        ('prefect-token', $p$\mpnu_[A-Za-z0-9]{36}\M$p$, 0, NULL, 'gitleaks prefect-api-token', '{"pnu_"}'),
        ('pulumi-token', $p$\mpul-[a-f0-9]{40}\M$p$, 0, NULL, 'gitleaks pulumi-api-token', '{"pul-"}'),
        ('readme-token', $p$\mrdme_[a-z0-9]{70}\M$p$, 0, NULL, 'gitleaks readme-api-token', '{"rdme_"}'),
        ('rubygems-token', $p$\mrubygems_[a-f0-9]{48}\M$p$, 0, NULL, 'gitleaks rubygems-api-token', '{"rubygems_"}'),
        ('scalingo-token', $p$\mtk-us-[A-Za-z0-9_-]{48}$p$, 0, NULL, 'gitleaks scalingo-api-token', '{"tk-us-"}'),
        ('sendinblue-token', $p$\mxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\M$p$, 0, NULL, 'gitleaks sendinblue-api-token', '{"xkeysib-"}'),
        ('sentry-token', $p$\m(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{40,})$p$, 0, NULL, 'gitleaks sentry-user-token, sentry-org-token', '{"sntryu_","sntrys_"}'),
        ('settlemint-token', $p$\msm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\M$p$, 0, NULL, 'gitleaks settlemint-application-, personal-, service-access-token', '{"sm_aat_","sm_pat_","sm_sat_"}'),
        ('shippo-token', $p$\mshippo_(?:live|test)_[a-fA-F0-9]{40}\M$p$, 0, NULL, 'gitleaks shippo-api-token', '{"shippo_"}'),
        ('sidekiq-secret', $p$(?i)\mBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM["']?\s*[:=]\s*["']?([a-f0-9]{8}:[a-f0-9]{8})$p$, 1, NULL, 'gitleaks sidekiq-secret (sidekiq-sensitive-url: rule url-credentials)', '{"contribsys__com"}'),
        ('slack-token', $p$(?i)\mxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+$p$, 0, NULL, 'gitleaks slack-app-token', '{"xapp-"}'),
        ('sourcegraph-token', $p$\msgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\M$p$, 0, NULL, 'gitleaks sourcegraph-access-token', '{"sgp_"}'),
        -- a Kubernetes Secret's data: the block of values under data:, before or after kind: Secret
        ('kubernetes-secret', $p$(?i)\mkind:[ \t]*["']?secret["']?[ \t]*\r?\n(?:[^\n]*\n){0,12}[ \t]*(?:data|stringData):[ \t]*\r?\n((?:[ \t]+[A-Za-z0-9_.-]+:[^\n]*(?:\r?\n|$))+)$p$, 1, 'k8s', 'gitleaks kubernetes-secret-yaml', '{"kind: secret","kind:secret","kind: \"secret","kind: ''secret"}'),
        ('kubernetes-secret', $p$(?i)(?:^|\n)[ \t]*(?:data|stringData):[ \t]*\r?\n((?:[ \t]+[A-Za-z0-9_.-]+:[^\n]*\r?\n)+)(?:[^\n]*\n){0,12}[ \t]*kind:[ \t]*["']?secret\M$p$, 1, 'k8s', 'gitleaks kubernetes-secret-yaml (data before kind)', '{"kind: secret","kind:secret","kind: \"secret","kind: ''secret"}'),
        ('nuget-password', $p$(?i)<add\s+key\s*=\s*"(?:ClearText)?Password"\s+value\s*=\s*"([^"]{4,})"$p$, 1, 'password', 'gitleaks nuget-config-password', '{"<add key"}'),
        -- gitleaks' semi-generic rules: a key that names the provider, assigned a value
        ('provider-secret', $p$(?i)(?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:adafruit|adobe|airtable|algolia|alibaba|aliyun|asana|atlassian|confluence|jira|beamer|bitbucket|bittrex|meraki|cloudflare|codecov|cohere|co_api_key|coinbase|confluent|contentful|datadog|dnkey|discord|droneci|dropbox|etsy|facebook|fastly|finicity|finnhub|flickr|freshbooks|gitter|gocardless|heroku|hubspot|intercom|jfrog|artifactory|bintray|xray|kraken|kucoin|launchdarkly|linear|linked[_-]?in|lob|looker|mailchimp|mailgun|mapbox|mattermost|message[_-]?bird|netlify|new[_-]?relic|nytimes|newyorktimes|okta|plaid|private[_-]?ai|rapidapi|sendbird|sentry|snyk|sonar|sourcegraph|squarespace|sumo|telegram|travis|twitch|twitter|typeform|yandex|zendesk)[A-Za-z0-9_.-]{0,30}["']?[ \t]*(?:[:=]|:=|=>|\?=|\|\|)[ \t]*["'`]?([A-Za-z0-9_.=+/:%-]{10,})$p$, 1, 'provider-value', 'gitleaks'' keyword rules (adafruit-api-key, adobe-client-id, airtable-api-key, … zendesk-secret-key: a key naming the provider, assigned a value)', '{"adafruit","adobe","airtable","algolia","alibaba","aliyun","asana","atlassian","confluence","jira","beamer","bitbucket","bittrex","meraki","cloudflare","codecov","cohere","co_api_key","coinbase","confluent","contentful","datadog","dnkey","discord","droneci","dropbox","etsy","facebook","fastly","finicity","finnhub","flickr","freshbooks","gitter","gocardless","heroku","hubspot","intercom","jfrog","artifactory","bintray","xray","kraken","kucoin","launchdarkly","linear","linkedin","linked_in","linked-in","lob","looker","mailchimp","mailgun","mapbox","mattermost","messagebird","message_bird","message-bird","netlify","newrelic","new_relic","new-relic","nytimes","newyorktimes","okta","plaid","privateai","private_ai","private-ai","rapidapi","sendbird","sentry","snyk","sonar","sourcegraph","squarespace","sumo","telegram","travis","twitch","twitter","typeform","yandex","zendesk"}'),
        -- an Authorization header of another scheme than Basic and Bearer (Token, Api-Token, SSWS, …)
        ('http-auth-header', $p$(?i)\mauthorization["']?\s*[:=]\s*["']?(?:token|api-?token|apikey|api-key|key|sso-key|ssws|splunk|dsn|hmac|digest)?\s*([A-Za-z0-9._~+/=:-]{12,})$p$, 1, 'token', 'gitleaks curl-auth-header (Authorization headers of any scheme)', '{"authorization"}'),
        ('jwt', $p$\meyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$p$, 0, NULL, 'gitleaks jwt; detect-secrets JwtTokenDetector', '{"eyJ"}'),
        ('http-basic-auth', $p$(?i)\mauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})$p$, 1, NULL, 'detect-secrets BasicAuthDetector (Authorization: Basic headers)', '{"basic"}'),
        ('http-bearer-token', $p$(?i)\mbearer\s+([A-Za-z0-9._~+/-]{16,}=*)$p$, 1, 'token', 'gitleaks generic bearer tokens (Authorization: Bearer headers)', '{"bearer"}'),
        ('url-credentials', $p$\m[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'"<>]*:([^\s/@'"<>]+)@$p$, 1, 'password', 'detect-secrets BasicAuthDetector (user:password@ in URLs, redis://:password@)', '{"://"}'),
        ('url-credentials', $p$(?i)[?&;](?:auth|token|access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token|api[_-]?key|apikey|secret|client[_-]?secret|pass|passwd|password|pwd|pw)=([^&\s#'"<>]{8,})$p$, 1, 'token', 'gitleaks generic-api-key in a URL''s query (?auth=, &token=, ?access_token=, …)', '{"auth=","token=","key=","secret=","pass=","pw=","pwd=","passwd=","password="}'),
        ('pgpass-password', $p$(?n)^[ \t]*(?:[A-Za-z0-9*._-]+|\[[0-9A-Fa-f:]+\]):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:((?:[^\s:\\]|\\.)+)[ \t]*(?:$)$p$, 1, 'pgpass', 'PostgreSQL .pgpass lines (host:port:database:user:password)', '{"~:~:([0-9]{1,5}|\\*):[^:\\s]+:[^:\\s]+:"}'),
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
        -- Passwords where a command line takes them: a client's -pVALUE, a tool's
        -- --password VALUE or -storepass VALUE, sshpass -p, curl -u user:pass,
        -- smbclient -U user%pass, PGPASSWORD=VALUE before a command
        ('command-password', $p$\m(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlpump|mysqlsh|mariadb|mariadb-dump)\M[^\n;|&]*[ \t]-p["']?([^\s"'-][^\s"']{2,})$p$, 1, 'cli-password', 'a MySQL client''s -pPASSWORD (gitleaks generic-api-key''s command lines)', '{"mysql","mariadb"}'),
        ('command-password', $p$(?i)(?:^|[\s"'(])--?(?:password|passwd|pass|pwd|passphrase|pw|(?:db|admin|root|user|new|old|master|store|key|src|dest|srcstore|deststore|srckey|destkey|http|ftp|proxy|sasl|rpc|auth|bind|mail|smtp|ldap|vault|registry|docker|api|login|rcon|web|client|server)[_-]?(?:password|passwd|pass|pwd|pw)|storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass|passin|passout)(?:=|[ \t]+|:)["']?(?:pass:)?([^\s"'][^\s"']{2,})$p$, 1, 'cli-password', 'a tool''s password flag: --password VALUE, --password=VALUE, -storepass VALUE, -passin pass:VALUE, …', '{"-pass","-pw","-passwd","-pwd","password","storepass","keypass","passin","passout","passphrase"}'),
        ('command-password', $p$\msshpass\M[^\n;|&]*[ \t]-p[ \t]*["']?([^\s"']{3,})$p$, 1, 'cli-password', 'sshpass -p PASSWORD', '{"sshpass"}'),
        ('command-password', $p$\mredis-cli\M[^\n;|&]*[ \t](?:-a|--pass)[ \t]+["']?([^\s"']{3,})$p$, 1, 'cli-password', 'redis-cli -a PASSWORD', '{"redis-cli"}'),
        ('command-password', $p$\m(?:sqlcmd|bcp|osql|isql)\M[^\n;|&]*[ \t]-P[ \t]*["']?([^\s"'-][^\s"']{2,})$p$, 1, 'cli-password', 'sqlcmd and bcp -P PASSWORD', '{"sqlcmd","bcp","osql","isql"}'),
        ('command-password', $p$\m(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop)\M[^\n;|&]*[ \t]-p[ \t]+["']?([^\s"'-][^\s"']{2,})$p$, 1, 'cli-password', 'the MongoDB tools'' -p PASSWORD', '{"mongo"}'),
        ('command-password', $p$\msmbclient\M[^\n;|&]*[ \t]-U[ \t]*["']?[^\s"'%]+%([^\s"']{3,})$p$, 1, 'cli-password', 'smbclient -U user%PASSWORD', '{"smbclient"}'),
        ('command-password', $p$\mhtpasswd\M[ \t]+-[A-Za-z]*b[A-Za-z]*[ \t]+(?:\S+[ \t]+)?\S+[ \t]+["']?([^\s"']{3,})$p$, 1, 'cli-password', 'htpasswd -b FILE USER PASSWORD', '{"htpasswd"}'),
        ('command-password', $p$(?i)\mnet[ \t]+use\M[^\n]*/user:\S+[ \t]+["']?([^\s"'/][^\s"']{2,})$p$, 1, 'cli-password', 'net use … /user:NAME PASSWORD', '{"net use"}'),
        ('command-password', $p$\m(?:curl|wget)\M[^\n;|&]*[ \t](?:-u|--user|--http-user|--proxy-user|-U)(?:=|[ \t]*)["']?[^\s"':]*:([^\s"']{3,})$p$, 1, 'cli-password', 'gitleaks curl-auth-user: curl -u USER:PASSWORD, --user, wget --http-user', '{"curl","wget"}'),
        ('command-password', $p$(?:^|[\s;&|(`])(?:export[ \t]+|set[ \t]+|\$env:)?[A-Za-z_][A-Za-z0-9_]*(?:PASSWORD|PASSWD|_PASS|PWD|_PW|PASSPHRASE)[ \t]*=[ \t]*["']?([^\s"'$`][^\s"'`]{3,})$p$, 1, 'cli-password', 'PGPASSWORD=VALUE, MYSQL_PWD=VALUE, … before a command or exported', '{"password","passwd","_pass","pwd","_pw","passphrase"}'),
        -- A password said in a sentence: "my db password for staging is …", "pw: …",
        -- "passwd …" (a value with a digit or a symbol: a word is no password)
        ('prose-password', $p$(?i)\m(?:password|passwd|passphrase|passcode|pass ?word|pwd|pw|pin code)\M(?:[ \t]+(?:for|of|on|at|in)(?:[ \t]+(?!(?:is|was|to)[ \t])[A-Za-z0-9_.@/-]+){1,3})?(?:[ \t]*[:=]|[ \t]+(?:is|was|will|be|has|been|should|set|changed|reset|now|are|becomes|reads|to|-|—|–|→|->)(?![A-Za-z0-9]))*(?:[ \t]*[:=][ \t]*|[ \t]+)["'`“‘]?([^\s"'`”’]{3,}[^\s"'`”’.,;:!?)\]])$p$, 1, 'prose-password', 'a password said in a sentence or a note (detect-secrets KeywordDetector''s prose)', '{"pass","pw","pwd","pin code"}'),
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
        WHEN check_name = 'provider-value' THEN
             v !~ '^(https?|file)://' AND v !~ '^/|^\./|^~/'
             AND v !~ '^\d{4}-\d\d-\d\d' AND v !~ '^v?\d+(\.\d+)+'
             AND NOT (v ~ '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$' AND v !~ '[0-9]')
             AND (v ~ '[0-9]' AND v ~ '[A-Za-z]' AND brain._entropy(v) >= 3.0
                  OR v ~ '^[0-9]{14,}$' AND brain._entropy(v) >= 2.5)
        WHEN check_name = 'cli-password' THEN
             v !~ '^[$%{<\[(-]' AND lower(v) !~ '^(env|file|fd|stdin|prompt|pass|password|secret)(:|$)'
             AND v !~ '^[0-9]{1,5}$' AND length(v) >= 4 AND v !~ '^\*+$'
             AND (rtrim(v, '.,;:!?') ~ '[^A-Za-z]'
                  OR length(v) >= 8 AND brain._secret_candidate_ok('password-letters', v)
                  OR length(v) >= 10 AND v ~ '[A-Z]' AND v ~ '[a-z]' AND brain._entropy(v) >= 3.2)
        WHEN check_name = 'prose-password' THEN
             v !~ '^[$%{<\[(]' AND v !~ '[][(){}]' AND v !~ '^!' AND length(v) >= 5 AND v ~ '[A-Za-z]' AND v ~ '[^A-Za-z]'
             AND v !~ '^[0-9.,:/+-]+$' AND v !~ '^(https?|file)://' AND v !~ '^/|^\./|^~/|^[A-Za-z]:\\'
             AND lower(v) !~ '^(sha-?\d+|md5|bcrypt|scrypt|argon2\w*|pbkdf2\w*|utf-?8|base64|rot13|2fa|oauth2|saml2|\w+\(\)|e\.g\.?|i\.e\.?|n/a)$'
             AND v !~ '^[A-Za-z]+([_.-][A-Za-z]+)+$'                 -- a snake_case, dotted or hyphenated name
             AND v !~ '^[A-Za-z]+[.,;:!?]+$'
             AND v !~ '^[\w-]+\.(ya?ml|json|txt|env|conf|cfg|ini|toml|md|py|js|ts|sh|xml|properties)$'
             AND brain._entropy(v) >= 2.3
        WHEN check_name = 'k8s' THEN v ~ ':[ \t]*["'']?[A-Za-z0-9+/]{8,}'
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
        -- what strpos looks for: the hint lowercased (the literal of a ~LITERAL~REGEX hint)
        WHEN 'hint_lower' THEN (SELECT array_agg(CASE WHEN left(h.t, 1) = '~' THEN split_part(h.t, '~', 2)
                                                      ELSE lower(h.t) END ORDER BY r.rule, h.n)
                                FROM brain.secret_rules() AS r, unnest(r.hints) WITH ORDINALITY AS h(t, n))
        -- hint i is strong when its literal alone makes it count; a weak hint is short
        -- and common in prose ("sk" in every "task", "pass" in "passed"): found alone
        -- (no strong hint in the text), it counts only when hint_narrow matches
        WHEN 'hint_strong' THEN (SELECT array_agg((left(h.t, 1) <> '~' AND h.t NOT IN ('SK', ':A', '-us', 'pass', 'pw'))::text
                                                  ORDER BY r.rule, h.n)
                                 FROM brain.secret_rules() AS r, unnest(r.hints) WITH ORDINALITY AS h(t, n))
        -- what must follow a weak hint for it to count alone
        WHEN 'hint_narrow' THEN (SELECT array_agg(CASE h.t WHEN 'SK' THEN 'sk[0-9a-f]{32}'
                                                           WHEN ':A' THEN ':a[a-z0-9_-]{32}'
                                                           WHEN '-us' THEN '[0-9a-f]-us[0-9]'
                                                           WHEN 'pass' THEN 'pass[^a-z]'
                                                           WHEN 'pw' THEN 'pw[^a-z]' END ORDER BY r.rule, h.n)
                                 FROM brain.secret_rules() AS r, unnest(r.hints) WITH ORDINALITY AS h(t, n))
        -- the regular expression of a ~LITERAL~REGEX hint (each short: one expression
        -- of every hint costs more to compile than a write's whole scan)
        WHEN 'hint_regex' THEN (SELECT array_agg(CASE WHEN left(h.t, 1) = '~' THEN substr(h.t, strpos(substr(h.t, 2), '~') + 2) END
                                                 ORDER BY r.rule, h.n)
                                FROM brain.secret_rules() AS r, unnest(r.hints) WITH ORDINALITY AS h(t, n))
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
    strong boolean;
    narrow text[];
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
    -- (each hint lowercased, looked for in the lowercased text by strpos: a
    -- case-sensitive rule may run on a text that cannot match it, never the other
    -- way. Not one regular expression of every hint: it costs more to compile than
    -- a write's whole scan, and a backend keeps only 32 compiled.)
    SELECT array_agg(y.r) FILTER (WHERE y.ok), bool_or(y.strong OR y.rx IS NOT NULL AND y.ok),
           array_agg(y.narrow) FILTER (WHERE y.narrow IS NOT NULL)
    INTO todo, strong, narrow
    FROM (SELECT h.r, h.strong, h.narrow, h.rx, h.rx IS NULL OR lt ~ h.rx AS ok
          FROM unnest(brain._secret_rule_column('hint_rule')::integer[], brain._secret_rule_column('hint_lower'),
                      brain._secret_rule_column('hint_strong')::boolean[], brain._secret_rule_column('hint_narrow'),
                      brain._secret_rule_column('hint_regex')) AS h(r, hint, strong, narrow, rx)
          WHERE strpos(lt, h.hint) > 0 OFFSET 0) AS y;
    IF NOT coalesce(strong, false) AND NOT EXISTS (SELECT FROM unnest(narrow) AS x(rx) WHERE lt ~ x.rx) THEN
        -- no hint anywhere: only the rules without hints
        IF hinted_only THEN
            RETURN;
        END IF;
        todo := brain._secret_rule_column('unhinted')::integer[];
    ELSE
        -- the rules of the hints found, and the rules without hints
        SELECT array_agg(DISTINCT x.r ORDER BY x.r) INTO todo
        FROM (SELECT unnest(todo) AS r
              UNION ALL
              SELECT u.r::integer FROM unnest(brain._secret_rule_column('unhinted')) AS u(r)
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
