"""The transport: how one call of a brain.* function reaches the database.

A call is `SELECT * FROM brain.<function>(name => value, ...)` with the arguments
that are set, in a transaction the Brain's connector opens in its scope. Around
it, each in a small function of its own:

- arguments: a time given as text is read here, and a text for an argument of
  another type is checked by the server before the call (arguments, check_types);
- replica routing: with a reader, the reads a replica serves (the catalogue's
  `replica` trait) run there once it has replayed this Brain's latest write
  (replica_read, on_replica, replayed), else on the primary;
- WAL positions: after a committed write (but telemetry), the primary's position
  is noted, for which the next reads wait (wrote, note_write);
- races: a write that a concurrent near-duplicate beat at COMMIT (BR022: nothing
  was stored) is sent again, up to RACE_TRIES times (on_primary);
- lost connections: a connection the server closed (a restart) is replaced and
  the call sent again, once: always when it was lost before the COMMIT was sent
  (nothing was changed), and for an idempotent function (the catalogue's trait)
  or a call with a request_key also when it was lost during the COMMIT
  (after_loss, lost_error).

The Brain holds the state (connector, reader, written_lsn, reads); this module
holds what is done with it. Which function has which trait is the database's
catalogue (pybrain.api.catalogue), never a list kept here.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from pybrain import db
from pybrain.api import catalogue as catalogue_
from pybrain.connector import PoolConnector, Scope
from pybrain.errors import BrainError, ConcurrentDuplicate, DatabaseUnavailable, InvalidArgument

log = logging.getLogger("pybrain")

Rows = list[dict[str, Any]]

# How many times a write is sent that a concurrent near-duplicate beat at COMMIT
# (BR022): the second time it meets that memory like any later write.
RACE_TRIES = 3
# How long a read waits for the replica to replay this Brain's latest write before it
# runs on the primary instead (a session reads its own writes).
READ_WAIT = 1.0
READER_PAUSE = 5.0  # seconds reads stay on the primary after the replica failed one
UNKNOWN_LSN = "unknown"  # a write's position could not be read: reads go to the primary

# The arguments of the SQL API that are times. A text sent for one is read here, so
# that a value PostgreSQL cannot parse is refused naming the argument, and never
# reaches the server, whose error (and log line) would quote it.
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

# The types of each SQL function's arguments, read once per process. A text sent for
# an argument of another type (a number, a boolean, an interval, JSON) is checked by the
# server with pg_input_is_valid (PostgreSQL 16 and later), which never raises, before
# the call: PostgreSQL's own error for a value it cannot parse quotes the value, in the
# reply and in the server's log.
_ARGUMENT_TYPES: dict[str, dict[str, str]] = {}
_TEXT_TYPES = frozenset({"text", "character varying", "name"})
_ARGUMENTS_QUERY = (
    "SELECT a.name, format_type(a.typ, NULL) AS type"
    " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,"
    " unnest(p.proargnames, coalesce(p.proallargtypes, p.proargtypes::oid[]),"
    "        coalesce(p.proargmodes, array_fill('i'::\"char\", ARRAY[p.pronargs::integer])))"
    "   AS a(name, typ, mode)"
    " WHERE n.nspname = 'brain' AND p.proname = %s AND a.mode IN ('i', 'b', 'v')"
)


def new_request_key() -> str:
    """A new request key: a random UUID."""
    return str(uuid.uuid4())


# --- arguments ----------------------------------------------------------------


def checked(name: str, value: Any) -> Any:
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


def arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments that are set, each as sent (checked)."""
    return {k: checked(k, v) for k, v in kwargs.items() if v is not None}


def statement(function: str, args: dict[str, Any]) -> sql.Composed:
    """SELECT * FROM brain.<function>(name => %(name)s, ...)."""
    return sql.SQL("SELECT * FROM brain.{}({})").format(
        sql.Identifier(function),
        sql.SQL(", ").join(sql.SQL("{} => {}").format(sql.Identifier(k), sql.Placeholder(k)) for k in args),
    )


def argument_types(cur: psycopg.Cursor, function: str) -> dict[str, str]:
    """Each argument's type, read once per process; an argument of two overloads with two
    types is left to the server (text)."""
    if function not in _ARGUMENT_TYPES:
        types: dict[str, str] = {}
        for row in cur.execute(_ARGUMENTS_QUERY, (function,)).fetchall():
            types[row["name"]] = row["type"] if types.get(row["name"], row["type"]) == row["type"] else "text"
        _ARGUMENT_TYPES[function] = types
    return _ARGUMENT_TYPES[function]


def check_types(cur: psycopg.Cursor, function: str, args: dict[str, Any]) -> None:
    """Refuse a text sent for an argument of another type it is not a valid value of (BR009)."""
    texts = {k: v for k, v in args.items() if isinstance(v, str)}
    if not texts or cur.connection.info.server_version < 160000:
        return
    types = argument_types(cur, function)
    for name, value in texts.items():
        kind = types.get(name)
        if kind is None or kind in _TEXT_TYPES:
            continue
        if not cur.execute("SELECT pg_input_is_valid(%s, %s) AS ok", (value, kind)).fetchone()["ok"]:
            raise InvalidArgument(
                f"{name} must be a valid {kind}.",
                detail={"field": name, "expected": kind},
                hint="Send a value of the argument's type (docs/sql-api.md).",
            )


# --- one call ----------------------------------------------------------------


def run(brain: Any, cur: psycopg.Cursor[Any], function: str, query: sql.Composable | str, args: Any) -> Rows:
    """The rows of a call of brain.<function> in the transaction of cur: as brain_owner
    behind the door on the installer's connection (brain.as_owner: each column's JSON
    value; the server checks the arguments' types), as the connection's role otherwise."""
    if brain.as_owner:
        return db.owner_rows(cur.connection, query, args)
    if isinstance(args, dict):
        check_types(cur, function, args)
    cur.execute(query, args)
    return cur.fetchall() if cur.description else []


def run_each(brain: Any, function: str, query: str, each: list[Any]) -> None:
    """One call of brain.<function> for each of the arguments in `each`, in one transaction."""
    with brain.transaction() as cur:
        for args in each:
            run(brain, cur, function, query, args)


def call(brain: Any, function: str, kwargs: dict[str, Any]) -> Rows:
    """SELECT * FROM brain.<function>(...) for this Brain: on the replica when it serves it
    and has this Brain's writes, else on the primary (see the module's text)."""
    args = arguments(kwargs)
    query = statement(function, args)
    rows = replica_read(brain, function, query, args)
    return rows if rows is not None else on_primary(brain, function, query, args)


def catalogue(brain: Any) -> catalogue_.Catalogue:
    """The catalogue of the API (brain.catalogue), read once a process."""
    found = catalogue_.cached()
    return found if found is not None else catalogue_.keep(read_catalogue(brain))


def read_catalogue(brain: Any) -> Rows:
    """brain.catalogue()'s rows: on the reader when there is one (a replica has the
    primary's functions, and answers while the primary is away), else on the primary."""
    if brain.reader is not None:
        try:
            with brain.reader.transaction(brain.scope(), read_only=True) as cur:
                return cur.execute(catalogue_.QUERY).fetchall()
        except BrainError as exc:
            log.warning("the replica is not reachable, the catalogue is read on the primary: %s", exc.message)
    with brain.transaction() as cur:
        return run(brain, cur, "catalogue", catalogue_.QUERY, {})


def idempotent(brain: Any, function: str) -> bool:
    """Whether a second call changes nothing the first did not (the catalogue's trait);
    not when the catalogue cannot be read."""
    try:
        return catalogue(brain).has(function, "idempotent")
    except BrainError as exc:
        log.warning("the catalogue of the API could not be read: %s", exc.message)
        return False


# --- the primary: races and lost connections ------------------------------------


@dataclass
class Attempt:
    """Where a call on the primary stands: its attempt (1, 2), the races it lost, whether
    its COMMIT was under way, and whether the first attempt was lost during its COMMIT."""

    number: int = 1
    races: int = 0
    committing: bool = False
    cut_committing: bool = False
    conn: Any = None


def on_primary(brain: Any, function: str, query: sql.Composable, args: dict[str, Any]) -> Rows:
    """The call on the primary, sent again after a lost race (RACE_TRIES) or a lost
    connection (after_loss)."""
    at = Attempt()
    while True:
        try:
            return send(brain, function, query, args, at)
        except ConcurrentDuplicate:
            # Beaten at COMMIT by a concurrent near-duplicate: nothing was stored, and sent
            # again the write meets it as any later write does (docs/errors.md).
            at.races += 1
            if at.races < RACE_TRIES:
                continue
            raise
        except BrainError as exc:
            if not after_loss(brain, function, args, at, exc):
                raise


def send(brain: Any, function: str, query: sql.Composable, args: dict[str, Any], at: Attempt) -> Rows:
    """One attempt: the call in a transaction, and the WAL position after it when it wrote."""
    at.committing = False
    at.conn = brain.connection()
    with brain.transaction() as cur:
        rows = run(brain, cur, function, query, args)
        written = wrote(brain, cur, function)
        at.committing = True  # leaving the block sends COMMIT
    if written:
        note_write(brain)
    return rows


def wrote(brain: Any, cur: psycopg.Cursor[Any], function: str) -> bool:
    """With a reader: whether the call wrote (a transaction id is assigned only then) what
    the session may read back (not telemetry)."""
    if brain.reader is None or catalogue(brain).has(function, "telemetry"):
        return False
    return cur.execute("SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote").fetchone()["wrote"]


def lost(brain: Any, at: Attempt, exc: BrainError) -> bool:
    """Whether the attempt's connection was lost: closed by the server under the call, or,
    pooled, a DatabaseUnavailable from the driver (and, sent again, a pool with no server)."""
    if at.conn is not None and at.conn.closed:
        return True
    return (
        isinstance(brain.connector, PoolConnector)
        and isinstance(exc, DatabaseUnavailable)
        and (at.number == 2 or isinstance(exc.__cause__, psycopg.OperationalError))
    )


def after_loss(brain: Any, function: str, args: dict[str, Any], at: Attempt, exc: BrainError) -> bool:
    """True when the call is sent again after exc; False when exc is the answer; raises
    DatabaseUnavailable when the connection was lost and the call may not be sent again."""
    if not lost(brain, at, exc) or brain.connector.closed:
        return False
    if at.number == 1 and (not at.committing or "request_key" in args or idempotent(brain, function)):
        at.number, at.cut_committing = 2, at.committing
        return True
    raise lost_error(function, args, at, exc) from exc


def lost_error(function: str, args: dict[str, Any], at: Attempt, exc: BrainError) -> DatabaseUnavailable:
    """What a call that lost its connection and is not sent again says."""
    if not at.committing and not at.cut_committing:
        return DatabaseUnavailable(
            f"The database connection was lost twice during brain.{function}; "
            f"nothing was changed ({exc.message}).",
            hint="Check that the server is running; the next call reconnects.",
        )
    return DatabaseUnavailable(
        f"The database connection was lost while brain.{function} committed: it may or "
        f"may not have taken effect ({exc.message}).",
        hint="Send it again with the same request_key: it is answered as the first time "
        "if it took effect, and done once if not."
        if "request_key" in args
        else "Check the result (search, recall, stats) before you send it again; the next call reconnects.",
    )


# --- the replica: routing and WAL positions ---------------------------------------


def replica_read(brain: Any, function: str, query: sql.Composable, args: dict[str, Any]) -> Rows | None:
    """The rows of a read the replica serves, run there; None when it runs on the primary
    (no reader, not such a read, a write of unknown position, a replica that failed lately)."""
    if brain.reader is None or not catalogue(brain).has(function, "replica"):
        return None
    if brain.written_lsn != UNKNOWN_LSN and time.monotonic() >= brain._reader_down_until:
        rows = on_replica(brain, function, query, args)
        if rows is not None:
            brain.reads["replica"] += 1
            return rows
    brain.reads["primary"] += 1
    return None


def on_replica(brain: Any, function: str, query: sql.Composable, args: dict[str, Any]) -> Rows | None:
    """The call run on the reader, once it has replayed this Brain's latest write; None
    when it does not within read_wait or cannot be reached (the primary answers then)."""
    # Once a read waited read_wait in vain for this write, the next ones only look: a
    # replica that lags costs a writing session one wait a write, not one a read.
    deadline = time.monotonic() + (0 if brain._behind == brain.written_lsn else brain.read_wait)
    try:
        with brain.reader.transaction(brain.scope(), read_only=True) as cur:
            if not replayed(brain, cur, deadline):
                return None
            check_types(cur, function, args)
            cur.execute(query, args)
            return cur.fetchall() if cur.description else []
    except DatabaseUnavailable as exc:
        # the primary serves the reads for a while before the replica is tried again
        brain._reader_down_until = time.monotonic() + READER_PAUSE
        log.warning("the replica is not reachable, reads run on the primary: %s", exc.message)
        return None


def replayed(brain: Any, cur: psycopg.Cursor[Any], deadline: float) -> bool:
    """Whether the replica has replayed this Brain's latest write, waiting until deadline."""
    while brain.written_lsn is not None:
        caught_up = cur.execute(
            "SELECT NOT pg_is_in_recovery() OR pg_last_wal_replay_lsn() >= %s::pg_lsn AS ok",
            [brain.written_lsn],
        ).fetchone()["ok"]
        if caught_up:
            brain._behind = None
            return True
        if time.monotonic() > deadline:
            brain._behind = brain.written_lsn
            return False
        time.sleep(0.005)
    return True


def note_write(brain: Any) -> None:
    """Remember the primary's WAL position after a committed call (past its commit)."""
    try:
        with brain.connector.transaction(Scope(token_id=brain.scope().token_id)) as cur:
            brain.written_lsn = cur.execute("SELECT pg_current_wal_lsn()::text AS lsn").fetchone()["lsn"]
    except BrainError as exc:
        # Not known: the next reads go to the primary until a write is noted again.
        brain.written_lsn = UNKNOWN_LSN
        log.warning("the primary's WAL position after a write is unknown: %s", exc.message)
