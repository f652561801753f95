"""Live pages without a connection each: one LISTEN per process, fanned out, and a cap
on the open streams of each token and each role.

The dashboard's Sessions page holds a server-sent-events stream open for as
long as it is shown. Each stream used to hold its own database connection (a
LISTEN of its own): 110 open pages of one read-only token held 97 of the
server's 100 connections. Here one Listener per server process holds the only
LISTEN connection, opened with the first subscriber and closed with the last,
reconnecting when the database goes away, and gives every notification to
every subscriber; StreamLimits caps how many streams one token and one role
may hold open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg import sql

log = logging.getLogger("pybrain.serve")

# A notification that tells subscribers to refresh because some may have been
# missed (the listening connection was lost and made again).
RECONNECTED = "\0reconnected"
# Live streams one token (or the local user) may hold open at once, and one role.
STREAMS_PER_TOKEN = 8
STREAMS_PER_ROLE = 32
# Notifications kept for a subscriber that does not read them (older ones are dropped:
# a subscriber only needs to know that something changed).
QUEUE = 64
RETRY = 1.0


class Listener:
    """One LISTEN connection for a channel, shared by every subscriber of this process."""

    def __init__(self, conninfo: str, channel: str) -> None:
        self.conninfo = conninfo
        self.channel = channel
        self._subscribers: set[asyncio.Queue[str]] = set()
        self._task: asyncio.Task[None] | None = None
        self.connections = 0  # connections made so far (for tests and logs)
        self.listening = asyncio.Event()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[str]]:
        """A queue that receives the payload of every notification on the channel."""
        queue: asyncio.Queue[str] = asyncio.Queue(QUEUE)
        self._subscribers.add(queue)
        if self._task is None or self._task.done():
            self.listening = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name=f"listen {self.channel}")
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)
            if not self._subscribers:
                await self.close()

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _broadcast(self, payload: str) -> None:
        for queue in list(self._subscribers):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(payload)

    async def _run(self) -> None:
        lost = False
        while self._subscribers:
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True, connect_timeout=2
                )
            except psycopg.Error as exc:
                log.warning("LISTEN %s: cannot connect: %s", self.channel, str(exc).strip()[:200])
                lost = True
                await asyncio.sleep(RETRY)
                continue
            self.connections += 1
            try:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                self.listening.set()
                if lost:
                    self._broadcast(RECONNECTED)
                async for note in conn.notifies():
                    self._broadcast(note.payload)
            except psycopg.Error as exc:
                log.warning("LISTEN %s: connection lost: %s", self.channel, str(exc).strip()[:200])
                lost = True
                self.listening.clear()
                await asyncio.sleep(RETRY)
            finally:
                with contextlib.suppress(Exception):
                    await conn.close()


class StreamLimits:
    """How many live streams each token and each role holds open, capped."""

    def __init__(self, per_token: int = STREAMS_PER_TOKEN, per_role: int = STREAMS_PER_ROLE) -> None:
        self.per_token = per_token
        self.per_role = per_role
        self._tokens: Counter[str] = Counter()
        self._roles: Counter[str] = Counter()
        self._lock = threading.Lock()

    def acquire(self, token: str, role: str) -> str | None:
        """None when a stream may open (and is counted), else why not."""
        with self._lock:
            if self._tokens[token] >= self.per_token:
                return f"this token already holds {self.per_token} live pages open"
            if self._roles[role] >= self.per_role:
                return f"the role {role} already holds {self.per_role} live pages open"
            self._tokens[token] += 1
            self._roles[role] += 1
            return None

    def release(self, token: str, role: str) -> None:
        with self._lock:
            self._tokens[token] -= 1
            self._roles[role] -= 1
            if self._tokens[token] <= 0:
                del self._tokens[token]
            if self._roles[role] <= 0:
                del self._roles[role]
