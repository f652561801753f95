"""Claude Code, Codex and Cursor through pybrain's plugin, simulated: generated weeks of
sessions of the three harnesses, interleaved in several repositories, checked against the
agent loop's invariants after every step.

Each session is a client process of its own that stays alive while the session lasts and
runs the plugin's hook commands as its harness does (client -> sh -> the plugin's launcher ->
brain), exactly as the plugin's hooks file of that harness writes them (plugin/hooks/hooks.json,
plugin/codex/hooks.json, plugin/cursor/hooks.json; the folder in PLUGIN_ROOT for Codex,
${CURSOR_PLUGIN_ROOT} expanded for Cursor), fed the harness's JSON on standard input and a
transcript in its shape (Claude Code's JSONL, Codex's session file, Cursor's agent
transcript). Codex and Cursor capture and hand off when each turn stops (Stop, stop); Codex
has no session end, Cursor no prompt hook and no boot after a compaction. Repositories: two
git repositories, a subfolder of one of them, and a folder outside git; two windows may be
open in one folder.
Steps: open a session, an exchange of a prompt (through the UserPromptSubmit hook) and a
reply (some with <private> text), a compaction, /clear, an end, a crash (the client killed,
no SessionEnd), a fact the person writes with `brain remember` or corrects with `brain
supersede` (a service's port, which the exchanges also speak of, with other ports), a
correction said in conversation ("We moved the gateway to port 20031."), a piece
of work with tool calls (some of its text <private>) recorded as a trajectory with `brain
trajectory record --from-transcript`, a backup taken (`brain backup`) and restored into an
empty database (`brain restore`) whose counts and searches must equal the live one's, and the
database stopped or hung (a TCP front that refuses or never answers,
tests/test_hook_outages.Switch) until it comes back: the hooks keep what they could not
write and the next one writes it.

After every step the invariants are checked (check()); a violation names the seed and the
steps, and shrink() finds a shorter list of steps that still breaks the same invariant. Each
statement of a port (a fact, a correction said) knows its topic: the project and the service.
A prompt about a service's port gets the current value first (the newest fact or correction
stored), every older line that states another value after it and marked (older, or depending
on a changed fact), and no line about another service.
tests/test_simulation.py runs fixed seeds; `make sim SEEDS=200` runs many and shrinks.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Container, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from helpers import outage_output_ok
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from test_hook_outages import Switch

from pybrain.wire import HARNESS_HOOKS, PLUGIN_FILES

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "plugin"
LIMIT = 10_000  # Claude Code keeps at most this much of a hook's output (the hooks keep to it everywhere)
HARNESSES = ("claude-code", "codex", "cursor")
# The event of each harness at each point of a session (none: the harness has no such hook).
EVENTS = {
    "claude-code": {
        "start": "SessionStart",
        "prompt": "UserPromptSubmit",
        "compact": "PreCompact",
        "end": "SessionEnd",
    },
    "codex": {"start": "SessionStart", "prompt": "UserPromptSubmit", "compact": "PreCompact", "stop": "Stop"},
    "cursor": {"start": "sessionStart", "compact": "preCompact", "stop": "stop", "end": "sessionEnd"},
}
# A line of injected memories: "- #12 fact, 3d ago: ..."
AGED = re.compile(r"- #(\d+) \w+, \d+(?:s|m|h|d|w|mo|y) ago: ")

# When a memory was said: a captured turn when its transcript stamps it (it is stored when
# the session is captured), anything else when it was written.
SAID_AT = "SELECT memory_id, coalesce((metadata->>'at')::timestamptz, created_at) FROM brain.memory"

# Folder (under the simulation's root), whether it is a git repository's root, the project
# pybrain should file its sessions under (the git root's name, else the folder's), and a word
# every text of that project carries and no other project's does.
REPOS = [
    ("alpha", True, "alpha", "kestrel"),
    ("alpha/web", False, "alpha", "kestrel"),  # a subfolder of alpha's repository
    ("beta", True, "beta", "marmot"),
    ("gamma", False, "gamma", "osprey"),  # not in git
]
SERVICES = ["gateway", "scheduler", "billing worker", "search indexer", "mail relay", "cache", "ledger"]

# The client: runs each command it is sent (one JSON line) through the shell, as Claude
# Code runs a hook, and answers with one JSON line; it lives until the session ends.
CLIENT = textwrap.dedent(
    """
    import json, subprocess, sys, time
    for line in sys.stdin:
        req = json.loads(line)
        started = time.monotonic()
        try:
            out = subprocess.run(req["cmd"], shell=True, input=req["input"].encode(), capture_output=True,
                                 env=req["env"], cwd=req["cwd"], timeout=req["timeout"])
            res = {"rc": out.returncode, "stdout": out.stdout.decode(errors="replace"),
                   "stderr": out.stderr.decode(errors="replace")}
        except subprocess.TimeoutExpired:
            res = {"rc": -1, "stdout": "", "stderr": "timed out"}
        res["seconds"] = time.monotonic() - started
        sys.stdout.write(json.dumps(res) + "\\n")
        sys.stdout.flush()
    """
)


class Front(Switch):
    """The Switch, coming back on its port even while the machine is busy: the spool files a
    record under the database's address, so the hooks must find it there again. Its port is
    below the range the system gives outgoing connections, which could take it while the
    database is stopped."""

    def _listen(self) -> None:
        if self.port:
            super()._listen()
            return
        rng = random.Random()
        for _ in range(200):
            self.port = rng.randrange(20000, 32000)
            try:
                super()._listen()
                return
            except OSError:
                continue
        self.port = 0
        super()._listen()

    def start(self) -> None:
        for _ in range(100):
            try:
                super().start()
                return
            except OSError:  # the port not free yet
                time.sleep(0.1)
        super().start()


def plugin_commands(harness: str) -> dict[str, tuple[str, int]]:
    """Each event's command in the plugin's hooks file of a harness, and the timeout (seconds)
    the harness gives it (`brain wire`'s: Cursor's file names none); Claude Code's and Codex's
    opt-in prompt hook (brain wire --prompt-context) through the plugin's launcher too."""
    hooks = json.loads((PLUGIN / PLUGIN_FILES[harness][0]).read_text(encoding="utf-8"))["hooks"]
    if harness == "cursor":
        commands = {event: handler["command"] for event, (handler,) in hooks.items()}
    else:
        commands = {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()}
        commands["UserPromptSubmit"] = commands["SessionStart"].replace("hook session-start", "hook prompt")
    return {event: (command, HARNESS_HOOKS[harness][event][1]) for event, command in commands.items()}


@dataclass(frozen=True)
class Step:
    kind: str  # open, say, correct, private, compact, clear, end, crash, work; fact, backup; down, up
    session: int  # the simulation's number of the session (for open: the new one's); 0 for fact, down, up
    arg: int = 0  # open: the repository's index; say/correct/private: a number that makes the text unique;
    # fact: the repository and service; down: 0 stopped, 1 hung
    harness: str = "claude-code"  # open: the harness the session runs in

    def __str__(self) -> str:
        if self.kind in ("down", "up"):
            return f"{self.kind}({('stopped', 'hung')[self.arg] if self.kind == 'down' else ''})"
        if self.kind == "fact":
            return f"fact({self.arg})"
        if self.kind == "backup":
            return "backup()"
        arg = f", {self.arg}" if self.kind in ("open", "say", "correct", "private", "work") else ""
        if self.kind == "open" and self.harness != "claude-code":
            arg += f", {self.harness}"
        return f"{self.kind}(s{self.session}{arg})"


def generate(
    seed: int, steps: int = 40, harnesses: tuple[str, ...] = HARNESSES, corrections: bool = True
) -> list[Step]:
    """A seeded list of steps: sessions opened in random repositories (at most three at a
    time), each in one of the harnesses, exchanges (a quarter of them, with corrections, a
    port corrected in conversation), compactions, /clear, ends and crashes, and now and then
    the database stopped or hung for a few steps. (The harnesses and the corrections are
    drawn from streams of their own: the steps of a seed are those it gave before there were
    three harnesses, and before there were corrections, but for the exchanges that became
    corrections; so is the half of the questions that ask about a service whose port was
    stated in the project.)"""
    rng = random.Random(seed)
    pick = random.Random(f"{seed} harness")
    talk = random.Random(f"{seed} correction")
    ask = random.Random(f"{seed} question")
    out: list[Step] = []
    repo_of: dict[int, int] = {}  # each session's repository
    stated: set[tuple[str, int]] = set()  # (project, service) a fact or a correction stated
    open_: list[int] = []
    next_session = 1
    down_for = 0
    for _ in range(steps):
        if down_for:
            down_for -= 1
            if not down_for:
                out.append(Step("up", 0))
                continue
        elif rng.random() < 0.04:
            out.append(Step("down", 0, rng.randrange(2)))
            down_for = rng.randrange(2, 6)
            continue
        if rng.random() < 0.08:
            n = rng.randrange(len(REPOS) * len(SERVICES))
            out.append(Step("fact", 0, n))
            stated.add((REPOS[n % len(REPOS)][2], n // len(REPOS) % len(SERVICES)))
            continue
        if rng.random() < 0.02:
            out.append(Step("backup", 0))
            continue
        if not open_ or (len(open_) < 3 and rng.random() < 0.25):
            out.append(Step("open", next_session, rng.randrange(len(REPOS)), pick.choice(harnesses)))
            repo_of[next_session] = out[-1].arg
            open_.append(next_session)
            next_session += 1
            continue
        s = rng.choice(open_)
        kind = rng.choices(
            ["say", "private", "compact", "clear", "end", "crash", "work"], weights=[10, 2, 1.5, 1, 3, 1.2, 1]
        )[0]
        arg = rng.randrange(10_000) if kind in ("say", "private", "work") else 0
        if kind == "say" and talk.random() < 0.25 and corrections:
            kind = "correct"
        project = REPOS[repo_of[s]][2]
        known = sorted(i for p, i in stated if p == project)
        if kind == "say" and known and ask.random() < 0.5:
            # half the questions ask about what was stated in the project (a fact written, a
            # correction said): its current value must reach the agent
            arg = arg - arg % len(SERVICES) + ask.choice(known)
        if kind == "correct":
            stated.add((project, arg % len(SERVICES)))
        out.append(Step(kind, s, arg))
        if kind in ("end", "crash"):
            open_.remove(s)
    return out


@dataclass
class Turn:
    ref: str  # the source_ref the hooks store it under: <session id>/<line uuid, or a digest>
    system: str  # the source_system: the harness
    role: str
    text: str  # as the transcript holds it
    kept: str  # what must be stored: the text without its <private> parts


@dataclass
class Session:
    number: int
    repo: int
    session_id: str
    path: Path
    client: subprocess.Popen | None
    turns: list[Turn] = field(default_factory=list)
    last: str | None = None
    lines: int = 0
    due: int = 0  # turns[:due] must be stored by now
    state: str = "open"  # open, ended, crashed
    ended_at: int = -1  # the step at which it ended; for a crash, its last sign of life
    active_at: int = 0  # the step of its last hook or transcript line
    last_reply: str | None = None
    known: bool = False  # a hook of it reached the database (pybrain knows the session)
    harness: str = "claude-code"
    # Codex and Cursor: the step of the last handoff a turn's stop (or Cursor's end) wrote, and
    # the reply it was written after
    handed_at: int = -1
    handed_reply: str | None = None
    booted_at: int = 0  # the step of its last start hook (its start, or after a compaction)
    boot_text: str = ""  # what its last start hook injected
    repeats: dict[str, int] = field(default_factory=dict)  # Cursor: the turns of each digest


@dataclass
class Violation:
    invariant: str
    step: int
    detail: str


class World:
    """One run: a database (db_url as the client role, admin_url as its superuser), a BRAIN_HOME,
    a root folder with the repositories, and the sessions' clients."""

    def __init__(self, db_url: str, admin_url: str, home: Path, root: Path) -> None:
        self.db_url, self.admin_url, self.home, self.root = db_url, admin_url, home, root
        self.sessions: dict[int, Session] = {}
        self.private_tokens: list[str] = []
        self.seen: dict[str, str] = {}  # source_ref -> the stored text first seen
        self.violations: list[Violation] = []
        self.step_no = 0
        self.switch = Front(db_url)  # the hooks' way to the database, which a step stops or hangs
        self.down = False
        self.owed: list[tuple[Session, int]] = []  # captures kept while down: (session, turns)
        # (project, service) -> (memory id, port) of the current fact the person wrote
        self.facts: dict[tuple[str, str], tuple[int, int]] = {}
        # (project, service) -> each statement of its port, in order: a fact the person wrote
        # (its memory id), a correction said (its harness and the source_refs of its turns)
        self.statements: dict[tuple[str, str], list[tuple[int, tuple[int, ...], str, tuple[str, ...]]]] = {}
        self.commands = {harness: plugin_commands(harness) for harness in HARNESSES}
        for folder, git, _, _ in REPOS:
            path = root / folder
            path.mkdir(parents=True, exist_ok=True)
            if git:
                subprocess.run(["git", "init", "-q", str(path)], check=True)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("BRAIN_", "CLAUDE_", "CURSOR_")) and k != "PLUGIN_ROOT"
        }
        self.env.update(
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            BRAIN_DATABASE_URL=self.switch.url,
            BRAIN_EMBEDDER="hash",
            BRAIN_HOME=str(home),
            BRAIN_EMBED_SERVER="off",
            BRAIN_HOOK_SERVER="off",
            # every turn stored by the session-end hook itself (on a loaded machine Claude Code's
            # 1.5 s would leave some to a background process: test_hook_capture checks that path)
            BRAIN_HOOK_END_BY="off",
        )

    # --- the harnesses' side -------------------------------------------------------

    def _hook(self, s: Session, what: str, **fields: Any) -> str:
        """The session's harness runs its hook for `what` (start, prompt, compact, stop, end)."""
        folder = self.root / REPOS[s.repo][0]
        event = EVENTS[s.harness][what]
        command, timeout = self.commands[s.harness][event]
        env = dict(self.env)
        if s.harness == "claude-code":
            env.update(CLAUDE_PLUGIN_ROOT=str(PLUGIN), CLAUDE_PROJECT_DIR=str(folder))
        elif s.harness == "codex":
            env.update(PLUGIN_ROOT=str(PLUGIN), CLAUDE_PLUGIN_ROOT=str(PLUGIN))
        else:
            command = command.replace("${CURSOR_PLUGIN_ROOT}", str(PLUGIN))
            env.update(CURSOR_PLUGIN_ROOT=str(PLUGIN))
        request = {
            "cmd": command,
            "input": json.dumps(self._payload(s, event, folder, fields)),
            "env": env,
            "cwd": str(folder),
            "timeout": 120,
        }
        s.active_at = self.step_no
        assert s.client is not None and s.client.stdin is not None and s.client.stdout is not None
        s.client.stdin.write(json.dumps(request) + "\n")
        s.client.stdin.flush()
        res = json.loads(s.client.stdout.readline())
        if res["seconds"] > timeout:
            self._violate(
                "a hook returns within its harness's timeout",
                f"{event} of s{s.number} ({s.harness}): {res['seconds']:.1f} s, timeout {timeout} s",
            )
        name = HARNESS_HOOKS[s.harness][event][0]
        if self.down:
            outage = re.fullmatch(
                r"pybrain [a-z-]+ hook: the database (is unavailable|did not answer)[^\n]*\n?", res["stderr"]
            )
            # the hooks that add context tell the model in one line (session-start: always;
            # prompt: once a session); the capture hooks print nothing
            if res["rc"] != 0 or not outage_output_ok(name, res["stdout"]) or not outage:
                self._violate(
                    "with the database out a hook says so in one line",
                    f"{event} of s{s.number}: rc {res['rc']} out {res['stdout'][:100]!r}"
                    f" err {res['stderr'][-200:]!r}",
                )
            return ""
        if res["rc"] != 0 or "hook:" in res["stderr"]:
            self._violate("hooks succeed", f"{event} of s{s.number}: rc {res['rc']} {res['stderr'][-300:]}")
        if what == "prompt":
            return res["stdout"]  # (it must stay fast: it neither boots nor writes what was kept)
        s.known = True
        for owed, count in self.owed:  # the first hook back writes what the others kept
            owed.due = max(owed.due, count)
        self.owed = []
        return res["stdout"]

    def _payload(self, s: Session, event: str, folder: Path, fields: dict[str, Any]) -> dict[str, Any]:
        """The JSON the harness sends its hook (tests/fixtures/hooks/ has each harness's)."""
        if s.harness == "cursor":
            payload = {
                "conversation_id": s.session_id,
                "generation_id": f"{s.session_id[:8]}-gen-{self.step_no}",
                "model": "claude-4.5-sonnet",
                "hook_event_name": event,
                "cursor_version": "2.3.21",
                "workspace_roots": [str(folder)],
                "user_email": "dev@example.com",
                "transcript_path": str(s.path),
            }
            if event == "sessionStart":
                payload.update(session_id=s.session_id, is_background_agent=False, composer_mode="agent")
            return {**payload, **fields}
        payload = {
            "session_id": s.session_id,
            "transcript_path": str(s.path),
            "cwd": str(folder),
            "permission_mode": "default",
            "hook_event_name": event,
        }
        if s.harness == "codex":
            payload["model"] = "gpt-5.3-codex"
            if event in ("UserPromptSubmit", "Stop", "PreCompact"):
                payload["turn_id"] = f"turn-{self.step_no}"
        return {**payload, **fields}

    def _context(self, s: Session, out: str, event: str) -> str:
        """The context a context hook's output adds (Cursor's additional_context, else
        Claude Code's and Codex's hookSpecificOutput); "" when it printed none."""
        if not out.strip():
            return ""
        try:
            answer = json.loads(out)
            if s.harness == "cursor":
                return answer["additional_context"]
            return answer["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            self._violate("hooks succeed", f"{event} of s{s.number} printed no JSON: {out[:200]}")
            return ""

    def _write(self, s: Session, entry: dict[str, Any]) -> None:
        s.active_at = self.step_no
        with s.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def _line(self, s: Session, role: str, text: str) -> str:
        """A typed prompt or a reply written to the transcript in the harness's shape; the
        source_ref its turn is stored under (tests/fixtures/README.md, docs/hooks.md)."""
        s.lines += 1
        # the time the line is written, as the harness stamps it (the database's clock is real)
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if s.harness == "codex":
            kind = "input_text" if role == "user" else "output_text"
            item = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            self._write(s, {"timestamp": stamp, "type": "response_item", "payload": item})
            digest = hashlib.sha256(f"{stamp}\n{role}\n{text}".encode()).hexdigest()[:32]
            return f"{s.session_id}/{digest}"
        if s.harness == "cursor":
            self._write(s, {"role": role, "message": {"content": [{"type": "text", "text": text}]}})
            digest = hashlib.sha256(f"{role}\n{text}".encode()).hexdigest()[:24]
            s.repeats[digest] = s.repeats.get(digest, 0) + 1
            return f"{s.session_id}/{digest}-{s.repeats[digest]}"
        if role == "user":
            message: dict[str, Any] = {"role": "user", "content": text}
        else:
            message = {
                "id": f"msg_{s.session_id[:6]}{s.lines}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 900, "output_tokens": 60},
            }
        return f"{s.session_id}/{self._claude_line(s, role, message)}"

    def _claude_line(self, s: Session, kind: str, message: dict[str, Any]) -> str:
        uuid = f"{s.session_id[:8]}-{s.lines:04d}"
        self._write(
            s,
            {
                "parentUuid": s.last,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(self.root / REPOS[s.repo][0]),
                "sessionId": s.session_id,
                "version": "2.0.14",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            },
        )
        s.last = uuid
        return uuid

    def _tool_call(self, s: Session, command: str, result: str) -> None:
        """A shell tool call and its result, in the harness's shape (no turn of either)."""
        s.lines += 1
        call = f"call_{self.step_no}"
        if s.harness == "codex":
            stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            arguments = json.dumps({"command": ["bash", "-lc", command]})
            for item in (
                {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call},
                {"type": "function_call_output", "call_id": call, "output": result},
            ):
                self._write(s, {"timestamp": stamp, "type": "response_item", "payload": item})
        elif s.harness == "cursor":
            use = {"type": "tool_use", "name": "Shell", "input": {"command": command}}
            self._write(s, {"role": "assistant", "message": {"content": [use]}})
            self._write(
                s, {"role": "user", "message": {"content": [{"type": "tool_result", "content": result}]}}
            )
        else:
            use = {
                "type": "tool_use",
                "id": f"toolu_{self.step_no}",
                "name": "Bash",
                "input": {"command": command, "description": "Check the health endpoint"},
            }
            self._claude_line(s, "assistant", {"role": "assistant", "type": "message", "content": [use]})
            s.lines += 1
            result_block = {"type": "tool_result", "tool_use_id": use["id"], "content": result}
            self._claude_line(s, "user", {"role": "user", "content": [result_block]})

    def _say(self, s: Session, user: str, reply: str, kept_user: str, service: str | None = None) -> None:
        if "prompt" in EVENTS[s.harness]:
            out = self._hook(s, "prompt", prompt=user)
            context = self._context(s, out, "the prompt hook")
            if context:
                self._check_injection(s, context, "prompt")
                if service is not None:
                    self._check_topic(s, context, service)
            if service is not None:
                self._check_current(s, context or "", service)
        s.turns.append(Turn(self._line(s, "user", user), s.harness, "user", user, kept_user))
        s.turns.append(Turn(self._line(s, "assistant", reply), s.harness, "assistant", reply, reply))
        s.last_reply = reply
        self._stopped(s)

    def _stopped(self, s: Session) -> None:
        """Codex and Cursor: the agent's turn stops; its hook stores the turns and hands off."""
        if "stop" not in EVENTS[s.harness]:
            return
        if s.harness == "codex":
            self._hook(s, "stop", stop_hook_active=False, last_assistant_message=s.last_reply)
        else:
            self._hook(s, "stop", status="completed", loop_count=0)
        self._captured(s)
        s.handed_at, s.handed_reply = self.step_no, s.last_reply

    def _boot(self, s: Session, source: str) -> None:
        s.booted_at = self.step_no
        fields = {} if s.harness == "cursor" else {"source": source}
        if s.harness == "claude-code":
            fields["model"] = "claude-sonnet-4-5-20250929"
        context = self._context(s, self._hook(s, "start", **fields), "the start hook")
        s.boot_text = context or ""
        self._check_injection(s, context, source)

    def _new_session(
        self, number: int, repo: int, harness: str = "claude-code", client: subprocess.Popen | None = None
    ) -> Session:
        """A session's transcript where its harness keeps it, and its client process (a new
        one, or the window's when it goes on as a new session)."""
        slug = REPOS[repo][0].replace("/", "-")
        if harness == "codex":
            session_id = f"019a{number:04x}-5eed-7{number:03x}-8a00-{self.step_no:012x}"
            folder = self.home.parent / "codex-sessions" / "2026" / "11" / "28"
            name = f"rollout-2026-11-28T09-00-00-{session_id}.jsonl"
        elif harness == "cursor":
            session_id = f"{number:08x}-c0de-4{number:03x}-9b00-{self.step_no:012x}"
            folder = self.home.parent / "cursor-projects" / f"sim-{slug}" / "agent-transcripts" / session_id
            name = f"{session_id}.jsonl"
        else:
            session_id = f"{number:08x}-5eed-4{number:03x}-8a00-{self.step_no:012x}"
            folder = self.home.parent / "claude-projects" / f"-sim-{slug}"
            name = f"{session_id}.jsonl"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.touch()
        s = Session(number, repo, session_id, path, None, harness=harness)
        if harness == "codex":
            meta = {"id": session_id, "cwd": str(self.root / REPOS[repo][0]), "originator": "codex_cli_rs"}
            self._write(s, {"timestamp": "2026-11-28T09:00:00.000Z", "type": "session_meta", "payload": meta})
        s.client = client or subprocess.Popen(
            [sys.executable, "-c", CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        return s

    def _captured(self, s: Session) -> None:
        """A capture hook ran for s: its turns so far are stored now, or once the database is back."""
        if self.down:
            self.owed.append((s, len(s.turns)))
        else:
            s.due = len(s.turns)

    def apply(self, step: Step) -> None:
        self.step_no += 1
        if step.kind in ("down", "up") and self.down == (step.kind == "down"):
            return  # (a shrunk list may have lost the step before)
        if step.kind == "down":
            if step.arg:
                self.switch.mode = "hang"
            else:
                self.switch.stop()
            self.down = True
            return
        if step.kind == "up":
            if self.switch.mode == "hang":
                self.switch.mode = "pass"
            else:
                self.switch.start()
            self.down = False
            return
        if step.kind == "fact":
            self._fact(step.arg)
            return
        if step.kind == "backup":
            self._backup()
            return
        s = self.sessions.get(step.session)
        if step.kind == "open":
            s = self._new_session(step.session, step.arg, step.harness)
            self.sessions[step.session] = s
            # a crashed session of the project is captured by the next start of one, before
            # its payload is made
            # (not one no hook of which ever reached the database: a session started while
            # it was out and crashed before another hook is unknown to pybrain; docs/hooks.md)
            if not self.down:
                for other in self.sessions.values():
                    if other.state == "crashed" and other.known and REPOS[other.repo][2] == REPOS[s.repo][2]:
                        other.due = len(other.turns)
            self._boot(s, "startup")
            return
        if s is None or s.state != "open":
            return  # a step of a session a shrunk list no longer opens
        word, service = REPOS[s.repo][3], SERVICES[step.arg % len(SERVICES)]
        if step.kind == "say":
            # the agent answers with the last statement of the port it was told (it reads the
            # facts and was in the room), else with a port of its own
            told = self.statements.get((REPOS[s.repo][2], service))
            port = told[-1][0] if told else 1000 + step.arg
            self._say(
                s,
                f"Which port does the {word} {service} listen on now?",
                f"The {word} {service} listens on port {port} since the {step.arg % 28 + 1}th.",
                f"Which port does the {word} {service} listen on now?",
                service,
            )
        elif step.kind == "correct":
            # a port corrected in conversation: the newest statement of it, whoever said it
            port = 20_000 + self.step_no
            said = f"We moved the {word} {service} to port {port}."
            self._say(s, said, f"Noted: the {word} {service} listens on port {port} now.", said, service)
            refs = (s.turns[-2].ref, s.turns[-1].ref)
            self.statements.setdefault((REPOS[s.repo][2], service), []).append((port, (), s.harness, refs))
        elif step.kind == "private":
            token = f"pvt{step.arg:04d}x{self.step_no}"
            self.private_tokens.append(token)
            kept = f"The {word} {service} deploy key is rotated."
            self._say(
                s,
                f"The {word} {service} deploy key is rotated. <private>the new key is {token}</private>",
                f"Noted: the {word} {service} uses the rotated deploy key.",
                kept,
            )
        elif step.kind == "work":
            self._work(s, word, service, step.arg)
        elif step.kind == "compact":
            # (Cursor's preCompact has no trigger, and Cursor boots no session after it)
            fields = {"cursor": {}, "codex": {"trigger": "auto"}}.get(s.harness)
            self._hook(
                s,
                "compact",
                **(fields if fields is not None else {"trigger": "auto", "custom_instructions": ""}),
            )
            self._captured(s)
            if s.harness != "cursor":
                self._boot(s, "compact")
        elif step.kind == "clear":
            self._end(s, "clear")
            # /clear (Codex's too; Cursor's new chat): the same window goes on as a new session
            replacement = self._new_session(s.number, s.repo, s.harness, client=s.client)
            s.client = None
            self.sessions[s.number] = replacement
            self.sessions[-self.step_no] = s  # kept, under a number no step names
            self._boot(replacement, "startup" if s.harness == "cursor" else "clear")
        elif step.kind == "end":
            self._end(s, "prompt_input_exit")
            self._close(s)
        elif step.kind == "crash":
            assert s.client is not None
            s.client.send_signal(signal.SIGKILL)
            s.client.wait()
            s.client = None
            # pybrain learns when it died from its last hook or transcript line
            s.state, s.ended_at = "crashed", s.active_at

    def _end(self, s: Session, reason: str) -> None:
        """The session ends: Claude Code's SessionEnd, Cursor's sessionEnd (which hands off
        again), Codex nothing (its last turn's Stop handed off)."""
        if s.harness == "claude-code":
            self._hook(s, "end", reason=reason)
            self._captured(s)
        elif s.harness == "cursor":
            self._hook(s, "end", session_id=s.session_id, reason="user_close", duration_ms=60_000)
            self._captured(s)
            if s.last_reply:
                s.handed_at, s.handed_reply = self.step_no, s.last_reply
        s.state, s.ended_at = "ended", self.step_no

    def _fact(self, n: int) -> None:
        """The person writes a service's port as a fact (brain remember), or corrects the one
        written before (brain supersede), from the repository's folder."""
        if self.down:
            return  # (the command would say the database is out; nothing to check)
        repo = n % len(REPOS)
        folder, _, project, word = REPOS[repo]
        service = SERVICES[n // len(REPOS) % len(SERVICES)]
        port = 5000 + self.step_no
        text = f"The {word} {service} listens on port {port}"
        old = self.facts.get((project, service))
        brain = str(Path(sys.executable).parent / "brain")
        if old:
            argv = [brain, "supersede", str(old[0]), text, "--reason", "moved", "--json"]
        else:
            argv = [brain, "remember", "fact", text, "--project", project, "--on-related", "store", "--json"]
        out = subprocess.run(
            argv, capture_output=True, text=True, env=self.env, cwd=self.root / folder, timeout=120
        )
        if out.returncode != 0:
            self._violate("a fact is written", f"{' '.join(argv[1:3])} {text!r}: {out.stderr[-300:]}")
            return
        self.facts[(project, service)] = (json.loads(out.stdout)["memory_id"], port)
        self.statements.setdefault((project, service), []).append(
            (port, (self.facts[(project, service)][0],), "", ())
        )

    def _brain(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """A `brain` command as the person runs it in a shell of the repository."""
        brain = str(Path(sys.executable).parent / "brain")
        return subprocess.run(
            [brain, *args], capture_output=True, text=True, env=self.env, cwd=cwd or self.root, timeout=300
        )

    def _work(self, s: Session, word: str, service: str, n: int) -> None:
        """A piece of work with tool calls (its prompt holds a <private> token), then recorded
        as a trajectory from the transcript, from the repository's folder."""
        token = f"pvt{n:04d}w{self.step_no}"
        self.private_tokens.append(token)
        folder = self.root / REPOS[s.repo][0]
        prompt = f"The {word} {service} health check fails after the deploy. <private>login {token}</private>"
        s.turns.append(
            Turn(self._line(s, "user", prompt), s.harness, "user", prompt, prompt.split(" <private>")[0])
        )
        self._tool_call(
            s, f"curl -s {word}-{service.replace(' ', '-')}:8080/health", "503 upstream timeout = 5"
        )
        reply = f"The {word} {service} health check timed out: raised its timeout from 5 to 30 seconds."
        s.turns.append(Turn(self._line(s, "assistant", reply), s.harness, "assistant", reply, reply))
        s.last_reply = reply
        self._stopped(s)
        if self.down or s.harness == "cursor":
            return  # (a trajectory is read from a Claude Code transcript or a Codex rollout)
        out = self._brain(
            "trajectory",
            "record",
            "--from-transcript",
            str(s.path),
            "--project",
            REPOS[s.repo][2],
            "--json",
            cwd=folder,
        )
        if out.returncode != 0:
            self._violate("a trajectory is recorded", f"s{s.number}: {out.stderr[-300:]}")

    def _backup(self) -> None:
        """An export (nothing <private> in it), and a backup of the live database restored into
        an empty one: the same memories, the same sessions and handoffs, and the same search
        results."""
        if self.down:
            return
        n = self.step_no
        # the export as the person takes it: nothing <private> in it either
        out = self._brain("export", "-")
        if out.returncode != 0:
            self._violate("an export is taken", out.stderr[-300:])
        token = next((t for t in self.private_tokens if t in out.stdout), None)
        if token:
            self._violate("<private> text reaches no export", f"brain export holds {token}")
        dump = self.home.parent / f"backup-{n}.dump"
        out = self._brain("backup", str(dump), "--url", self.admin_url, "--json")
        if out.returncode != 0:
            self._violate("a backup is taken", out.stderr[-300:])
            return
        name = f"{conninfo_to_dict(self.admin_url)['dbname']}_r{n}"
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        target = make_conninfo(self.admin_url, dbname=name)
        try:
            out = self._brain("restore", str(dump), "--url", target, "--json")
            if out.returncode != 0:
                self._violate("a backup restores", out.stderr[-300:])
                return
            at = datetime.now(UTC)  # both searched at one time: decay depends on it
            live, restored = (self._state(url, at) for url in (self.admin_url, target))
            for what in live:
                if live[what] != restored[what]:
                    self._violate(
                        "a backup restores to the same counts and the same search results",
                        f"{what}: live {str(live[what])[:200]} restored {str(restored[what])[:200]}",
                    )
        finally:
            with psycopg.connect(self.admin_url, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            for path in (dump, dump.with_name(dump.name + ".json")):
                path.unlink(missing_ok=True)

    def _state(self, url: str, at: datetime) -> dict[str, Any]:
        """What a restore must keep, read as the superuser: the memories, the sessions, the
        handoffs, and each project's search for each service (words and the hash vectors)."""
        from pybrain.embed import get_embedder

        hashed = get_embedder("hash")
        with psycopg.connect(url, autocommit=True) as db:
            state: dict[str, Any] = {
                "memories": db.execute(
                    "SELECT memory_id, kind, state, project, headline, source_ref FROM brain.memory"
                    " ORDER BY memory_id"
                ).fetchall(),
                "sessions": db.execute(
                    "SELECT session_id, status, end_reason, project FROM brain.session ORDER BY 1"
                ).fetchall(),
                "handoffs": db.execute(
                    "SELECT handoff_id, session_id, text FROM brain.handoff ORDER BY 1"
                ).fetchall(),
            }
            db.execute("SELECT set_config('brain.workspace', '1', false)")
            for _, _, project, word in REPOS[::2]:
                for service in SERVICES[:3]:
                    query = f"Which port does the {word} {service} listen on?"
                    # (hits of one score in either order: a restored store may rank ties apart)
                    state[f"search {project} {service}"] = sorted(
                        db.execute(
                            "SELECT id, score::numeric(12, 9) FROM brain.search(%s, query_embedding => %s,"
                            " embedding_space => %s, project => %s, now => %s)",
                            (query, hashed.embed_one(query), hashed.space, project, at),
                        ).fetchall(),
                        key=lambda r: (-r[1], r[0]),
                    )
        return state

    def _close(self, s: Session) -> None:
        if s.client is not None:
            assert s.client.stdin is not None
            s.client.stdin.close()
            s.client.wait(timeout=30)
            s.client = None

    def close(self) -> None:
        self.switch.close()
        for s in self.sessions.values():
            if s.client is not None:
                s.client.kill()
                s.client.wait()
                s.client = None

    # --- the invariants ------------------------------------------------------------

    def _violate(self, invariant: str, detail: str) -> None:
        self.violations.append(Violation(invariant, self.step_no, detail))

    def _check_injection(self, s: Session, context: str, source: str) -> None:
        project, word = REPOS[s.repo][2], REPOS[s.repo][3]
        if len(context) > LIMIT:
            self._violate("injection within Claude Code's limit", f"s{s.number}: {len(context)} characters")
        for _, _, other, other_word in REPOS:
            if other != project and other_word in context:
                line = next(x for x in context.splitlines() if other_word in x)
                self._violate(
                    "no memory of another repository", f"s{s.number} in {project} got {other}'s: {line[:160]}"
                )
        if source != "startup" or self.down:
            return
        handed = [
            (at, reply, o)
            for o in self.sessions.values()
            if o is not s and REPOS[o.repo][2] == project
            for at, reply in [self._handoff(o)]
            if reply
        ]
        if handed:
            _, reply, latest = max(handed, key=lambda h: h[0])
            if reply[:60] not in context:
                shown = next((x for x in context.splitlines() if "Last reply" in x), "no handoff")
                self._violate(
                    "the handoff is the project's last ended session's",
                    f"s{s.number} ({s.harness}) in {project}: expected s{latest.number}'s ({latest.harness}) "
                    f"{reply[:60]!r}, shown {shown[:160]!r}",
                )
        del word

    @staticmethod
    def _handoff(o: Session) -> tuple[int, str | None]:
        """The step of the last handoff a session wrote for the project's next session, and
        the reply it was written after: Claude Code's at its end (a crash's once captured);
        Codex's and Cursor's at each turn's stop and Cursor's end."""
        if o.harness != "claude-code":
            return o.handed_at, o.handed_reply
        if o.state != "open" and o.last_reply and (o.state == "ended" or o.due == len(o.turns)):
            return o.ended_at, o.last_reply
        return -1, None

    def _check_topic(self, s: Session, context: str, service: str) -> None:
        """A prompt about one service gets no line about another: every generated text names
        the service it is about (its topic), and a line that names another is noise."""
        for line in context.splitlines():
            if line.startswith("- #") and service not in line:
                self._violate(
                    "no prompt gets a line about another topic",
                    f"s{s.number} asks about the {service}: {line[:200]}",
                )

    def _current(
        self, admin: psycopg.Connection, project: str, service: str
    ) -> tuple[Any, int, set[int]] | None:
        """The current value of a service's port: its newest statement stored (a fact the
        person wrote, a correction said once its turns are captured): when it was said
        (SAID_AT), the port, and the memories that state it."""
        current = None
        for port, fact_ids, system, refs in self.statements.get((project, service), []):
            if fact_ids:
                found = admin.execute(f"{SAID_AT} WHERE memory_id = ANY(%s)", (list(fact_ids),)).fetchall()
            else:
                found = admin.execute(
                    f"{SAID_AT} WHERE source_system = %s AND source_ref = ANY(%s) AND kind <> 'trajectory'",
                    (system, list(refs)),
                ).fetchall()
            if found:
                at = min(r[1] for r in found)
                if current is None or at >= current[0]:
                    current = (at, port, {r[0] for r in found})
        return current

    def _check_current(self, s: Session, context: str, service: str) -> None:
        """What a prompt asking for a service's port brings: every line with its age; the current
        value of that service (its newest statement: the person's last fact, or a correction
        said since) shown, and before every older line that gives the service another port,
        which is marked: older (a newer memory may replace it) or depending on a changed fact."""
        project, word = REPOS[s.repo][2], REPOS[s.repo][3]
        lines = [x for x in context.splitlines() if x.startswith("- #")]
        for line in lines:
            if not AGED.match(line):
                self._violate("every injected line says its age", f"s{s.number}: {line[:160]}")
        if not self.statements.get((project, service)):
            return
        ids = [int(AGED.match(x).group(1)) if AGED.match(x) else 0 for x in lines]
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            current = self._current(admin, project, service)
            created = dict(admin.execute(f"{SAID_AT} WHERE memory_id = ANY(%s)", (ids,)).fetchall())
        if current is None:
            return
        at, port, stating = current
        about = re.compile(rf"{word} {service} (?:listens on|to) port (\d+)")
        # the current value reaches the agent: in this context, in what its start showed, or
        # said in this session itself (the agent has its own turns in front of it)
        own = any(str(port) in t.text for t in s.turns)
        if not self.down and not own and str(port) not in about.findall(context + "\n" + s.boot_text):
            self._violate(
                "a question about a stored value gets it",
                f"s{s.number} asks for {word} {service} (current: port {port}, #{sorted(stating)}):"
                f" shown: {' | '.join(lines)[:900]}",
            )
        where = next(
            (i for i, line in enumerate(lines) if ids[i] in stating or str(port) in about.findall(line)), None
        )
        for i, line in enumerate(lines):
            said = about.findall(line)
            if (
                not said
                or all(p == str(port) for p in said)
                or created.get(ids[i]) is None
                or created[ids[i]] >= at
            ):
                continue
            detail = (
                f"s{s.number} asks for {word} {service} (current: port {port}, #{sorted(stating)}"
                f"{', not shown' if where is None else ''}): {line[:200]}; shown: {' | '.join(lines)[:900]}"
            )
            if where is None or where > i:
                self._violate(
                    "the current value comes first wherever a question about it is answered", detail
                )
            if "(older: #" not in line and "(depends on #" not in line:
                self._violate("every shown line stating an old value is marked", detail)

    def check(self) -> None:
        """The stored side of the invariants, read as the superuser."""
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            # (a trajectory recorded from a transcript names the prompt that started the work as
            # its source_ref too: it is not a turn)
            stored = {
                (system, ref): (headline, body, project)
                for system, ref, headline, body, project in admin.execute(
                    "SELECT source_system, source_ref, headline, body, project FROM brain.memory"
                    " WHERE source_system = ANY(%s) AND source_ref IS NOT NULL AND kind <> 'trajectory'",
                    (list(HARNESSES),),
                )
            }
            counts = {
                (system, ref): n
                for system, ref, n in admin.execute(
                    "SELECT source_system, source_ref, count(*) FROM brain.memory"
                    " WHERE source_system = ANY(%s) AND source_ref IS NOT NULL AND kind <> 'trajectory'"
                    " GROUP BY 1, 2",
                    (list(HARNESSES),),
                )
            }
            for s in self.sessions.values():
                for turn in s.turns[: s.due]:
                    got = stored.get((turn.system, turn.ref))
                    if got is None:
                        self._violate(
                            "nothing captured is lost",
                            f"s{s.number} ({s.harness}) {turn.role}: {turn.kept[:80]!r}",
                        )
                        continue
                    text = f"{got[0]}\n{got[1]}"
                    if turn.kept not in text:
                        self._violate(
                            "each turn is stored verbatim by its source",
                            f"s{s.number} {turn.ref}: {turn.kept[:60]!r} not in {text[:160]!r}",
                        )
                    if counts.get((turn.system, turn.ref), 0) > 1:
                        self._violate(
                            "each turn is stored once", f"{turn.ref}: {counts[turn.system, turn.ref]} rows"
                        )
                    first = self.seen.setdefault(turn.ref, text)
                    if first != text:
                        self._violate(
                            "nothing captured is rewritten",
                            f"{turn.ref}: {first[:80]!r} became {text[:80]!r}",
                        )
                    if got[2] != REPOS[s.repo][2]:
                        self._violate(
                            "a project is a repository",
                            f"s{s.number} in {REPOS[s.repo][0]}: stored under project {got[2]!r}",
                        )
            # a session that ended through its SessionEnd hook (Cursor's sessionEnd, Codex's
            # last Stop; written then, or later from the spool) is labelled so, never as a
            # crash, and never captured again as one
            reasons = {}
            for client_session, reason, captured_by in admin.execute(
                "SELECT client_info->>'client_session', end_reason, client_info->>'capture_attempts'"
                " FROM brain.session WHERE status = 'ended'"
            ).fetchall():
                reasons.setdefault(client_session, []).append((reason, captured_by))
            for s in self.sessions.values():
                if s.state != "ended" or s.due < len(s.turns) or not s.known:
                    continue
                if s.harness == "codex" and s.handed_at < s.booted_at:
                    # no turn stopped since it booted (at its start, or after a compaction):
                    # nothing told pybrain it ended, as after a crash
                    continue
                for reason, captured_by in reasons.get(s.session_id, []):
                    if reason in ("process gone", "heartbeat expired", "rebooted") or captured_by:
                        self._violate(
                            "an ended session's label stays true",
                            f"s{s.number} ended through SessionEnd; its session says {reason!r}"
                            f"{' and was captured again' if captured_by else ''}",
                        )
            if self.private_tokens:
                tables = [
                    r[0]
                    for r in admin.execute(
                        "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'brain'::regnamespace"
                        " AND c.relkind = 'r'"
                    )
                ]
                pattern = "(" + "|".join(self.private_tokens) + ")"
                for t in tables:
                    hit = admin.execute(
                        sql.SQL("SELECT x::text FROM {} x WHERE x::text ~ %s LIMIT 1").format(
                            sql.Identifier("brain", t)
                        ),
                        (pattern,),
                    ).fetchone()
                    if hit:
                        self._violate("<private> text reaches no table", f"brain.{t}: {hit[0][:160]}")
        if self.private_tokens:
            for path in self.home.rglob("*"):
                # (the spool's copy of a transcript, which Claude Code's own file holds as
                # well, is kept 0600 until the database is back: pybrain.hooks.spool)
                if path.parent.parent.name == "spool" and path.suffix == ".jsonl":
                    continue
                if path.is_file() and path.stat().st_size < 5_000_000:
                    data = path.read_text(errors="replace")
                    token = next((t for t in self.private_tokens if t in data), None)
                    if token:
                        self._violate(
                            "<private> text reaches no file of pybrain's", f"{path.relative_to(self.home)}"
                        )


Fresh = Callable[[], AbstractContextManager[tuple[str, str, Path]]]


def run(
    steps: list[Step], fresh: Fresh, *, stop_at_first: bool = True, known: Container[str] = ()
) -> list[Violation]:
    """The steps in a new world (fresh(): a new database's client and superuser URLs, and an
    empty folder), the invariants checked after each; the violations found. A violation of a
    known invariant (one the code is known to break) does not stop the run: the others are
    checked to its end."""
    with fresh() as (db_url, admin_url, folder):
        home = folder / "home"
        root = folder / "repos"
        home.mkdir()
        root.mkdir()
        world = World(db_url, admin_url, home, root)
        try:
            for step in steps:
                world.apply(step)
                world.check()
                if stop_at_first and any(v.invariant not in known for v in world.violations):
                    break
        finally:
            world.close()
            shutil.rmtree(root, ignore_errors=True)
        return world.violations


def shrink(steps: list[Step], invariant: str, fresh: Fresh, *, budget: int = 60) -> list[Step]:
    """A shorter list of steps that still breaks the invariant: steps after the failing one
    dropped, then each step in turn while the invariant still breaks (at most budget runs)."""

    def breaks(candidate: list[Step]) -> int | None:
        found = [v for v in run(candidate, fresh) if v.invariant == invariant]
        return found[0].step if found else None

    at = breaks(steps)
    if at is None:
        return steps
    best = steps[:at]
    runs = 1
    i = len(best) - 2
    while i >= 0 and runs < budget:
        candidate = best[:i] + best[i + 1 :]
        runs += 1
        at = breaks(candidate)
        if at is not None:
            best = candidate[:at]
        i = min(i, len(best)) - 1
    opened: set[int] = set()
    for step in best:  # steps of sessions the shorter list never opens do nothing
        if step.kind == "open":
            opened.add(step.session)
    return [step for step in best if step.session in opened or step.kind in ("down", "up", "fact", "backup")]


def report(seed: int, steps: list[Step], violations: list[Violation]) -> str:
    lines = [f"seed {seed}: {len(violations)} violation(s)"]
    counts = collections.Counter(v.invariant for v in violations)
    lines += [f"  {n} x [{name}]" for name, n in counts.most_common()]
    for v in violations[:10]:
        lines.append(f"  step {v.step} [{v.invariant}] {v.detail}")
    lines.append("  steps: " + " ".join(str(s) for s in steps))
    return "\n".join(lines)


def seeds_from_env(default: list[int]) -> Iterator[int]:
    """PYBRAIN_SIM_SEED=n: that seed alone; PYBRAIN_SIM_SEEDS=n: n seeds from PYBRAIN_SIM_FIRST
    (1000)."""
    if os.environ.get("PYBRAIN_SIM_SEED"):
        yield int(os.environ["PYBRAIN_SIM_SEED"])
        return
    count = int(os.environ.get("PYBRAIN_SIM_SEEDS", "0") or 0)
    first = int(os.environ.get("PYBRAIN_SIM_FIRST", "1000") or 1000)
    yield from (range(first, first + count) if count else default)
