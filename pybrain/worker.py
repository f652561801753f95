"""Embedding and indexing after a write: the queue, the HNSW index, the outcomes.

A write that could not embed queues its memory (brain.pending_embeddings); a
large observe batch leaves its vectors out of the HNSW index (brain.index_vectors).
`brain worker` runs `run()`, which embeds the queue and indexes what waits, on
every notification; a one-off command (observe, import, ingest) calls `settle()`
so that it leaves nothing waiting. `count()` adds up what a batch of embeddings
did, `reconcile()` reads the final outcome of rows whose dedup was still owed.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any

import psycopg

from pybrain.errors import BrainError, DatabaseUnavailable, EmbedderError


@dataclass
class Outcomes:
    """What embedding and indexing did, added up (brain worker --json prints them)."""

    embedded: int = 0  # vectors attached, whatever their dedup then did
    updated: int = 0  # ... merged into a longer version
    skipped: int = 0  # ... folded into an existing memory
    flagged: int = 0  # ... kept, flagged as related to another
    failed: int = 0  # texts the embedder refused, to be tried again
    parked: int = 0  # ... refused embedding_max_attempts times
    released: int = 0  # refused texts made due again (--retry-failed)
    indexed: int = 0  # vectors of large batches put into the HNSW index
    folded: int = 0  # ... whose memory folded into a near-identical one

    def __iadd__(self, other: Outcomes) -> Outcomes:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self

    @property
    def results(self) -> int:
        """How many queued texts were handled: embedded or refused."""
        return self.embedded + self.failed + self.parked

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def count(results: Iterable[Any]) -> Outcomes:
    """The outcomes of one batch of brain.embed_pending's results (WriteResult)."""
    out = Outcomes()
    for r in results:
        if r.action in ("failed", "parked"):
            setattr(out, r.action, getattr(out, r.action) + 1)
            continue
        out.embedded += 1
        if r.action in ("updated", "skipped"):
            setattr(out, r.action, getattr(out, r.action) + 1)
        elif r.duplicate_of:
            out.flagged += 1
    return out


def drain_queue(
    brain: Any, batch: int = 64, into: Outcomes | None = None, each: Callable[[Outcomes], None] | None = None
) -> Outcomes:
    """Embed the queue batch by batch until it is empty (a refused text is not due
    again at once), adding each batch's outcomes to `into` as it is done (an outage
    midway keeps what was done) and giving them to `each`. Returns `into`."""
    out = Outcomes() if into is None else into
    while results := brain.embed_pending(batch):
        done = count(results)
        out += done
        if each:
            each(done)
    return out


def drain_index(
    brain: Any, into: Outcomes | None = None, each: Callable[[dict[str, Any]], None] | None = None
) -> Outcomes:
    """Index the vectors large batches left out of the HNSW index, step by step,
    adding to `into`; each step's result (brain.index_vectors) goes to `each`."""
    out = Outcomes() if into is None else into
    for done in brain.index_waiting():
        out.indexed += done["indexed"]
        out.folded += done["folded"]
        if each:
            each(done)
    return out


def settle(brain: Any, *, queue: bool = True, batch: int = 64) -> Outcomes:
    """What `brain worker` would do next, done now: drain the index, then (with queue)
    the embedding queue. A one-off write leaves nothing waiting."""
    out = drain_index(brain)
    if queue:
        drain_queue(brain, batch, out)
    return out


def reconcile(brain: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A batch write's rows (brain.observe) with the final outcome of those whose
    near-identical dedup was still owed: a row folded meanwhile names the memory it
    folded into; `provisional` stays true only where the dedup is still owed."""
    final = {
        o["memory_id"]: o
        for o in brain.write_outcomes([r["memory_id"] for r in rows if r.get("provisional")])
    }
    for r in rows:
        o = final.get(r["memory_id"]) if r.get("provisional") else None
        if o is not None and o["outcome"] == "folded":
            r.update(action="folded", memory_id=o["current_id"], duplicate_of=o["current_id"])
        r["provisional"] = bool(o and o["provisional"])
    return rows


class Stop:
    """SIGTERM asks the worker to stop: after the batch at hand, or at once while it
    waits for a notification (nothing to finish then)."""

    def __init__(self) -> None:
        self.now = False
        self.idle = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self.request)

    def request(self, *_: Any) -> None:
        self.now = True
        if self.idle:
            raise KeyboardInterrupt

    def pause(self, seconds: float) -> None:
        ends = time.monotonic() + seconds
        while not self.now and time.monotonic() < ends:
            time.sleep(min(0.2, max(0.0, ends - time.monotonic())))


def run(
    brain: Any,
    *,
    once: bool,
    batch: int,
    poll: float,
    retry_failed: bool,
    stop: Stop,
    say: Callable[[str], None],
    talk: bool,
) -> Outcomes:
    """Embed the queue (LISTEN brain_embedding) and index what waits, until stopped
    (or once). `say` gets a line for each retry after an outage and, with talk, for
    each batch. Without once, a lost database or an unreachable embedder does not
    stop it: it waits, reconnects, listens again and goes on."""
    totals = Outcomes()
    # An index rebuild of a large space outlasts the application role's statement_timeout:
    # every call's transaction sets its own (SET LOCAL, on whichever connection runs it;
    # nothing is set for the session, which a pooler would hand to its next client).
    brain.statement_timeout = "30min"
    if retry_failed:
        totals.released = brain.retry_failed_embeddings()
    listener = None
    backoff = 1.0
    if talk:
        say(f"worker: embedding with {brain.embedder.space}; Ctrl-C to stop")

    def embedded(counts: Outcomes) -> None:
        if talk:
            refused = (
                f"; the embedder refused {counts.failed + counts.parked} ({counts.parked} parked)"
                if counts.failed or counts.parked
                else ""
            )
            say(f"worker: embedded {counts.embedded}{refused}")

    def indexed(done: dict[str, Any]) -> None:
        if talk:
            say(
                f"worker: indexed {done['indexed']} vectors ({done['action']}, "
                f"{done['seconds']} s), {done['waiting']} waiting"
            )

    try:
        while not stop.now:
            try:
                if listener is None:
                    # Listen before reading the queue, so no notification falls in between.
                    listener = brain.new_connection()
                    listener.execute("LISTEN brain_embedding")
                drain_queue(brain, batch, totals, embedded)
                drain_index(brain, totals, indexed)
                if once:
                    break
                backoff = 1.0
                if stop.now:
                    break
                stop.idle = True
                try:
                    for _ in listener.notifies(timeout=poll, stop_after=1):
                        pass
                finally:
                    stop.idle = False
            except (BrainError, psycopg.OperationalError) as exc:
                lost = listener is not None and listener.closed
                outage = isinstance(exc, DatabaseUnavailable | EmbedderError | psycopg.OperationalError)
                if once and isinstance(exc, psycopg.OperationalError):
                    raise DatabaseUnavailable(str(exc).strip() or None) from exc
                if once or not (lost or outage or brain.conn.closed):
                    raise
                if lost or brain.conn.closed or isinstance(exc, DatabaseUnavailable):
                    if listener is not None:
                        listener.close()
                    listener = None  # listen again on a new connection
                message = exc.message if isinstance(exc, BrainError) else str(exc).strip()
                say(f"worker: {message}; trying again in {backoff:g} s")
                stop.pause(backoff)
                backoff = min(60.0, backoff * 2)
    except KeyboardInterrupt:
        pass
    finally:
        if listener is not None:
            listener.close()
    return totals
