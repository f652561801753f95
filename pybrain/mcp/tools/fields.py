"""Argument types the tools share: their JSON schema, bounds and descriptions as agents read them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pybrain.client import CATEGORIES

Kind = Literal["rule", "fact", "incident", "task"]
# What search and list_recent find: trajectories too (recorded with record_trajectory).
FoundKind = Literal["rule", "fact", "incident", "task", "trajectory"]
# (the gate checks categories in SQL; this list only shapes the tool schema)
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
MemoryId = Annotated[int, Field(description="Memory id (#n).", ge=1)]
Headline = Annotated[str, Field(description="One line, at most 15 words.", min_length=1, max_length=300)]
Body = Annotated[str, Field(description="The detail, at most 400 words.", max_length=20000)]
Project = Annotated[str, Field(description="Project scope; '' is global.", max_length=200)]
Source = Annotated[str | None, Field(description="Who acts.", max_length=100)]
Tags = Annotated[list[str] | None, Field(description="Tags.", max_length=50)]
RequestKey = Annotated[
    str | None,
    Field(
        description="A UUID; sent again with it, the call is answered as the first time.",
        min_length=1,
        max_length=255,
    ),
]
OnRelated = Annotated[
    Literal["refuse", "store", "supersede"],
    Field(description="If a related memory exists: refuse, store both, or supersede it."),
]
TaskStatus = Literal["open", "blocked", "done"]
Severity = Literal["BLOCKER", "PATTERN"]
ResultFormat = Annotated[
    Literal["compact", "json"],
    Field(description="compact: one line per memory; json: every field."),
]
