"""The Python client: each method is one call of a brain.* SQL function.

The only work done here that SQL cannot do is computing embeddings. Every
rule about memories (gate, dedup, supersede, banners) is in sql/functions/.
"""

from __future__ import annotations

import copy
import functools
import logging
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from pybrain import db, words
from pybrain.config import Settings
from pybrain.connector import ConnectionConnector, Connector, PoolConnector, Principal, Scope
from pybrain.embed import Embedder, get_embedder
from pybrain.errors import (
    BrainError,
    ConcurrentDuplicate,
    DatabaseUnavailable,
    EmbedderError,
    EmbeddingRefused,
    InvalidArgument,
    InvalidEmbedding,
)

if TYPE_CHECKING:  # the shapes of results are for readers and type checkers: nothing to import at run time
    from pybrain.results import BootPayload, History, Memory, MemoryBrief, SearchResult, Skill

log = logging.getLogger("pybrain")

# The categories brain.remember takes (its gate checks them: BR009); clients use the
# list to shape a tool schema or to fall back to 'note' for a source's own labels.
CATEGORIES = words.CATEGORIES

# How many times Brain.call sends a write that a concurrent near-duplicate beat
# at COMMIT (BR022): the second time it meets that memory like any later write.
RACE_TRIES = 3

# Functions that change nothing a second call would change again. A call whose
# connection is lost before its COMMIT was sent changed nothing (its transaction
# ended with the connection) and is always sent again on a new connection; one
# lost during the COMMIT may or may not have taken effect, and only these, and a
# call with a request_key (answered as the first time when it had: KEYED), are
# sent again then.
IDEMPOTENT = frozenset(
    {
        "active_embedding_space",
        "capturable_turns",
        "embedding_progress",
        "failed_embeddings",
        "hand_off_transcript",
        "health",
        "history",
        "list_active_sessions",
        "list_recent",
        "list_skills",
        "load_skill",
        "metrics",
        "observe_transcript",
        "pending_action_items",
        "pending_embeddings",
        "prompt_context",
        "recent_errors",
        "repository_project",
        "scratch_get",
        "scratch_list",
        "search",
        "stale",
        "stats",
        "transcript_handoff",
        "unfiled_folders",
    }
)

# The writes that would apply twice when sent again, and take a request_key
# (docs/sql-api.md, "Requests sent again"): sent again with the same key, such a
# call is answered with the first call's answer and changes nothing. Their methods
# make a key for each call that names none, so that Brain.call may send the call
# again after a connection lost during its COMMIT.
KEYED = frozenset({"rate", "annotate", "create_action_item"})


def new_request_key() -> str:
    """A new request key: a random UUID."""
    return str(uuid.uuid4())


# Functions a streaming replica serves: they write nothing (docs/scaling.md, "Read
# replicas"). With a reader (Brain.reader; `brain serve
# --read-database-url`) they run there; everything else runs on the primary. A recall
# and a session start are split into their reads and their writes (Brain.recall,
# Brain.boot_session).
REPLICA_READS = frozenset(
    {
        "search",
        "list_recent",
        "stale",
        "stats",
        "history",
        "list_skills",
        "metrics",
        "boot_payload",
        "recall_view",
    }
)

# How long a read waits for the replica to replay this Brain's latest write before it
# runs on the primary instead (a session reads its own writes).
READ_WAIT = 1.0
READER_PAUSE = 5.0  # seconds reads stay on the primary after the replica failed one
UNKNOWN_LSN = "unknown"  # a write's position could not be read: reads go to the primary
# Writes a session need not read back, which would make its next read wait for them:
# telemetry (tool events; the injections a search or prompt showed and their uses), and
# the counts of what a replica served (a recall, a boot payload).
UNNOTED_WRITES = frozenset(
    {"record_tool_event", "record_injection", "note_use", "count_recall", "record_boot"}
)


@dataclass(frozen=True)
class WriteResult:
    action: str  # created | updated | skipped | valid
    memory_id: int | None
    duplicate_of: int | None
    similarity: float | None
    embedding_pending: bool | None
    embedding_input: str | None
    # Set when the embedder failed and the write was queued instead.
    embedder_error: str | None = None
    # A memory this one may contradict or replace (brain.related_memory): id, headline,
    # similarity, created_at, terms {this, that} and a hint to supersede it.
    related: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Space:
    space_id: int
    provider: str
    model: str
    dims: int
    near_identical: float
    related: float
    state: str

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"


# The arguments of the SQL API that are times. A text sent for one is read
# here, so that a value PostgreSQL cannot parse is refused naming the argument,
# and never reaches the server, whose error (and log line) would quote it.
TIME_ARGUMENTS = frozenset(
    {
        "as_of",
        "created_after",
        "created_before",
        "dormant_after",
        "due_at",
        "expires_at",
        "last_touch",
        "now",
        "pid_started_at",
        "started_at",
    }
)


# The types of each SQL function's arguments, read once per process. A text
# sent for an argument of another type (a number, a boolean, an interval, JSON)
# is checked by the server with pg_input_is_valid (PostgreSQL 16 and later),
# which never raises, before the call: PostgreSQL's own error for a value it
# cannot parse quotes the value, in the reply and in the server's log.
_ARGUMENT_TYPES: dict[str, dict[str, str]] = {}
_TEXT_TYPES = frozenset({"text", "character varying", "name"})


def _argument_types(cur: psycopg.Cursor, function: str) -> dict[str, str]:
    if function not in _ARGUMENT_TYPES:
        cur.execute(
            "SELECT a.name, format_type(a.typ, NULL) AS type"
            " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,"
            " unnest(p.proargnames, coalesce(p.proallargtypes, p.proargtypes::oid[]),"
            "        coalesce(p.proargmodes, array_fill('i'::\"char\", ARRAY[p.pronargs::integer])))"
            "   AS a(name, typ, mode)"
            " WHERE n.nspname = 'brain' AND p.proname = %s AND a.mode IN ('i', 'b', 'v')",
            (function,),
        )
        types: dict[str, str] = {}
        for row in cur.fetchall():
            # an argument of two overloads with two types is left to the server
            types[row["name"]] = row["type"] if types.get(row["name"], row["type"]) == row["type"] else "text"
        _ARGUMENT_TYPES[function] = types
    return _ARGUMENT_TYPES[function]


def _check_types(cur: psycopg.Cursor, function: str, args: dict[str, Any]) -> None:
    texts = {k: v for k, v in args.items() if isinstance(v, str)}
    if not texts or cur.connection.info.server_version < 160000:
        return
    types = _argument_types(cur, function)
    for name, value in texts.items():
        kind = types.get(name)
        if kind is None or kind in _TEXT_TYPES:
            continue
        cur.execute("SELECT pg_input_is_valid(%s, %s) AS ok", (value, kind))
        if not cur.fetchone()["ok"]:
            raise InvalidArgument(
                f"{name} must be a valid {kind}.",
                detail={"field": name, "expected": kind},
                hint="Send a value of the argument's type (docs/sql-api.md).",
            )


def _checked(name: str, value: Any) -> Any:
    """An argument as sent: a time given as text is parsed (ISO 8601), else BR009 naming it."""
    if name in TIME_ARGUMENTS and isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidArgument(
                f"{name} must be a time in ISO 8601, such as 2026-03-02 or 2026-03-02T09:00:00+00:00.",
                detail={"field": name, "expected": "ISO 8601 time"},
                hint="Send the date, or the date and time with its UTC offset.",
            ) from None
    return value


class Brain:
    """pybrain's schema in one workspace: each method one call of a brain.* SQL function.

    Every call is a transaction its connector opens in the Brain's scope (scope()).
    Brain(conn) uses one connection of its own and connects again after a server
    restart; Brain(connector=PoolConnector(pool), principal=...) takes a pooled
    connection for each call and runs it as the principal (pybrain.connector).
    """

    def __init__(
        self,
        conn: psycopg.Connection | None = None,
        *,
        workspace: int | None = None,
        embedder: Embedder | None = None,
        embedder_spec: str | None = None,
        actor: str | None = None,
        conninfo: str | None = None,
        connector: Connector | None = None,
        principal: Principal | None = None,
        via: str | None = None,
    ) -> None:
        if connector is None:
            if conn is None:
                raise TypeError("Brain needs a connection or a connector")
            connector = ConnectionConnector(conn, conninfo)
        self.connector = connector
        self.workspace = workspace
        self._embedder = embedder
        self._embedder_spec = embedder_spec
        self.actor = actor
        # Whom every call runs as (a token's role, workspace and access ceiling); None: the
        # connection's own role in `workspace`.
        self.principal = principal
        # How a remote client reaches this Brain (`brain serve`: "http"): its process and
        # folder are on its own machine, so a boot records neither (boot_session).
        self.via = via
        # The session this Brain's calls belong to (brain.session): injections and the
        # later uses of what they showed are counted for it.
        self.session: int | None = None
        # The statement_timeout of every call's transaction (SET LOCAL); None: the role's.
        self.statement_timeout: str | None = None
        # Where the reads in REPLICA_READS run (a streaming replica's connector), and the
        # primary's WAL position after this Brain's latest write: a read on the replica
        # waits (up to read_wait) until the replica has replayed it, else runs on the primary.
        self.reader: Connector | None = None
        self.read_wait = READ_WAIT
        self.written_lsn: str | None = None
        self.reads = {"replica": 0, "primary": 0}
        self._reader_down_until = 0.0  # after a replica that could not be reached
        # On the installer's connection (a superuser, or a role in brain_owner: run_as_owner),
        # every call of a function in schema brain runs as brain_owner (db.owner_rows).
        self.as_owner = False
        self._behind: str | None = None  # the write a read last waited for in vain

    @classmethod
    def open(cls, settings: Settings | None = None, *, actor: str | None = None) -> Brain:
        """Connect as configured, starting the embedded database and migrating when needed."""
        settings = settings or Settings.from_env()
        url = db.database_url(settings)
        conn = db.connect(url)
        brain = cls(
            conn, workspace=settings.workspace, embedder_spec=settings.embedder, actor=actor, conninfo=url
        )
        if not db.is_current(conn):
            # First use without `brain init`, or a new pybrain on an older schema:
            # the owner migrates (on the embedded server, then connect as the application role).
            admin_url = db.admin_url(settings)
            with db.connect(admin_url) as admin:
                db.migrate(admin)
                owner = cls(
                    admin, workspace=settings.workspace, embedder_spec=settings.embedder
                ).run_as_owner()
                if owner.active_space() is None:
                    owner.use_embedding_space(owner.configured_embedder())
                if not settings.database_url:
                    db.ensure_app_role(admin, settings.home, settings.workspace)
            if db.database_url(settings) != url:
                conn.close()
                url = db.database_url(settings)
                conn = db.connect(url)
                brain = cls(
                    conn,
                    workspace=settings.workspace,
                    embedder_spec=settings.embedder,
                    actor=actor,
                    conninfo=url,
                )
        if settings.read_database_url:
            brain.use_reader(settings.read_database_url)
        return brain

    def use_reader(self, url: str) -> None:
        """Send the reads a replica serves (REPLICA_READS) to the replica at url, as this
        Brain's role; an unreachable replica leaves every call on the primary."""
        try:
            self.reader = ConnectionConnector(db.connect(url, connect_timeout=2), url)
            self.reader.reconnect_wait = 0  # one try: the primary answers meanwhile
        except BrainError as exc:
            log.warning("the replica is not reachable, reads run on the primary: %s", exc.message)

    @property
    def embedder(self) -> Embedder:
        """The embedder of the workspace's active space; the configured one before any exists.

        Writes and searches must use the active space's model, so the database,
        not the environment, decides once a space is active.
        """
        if self._embedder is None:
            space = self.active_space()
            self._embedder = get_embedder(space.name if space else self._embedder_spec)
        return self._embedder

    def embedding_with(self, embedder: Embedder) -> Brain:
        """This Brain with another embedder: the same connection, workspace, actor, principal,
        session and statement timeout (a hook's capture embeds with what a hook may use,
        within the hook's time)."""
        other = copy.copy(self)
        other._embedder = embedder
        return other

    def configured_embedder(self) -> Embedder:
        """The embedder BRAIN_EMBEDDER (or the default) names."""
        return get_embedder(self._embedder_spec)

    @property
    def conn(self) -> Any:
        """The connection of the last call (for a pooled Brain, what stands for the pool)."""
        return self.connector.conn

    def close(self) -> None:
        """Close the connection and the reader's (a pooled Brain leaves the pools open)."""
        self.connector.close()
        if self.reader is not None:
            self.reader.close()

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing ----------------------------------------------------------

    def connection(self) -> Any:
        """The open connection; a new one when the server closed the last (a restart).

        Reconnecting waits for the server up to BRAIN_DB_RECONNECT_WAIT seconds.
        """
        return self.connector.connection()

    def new_connection(self) -> psycopg.Connection:
        """Another autocommit connection to the same database (e.g. to LISTEN on)."""
        return self.connector.new_connection()

    def scope(self) -> Scope:
        """What every call of this Brain runs as: its principal's role, workspace and access
        ceiling when it has one, else its workspace; and its actor and session."""
        own = {"actor": self.actor, "session": self.session, "statement_timeout": self.statement_timeout}
        if self.principal is not None:
            return Scope.of(self.principal, **own)
        return Scope(workspace=self.workspace, **own)

    def transaction(
        self, *, isolation: psycopg.IsolationLevel | None = None, read_only: bool = False
    ) -> AbstractContextManager[psycopg.Cursor[Any]]:
        """A transaction in this Brain's scope, with a cursor of dict rows (see scope)."""
        return self.connector.transaction(self.scope(), isolation=isolation, read_only=read_only)

    def call(self, function: str, **kwargs: Any) -> list[dict[str, Any]]:
        """SELECT * FROM brain.<function>(name => value, ...) with the arguments that are set.

        A connection the server closed (a restart) is replaced and the call sent
        again, once: always when it was lost before the COMMIT was sent (nothing
        was changed), and for the functions in IDEMPOTENT and a call with a
        request_key also when it was lost during the COMMIT. A write that a
        concurrent near-duplicate beat at its COMMIT (BR022: nothing was stored)
        is sent again, up to RACE_TRIES times.
        """
        args = {k: _checked(k, v) for k, v in kwargs.items() if v is not None}
        query = sql.SQL("SELECT * FROM brain.{}({})").format(
            sql.Identifier(function),
            sql.SQL(", ").join(
                sql.SQL("{} => {}").format(sql.Identifier(k), sql.Placeholder(k)) for k in args
            ),
        )
        if self.reader is not None and function in REPLICA_READS:
            if self.written_lsn != UNKNOWN_LSN and time.monotonic() >= self._reader_down_until:
                rows = self._on_replica(function, query, args)
                if rows is not None:
                    self.reads["replica"] += 1
                    return rows
            self.reads["primary"] += 1
        attempt, races = 1, 0
        cut_committing = False  # the first attempt was lost while its COMMIT was under way
        while True:
            committing = False
            conn = self.connection()
            try:
                with self.transaction() as cur:
                    rows = self._run(cur, function, query, args)
                    # With a reader: did the call write (a transaction id is assigned only then)?
                    wrote = (
                        self.reader is not None
                        and function not in UNNOTED_WRITES
                        and (
                            cur.execute(
                                "SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote"
                            ).fetchone()["wrote"]
                        )
                    )
                    committing = True  # leaving the block sends COMMIT
                if wrote:
                    self._note_write()
                return rows
            except ConcurrentDuplicate:
                # Beaten at COMMIT by a concurrent near-duplicate: nothing was stored, and
                # sent again the write meets it as any later write does (docs/errors.md).
                races += 1
                if races < RACE_TRIES:
                    continue
                raise
            except BrainError as exc:
                # A pooled connection is lost when the server closed it under the call (its
                # cause is the driver's), and, sent again, when the pool finds no server.
                lost = conn.closed or (
                    isinstance(self.connector, PoolConnector)
                    and isinstance(exc, DatabaseUnavailable)
                    and (attempt == 2 or isinstance(exc.__cause__, psycopg.OperationalError))
                )
                if not lost or self.connector.closed:
                    raise
                if attempt == 1 and (not committing or function in IDEMPOTENT or "request_key" in args):
                    attempt, cut_committing = 2, committing
                    continue
                if not committing and not cut_committing:
                    raise DatabaseUnavailable(
                        f"The database connection was lost twice during brain.{function}; "
                        f"nothing was changed ({exc.message}).",
                        hint="Check that the server is running; the next call reconnects.",
                    ) from exc
                raise DatabaseUnavailable(
                    f"The database connection was lost while brain.{function} committed: it may or "
                    f"may not have taken effect ({exc.message}).",
                    hint="Send it again with the same request_key: it is answered as the first time "
                    "if it took effect, and done once if not."
                    if "request_key" in args
                    else "Check the result (search, recall, stats) before you send it again; "
                    "the next call reconnects.",
                ) from exc

    def _run(
        self, cur: psycopg.Cursor[Any], function: str, query: sql.Composable | str, args: Any
    ) -> list[dict[str, Any]]:
        """The rows of a call of brain.<function> in the transaction of cur: as brain_owner
        behind the door on the installer's connection (as_owner: each column's JSON value;
        the server checks the arguments' types), as the connection's role otherwise."""
        if self.as_owner:
            return db.owner_rows(cur.connection, query, args)
        if isinstance(args, dict):
            _check_types(cur, function, args)
        cur.execute(query, args)
        return cur.fetchall() if cur.description else []

    def run_as_owner(self) -> Brain:
        """Make every call of this Brain run as brain_owner when its connection is the
        installer's (db.runs_as_installer): nothing brain_owner could have planted in schema
        brain then runs with the installer's rights (docs/security.md). Returns self."""
        self.as_owner = db.runs_as_installer(self.connection())
        return self

    def _note_write(self) -> None:
        """Remember the primary's WAL position after a committed call (past its commit)."""
        try:
            with self.connector.transaction(Scope(token_id=self.scope().token_id)) as cur:
                self.written_lsn = cur.execute("SELECT pg_current_wal_lsn()::text AS lsn").fetchone()["lsn"]
        except BrainError as exc:
            # Not known: the next reads go to the primary until a write is noted again.
            self.written_lsn = UNKNOWN_LSN
            log.warning("the primary's WAL position after a write is unknown: %s", exc.message)

    def _on_replica(
        self, function: str, query: sql.Composable, args: dict[str, Any]
    ) -> list[dict[str, Any]] | None:
        """The call run on the reader, once it has replayed this Brain's latest write; None
        when it does not within read_wait or cannot be reached (the primary answers then)."""
        assert self.reader is not None
        # Once a read waited read_wait in vain for this write, the next ones only look: a
        # replica that lags costs a writing session one wait a write, not one a read.
        deadline = time.monotonic() + (0 if self._behind == self.written_lsn else self.read_wait)
        try:
            with self.reader.transaction(self.scope(), read_only=True) as cur:
                while self.written_lsn is not None:
                    caught_up = cur.execute(
                        "SELECT NOT pg_is_in_recovery() OR pg_last_wal_replay_lsn() >= %s::pg_lsn AS ok",
                        [self.written_lsn],
                    ).fetchone()["ok"]
                    if caught_up:
                        self._behind = None
                        break
                    if time.monotonic() > deadline:
                        self._behind = self.written_lsn
                        return None
                    time.sleep(0.005)
                _check_types(cur, function, args)
                cur.execute(query, args)
                return cur.fetchall() if cur.description else []
        except DatabaseUnavailable as exc:
            # the primary serves the reads for a while before the replica is tried again
            self._reader_down_until = time.monotonic() + READER_PAUSE
            log.warning("the replica is not reachable, reads run on the primary: %s", exc.message)
            return None

    def value(self, function: str, **kwargs: Any) -> Any:
        """The single value a scalar brain.* function returns."""
        rows = self.call(function, **kwargs)
        return next(iter(rows[0].values())) if rows else None

    # --- embedding spaces --------------------------------------------------

    def use_embedding_space(self, embedder: Embedder | None = None) -> Space:
        e = embedder or self.embedder
        (row,) = self.call("use_embedding_space", provider=e.provider, model=e.model, dims=e.dims)
        return _space(row)

    def active_space(self) -> Space | None:
        (row,) = self.call("active_embedding_space")
        return _space(row) if row["space_id"] is not None else None

    # --- writes ------------------------------------------------------------

    def _embed_or_queue(self, text: str) -> tuple[list[float] | None, str | None]:
        """An embedding for text, or (None, why) when the provider failed: the write is queued."""
        try:
            return self.embedder.embed_one(text), None
        except EmbedderError as exc:
            log.warning("embedding failed, the write is queued for `brain worker`: %s", exc)
            return None, exc.message

    def _write(self, function: str, **kwargs: Any) -> WriteResult:
        # First the gate alone, so nothing invalid (or secret) reaches an embedder.
        (checked,) = self.call(function, check_only=True, **kwargs)
        vector, error = self._embed_or_queue(checked["embedding_input"])
        space = self.embedder.space if vector is not None else None
        (row,) = self.call(function, embedding=vector, embedding_space=space, **kwargs)
        return WriteResult(**row, embedder_error=error)

    def remember(self, kind: str, headline: str, **kwargs: Any) -> WriteResult:
        """Store a memory through the write gate (brain.remember). A new memory whose nearest
        of its kind and project differs from it in distinguishing terms only (a number, a
        version, a name) is stored and reports that memory as `related`."""
        out = self._write("remember", kind=kind, headline=headline, **_json_args(kwargs))
        if out.action == "created" and not out.embedding_pending and out.memory_id is not None:
            try:
                related = self.value("related_memory", memory_id=out.memory_id)
            except DatabaseUnavailable as exc:
                # The memory is stored: a lookup lost with the database does not make the
                # write look failed (sent again, it would only meet itself).
                log.warning("the related memory of #%s is not known: %s", out.memory_id, exc.message)
                related = None
            if related is not None:
                out = replace(out, related=related)
        return out

    def supersede(self, old_id: int, headline: str, reason: str, **kwargs: Any) -> WriteResult:
        """Replace a belief (brain.supersede)."""
        return self._write("supersede", old_id=old_id, headline=headline, reason=reason, **_json_args(kwargs))

    def unsupersede(self, memory_id: int, source: str | None = None) -> int:
        return self.value("unsupersede", id=memory_id, source=source)

    def forget(
        self, memory_id: int, reason: str, replaced_by: int | None = None, source: str | None = None
    ) -> int:
        return self.value("forget", id=memory_id, reason=reason, replaced_by=replaced_by, source=source)

    def recall(self, memory_id: int) -> Memory:
        """The whole memory, its access counted (brain.recall). With a reader, the memory is
        read on the replica (brain.recall_view) and the recall counted on the primary
        (brain.count_recall): the answer shows the memory as it was before this count."""
        if self.reader is None:
            return self.value("recall", id=memory_id)
        memory = self.value("recall_view", id=memory_id)
        self.value("count_recall", id=memory_id)
        return memory

    # --- trajectories, packs, injections -------------------------------------

    def record_trajectory(self, problem: str, steps: Sequence[Any], **kwargs: Any) -> WriteResult:
        """Record how a problem was solved (brain.record_trajectory)."""
        return self._write(
            "record_trajectory", problem=problem, steps=Jsonb(list(steps)), **_json_args(kwargs)
        )

    def trajectory_text(self, memory_id: int) -> str | None:
        return self.value("trajectory_text", id=memory_id)

    def list_trajectories(self, **filters: Any) -> list[dict[str, Any]]:
        return self.call("list_trajectories", **filters)

    def create_pack(self, name: str, **kwargs: Any) -> dict[str, Any]:
        """Define a context pack (brain.create_pack), with the embedding of its query or description."""
        kwargs = _json_args(kwargs)
        checked = self.value("create_pack", name=name, check_only=True, **kwargs)
        vector, _ = self._embed_or_queue(checked["embedding_input"])
        return self.value(
            "create_pack",
            name=name,
            embedding=vector,
            embedding_space=self.embedder.space if vector is not None else None,
            **kwargs,
        )

    def render_pack(self, name: str, token_budget: int | None = None) -> dict[str, Any]:
        return self.value("render_pack", name=name, token_budget=token_budget, record=False)

    def load_pack(
        self, name: str, token_budget: int | None = None, session: int | None = None
    ) -> dict[str, Any]:
        return self.value("load_pack", name=name, token_budget=token_budget, session=session)

    def list_packs(self, project: str | None = None) -> list[dict[str, Any]]:
        return self.call("list_packs", project=project)

    def drop_pack(self, name: str, source: str | None = None) -> dict[str, Any]:
        return self.value("drop_pack", name=name, source=source)

    def record_injection(
        self,
        trigger: str,
        items: Sequence[int],
        tokens: int,
        truncated: bool = False,
        session: int | None = None,
    ) -> int:
        return self.value(
            "record_injection",
            trigger=trigger,
            items=list(items),
            tokens=tokens,
            truncated=truncated,
            session=session,
        )

    def injection_metrics(
        self, group_by: str = "trigger", window: str = "24 hours", session: int | None = None
    ) -> list[dict[str, Any]]:
        return self.call("injection_metrics", group_by=group_by, window_size=window, session=session)

    def note_use(self, memory_ids: Sequence[int], how: str = "cite", session: int | None = None) -> int:
        return self.value("note_use", memory_ids=list(memory_ids), how=how, session=session)

    # --- reads ---------------------------------------------------------------

    def search(self, query: str, **filters: Any) -> list[SearchResult]:
        """Hybrid search (brain.search); lexical only when the embedder fails."""
        vector = None
        if query.strip():
            # The database clears the query before any provider sees it (BR007 names the secret's kind).
            self.value("check_text", text=query, field="query")
            try:
                vector = self.embedder.embed_one(query)
            except EmbedderError as exc:
                log.warning("embedding the query failed, searching by words only: %s", exc)
        rows = self.call(
            "search",
            query=query,
            query_embedding=vector,
            embedding_space=self.embedder.space if vector is not None else None,
            **filters,
        )
        return cast("list[SearchResult]", rows)

    def list_recent(self, **filters: Any) -> list[MemoryBrief]:
        return cast("list[MemoryBrief]", self.call("list_recent", **filters))

    def stale(
        self, project: str | None = None, change: int | None = None, max_results: int = 50
    ) -> list[dict[str, Any]]:
        """What supersedes left to review (brain.stale): the active memories that state a
        superseded memory's old value, with the values, the superseded memory and its change."""
        return self.call("stale", project=project, change=change, max_results=max_results)

    def load_skill(self, name: str, project: str | None = None) -> dict[str, Any]:
        return self.value("load_skill", name=name, project=project)

    def list_skills(self, project: str | None = None) -> list[Skill]:
        return cast("list[Skill]", self.call("list_skills", project=project))

    def stats(self) -> dict[str, Any]:
        return self.value("stats")

    # --- curation ----------------------------------------------------------

    def rate(
        self, memory_id: int, direction: str, source: str | None = None, *, request_key: str | None = None
    ) -> dict[str, Any]:
        """Count a rating (brain.rate). request_key: the same call sent again with it (after
        an answer that was lost) is answered as the first time and counts nothing; without
        one, this call makes its own (so that it is sent again safely after a connection
        lost during its COMMIT), and a call of yours sent again counts again."""
        return self.value(
            "rate",
            id=memory_id,
            direction=direction,
            source=source,
            request_key=request_key or new_request_key(),
        )

    def annotate(
        self, memory_id: int, note: str, source: str | None = None, *, request_key: str | None = None
    ) -> int:
        """Attach a note (brain.annotate); request_key as for rate."""
        return self.value(
            "annotate", id=memory_id, note=note, source=source, request_key=request_key or new_request_key()
        )

    def pin(self, memory_id: int, source: str | None = None) -> bool:
        return self.value("pin", id=memory_id, source=source)

    def unpin(self, memory_id: int, source: str | None = None) -> bool:
        return self.value("unpin", id=memory_id, source=source)

    def confirm(self, memory_id: int, source: str | None = None) -> dict[str, Any]:
        return self.value("confirm", id=memory_id, source=source)

    # --- lifecycle ---------------------------------------------------------

    def update_task(self, memory_id: int, status: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return self.value("update_task", id=memory_id, status=status, **kwargs)

    def archive(self, memory_id: int, reason: str, source: str | None = None) -> int:
        return self.value("archive", id=memory_id, reason=reason, source=source)

    def restore(self, memory_id: int, source: str | None = None) -> int:
        return self.value("restore", id=memory_id, source=source)

    def history(self, memory_id: int) -> History | None:
        return self.value("history", id=memory_id)

    def maintain(self, *, if_due: bool = False) -> dict[str, Any]:
        return self.value("maintain_if_due" if if_due else "maintain")

    def prune(self, **kwargs: Any) -> list[dict[str, Any]]:
        return self.call("prune", **kwargs)

    def capture(self, text: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Store the decisions, actions, gotchas and insights of a text (brain.capture_context)."""
        return self._embedded_batch("capture_context", text=text, **kwargs)

    def _embedded_batch(
        self, function: str, embeddings: Sequence[Sequence[float]] | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """A batch write in two calls: the database checks the batch and says which texts to
        embed (rows the gate refuses get none), then takes the rows with their embeddings.
        If the embedder fails, the rows are stored and queued for `brain worker`."""
        if embeddings is None:
            checked = self.call(function, check_only=True, **kwargs)
            inputs = [r["embedding_input"] for r in checked if r["action"] == "valid"]
            if inputs:
                try:
                    embeddings = self.embedder.embed(inputs)
                except EmbedderError as exc:
                    log.warning("embedding failed, the rows are queued for `brain worker`: %s", exc)
        if embeddings and len(lengths := sorted({len(v) for v in embeddings})) > 1:
            # A two-dimensional array cannot carry them: nothing is stored.
            raise InvalidEmbedding(
                f"The embeddings differ in length ({', '.join(map(str, lengths))} values).",
                detail={"lengths": lengths},
                hint="Give one embedding of the space's dimension per chunk, in order.",
            )
        return self.call(
            function,
            # binary float8[]: encoding a list of lists costs ten times as long
            embeddings=db.Float8Matrix(embeddings) if embeddings else None,
            embedding_space=self.embedder.space if embeddings else None,
            **kwargs,
        )

    # --- observability -----------------------------------------------------

    @contextmanager
    def tool_call(self, tool: str, channel: str, session: int | None = None) -> Iterator[None]:
        """Time the enclosed work and record it as a tool event, ok or failed."""
        started = datetime.now(UTC)
        clock = time.perf_counter()
        try:
            yield
        except BrainError as exc:
            code = exc.code or type(exc).__name__
            self.record_event(tool, channel, started, clock, session, code, exc.message)
            raise
        self.record_event(tool, channel, started, clock, session)

    def record_event(
        self,
        tool: str,
        channel: str,
        started: datetime,
        clock: float,
        session: int | None = None,
        error_code: str | None = None,
        error: str | None = None,
    ) -> None:
        # Telemetry never hides the outcome it records: a failure to record is only logged.
        if self.conn.closed:
            # The call just failed to reconnect: the database is down, and waiting for it
            # again would only delay the error the caller is about to see.
            log.warning("could not record the %s event: the database connection is lost", tool)
            return
        try:
            self.value(
                "record_tool_event",
                tool=tool,
                started_at=started,
                latency_ms=(time.perf_counter() - clock) * 1000,
                ok=error_code is None,
                channel=channel,
                session=session,
                error_code=error_code,
                error=error,
            )
        except BrainError as exc:
            log.warning("could not record the %s event: %s", tool, exc.message)

    def metrics(self, window: str = "24 hours") -> list[dict[str, Any]]:
        return self.call("metrics", window_size=window)

    def recent_errors(self, max_results: int = 20) -> list[dict[str, Any]]:
        return self.call("recent_errors", max_results=max_results)

    def health(self) -> dict[str, Any]:
        return self.value("health")

    # --- sessions ----------------------------------------------------------

    def boot_session(
        self,
        source: str,
        *,
        project: str = "",
        task: str | None = None,
        cwd: str | None = None,
        pid: int | None = None,
        token_budget: int | None = None,
        client_info: dict[str, Any] | None = None,
        task_embedding: list[float] | None = None,
        embedding_space: str | None = None,
    ) -> BootPayload:
        """Register a session and return its boot payload (brain.boot_session).

        Besides the embedding of the task, Python adds only what the database
        cannot see: the process identity and this host's process table, from
        which SQL decides which sessions on this host are gone. A Brain reached
        over HTTP (via) records neither folder nor process, which are on the
        client's machine (the session lives by its heartbeat), and notes in
        client_info how it came and with which token. Without a task, a
        task_embedding made by the caller (of embedding_space) may stand for
        one: the SessionStart hook embeds brain.boot_query, the last handoff.
        """
        if self.via is not None:
            cwd = pid = None
            client_info = {
                **(client_info or {}),
                "via": self.via,
                "token": self.principal.name if self.principal is not None else None,
            }
        process = _process_identity(pid)
        vector, space = task_embedding, embedding_space
        if task and task.strip():
            self.value("check_text", text=task, field="task")
            vector, _ = self._embed_or_queue(task)
            space = self.embedder.space if vector is not None else None
        session = {
            "source": source,
            "project": project,
            "task": task,
            "cwd": cwd,
            "pid": process["pid"],
            "pid_started_at": process["started_at"],
            "host": process["host"],
            "host_processes": Jsonb(process["table"]),
            "client_info": Jsonb(client_info or {}),
        }
        shown = {
            "task_embedding": vector,
            "embedding_space": space if vector is not None else None,
            "token_budget": token_budget,
        }
        if self.reader is None:
            return self.value("boot_session", **session, **shown)
        # With a reader: the session registered on the primary, its payload read on the
        # replica once the replica has the session (read_wait, else on the primary), what
        # it showed recorded on the primary; the same answer as brain.boot_session.
        opened = self.value("open_session", **session)
        at = datetime.fromisoformat(opened.pop("at"))
        session_id = opened.pop("session_id")
        payload = self.value("boot_payload", session=session_id, **shown, now=at)
        self.value("record_boot", session=session_id, payload=Jsonb(payload), now=at)
        return {**payload, **opened}

    def end_session(
        self, session: int, handoff: str | None = None, snapshot: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.value(
            "end_session", session=session, handoff=handoff, snapshot=Jsonb(snapshot) if snapshot else None
        )

    def end_session_of(
        self,
        source: str,
        *,
        project: str = "",
        cwd: str | None = None,
        handoff: str | None = None,
        snapshot: dict[str, Any] | None = None,
        now: datetime | str | None = None,
    ) -> dict[str, Any]:
        """End the session booted for this source, project, cwd and host (brain.end_session_of).

        SQL decides which session that is, and keeps the handoff when it has
        ended or none is found; Python adds this host's name and process table.
        now: the time it ended, when that was earlier (a hook's input written later).
        """
        process = _process_identity(None)
        return self.value(
            "end_session_of",
            source=source,
            project=project,
            cwd=cwd,
            host=process["host"],
            handoff=handoff,
            snapshot=Jsonb(snapshot) if snapshot else None,
            host_processes=Jsonb(process["table"]),
            now=now,
        )

    def hand_off_transcript(
        self,
        turns: list[dict[str, Any]],
        event: str,
        source: str,
        *,
        project: str = "",
        cwd: str | None = None,
        client: str | None = None,
        transcript: str | None = None,
        compaction: bool = False,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """End the seat's session with the handoff written from a transcript's turns
        (brain.hand_off_transcript); Python adds this host's name and process table.
        now: when the hook ran, when that was earlier (its input kept and written later)."""
        process = _process_identity(None)
        return self.value(
            "hand_off_transcript",
            turns=Jsonb(turns),
            event=event,
            source=source,
            project=project,
            cwd=cwd,
            host=process["host"],
            host_processes=Jsonb(process["table"]),
            client=client,
            transcript=transcript,
            compaction=compaction,
            now=now,
        )

    def update_active_task(self, session: int, task: str) -> dict[str, Any]:
        return self.value("update_active_task", session=session, task=task)

    def list_active_sessions(
        self, project: str | None = None, exclude_session: int | None = None
    ) -> list[dict[str, Any]]:
        process = _process_identity(None)
        return self.call(
            "list_active_sessions",
            project=project,
            exclude_session=exclude_session,
            host=process["host"],
            host_processes=Jsonb(process["table"]),
        )

    def create_action_item(
        self,
        text: str,
        project: str = "",
        for_source: str | None = None,
        session: int | None = None,
        all_projects: bool = False,
        *,
        request_key: str | None = None,
    ) -> int:
        """Raise an action item (brain.create_action_item); request_key as for rate."""
        return self.value(
            "create_action_item",
            text=text,
            project=project,
            for_source=for_source,
            session=session,
            all_projects=all_projects or None,
            request_key=request_key or new_request_key(),
        )

    def acknowledge_action_item(
        self, item: int, session: int, response: str, note: str | None = None
    ) -> dict[str, Any]:
        return self.value("acknowledge_action_item", id=item, session=session, response=response, note=note)

    def pending_action_items(self, session: int) -> list[dict[str, Any]]:
        return self.call("pending_action_items", session=session)

    def list_flagged(self, include_confirmed: bool = False, max_results: int = 50) -> list[dict[str, Any]]:
        return self.call("list_flagged", include_confirmed=include_confirmed, max_results=max_results)

    def confirm_flagged(self, memory_id: int, source: str | None = None) -> dict[str, Any]:
        return self.value("confirm_flagged", id=memory_id, source=source)

    def scratch_set(self, key: str, value: str, **scope: Any) -> dict[str, Any]:
        return self.value("scratch_set", key=key, value=value, **scope)

    def scratch_get(self, key: str, **scope: Any) -> str | None:
        return self.value("scratch_get", key=key, **scope)

    def scratch_list(self, **scope: Any) -> list[dict[str, Any]]:
        return self.call("scratch_list", **scope)

    # --- observed memories -------------------------------------------------

    def observe(
        self, texts: Sequence[str], embeddings: Sequence[Sequence[float]] | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Store observed texts in one batch (brain.observe_batch).

        Without embeddings, the database first checks and chunks the batch and
        the chunks are embedded here (rows the gate refuses get none); if the
        embedder fails, the rows are stored and queued.
        """
        if kwargs.get("metadata") is not None:
            kwargs["metadata"] = [Jsonb(m or {}) for m in kwargs["metadata"]]
        return self._embedded_batch("observe_batch", embeddings, texts=list(texts), **kwargs)

    def observe_transcript(
        self,
        turns: Sequence[dict[str, Any]],
        *,
        source_system: str,
        project: str = "",
        source_agent: str | None = None,
    ) -> list[dict[str, Any]]:
        """Store the turns of an agent session transcript that are not stored yet
        (brain.observe_transcript): [{ref, role user|assistant, text, at}], in order."""
        return self._embedded_batch(
            "observe_transcript",
            turns=Jsonb(list(turns)),
            source_system=source_system,
            project=project,
            source_agent=source_agent,
        )

    def ingest_documents(self, documents: Sequence[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
        """One call of brain.ingest_documents: documents [{ref, hash, text, format}], and its
        scopes, listing, embeddings (a Float8Matrix or rows), check_only, source_system, project.
        pybrain.ingest runs the whole protocol (listing, then texts in batches)."""
        embeddings = kwargs.pop("embeddings", None)
        if embeddings is not None and not isinstance(embeddings, db.Float8Matrix):
            embeddings = db.Float8Matrix(embeddings)
        return self.call(
            "ingest_documents", documents=Jsonb(list(documents)), embeddings=embeddings, **kwargs
        )

    # --- re-embedding ---------------------------------------------------------

    def embedding_progress(self, space: str | None = None) -> dict[str, Any]:
        return self.value("embedding_progress", embedding_space=space)

    def reembed_batch(self, target: Embedder, batch: int = 64) -> int:
        """Embed one batch of memories missing from target's space; the number done (embedded,
        or refused by the provider and reported to brain.embedding_failed)."""
        rows = self.call("pending_embeddings", embedding_space=target.space, max_results=batch)
        if not rows:
            return 0
        done = _embed_rows(target, rows)
        for r, _, refused in done:
            if refused is not None:
                self.embedding_failed(r["memory_id"], refused, embedding_space=target.space)
        with self.transaction() as cur:
            for r, v, _ in done:
                if v is not None:
                    self._run(
                        cur,
                        "attach_embedding",
                        "SELECT brain.attach_embedding(memory_id => %s, embedding => %s,"
                        " embedding_space => %s)",
                        (r["memory_id"], list(v), target.space),
                    )
        return len(rows)

    def activate_space(self, space: str) -> dict[str, Any]:
        result = self.value("activate_embedding_space", embedding_space=space)
        self._embedder = None  # the next write or search embeds with the new active model
        return result

    def drop_space(self, space: str) -> dict[str, Any]:
        return self.value("drop_embedding_space", embedding_space=space)

    # --- the embedding queue -----------------------------------------------

    def pending(self, max_results: int = 64) -> list[dict[str, Any]]:
        return self.call("pending_embeddings", embedding_space=self.embedder.space, max_results=max_results)

    def attach_embedding(self, memory_id: int, vector: Sequence[float]) -> WriteResult:
        (row,) = self.call(
            "attach_embedding",
            memory_id=memory_id,
            embedding=list(vector),
            embedding_space=self.embedder.space,
        )
        return WriteResult(**row)

    def index_vectors(self, max_rows: int = 1000) -> dict[str, Any]:
        """Index the vectors that large batches left out of the active space's HNSW index
        (brain.index_vectors): what was done, and how many still wait."""
        return self.value("index_vectors", max_rows=max_rows)

    def write_outcomes(self, memory_ids: Sequence[int]) -> list[dict[str, Any]]:
        """The final outcome of memories a write reported (brain.write_outcomes)."""
        return self.call("write_outcomes", memory_ids=list(memory_ids)) if memory_ids else []

    def index_waiting(self) -> Iterator[dict[str, Any]]:
        """brain.index_vectors step by step until it has nothing to do, or the table is
        busy (another time); each step's result. Nothing without an active space."""
        if self.active_space() is None:
            return
        while (done := self.index_vectors())["action"] not in ("none", "busy"):
            yield done

    def embed_pending(self, batch: int = 64) -> list[WriteResult]:
        """Embed one batch of queued memories; [] when the queue is empty.

        A text the provider refuses (or answers with a non-finite vector) is
        reported to brain.embedding_failed, which decides when it is tried again
        and when it is parked; its result has action 'failed' or 'parked' and the
        rows behind it go on. An outage (unreachable, deadline, 5xx) raises
        EmbedderError and reports nothing: no text is to blame.
        """
        rows = self.pending(batch)
        if not rows:
            return []
        out = []
        for r, vector, refused in _embed_rows(self.embedder, rows):
            if refused is None:
                out.append(self.attach_embedding(r["memory_id"], vector))
                continue
            failure = self.embedding_failed(r["memory_id"], refused)
            action = "parked" if failure["parked"] else "failed"
            out.append(WriteResult(action, r["memory_id"], None, None, True, None, refused.reason))
        return out

    def embedding_failed(
        self, memory_id: int, refused: EmbeddingRefused, embedding_space: str | None = None
    ) -> dict[str, Any]:
        """Report a refused text (brain.embedding_failed): its attempts, whether it is parked,
        and when it is due again."""
        (row,) = self.call(
            "embedding_failed",
            memory_id=memory_id,
            error=refused.reason,
            status=refused.status,
            embedding_space=embedding_space or self.embedder.space,
        )
        return row

    def failed_embeddings(self, space: str | None = None, max_results: int = 50) -> list[dict[str, Any]]:
        return self.call("failed_embeddings", embedding_space=space, max_results=max_results)

    def retry_failed_embeddings(self, space: str | None = None) -> int:
        """Make parked and waiting texts due again (brain.retry_failed_embeddings)."""
        return self.value("retry_failed_embeddings", embedding_space=space)


def _embed_rows(
    embedder: Embedder, rows: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], list[float] | None, EmbeddingRefused | None]]:
    """Each queued row with its vector, or with the provider's refusal of its text.

    The batch goes in one request; when the provider refuses it, each text is
    sent alone to find the ones it refuses. Outages raise EmbedderError.
    """
    try:
        vectors = embedder.embed([r["embedding_input"] for r in rows])
        return [(r, v, None) for r, v in zip(rows, vectors, strict=True)]
    except EmbeddingRefused as exc:
        if len(rows) == 1:
            return [(rows[0], None, exc)]
    out: list[tuple[dict[str, Any], list[float] | None, EmbeddingRefused | None]] = []
    for r in rows:
        try:
            out.append((r, embedder.embed_one(r["embedding_input"]), None))
        except EmbeddingRefused as exc:
            out.append((r, None, exc))
    return out


def _process_identity(pid: int | None) -> dict[str, Any]:
    """This host's name, a process's start time, and the host's process table (pid, start epoch)."""
    import socket

    import psutil

    table = []
    for proc in psutil.process_iter(["pid", "create_time"]):
        if proc.info["create_time"] is not None:
            table.append([proc.info["pid"], round(proc.info["create_time"], 3)])
    started_at = None
    if pid is not None:
        try:
            started_at = datetime.fromtimestamp(psutil.Process(pid).create_time(), tz=UTC)
        except psutil.Error:
            started_at = None
    return {"pid": pid, "started_at": started_at, "host": socket.gethostname(), "table": table}


def render_boot(payload: dict[str, Any]) -> str:
    """The boot payload as markdown for an agent (pybrain/templates/boot.md.j2)."""
    return _boot_template().render(p=payload)


@functools.cache
def _boot_template() -> Any:
    """The boot template, compiled once a process (the warm hook process compiles it for its children)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("pybrain", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # markdown for an agent, not HTML
    )
    return env.get_template("boot.md.j2")


def _space(row: dict[str, Any]) -> Space:
    return Space(**{f.name: row[f.name] for f in fields(Space)})


def _json_args(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Dicts are sent as jsonb."""
    return {k: Jsonb(v) if isinstance(v, dict) else v for k, v in kwargs.items()}
