"""Tools that read memories: search, recall, the newest memories, a skill."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from pybrain.mcp.render import NOTHING_RELEVANT, render_found
from pybrain.mcp.session import service_of
from pybrain.mcp.tools.fields import FoundKind, MemoryId, ResultFormat


def search(
    ctx: Context,
    query: Annotated[str, Field(description="What to look for.", min_length=1, max_length=2000)],
    kinds: list[FoundKind] | None = None,
    project: Annotated[str | None, Field(description="This project and global memories.")] = None,
    tags: Annotated[list[str] | None, Field(description="Memories with every given tag.")] = None,
    include_superseded: bool = False,
    include_archived: bool = False,
    as_of: Annotated[str | None, Field(description="What was believed then, ISO 8601.")] = None,
    max_results: Annotated[int, Field(ge=1, le=50)] = 10,
    source_system: Annotated[
        str | None, Field(description="Only memories from this source (e.g. files).", max_length=200)
    ] = None,
    source_ref: Annotated[
        str | None,
        Field(
            description="Only this document, or every document under a folder ending in /.", max_length=2000
        ),
    ] = None,
    min_relevance: Annotated[
        float | None,
        Field(ge=0, le=1, description="Only results this relevant (0-1); 0: the nearest."),
    ] = None,
    neighbours: Annotated[
        int, Field(ge=0, le=10, description="Turns or chunks beside each hit to bring along.")
    ] = 0,
    format: ResultFormat = "compact",
) -> str:
    """Find memories by meaning, words and near-spellings, ranked; matching skills first.
    Headlines and previews: recall an id for the whole memory."""
    service = service_of(ctx)
    found = service.brain.search(
        query,
        kinds=kinds,
        project=project,
        tags=tags,
        include_superseded=include_superseded,
        include_archived=include_archived,
        as_of=as_of,
        max_results=max_results,
        source_system=source_system,
        source_ref=source_ref,
        min_relevance=min_relevance,
        neighbours=neighbours,
    )
    shown = render_found(found, format, NOTHING_RELEVANT)
    if found:
        # results handed to an agent are an injection (its tokens: those of the text it gets)
        service.brain.record_injection(
            "search", [r["id"] for r in found], (len(shown) + 3) // 4, session=service.session
        )
    return shown


def recall(ctx: Context, id: MemoryId) -> dict[str, Any]:
    """A whole memory by id, with its annotations. A superseded memory carries a banner naming the
    current version: use that one."""
    return service_of(ctx).brain.recall(id)


def list_recent(
    ctx: Context,
    kinds: list[FoundKind] | None = None,
    project: Annotated[str | None, Field(max_length=200)] = None,
    max_results: Annotated[int, Field(ge=1, le=100)] = 20,
    format: ResultFormat = "compact",
) -> str:
    """The newest memories (headlines and previews)."""
    brain = service_of(ctx).brain
    return render_found(brain.list_recent(kinds=kinds, project=project, max_results=max_results), format)


def stale(
    ctx: Context,
    project: Annotated[
        str | None, Field(description="This project and global memories.", max_length=200)
    ] = None,
    change: Annotated[
        int | None, Field(ge=1, description="Only what this supersede left (old or new id).")
    ] = None,
    max_results: Annotated[int, Field(ge=1, le=100)] = 20,
) -> dict[str, Any]:
    """What a supersede left to review: active memories that still state the old value of a
    superseded memory, each with the values, the superseded memory and the one that replaced it."""
    rows = service_of(ctx).brain.stale(project=project, change=change, max_results=max_results)
    return {"stale": rows}


def load_skill(
    ctx: Context,
    name: Annotated[str, Field(min_length=1, max_length=100)],
    project: Annotated[str | None, Field(max_length=200)] = None,
) -> dict[str, Any]:
    """Load a skill by name, in full."""
    return service_of(ctx).brain.load_skill(name, project=project)
