"""The typed methods of sessions: boot, end and handoff, the sessions of a seat, action
items, flagged memories and the scratchpad, each one call of a brain.* function.
Python adds only what the database cannot see: this host's name and process table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from pybrain.api.core import BrainCore
from pybrain.api.transport import new_request_key

if TYPE_CHECKING:
    from pybrain.results import BootPayload


class Sessions(BrainCore):
    """The calls about sessions (see the module's text)."""

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
