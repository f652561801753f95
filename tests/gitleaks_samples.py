"""A sample of each rule of gitleaks' default configuration, made here from the rule's
format (tests/data/gitleaks-rules.txt lists the ids, with the gitleaks version read).

Each format is a template: the text around the secret as it turns up (a config line,
a command, a header) and the secret's shape, written {alphabet:length}. The values
are fake: drawn from a seeded random generator, so no real-looking key sits in the
repository and every run makes the same samples. Alphabets: hex (0-9a-f), HEX
(0-9A-F), ld (a-z0-9), an (A-Za-z0-9), up (A-Z0-9), b32 (A-Z2-7), url (A-Za-z0-9_-),
b64 (A-Za-z0-9+/), dig (0-9), low (a-z), let (A-Za-z); {uuid} a UUID, {jwt} a JWT.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from pathlib import Path

RULES_FILE = Path(__file__).parent / "data" / "gitleaks-rules.txt"

ALPHABETS = {
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "ld": string.ascii_lowercase + string.digits,
    "an": string.ascii_letters + string.digits,
    "up": string.ascii_uppercase + string.digits,
    "b32": string.ascii_uppercase + "234567",
    "url": string.ascii_letters + string.digits + "_-",
    "b64": string.ascii_letters + string.digits + "+/",
    "dig": string.digits,
    "low": string.ascii_lowercase,
    "let": string.ascii_letters,
}


def _kw(keyword: str, value: str) -> str:
    """gitleaks' semi-generic shape: a key naming the provider, assigned a value."""
    return f'{keyword} = "{value}"'


FORMATS: dict[str, str] = {
    "1password-secret-key": "Emergency kit: A3-{up:6}-{up:11}-{up:5}-{up:5}-{up:5}",
    "1password-service-account-token": "OP_SERVICE_ACCOUNT=ops_eyJ{b64:260}",
    "adafruit-api-key": _kw("adafruit", "{ld:32}"),
    "adobe-client-id": _kw("adobe", "{hex:32}"),
    "adobe-client-secret": "client secret p8e-{an:32} from the console",
    "age-secret-key": "AGE-SECRET-KEY-1{age:58}",
    "airtable-api-key": _kw("airtable", "{ld:17}"),
    "airtable-personnal-access-token": "airtable pat{an:14}.{hex:64}",
    "algolia-api-key": _kw("algolia", "{ld:32}"),
    "alibaba-access-key-id": "aliyun key LTAI{an:20}",
    "alibaba-secret-key": _kw("alibaba", "{ld:30}"),
    "anthropic-admin-api-key": "sk-ant-admin01-{url:93}AA",
    "anthropic-api-key": "sk-ant-api03-{url:93}AA",
    "artifactory-api-key": "X-JFrog-Art-Api: AKCp{an:69}",
    "artifactory-reference-token": "reference token cmVmd{an:59}",
    "asana-client-id": _kw("asana", "{dig:16}"),
    "asana-client-secret": _kw("asana", "{ld:32}"),
    "atlassian-api-token": _kw("jira", "{ld:20}{hex:4}"),
    "authress-service-client-access-key": "sc_{ld:12}.{ld:5}.acc_{ld:20}.{b64:60}",
    "aws-access-token": "key id A3T{up:17}",
    "aws-amazon-bedrock-api-key-long-lived": "AWS_BEARER_TOKEN_BEDROCK=ABSK{b64:132}",
    "aws-amazon-bedrock-api-key-short-lived": "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{b64:120}",
    "azure-ad-client-secret": 'client_secret: "{an:3}8Q~{url:34}"',
    "beamer-api-token": _kw("beamer", "b_{ld:44}"),
    "bitbucket-client-id": _kw("bitbucket", "{ld:32}"),
    "bitbucket-client-secret": _kw("bitbucket", "{url:64}"),
    "bittrex-access-key": _kw("bittrex", "{ld:32}"),
    "bittrex-secret-key": _kw("bittrex", "{ld:32}"),
    "cisco-meraki-api-key": _kw("meraki", "{hex:40}"),
    "clickhouse-cloud-api-secret-key": "clickhouse key 4b1d{an:38}",
    "clojars-api-token": "CLOJARS_{ld:60}",
    "cloudflare-api-key": _kw("cloudflare", "{url:40}"),
    "cloudflare-global-api-key": _kw("cloudflare", "{hex:37}"),
    "cloudflare-origin-ca-key": "origin ca key v1.0-{hex:24}-{hex:146}",
    "codecov-access-token": _kw("codecov", "{ld:32}"),
    "cohere-api-token": _kw("CO_API_KEY", "{an:40}"),
    "coinbase-access-token": _kw("coinbase", "{url:64}"),
    "confluent-access-token": _kw("confluent", "{ld:16}"),
    "confluent-secret-key": _kw("confluent", "{ld:64}"),
    "contentful-delivery-api-token": _kw("contentful", "{url:43}"),
    "curl-auth-header": 'curl -H "Authorization: Token {an:32}" https://api.example.com/v1/items',
    "curl-auth-user": "curl -u deploy:{an:14} https://ci.example.com/job/build",
    "databricks-api-token": "dapi{hex:32}",
    "datadog-access-token": _kw("datadog", "{ld:40}"),
    "defined-networking-api-token": _kw("dnkey", "dnkey-{ld:26}-{ld:52}"),
    "digitalocean-access-token": "doo_v1_{hex:64}",
    "digitalocean-pat": "dop_v1_{hex:64}",
    "digitalocean-refresh-token": "dor_v1_{hex:64}",
    "discord-api-token": _kw("discord", "{hex:64}"),
    "discord-client-id": _kw("discord", "{dig:18}"),
    "discord-client-secret": _kw("discord", "{url:32}"),
    "doppler-api-token": "DOPPLER_TOKEN=dp.pt.{an:43}",
    "droneci-access-token": _kw("droneci", "{ld:32}"),
    "dropbox-api-token": _kw("dropbox", "{ld:15}"),
    "dropbox-long-lived-api-token": _kw("dropbox", "{ld:11}AAAAAAAAAA{url:43}"),
    "dropbox-short-lived-api-token": _kw("dropbox", "sl.{url:135}"),
    "duffel-api-token": "duffel_test_{url:43}",
    "dynatrace-api-token": "dt0c01.{up:24}.{an:64}",
    "easypost-api-token": "EZAK{an:54}",
    "easypost-test-api-token": "EZTK{an:54}",
    "etsy-access-token": _kw("ETSY", "{ld:24}"),
    "facebook-access-token": "facebook app token {dig:15}|{url:32}",
    "facebook-page-access-token": "page token EAAM{an:120}",
    "facebook-secret": _kw("facebook", "{hex:32}"),
    "fastly-api-token": _kw("fastly", "{url:32}"),
    "finicity-api-token": _kw("finicity", "{hex:32}"),
    "finicity-client-secret": _kw("finicity", "{ld:20}"),
    "finnhub-access-token": _kw("finnhub", "{ld:20}"),
    "flickr-access-token": _kw("flickr", "{ld:32}"),
    "flutterwave-encryption-key": "FLWSECK_TEST-{hex:12}",
    "flutterwave-public-key": "FLWPUBK_TEST-{hex:32}-X",
    "flutterwave-secret-key": "FLWSECK_TEST-{hex:32}-X",
    "flyio-access-token": "FLY_API_TOKEN=fm2_{b64:120}",
    "frameio-api-token": "fio-u-{url:64}",
    "freemius-secret-key": "'secret_key' => 'sk_{an:29}'",
    "freshbooks-access-token": _kw("freshbooks", "{ld:64}"),
    "gcp-api-key": "AIza{url:35}",
    "generic-api-key": 'api_token = "{an:32}"',
    "github-app-token": "ghs_{an:36}",
    "github-fine-grained-pat": "github_pat_{an:82}",
    "github-oauth": "gho_{an:36}",
    "github-pat": "ghp_{an:36}",
    "github-refresh-token": "ghr_{an:36}",
    "gitlab-cicd-job-token": "glcbt-{an:5}_{url:20}",
    "gitlab-deploy-token": "gldt-{url:20}",
    "gitlab-feature-flag-client-token": "glffct-{url:20}",
    "gitlab-feed-token": "glft-{url:20}",
    "gitlab-incoming-mail-token": "glimt-{url:25}",
    "gitlab-kubernetes-agent-token": "glagent-{url:50}",
    "gitlab-oauth-app-secret": "gloas-{url:64}",
    "gitlab-pat": "glpat-{url:20}",
    "gitlab-pat-routable": "glpat-{an:40}.01{ld:7}",
    "gitlab-ptt": "glptt-{hex:40}",
    "gitlab-rrt": "GR1348941{url:20}",
    "gitlab-runner-authentication-token": "glrt-{url:20}",
    "gitlab-runner-authentication-token-routable": "glrt-t1_{an:40}.01{ld:7}",
    "gitlab-scim-token": "glsoat-{url:20}",
    "gitlab-session-cookie": "Cookie: _gitlab_session={ld:32}",
    "gitter-access-token": _kw("gitter", "{url:40}"),
    "gocardless-api-token": _kw("gocardless", "live_{url:40}"),
    "grafana-api-key": "eyJrIjoi{an:80}",
    "grafana-cloud-api-token": "glc_{an:48}",
    "grafana-service-account-token": "glsa_{an:32}_{hex:8}",
    "harness-api-key": "pat.{url:22}.{an:24}.{an:20}",
    "hashicorp-tf-api-token": "{ld:14}.atlasv1.{url:64}",
    "hashicorp-tf-password": 'administrator_login_password = "{ld:16}"',
    "heroku-api-key": _kw("heroku", "{uuid}"),
    "heroku-api-key-v2": "HRKU-AA{url:58}",
    "hubspot-api-key": _kw("hubspot", "{UUID}"),
    "huggingface-access-token": "hf_{let:34}",
    "huggingface-organization-api-token": "api_org_{let:34}",
    "infracost-api-token": "ico-{an:32}",
    "intercom-api-key": _kw("intercom", "{url:60}"),
    "intra42-client-secret": "s-s4t2ud-{hex:64}",
    "jfrog-api-key": _kw("artifactory", "{ld:73}"),
    "jfrog-identity-token": _kw("jfrog", "{ld:64}"),
    "jwt": "{jwt}",
    "jwt-base64": "{jwt64}",
    "kraken-access-token": _kw("kraken", "{b64:86}"),
    "kubernetes-secret-yaml": (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: {b64:24}==\n"
    ),
    "kucoin-access-token": _kw("kucoin", "{hex:24}"),
    "kucoin-secret-key": _kw("kucoin", "{uuid}"),
    "launchdarkly-access-token": _kw("launchdarkly", "{url:40}"),
    "linear-api-key": "lin_api_{an:40}",
    "linear-client-secret": _kw("linear", "{hex:32}"),
    "linkedin-client-id": _kw("linkedin", "{ld:14}"),
    "linkedin-client-secret": _kw("linkedin", "{ld:16}"),
    "lob-api-key": _kw("lob", "live_{hex:35}"),
    "lob-pub-api-key": _kw("lob", "test_pub_{hex:31}"),
    "looker-client-id": _kw("looker", "{ld:20}"),
    "looker-client-secret": _kw("looker", "{ld:24}"),
    "mailchimp-api-key": _kw("mailchimp", "{hex:32}-us12"),
    "mailgun-private-api-token": _kw("mailgun", "key-{hex:32}"),
    "mailgun-pub-key": _kw("mailgun", "pubkey-{hex:32}"),
    "mailgun-signing-key": _kw("mailgun", "{hexh:32}-{hexh:8}-{hexh:8}"),
    "mapbox-api-token": _kw("mapbox", "pk.{ld:60}.{ld:22}"),
    "mattermost-access-token": _kw("mattermost", "{ld:26}"),
    "maxmind-license-key": "{an:6}_{an:29}_mmk",
    "messagebird-api-token": _kw("messagebird", "{ld:25}"),
    "messagebird-client-id": _kw("message_bird", "{uuid}"),
    "microsoft-teams-webhook": (
        "https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{ld:32}/{uuid}"
    ),
    "netlify-access-token": _kw("netlify", "{url:43}"),
    "new-relic-browser-api-token": _kw("new_relic", "NRJS-{hex:19}"),
    "new-relic-insert-key": _kw("newrelic", "NRII-{ld:32}"),
    "new-relic-user-api-id": _kw("new-relic", "{ld:64}"),
    "new-relic-user-api-key": _kw("newrelic", "NRAK-{up:27}"),
    "notion-api-token": "ntn_{dig:11}{an:35}",
    "npm-access-token": "npm_{an:36}",
    "nuget-config-password": '<add key="ClearTextPassword" value="{an:16}" />',
    "nytimes-access-token": _kw("nytimes", "{url:32}"),
    "octopus-deploy-api-key": "Octopus key API-{up:26}",
    "okta-access-token": _kw("okta", "00{url:40}"),
    "openai-api-key": "sk-proj-{url:58}T3BlbkFJ{url:58}",
    "openshift-user-token": "oc login --token=sha256~{url:43}",
    "perplexity-api-key": "pplx-{an:48}",
    "pkcs12-file": "{p12}",
    "plaid-api-token": _kw("plaid", "access-sandbox-{uuid}"),
    "plaid-client-id": _kw("plaid", "{ld:24}"),
    "plaid-secret-key": _kw("plaid", "{ld:30}"),
    "planetscale-api-token": "pscale_tkn_{url:43}",
    "planetscale-oauth-token": "pscale_oauth_{url:43}",
    "planetscale-password": "pscale_pw_{url:43}",
    "postman-api-token": "PMAK-{hex:24}-{hex:34}",
    "prefect-api-token": "pnu_{an:36}",
    "private-key": "-----BEGIN PRIVATE KEY-----\n{b64:64}\n{b64:64}\n-----END PRIVATE KEY-----",
    "privateai-api-token": _kw("private_ai", "{ld:32}"),
    "pulumi-api-token": "pul-{hex:40}",
    "pypi-upload-token": "pypi-AgEIcHlwaS5vcmc{url:70}",
    "rapidapi-access-token": _kw("rapidapi", "{url:50}"),
    "readme-api-token": "rdme_{ld:70}",
    "rubygems-api-token": "rubygems_{hex:48}",
    "scalingo-api-token": "tk-us-{url:48}",
    "sendbird-access-id": _kw("sendbird", "{uuid}"),
    "sendbird-access-token": _kw("sendbird", "{hex:40}"),
    "sendgrid-api-token": "SG.{url:22}.{url:43}",
    "sendinblue-api-token": "xkeysib-{hex:64}-{an:16}",
    "sentry-access-token": _kw("sentry", "{hex:64}"),
    "sentry-org-token": "sntrys_eyJpYXQiO{b64:40}LCJyZWdpb25fdXJs{b64:40}_{b64:43}",
    "sentry-user-token": "sntryu_{hex:64}",
    "settlemint-application-access-token": "sm_aat_{an:16}",
    "settlemint-personal-access-token": "sm_pat_{an:16}",
    "settlemint-service-access-token": "sm_sat_{an:16}",
    "shippo-api-token": "shippo_live_{hex:40}",
    "shopify-access-token": "shpat_{hex:32}",
    "shopify-custom-access-token": "shpca_{hex:32}",
    "shopify-private-app-access-token": "shppa_{hex:32}",
    "shopify-shared-secret": "shpss_{hex:32}",
    "sidekiq-secret": "BUNDLE_ENTERPRISE__CONTRIBSYS__COM={hex:8}:{hex:8}",
    "sidekiq-sensitive-url": "source 'https://{hex:8}:{hex:8}@gems.contribsys.com/'",
    "slack-app-token": "xapp-1-A{up:10}-{dig:13}-{ld:64}",
    "slack-bot-token": "xoxb-{dig:12}-{dig:13}-{an:24}",
    "slack-config-access-token": "xoxe.xoxp-1-{up:164}",
    "slack-config-refresh-token": "xoxe-1-{up:146}",
    "slack-legacy-bot-token": "xoxb-{dig:11}-{an:24}",
    "slack-legacy-token": "xoxs-{dig:10}-{dig:10}-{dig:12}-{hex:64}",
    "slack-legacy-workspace-token": "xoxa-2-{an:40}",
    "slack-user-token": "xoxp-{dig:12}-{dig:12}-{dig:12}-{hex:32}",
    "slack-webhook-url": "https://hooks.slack.com/services/T{up:8}/B{up:10}/{an:24}",
    "snyk-api-token": _kw("SNYK_TOKEN", "{uuid}"),
    "sonar-api-token": _kw("SONAR_TOKEN", "squ_{ld:40}"),
    "sourcegraph-access-token": "sgp_{hex:16}_{hex:40}",
    "square-access-token": "EAAA{url:60}",
    "squarespace-access-token": _kw("squarespace", "{uuid}"),
    "stripe-access-token": "sk_live_{an:24}",
    "sumologic-access-id": _kw("SUMO_ACCESS_ID", "su{an:12}"),
    "sumologic-access-token": _kw("SUMO_ACCESS_KEY", "{ld:64}"),
    "telegram-bot-api-token": _kw("telegram_bot", "{dig:10}:A{url:34}"),
    "travisci-access-token": _kw("travis", "{ld:22}"),
    "twilio-api-key": "SK{hex:32}",
    "twitch-api-token": _kw("twitch", "{ld:30}"),
    "twitter-access-secret": _kw("twitter", "{ld:45}"),
    "twitter-access-token": _kw("twitter", "{dig:19}-{an:32}"),
    "twitter-api-key": _kw("twitter", "{ld:25}"),
    "twitter-api-secret": _kw("twitter", "{ld:50}"),
    "twitter-bearer-token": _kw("twitter", "AAAAAAAAAAAAAAAAAAAAA{an:90}"),
    "typeform-api-token": _kw("typeform", "tfp_{url:59}"),
    "vault-batch-token": "hvb.{url:150}",
    "vault-service-token": "VAULT_TOKEN=hvs.{url:95}",
    "yandex-access-token": _kw("yandex", "t1.{url:24}.{url:86}"),
    "yandex-api-key": _kw("yandex", "AQVN{url:36}"),
    "yandex-aws-access-token": _kw("yandex", "YC{url:38}"),
    "zendesk-secret-key": _kw("zendesk", "{ld:40}"),
}

ALPHABETS["age"] = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
ALPHABETS["hexh"] = "0123456789abcdefgh"


def rule_ids() -> list[str]:
    lines = RULES_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _fill(template: str, rng: random.Random) -> str:
    def draw(alphabet: str, n: int) -> str:
        while True:
            s = "".join(rng.choice(ALPHABETS[alphabet]) for _ in range(n))
            # a random value has a digit and a letter where its alphabet has both
            digits = (
                not (set(ALPHABETS[alphabet]) & set(string.digits)) or any(c.isdigit() for c in s) or n < 8
            )
            letters = not (set(ALPHABETS[alphabet]) & set(string.ascii_letters)) or any(
                c.isalpha() for c in s
            )
            if digits and letters:
                return s

    def uuid(upper: bool = False) -> str:
        u = "-".join(draw("hex", n) for n in (8, 4, 4, 4, 12))
        return u.upper() if upper else u

    def jwt() -> str:
        def part(d: dict) -> str:
            return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")

        return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': draw('dig', 8)})}.{draw('url', 43)}"

    def p12() -> str:
        # a PKCS#12 file's DER (SEQUENCE, INTEGER version 3, ...) in base64, as pasted
        der = bytes([0x30, 0x82, 0x0A, 0x41, 0x02, 0x01, 0x03, 0x30, 0x82, 0x0A, 0x07])
        der += bytes(rng.randrange(256) for _ in range(140))
        return "cert.p12 (base64): " + base64.b64encode(der).decode()

    def sub(m: re.Match[str]) -> str:
        name, _, n = m.group(1).partition(":")
        if name == "uuid":
            return uuid()
        if name == "UUID":
            return uuid(upper=True)
        if name == "jwt":
            return jwt()
        if name == "jwt64":
            return base64.b64encode(jwt().encode()).decode()
        if name == "p12":
            return p12()
        return draw(name, int(n))

    return re.sub(r"\{(\w+(?::\d+)?)\}", sub, template)


def samples(seed: int = 5417) -> dict[str, str]:
    """One sample text per rule id, in the order of the list."""
    rng = random.Random(seed)
    return {rule: _fill(FORMATS[rule], rng) for rule in rule_ids() if rule in FORMATS}
