"""Connectors: where a Brain's transactions get their connection and their scope.

A transaction runs in a Scope: the database role it acts as, the workspace it
selects, the access ceiling its token carries, and the actor and session its
writes are recorded for. This module is the only place that gives a
transaction its scope (SET LOCAL ROLE and the brain.* settings, all local to
the transaction, so a pooled connection carries nothing of it to its next
user); everything else asks a connector for a transaction.

- ConnectionConnector: one connection of the Brain's own (the CLI, the hooks,
  `brain mcp` over stdio, an export); a new one is made when the server closed
  the last (a restart).
- PoolConnector: a connection of a pool for each transaction (`brain serve`),
  within the token's and the role's share of the pool when the pool keeps
  shares (pybrain.serve.pool.Shares); `held()` gives one of its connections
  for a whole request (the dashboard).

The database decides what a scope may do (docs/security.md): the connector
only says which one a transaction runs in.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pybrain import db
from pybrain.errors import BrainError, wrap_exceptions

log = logging.getLogger("pybrain")

# The settings every transaction is given, and the access ceiling beside them when its scope has one.
_SETTINGS = (
    "SELECT set_config('brain.workspace', %s, true), set_config('brain.actor', %s, true),"
    " set_config('brain.session', %s, true)"
)
_SETTINGS_WITH_CEILING = _SETTINGS + ", set_config('brain.max_access', %s, true)"


class Principal(Protocol):
    """Who a token (or the anonymous local user of a server) runs as (pybrain.serve.auth.Principal)."""

    @property
    def workspace(self) -> int | None: ...
    @property
    def role(self) -> str | None: ...
    @property
    def access(self) -> str | None: ...
    @property
    def token_id(self) -> int | None: ...
    @property
    def name(self) -> str | None: ...


@dataclass(frozen=True)
class Scope:
    """What one transaction runs as.

    role: SET LOCAL ROLE to it; None runs as the connection's own login role.
    workspace: brain.workspace; None lets the database choose (the role's only or default one).
    access: the ceiling brain.max_access; None leaves the setting as it is, '' clears it.
    actor, session: brain.actor and brain.session, for the audit trail and the session's injections.
    token_id: whose share of a pool the transaction takes (None: the local user's).
    statement_timeout: the transaction's statement_timeout (SET LOCAL: behind a pooler in
        transaction mode nothing of it reaches the next client); None keeps the role's.
    """

    role: str | None = None
    workspace: int | None = None
    access: str | None = None
    actor: str | None = None
    session: int | None = None
    token_id: int | None = None
    statement_timeout: str | None = None

    @classmethod
    def of(
        cls,
        principal: Principal,
        *,
        actor: str | None = None,
        session: int | None = None,
        statement_timeout: str | None = None,
    ) -> Scope:
        """The scope of a principal: its role, its workspace, and its access as the ceiling."""
        return cls(
            role=principal.role,
            workspace=principal.workspace,
            access=principal.access or "",
            actor=actor,
            session=session,
            token_id=principal.token_id,
            statement_timeout=statement_timeout,
        )


def _apply(cur: psycopg.Cursor[Any], scope: Scope) -> None:
    """Give the current transaction its scope; everything is local to the transaction."""
    if scope.role is not None:
        cur.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(scope.role)))
    values = [
        "" if scope.workspace is None else str(scope.workspace),
        scope.actor or "",
        "" if scope.session is None else str(scope.session),
    ]
    if scope.access is None:
        cur.execute(_SETTINGS, values)
    else:
        cur.execute(_SETTINGS_WITH_CEILING, [*values, scope.access])
    if scope.statement_timeout is not None:
        cur.execute("SELECT set_config('statement_timeout', %s, true)", [scope.statement_timeout])


@contextmanager
def scoped(
    conn: psycopg.Connection[Any],
    scope: Scope,
    *,
    isolation: psycopg.IsolationLevel | None = None,
    read_only: bool = False,
) -> Iterator[psycopg.Cursor[Any]]:
    """A transaction on conn in scope, with a cursor of dict rows; database errors are BrainErrors.

    isolation and read_only open it with that isolation level, read only (an export's
    snapshot); the connection's own defaults are restored after."""
    with wrap_exceptions():
        if isolation is None and not read_only:
            with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                _apply(cur, scope)
                yield cur
            return
        saved = conn.isolation_level, conn.read_only
        conn.isolation_level, conn.read_only = isolation or saved[0], read_only or saved[1]
        try:
            with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                _apply(cur, scope)
                yield cur
        finally:
            conn.isolation_level, conn.read_only = saved


class Connector:
    """Where a Brain's transactions run: `transaction(scope)` opens one in that scope.

    `conn` is what the Brain watches to tell a lost connection (a restart) from a
    refusal; `closed` says the Brain was closed by its owner (no reconnecting)."""

    conninfo: str
    closed: bool = False

    @property
    def conn(self) -> Any:
        raise NotImplementedError

    def connection(self) -> Any:
        """The connection the next transaction runs on (or what stands for the pool's)."""
        raise NotImplementedError

    def new_connection(self) -> psycopg.Connection[Any]:
        """Another autocommit connection to the same database (e.g. to LISTEN on)."""
        return db.reconnect(self.conninfo)

    def transaction(
        self, scope: Scope, *, isolation: psycopg.IsolationLevel | None = None, read_only: bool = False
    ) -> contextlib.AbstractContextManager[psycopg.Cursor[Any]]:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True


class ConnectionConnector(Connector):
    """One connection; a new one when the server closed the last (a restart).

    Reconnecting waits for the server up to BRAIN_DB_RECONNECT_WAIT seconds."""

    def __init__(self, conn: psycopg.Connection[Any], conninfo: str | None = None) -> None:
        self._conn = conn
        # How to connect again when the server restarts under this client.
        self.conninfo = conninfo or db.conninfo_of(conn)
        self._reconnecting = threading.Lock()
        self.closed = False
        # Seconds a reconnection keeps trying (None: BRAIN_DB_RECONNECT_WAIT).
        self.reconnect_wait: float | None = None

    @property
    def conn(self) -> psycopg.Connection[Any]:
        return self._conn

    def connection(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn.closed and not self.closed:
            with self._reconnecting:
                if self._conn is conn:  # another thread may have reconnected meanwhile
                    log.warning("the database connection was lost; reconnecting")
                    self._conn = db.reconnect(self.conninfo, self.reconnect_wait)
        return self._conn

    @contextmanager
    def transaction(
        self, scope: Scope, *, isolation: psycopg.IsolationLevel | None = None, read_only: bool = False
    ) -> Iterator[psycopg.Cursor[Any]]:
        with (
            wrap_exceptions(),
            scoped(self.connection(), scope, isolation=isolation, read_only=read_only) as cur,
        ):
            yield cur

    def close(self) -> None:
        self.closed = True
        self._conn.close()


class _PoolHandle:
    """What a Brain watches where the pool stands for its connection."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    @property
    def closed(self) -> bool:
        return bool(self.pool.closed)

    def close(self) -> None:
        """The pool outlives each Brain: closing one closes nothing."""


class PoolConnector(Connector):
    """A connection of a pool (a psycopg_pool.ConnectionPool) for each transaction.

    When the pool keeps shares (pybrain.serve.pool.ServingPool), a transaction takes
    its token's and its role's share first: one token's slow calls cannot hold the
    whole pool. Closing the connector leaves the pool open: it outlives each Brain."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.conninfo = pool.conninfo
        self._handle = _PoolHandle(pool)
        self.closed = False

    @property
    def conn(self) -> _PoolHandle:
        return self._handle

    def connection(self) -> _PoolHandle:
        return self._handle

    def new_connection(self) -> psycopg.Connection[Any]:
        raise BrainError("A pooled Brain has no connection of its own.")

    @contextmanager
    def transaction(
        self, scope: Scope, *, isolation: psycopg.IsolationLevel | None = None, read_only: bool = False
    ) -> Iterator[psycopg.Cursor[Any]]:
        shares = getattr(self.pool, "shares", None)
        with (
            wrap_exceptions(),
            shares.hold(scope) if shares else contextlib.nullcontext(),
            self.pool.connection() as conn,
            scoped(conn, scope, isolation=isolation, read_only=read_only) as cur,
        ):
            yield cur

    @contextmanager
    def held(self) -> Iterator[ConnectionConnector]:
        """One connection of the pool for every transaction inside (a dashboard request's)."""
        with self.pool.connection() as conn:
            yield ConnectionConnector(conn, self.conninfo)

    def close(self) -> None:
        self.closed = True
