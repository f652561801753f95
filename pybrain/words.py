"""The database's word lists: kinds, categories, states and origins of a memory.

The CHECK constraints of brain.memory are their source. tests/test_docgen.py
checks these tuples against a migrated database, and `make docs` writes them
into the documentation (`<!-- words: NAME -->` blocks, read from the same
constraints). Python code that lists one of them imports it from here.
"""

from __future__ import annotations

KINDS = ("rule", "fact", "incident", "task", "trajectory")
# brain.remember writes these; a trajectory comes with its steps (brain.record_trajectory).
REMEMBERED_KINDS = tuple(kind for kind in KINDS if kind != "trajectory")
CATEGORIES = (
    "decision",
    "idea",
    "meeting",
    "person",
    "insight",
    "journal",
    "reference",
    "procedural",
    "episodic",
    "learning",
    "gotcha",
    "action",
    "feature_request",
    "note",
)
STATES = ("active", "superseded", "archived", "tombstoned")
ORIGINS = ("explicit", "artifact", "observed", "overlay")

# Each list's column of the database: brain.<table>.<column> with a CHECK (column IN (...)).
SOURCES = {
    "kinds": ("memory", "kind"),
    "categories": ("memory", "category"),
    "states": ("memory", "state"),
    "origins": ("memory", "origin"),
}
