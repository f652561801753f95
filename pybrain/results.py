"""The shapes of the main calls' results, as the SQL functions return them.

These are TypedDicts: at run time a result is the plain dict psycopg makes of
a row (or the dict of a jsonb value), so nothing changes for a caller; they
name the columns and keys for a reader and a type checker. The database
defines them (the composite types brain.search_result and brain.memory_brief,
the jsonb of brain.recall, brain.history and brain.boot_session), and
tests/test_connector.py checks that these agree with it. Times inside jsonb
are ISO 8601 texts; times of a row are datetimes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict


class SearchResult(TypedDict):
    """One row of brain.search (the composite type brain.search_result)."""

    id: int
    kind: str
    category: str
    project: str
    headline: str
    preview: str
    score: float
    vector_rank: int | None
    lexical_rank: int | None
    fuzzy_rank: int | None
    similarity: float | None
    state: str
    pinned: bool
    superseded_by: int | None
    current_id: int | None
    via_skill_trigger: str | None
    created_at: datetime
    flag_reasons: list[str] | None
    relevance: float | None
    source_system: str | None
    source_ref: str | None
    metadata: dict[str, Any] | None
    thread: str | None
    position: int | None
    neighbour_of: int | None
    newer_related: int | None
    verdict: float | None
    # depends on a changed fact (brain.stale): {"on": superseded id, "by": its replacement, "values": [...]}
    stale: dict[str, Any] | None


class MemoryBrief(TypedDict):
    """One row of brain.list_recent (the composite type brain.memory_brief)."""

    id: int
    kind: str
    category: str
    project: str
    headline: str
    preview: str
    state: str
    pinned: bool
    created_at: datetime


class Memory(TypedDict, total=False):
    """brain.recall: the memory's columns (brain.memory_json), its kind's details
    (severity, halflife_days, task status, ...), its annotations, and what recall adds:
    banner, current_id and folds. Keys of other kinds' details are absent."""

    id: int
    kind: str
    category: str
    origin: str
    project: str
    headline: str
    body: str
    tags: list[str]
    people: list[str]
    topics: list[str]
    action_items: list[str]
    metadata: dict[str, Any]
    state: str
    pinned: bool
    importance: float
    skill_trigger: dict[str, Any] | None
    upvotes: int
    downvotes: int
    access_count: int
    last_accessed: str | None
    last_confirmed_at: str | None
    record_version: int
    source_agent: str | None
    session_id: int | None
    source_system: str | None
    source_ref: str | None
    source_hash: str | None
    context: str | None
    supersedes: int | None
    superseded_by: int | None
    superseded_at: str | None
    supersede_reason: str | None
    expires_at: str | None
    forget_reason: str | None
    replaced_by: int | None
    dormant_after: str | None
    forgotten_at: str | None
    archived_at: str | None
    flag_reasons: list[str]
    thread: str | None
    position: int | None
    created_at: str
    updated_at: str
    annotations: list[dict[str, Any]]
    # added by brain.recall
    banner: str | None
    current_id: int | None
    folds: list[dict[str, Any]]


class HistoryVersion(TypedDict):
    """One version of a supersede chain (brain.history's chain, oldest first)."""

    id: int
    headline: str
    state: str
    created_at: str
    superseded_by: int | None
    superseded_at: str | None
    reason: str | None


class HistoryEvent(TypedDict):
    """One audit event of a chain's memories (brain.history's events)."""

    id: int
    action: str
    actor: str
    at: str
    detail: dict[str, Any]


class History(TypedDict):
    """brain.history: a memory's whole supersede chain and the audit events of its versions."""

    id: int
    current_id: int
    chain: list[HistoryVersion]
    events: list[HistoryEvent]


class BootPayload(TypedDict):
    """brain.boot_session: the new session and its boot payload (brain.boot_payload).

    sections holds the blockers, pinned, patterns, tasks, skills, siblings,
    action_items, handoff (and trajectories, pack, snapshot when there are any);
    dropped, what the token budget left out; lines, the payload's fixed lines as
    render_boot shows them."""

    session_id: int
    source: str
    project: str
    task: str | None
    budget: int
    tokens: int
    sections: dict[str, Any]
    dropped: dict[str, int]
    more: dict[str, Any]
    lines: dict[str, Any]
    rebooted: list[int]
    sessions_ended: int


class Skill(TypedDict):
    """One row of brain.list_skills."""

    name: str
    id: int
    headline: str
    keywords: Any
    projects: Any
    always_on: bool
