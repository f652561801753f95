"""Codex: `brain hook EVENT --source codex` fed the JSON Codex sends and its session file,
and `brain wire codex` (config.toml) and `brain wire codex --hooks` (.codex/hooks.json).
Where the shapes come from: tests/fixtures/README.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg
import pytest
from helpers import remember
from test_hooks import run_hook

from pybrain.hooks.transcript import read_turns

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hooks" / "codex"
SESSION = "019a4e2c-5b1f-7c30-9d8e-3f2a1b0c9d8e"
PAYLOADS = {
    "session-start": "session_start.json",
    "prompt": "user_prompt_submit.json",
    "pre-compact": "pre_compact.json",
    "session-end": "stop.json",
}


def payload(event: str, rollout: Path, cwd: Path, **changes: object) -> bytes:
    data = json.loads((FIXTURES / PAYLOADS[event]).read_text(encoding="utf-8"))
    data.update(transcript_path=str(rollout), cwd=str(cwd), **changes)
    return json.dumps(data).encode()


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    path = tmp_path / f"rollout-2026-11-20T09-00-00-{SESSION}.jsonl"
    shutil.copy(FIXTURES / "rollout.jsonl", path)
    return path


def captured(conn: psycopg.Connection) -> list[dict]:
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute(
            "SELECT memory_id, headline, body, source_ref, metadata, project FROM brain.memory "
            "WHERE source_system = 'codex' ORDER BY memory_id"
        )
        return cur.fetchall()


def test_the_turns_of_a_codex_session_file() -> None:
    turns = read_turns(FIXTURES / "rollout.jsonl", SESSION)
    assert [(t["role"], t["text"][:30], t["at"]) for t in turns] == [
        ("user", "The nightly billing export fai", "2026-11-20T09:00:01.100Z"),
        ("assistant", "The export job's role lacked s", "2026-11-20T09:00:06.000Z"),
    ], "no developer message, AGENTS.md, environment context, reasoning, tool call or event_msg copy"
    assert all(t["ref"].startswith(f"{SESSION}/") for t in turns)
    assert [t["ref"] for t in read_turns(FIXTURES / "rollout.jsonl", SESSION)] == [t["ref"] for t in turns]


def test_codex_sessions_boot_capture_and_hand_off(cli_env, conn, rollout, project_dir) -> None:
    # A rule written elsewhere (by a Claude Code session, say) reaches Codex's session start.
    remember(conn, kind="rule", severity="BLOCKER", headline="Never rerun the billing export by hand")
    out, _ = run_hook(
        cli_env, "session-start", payload("session-start", rollout, project_dir), "--source", "codex"
    )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Never rerun the billing export by hand" in answer["hookSpecificOutput"]["additionalContext"]
    (s,) = conn.execute("SELECT source, project, client_info FROM brain.session").fetchall()
    assert s[0] == "codex" and s[1] == "billing" and s[2]["client"] == "codex"
    assert s[2]["client_session"] == SESSION

    # The turn stops: its turns are captured from the session file, the handoff written.
    out, _ = run_hook(
        cli_env, "session-end", payload("session-end", rollout, project_dir), "--source", "codex"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"", "Stop reads no output of ours"
    rows = captured(conn)
    assert [r["metadata"]["role"] for r in rows] == ["user", "assistant"]
    assert {r["project"] for r in rows} == {"billing"}
    assert rows[0]["source_ref"].startswith(f"{SESSION}/")
    (status, handoff) = conn.execute("SELECT status, handoff FROM brain.session").fetchone()
    assert status == "ended"
    assert handoff.startswith("Written from the transcript of Codex")
    assert "lacked s3:PutObject" in handoff

    # Codex stops every turn: the next turn's Stop stores its turns and hands off again.
    with rollout.open("a", encoding="utf-8") as f:
        for at, role, kind, text in (
            ("2026-11-20T09:01:00.000Z", "user", "input_text", "Open a pull request with the policy change."),
            (
                "2026-11-20T09:01:09.000Z",
                "assistant",
                "output_text",
                "Opened #482 with the export role's new policy.",
            ),
        ):
            item = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            f.write(json.dumps({"timestamp": at, "type": "response_item", "payload": item}) + "\n")
    out, _ = run_hook(
        cli_env, "session-end", payload("session-end", rollout, project_dir), "--source", "codex"
    )
    assert out.returncode == 0, out.stderr
    assert b"2 created" in out.stderr
    assert len(captured(conn)) == 4

    # The next Codex session starts with the last turn's handoff.
    out, _ = run_hook(
        cli_env,
        "session-start",
        payload("session-start", rollout, project_dir, session_id="019a4e2c-0000-7000-8000-000000000002"),
        "--source",
        "codex",
    )
    assert out.returncode == 0, out.stderr
    assert "Opened #482" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]

    # Stop again with nothing new: nothing stored twice.
    out, _ = run_hook(
        cli_env, "session-end", payload("session-end", rollout, project_dir), "--source", "codex"
    )
    assert out.returncode == 0, out.stderr
    assert len(captured(conn)) == 4


def test_the_prompt_hook_answers_in_codex_shape(cli_env, conn, rollout, project_dir) -> None:
    remember(conn, kind="fact", headline="The billing export service listens on port 8443", project="billing")
    data = payload("prompt", rollout, project_dir)
    out, _ = run_hook(cli_env, "prompt", data, "--source", "codex")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "port 8443" in answer["hookSpecificOutput"]["additionalContext"]


def test_bad_codex_input_never_blocks(cli_env, conn, project_dir) -> None:
    out, _ = run_hook(cli_env, "session-end", b"{not json", "--source", "codex")
    assert out.returncode == 0 and out.stdout == b""
    assert b"pybrain session-end hook:" in out.stderr


def test_wire_codex_hooks_and_server(brain_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    r = brain_cli("wire", "codex", "--hooks", "--prompt-context")
    assert r.exit_code == 0, r.output
    hooks = json.loads((tmp_path / "repo" / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop"}
    (stop,) = hooks["Stop"][0]["hooks"]
    assert stop["command"].endswith("hook session-end --source codex") and stop["timeout"] == 60
    r = brain_cli("wire", "codex", "--hooks", "--prompt-context")
    assert "already up to date" in r.output

    config = tmp_path / "config.toml"  # the user's, outside the repository
    config.write_text(
        'model = "gpt-5.3-codex"\n\n[mcp_servers.pybrain]\ncommand = "old"\n\n[profiles.x]\nmodel = "o3"\n'
    )
    for _ in range(2):
        r = brain_cli("wire", "codex", "--write", str(config))
        assert r.exit_code == 0, r.output
    import tomllib

    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "gpt-5.3-codex" and parsed["profiles"] == {"x": {"model": "o3"}}
    server = parsed["mcp_servers"]["pybrain"]
    assert server["args"] == ["mcp", "--repository"] and server["command"] != "old"
    assert server["env"]["BRAIN_HOME"] == str(tmp_path)
