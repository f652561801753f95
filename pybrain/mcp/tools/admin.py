"""Tools for operators: counts, maintenance, pruning, health, metrics, failed calls."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from pybrain.mcp.session import service_of


def stats(ctx: Context) -> dict[str, Any]:
    """Counts: memories by kind and state, skills, pending embeddings."""
    return service_of(ctx).brain.stats()


def maintain(
    ctx: Context, force: Annotated[bool, Field(description="Run even if it ran in the last 24 h.")] = False
) -> dict[str, Any]:
    """Run maintenance if due (decay, archive old incidents, stale tasks, expiry)."""
    return service_of(ctx).brain.maintain(if_due=not force)


def prune(
    ctx: Context,
    dry_run: bool = True,
    older_than: Annotated[str, Field(description="A PostgreSQL interval, at least 1 day.")] = "30 days",
    max_rows: Annotated[int, Field(ge=1, le=10000)] = 50,
) -> dict[str, Any]:
    """Delete long-forgotten or archived memories (never rules or pinned). Dry run by default."""
    return {"rows": service_of(ctx).brain.prune(dry_run=dry_run, older_than=older_than, max_rows=max_rows)}


def health(ctx: Context) -> dict[str, Any]:
    """Database, extensions, embedder reachability, counts, pending embeddings, uptime, tools."""
    from pybrain.health import health as full_health

    service = service_of(ctx)
    tools = sorted(ctx.mcp_server.tool_names)  # type: ignore[attr-defined]
    return full_health(service.brain, started_at=service.started_at, tools=tools)


def metrics(
    ctx: Context, window: Annotated[str, Field(description="A PostgreSQL interval.")] = "24 hours"
) -> dict[str, Any]:
    """Per tool over a window: calls, error rate, average and p99 latency; and the memory injected
    into agents: tokens per trigger and per session, and the share later used."""
    brain = service_of(ctx).brain
    return {
        "window": window,
        "tools": brain.metrics(window),
        "injections": {
            "by_trigger": brain.injection_metrics("trigger", window),
            "by_session": brain.injection_metrics("session", window),
        },
    }


def recent_errors(ctx: Context, max_results: Annotated[int, Field(ge=1, le=200)] = 20) -> dict[str, Any]:
    """The latest failed tool calls."""
    return {"errors": service_of(ctx).brain.recent_errors(max_results)}
