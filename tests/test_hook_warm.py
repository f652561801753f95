"""`brain hook` through the warm process (pybrain.hooks.warm): the first hook runs in its
own process and starts it; the hooks after it are run by a fork of it, with the hook
process's standard input, output, error, environment and directory, and answer the same.
The hook process itself then imports neither psycopg nor click."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers import outage_output_ok
from test_hooks import payload, run_hook, sessions

from pybrain.hooks import warm


@pytest.fixture
def warm_env(cli_env, monkeypatch):
    env = {**cli_env, "BRAIN_HOOK_SERVER": "auto"}
    monkeypatch.setenv("BRAIN_HOOK_SERVER", "auto")
    yield env
    warm.stop()


def _wait_for(path: Path, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), f"no {path}"


def test_the_warm_process_runs_the_hooks_after_the_first(warm_env, conn, tmp_path) -> None:
    home = Path(warm_env["BRAIN_HOME"])
    project = tmp_path / "billing"
    project.mkdir()
    transcript = tmp_path / "none.jsonl"
    start = payload("session-start", transcript, project)

    first, _ = run_hook(warm_env, "session-start", start, "--project", "billing")
    assert first.returncode == 0, first.stderr
    _wait_for(Path(warm.socket_path(str(home))))

    # -X importtime lists this process's imports on its stderr: not psycopg, not click
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "pybrain",
            "hook",
            "session-start",
            "--project",
            "billing",
        ],
        input=start,
        capture_output=True,
        env={**environ, **warm_env},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    imported = {line.split("|")[-1].strip() for line in out.stderr.decode().splitlines() if "|" in line}
    assert "pybrain.entry" in imported
    assert not {"psycopg", "click", "pybrain.hooks", "pybrain.client", "pybrain.cli"} & imported
    first_context = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    second_context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]

    def but_the_session(context: str) -> list[str]:
        return [line for line in context.splitlines() if "session #" not in line]

    assert but_the_session(first_context) == but_the_session(second_context)

    # the session is bound to the hook process's parent (here, this test), as in its own process
    booted = sessions(conn)
    assert [s["pid"] for s in booted] == [os.getpid(), os.getpid()]
    assert booted[-1]["cwd"] == str(project) and booted[-1]["project"] == "billing"

    # BRAIN_PROJECT is the hook process's, not the warm process's
    out, _ = run_hook({**warm_env, "BRAIN_PROJECT": "payroll"}, "session-start", start)
    assert out.returncode == 0, out.stderr
    assert sessions(conn)[-1]["project"] == "payroll"

    # its errors are the hook's own: one line on its stderr, exit 0
    bad, _ = run_hook(warm_env, "session-start", b"not json")
    assert bad.returncode == 0 and bad.stdout == b""
    notice = bad.stderr.decode()
    assert notice.startswith("pybrain session-start hook: ") and "not the hook's JSON" in notice

    # and what click says of a bad option is click's (the hook process's own CLI)
    usage, _ = run_hook(warm_env, "prompt", b"{}", "--budget", "5")
    assert usage.returncode == 2 and b"--budget" in usage.stderr

    assert warm.stop()
    deadline = time.monotonic() + 10
    while (Path(warm.socket_path(str(home)))).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (Path(warm.socket_path(str(home)))).exists()


def test_without_a_warm_process_the_hook_runs_in_its_own(cli_env, conn, tmp_path) -> None:
    """BRAIN_HOOK_SERVER=off: no process is started, the hook answers all the same."""
    project = tmp_path / "billing"
    project.mkdir()
    out, _ = run_hook(cli_env, "session-start", payload("session-start", tmp_path / "t.jsonl", project))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert not Path(warm.socket_path(cli_env["BRAIN_HOME"])).exists()


def test_the_entry_points_events_are_the_hooks() -> None:
    from pybrain import entry, hooks

    assert tuple(hooks.EVENTS) == entry.HOOK_EVENTS


def test_through_the_warm_process_a_hung_database_costs_under_a_second(warm_env, conn, tmp_path) -> None:
    """The warm process's child gives the database the same time from the hook process's start."""
    import socket

    home = Path(warm_env["BRAIN_HOME"])
    project = tmp_path / "billing"
    project.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    first, _ = run_hook(warm_env, "session-start", payload("session-start", transcript, project))
    assert first.returncode == 0, first.stderr
    _wait_for(Path(warm.socket_path(str(home))))
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        hung = {
            **warm_env,
            "BRAIN_DATABASE_URL": f"postgresql://b:b@127.0.0.1:{silent.getsockname()[1]}/brain",
        }
        for event in ("session-start", "prompt", "pre-compact", "session-end"):
            out, seconds = run_hook(hung, event, payload(event, transcript, project))
            assert out.returncode == 0 and outage_output_ok(event, out.stdout), out.stdout
            assert "the database did not answer within" in out.stderr.decode()
            assert seconds < 1.0, f"{event} took {seconds:.2f} s"
    assert len(list((home / "spool").glob("*.json"))) == 2  # pre-compact's and session-end's


def test_in_its_own_process_a_hook_imports_only_what_it_needs(cli_env, conn, tmp_path) -> None:
    """BRAIN_HOOK_SERVER=off: the prompt hook imports psycopg, not the CLI's click, the MCP
    server's mcp and pydantic, requests or the boot template's jinja2."""
    import subprocess
    import sys

    project = tmp_path / "billing"
    project.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pybrain", "hook", "prompt"],
        input=payload("prompt", tmp_path / "t.jsonl", project),
        capture_output=True,
        env={**environ, **cli_env},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    imported = {line.split("|")[-1].strip() for line in out.stderr.decode().splitlines() if "|" in line}
    assert {"psycopg", "pybrain.hooks"} <= imported
    assert not {"click", "mcp", "pydantic", "requests", "jinja2", "pybrain.cli", "pybrain.mcp"} & imported


def test_a_warm_process_whose_code_changed_hands_the_hook_back_and_exits(warm_env, conn, tmp_path) -> None:
    """pybrain upgraded under a running warm process: the hook runs in its own process (the
    new code), and the warm process exits for one with the new code to take its place."""
    import pybrain.hooks.spool as module

    home = Path(warm_env["BRAIN_HOME"])
    project = tmp_path / "billing"
    project.mkdir()
    start = payload("session-start", tmp_path / "t.jsonl", project)
    first, _ = run_hook(warm_env, "session-start", start)
    assert first.returncode == 0, first.stderr
    sock = Path(warm.socket_path(str(home)))
    _wait_for(sock)
    source = Path(module.__file__)
    before = source.stat()
    try:
        os.utime(source, (before.st_atime, before.st_mtime + 5))
        out, _ = run_hook(warm_env, "session-start", start)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        deadline = time.monotonic() + 10
        while sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not sock.exists(), "the stale warm process left"
    finally:
        os.utime(source, (before.st_atime, before.st_mtime))
