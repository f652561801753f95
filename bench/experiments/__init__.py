"""One-off measurements kept for their figures; `make bench` runs none of them (README.md)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path


def parser(module: str, doc: str) -> argparse.ArgumentParser:
    """An experiment's argument parser: `python -m MODULE`, described by its docstring's first paragraph."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])


def copy_saved_workspace(server, size: int, copy: str, *, settings: dict[str, str] | None = None):
    """A copy (database `copy`) of the workspace of `size` memories the benchmark saved under the
    server's data directory, migrated by this checkout, the benchmark's client role a writer of
    it, the timers installed and its word frequencies sampled: the owner's connection
    (autocommit, workspace 1). settings: the copy's own server settings (ALTER DATABASE ...
    SET). Raises SystemExit when none was saved."""
    import psycopg

    from bench import latency
    from bench.server import CLIENT_ROLE
    from pybrain import db

    with server.admin() as admin:
        saved = admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY 1 DESC LIMIT 1",
            (f"bench_{size}_loaded%",),
        ).fetchone()
        if saved is None:
            raise SystemExit(f"no saved {size} workspace under {server.tmp}: run python -m bench first")
        admin.execute(f"DROP DATABASE IF EXISTS {copy} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {copy} TEMPLATE {saved[0]}")
        for name, value in (settings or {}).items():
            admin.execute(f"ALTER DATABASE {copy} SET {name} = '{value}'")
    owner = psycopg.connect(server.url(copy), autocommit=True)
    db.migrate(owner)
    owner.execute("SELECT set_config('brain.workspace', '1', false)")
    owner.execute("SELECT brain.grant_workspace(%s, 1, 'write')", (CLIENT_ROLE,))
    latency.install_timers(owner, latency.TIMERS)
    # the workspace's word frequencies, as the benchmark samples them before it times searches
    # (without them every common word of a query is counted, up to lexical_max_rows)
    owner.execute("SELECT brain.analyze_lexemes()")
    return owner


@contextlib.contextmanager
def saved_workspace_copy(
    data_dir: Path | str, size: int, copy: str, *, settings: dict[str, str] | None = None
) -> Iterator[tuple]:
    """The benchmark's server on data_dir and a copy of its saved workspace of `size` memories
    (copy_saved_workspace): (server, the owner's connection). After, the connection closed,
    the copy dropped and the server stopped, whatever happened."""
    from bench.server import BenchServer

    server = BenchServer(Path(data_dir))
    try:
        with copy_saved_workspace(server, size, copy, settings=settings) as owner:
            yield server, owner
    finally:
        with server.admin() as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {copy} WITH (FORCE)")
        server.close()
