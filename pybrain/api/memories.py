"""The typed methods of memories: writes, reads, trajectories and packs, curation,
lifecycle, observed memories and observability, each one call of a brain.* function
(or two: a write's check, then the write with its embedding). No transport here:
every call goes through BrainCore.call."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from psycopg.types.json import Jsonb

from pybrain.api.core import BrainCore, WriteResult
from pybrain.api.transport import new_request_key
from pybrain.api.vectors import Float8Matrix
from pybrain.errors import BrainError, DatabaseUnavailable, EmbedderError, InvalidEmbedding

if TYPE_CHECKING:  # the shapes of results are for readers and type checkers: nothing to import at run time
    from pybrain.results import History, Memory, MemoryBrief, SearchResult, Skill

log = logging.getLogger("pybrain")


class Memories(BrainCore):
    """The calls about memories (see the module's text)."""

    # --- writes ------------------------------------------------------------

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
            embeddings=Float8Matrix(embeddings) if embeddings else None,
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
        if embeddings is not None and not isinstance(embeddings, Float8Matrix):
            embeddings = Float8Matrix(embeddings)
        return self.call(
            "ingest_documents", documents=Jsonb(list(documents)), embeddings=embeddings, **kwargs
        )


def _json_args(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Dicts are sent as jsonb."""
    return {k: Jsonb(v) if isinstance(v, dict) else v for k, v in kwargs.items()}
