"""The core of a Brain: its connector and scope, its embedder and embedding space, and
its calls, which go through the transport (pybrain.api.transport).

The only work done in Python that SQL cannot do is computing embeddings. Every
rule about memories (gate, dedup, supersede, banners) is in sql/functions/.
"""

from __future__ import annotations

import copy
import logging
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from typing import Any, Self

import psycopg
from psycopg import sql

from pybrain import db, words
from pybrain.api import transport
from pybrain.connector import ConnectionConnector, Connector, Principal, Scope
from pybrain.embed import Embedder, get_embedder
from pybrain.errors import BrainError, EmbedderError

log = logging.getLogger("pybrain")

# The categories brain.remember takes (its gate checks them: BR009); clients use the
# list to shape a tool schema or to fall back to 'note' for a source's own labels.
CATEGORIES = words.CATEGORIES


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


class BrainCore:
    """What every Brain is: its connector and scope, its embedder, and its calls through
    the transport (pybrain.api.transport). The typed methods are in the rooms beside it
    (memories, sessions, embedding), and pybrain.api.brain puts them together.

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
        # Where the reads a replica serves run (the catalogue's replica trait: a streaming
        # replica's connector), and the primary's WAL position after this Brain's latest
        # write: a read on the replica waits (up to read_wait) until the replica has
        # replayed it, else runs on the primary (pybrain.api.transport).
        self.reader: Connector | None = None
        self.read_wait = transport.READ_WAIT
        self.written_lsn: str | None = None
        self.reads = {"replica": 0, "primary": 0}
        self._reader_down_until = 0.0  # after a replica that could not be reached
        # On the installer's connection (a superuser, or a role in brain_owner: run_as_owner),
        # every call of a function in schema brain runs as brain_owner (db.owner_rows).
        self.as_owner = False
        self._behind: str | None = None  # the write a read last waited for in vain

    def use_reader(self, url: str) -> None:
        """Send the reads a replica serves (the catalogue's replica trait) to the replica at
        url, as this Brain's role; an unreachable replica leaves every call on the primary."""
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

    def embedding_with(self, embedder: Embedder) -> Self:
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

    def __enter__(self) -> Self:
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
        """SELECT * FROM brain.<function>(name => value, ...) with the arguments that are set
        (pybrain.api.transport: sent again after a lost connection or race, on the replica
        when it serves it)."""
        return transport.call(self, function, kwargs)

    def _run(
        self, cur: psycopg.Cursor[Any], function: str, query: sql.Composable | str, args: Any
    ) -> list[dict[str, Any]]:
        """The rows of a call of brain.<function> in the transaction of cur (transport.run)."""
        return transport.run(self, cur, function, query, args)

    def run_as_owner(self) -> Self:
        """Make every call of this Brain run as brain_owner when its connection is the
        installer's (db.runs_as_installer): nothing brain_owner could have planted in schema
        brain then runs with the installer's rights (docs/security.md). Returns self."""
        self.as_owner = db.runs_as_installer(self.connection())
        return self

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

    def _embed_or_queue(self, text: str) -> tuple[list[float] | None, str | None]:
        """An embedding for text, or (None, why) when the provider failed: the write is queued."""
        try:
            return self.embedder.embed_one(text), None
        except EmbedderError as exc:
            log.warning("embedding failed, the write is queued for `brain worker`: %s", exc)
            return None, exc.message


def _space(row: dict[str, Any]) -> Space:
    return Space(**{f.name: row[f.name] for f in fields(Space)})
