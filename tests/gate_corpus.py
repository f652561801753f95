# ruff: noqa: RUF001  (text in other scripts and full-width forms, on purpose)
"""Corpora of the gate built by a method, not listed by hand (issue 54).

Each class of what the gate must catch is a generator: the places a secret stands in
(a command line's password positions, a sentence) crossed with the values and the
surrounding text, so that every variant of a class is tried, not the one reported.
The ordinary text is generated the same way: commit messages, logs, docs prose and
commands without secrets, with the near misses of each class ("password reset flow",
"the pw field", --password-stdin, hashes, UUIDs, base64 of ordinary text).

Every corpus is split in two by a hash of its text (split()): the rules were written
against the "dev" half, and the "held-out" half measures them (docs/security.md gives
both figures). Values are fake, drawn from a random generator seeded in each function, so
that a corpus is the same whatever was generated before it."""

from __future__ import annotations

import base64
import hashlib
import random
import string


def _pw(kind: int, _rng: random.Random) -> str:
    """A password as people pick them: words with digits and symbols, or random."""
    words = ["staging", "Summer", "orange", "Tr0ub4dor", "kestrel", "Velvet", "granite", "harbor"]
    if kind % 3 == 0:
        return _rng.choice(words) + str(_rng.randrange(10, 9999)) + _rng.choice("!#%&*@")
    if kind % 3 == 1:
        return "".join(
            _rng.choice(string.ascii_letters + string.digits) for _ in range(_rng.randrange(10, 20))
        )
    return _rng.choice(words).lower() + "-" + _rng.choice(words).lower() + str(_rng.randrange(2, 99))


# (class, template): {pw} is the password, the rest the command line around it.
COMMAND_TEMPLATES = [
    ("mysql", "mysql -u root -p{pw} -h db.internal shop"),
    ("mysql", "mysqldump -uadmin -p'{pw}' --single-transaction shop > shop.sql"),
    ("mysql", "mariadb -h 10.0.0.5 -u app -p{pw} -e 'SHOW TABLES'"),
    ("flag", "mysql --user=app --password={pw} shop"),
    ("flag", "wget --user=ci --password={pw} https://artifacts.example.com/build.tgz"),
    ("flag", "docker login registry.example.com -u deploy --password {pw}"),
    ("flag", "psql --host db --username app --password {pw}"),
    ("flag", "vault login -method=userpass username=ops password={pw}"),
    ("flag", "keytool -importkeystore -srckeystore a.p12 -srcstorepass {pw} -deststorepass {pw}"),
    ("flag", "keytool -genkey -alias app -keystore app.jks -storepass {pw} -keypass {pw}"),
    ("flag", "openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:{pw} -out cert.p12"),
    ("flag", "openssl rsa -in key.pem -passin pass:{pw} -out plain.pem"),
    ("flag", "az login --service-principal -u app-id --password {pw} --tenant t1"),
    ("flag", "ldapsearch -x -D cn=admin,dc=example,dc=com --bind-password={pw}"),
    ("flag", "./manage.py createsuperuser --admin-password {pw}"),
    ("sshpass", "sshpass -p {pw} ssh deploy@10.0.0.7 'sudo systemctl restart app'"),
    ("sshpass", "sshpass -p'{pw}' scp build.tgz ops@bastion:/srv/"),
    ("redis", "redis-cli -h cache.internal -a {pw} FLUSHALL"),
    ("sqlcmd", "sqlcmd -S sql01 -U sa -P {pw} -Q 'SELECT 1'"),
    ("sqlcmd", "bcp dbo.orders out orders.dat -S sql01 -U sa -P{pw} -c"),
    ("mongo", "mongosh mongodb://db:27017/admin -u root -p {pw}"),
    ("mongo", "mongodump --host db -u backup -p {pw} --out /backups"),
    ("smbclient", "smbclient //files/share -U ops%{pw}"),
    ("htpasswd", "htpasswd -b /etc/nginx/.htpasswd admin {pw}"),
    ("net-use", "net use Z: \\\\files\\share /user:CORP\\ops {pw}"),
    ("curl", "curl -u admin:{pw} https://jenkins.example.com/api/json"),
    ("curl", "curl --user 'deploy:{pw}' -X POST https://ci.example.com/job/build"),
    ("curl", "curl -s -u ci:{pw} https://nexus.example.com/repository/"),
    ("env", "PGPASSWORD={pw} psql -h db -U app shop"),
    ("env", "MYSQL_PWD='{pw}' mysql -u app shop"),
    ("env", "export REDIS_PASSWORD={pw}"),
    ("env", "SMTP_PASS={pw} ./send-report.sh"),
]

PROSE_TEMPLATES = [
    ("prose", "my db password for staging is {pw}"),
    ("prose", "The password for the admin account is {pw} until Friday."),
    ("prose", "fyi the wifi password is {pw}"),
    ("prose", "Staging DB: user app, password {pw}"),
    ("prose", "pw: {pw}"),
    ("prose", "pw {pw} (rotate after the demo)"),
    ("prose", "passwd {pw}"),
    ("prose", "I set the root password to {pw} on the new box"),
    ("prose", "password was changed to {pw} yesterday"),
    ("prose", "New passphrase: {pw}"),
    ("prose", "Jenkins login is ops / password {pw}"),
    ("prose", "the vpn pwd is {pw}, don't share it"),
    ("prose", "Password for grafana → {pw}"),
]


def command_secrets() -> list[tuple[str, str, str]]:
    """(class, text, password) for each command template with three kinds of password."""
    _rng = random.Random(5454)
    out = []
    for cls, template in COMMAND_TEMPLATES + PROSE_TEMPLATES:
        for kind in range(3):
            pw = _pw(kind, _rng)
            out.append((cls, template.format(pw=pw), pw))
    return out


ORDINARY = [
    # near misses of the password classes
    "Implement the password reset flow: the link expires after 30 minutes.",
    "the pw field is optional in the login form",
    "Password: required. Tokens: optional.",
    "echo $TOKEN | docker login ghcr.io -u bot --password-stdin",
    "mysql -u root -p shop   # prompts for the password",
    "mysql -h db -P 3306 -u app shop",
    "Run passwd alice to set her password.",
    "The password must be at least 12 characters and hold a digit.",
    "Passwords are hashed with bcrypt (cost 12) before they are stored.",
    "password hashing moved to argon2id in v2.3",
    "Use --password to be asked for it; --password-file reads it from a file.",
    "keytool -list -keystore app.jks   # asks for the store password",
    "sshpass is not installed on the build agents",
    "redis-cli -h cache.internal PING",
    'curl -u "$JENKINS_USER:$JENKINS_TOKEN" https://jenkins.example.com/api/json',
    "PGPASSWORD=$(cat /run/secrets/db) psql -h db -U app",
    "export DB_PASSWORD=${DB_PASSWORD:-}",
    "The password is stored in the vault at secret/prod/db.",
    "Password expired for user deploy; reset it in the console.",
    "pw = getpass.getpass('Password: ')",
    "password = os.environ['DB_PASSWORD']",
    "Forgot-password emails are sent by the mailer service.",
    "The pin code screen shows 6 digits.",
    "Passwd file permissions must be 0644.",
    "git commit -m 'fix: password reset token expiry (#412)'",
    # provider names near their words
    "The twitter card shows the first 200 characters of the post.",
    "Sentry release 7.52.0 fixed the breadcrumb bug.",
    "linear_regression_coef = 0.87341234567812",
    "discord_channel = general",
    "slack and discord notifications are sent by the same worker",
    "okta = enabled for SSO since 2024-03-01",
    "heroku = legacy; the app moved to fly.io",
    "sentry_dsn = https://public@o0.ingest.sentry.io/1",
    "datadog_site = datadoghq.eu",
    "jira = PROJ-1234",
    "The test_user fixture creates live_sessions for the dashboard test.",
    "API-GATEWAY-TIMEOUT-MS is read at start.",
]


def _ordinary_generated() -> list[str]:
    """Commit messages, logs, hashes, UUIDs and base64 of ordinary text, generated."""
    _rng = random.Random(5457)
    out = []
    verbs = ["fix", "add", "remove", "rename", "document", "test", "speed up", "refactor"]
    things = [
        "the password reset form",
        "token refresh",
        "the secret rotation job",
        "the pw field",
        "login throttling",
        "key rotation docs",
        "the auth middleware",
        "session cookies",
    ]
    for i in range(60):
        sha = hashlib.sha1(str(i).encode()).hexdigest()
        out.append(f"{sha[:12]} {_rng.choice(verbs)}: {_rng.choice(things)} (#{100 + i})")
    for i in range(30):
        u = "-".join(
            hashlib.md5(str(i).encode()).hexdigest()[a:b]
            for a, b in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32))
        )
        out.append(
            f"2026-11-{1 + i % 28:02d}T10:{i % 60:02d}:00Z INFO request {u} took {i * 7} ms (user={i})"
        )
    for i in range(30):
        digest = hashlib.sha256(str(i).encode()).hexdigest()
        out.append(f"sha256:{digest}  dist/pybrain-0.{i}.0.tar.gz")
    for i in range(30):
        text = f"Meeting notes {i}: the password reset flow ships next week, tokens stay as they are."
        out.append("Decoded config: " + base64.b64encode(text.encode()).decode())
    for i in range(20):
        out.append(f"docker pull ghcr.io/acme/api@sha256:{hashlib.sha256(str(-i).encode()).hexdigest()}")
    return out


def ordinary() -> list[str]:
    return ORDINARY + _ordinary_generated()


def split(items: list, key=lambda x: x) -> tuple[list, list]:
    """The dev half and the held-out half: by the first byte of the sha256 of each text."""
    dev, held = [], []
    for item in items:
        text = key(item)
        (dev if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else held).append(item)
    return dev, held


# --- encodings: each way of writing a text, applied to each secret --------------------


def _rot47(s: str) -> str:
    return "".join(chr(33 + (ord(c) - 33 + 47) % 94) if 33 <= ord(c) <= 126 else c for c in s)


def _xxd(data: bytes) -> str:
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        groups = " ".join(chunk[i : i + 2].hex() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}: {groups:<39}  {text}")
    return "\n".join(lines)


def _hexdump_c(data: bytes) -> str:
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        left = " ".join(f"{b:02x}" for b in chunk[:8])
        right = " ".join(f"{b:02x}" for b in chunk[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}  {left:<23}  {right:<23}  |{text}|")
    return "\n".join(lines)


ENCODINGS = {
    "base64": lambda s: "blob: " + base64.b64encode(s.encode()).decode(),
    "base32": lambda s: "b32: " + base64.b32encode(s.encode()).decode(),
    "ascii85": lambda s: "a85: " + base64.a85encode(s.encode()).decode(),
    "ascii85-adobe": lambda s: base64.a85encode(s.encode(), adobe=True).decode(),
    "hex": lambda s: "0x" + s.encode().hex(),
    "xxd": lambda s: _xxd(s.encode()),
    "hexdump-c": lambda s: _hexdump_c(s.encode()),
    "0x-list": lambda s: "unsigned char k[] = {" + ", ".join(f"0x{b:02x}" for b in s.encode()) + "};",
    "rot13": lambda s: (
        "rot13: "
        + s.translate(
            str.maketrans(
                string.ascii_letters,
                string.ascii_lowercase[13:]
                + string.ascii_lowercase[:13]
                + string.ascii_uppercase[13:]
                + string.ascii_uppercase[:13],
            )
        )
    ),
    "rot47": lambda s: "rot47: " + _rot47(s),
    "sql-chr": lambda s: "SELECT " + " || ".join(f"chr({ord(c)})" for c in s) + ";",
    "mysql-char": lambda s: "SELECT CHAR(" + ",".join(str(ord(c)) for c in s) + ");",
    "python-chr": lambda s: "k = " + "+".join(f"chr({hex(ord(c))})" for c in s),
    "js-fromcharcode": lambda s: "String.fromCharCode(" + ", ".join(str(ord(c)) for c in s) + ")",
    "code-list": lambda s: "''.join(map(chr, [" + ", ".join(str(ord(c)) for c in s) + "]))",
    "octal-escapes": lambda s: 'printf "' + "".join(f"\\{ord(c):03o}" for c in s) + '"',
    "unicode-escapes": lambda s: "const k = '" + "".join(f"\\u{{{ord(c):x}}}" for c in s) + "';",
    "combining-marks": lambda s: "".join(c + "\u0336" for c in s),
    "tag-characters": lambda s: "see below" + "".join(chr(0xE0000 + ord(c)) for c in s),
    "zero-width-joiners": lambda s: "\u2060".join(s),
}


def encoded_secrets() -> list[tuple[str, str, str]]:
    """(encoding, text, the secret's text as written) for secrets of four shapes."""
    _rng = random.Random(5458)
    alnum = string.ascii_letters + string.digits
    secrets = [
        "ghp_" + "".join(_rng.choice(alnum) for _ in range(36)),
        "xoxb-"
        + "".join(_rng.choice(string.digits) for _ in range(12))
        + "-"
        + "".join(_rng.choice(alnum) for _ in range(24)),
        "AKIA" + "".join(_rng.choice(string.ascii_uppercase + string.digits) for _ in range(16)),
        "db_password = " + _pw(0, _rng),
    ]
    out = []
    for name, encode in ENCODINGS.items():
        for secret in secrets:
            text = encode(secret)
            out.append((name, text, text))
    return out


ORDINARY_ENCODED = [
    "SELECT chr(10) || 'next line'",
    "print(chr(65), chr(66))",
    "a bad dead face cafe",
    _xxd(b"Hello, world! This is a plain hex dump of nothing secret."),
    _hexdump_c(b"GET /index.html HTTP/1.1\r\nHost: example.com\r\n"),
    "b32: " + base64.b32encode(b"meeting moved to thursday at noon").decode(),
    "a85: " + base64.a85encode(b"the deploy finished without errors").decode(),
    "rot13: " + "Gur qrcybl svavfurq jvgubhg reebef",
    "The list [10, 20, 30, 40, 50, 60, 70, 80, 90] sums to 450.",
    "weights = [101, 102, 103, 104, 105, 106, 107, 108]",
    "ratio=3/4;x=(a+b)*c-d/e;y=f%g",
    "café naïve résumé, Zürich, Ångström",
    "ＦＵＬＬ ｗｉｄｔｈ text from a Japanese IME",
    'printf "\\101\\102\\103\\n"',
    "const nl = '\\u{a}';",
]
