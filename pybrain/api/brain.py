"""The Brain, and the one place one is built: each face opens its Brain here for its
purpose (open_brain), and nowhere else is `Brain(...)` called in pybrain.

A Brain is pybrain's schema in one workspace: each method one call of a brain.*
SQL function. Every call is a transaction its connector opens in the Brain's scope.
Brain(conn) uses one connection of its own and connects again after a server
restart; Brain(connector=PoolConnector(pool), principal=...) takes a pooled
connection for each call and runs it as the principal (pybrain.connector).

The purposes (open_brain):
- "configured": as configured (BRAIN_DATABASE_URL, else the embedded database),
  migrating when needed: the CLI's commands, `brain mcp`, the dashboard's server,
  `brain serve`'s check, `brain worker`, scripts (Brain.open);
- "person": the configured Brain on the owner's URL, for a person's decision the
  agent's role may not make (its calls run as brain_owner on the installer's);
- "admin": the same without an actor: the owner's commands (workspaces, roles);
- "installer": on the installer's own connection (`brain init`, a migration);
- "hook": on a hook's connection, each transaction within the hook's time;
- "pooled": a principal's Brain on a pool (`brain serve`, the dashboard's requests).
"""

from __future__ import annotations

from typing import Any

import psycopg

from pybrain import db
from pybrain.api.embedding import Embeddings
from pybrain.api.memories import Memories
from pybrain.api.sessions import Sessions
from pybrain.config import Settings
from pybrain.connector import Connector, Principal

PURPOSES = ("configured", "person", "admin", "installer", "hook", "pooled")


class Brain(Memories, Sessions, Embeddings):
    """pybrain's schema in one workspace: each method one call of a brain.* SQL function
    (see the module's text)."""

    @classmethod
    def open(cls, settings: Settings | None = None, *, actor: str | None = None) -> Brain:
        """Connect as configured, starting the embedded database and migrating when needed."""
        return open_brain("configured", settings, actor=actor, kind=cls)


def open_brain(
    purpose: str,
    settings: Settings | None = None,
    *,
    actor: str | None = None,
    conn: psycopg.Connection | None = None,
    conninfo: str | None = None,
    connector: Connector | None = None,
    principal: Principal | None = None,
    embedder_spec: str | None = None,
    via: str | None = None,
    reader: Connector | None = None,
    statement_timeout: str | None = None,
    kind: type[Brain] | None = None,
) -> Brain:
    """A Brain for a purpose (PURPOSES; see the module's text). settings: the environment's
    when not given (not read for a pooled Brain). conn (installer, hook): the connection it
    runs on, and conninfo its URL; connector, principal, embedder_spec, via, reader (pooled):
    the pool, whom it runs as, the embedder before any space is active, how the client came
    and a replica's pool; statement_timeout (hook): each transaction's. kind: a subclass of
    Brain to build (Brain.open of a subclass)."""
    if purpose == "pooled":
        assert principal is not None
        brain = _build(
            connector=connector,
            principal=principal,
            workspace=principal.workspace,
            embedder_spec=embedder_spec,
            actor=actor,
            via=via,
        )
        brain.reader = reader
        return brain
    settings = settings or Settings.from_env()
    if purpose == "configured":
        return _configured(settings, actor, kind or Brain)
    if purpose == "person":
        url = db.admin_url(settings)
        return _build(
            db.connect(url),
            workspace=settings.workspace,
            embedder_spec=settings.embedder,
            actor=actor,
            conninfo=url,
        ).run_as_owner()
    if purpose == "admin":
        return _build(db.connect(db.admin_url(settings)), workspace=settings.workspace).run_as_owner()
    if purpose == "installer":
        return _build(conn, workspace=settings.workspace, embedder_spec=settings.embedder).run_as_owner()
    if purpose == "hook":
        brain = _build(
            conn,
            workspace=settings.workspace,
            embedder_spec=settings.embedder,
            actor=actor,
            conninfo=conninfo,
        )
        # Each call's transaction within the hook's time (SET LOCAL: no startup option,
        # which PgBouncer refuses, and nothing left on a pooled server connection).
        brain.statement_timeout = statement_timeout
        return brain
    raise ValueError(f"no purpose {purpose!r}: one of {', '.join(PURPOSES)}")


def _build(
    conn: psycopg.Connection | None = None, *, kind: type[Brain] | None = None, **kwargs: Any
) -> Brain:
    """The one construction of a Brain in pybrain (of kind, a subclass, when given)."""
    return (kind or Brain)(conn, **kwargs)


def _configured(settings: Settings, actor: str | None, kind: type[Brain]) -> Brain:
    """As configured, starting the embedded database and migrating when needed."""
    url = db.database_url(settings)
    conn = db.connect(url)
    brain = _configured_on(conn, settings, actor, url, kind)
    if not db.is_current(conn):
        # First use without `brain init`, or a new pybrain on an older schema:
        # the owner migrates (on the embedded server, then connect as the application role).
        with db.connect(db.admin_url(settings)) as admin:
            db.migrate(admin)
            owner = open_brain("installer", settings, conn=admin)
            if owner.active_space() is None:
                owner.use_embedding_space(owner.configured_embedder())
            if not settings.database_url:
                db.ensure_app_role(admin, settings.home, settings.workspace)
        if db.database_url(settings) != url:
            conn.close()
            url = db.database_url(settings)
            brain = _configured_on(db.connect(url), settings, actor, url, kind)
    if settings.read_database_url:
        brain.use_reader(settings.read_database_url)
    return brain


def _configured_on(
    conn: psycopg.Connection, settings: Settings, actor: str | None, url: str, kind: type[Brain]
) -> Brain:
    return _build(
        conn,
        kind=kind,
        workspace=settings.workspace,
        embedder_spec=settings.embedder,
        actor=actor,
        conninfo=url,
    )
