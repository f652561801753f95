"""A Brain whose calls take a pooled connection and run as a principal (pybrain.serve.auth)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from pybrain.client import Brain
from pybrain.errors import BrainError, InvalidArgument, wrap_exceptions
from pybrain.serve import auth

POOL_MIN = 1
POOL_MAX = 100
DEFAULT_POOL_SIZE = 10


def open_pool(conninfo: str, size: int = DEFAULT_POOL_SIZE, *, name: str = "pybrain") -> ConnectionPool:
    """A pool of autocommit connections; each is checked before use, so a restarted
    server costs one failed check, not a failed call."""
    if not POOL_MIN <= size <= POOL_MAX:
        raise InvalidArgument(
            f"The pool size is {POOL_MIN} to {POOL_MAX} connections, not {size}.",
            hint="--pool-size (or BRAIN_SERVE_POOL_SIZE).",
        )
    pool = ConnectionPool(
        conninfo,
        min_size=min(2, size),
        max_size=size,
        kwargs={"autocommit": True},
        check=ConnectionPool.check_connection,
        reset=_reset,
        name=name,
        open=False,
        timeout=30,
    )
    with wrap_exceptions():
        pool.open(wait=True, timeout=30)
    return pool


def _reset(conn: psycopg.Connection) -> None:
    # Everything a request sets is SET LOCAL; this only undoes a session that set more.
    conn.execute("RESET ALL")


class _PoolHandle:
    """What Brain expects of its connection where the pool stands for it."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    @property
    def closed(self) -> bool:
        return self.pool.closed

    def close(self) -> None:
        """The pool outlives each Brain: closing one closes nothing."""


class PrincipalBrain(Brain):
    """A Brain whose every transaction runs as a principal: its role, workspace and access
    ceiling (auth.apply), and the Brain's actor."""

    def __init__(self, conn: Any, principal: auth.Principal, **kwargs: Any) -> None:
        super().__init__(conn, **kwargs)
        self.principal = principal

    def _scope(self, cur: psycopg.Cursor) -> None:
        auth.apply(cur, self.principal)
        cur.execute("SELECT set_config('brain.actor', %s, true)", (self.actor or "",))


class PooledBrain(PrincipalBrain):
    """A Brain for one principal: every call is a transaction on a connection of the pool,
    as the principal's role, in its workspace, with its access as a ceiling."""

    def __init__(
        self, pool: ConnectionPool, principal: auth.Principal, *, embedder_spec: str | None = None
    ) -> None:
        super().__init__(
            _PoolHandle(pool),
            principal,
            workspace=principal.workspace,
            embedder_spec=embedder_spec,
            actor=principal.role,
            conninfo=pool.conninfo,
        )
        self.pool = pool

    def connection(self) -> Any:
        return self.conn

    def new_connection(self) -> psycopg.Connection:
        raise BrainError("A pooled Brain has no connection of its own.")

    @contextmanager
    def _checkout(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn:
            yield conn
