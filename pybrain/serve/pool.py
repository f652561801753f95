"""The servers' connection pool: one builder (open_pool), the pool that knows when the
database is down (ServingPool), each token's share of it (Shares), and the Brain of a
principal whose calls take a pooled connection each (pooled_brain)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout
from psycopg_pool.base import AttemptWithBackoff

from pybrain.client import Brain, open_brain
from pybrain.connector import PoolConnector, Scope
from pybrain.errors import DatabaseUnavailable, InvalidArgument, wrap_exceptions
from pybrain.serve import auth

log = logging.getLogger("pybrain.serve")

POOL_MIN = 1
POOL_MAX = 100
DEFAULT_POOL_SIZE = 10
# How long a call waits for a connection when all are busy (the database is up).
WAIT = 30.0
# The longest pause between two attempts to reach a database that is down: the
# pool serves again within about this much of the database's return.
RETRY_MAX = 0.5
# A connection attempt that takes longer than this counts as the database being down.
CONNECT_TIMEOUT = 2
# How pooled connections are made: autocommit (each call is its own transactions), and
# no prepared statements of psycopg's own (prepared after 5 runs of a query on one
# connection, they break behind PgBouncer in transaction mode before 1.21, where the
# next transaction may run on another server connection; docs/serve.md).
CONNECTION_KWARGS = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT, "prepare_threshold": None}
# What a refused call tells a client to wait before trying again (HTTP Retry-After).
RETRY_AFTER = 2


class _Attempt(AttemptWithBackoff):
    """psycopg_pool's backoff between reconnection attempts (1 s, doubling up to minutes)
    made short and flat: a restarted database is used again within RETRY_MAX."""

    INITIAL_DELAY = 0.1
    DELAY_JITTER = 0.1
    DELAY_BACKOFF = 1.5

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RETRY_MAX)


class Shares:
    """How many of a pool's connections one token and one role may hold at once: half the
    pool for a token, three quarters for a role (at least one each). A call beyond its
    share waits for one of its own calls to end (up to WAIT), while other tokens' calls
    take the connections left: one token's slow calls cannot hold the whole pool."""

    def __init__(self, size: int) -> None:
        self.per_token = max(1, size // 2)
        self.per_role = max(1, size * 3 // 4)
        self._held: dict[str, int] = {}
        self._cond = threading.Condition()
        self._local = threading.local()

    def _keys(self, principal: auth.Principal | Scope) -> tuple[str, str]:
        token = "local" if principal.token_id is None else f"token:{principal.token_id}"
        return token, f"role:{principal.role or 'local'}"

    @contextmanager
    def hold(self, principal: auth.Principal | Scope) -> Iterator[None]:
        """Hold one connection's share for a principal (or a transaction's scope: its token and role)."""
        token, role = self._keys(principal)
        nested = getattr(self._local, "held", None) or set()
        if token in nested:
            yield  # a checkout inside one of this thread's own: its share is already held
            return
        with self._cond:
            if not self._cond.wait_for(
                lambda: self._held.get(token, 0) < self.per_token and self._held.get(role, 0) < self.per_role,
                timeout=WAIT,
            ):
                raise DatabaseUnavailable(
                    f"This token's calls hold their share of the server's connections ({self.per_token}) "
                    f"for {WAIT:.0f} s.",
                    detail={"retry_after": RETRY_AFTER},
                    hint="Fewer calls at once, or a larger --pool-size.",
                )
            self._held[token] = self._held.get(token, 0) + 1
            self._held[role] = self._held.get(role, 0) + 1
        self._local.held = nested | {token}
        try:
            yield
        finally:
            self._local.held = nested
            with self._cond:
                for key in (token, role):
                    self._held[key] -= 1
                    if not self._held[key]:
                        del self._held[key]
                self._cond.notify_all()


class ServingPool(ConnectionPool):
    """A ConnectionPool that knows when the database is down and says so at once.

    Any failed attempt to connect marks the database down: the calls waiting for a
    connection and every call that comes while it is down get DatabaseUnavailable
    at once (the HTTP servers answer 503 with Retry-After) instead of waiting for
    the pool's timeout. The pool keeps trying to connect, never more than RETRY_MAX
    apart and never giving up; the first connection that succeeds marks it up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("reconnect_timeout", 365 * 86400.0)  # never give up on the database
        super().__init__(*args, **kwargs)
        self.shares = Shares(self.max_size)
        self.down_since: float | None = None
        self.down_reason = ""

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def unavailable(self) -> DatabaseUnavailable:
        # (the reason stays in the server's log: a 503 is answered before any token is checked)
        return DatabaseUnavailable(
            "The database is not reachable.",
            detail={"retry_after": RETRY_AFTER},
            hint=f"Try again in {RETRY_AFTER} s; the server reconnects on its own.",
        )

    def _mark_down(self, exc: Exception) -> None:
        if self.down_since is None:
            self.down_since = time.monotonic()
            log.warning("%s: the database is down: %s", self.name, str(exc).strip()[:200])
        self.down_reason = str(exc)
        # Whoever waits for a connection hears it now, not after the pool's timeout.
        with self._lock:
            waiting = list(self._waiting)
            self._waiting.clear()
        for client in waiting:
            client.fail(self.unavailable())

    def _connect(self, timeout: float | None = None) -> Any:
        try:
            conn = super()._connect(timeout)
        except psycopg.Error as exc:
            self._mark_down(exc)
            raise
        if self.down_since is not None:
            log.warning(
                "%s: the database is back after %.1f s", self.name, time.monotonic() - self.down_since
            )
            self.down_since = None
        return conn

    def _getconn_with_check_loop(self, deadline: float) -> Any:
        # psycopg_pool's loop, without its pause (1 s, then doubling) after a connection
        # that fails its check: a broken connection (the database restarted, or is down)
        # is followed at once by a probe, which marks the database down when it does not
        # answer, and the next connection is tried without waiting.
        failed = 0
        while True:
            conn = self._getconn_unchecked(deadline - time.monotonic())
            try:
                self._check_connection(conn)
            except Exception:
                self._putconn(conn, from_getconn=True)
            except BaseException:
                self._putconn(conn, from_getconn=True)
                raise
            else:
                return conn
            failed += 1
            try:
                psycopg.connect(self.conninfo, connect_timeout=CONNECT_TIMEOUT).close()
            except psycopg.Error as exc:
                self._mark_down(exc)
            if failed > self.max_size:
                time.sleep(0.05)  # not a restart: no busy loop

    def _add_connection(self, attempt: AttemptWithBackoff | None, growing: bool = False) -> None:
        super()._add_connection(attempt or _Attempt(timeout=self.reconnect_timeout), growing)

    def _getconn_unchecked(self, timeout: float) -> Any:
        if self.down_since is not None:
            raise self.unavailable()
        return super()._getconn_unchecked(timeout)

    def getconn(self, timeout: float | None = None) -> Any:
        try:
            return super().getconn(timeout)
        except PoolTimeout as exc:
            if self.down_since is not None:
                raise self.unavailable() from None
            raise DatabaseUnavailable(
                f"No database connection was free for {timeout or self.timeout:.0f} s: the server is busy.",
                detail={"retry_after": RETRY_AFTER},
                hint=f"Try again in {RETRY_AFTER} s.",
            ) from exc


def open_pool(
    conninfo: str,
    size: int = DEFAULT_POOL_SIZE,
    *,
    name: str = "pybrain",
    wait: bool | None = True,
    min_size: int = 2,
    reset: bool = True,
) -> ServingPool:
    """A pool of autocommit connections; each is checked before use, so a restarted
    server costs one failed check, not a failed call; while the database is down, calls
    fail at once with DatabaseUnavailable (ServingPool).

    wait: open it and wait for its first connections (True), open it without waiting
    (False), or leave it to be opened later (None: the dashboard opens its own when the
    application starts). min_size: the connections it keeps open (at most size). reset:
    RESET ALL when a connection comes back (everything a call sets is local to its
    transaction; this undoes a session that set more)."""
    if not POOL_MIN <= size <= POOL_MAX:
        raise InvalidArgument(
            f"The pool size is {POOL_MIN} to {POOL_MAX} connections, not {size}.",
            hint="--pool-size (or BRAIN_SERVE_POOL_SIZE).",
        )
    pool = ServingPool(
        conninfo,
        min_size=min(min_size, size),
        max_size=size,
        kwargs=CONNECTION_KWARGS,
        check=ConnectionPool.check_connection,
        reset=_reset if reset else None,
        name=name,
        open=False,
        timeout=WAIT,
    )
    if wait:
        with wrap_exceptions():
            pool.open(wait=True, timeout=30)
    elif wait is not None:
        pool.open(wait=False)
    return pool


def _reset(conn: psycopg.Connection) -> None:
    # Everything a request sets is local to its transaction; this only undoes a session that set more.
    conn.execute("RESET ALL")


def pooled_brain(
    pool: ConnectionPool,
    principal: auth.Principal,
    *,
    embedder_spec: str | None = None,
    via: str | None = None,
    read_pool: ConnectionPool | None = None,
) -> Brain:
    """A Brain for one principal: every call is a transaction on a connection of the pool,
    as the principal's role, in its workspace, with its access as a ceiling, within its
    share of the pool (pybrain.connector.PoolConnector). With read_pool (a streaming
    replica's), the reads a replica serves run there once it has this Brain's writes."""
    return open_brain(
        "pooled",
        connector=PoolConnector(pool),
        principal=principal,
        embedder_spec=embedder_spec,
        actor=principal.role,
        via=via,
        reader=PoolConnector(read_pool) if read_pool is not None else None,
    )
