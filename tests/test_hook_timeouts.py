"""Every call a hook makes runs within the hook's time: each transaction of every Brain a
hook uses carries the hook's statement_timeout (SET LOCAL), the capture's writes and the
background embedding included."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_hook_capture import Transcript

from pybrain import connector, hooks
from pybrain.hooks import base, finish


@pytest.fixture
def applied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str | None, bool]]:
    """(statement_timeout, set as the hook's) of every transaction a Brain opens from here on."""
    seen: list[tuple[str | None, bool]] = []
    apply = connector._apply

    def recording(cur: Any, scope: connector.Scope) -> None:
        seen.append((scope.statement_timeout, scope.statement_timeout is not None))
        apply(cur, scope)

    monkeypatch.setattr(connector, "_apply", recording)
    return seen


def _hook(event: str, payload: dict[str, Any], timeout: float) -> str:
    out, err = io.StringIO(), io.StringIO()
    hooks.run(event, json.dumps(payload).encode(), hooks.Options(timeout=timeout), out, err)
    assert "hook:" not in err.getvalue(), err.getvalue()
    return out.getvalue()


def test_every_transaction_of_a_hook_carries_its_statement_timeout(
    cli_env: dict[str, str], tmp_path: Path, applied: list[tuple[str | None, bool]], monkeypatch
) -> None:
    monkeypatch.setenv("BRAIN_HOOK_FINISH", "off")
    seat = tmp_path / "billing"
    seat.mkdir()
    folder = tmp_path / "claude-projects" / "-home-dev-billing"
    folder.mkdir(parents=True)
    payload = {"cwd": str(seat), "hook_event_name": "SessionStart", "source": "startup"}

    crashed = Transcript(folder, "1c2d3e4f-0a1b-4c2d-8e3f-5a6b7c8d9e01", seat)
    client = subprocess.Popen(["sleep", "60"])  # the client that will crash
    monkeypatch.setattr(base, "_client_pid", lambda: client.pid)
    first = {**payload, "session_id": crashed.session, "transcript_path": str(crashed.path)}
    _hook("session-start", first, 7)
    crashed.user("Why does the nightly export write 0 invoices?")
    crashed.assistant("It reads yesterday's partition in UTC: pass DATE explicitly.", tool="make export")
    # no SessionEnd: the client dies, and the next start captures the crashed session's turns
    client.kill()
    client.wait()
    monkeypatch.setattr(base, "_client_pid", lambda: os.getpid())
    applied.clear()
    later = Transcript(folder, "2d3e4f5a-1b2c-4d3e-9f4a-6b7c8d9e0f12", seat)
    start = {**payload, "session_id": later.session, "transcript_path": str(later.path)}
    # (a minute: it captures within half its time, which a loaded machine must not cut short)
    assert "pass DATE explicitly" in _hook("session-start", start, 60)
    assert applied and set(applied) == {("60000ms", True)}, applied

    applied.clear()
    asked = {
        **start,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which port does staging's pgbouncer use?",
    }
    _hook("prompt", asked, 8)
    assert applied and set(applied) == {("8000ms", True)}, applied

    later.user("Which port does staging's pgbouncer listen on?")
    later.assistant("Port 5433 since the move on Monday.")
    applied.clear()
    end = {**start, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    _hook("session-end", end, 9)
    assert applied and set(applied) == {("9000ms", True)}, applied

    # the background process's embedding of what the hooks queued
    applied.clear()
    with contextlib.ExitStack() as stack:
        opened = stack.enter_context(base._brain(hooks.Options(timeout=5, event="session-end"), start=False))
        finish._embed_queued(opened)
    assert applied and set(applied) == {("5000ms", True)}, applied
