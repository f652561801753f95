"""`brain hook EVENT` fed the JSON Claude Code sends, with the database up and down,
and `brain wire claude-code --hooks` on a settings file that holds other hooks.

The payloads in tests/fixtures/hooks/ have the documented shapes of SessionStart,
UserPromptSubmit, PreCompact and SessionEnd; transcript.jsonl is a Claude Code
transcript (prompts, replies, thinking, tool calls and results, meta lines,
slash-command markup, a sub-agent line, a file-history snapshot).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from helpers import outage_output_ok, remember

from pybrain.hooks.transcript import read_turns
from pybrain.wire import CLAUDE_HOOKS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hooks"
SESSION = "8d0c6f3e-2b1a-4c59-9e0f-5a7d3c1b2e44"
DOWN_URL = "postgresql://brain:brain@127.0.0.1:1/brain"
PAYLOADS = {
    "session-start": "session_start.json",
    "prompt": "user_prompt_submit.json",
    "pre-compact": "pre_compact.json",
    "session-end": "session_end.json",
}


def payload(event: str, transcript: Path, cwd: Path, **changes: str) -> bytes:
    data = json.loads((FIXTURES / PAYLOADS[event]).read_text(encoding="utf-8"))
    data.update(transcript_path=str(transcript), cwd=str(cwd), **changes)
    return json.dumps(data).encode()


def run_hook(
    env: dict[str, str], event: str, data: bytes, *args: str
) -> tuple[subprocess.CompletedProcess, float]:
    """`brain hook EVENT` as Claude Code runs it: JSON on stdin, in a process of its own."""
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "pybrain", "hook", event, *args],
        input=data,
        capture_output=True,
        env={**environ, **env},
        timeout=120,
    )
    return out, time.monotonic() - started


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A copy of the fixture transcript, which a test may extend as the session goes on."""
    path = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", path)
    return path


def captured(
    conn: psycopg.Connection, columns: str = "memory_id, headline, body, source_ref, metadata, state, project"
) -> list[dict]:
    """The memories the hooks stored from transcripts, oldest first."""
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute(
            f"SELECT {columns} FROM brain.memory WHERE source_system = 'claude-code' ORDER BY memory_id"
        )
        return cur.fetchall()


def sessions(conn: psycopg.Connection) -> list[dict]:
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute("SELECT * FROM brain.session ORDER BY session_id")
        return cur.fetchall()


# --- the transcript ----------------------------------------------------------


def test_transcript_turns_are_the_prompts_and_replies() -> None:
    turns = read_turns(FIXTURES / "transcript.jsonl", SESSION)
    assert [(t["ref"], t["role"]) for t in turns] == [
        (f"{SESSION}/a3", "user"),
        (f"{SESSION}/a4", "assistant"),
        (f"{SESSION}/a6", "assistant"),
        (f"{SESSION}/a7", "user"),
        (f"{SESSION}/a9", "assistant"),
    ]
    # the reply's text only: no thinking, no tool call
    assert turns[1]["text"] == "I will look at the export job's IAM role and the bucket policy."
    assert turns[0]["at"] == "2026-11-20T09:01:00.000Z"


def test_a_line_being_written_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    text = (FIXTURES / "transcript.jsonl").read_text(encoding="utf-8")
    path.write_text(text + '{"type": "user", "uuid": "zz", "message": {"role": "us', encoding="utf-8")
    assert len(read_turns(path, SESSION)) == 5


# --- the database up ---------------------------------------------------------


def test_session_start_boots_and_injects_the_payload(cli_env, conn, transcript, project_dir) -> None:
    remember(
        conn,
        kind="rule",
        severity="BLOCKER",
        headline="Never rerun the billing export against production by hand",
    )
    out, _ = run_hook(
        cli_env, "session-start", payload("session-start", transcript, project_dir), "--project", "billing"
    )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "Never rerun the billing export against production by hand" in context
    (s,) = sessions(conn)
    assert (s["source"], s["project"], s["cwd"], s["status"]) == (
        "claude-code",
        "billing",
        str(project_dir),
        "active",
    )
    assert s["client_info"]["client_session"] == SESSION
    assert s["client_info"]["start"] == "startup"
    # bound to the client's process (here the test runner, which ran the hook)
    assert s["pid"] == os.getpid()


def test_compaction_and_session_end_capture_new_turns_and_hand_off(
    cli_env, conn, transcript, project_dir
) -> None:
    start = payload("session-start", transcript, project_dir)
    out, _ = run_hook(cli_env, "session-start", start, "--project", "billing")
    assert out.returncode == 0, out.stderr

    out, _ = run_hook(
        cli_env, "pre-compact", payload("pre-compact", transcript, project_dir), "--project", "billing"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b""
    rows = captured(conn)
    assert [r["source_ref"] for r in rows] == [f"{SESSION}/{u}" for u in ("a3", "a4", "a6", "a7", "a9")]
    assert rows[0]["headline"].startswith("User: The nightly billing export")
    assert rows[2]["metadata"] == {
        "role": "assistant",
        "at": "2026-11-20T09:01:20.000Z",
        "turn": f"{SESSION}/a6",
    }
    assert {r["project"] for r in rows} == {"billing"}
    assert not any("Sub-agent" in r["headline"] or "<command-name>" in r["headline"] for r in rows)

    (first,) = sessions(conn)
    assert first["status"] == "ended"
    assert first["handoff"].startswith(
        "Written from the transcript of Claude Code at compaction (auto): 2 prompts"
    )
    assert (
        "Last request: Good, update the policy in infra/iam/billing.tf and open a pull request."
        in first["handoff"]
    )
    assert "Last reply: Updated infra/iam/billing.tf" in first["handoff"]

    # Claude Code starts again after compaction: the new session gets the handoff.
    out, _ = run_hook(
        cli_env,
        "session-start",
        payload("session-start", transcript, project_dir, source="compact"),
        "--project",
        "billing",
    )
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Last reply: Updated infra/iam/billing.tf" in context

    # The session goes on; at its end only the turns added since are observed.
    with transcript.open("a", encoding="utf-8") as f:
        f.write((FIXTURES / "transcript_more.jsonl").read_text(encoding="utf-8"))
    end = payload("session-end", transcript, project_dir)
    out, _ = run_hook(cli_env, "session-end", end, "--project", "billing")
    assert out.returncode == 0, out.stderr
    assert b"2 created" in out.stderr
    rows = captured(conn)
    assert len(rows) == 7
    assert rows[-1]["source_ref"] == f"{SESSION}/b2"
    second = sessions(conn)[1]
    assert second["status"] == "ended"
    assert (
        "Last request: CI is green on #482. Merge it and rerun the export for 2026-11-19."
        in second["handoff"]
    )

    # Run again (a retried hook): nothing new is stored, and the same handoff not twice.
    out, _ = run_hook(cli_env, "session-end", end, "--project", "billing")
    assert out.returncode == 0, out.stderr
    assert b"no new turns; the same handoff as before" in out.stderr
    assert len(captured(conn)) == 7
    stored = conn.execute("SELECT count(*) FROM brain.handoff WHERE source = 'claude-code'").fetchone()[0]
    assert stored == 0


def test_a_secret_in_the_transcript_is_never_stored(cli_env, conn, transcript, project_dir) -> None:
    key = "AKIA2E3KQ7ZP4XWN6RLM"
    line = {
        "type": "user",
        "uuid": "s1",
        "sessionId": SESSION,
        "timestamp": "2026-11-20T09:30:00.000Z",
        "message": {
            "role": "user",
            "content": f"The export now fails with key {key}, use that for the rerun.",
        },
    }
    with transcript.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    out, _ = run_hook(cli_env, "session-end", payload("session-end", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    assert len(captured(conn)) >= 5
    everything = json.dumps(captured(conn)) + json.dumps(
        conn.execute("SELECT coalesce(json_agg(h.text), '[]') FROM brain.handoff h").fetchone()[0]
    )
    assert key not in everything
    handoff = conn.execute("SELECT text FROM brain.handoff").fetchone()[0]
    assert "Last request: (left out: it looks like it holds a secret)" in handoff


def test_prompt_adds_the_memories_it_brings_up(cli_env, conn, transcript, project_dir) -> None:
    rerun = remember(
        conn,
        kind="fact",
        headline="Billing export reruns: make billing-export DATE=YYYY-MM-DD from the ops box",
    )
    remember(conn, kind="fact", headline="The staging VPN certificate rotates every ninety days")
    out, _ = run_hook(cli_env, "prompt", payload("prompt", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert re.search(rf'#{rerun["memory_id"]} fact, \d+s ago: "Billing export reruns', context), context
    assert "VPN" not in context

    # Nothing relevant: nothing added.
    out, _ = run_hook(
        cli_env, "prompt", payload("prompt", transcript, project_dir, prompt="Rename the README headings")
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b""


def test_prompt_leaves_out_the_sessions_own_turns(cli_env, conn, transcript, project_dir) -> None:
    out, _ = run_hook(cli_env, "pre-compact", payload("pre-compact", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    ask = "who opened pull request 482 for infra/iam/billing.tf?"
    out, _ = run_hook(cli_env, "prompt", payload("prompt", transcript, project_dir, prompt=ask))
    assert out.returncode == 0, out.stderr
    assert out.stdout == b""  # the agent has its own turns in front of it already
    out, _ = run_hook(
        cli_env, "prompt", payload("prompt", transcript, project_dir, prompt=ask, session_id="other")
    )
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Assistant: Updated infra/iam/billing.tf" in context


def test_prompt_context_stays_within_its_budget(brain) -> None:
    for i in range(8):
        brain.remember(
            "fact", f"Billing export incident {i}: the finance bucket refused the nightly upload batch {i}"
        )
    full = brain.value(
        "prompt_context", prompt="billing export finance bucket", max_results=5, token_budget=400
    )
    assert len(full["ids"]) == 5
    small = brain.value("prompt_context", prompt="billing export finance bucket", token_budget=60)
    assert 0 < len(small["ids"]) < 3
    assert small["tokens"] <= 60
    assert brain.value("estimate_tokens", t=small["text"]) <= 60
    assert brain.value("prompt_context", prompt="   ")["text"] is None


def test_what_a_short_line_leaves_goes_to_the_lines_after_it(conn) -> None:
    """A captured reply is shown whole up to its share of the budget: what is left split among
    the lines still to come, so the room a one-line fact leaves is the next line's, not lost."""
    remember(conn, kind="fact", headline="Checkout tests run with make test-checkout")
    reply = (
        "The checkout tests run against a throwaway database: make test-checkout starts"
        " it, loads the fixtures from tests/fixtures/checkout, runs the suite with four workers and"
        " drops the database afterwards. A failure in the payment step usually means the card"
        " stub did not start; restart it with make stub-cards and run the failed test again with"
        " -k and its name. Flaky order tests were fixed by pinning the clock in conftest, so a"
        " new flake there is worth a ticket."
    )
    turns = [
        {"ref": "co/0", "role": "user", "text": "How do the checkout tests run?"},
        {"ref": "co/1", "role": "assistant", "text": reply},
    ]
    conn.execute(
        "SELECT count(*) FROM brain.observe_transcript(%s::jsonb, 'claude-code')", (json.dumps(turns),)
    )
    context = conn.execute(
        "SELECT brain.prompt_context(%s, token_budget => 220, max_results => 2)",
        ("what does make test-checkout do",),
    ).fetchone()[0]
    lines = [x for x in context["text"].splitlines() if x.startswith("- #")]
    assert len(lines) == 2, context["text"]
    assert "make test-checkout" in lines[0]
    # an even split (about 300 characters a line) cut the reply; the fact left it room
    assert reply[-60:] in lines[1], lines[1]
    assert context["tokens"] <= 220


TRIP = [
    ("user", "I just got back from Lisbon with my sister; we stayed in a guesthouse in Alfama."),
    ("assistant", "Alfama is lovely. Did you take the tram up to the castle?"),
    ("user", "Can you suggest a recipe for a quick weeknight curry?"),
    ("assistant", "Try a chickpea curry with coconut milk, spinach and garam masala."),
    ("user", "My sister wants to learn the guitar; which beginner books are good?"),
    ("assistant", "Hal Leonard's guitar method is a common first book."),
    ("user", "How do I keep basil alive on a windowsill?"),
    ("assistant", "Water it when the soil is dry and pinch off the flowers."),
]


def _observe_trip(conn) -> None:
    turns = [{"ref": f"trip/{i}", "role": role, "text": text} for i, (role, text) in enumerate(TRIP)]
    conn.execute(
        "SELECT count(*) FROM brain.observe_transcript(%s::jsonb, 'claude-code')", (json.dumps(turns),)
    )


def _relevance(conn, prompt: str) -> dict[int, float]:
    return dict(
        conn.execute(
            "SELECT id, relevance FROM brain.search(%s, min_relevance => 0, max_results => 20)", (prompt,)
        ).fetchall()
    )


def test_prompt_context_brings_a_relevant_answer_the_old_floor_dropped(conn) -> None:
    """Search's verdict decides whether anything is relevant, not each hit's own relevance: an
    evidence turn's relevance is often low, and the hook used to keep only hits 0.3 relevant."""
    _observe_trip(conn)
    ask = "what curry did you suggest with spinach?"
    relevance = _relevance(conn, ask)
    assert relevance and max(relevance.values()) < 0.3  # every hit under the old per-row floor
    context = conn.execute("SELECT brain.prompt_context(%s)", (ask,)).fetchone()[0]
    assert context["text"] is not None
    assert "Assistant: Try a chickpea curry with coconut milk, spinach and garam masala." in context["text"]
    assert context["tokens"] <= context["budget"]


def test_an_off_topic_prompt_gets_no_context(conn) -> None:
    """A prompt on something never stored gets nothing, even where one word of it matches a turn
    strongly (the old per-row floor injected that turn)."""
    _observe_trip(conn)
    for ask in ("guesthouse recommendations for Porto", "the mating season of the axolotl"):
        context = conn.execute("SELECT brain.prompt_context(%s)", (ask,)).fetchone()[0]
        assert context["text"] is None and context["ids"] == [] and context["tokens"] == 0, ask
    assert max(_relevance(conn, "guesthouse recommendations for Porto").values()) >= 0.3
    assert conn.execute("SELECT count(*) FROM brain.injection").fetchone()[0] == 0


def test_the_prompt_hook_never_embeds_private_text(brain, monkeypatch) -> None:
    """What the person wraps in <private> is stripped before the prompt is embedded: the
    embedder (a remote API, possibly) never receives it."""
    import contextlib

    from pybrain import hooks

    inner = brain.embedder
    sent: list[str] = []

    class Recording:
        provider, model, dims, space = inner.provider, inner.model, inner.dims, inner.space

        def embed(self, texts: list[str]) -> list[list[float]]:
            sent.extend(texts)
            return inner.embed(texts)

        def embed_one(self, text: str) -> list[float]:
            return self.embed([text])[0]

    @contextlib.contextmanager
    def opened(options, *, start: bool):
        yield brain

    monkeypatch.setattr(hooks.base, "_brain", opened)
    monkeypatch.setattr(hooks.base, "_hook_embedder", lambda _brain, *, remote: Recording())
    brain.remember("fact", "The staging database listens on port 6543")
    ask = "which port does the staging database use? <private>my password is hunter2-x</private>"
    answer = hooks.prompt({"prompt": ask, "session_id": "s1"}, hooks.Options())
    assert answer is not None and "6543" in answer["hookSpecificOutput"]["additionalContext"]
    assert sent == ["which port does the staging database use?"]
    sent.clear()
    assert hooks.prompt({"prompt": "<private>only mine: hunter2-x</private>"}, hooks.Options()) is None
    hooks.prompt({"prompt": "Open the PR. <private>the token is in ~/notes, line 4"}, hooks.Options())
    assert sent == ["Open the PR."]


def test_observe_transcript_refuses_malformed_turns(brain) -> None:
    from psycopg.types.json import Jsonb

    from pybrain.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="A turn is an object"):
        brain.call(
            "observe_transcript",
            turns=Jsonb([{"ref": "x", "role": "system", "text": "hi"}]),
            source_system="claude-code",
        )
    with pytest.raises(InvalidArgument, match="JSON array"):
        brain.call("observe_transcript", turns=Jsonb({"ref": "x"}), source_system="claude-code")
    assert brain.call("observe_transcript", turns=Jsonb([]), source_system="claude-code") == []


# --- the database down ---------------------------------------------------------


@pytest.mark.parametrize("event", list(PAYLOADS))
def test_a_hook_never_blocks_when_the_database_is_down(event, tmp_path, transcript, project_dir) -> None:
    env = {"BRAIN_DATABASE_URL": DOWN_URL, "BRAIN_EMBEDDER": "hash", "BRAIN_HOME": str(tmp_path)}
    out, seconds = run_hook(env, event, payload(event, transcript, project_dir))
    assert out.returncode == 0
    assert outage_output_ok(event, out.stdout), out.stdout
    if event in ("session-start", "prompt"):
        assert b"(the database is not reachable)" in out.stdout
    notice = out.stderr.decode()
    assert notice.startswith(f"pybrain {event} hook: the database is unavailable")
    assert len(notice.splitlines()) == 1
    assert seconds < dict(CLAUDE_HOOKS.values())[event]


def test_with_memory_down_the_model_is_told_once_a_session(tmp_path, transcript, project_dir) -> None:
    """The session's start says it in one line; its prompts do not say it again, and a prompt
    of a session whose start did not is told once."""
    env = {"BRAIN_DATABASE_URL": DOWN_URL, "BRAIN_EMBEDDER": "hash", "BRAIN_HOME": str(tmp_path)}

    def context(event: str, session: str) -> str | None:
        out, _ = run_hook(env, event, payload(event, transcript, project_dir, session_id=session))
        assert out.returncode == 0 and outage_output_ok(event, out.stdout), out.stdout
        return (
            json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"] if out.stdout.strip() else None
        )

    told = context("session-start", "s-down")
    assert told == (
        "pybrain: memory is unavailable this session (the database is not reachable); nothing was loaded."
    )
    assert context("prompt", "s-down") is None
    assert context("prompt", "s-other") == (
        "pybrain: memory is unavailable (the database is not reachable);"
        " nothing was recalled for this prompt."
    )
    assert context("prompt", "s-other") is None
    assert context("session-start", "s-other") == told  # a start always says it


def test_a_database_that_never_answers_meets_the_hooks_deadline(tmp_path, transcript, project_dir) -> None:
    with socket.socket() as silent:  # accepts connections, never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        env = {
            "BRAIN_DATABASE_URL": f"postgresql://brain:brain@127.0.0.1:{port}/brain",
            "BRAIN_EMBEDDER": "hash",
        }
        # a deadline shorter than the connection's wait (BRAIN_HOOK_CONNECT_TIMEOUT) comes first
        out, seconds = run_hook(env, "prompt", payload("prompt", transcript, project_dir), "--timeout", "0.2")
    assert out.returncode == 0
    assert outage_output_ok("prompt", out.stdout) and out.stdout, out.stdout
    assert "gave up after 0.2 s" in out.stderr.decode()
    assert seconds < dict(CLAUDE_HOOKS.values())["prompt"]


def test_input_that_is_not_the_hooks_json_is_a_notice(cli_env, project_dir) -> None:
    out, _ = run_hook(cli_env, "session-start", b"session started")
    assert out.returncode == 0
    assert out.stdout == b""
    assert "standard input is not the hook's JSON" in out.stderr.decode()


# --- brain wire claude-code --hooks --------------------------------------------

OTHER_SETTINGS = {
    "permissions": {"allow": ["Bash(make test)"]},
    "env": {"BRAIN_PROJECT": "billing"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]}
        ],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat NOTES.md"}]}],
    },
}


def test_wire_hooks_merges_and_is_idempotent(brain_cli, tmp_path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(OTHER_SETTINGS, indent=2))
    r = brain_cli("wire", "claude-code", "--hooks", "--settings", str(settings), "--project", "billing")
    assert r.exit_code == 0, r.output
    assert "added SessionStart, PreCompact, SessionEnd" in r.output
    first = settings.read_text()
    data = json.loads(first)
    assert data["permissions"] == OTHER_SETTINGS["permissions"] and data["env"] == OTHER_SETTINGS["env"]
    assert data["hooks"]["PreToolUse"] == OTHER_SETTINGS["hooks"]["PreToolUse"]
    assert data["hooks"]["SessionStart"][0] == OTHER_SETTINGS["hooks"]["SessionStart"][0]
    (ours,) = data["hooks"]["SessionStart"][1]["hooks"]
    assert ours["type"] == "command" and ours["timeout"] == 15
    assert ours["command"].endswith(" hook session-start --project billing")
    assert data["hooks"]["PreCompact"][0]["hooks"][0]["command"].endswith(
        " hook pre-compact --project billing"
    )
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["command"].endswith(
        " hook session-end --project billing"
    )
    assert "UserPromptSubmit" not in data["hooks"]

    r = brain_cli("wire", "claude-code", "--hooks", "--settings", str(settings), "--project", "billing")
    assert r.exit_code == 0, r.output
    assert "already up to date" in r.output
    assert settings.read_text() == first

    r = brain_cli(
        "wire",
        "claude-code",
        "--hooks",
        "--settings",
        str(settings),
        "--project",
        "billing",
        "--prompt-context",
    )
    assert "added UserPromptSubmit" in r.output
    prompt = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert prompt == [
        {"hooks": [{"type": "command", "command": prompt[0]["hooks"][0]["command"], "timeout": 5}]}
    ]
    r = brain_cli("wire", "claude-code", "--hooks", "--settings", str(settings), "--project", "billing")
    assert "removed UserPromptSubmit" in r.output
    assert settings.read_text() == first


def test_wire_hooks_writes_the_projects_local_settings_by_default(brain_cli, tmp_path, monkeypatch) -> None:
    """The hooks name this machine's brain by its path: they go to the project's settings of
    this machine (settings.local.json, out of git), not the shared settings.json."""
    monkeypatch.chdir(tmp_path)
    r = brain_cli("wire", "claude-code", "--hooks", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["path"] == ".claude/settings.local.json"
    assert not (tmp_path / ".claude" / "settings.json").exists()
    data = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert sorted(data["hooks"]) == ["PreCompact", "SessionEnd", "SessionStart"]
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith(" hook session-start")


def test_wire_hooks_refuses_what_it_cannot_merge(brain_cli, tmp_path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"hooks": {"SessionStart": {"command": "x"}}}')
    r = brain_cli("wire", "claude-code", "--hooks", "--settings", str(settings))
    assert r.exit_code == 1
    assert settings.read_text() == '{"hooks": {"SessionStart": {"command": "x"}}}'
    r = brain_cli("wire", "vscode", "--hooks")
    assert r.exit_code == 2


def test_without_the_embedded_database_running_a_hook_says_so(tmp_path, transcript, project_dir) -> None:
    env = {"BRAIN_HOME": str(tmp_path / "home"), "BRAIN_EMBEDDER": "hash"}  # no BRAIN_DATABASE_URL
    for event in ("prompt", "pre-compact", "session-end"):
        out, _ = run_hook(env, event, payload(event, transcript, project_dir))
        assert out.returncode == 0
        assert outage_output_ok(event, out.stdout), out.stdout
        assert out.stderr.decode().startswith(
            f"pybrain {event} hook: the database is unavailable: The embedded database is not running."
        )


# --- embeddings in a hook: the warm server or none ---------------------------------


def test_a_local_space_embeds_through_the_warm_server_only(tmp_path, monkeypatch) -> None:
    import threading

    from pybrain.embed import get_embedder, server
    from pybrain.errors import EmbedderError
    from pybrain.hooks.base import _warm_local

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    monkeypatch.setenv("BRAIN_EMBED_SERVER", "off")
    assert _warm_local() is None

    monkeypatch.setenv("BRAIN_EMBED_SERVER", "auto")
    warm = _warm_local()
    assert warm.space == "local:all-MiniLM-L6-v2"
    started = []
    monkeypatch.setattr(type(warm), "_start", lambda self: started.append(self.path))
    clock = time.monotonic()
    with pytest.raises(EmbedderError, match="no warm embedding server was running"):
        warm.embed(["the billing export failed"])
    assert time.monotonic() - clock < 5, "no model is loaded in the hook's process"
    assert started == [warm.path], "a server is started for the next call"

    # A server answering on the local space's socket (serving the 384-dimension hash
    # vectors, so that no model loads in the test): the hook's vectors come from it.
    warm.path.parent.mkdir(parents=True, exist_ok=True)
    thread = threading.Thread(target=server.serve, args=("hash", warm.path, 2.0), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not warm.path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    texts = ["the billing export failed", "rerun it for 2026-11-19"]
    assert warm.embed(texts) == get_embedder("hash").embed(texts)
    thread.join(15)


def test_a_missing_transcript_still_ends_the_session(cli_env, conn, tmp_path, project_dir) -> None:
    gone = tmp_path / "gone.jsonl"
    out, _ = run_hook(cli_env, "session-start", payload("session-start", gone, project_dir))
    assert out.returncode == 0, out.stderr
    out, _ = run_hook(cli_env, "session-end", payload("session-end", gone, project_dir))
    assert out.returncode == 0
    assert f"no transcript at {gone}".encode() in out.stderr
    assert b"nothing to hand off" in out.stderr
    (s,) = sessions(conn)
    assert s["status"] == "ended"
    assert s["handoff"] is None  # nothing to hand off: an earlier real handoff stays the last one
    assert captured(conn) == []


def test_wire_hooks_takes_write_as_the_mcp_wiring_does(brain_cli, tmp_path) -> None:
    """`--write F` names the file for the hooks too (it is what the MCP wiring takes)."""
    settings = tmp_path / "settings.json"
    r = brain_cli("wire", "claude-code", "--hooks", "--write", str(settings), "--project", "billing")
    assert r.exit_code == 0, r.output
    assert f"pybrain hooks in {settings}: added SessionStart, PreCompact, SessionEnd" in r.output
    data = json.loads(settings.read_text())
    assert sorted(data["hooks"]) == ["PreCompact", "SessionEnd", "SessionStart"]
    # the same file as with --settings, and a second run changes nothing
    other = tmp_path / "other.json"
    brain_cli("wire", "claude-code", "--hooks", "--settings", str(other), "--project", "billing")
    assert other.read_text() == settings.read_text()
    r = brain_cli("wire", "claude-code", "--hooks", "--write", str(settings), "--project", "billing")
    assert "already up to date" in r.output
    # two different files named at once is a usage error, and nothing is written
    r = brain_cli("wire", "claude-code", "--hooks", "--write", str(settings), "--settings", str(other))
    assert r.exit_code == 2
    assert "--write and --settings" in r.output


def test_prompt_context_says_which_of_two_conflicting_facts_is_newer(conn) -> None:
    """Two facts of one project that differ in a version are both relevant to a prompt; the
    older one's line names the newer (search's newer_related), so the agent knows which holds."""
    old = remember(conn, kind="fact", headline="Node.js runtime is version 20", project="shop")["memory_id"]
    new = remember(
        conn, kind="fact", headline="Node.js runtime is version 22", project="shop", on_related="store"
    )["memory_id"]
    context = conn.execute(
        "SELECT brain.prompt_context('which Node.js runtime version does the shop use?', project => 'shop')"
    ).fetchone()[0]
    lines = context["text"].splitlines()
    (old_line,) = [line for line in lines if line.startswith(f"- #{old} ")]
    (new_line,) = [line for line in lines if line.startswith(f"- #{new} ")]
    assert f"(older: #{new} is newer and may replace it; if so: brain supersede {old})" in old_line
    assert "is newer" not in new_line


def test_each_hook_run_is_counted_on_the_health_page(cli_env, brain_cli, transcript, project_dir) -> None:
    """The hooks' runs are tool events (`hook EVENT`, channel cli): `brain metrics` and the
    dashboard's Health page count them, and its latency chart has a scale only when it has
    something to draw, labelled without rounding a fraction of a millisecond to 0."""
    from datetime import UTC, datetime, timedelta

    from pybrain.serve.ui import charts

    for event in ("session-start", "session-end"):
        out, _ = run_hook(cli_env, event, payload(event, transcript, project_dir))
        assert out.returncode == 0 and b"hook:" not in out.stderr, out.stderr
    tools = {m["tool"]: m for m in json.loads(brain_cli("metrics", "--json").output)}
    assert tools["hook session-start"]["calls"] == 1 and tools["hook session-end"]["calls"] == 1
    assert tools["hook session-start"]["errors"] == 0

    now = datetime.now(UTC)
    empty = charts.series_chart(
        "Latency", " ms", [{"bucket_start": now, "p50_ms": None}], [("p50_ms", "p50", "p50")]
    )
    assert empty.empty and empty.y_ticks() == []
    rows = [
        {"bucket_start": now - timedelta(hours=1), "p50_ms": 0.0004},
        {"bucket_start": now, "p50_ms": 0.0008},
    ]
    small = charts.series_chart("Latency", " ms", rows, [("p50_ms", "p50", "p50")])
    labels = [t["text"] for t in small.y_ticks()]
    assert labels[0] == "0 ms" and all(label not in ("0 ms", "0.0 ms") for label in labels[1:]), labels


def test_every_prompt_line_is_relevant_on_its_own(cli_env, conn, transcript, project_dir, brain) -> None:
    """ "Run the checkout tests." brought the checkout fact and four lines of whatever ranked
    next: the BLOCKER the boot had shown, a global note, step timings of another service.
    Each line passes the verdict on its own now, and the boot's lines are not repeated."""
    blocker = brain.remember(
        "rule", "Never run migrations against production from a laptop", severity="BLOCKER", project="billing"
    ).memory_id
    checkout = brain.remember(
        "fact", "The checkout tests run with make test-checkout and need the stripe mock", project="billing"
    ).memory_id
    brain.remember("fact", "Nightly deploys start at 02:00 UTC; do not merge after 01:30")
    for i in range(3):
        brain.remember(
            "fact",
            f"Step {i}: check host api-{i} of the search service took {300 + i} ms",
            project="billing",
            origin="observed",
        )
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert f"#{blocker} " in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    out, _ = run_hook(
        cli_env, "prompt", payload("prompt", transcript, project_dir, prompt="Run the checkout tests.")
    )
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    lines = [line for line in context.splitlines() if line.startswith("- #")]
    assert [int(re.match(r"- #(\d+) ", line)[1]) for line in lines] == [checkout], context
    # the BLOCKER, asked about, is what the boot showed: not repeated either
    out, _ = run_hook(
        cli_env,
        "prompt",
        payload("prompt", transcript, project_dir, prompt="Can I run the migrations against production?"),
    )
    assert f"#{blocker} " not in out.stdout.decode()
    # in another session, which did not boot with it, it is the answer
    out, _ = run_hook(
        cli_env,
        "prompt",
        payload(
            "prompt",
            transcript,
            project_dir,
            prompt="Can I run the migrations against production?",
            session_id="another",
        ),
    )
    assert f"#{blocker} rule" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_question_about_a_thing_no_memory_names_gets_no_line(
    cli_env, conn, transcript, project_dir, brain
) -> None:
    """ "Which port does the kestrel billing worker listen on now?" asked before any memory
    names the billing worker brought the kestrel gateway's and scheduler's ports: they hold
    every word of the question some memory holds, and the two it names the worker by no
    memory holds. Two such words side by side are a thing the store does not know, and a
    short line then names two words that stand together in the question ("staging
    database") or is another thing's; one ("listen") may be the question's frame, and a
    number is a value."""
    brain.remember("fact", "The kestrel gateway listens on port 5005")
    brain.remember("fact", "The kestrel scheduler listens on port 7140")
    staging = brain.remember("fact", "Staging database is shop-stg-db-2 on port 6432").memory_id

    def lines(prompt: str) -> list[int]:
        out, _ = run_hook(cli_env, "prompt", payload("prompt", transcript, project_dir, prompt=prompt))
        context = json.loads(out.stdout or b"{}").get("hookSpecificOutput", {}).get("additionalContext", "")
        return [int(m[1]) for m in re.finditer(r"^- #(\d+) ", context, re.M)]

    assert lines("Which port does the kestrel billing worker listen on now?") == []
    assert lines("Is the kestrel mail relay up on its port?") == []
    # one word no memory holds ("listen") is the question's frame
    assert lines("Which port does the staging database listen on now?") == [staging]
    # a value no memory holds beside a word no memory holds names no thing
    assert lines("Is port 20035 taken by the staging database?") == [staging]
    # a line that names a thing the question names, beside one the store does not know
    assert lines("Should the nightly export job use the staging database?") == [staging]
    # once a memory names it, the billing worker's own question gets its line
    billing = brain.remember("fact", "The kestrel billing worker listens on port 7001").memory_id
    assert lines("Which port does the kestrel billing worker listen on now?") == [billing]


def test_a_prompt_gets_no_line_about_another_thing(cli_env, conn, transcript, project_dir, brain) -> None:
    """ "Which port does the kestrel billing worker listen on now?" brought the kestrel
    gateway's port and a note about the scheduler's deploy key: near in words and vector, and
    about other things. A short line that holds none of the question's two rarest words some
    memory holds ("billing", "worker") is another topic's, whatever its verdict. (The
    gateway's own question still gets the billing worker's port: it lacks one rare word of
    the question, "gateway", and a short answer need not repeat every one.)"""
    gateway = brain.remember("fact", "The kestrel gateway listens on port 5005").memory_id
    billing = brain.remember("fact", "The kestrel billing worker listens on port 7001").memory_id
    brain.remember("fact", "The kestrel scheduler deploy key is rotated every month")
    ask = "Which port does the kestrel billing worker listen on now?"
    out, _ = run_hook(cli_env, "prompt", payload("prompt", transcript, project_dir, prompt=ask))
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    lines = [line for line in context.splitlines() if line.startswith("- #")]
    assert [int(re.match(r"- #(\d+) ", line)[1]) for line in lines] == [billing], context
    # without the rule (no line is short) the other services' lines come back
    conn.execute("SELECT brain.set_setting('prompt_subject_words', '0')")
    out, _ = run_hook(cli_env, "prompt", payload("prompt", transcript, project_dir, prompt=ask))
    assert f"#{gateway} " in out.stdout.decode()
