"""The SQL files by role: no file of sql/functions over 600 lines (issue 42). No database needed."""

from __future__ import annotations

import re

from pybrain import db

MOST_LINES = 600

# Files still over MOST_LINES. The list only shrinks: each file in it must exist
# and still be over, so a file split later leaves it.
OVER: set[str] = set()


def _lines(name: str) -> int:
    return len((db.sql_dir() / "functions" / name).read_text(encoding="utf-8").splitlines())


def test_no_function_file_is_over_600_lines() -> None:
    over = {p.name: _lines(p.name) for p in db.sql_files("functions") if _lines(p.name) > MOST_LINES}
    assert set(over) <= OVER, (
        f"over {MOST_LINES} lines: {dict(sorted((n, c) for n, c in over.items() if n not in OVER))};"
        " split the file by role (sql/functions/README.md)"
    )


def test_the_allowed_files_are_still_over_600_lines() -> None:
    names = {p.name for p in db.sql_files("functions")}
    for name in sorted(OVER):
        assert name in names, f"{name} is gone: take it out of OVER"
        assert _lines(name) > MOST_LINES, f"{name} has {_lines(name)} lines now: take it out of OVER"


# The role of each function file, by its number: the files are applied in this
# order of roles (sql/functions/README.md).
ROLES = ("helpers", "write core", "search", "API", "privileges")
ROLE_OF = {
    "001": "helpers",  # text: cleaning, secrets, signals
    "002": "helpers",  # settings
    "003": "helpers",  # embedding spaces, locks, nearest memories
    "004": "write core",  # the gate, dedup, folds; brain._store_memories and brain._write; the write guard
    "005": "search",
    **{f"{n:03d}": "API" for n in range(6, 25)},  # remember ... trajectories and packs
    "025": "privileges",  # who may execute what (tenancy)
    "026": "privileges",  # the schema's owner
}


def test_the_function_files_go_by_role() -> None:
    """Helpers first, then the write core, search, the API, and privileges last: a file's
    functions may use those of the roles before it, and the grants see every function."""
    names = [p.name for p in db.sql_files("functions")]
    roles = []
    for name in names:
        assert name[:3] in ROLE_OF, f"{name} has no role: add its number to ROLE_OF"
        roles.append(ROLES.index(ROLE_OF[name[:3]]))
    assert roles == sorted(roles), list(zip(names, (ROLES[r] for r in roles), strict=True))
    assert set(ROLE_OF) == {name[:3] for name in names}, "ROLE_OF names a file that is gone"


PRIVILEGE = r"\b(GRANT|REVOKE)\s+[A-Z, ]*\bON\s+(FUNCTION|ALL\s+FUNCTIONS)\b"


def test_privileges_are_granted_last() -> None:
    """No file before the privileges' grants or revokes the execution of a function: one
    loop over every function decides it (025-tenancy.sql)."""
    for path in db.sql_files("functions"):
        if ROLE_OF[path.name[:3]] == "privileges":
            continue
        text = path.read_text(encoding="utf-8")
        said = re.search(PRIVILEGE, text, re.IGNORECASE)
        assert said is None, f"{path.name} says {said.group(0)!r}: leave it to the privileges' files"


def _declared(function: str) -> int:
    """How many variables the DECLARE block of a function of sql/functions declares."""
    for path in db.sql_files("functions"):
        text = path.read_text()
        start = text.find(f"CREATE OR REPLACE FUNCTION {function}(")
        if start < 0:
            continue
        body = text[start:]
        block = body[body.index("\nDECLARE\n") + 9 : body.index("\nBEGIN\n")]
        code = re.sub(r"--[^\n]*", "", block)
        return code.count(";")
    raise AssertionError(f"{function} is in no function file")


def test_batch_writers_carry_their_chunks_as_one_value() -> None:
    """The batch writers' stages (stage, vectors, dedup, store, report) pass one array of
    brain.staged_memory, not one array per field: observe_batch had 61 declared variables,
    ingest_documents 77 and import_memories 59 (197 together); under 45 now."""
    counted = {f: _declared(f"brain.{f}") for f in ("observe_batch", "ingest_documents", "import_memories")}
    print(f"declared variables: {counted}, {sum(counted.values())} together")
    assert sum(counted.values()) < 45
