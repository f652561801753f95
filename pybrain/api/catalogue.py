"""The catalogue of the SQL API, read from the database (brain.catalogue).

Each public function of schema brain is one row: what pg_proc knows of it (its
volatility, whether it takes a request_key) and the traits declared beside it in
SQL (sql/functions/025a-tenancy-catalogue.sql). The transport asks it whether a
call is sent again after a connection lost during its COMMIT (idempotent), runs
on a replica (replica) and is a write a session need not read back (telemetry).
No list of function names is kept in Python.

It is read once a process, when first needed: with a reader, at the first call;
without one, only when a connection is lost during a COMMIT.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from typing import Any

QUERY = "SELECT * FROM brain.catalogue()"


@dataclass(frozen=True)
class Entry:
    """One public function of schema brain and its traits (brain.catalogue)."""

    name: str
    signatures: tuple[str, ...]
    volatility: str
    security_definer: bool
    keyed: bool
    read_only: bool
    idempotent: bool
    replica: bool
    telemetry: bool
    owner_only: bool

    @classmethod
    def of(cls, row: dict[str, Any]) -> Entry:
        values = {f.name: row[f.name] for f in fields(cls)}
        return cls(**{**values, "signatures": tuple(values["signatures"] or ())})


class Catalogue:
    """The rows of brain.catalogue() by name; a name it lacks has no trait."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.entries = {r["name"]: Entry.of(r) for r in rows}

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def names(self, trait: str) -> frozenset[str]:
        """The functions that have this trait (idempotent, replica, telemetry, keyed, ...)."""
        return frozenset(n for n, e in self.entries.items() if getattr(e, trait))

    def has(self, name: str, trait: str) -> bool:
        entry = self.entries.get(name)
        return entry is not None and bool(getattr(entry, trait))


_lock = threading.Lock()
_read: Catalogue | None = None


def cached() -> Catalogue | None:
    """The catalogue this process has read, if it has."""
    return _read


def keep(rows: list[dict[str, Any]]) -> Catalogue:
    """The catalogue of these rows (brain.catalogue()'s), kept for the process."""
    global _read
    with _lock:
        _read = Catalogue(rows)
    return _read


def forget() -> None:
    """Read it again at the next need (a test that changes the functions)."""
    global _read
    with _lock:
        _read = None
