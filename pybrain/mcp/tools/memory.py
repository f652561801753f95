"""Tools that write memories: store, capture, supersede, forget, rate, annotate, pin, confirm, tasks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from pybrain.mcp.session import service_of
from pybrain.mcp.tools.fields import (
    Body,
    Category,
    Headline,
    Kind,
    MemoryId,
    OnRelated,
    Project,
    RequestKey,
    Severity,
    Source,
    Tags,
    TaskStatus,
)

Incident = Annotated[str | None, Field(description="Incidents.", max_length=4000)]


def remember(
    ctx: Context,
    kind: Annotated[Kind, Field(description="rule, fact, incident or task.")],
    headline: Headline,
    body: Body = "",
    category: Category | None = None,
    project: Project = "",
    severity: Annotated[Severity | None, Field(description="Rules only.")] = None,
    tags: Tags = None,
    pinned: Annotated[bool, Field(description="Load at every boot.")] = False,
    importance: Annotated[float | None, Field(ge=0, le=1)] = None,
    expires_at: Annotated[str | None, Field(description="Facts: hard expiry, ISO 8601.")] = None,
    halflife_days: Annotated[float | None, Field(gt=0, description="Facts: decay half-life.")] = None,
    status: Annotated[TaskStatus | None, Field(description="Tasks.")] = None,
    priority: Annotated[int | None, Field(ge=1, le=5, description="Tasks: 1 is highest.")] = None,
    due_at: Annotated[str | None, Field(description="Tasks: due date, ISO 8601.")] = None,
    what_was_wrong: Incident = None,
    what_is_correct: Incident = None,
    error_message: Incident = None,
    command_attempted: Incident = None,
    skill_trigger: Annotated[
        dict[str, Any] | None,
        Field(description='Makes it a skill: {"name","keywords","projects","always_on"}.'),
    ] = None,
    on_related: OnRelated = "refuse",
    reason: Annotated[
        str | None,
        Field(description="With on_related supersede: why the related one is replaced.", max_length=2000),
    ] = None,
    source: Source = None,
) -> dict[str, Any]:
    """Store a rule (how to behave; severity BLOCKER or PATTERN), fact (what is true), incident
    (what happened, what was learned) or task. Repeats are skipped; a related memory is refused
    with its id unless on_related says store or supersede. A memory that differs from it only in a
    number, version or name is stored and reported as `related`; with on_related supersede it is
    replaced. Supersede that finds nothing to replace is refused, saying why.
    Secrets are refused."""
    service = service_of(ctx)
    return service.brain.remember(
        kind,
        headline,
        body=body,
        category=category,
        project=project,
        severity=severity,
        tags=tags,
        pinned=pinned,
        importance=importance,
        expires_at=expires_at,
        halflife_days=halflife_days,
        status=status,
        priority=priority,
        due_at=due_at,
        what_was_wrong=what_was_wrong,
        what_is_correct=what_is_correct,
        error_message=error_message,
        command_attempted=command_attempted,
        skill_trigger=skill_trigger,
        on_related=on_related,
        reason=reason,
        source_agent=source,
        session_id=service.session,
    ).as_dict()


def capture_context(
    ctx: Context,
    text: Annotated[
        str, Field(description="Notes, a summary, a transcript.", min_length=1, max_length=50000)
    ],
    project: Project = "",
    source: Source = None,
) -> dict[str, Any]:
    """Keep the decisions, actions, gotchas and insights of a text (e.g. the end of a work
    session): each kept sentence is stored through the write gate; duplicates are skipped, not
    errors."""
    service = service_of(ctx)
    return {
        "sentences": service.brain.capture(text, project=project, source=source, session_id=service.session)
    }


def supersede(
    ctx: Context,
    old_id: MemoryId,
    headline: Headline,
    reason: Annotated[
        str, Field(description="Why the old memory is wrong now.", min_length=1, max_length=2000)
    ],
    body: Body = "",
    inherit_pinned: bool = False,
    severity: Severity | None = None,
    on_related: OnRelated = "refuse",
    source: Source = None,
) -> dict[str, Any]:
    """Replace a memory that is no longer true: the new one goes through the write gate; the old
    one is kept for history, out of default search."""
    service = service_of(ctx)
    return service.brain.supersede(
        old_id,
        headline,
        reason,
        body=body,
        inherit_pinned=inherit_pinned,
        severity=severity,
        on_related=on_related,
        source=source,
        session_id=service.session,
    ).as_dict()


def unsupersede(ctx: Context, id: MemoryId, source: Source = None) -> dict[str, Any]:
    """Revert a supersede: the old memory is current again."""
    return {"restored": service_of(ctx).brain.unsupersede(id, source=source)}


def forget(
    ctx: Context,
    id: MemoryId,
    reason: Annotated[str, Field(min_length=1, max_length=2000)],
    replaced_by: Annotated[int | None, Field(ge=1, description="The memory that replaces it.")] = None,
    source: Source = None,
) -> dict[str, Any]:
    """Tombstone a memory that should not be used any more (kept for audit). A reason is required."""
    return {"forgotten": service_of(ctx).brain.forget(id, reason, replaced_by=replaced_by, source=source)}


def rate(
    ctx: Context,
    id: MemoryId,
    direction: Literal["up", "down"],
    source: Source = None,
    request_key: RequestKey = None,
) -> dict[str, Any]:
    """Rate a memory up (it helped) or down (it misled); ratings weigh search."""
    return service_of(ctx).brain.rate(id, direction, source=source, request_key=request_key)


def annotate(
    ctx: Context,
    id: MemoryId,
    note: Annotated[str, Field(min_length=1, max_length=4000)],
    source: Source = None,
    request_key: RequestKey = None,
) -> dict[str, Any]:
    """Attach a note to a memory: a correction, a gotcha, a link. Recall shows it."""
    return {"annotation": service_of(ctx).brain.annotate(id, note, source=source, request_key=request_key)}


def pin(ctx: Context, id: MemoryId, source: Source = None) -> dict[str, Any]:
    """Pin a memory: loaded at every boot, weighted up in search."""
    return {"changed": service_of(ctx).brain.pin(id, source=source)}


def unpin(ctx: Context, id: MemoryId, source: Source = None) -> dict[str, Any]:
    """Unpin a memory."""
    return {"changed": service_of(ctx).brain.unpin(id, source=source)}


def confirm(ctx: Context, id: MemoryId, source: Source = None) -> dict[str, Any]:
    """Record that a memory is still true: a fact's decay starts over."""
    return service_of(ctx).brain.confirm(id, source=source)


def update_task(
    ctx: Context,
    id: MemoryId,
    status: TaskStatus | None = None,
    note: Annotated[str | None, Field(max_length=2000)] = None,
    priority: Annotated[int | None, Field(ge=1, le=5)] = None,
    due_at: Annotated[str | None, Field(description="ISO 8601.")] = None,
    source: Source = None,
) -> dict[str, Any]:
    """Move a task: open <-> blocked -> done; any update reopens a stale task."""
    return service_of(ctx).brain.update_task(
        id, status, note=note, priority=priority, due_at=due_at, source=source
    )
