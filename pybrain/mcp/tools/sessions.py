"""Tools of a session's life: boot, what it works on, the others, its end; action items between
sessions; scratch notes."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from pybrain.client import render_boot
from pybrain.mcp.session import Service, service_of
from pybrain.mcp.tools.fields import Project, RequestKey


def boot_session(
    ctx: Context,
    source: Annotated[
        str, Field(description="Your client: claude, cursor, ...", pattern=r"^\S+$", max_length=100)
    ] = "mcp",
    project: Project = "",
    task: Annotated[str | None, Field(description="What this session is about.", max_length=2000)] = None,
    token_budget: Annotated[int | None, Field(ge=100, le=100000)] = None,
) -> dict[str, Any]:
    """Start a session (other sessions see it). Returns what to read first: rules, open tasks,
    skills, the last handoff, other sessions, pending action items, within a token budget."""
    service = service_of(ctx)
    payload = service.brain.boot_session(
        source,
        project=project,
        task=task,
        cwd=os.getcwd(),
        pid=os.getppid(),
        token_budget=token_budget,
        client_info={"via": "mcp"},
    )
    service.session = payload["session_id"]
    return {"session_id": payload["session_id"], "tokens": payload["tokens"], "boot": render_boot(payload)}


def update_active_task(
    ctx: Context, task: Annotated[str, Field(min_length=1, max_length=2000)]
) -> dict[str, Any]:
    """Say what this session is working on now (other sessions see it)."""
    service = service_of(ctx)
    return service.brain.update_active_task(service.require_session(), task)


def list_active_sessions(
    ctx: Context, project: Annotated[str | None, Field(max_length=200)] = None
) -> dict[str, Any]:
    """Other live sessions (of a project), with what they are working on."""
    service = service_of(ctx)
    return {"sessions": service.brain.list_active_sessions(project=project, exclude_session=service.session)}


def end_session(
    ctx: Context,
    handoff: Annotated[
        str | None, Field(description="What the next session should know.", max_length=20000)
    ] = None,
    summary: Annotated[str | None, Field(max_length=4000)] = None,
    status: Annotated[str | None, Field(max_length=1000)] = None,
    blockers: list[str] | None = None,
    pending: list[str] | None = None,
) -> dict[str, Any]:
    """End this session with a handoff (and a snapshot) for the next one."""
    service = service_of(ctx)
    parts = (("summary", summary), ("status", status), ("blockers", blockers), ("pending", pending))
    snapshot = {k: v for k, v in parts if v}
    out = service.brain.end_session(service.require_session(), handoff, snapshot or None)
    service.session = None
    return out


def create_action_item(
    ctx: Context,
    text: Annotated[str, Field(min_length=1, max_length=2000)],
    project: Project = "",
    for_source: Annotated[str | None, Field(description="Only sessions of this client.")] = None,
    request_key: RequestKey = None,
) -> dict[str, Any]:
    """Raise an item other sessions must acknowledge before they can write."""
    service = service_of(ctx)
    return {
        "id": service.brain.create_action_item(
            text, project, for_source, service.session, request_key=request_key
        )
    }


def acknowledge_action_item(
    ctx: Context,
    id: Annotated[int, Field(ge=1)],
    response: Literal["will_execute", "already_done", "not_relevant"],
    note: Annotated[str | None, Field(max_length=2000)] = None,
) -> dict[str, Any]:
    """Answer an action item: will_execute, already_done or not_relevant. Writes of this session
    are blocked until its items are answered."""
    service = service_of(ctx)
    return service.brain.acknowledge_action_item(id, service.require_session(), response, note)


def _scope(service: Service, project: str | None) -> dict[str, Any]:
    """A scratch note's owner: the project named, else this session."""
    return {"project": project} if project is not None else {"session": service.require_session()}


def scratch_set(
    ctx: Context,
    key: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}$")],
    value: Annotated[str, Field(max_length=4000)],
    project: Annotated[str | None, Field(description="Keep it with this project instead.")] = None,
) -> dict[str, Any]:
    """Set a small note of this session (or of a project): working state, not a memory."""
    service = service_of(ctx)
    return service.brain.scratch_set(key, value, **_scope(service, project))


def scratch_get(
    ctx: Context, key: Annotated[str, Field(max_length=100)], project: str | None = None
) -> dict[str, Any]:
    """A scratch note's value (null when unset)."""
    service = service_of(ctx)
    return {"key": key, "value": service.brain.scratch_get(key, **_scope(service, project))}


def scratch_list(ctx: Context, project: str | None = None) -> dict[str, Any]:
    """All scratch notes of this session (or of a project)."""
    service = service_of(ctx)
    return {"notes": service.brain.scratch_list(**_scope(service, project))}
