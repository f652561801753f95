"""Test corpora of the secret scanner and the injection detector.

The secrets are fake but valid in format: made here from a seeded random
generator (so no real-looking key sits in the repository), each inside the
kind of sentence, config line or command it turns up in. The false-positive
corpus is ordinary technical text: commit hashes, UUIDs, checksums, base64
images in docs, long identifiers, package versions, placeholders.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(1301)
UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def mixed(alphabet: str, n: int) -> str:
    """n characters of alphabet with at least 3 digits, 5 upper and 5 lower case letters."""
    while True:
        s = rand(alphabet, n)
        if (
            sum(c.isdigit() for c in s) >= 3
            and sum(c.isupper() for c in s) >= 5
            and sum(c.islower() for c in s) >= 5
        ):
            return s


def _jwt() -> str:
    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")

    payload = {"sub": rand(DIGITS, 8), "name": "Dana", "iat": 1700000000 + _rng.randrange(10**6)}
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(payload)}.{rand(URLSAFE, 43)}"


def _pem(label: str) -> str:
    body = "\n".join(rand(B64, 64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _aws_secret() -> str:
    return mixed(B64, 40)


# (kind the scanner must report, the text that holds it, the secret itself)
SECRETS: list[tuple[str, str, str]] = []


def _add(kind: str, template: str, secret: str) -> None:
    SECRETS.append((kind, template.format(s=secret), secret))


for _ in range(3):
    _add(
        "aws-access-key-id",
        "The deploy role uses access key {s} in eu-west-1.",
        "AKIA" + rand(UPPER + DIGITS, 16),
    )
_add("aws-access-key-id", "export AWS_ACCESS_KEY_ID={s}", "ASIA" + rand(UPPER + DIGITS, 16))
for tmpl in ("aws_secret_access_key = {s}", "AWS_SECRET_ACCESS_KEY={s}", '"aws_secret_key": "{s}"'):
    _add("aws-secret-key", "[default]\nregion = us-east-1\n" + tmpl, _aws_secret())
for _ in range(2):
    _add("aws-secret-key", "The old key pair ended in secret {s} before rotation.", _aws_secret())
_add("github-token", "Push with token {s} from the CI settings.", "ghp_" + rand(ALNUM, 36))
_add("github-token", "GITHUB_TOKEN={s}", "gho_" + rand(ALNUM, 36))
_add("github-token", "fine-grained PAT {s} expires in May", "github_pat_" + rand(ALNUM + "_", 82))
_add(
    "gitlab-token",
    "git clone https://oauth2@gitlab.example.com/x.git # token {s}",
    "glpat-" + rand(URLSAFE, 20),
)
_add("gitlab-token", "CI_JOB uses {s} for the registry", "glpat-" + rand(ALNUM, 26))
_add("huggingface-token", "HF login: huggingface-cli login --token {s}", "hf_" + rand(ALNUM, 34))
_add("huggingface-token", "set HF_TOKEN to {s} in the runner", "hf_" + rand(ALNUM, 34))
_add("npm-token", "//registry.npmjs.org/:_authToken={s}", "npm_" + rand(ALNUM, 36))
_add("npm-token", "The publish token is {s}.", "npm_" + rand(ALNUM, 36))
_add("sendgrid-api-key", "SENDGRID_API_KEY={s}", "SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43))
_add("sendgrid-api-key", "mail relay key {s}", "SG." + rand(ALNUM, 22) + "." + rand(ALNUM, 43))
_add("pypi-token", "[pypi]\nusername = __token__\npassword = {s}", "pypi-AgEIcHlwaS5vcmc" + rand(URLSAFE, 70))
_add("pypi-token", "twine upload -p {s} dist/*", "pypi-AgENdGVzdC5weXBpLm9yZw" + rand(URLSAFE, 60))
_add(
    "slack-token",
    "Bot token {s} posts to #deploys.",
    "xoxb-" + rand(DIGITS, 12) + "-" + rand(DIGITS, 13) + "-" + rand(ALNUM, 24),
)
_add(
    "slack-token",
    "user token: {s}",
    "xoxp-" + rand(DIGITS, 11) + "-" + rand(DIGITS, 12) + "-" + rand(HEX, 32),
)
_add(
    "slack-webhook",
    "alerts go to {s}",
    "https://hooks.slack.com/services/T"
    + rand(UPPER + DIGITS, 8)
    + "/B"
    + rand(UPPER + DIGITS, 10)
    + "/"
    + rand(ALNUM, 24),
)
_add("stripe-key", "Stripe live key {s} is in the billing service.", "sk_live_" + rand(ALNUM, 24))
_add("stripe-key", "STRIPE_SECRET_KEY={s}", "sk_test_" + rand(ALNUM, 99))
_add("stripe-key", "restricted key {s} for reports", "rk_live_" + rand(ALNUM, 24))
_add("stripe-webhook-secret", "endpoint secret {s}", "whsec_" + rand(ALNUM, 32))
_add("twilio-api-key", "Twilio API key {s} for SMS.", "SK" + rand(HEX, 32))
_add("twilio-api-key", "TWILIO_API_KEY={s}", "SK" + rand(HEX, 32))
_add(
    "azure-storage-key",
    "DefaultEndpointsProtocol=https;AccountName=logs;AccountKey={s};EndpointSuffix=core.windows.net",
    rand(B64, 86) + "==",
)
_add(
    "azure-ad-client-secret",
    "The app registration secret is {s} (expires 2026).",
    rand(ALNUM, 3) + "8Q~" + rand(URLSAFE + "~.", 34),
)
_add(
    "azure-sas-token",
    "download from https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&se=2025-01-01&sp=r&sig={s}",
    rand(ALNUM, 40) + "%3D",
)
_add("gcp-api-key", "Maps key {s} is restricted by referrer.", "AIza" + rand(URLSAFE, 35))
_add("gcp-api-key", "GOOGLE_API_KEY={s}", "AIza" + rand(URLSAFE, 35))
_add(
    "private-key",
    '{{"type": "service_account", "project_id": "acme", "private_key_id": "'
    + rand(HEX, 40)
    + '", "private_key": "{s}"}}',
    "-----BEGIN PRIVATE KEY-----\\n"
    + rand(B64, 64)
    + "\\n"
    + rand(B64, 64)
    + "\\n-----END PRIVATE KEY-----\\n",
)
_add("gcp-oauth-secret", "client_secret in the consent screen: {s}", "GOCSPX-" + rand(URLSAFE, 28))
_add("gcp-access-token", "curl -H 'X-Goog-Token: {s}' ...", "ya29." + rand(URLSAFE, 60))
_add("openai-api-key", "OPENAI_API_KEY={s}", "sk-proj-" + mixed(URLSAFE, 48))
_add("openai-api-key", "Use the key {s} for the eval runs.", "sk-" + mixed(ALNUM, 48))
_add("anthropic-api-key", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + rand(URLSAFE, 93) + "AA")
_add("digitalocean-token", "doctl auth init -t {s}", "dop_v1_" + rand(HEX, 64))
_add("shopify-token", "Admin API access token {s}", "shpat_" + rand(HEX, 32))
_add(
    "mailchimp-api-key",
    "Mailchimp key {s} for the newsletter",
    rand(HEX, 32) + "-us" + str(_rng.randint(1, 21)),
)
_add("telegram-bot-token", "Bot token from BotFather: {s}", rand(DIGITS, 10) + ":AA" + rand(URLSAFE, 33))
_add("databricks-token", "DATABRICKS_TOKEN={s}", "dapi" + rand(HEX, 32))
_add("square-token", "Square access token {s}", "EAAA" + rand(URLSAFE, 60))
_add("vault-token", "VAULT_TOKEN={s}", "hvs." + rand(URLSAFE, 90))
_add("grafana-token", "Grafana service account token {s}", "glsa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8))
_add("linear-api-key", "Linear key {s}", "lin_api_" + rand(ALNUM, 40))
_add("postman-api-key", "Postman {s}", "PMAK-" + rand(HEX, 24) + "-" + rand(HEX, 34))
_add("doppler-token", "DOPPLER_TOKEN={s}", "dp.pt." + rand(ALNUM, 43))
_add(
    "age-secret-key",
    "# created: 2024-01-01\n{s}",
    "AGE-SECRET-KEY-1" + rand("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
)
_add("jwt", "The session cookie was {s} when it failed.", _jwt())
_add("jwt", "SUPABASE_SERVICE_ROLE_KEY={s}", _jwt())
_add("private-key", "Deploy key:\n{s}\nDo not share.", _pem("OPENSSH PRIVATE KEY"))
_add("private-key", "{s}", _pem("RSA PRIVATE KEY"))
_add("private-key", "signing key\n{s}", _pem("PGP PRIVATE KEY BLOCK"))
_add("private-key", "tls.key: |\n  {s}", _pem("EC PRIVATE KEY"))
_add(
    "http-basic-auth",
    "curl -H 'Authorization: Basic {s}' https://api.example.com",
    base64.b64encode(f"deploy:{rand(ALNUM, 14)}".encode()).decode(),
)
_add(
    "http-basic-auth",
    "Authorization: Basic {s}",
    base64.b64encode(f"admin:{rand(ALNUM, 10)}".encode()).decode(),
)
_add("http-bearer-token", "Authorization: Bearer {s}", rand(ALNUM, 40))
_add(
    "http-bearer-token",
    'curl -H "Authorization: Bearer {s}" https://api.example.com/v1/items',
    "tok_" + rand(ALNUM, 32),
)
_add("url-credentials", "REDIS_URL=redis://:{s}@cache.internal:6379/0", rand(ALNUM, 20))
_add("url-credentials", "The DSN is postgresql://app:{s}@db.internal:5432/orders", rand(ALNUM, 16))
_add("url-credentials", "amqp://guest:{s}@rabbit:5672/", rand(ALNUM, 12))
_add("url-credentials", "pip index: https://user:{s}@pypi.example.com/simple", "Zx" + rand(ALNUM, 10))
_add(
    "docker-auth",
    '{{"auths": {{"registry.example.com": {{"auth": "{s}"}}}}}}',
    base64.b64encode(f"ci:{rand(ALNUM, 16)}".encode()).decode(),
)
_add("assigned-secret", "db_password = {s}", rand(ALNUM, 6) + "!" + rand(DIGITS, 3) + rand(ALNUM, 6))
_add("assigned-secret", 'client_secret: "{s}"', rand(ALNUM, 32))
_add("assigned-secret", "SECRET_KEY='{s}'", rand(ALNUM + "!@#%^&*", 50))
_add("assigned-secret", "webhook.token => {s}", rand(HEX, 24) + "Zq")
_add("assigned-secret", "api_key: {s}", rand(ALNUM, 30))

FORMATS = sorted({k for k, _, _ in SECRETS})


# Ordinary technical text: nothing in it is a secret.
def _benign() -> list[str]:
    out: list[str] = []
    for _ in range(40):
        out.append(f"Fixed in commit {rand(HEX, 40)} (merged as {rand(HEX, 7)}).")
    for _ in range(30):
        h = rand(HEX, 32)
        out.append(f"request_id = {h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]} failed twice")
    for _ in range(30):
        out.append(f"sha256: {rand(HEX, 64)}  pybrain-0.{_rng.randint(1, 9)}.{_rng.randint(0, 20)}.tar.gz")
    for _ in range(15):
        png = b"\x89PNG\r\n\x1a\n" + bytes(_rng.randrange(256) for _ in range(_rng.randint(300, 900)))
        data = base64.b64encode(png).decode()
        wrapped = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
        out.append(f"The logo inline: ![logo](data:image/png;base64,{data})")
        out.append(f"```\n{wrapped}\n```")
    idents = [
        "AbstractSingletonProxyFactoryBeanConfigurationManager",
        "test_observe_batch_keeps_the_rest_of_a_document_when_one_chunk_is_refused",
        "HttpClientRequestInterceptorRegistryAutoConfiguration2",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "kubernetes.io/service-account-token",
        "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
        "password = os.environ['DB_PASSWORD']",
        "api_key = settings.OPENAI_API_KEY",
        "secret: ${{ secrets.DEPLOY_KEY }}",
        "token: {{ vault_token }}",
        "password: <your password here>",
        "DATABASE_URL=postgresql://app:${DB_PASSWORD}@db:5432/app",
        "postgresql://user:password@localhost:5432/db is the example DSN",
        "redis://localhost:6379/0",
        "https://github.com/acme/widgets/blob/main/README.md#install",
        "The access_key_id column holds the key's id, not the key.",
        "max_tokens = 4096 and temperature = 0.2",
        "secret_santa_budget = 25",
        "passwords must be at least 12 characters; tokens expire after 3600 seconds",
        "Set BRAIN_DATABASE_URL to the server's URL; never paste the password.",
        "The JWT header starts with eyJ and is base64url encoded.",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer <token>",
        "curl -u $USER:$PASS https://api.example.com",
        "sk-learn-style estimators follow fit/predict",
        "numpy==1.26.4 pandas==2.2.2 torch==2.3.1+cu121 scikit-learn==1.5.0",
        "psycopg[binary,pool]>=3.2,<4",
        "node v20.11.1, npm 10.2.4, pnpm@8.15.4",
        "Release v2024.05.14-rc3 tagged as 3f2a9c1",
        "Docker image ghcr.io/acme/api@sha256:" + rand(HEX, 64),
        "The ARN arn:aws:iam::123456789012:role/DeployRole assumes the role.",
        "ssh-ed25519 " + rand(B64, 68) + " dana@laptop",
        "-----BEGIN PUBLIC KEY----- is fine to share; the private half is not.",
        "-----BEGIN CERTIFICATE-----\n" + rand(B64, 64) + "\n-----END CERTIFICATE-----",
        "Use key = value lines in .env files; the secret goes in the vault.",
        "The password_reset_token_ttl_seconds = 900 setting was lowered.",
        "token_count: 123456789",
        "auth_token_header_name = X-Auth-Token",
        "GET /api/v1/users/8f14e45fceea167a5a36dedd4bea2543/sessions",
        "src/main/java/com/example/payments/service/RefundServiceImpl.java",
        "line 42: ValueError: invalid literal for int() with base 10: 'abc'",
        "s3://acme-data-lake/raw/2024/05/14/events-000123.parquet",
        "The Gradle wrapper checksum is " + rand(HEX, 64) + ".",
        "git@github.com:acme/widgets.git",
        "mongodb+srv://cluster0.abcde.mongodb.net/?retryWrites=true",
        "ftp://ftp.example.com/pub/file.txt",
        "user@example.com wrote: the build is green",
        "Basic auth is disabled; use OAuth.",
        "Bearer tokens are sent in the Authorization header.",
        'ETag: W/"' + rand(HEX, 32) + '"',
    ]
    out.extend(idents)
    for _ in range(30):
        out.append(
            f"The function {rand(LOWER, 8)}_{rand(LOWER, 10)}_{rand(LOWER, 6)}_v{_rng.randint(1, 9)}"
            f" returns {rand(LOWER, 12)}."
        )
    for _ in range(20):
        out.append(
            f"Cache key {rand(LOWER + DIGITS, 12)}:{rand(HEX, 16)}"
            f" expired at 2024-05-{_rng.randint(10, 28)}T12:00:00Z"
        )
    for _ in range(20):
        out.append("Paths: " + "/".join(rand(LOWER, _rng.randint(3, 9)) for _ in range(6)) + ".py")
    return out


BENIGN = _benign()
