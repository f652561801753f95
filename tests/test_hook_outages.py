"""The hooks' plumbing when the database is not there: a database that accepts and never
answers, one that refuses, a stopped embedded one. Every hook returns within a second;
what PreCompact and SessionEnd could not write is kept on disk (BRAIN_HOME/spool) and
written by the next hook or command that reaches the database, once.

Each hook runs as Claude Code runs it: the command, its JSON on standard input, a new process.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_hooks import DOWN_URL, FIXTURES, SESSION, captured, payload, run_hook, sessions

CAPTURE = ("pre-compact", "session-end")
EVENTS = ("session-start", "prompt", *CAPTURE)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "claude" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    shutil.copy(FIXTURES / "transcript.jsonl", path)
    return path


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    path = tmp_path / "billing"
    path.mkdir()
    return path


@contextmanager
def silent_database() -> Iterator[str]:
    """A URL whose server accepts connections and never says a word (a hung PostgreSQL)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        yield f"postgresql://brain:brain@127.0.0.1:{silent.getsockname()[1]}/brain"


def spooled(home: Path) -> list[Path]:
    return sorted((home / "spool").glob("*.json"))


@pytest.mark.parametrize("event", EVENTS)
def test_every_hook_returns_within_a_second_from_a_database_that_never_answers(
    event, tmp_path, transcript, project_dir
) -> None:
    home = tmp_path / "home"
    with silent_database() as url:
        env = {"BRAIN_DATABASE_URL": url, "BRAIN_EMBEDDER": "hash", "BRAIN_HOME": str(home)}
        out, seconds = run_hook(env, event, payload(event, transcript, project_dir))
    assert out.returncode == 0
    assert out.stdout == b""
    notice = out.stderr.decode()
    assert len(notice.splitlines()) == 1, notice
    assert notice.startswith(f"pybrain {event} hook: the database did not answer within "), notice
    assert seconds < 1.0, f"{event} took {seconds:.2f} s"
    if event in CAPTURE:
        (record,) = spooled(home)
        assert f"kept in {record}" in notice
    else:
        assert spooled(home) == []


def test_what_capture_hooks_could_not_write_is_written_by_the_next_hook_once(
    cli_env, conn, tmp_path, transcript, project_dir
) -> None:
    home = Path(cli_env["BRAIN_HOME"])
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert out.returncode == 0, out.stderr

    # compaction while the database hangs, the session's end while it refuses connections
    with silent_database() as url:
        out, _ = run_hook(
            {**cli_env, "BRAIN_DATABASE_URL": url},
            "pre-compact",
            payload("pre-compact", transcript, project_dir),
        )
    assert b"kept in" in out.stderr
    with transcript.open("a", encoding="utf-8") as f:
        f.write((FIXTURES / "transcript_more.jsonl").read_text(encoding="utf-8"))
    out, _ = run_hook(
        {**cli_env, "BRAIN_DATABASE_URL": DOWN_URL},
        "session-end",
        payload("session-end", transcript, project_dir),
    )
    assert b"kept in" in out.stderr
    assert len(spooled(home)) == 2
    assert captured(conn) == []
    # Claude Code has cleaned its transcripts up meanwhile: the spool holds its own copy
    transcript.unlink()

    # The next session starts with the database back: what was kept is written first,
    # so its boot payload carries that session's handoff.
    start = payload("session-start", transcript, project_dir, session_id="next-session")
    out, _ = run_hook(cli_env, "session-start", start)
    assert out.returncode == 0, out.stderr
    refs = [r["source_ref"] for r in captured(conn)]
    assert refs == [f"{SESSION}/{u}" for u in ("a3", "a4", "a6", "a7", "a9", "b1", "b2")]
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Last request: CI is green on #482." in context
    first, second = sessions(conn)
    assert first["status"] == "ended" and second["status"] == "active"
    assert first["ended_at"] < second["started_at"], "the spooled end is the first session's, at its time"
    assert spooled(home) == []
    assert list((home / "spool").iterdir()) == [], "the transcript copies go with their records"

    # and never twice: another hook, a retried session end
    handoffs = conn.execute("SELECT count(*) FROM brain.handoff").fetchone()[0]
    out, _ = run_hook(cli_env, "session-start", start)
    assert out.returncode == 0, out.stderr
    assert len(captured(conn)) == 7
    assert conn.execute("SELECT count(*) FROM brain.handoff").fetchone()[0] == handoffs


def test_a_brain_command_writes_what_was_kept(cli_env, conn, brain_cli, transcript, project_dir) -> None:
    home = Path(cli_env["BRAIN_HOME"])
    out, _ = run_hook(
        {**cli_env, "BRAIN_DATABASE_URL": DOWN_URL},
        "pre-compact",
        payload("pre-compact", transcript, project_dir),
    )
    assert len(spooled(home)) == 1, out.stderr
    r = brain_cli("stats", "--json")
    assert r.exit_code == 0, r.output
    assert len(captured(conn)) == 5
    assert spooled(home) == []


def test_a_kept_capture_the_database_refuses_is_set_aside(
    cli_env, conn, brain_cli, transcript, project_dir
) -> None:
    """A record the database refuses (not an outage) is moved to spool/failed, not tried forever."""
    home = Path(cli_env["BRAIN_HOME"])
    out, _ = run_hook(
        {**cli_env, "BRAIN_DATABASE_URL": DOWN_URL},
        "session-end",
        payload("session-end", transcript, project_dir),
        "--source",
        "claude-code",
    )
    (record,) = spooled(home)
    data = json.loads(record.read_text())
    data["options"]["source"] = "two words"  # brain.end_session_of refuses it (BR009)
    record.write_text(json.dumps(data))
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    assert "set aside" in out.stderr.decode()
    assert spooled(home) == []
    assert [p.name for p in (home / "spool" / "failed").glob("*.json")] == [record.name]


def _embedded_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BRAIN_DATABASE_URL"}
    env.update(BRAIN_HOME=str(home), BRAIN_EMBEDDER="hash")
    return env


def _brain(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pybrain", *args],
        capture_output=True,
        text=True,
        env=_embedded_env(home),
        timeout=120,
    )


def test_capture_hooks_start_a_stopped_embedded_database(tmp_path, transcript, project_dir) -> None:
    home = tmp_path / "home"
    try:
        assert _brain(home, "init").returncode == 0
        assert _brain(home, "db", "stop").stdout.strip() == "stopped"
        env = {"BRAIN_HOME": str(home), "BRAIN_EMBEDDER": "hash", "BRAIN_DATABASE_URL": ""}
        out, _ = run_hook(env, "session-end", payload("session-end", transcript, project_dir))
        assert out.returncode == 0
        assert b"5 created" in out.stderr, out.stderr
        assert spooled(home) == []
        assert _brain(home, "db", "status").returncode == 0
    finally:
        _brain(home, "db", "stop")
