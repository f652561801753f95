"""`brain import` of Claude Code's auto memory (MEMORY.md and its topic files): items
with provenance, kept in step with the files (fixtures in
tests/fixtures/transfer/claude-memory/, see tests/fixtures/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from helpers import rows

from pybrain.transfer import detect_format
from pybrain.transfer.claude_memory import items

FIXTURE = Path(__file__).parent / "fixtures" / "transfer" / "claude-memory"


def _active(conn: Any) -> dict[str, dict[str, Any]]:
    got = rows(
        conn,
        "SELECT * FROM brain.memory WHERE source_system = 'claude-memory' AND state = 'active' "
        "ORDER BY memory_id",
    )
    return {m["body"]: m for m in got}


def _import(brain_cli: Any, *args: str) -> dict[str, Any]:
    r = brain_cli("import", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_items_of_a_memory_file() -> None:
    got = items((FIXTURE / "MEMORY.md").read_text())
    assert [(n, c["section"], c["body"].splitlines()[0]) for n, c in got] == [
        (4, "Memory index > Build and test", "Use pnpm, never npm: the lockfile is pnpm-lock.yaml"),
        (
            5,
            "Memory index > Build and test",
            "Run the unit tests with `pnpm test`; the browser tests need `pnpm test:e2e`",
        ),
        (9, "Memory index > Conventions", "API handlers live in src/api, one file per resource"),
        (10, "Memory index > Conventions", "Dates cross the API as ISO 8601 strings in UTC"),
        (
            13,
            "Memory index > Topics",
            "[Debugging notes](debugging.md): the flaky checkout test and the cache",
        ),
    ]
    assert got[1][1]["body"].endswith("and a running dev server on port 5173"), "a continued item is one"
    assert got[0][1]["headline"] == "Memory index > Build and test", "headed by its heading path"
    topic = items((FIXTURE / "debugging.md").read_text())
    assert [n for n, _ in topic] == [8, 9], "the front matter is left out, lines still counted"


def test_import_keeps_the_memory_files_in_step(brain_cli, conn, tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURE, folder)
    assert detect_format(folder) == "claude-memory" and detect_format(folder / "MEMORY.md") == "claude-memory"
    out = _import(brain_cli, str(folder), "--project", "shop")
    assert out["counts"] == {"new": 7}
    first = _active(conn)
    assert len(first) == 7
    pnpm = first["Use pnpm, never npm: the lockfile is pnpm-lock.yaml"]
    assert (pnpm["origin"], pnpm["source_system"], pnpm["source_ref"], pnpm["project"]) == (
        "artifact",
        "claude-memory",
        "MEMORY.md",
        "shop",
    )
    assert pnpm["metadata"]["section"] == "Memory index > Build and test"
    assert {r["line_number"] for r in out["rows"] if r["ref"] == "debugging.md"} == {8, 9}

    # The same files again: nothing written (a row per unchanged file).
    assert _import(brain_cli, str(folder), "--project", "shop")["counts"] == {"unchanged": 2}

    # A changed line supersedes its old version (the item of its section no longer there),
    # a removed one is tombstoned, a gone topic file's items too; the others stay as they were.
    text = (folder / "MEMORY.md").read_text()
    text = text.replace(
        "Dates cross the API as ISO 8601 strings in UTC", "Dates cross the API as epoch milliseconds"
    )
    text = text.replace("- Use pnpm, never npm: the lockfile is pnpm-lock.yaml\n", "")
    (folder / "MEMORY.md").write_text(text)
    (folder / "debugging.md").unlink()
    out = _import(brain_cli, str(folder), "--project", "shop")
    assert out["counts"] == {"changed": 1, "removed": 3, "unchanged": 3}
    now = _active(conn)
    assert set(now) == {
        "API handlers live in src/api, one file per resource",
        "Run the unit tests with `pnpm test`; the browser tests need `pnpm test:e2e`\n"
        "  and a running dev server on port 5173",
        "Dates cross the API as epoch milliseconds",
        "[Debugging notes](debugging.md): the flaky checkout test and the cache",
    }
    old = first["Dates cross the API as ISO 8601 strings in UTC"]
    new = now["Dates cross the API as epoch milliseconds"]
    (was,) = rows(conn, "SELECT * FROM brain.memory WHERE memory_id = %s", (old["memory_id"],))
    assert was["state"] == "superseded" and was["superseded_by"] == new["memory_id"]
    gone = first["Use pnpm, never npm: the lockfile is pnpm-lock.yaml"]
    (was,) = rows(conn, "SELECT * FROM brain.memory WHERE memory_id = %s", (gone["memory_id"],))
    assert was["state"] == "tombstoned"
    kept = "API handlers live in src/api, one file per resource"
    assert now[kept]["memory_id"] == first[kept]["memory_id"], "an unchanged item of a changed section stays"


def test_one_memory_file_alone(brain_cli, conn) -> None:
    out = _import(brain_cli, str(FIXTURE / "MEMORY.md"), "--project", "shop")
    assert out["counts"] == {"new": 5}, "MEMORY.md named alone: its items, no topic file"
    assert {m["source_ref"] for m in _active(conn).values()} == {"MEMORY.md"}


def test_a_bad_memory_file_is_said_and_the_rest_goes_on(brain_cli, conn, tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURE, folder)
    (folder / "broken.md").write_bytes(b"- caf\xe9 au lait\n")
    r = brain_cli("import", str(folder), "--project", "shop")
    assert r.exit_code == 1
    assert "broken.md: rejected (None): not UTF-8 text" in r.output
    assert len(_active(conn)) == 7


def test_an_item_changed_beside_one_removed_supersedes_its_own_version(brain_cli, conn, tmp_path) -> None:
    """Within one section, the first item removed and the second reworded in the same edit:
    the reworded item supersedes its own old version (the one it is most like), not the
    removed one, which is tombstoned."""
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURE, folder)
    _import(brain_cli, str(folder), "--project", "shop")
    first = _active(conn)
    text = (folder / "MEMORY.md").read_text()
    text = text.replace("- Use pnpm, never npm: the lockfile is pnpm-lock.yaml\n", "")
    text = text.replace("Run the unit tests with `pnpm test`", "Run the unit tests with `pnpm test -- --run`")
    (folder / "MEMORY.md").write_text(text)
    out = _import(brain_cli, str(folder), "--project", "shop")
    assert out["counts"] == {"changed": 1, "removed": 1, "unchanged": 4}, out["counts"]
    tests_item = next(m for body, m in first.items() if body.startswith("Run the unit tests"))
    pnpm = first["Use pnpm, never npm: the lockfile is pnpm-lock.yaml"]
    new = next(m for body, m in _active(conn).items() if "--run" in body)
    states = dict(
        conn.execute(
            "SELECT memory_id, state FROM brain.memory WHERE memory_id = ANY(%s)",
            ([tests_item["memory_id"], pnpm["memory_id"]],),
        ).fetchall()
    )
    assert states == {tests_item["memory_id"]: "superseded", pnpm["memory_id"]: "tombstoned"}
    query = "SELECT superseded_by FROM brain.memory WHERE memory_id = %s"
    (was,) = rows(conn, query, (tests_item["memory_id"],))
    assert was["superseded_by"] == new["memory_id"]
