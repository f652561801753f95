"""Cursor: `brain hook EVENT --source cursor` fed the JSON Cursor sends and its agent
transcript, and `brain wire cursor --hooks` (.cursor/hooks.json). Where the shapes come
from: tests/fixtures/README.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg
import pytest
from helpers import remember
from test_hooks import run_hook

from pybrain.hooks.transcript import read_turns

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hooks" / "cursor"
CONVERSATION = "5c2f8a1e-3b4d-4e6f-8a9b-0c1d2e3f4a5b"
PAYLOADS = {
    "session-start": "session_start.json",
    "pre-compact": "pre_compact.json",
    "session-end": "stop.json",
    "session-end-final": "session_end.json",  # sessionEnd, which runs the session-end hook too
}


def payload(event: str, transcript: Path, root: Path, **changes: object) -> bytes:
    data = json.loads((FIXTURES / PAYLOADS[event]).read_text(encoding="utf-8"))
    data.update(transcript_path=str(transcript), workspace_roots=[str(root)], **changes)
    return json.dumps(data).encode()


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / f"{CONVERSATION}.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", path)
    return path


def captured(conn: psycopg.Connection) -> list[tuple]:
    return conn.execute(
        "SELECT source_ref, metadata->>'role', project FROM brain.memory "
        "WHERE source_system = 'cursor' ORDER BY memory_id"
    ).fetchall()


def test_the_turns_of_a_cursor_transcript() -> None:
    turns = read_turns(FIXTURES / "transcript.jsonl", CONVERSATION)
    assert [(t["role"], t["text"][:24]) for t in turns] == [
        ("user", "The nightly billing expo"),
        ("assistant", "Let me read the export j"),
        ("assistant", "The export job's role la"),
    ], "tool use and tool results left out"
    assert len({t["ref"] for t in turns}) == 3


def test_a_repeated_turn_is_its_own(tmp_path: Path) -> None:
    line = json.dumps({"role": "user", "message": {"content": [{"type": "text", "text": "yes"}]}})
    path = tmp_path / "t.jsonl"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    first, second = read_turns(path, "c")
    assert first["ref"] != second["ref"]


def test_cursor_sessions_boot_capture_and_hand_off(cli_env, conn, transcript, project_dir) -> None:
    remember(conn, kind="rule", severity="BLOCKER", headline="Never rerun the billing export by hand")
    out, _ = run_hook(
        cli_env, "session-start", payload("session-start", transcript, project_dir), "--source", "cursor"
    )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert set(answer) == {"additional_context"}, "Cursor's sessionStart output"
    assert "Never rerun the billing export by hand" in answer["additional_context"]
    source, project, cwd, info = conn.execute(
        "SELECT source, project, cwd, client_info FROM brain.session"
    ).fetchone()
    assert (source, project, cwd) == ("cursor", "billing", str(project_dir)), "cwd from workspace_roots"
    assert info["client_session"] == CONVERSATION and info["client"] == "cursor"

    out, _ = run_hook(
        cli_env, "session-end", payload("session-end", transcript, project_dir), "--source", "cursor"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b""
    rows = captured(conn)
    assert [r[1] for r in rows] == ["user", "assistant", "assistant"]
    assert all(r[0].startswith(f"{CONVERSATION}/") and r[2] == "billing" for r in rows)
    status, handoff = conn.execute("SELECT status, handoff FROM brain.session").fetchone()
    assert status == "ended" and handoff.startswith("Written from the transcript of Cursor")

    # The next conversation starts with that handoff; the same stop again stores nothing twice.
    out, _ = run_hook(
        cli_env,
        "session-start",
        payload("session-start", transcript, project_dir, conversation_id="c2", session_id="c2"),
        "--source",
        "cursor",
    )
    assert "lacked s3:PutObject" in json.loads(out.stdout)["additional_context"]
    out, _ = run_hook(
        cli_env, "session-end", payload("session-end", transcript, project_dir), "--source", "cursor"
    )
    assert out.returncode == 0, out.stderr
    assert len(captured(conn)) == 3


def test_memory_down_is_said_in_cursor_shape(cli_env, transcript, project_dir) -> None:
    env = {**cli_env, "BRAIN_DATABASE_URL": "postgresql://brain:brain@127.0.0.1:1/brain"}
    out, _ = run_hook(
        env, "session-start", payload("session-start", transcript, project_dir), "--source", "cursor"
    )
    assert out.returncode == 0
    assert "memory is unavailable" in json.loads(out.stdout)["additional_context"]
    assert b"pybrain session-start hook:" in out.stderr


def test_wire_cursor_hooks(brain_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".cursor" / "hooks.json"
    settings.parent.mkdir()
    other = {"command": "./audit.sh"}
    settings.write_text(json.dumps({"version": 1, "hooks": {"stop": [other]}}))
    r = brain_cli("wire", "cursor", "--hooks")
    assert r.exit_code == 0, r.output
    config = json.loads(settings.read_text())
    assert config["version"] == 1
    assert set(config["hooks"]) == {"sessionStart", "preCompact", "stop", "sessionEnd"}
    assert config["hooks"]["stop"][0] == other, "other hooks kept"
    assert config["hooks"]["stop"][1]["command"].endswith("hook session-end --source cursor")
    assert "already up to date" in brain_cli("wire", "cursor", "--hooks").output
    r = brain_cli("wire", "cursor", "--hooks", "--prompt-context")
    assert r.exit_code != 0 and "adds no context" in r.output


def test_cursor_markup_is_not_stored(cli_env, conn, tmp_path, project_dir) -> None:
    """Cursor wraps what the person typed in <user_query> and writes its own context
    (<user_info>, <attached_files>, <system_reminder>) into user lines: the turn is the
    person's words alone, and a line of Cursor's markup only is no turn."""
    turns = read_turns(FIXTURES / "transcript_tagged.jsonl", CONVERSATION)
    assert [(t["role"], t["text"]) for t in turns] == [
        ("user", "Staging pgbouncer moved to port 5433 yesterday. Which services still point at 6432?"),
        ("assistant", "Let me search the deploy configs for the old port."),
        (
            "assistant",
            "Two services still use 6432: invoices and ledger (deploy/invoices.env, deploy/ledger.env).",
        ),
        ("user", "Update both to 5433 and note it in the runbook."),
        ("assistant", "Updated invoices and ledger to 5433 and added the move to docs/runbook.md."),
    ]
    path = tmp_path / f"{CONVERSATION}.jsonl"
    shutil.copy(FIXTURES / "transcript_tagged.jsonl", path)
    out, _ = run_hook(
        cli_env, "session-start", payload("session-start", path, project_dir), "--source", "cursor"
    )
    assert out.returncode == 0, out.stderr
    out, _ = run_hook(cli_env, "session-end", payload("session-end", path, project_dir), "--source", "cursor")
    assert out.returncode == 0, out.stderr
    stored = conn.execute(
        "SELECT headline || ' ' || body FROM brain.memory WHERE source_system = 'cursor' ORDER BY memory_id"
    ).fetchall()
    assert stored[0][0].startswith("User: Staging pgbouncer moved to port 5433"), stored
    handoff = conn.execute("SELECT handoff FROM brain.session").fetchone()[0]
    for text in [row[0] for row in stored] + [handoff]:
        for tag in ("<user_query>", "</user_query>", "<user_info>", "<attached_files>", "<system_reminder>"):
            assert tag not in text, text
