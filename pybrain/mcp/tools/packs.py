"""Tools for what is recorded and loaded whole: trajectories and context packs."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from pybrain.mcp.session import service_of
from pybrain.mcp.tools.fields import Project, Source, Tags


def record_trajectory(
    ctx: Context,
    problem: Annotated[
        str, Field(description="What was wrong or had to be done.", min_length=1, max_length=4000)
    ],
    steps: Annotated[
        list[dict[str, Any] | str],
        Field(
            description='In order: {"action", "tool", "command", "files", "result", "failed": bool}.',
            max_length=500,
        ),
    ],
    outcome: Annotated[str, Field(description="What worked in the end.", max_length=4000)] = "",
    headline: Annotated[
        str | None, Field(description="One line; default: the problem's first words.")
    ] = None,
    project: Project = "",
    tags: Tags = None,
    supersedes: Annotated[int | None, Field(ge=1, description="An older trajectory this replaces.")] = None,
    reason: Annotated[str | None, Field(description="With supersedes: why.", max_length=2000)] = None,
    source: Source = None,
) -> dict[str, Any]:
    """Record how a problem was solved: the problem, the ordered steps (action, tool, command,
    files, result, failed) and the outcome, so a later session finds it. The same solution again
    is counted, not stored twice; supersedes replaces an older one (with a reason). Secrets are
    refused."""
    service = service_of(ctx)
    return service.brain.record_trajectory(
        problem,
        steps,
        outcome=outcome,
        headline=headline,
        project=project,
        tags=tags,
        supersedes=supersedes,
        reason=reason,
        source_agent=source,
        session_id=service.session,
    ).as_dict()


def load_pack(
    ctx: Context,
    name: Annotated[str, Field(min_length=1, max_length=63)],
    token_budget: Annotated[int | None, Field(ge=20, le=20000)] = None,
) -> dict[str, Any]:
    """Load a named context pack: the current memories of its definition, headlines within its
    token budget (recall an id for the whole memory)."""
    service = service_of(ctx)
    return service.brain.load_pack(name, token_budget=token_budget, session=service.session)
