"""Which code this is: the release and a build id that changes with the code.

Every build of one release was 0.1.0, so installing a newer wheel over an older one
answered "already installed" and kept the old code. The build id is a digest of the
code a build ships (pybrain's modules, templates and static files, and its SQL), the
same in a checkout and in the wheel made from it; the wheel's version carries it
(`0.1.0+b…`, read by hatchling from wheel_version()), and `brain --version` shows it.
This file is loaded on its own by the build: it imports nothing of pybrain.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

RELEASE = "0.1.0"
# What a build ships that is code (not caches).
_SUFFIXES = {".py", ".j2", ".html", ".css", ".js", ".svg", ".sql"}


def _files() -> list[tuple[str, Path]]:
    package = Path(__file__).resolve().parent
    packaged_sql = package / "sql"
    sql = packaged_sql if packaged_sql.is_dir() else package.parent / "sql"
    found = []
    for root, prefix in ((package, "pybrain/"), (sql, "sql/")):
        for path in root.rglob("*"):
            relative = path.relative_to(root)
            if root == package and relative.parts[0] == "sql":
                continue  # (the wheel's copy of sql/, read below)
            if "__pycache__" in relative.parts or path.suffix not in _SUFFIXES or not path.is_file():
                continue
            found.append((prefix + relative.as_posix(), path))
    return sorted(found)


def build_id() -> str:
    """A digest of the code, b and 12 hex digits."""
    digest = hashlib.sha256()
    for name, path in _files():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return "b" + digest.hexdigest()[:12]


def wheel_version() -> str:
    """The wheel's version: the release with the build id as its local part."""
    return f"{RELEASE}+{build_id()}"
