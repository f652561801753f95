"""A memory as one value: the Python shape of brain.memory_draft (migrations 028 and 037).

Every write of the database builds one draft (brain.remember, brain.supersede,
brain.capture_context and brain.record_trajectory each fill one in through
brain._write; brain.observe_batch, brain.ingest_documents and an import build
theirs whole) and hands it to the write core, brain._store_memories. These classes mirror the composite types
field by field, in order; tests/test_draft.py checks them against a migrated
database, as tests/test_docgen.py checks pybrain.words against the CHECK
constraints. `register(conn)` lets psycopg read a draft the database returns
into a MemoryDraft, and write a MemoryDraft where SQL takes one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields
from typing import Any

import psycopg
from psycopg.types.composite import CompositeInfo, register_composite
from psycopg.types.json import Jsonb

Bigint = int  # an int the database holds as bigint (an id)
Vector = str  # a pgvector vector, as its text: "[0.1,0.2,...]"


@dataclass(frozen=True)
class RuleDetail:
    severity: str | None = None
    prior_severity: str | None = None


@dataclass(frozen=True)
class FactDetail:
    halflife_days: float | None = None


@dataclass(frozen=True)
class TaskDetail:
    status: str | None = None
    priority: int | None = None
    due_at: dt.datetime | None = None
    status_note: str | None = None
    status_changed_at: dt.datetime | None = None


@dataclass(frozen=True)
class IncidentDetail:
    what_was_wrong: str | None = None
    what_is_correct: str | None = None
    error_message: str | None = None
    command_attempted: str | None = None
    related_files: list[str] | None = None
    complexity: str | None = None


@dataclass(frozen=True)
class MemoryDraft:
    kind: str
    headline: str
    body: str = ""
    category: str | None = None
    origin: str = "explicit"
    project: str = ""
    tags: list[str] = field(default_factory=list)
    importance: float | None = None
    pinned: bool = False
    skill_trigger: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: list[float] | None = None
    embedding_space: str | None = None
    source_agent: str | None = None
    session_id: Bigint | None = None
    source_system: str | None = None
    source_ref: str | None = None
    source_hash: str | None = None
    expires_at: dt.datetime | None = None
    supersedes: Bigint | None = None
    foldable: bool = True
    rule: RuleDetail | None = None
    fact: FactDetail | None = None
    task: TaskDetail | None = None
    incident: IncidentDetail | None = None
    # what a stored row has beyond what a writer of one memory says (a batch's or an
    # import's, migration 037; None: the write core's default)
    normalized: str | None = None
    people: list[str] | None = None
    topics: list[str] | None = None
    action_items: list[str] | None = None
    state: str | None = None
    upvotes: int | None = None
    downvotes: int | None = None
    access_count: int | None = None
    last_accessed: dt.datetime | None = None
    superseded_at: dt.datetime | None = None
    supersede_reason: str | None = None
    last_confirmed_at: dt.datetime | None = None
    forget_reason: str | None = None
    dedup_pending: bool | None = None
    record_version: int | None = None
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None
    dormant_after: dt.datetime | None = None
    forgotten_at: dt.datetime | None = None
    archived_at: dt.datetime | None = None
    flag_reasons: list[str] | None = None
    flag_confirmed_at: dt.datetime | None = None
    flag_confirmed_by: str | None = None
    source_chunk: int | None = None
    context: str | None = None
    thread: str | None = None
    position: int | None = None
    # on its way in: the text as it was sent, and its vector checked in its space
    sent: str | None = None
    vector: Vector | None = None


# Each class, the composite type of schema brain it mirrors.
TYPES: dict[str, type] = {
    "rule_detail": RuleDetail,
    "fact_detail": FactDetail,
    "task_detail": TaskDetail,
    "incident_detail": IncidentDetail,
    "memory_draft": MemoryDraft,
}

# The database type of each Python annotation the classes use (tests/test_draft.py).
SQL_TYPES = {
    "str": "text",
    "str | None": "text",
    "float | None": "double precision",
    "int | None": "integer",
    "Bigint | None": "bigint",
    "bool": "boolean",
    "bool | None": "boolean",
    "dt.datetime | None": "timestamp with time zone",
    "list[str]": "text[]",
    "list[str] | None": "text[]",
    "list[float] | None": "double precision[]",
    "dict[str, Any]": "jsonb",
    "dict[str, Any] | None": "jsonb",
    "Vector | None": "vector",
}


def shape(cls: type) -> list[tuple[str, str]]:
    """(field, database type) of a class, in order: a nested detail as brain.<its type>."""
    by_class = {c: f"brain.{name}" for name, c in TYPES.items()}
    out = []
    for f in fields(cls):
        annotation = str(f.type)
        nested = next((t for c, t in by_class.items() if annotation == f"{c.__name__} | None"), None)
        out.append((f.name, nested or SQL_TYPES[annotation]))
    return out


def register(conn: psycopg.Connection[Any]) -> None:
    """Read and write the draft types as these classes on this connection."""
    for name in ("rule_detail", "fact_detail", "task_detail", "incident_detail", "memory_draft"):
        info = CompositeInfo.fetch(conn, f"brain.{name}")
        if info is None:
            raise LookupError(
                f"brain.{name} does not exist: the database needs migration 028 (brain db migrate)"
            )
        register_composite(info, conn, TYPES[name], make_sequence=astuple_shallow)


def astuple_shallow(obj: Any, info: CompositeInfo) -> tuple[Any, ...]:
    """A draft's fields in order, its details left as objects (each dumped as its own type) and
    its JSON objects as jsonb."""
    return tuple(Jsonb(v) if isinstance(v, dict) else v for v in (getattr(obj, f.name) for f in fields(obj)))
