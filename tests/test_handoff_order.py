"""The order of handoffs as two Claude Code windows in one repository leave them: each
window a process of its own that runs the hooks `brain wire claude-code --hooks` writes,
as Claude Code runs them (the payload on standard input, through a shell, a child of
the window's process); transcripts stamped with the time each line was written.

Window A is killed (its process gone, no SessionEnd); window B works on after it and
`/clear`s (SessionEnd, reason "clear", then SessionStart, source "clear", with a new
client session and transcript in the same process). Whatever the order in which B's
end and B's next start reach the database, the next start shows B's work as the last
session's, never A's older work: handoffs come in the order of each session's last sign
of life.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from pybrain.hooks.transcript import read_turns

PROJECT = "billing"
_ids = itertools.count(1)

# A window: a process that runs each hook command it is sent as its own child, through a
# shell, the payload on standard input, as Claude Code does; several at once when asked.
WINDOW = r"""
import json, subprocess, sys, threading
lock = threading.Lock()
def run(r):
    out = subprocess.run(r["cmd"], shell=True, input=r["input"].encode(), capture_output=True,
                         env=r["env"], cwd=r["cwd"], timeout=120)
    with lock:
        print(json.dumps({"id": r["id"], "rc": out.returncode, "stdout": out.stdout.decode(),
                          "stderr": out.stderr.decode()}), flush=True)
for line in sys.stdin:
    threading.Thread(target=run, args=(json.loads(line),)).start()
"""


class Transcript:
    """A Claude Code transcript, each line stamped with the time it is written."""

    def __init__(self, folder: Path, cwd: Path) -> None:
        self.session = str(uuid.uuid4())
        self.cwd = cwd
        self.path = folder / f"{self.session}.jsonl"
        self.last: str | None = None

    def _line(self, kind: str, message: dict[str, Any]) -> None:
        line_id = str(uuid.uuid4())
        entry = {
            "parentUuid": self.last,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.cwd),
            "sessionId": self.session,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": line_id,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        self.last = line_id
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def user(self, text: str) -> None:
        self._line("user", {"role": "user", "content": text})

    def assistant(self, text: str) -> None:
        self._line(
            "assistant",
            {"role": "assistant", "type": "message", "content": [{"type": "text", "text": text}]},
        )


class Window:
    """A Claude Code window: one process for its life, through every /clear."""

    def __init__(self, commands: dict[str, str], env: dict[str, str], cwd: Path, folder: Path) -> None:
        self.commands = commands
        self.env = env
        self.cwd = cwd
        self.folder = folder
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WINDOW],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.answers: dict[int, dict] = {}

    def transcript(self) -> Transcript:
        return Transcript(self.folder, self.cwd)

    def send(self, event: str, t: Transcript, **fields: Any) -> int:
        data = {
            "session_id": t.session,
            "transcript_path": str(t.path),
            "cwd": str(t.cwd),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
        n = next(_ids)
        request = {
            "id": n,
            "cmd": self.commands[event],
            "input": json.dumps(data),
            "env": self.env,
            "cwd": str(self.cwd),
        }
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return n

    def wait(self, n: int) -> dict:
        assert self.proc.stdout is not None
        while n not in self.answers:
            line = self.proc.stdout.readline()
            assert line, "the window's process ended"
            answer = json.loads(line)
            self.answers[answer["id"]] = answer
        answer = self.answers.pop(n)
        assert answer["rc"] == 0, answer["stderr"]
        return answer

    def hook(self, event: str, t: Transcript, **fields: Any) -> dict:
        return self.wait(self.send(event, t, **fields))

    def start(self, t: Transcript, source: str = "startup") -> str:
        answer = self.hook("SessionStart", t, source=source, model="claude-sonnet-4-5-20250929")
        assert "hook:" not in answer["stderr"], answer["stderr"]
        return json.loads(answer["stdout"])["hookSpecificOutput"]["additionalContext"]

    def prompt(self, t: Transcript, text: str) -> None:
        self.hook("UserPromptSubmit", t, prompt=text)
        t.user(text)

    def end(self, t: Transcript, reason: str = "clear") -> str:
        return self.hook("SessionEnd", t, reason=reason)["stderr"]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=120)


@pytest.fixture
def windows(cli_env: dict[str, str], tmp_path: Path):
    """Opens Claude Code windows in one repository, each with the hooks `brain wire
    claude-code --hooks` writes into its settings; closes (or has killed) them all."""
    brain = Path(sys.executable).parent / "brain"
    repo = tmp_path / PROJECT
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    wire = [str(brain), "wire", "claude-code", "--hooks", "--project", PROJECT, "--prompt-context"]
    out = subprocess.run(
        [*wire, "--write", str(settings)], capture_output=True, text=True, env=os.environ, timeout=120
    )
    assert out.returncode == 0, out.stderr
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    commands = {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()}
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env = {**environ, **cli_env, "CLAUDE_PROJECT_DIR": str(repo)}
    folder = tmp_path / "claude-projects" / f"-home-dev-{PROJECT}"
    folder.mkdir(parents=True)
    opened: list[Window] = []

    def open_window() -> Window:
        w = Window(commands, env, repo, folder)
        opened.append(w)
        return w

    yield open_window
    for w in opened:
        w.close()


A_REPLY = "Rotated the reconciler's database credentials in Vault (secret/reconciler/db)."
B_REPLY = "The signup form now disables its submit button while the request is pending."


def a_killed_and_b_working_on(windows) -> tuple[Window, Transcript, Transcript]:
    """Windows A and B in one repository; A is killed after its work, B works on after it.
    B's window, its transcript, and A's transcript."""
    a, b = windows(), windows()
    ta, tb = a.transcript(), b.transcript()
    a.start(ta)
    b.start(tb)
    a.prompt(ta, "Rotate the reconciler's database credentials.")
    b.prompt(tb, "Why does the signup form send two requests?")
    tb.assistant("A double click submits twice: nothing disables the button while pending.")
    ta.assistant(A_REPLY)
    a.kill()
    time.sleep(1.1)
    b.prompt(tb, "Disable the submit button while the request is pending.")
    time.sleep(1.1)
    tb.assistant(B_REPLY)
    return b, tb, ta


def late_end(windows, t: Transcript) -> None:
    """The SessionEnd hook of a killed window, fired as it closed and still on its way (slow,
    or waiting on the database): it reaches the database now, its client gone."""
    hook = windows()
    hook.end(t, reason="other")
    hook.close()


def assert_b_is_the_last_session(context: str) -> None:
    handoff = context.split("More:")[0]
    assert "## Handoff from the last session" in handoff, context
    assert f"Last reply: {B_REPLY}" in handoff, context
    assert A_REPLY not in handoff, context


def test_end_then_start(windows) -> None:
    """/clear as Claude Code runs it: the end hook (which takes A for gone), then the next
    start (which captures A's transcript)."""
    b, tb, _ = a_killed_and_b_working_on(windows)
    b.end(tb)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))


def test_start_before_the_end(windows) -> None:
    """The next start reaches the database before the slower end hook: it takes B's first
    session for rebooted and A's for gone, and captures both."""
    b, tb, _ = a_killed_and_b_working_on(windows)
    context = b.start(b.transcript(), source="clear")
    b.end(tb)
    assert_b_is_the_last_session(context)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))


def test_start_and_end_at_once(windows) -> None:
    """The end and the next start run at once, as two hooks of one process."""
    b, tb, _ = a_killed_and_b_working_on(windows)
    ended = b.send("SessionEnd", tb, reason="clear")
    started = b.send("SessionStart", b.transcript(), source="clear", model="claude-sonnet-4-5-20250929")
    context = json.loads(b.wait(started)["stdout"])["hookSpecificOutput"]["additionalContext"]
    b.wait(ended)
    assert_b_is_the_last_session(context)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))


def test_the_killed_windows_end_arriving_after_the_next_start(windows) -> None:
    """A's SessionEnd reaches the database after B's end took A for gone and B's next start
    captured A's transcript: A's handoffs count from A's last turn, not from then."""
    b, tb, ta = a_killed_and_b_working_on(windows)
    b.end(tb)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))
    late_end(windows, ta)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))


def test_the_killed_windows_end_arriving_before_the_next_start(windows) -> None:
    """A's SessionEnd reaches the database after B's end took A for gone, before B's next
    start: A's handoff counts from A's last turn."""
    b, tb, ta = a_killed_and_b_working_on(windows)
    b.end(tb)
    late_end(windows, ta)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))


def test_the_killed_windows_end_kept_in_the_spool_written_after_the_capture(windows, conn) -> None:
    """A's SessionEnd, fired as its window closed, was kept in the spool (the database out for
    it) and is written after B's next start captured A's transcript, with its own time, as
    the spool writes it (brain.hand_off_transcript, now => the hook's time): A's handoffs,
    the capture's too, count from then, before B's work."""
    a, b = windows(), windows()
    ta, tb = a.transcript(), b.transcript()
    a.start(ta)
    b.start(tb)
    a.prompt(ta, "Rotate the reconciler's database credentials.")
    ta.assistant(A_REPLY)
    a.kill()
    fired = datetime.now(UTC)
    time.sleep(1.1)
    b.prompt(tb, "Disable the submit button while the request is pending.")
    time.sleep(1.1)
    tb.assistant(B_REPLY)
    b.end(tb)
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))
    assert conn.execute(
        "SELECT count(*) FROM brain.handoff WHERE text LIKE %s", (f"%{A_REPLY}%",)
    ).fetchone()[0]
    conn.execute(
        "SELECT brain.hand_off_transcript(%s, 'session end (other)', 'claude-code', %s, %s, %s,"
        " client => 'Claude Code', transcript => %s, now => %s)",
        (
            Jsonb(read_turns(ta.path, ta.session)),
            PROJECT,
            str(ta.cwd),
            socket.gethostname(),
            ta.session,
            fired,
        ),
    )
    assert_b_is_the_last_session(b.start(b.transcript(), source="clear"))
