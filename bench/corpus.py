"""Synthetic engineering memories: templates filled from vocabularies, deterministic per seed.

Every memory has a kind (mostly facts, some rules, incidents and tasks), a
project (a quarter are global), one or two topical tags and exactly one
component tag `comp-00` .. `comp-99`, given uniformly: filtering by one
component tag matches about 1% of the rows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

SERVICE_PREFIXES = [
    "payments",
    "billing",
    "auth",
    "search",
    "ingest",
    "checkout",
    "inventory",
    "notifications",
    "ledger",
    "profile",
    "catalog",
    "pricing",
    "shipping",
    "reporting",
    "analytics",
    "gateway",
    "scheduler",
    "export",
    "media",
    "thumbnail",
    "session",
    "feature-flags",
    "audit",
    "fraud",
    "email",
    "sms",
    "webhook",
    "recommendation",
    "identity",
    "geo",
    "tax",
    "refunds",
    "orders",
    "cart",
    "loyalty",
    "support",
    "chat",
    "metrics",
    "tracing",
    "backup",
]
SERVICE_SUFFIXES = ["api", "service", "worker", "gateway", "sync", "consumer", "cron", "proxy"]
HOST_ROLES = [
    "db",
    "web",
    "api",
    "cache",
    "queue",
    "batch",
    "gpu",
    "edge",
    "bastion",
    "etl",
    "kafka",
    "search",
]
ENVS = ["prod", "staging", "dev", "canary", "eu", "us", "apac"]
PEOPLE = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "victor",
    "walter",
    "yuki",
    "zoe",
    "amir",
    "bea",
    "chen",
    "dmitri",
    "elena",
    "farah",
    "goran",
    "hana",
    "ines",
    "jonas",
    "kofi",
    "lena",
    "mateo",
    "nora",
    "oscar",
    "priya",
    "quinn",
    "rosa",
    "sven",
    "tariq",
    "uma",
    "vera",
    "wen",
]
TOOLS = [
    "terraform",
    "helm",
    "kubectl",
    "ansible",
    "pytest",
    "ruff",
    "mypy",
    "docker",
    "buildkit",
    "bazel",
    "poetry",
    "uv",
    "pgbouncer",
    "pg_dump",
    "redis-cli",
    "grafana",
    "prometheus",
    "sentry",
    "datadog",
    "vault",
    "argocd",
    "jenkins",
    "pre-commit",
    "eslint",
    "webpack",
    "vite",
    "cargo",
    "gradle",
    "maven",
    "jq",
    "k6",
    "locust",
    "flyway",
    "alembic",
    "liquibase",
    "packer",
    "nomad",
    "consul",
    "istio",
    "envoy",
    "nginx",
    "haproxy",
    "celery",
    "airflow",
    "dbt",
    "spark",
]
DATASTORES = [
    "postgres",
    "redis",
    "kafka",
    "rabbitmq",
    "elasticsearch",
    "s3",
    "clickhouse",
    "mongodb",
    "dynamodb",
    "memcached",
    "etcd",
    "sqs",
    "bigquery",
    "cassandra",
    "minio",
]
ERRORS = [
    "connection refused",
    "deadlock detected",
    "out of memory",
    "timeout after 30s",
    "certificate has expired",
    "too many open files",
    "disk quota exceeded",
    "429 Too Many Requests",
    "502 Bad Gateway",
    "503 Service Unavailable",
    "null pointer dereference",
    "could not serialize access due to concurrent update",
    "duplicate key value violates unique constraint",
    "permission denied for table",
    "segmentation fault",
    "OOMKilled",
    "context deadline exceeded",
    "SSL handshake failed",
    "no space left on device",
    "broken pipe",
    "DNS resolution failed",
    "lock timeout",
    "index out of range",
    "schema mismatch",
    "checksum mismatch",
    "version conflict",
    "consumer group rebalance storm",
    "replication slot lag",
    "stale read from replica",
    "too many clients already",
    "request entity too large",
    "invalid UTF-8 byte sequence",
]
CONFIG_KEYS = [
    "max_connections",
    "pool_size",
    "timeout_ms",
    "retry_limit",
    "batch_size",
    "worker_count",
    "cache_ttl",
    "log_level",
    "rate_limit",
    "heap_size",
    "max_inflight",
    "prefetch_count",
    "idle_timeout",
    "statement_timeout",
    "keepalive_interval",
    "shard_count",
]
LANGS = ["python", "go", "rust", "typescript", "java", "kotlin", "scala", "elixir"]
TOPIC_TAGS = [
    "backend",
    "infra",
    "oncall",
    "security",
    "perf",
    "db",
    "frontend",
    "ci",
    "release",
    "observability",
    "cost",
    "compliance",
    "migration",
    "networking",
    "storage",
    "api",
    "testing",
    "docs",
    "mobile",
    "data",
    "ml",
    "queue",
    "cache",
    "auth",
    "billing",
]
PROJECTS = [
    "atlas",
    "hermes",
    "apollo",
    "zephyr",
    "orion",
    "nova",
    "titan",
    "vega",
    "lyra",
    "draco",
    "phoenix",
    "juno",
    "helix",
    "quasar",
    "pulsar",
]
MODULES = ["handlers", "models", "jobs", "clients", "middleware", "schemas", "utils", "adapters", "routes"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
CHANGES = [
    "the {ds} upgrade",
    "the config rollout",
    "the {tool} bump to {version}",
    "the node pool resize",
    "the schema migration",
    "the TLS certificate rotation",
    "the load balancer swap",
    "the feature flag flip",
    "the dependency refresh",
    "the region failover drill",
]
FAILURES = [
    "started dropping requests",
    "crashed in a loop",
    "leaked connections",
    "returned stale data",
    "stopped consuming",
    "saturated its CPU",
    "hit its memory limit",
    "timed out on every call",
    "double-charged a few customers",
    "lost its leader",
    "filled the disk",
]


@dataclass
class Memory:
    kind: str
    headline: str
    body: str
    project: str
    tags: list[str]
    category: str
    severity: str | None = None
    status: str | None = None
    priority: int | None = None
    error_message: str | None = None
    what_was_wrong: str | None = None
    what_is_correct: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def remember_args(self) -> dict[str, Any]:
        """Named arguments of brain.remember."""
        args: dict[str, Any] = {
            "kind": self.kind,
            "headline": self.headline,
            "body": self.body,
            "project": self.project,
            "tags": self.tags,
            "category": self.category,
        }
        for name in ("severity", "status", "priority", "error_message", "what_was_wrong", "what_is_correct"):
            if getattr(self, name) is not None:
                args[name] = getattr(self, name)
        return args

    def embedding_input(self) -> str:
        """What brain.embedding_input returns for an authored memory (headline, blank line, body)."""
        return f"{self.headline}\n\n{self.body}" if self.body else self.headline


class Generator:
    """Deterministic stream of memories and queries."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.services = [f"{p}-{s}" for p in SERVICE_PREFIXES for s in SERVICE_SUFFIXES]
        self.hosts = [f"{role}-{env}-{n:02d}" for role in HOST_ROLES for env in ENVS for n in range(1, 31)]
        self._project_weights = [1.0 / (i + 1) ** 0.8 for i in range(len(PROJECTS))]

    # --- vocabulary draws ---------------------------------------------------

    def svc(self) -> str:
        # Zipf-ish: some services come up far more often than others.
        return self.services[
            min(int(self.r.paretovariate(0.9)) - 1, len(self.services) - 1)
            if self.r.random() < 0.3
            else self.r.randrange(len(self.services))
        ]

    def host(self) -> str:
        return self.r.choice(self.hosts)

    def person(self) -> str:
        return self.r.choice(PEOPLE)

    def tool(self) -> str:
        return self.r.choice(TOOLS)

    def ds(self) -> str:
        return self.r.choice(DATASTORES)

    def err(self) -> str:
        return self.r.choice(ERRORS)

    def version(self) -> str:
        return f"{self.r.randint(0, 9)}.{self.r.randint(0, 30)}.{self.r.randint(0, 20)}"

    def num(self, low: int = 2, high: int = 500) -> int:
        return self.r.randint(low, high)

    def path(self, service: str) -> str:
        return self.r.choice(
            [
                f"/etc/{service}/config.yaml",
                f"src/{service.replace('-', '_')}/{self.r.choice(MODULES)}.py",
                f"deploy/{service}/values.yaml",
                f"infra/{service}/main.tf",
                f"cmd/{service}/main.go",
            ]
        )

    def project(self) -> str:
        if self.r.random() < 0.25:
            return ""
        return self.r.choices(PROJECTS, weights=self._project_weights)[0]

    def values(self, service: str | None = None) -> dict[str, Any]:
        """One draw of every placeholder; a memory's sentences share it, so they agree."""
        service = service or self.svc()
        values: dict[str, Any] = {
            "svc": service,
            "svc2": self.svc(),
            "host": self.host(),
            "host2": self.host(),
            "person": self.person(),
            "person2": self.person(),
            "tool": self.tool(),
            "tool2": self.tool(),
            "ds": self.ds(),
            "err": self.err(),
            "version": self.version(),
            "n": self.num(),
            "n2": self.num(1, 60),
            "pct": self.num(1, 99),
            "hour": self.num(0, 23),
            "key": self.r.choice(CONFIG_KEYS),
            "env": self.r.choice(ENVS),
            "path": self.path(service),
            "lang": self.r.choice(LANGS),
            "day": self.r.choice(WEEKDAYS),
            "topic": self.r.choice(TOPIC_TAGS),
            "failure": self.r.choice(FAILURES),
        }
        values["change"] = self.r.choice(CHANGES).format(**values)
        return values

    def fill(self, template: str, values: dict[str, Any] | None = None) -> str:
        return template.format(**(values or self.values()))

    # --- memories -----------------------------------------------------------

    def memory(self) -> Memory:
        x = self.r.random()
        kind = "fact" if x < 0.70 else "rule" if x < 0.80 else "incident" if x < 0.92 else "task"
        values = self.values()
        headline_t, body_t = self.r.choice(TEMPLATES[kind])
        headline = self.fill(headline_t, values)
        sentences = [self.fill(body_t, values)]
        for extra in self.r.sample(BODY_EXTRA, self.r.choice([0, 1, 1, 2, 2, 3])):
            sentences.append(self.fill(extra, values))
        body = " ".join(sentences)
        tags = self.r.sample(TOPIC_TAGS, self.r.choice([1, 1, 2]))
        if self.r.random() < 0.15:
            body += f" #{self.r.choice(TOPIC_TAGS)}"
        tags.append(f"comp-{self.r.randrange(100):02d}")
        m = Memory(
            kind=kind,
            headline=headline,
            body=body,
            project=self.project(),
            tags=tags,
            category=self.r.choice(CATEGORIES[kind]),
        )
        if kind == "rule":
            m.severity = "BLOCKER" if self.r.random() < 0.3 else "PATTERN"
        elif kind == "task":
            m.status = self.r.choice(["open", "open", "open", "blocked", "done"])
            m.priority = self.r.randint(1, 5)
        elif kind == "incident" and self.r.random() < 0.7:
            m.error_message = self.err()
            m.what_was_wrong = self.fill("We assumed {ds} would retry on {err}.", values)
            m.what_is_correct = self.fill("Retry in {svc} itself with backoff, at most {n2} times.", values)
        return m

    def memories(self, n: int) -> list[Memory]:
        return [self.memory() for _ in range(n)]

    def near_duplicate(self, m: Memory) -> Memory:
        """A rewording of m: a changed number, a swapped word, or an added sentence."""
        how = self.r.random()
        headline, body = m.headline, m.body
        if how < 0.25:
            headline = headline.lower()  # exact duplicate after normalization
        elif how < 0.6:
            words = body.split()
            i = self.r.randrange(len(words))
            words[i] = (
                str(self.num()) if self.r.random() < 0.5 else self.r.choice(["roughly", "now", "still"])
            )
            body = " ".join(words)
        else:
            body = body + " " + self.fill(self.r.choice(BODY_EXTRA))
        return Memory(**{**m.__dict__, "headline": headline, "body": body, "tags": list(m.tags)})

    # --- queries ------------------------------------------------------------

    def query(self) -> str:
        return self.fill(self.r.choice(QUERIES))

    def queries(self, n: int) -> list[str]:
        return [self.query() for _ in range(n)]


CATEGORIES = {
    "fact": ["note", "note", "reference", "decision", "insight", "person"],
    "rule": ["procedural", "gotcha", "decision"],
    "incident": ["learning", "gotcha", "episodic"],
    "task": ["action", "feature_request"],
}

TEMPLATES = {
    "fact": [
        ("{svc} reads its config from {path}", "The {key} setting there is {n} on {env}."),
        ("{svc} p99 latency is {n} ms under normal load", "Measured with {tool} against {host} on {day}."),
        ("{host} runs {svc} behind {tool}", "It also hosts a {ds} sidecar for local caching."),
        ("The {env} {ds} cluster for {svc} has {n2} replicas", "@{person} resized it after {change}."),
        ("@{person} owns the {svc} on-call rotation", "Escalate to @{person2} when @{person} is away."),
        ("{tool} {version} is pinned in the {svc} repository", "Newer versions break the {lang} build."),
        ("{svc} retries {n2} times with exponential backoff", "The cap is {n} ms between attempts."),
        ("Deploys of {svc} go through {tool}", "A deploy takes about {n2} minutes end to end."),
        ("{svc} stores sessions in {ds}", "Keys expire after {n} seconds; {key} is {n2}."),
        ("{svc} is written in {lang}", "The hot path lives in {path}."),
        ("{svc} publishes events to {ds}", "Consumers include {svc2} and the {topic} pipeline."),
        ("The {key} of {svc} is {n} in {env}", "It was raised from {n2} after {change}."),
        ("{svc} depends on {svc2} for {topic}", "Calls time out after {n} ms and fall back to a cache."),
        (
            "Backups of the {svc} {ds} run nightly at {hour}:00 UTC",
            "Restores were tested by @{person} on {day}.",
        ),
        ("{svc} dashboards live in {tool}", "The {topic} panel shows {key} per host."),
    ],
    "rule": [
        ("Never restart {svc} on {env} without paging @{person}", "It drops in-flight jobs; drain it first."),
        ("Always run {tool} before merging changes to {svc}", "CI runs it too, but {n2} minutes later."),
        ("Use {tool} instead of {tool2} for {svc} deploys", "{tool2} skips the {topic} checks."),
        ("Do not raise {key} on {svc} above {n}", "Beyond that the {ds} primary runs out of connections."),
        ("Rotate {svc} credentials through vault, never by hand", "Manual rotation caused {err} before."),
        ("Schema changes to {svc} need a two-step migration", "Add the column, backfill, then switch reads."),
        (
            "Keep {svc} feature flags in {tool}, not in code",
            "Flags in code cannot be flipped during an incident.",
        ),
        ("Tag every {svc} release with its {tool} version", "Rollbacks need to know which build to restore."),
    ],
    "incident": [
        ("{svc} {failure} after {change}", "The logs on {host} showed {err}."),
        ("{svc} returned {err} for {n2} minutes", "Root cause was {change}; @{person} rolled it back."),
        ("{ds} on {host} {failure}", "{svc} and {svc2} were degraded until failover."),
        (
            "Deploy of {svc} {version} failed with {err}",
            "The {tool} step ran against the wrong {env} context.",
        ),
        (
            "{svc} queue backlog reached {n} thousand messages",
            "{svc2} {failure}; consumers were scaled to {n2}.",
        ),
    ],
    "task": [
        ("Upgrade {svc} to {tool} {version}", "Blocked on the {lang} toolchain; ask @{person}."),
        ("Investigate {err} in {svc}", "Seen {n2} times this week on {host}."),
        ("Move {svc} off {ds}", "Target is {tool} by the end of the quarter."),
        ("Add alerts for {key} on {svc}", "Page when it stays above {n} for {n2} minutes."),
        ("Document the {svc} failover runbook", "Cover {env} and the {ds} replica promotion."),
    ],
}

BODY_EXTRA = [
    "See {path} for details.",
    "Confirmed by @{person} on {day}.",
    "This changed in {version}.",
    "The {env} environment differs: {key} is {n2} there.",
    "{svc2} is affected the same way.",
    "Monitoring in {tool} covers it.",
    "Expect {err} if this is ignored.",
    "The runbook is owned by @{person}.",
    "Related ticket was filed by @{person2}.",
    "It affects roughly {pct}% of {topic} traffic.",
    "Load tests with {tool} reached {n} requests per second.",
    "Costs went up by {pct}% because of it.",
]

QUERIES = [
    "{svc} latency",
    "who owns {svc}",
    "{err} in {svc}",
    "how do we deploy {svc}",
    "{tool} version pinned",
    "{host}",
    "{svc} config {key}",
    "why did {svc} fail after {change}",
    "which services depend on {svc2}",
    "{ds} replicas for {svc}",
    "restart {svc} on {env}",
    "{svc} retries backoff",
    "{key} limit",
    "on-call rotation for {svc}",
    "{err}",
    "backup schedule of {ds}",
    "migration rules for {svc}",
    "{svc} dashboards in {tool}",
    "what is {svc} written in",
    "alerts for {key}",
    "{svc} queue backlog",
    "{tool} vs {tool2}",
    "incident with {ds} on {host}",
    "credentials rotation",
    "feature flags for {svc}",
    "{svc} {failure}",
    "open tasks for {svc}",
    "failover runbook",
    "{lang} build broken by {tool}",
]
