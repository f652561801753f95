"""The hooks' plumbing when the database is not there: a database that accepts and never
answers, one that refuses, a stopped embedded one. Every hook returns within a second;
what PreCompact and SessionEnd could not write is kept on disk (BRAIN_HOME/spool) and
written by the next hook or command that reaches the database, once.

Each hook runs as Claude Code runs it: the command, its JSON on standard input, a new process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import embedded_brain, outage_output_ok, pump
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from test_hooks import DOWN_URL, FIXTURES, SESSION, captured, payload, run_hook, sessions

CAPTURE = ("pre-compact", "session-end")
EVENTS = ("session-start", "prompt", *CAPTURE)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "claude" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    shutil.copy(FIXTURES / "transcript.jsonl", path)
    return path


@contextmanager
def silent_database() -> Iterator[str]:
    """A URL whose server accepts connections and never says a word (a hung PostgreSQL)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        yield f"postgresql://brain:brain@127.0.0.1:{silent.getsockname()[1]}/brain"


class Switch:
    """A TCP front of the test database that passes connections through, refuses them
    (the server is down) or accepts them and never answers (it hangs): one URL throughout,
    as a user's BRAIN_DATABASE_URL stays while the server comes and goes. stop() closes
    the port itself (a stopped server: "Connection refused"), start() opens it again."""

    def __init__(self, db_url: str) -> None:
        params = conninfo_to_dict(db_url)
        self.target = next(Path(params["host"]).glob(".s.PGSQL.*"))
        self.mode = "pass"
        self.port = 0
        self._listen()
        params.update(host="127.0.0.1", port=str(self.port))
        self.url = make_conninfo(**params)
        self.held: list[socket.socket] = []

    def _listen(self) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
        self.listener.listen(32)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def stop(self) -> None:
        """The server is stopped: nothing listens on its port."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        self.listener.close()

    def start(self) -> None:
        """The server is back on the same port, passing connections through."""
        self.mode = "pass"
        self._listen()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if self.mode == "hang":
                self.held.append(client)
            elif self.mode == "refuse":
                client.close()
            else:
                server = socket.socket(socket.AF_UNIX)
                server.connect(str(self.target))
                for a, b in ((client, server), (server, client)):
                    threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        pump(src, dst)

    def close(self) -> None:
        self.stop()
        for s in self.held:
            s.close()


@pytest.fixture
def switch(db_url, cli_env, monkeypatch) -> Iterator[Switch]:
    """The test database behind a Switch; cli_env and this process use its URL."""
    front = Switch(db_url)
    cli_env["BRAIN_DATABASE_URL"] = front.url
    monkeypatch.setenv("BRAIN_DATABASE_URL", front.url)
    yield front
    front.close()


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
    assert outage_output_ok(event, out.stdout), out.stdout
    if event in ("session-start", "prompt"):  # the model is told, in one line
        assert b"the database did not answer in time" in out.stdout
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
    cli_env, conn, switch, transcript, project_dir
) -> None:
    home = Path(cli_env["BRAIN_HOME"])
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert out.returncode == 0, out.stderr

    # compaction while the database hangs, the session's end while it refuses connections
    switch.mode = "hang"
    out, _ = run_hook(cli_env, "pre-compact", payload("pre-compact", transcript, project_dir))
    assert b"kept in" in out.stderr, out.stderr
    with transcript.open("a", encoding="utf-8") as f:
        f.write((FIXTURES / "transcript_more.jsonl").read_text(encoding="utf-8"))
    switch.mode = "refuse"
    out, _ = run_hook(cli_env, "session-end", payload("session-end", transcript, project_dir))
    assert b"kept in" in out.stderr, out.stderr
    assert len(spooled(home)) == 2
    assert captured(conn) == []
    # Claude Code has cleaned its transcripts up meanwhile: the spool holds its own copy
    transcript.unlink()

    # The next session starts with the database back: what was kept is written first,
    # so its boot payload carries that session's handoff.
    switch.mode = "pass"
    start = payload("session-start", transcript, project_dir, session_id="next-session")
    out, _ = run_hook(cli_env, "session-start", start)
    assert out.returncode == 0, out.stderr
    refs = [r["source_ref"] for r in captured(conn)]
    assert refs == [f"{SESSION}/{u}" for u in ("a3", "a4", "a6", "a7", "a9", "b1", "b2")]
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Last request: CI is green on #482." in context
    first, second = sessions(conn)
    assert first["status"] == "ended" and second["status"] == "active"
    assert first["ended_at"] < second["started_at"], "the kept end is the first session's, at its time"
    assert spooled(home) == []
    assert list((home / "spool").iterdir()) == [], "the transcript copies go with their records"

    # and never twice: another hook, a retried session end
    handoffs = conn.execute("SELECT count(*) FROM brain.handoff").fetchone()[0]
    out, _ = run_hook(cli_env, "session-start", start)
    assert out.returncode == 0, out.stderr
    assert len(captured(conn)) == 7
    assert conn.execute("SELECT count(*) FROM brain.handoff").fetchone()[0] == handoffs


def test_a_brain_command_writes_what_was_kept(
    cli_env, conn, switch, brain_cli, transcript, project_dir
) -> None:
    home = Path(cli_env["BRAIN_HOME"])
    switch.mode = "refuse"
    out, _ = run_hook(cli_env, "pre-compact", payload("pre-compact", transcript, project_dir))
    assert len(spooled(home)) == 1, out.stderr
    switch.mode = "pass"
    r = brain_cli("stats", "--json")
    assert r.exit_code == 0, r.output
    assert len(captured(conn)) == 5
    assert spooled(home) == []


def test_what_was_kept_for_another_database_is_left_for_it(cli_env, conn, transcript, project_dir) -> None:
    home = Path(cli_env["BRAIN_HOME"])
    elsewhere = {**cli_env, "BRAIN_DATABASE_URL": DOWN_URL}
    out, _ = run_hook(elsewhere, "session-end", payload("session-end", transcript, project_dir))
    (record,) = spooled(home)
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    assert spooled(home) == [record]
    assert captured(conn) == []


def test_a_kept_capture_the_database_refuses_is_set_aside(
    cli_env, conn, switch, transcript, project_dir
) -> None:
    """A record the database refuses (not an outage) is moved to spool/failed, not tried forever."""
    home = Path(cli_env["BRAIN_HOME"])
    switch.mode = "refuse"
    out, _ = run_hook(cli_env, "session-end", payload("session-end", transcript, project_dir))
    (record,) = spooled(home)
    data = json.loads(record.read_text())
    data["options"]["source"] = "two words"  # brain.end_session_of refuses it (BR009)
    record.write_text(json.dumps(data))
    switch.mode = "pass"
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    assert "set aside" in out.stderr.decode()
    assert spooled(home) == []
    assert [p.name for p in (home / "spool" / "failed").glob("*.json")] == [record.name]


def test_capture_hooks_start_a_stopped_embedded_database(tmp_path, transcript, project_dir) -> None:
    home = tmp_path / "home"
    try:
        init = embedded_brain(home, "init")
        assert init.returncode == 0, init.stderr
        stopped = embedded_brain(home, "db", "stop")
        assert stopped.stdout.strip() == "stopped", stopped.stderr
        env = {"BRAIN_HOME": str(home), "BRAIN_EMBEDDER": "hash", "BRAIN_DATABASE_URL": ""}
        out, _ = run_hook(env, "session-end", payload("session-end", transcript, project_dir))
        assert out.returncode == 0
        assert b"5 created" in out.stderr, out.stderr
        assert spooled(home) == []
        assert embedded_brain(home, "db", "status").returncode == 0
    finally:
        embedded_brain(home, "db", "stop")


def test_session_start_brings_the_embedded_database_up_to_an_upgraded_pybrain(
    tmp_path, transcript, project_dir
) -> None:
    """pybrain upgraded under an embedded database a release before it made: the prompt hook
    says to run `brain init` (it must stay fast), the session-start hook migrates, and from
    then on the prompt hook answers from what was stored before the upgrade."""
    import psycopg

    home = tmp_path / "home"
    env = {"BRAIN_HOME": str(home), "BRAIN_EMBEDDER": "hash", "BRAIN_DATABASE_URL": ""}
    ask = "How do we rerun the nightly billing export?"
    try:
        assert embedded_brain(home, "init").returncode == 0
        stored = embedded_brain(
            home, "remember", "fact", "Rerun the nightly billing export with make export-billing"
        )
        assert stored.returncode == 0, stored.stderr
        owner = json.loads(embedded_brain(home, "db", "status", "--json").stdout)["url"]
        with psycopg.connect(owner, autocommit=True) as conn:
            # the release before this one: its last migration not there, its functions older
            conn.execute("DROP TYPE brain.search_request CASCADE")
            conn.execute("DELETE FROM brain.migration WHERE name = '026-search-request.sql'")
            conn.execute("COMMENT ON TABLE brain.migration IS 'functions of an older release'")
        out, _ = run_hook(env, "prompt", payload("prompt", transcript, project_dir, prompt=ask))
        assert out.returncode == 0 and outage_output_ok("prompt", out.stdout)
        assert b"the database needs `brain init`" in out.stdout
        assert "brain init" in out.stderr.decode()
        out, _ = run_hook(env, "session-start", payload("session-start", transcript, project_dir))
        assert out.returncode == 0, out.stderr
        assert "the database upgraded (026-search-request.sql)" in out.stderr.decode(), out.stderr
        out, _ = run_hook(env, "prompt", payload("prompt", transcript, project_dir, prompt=ask))
        assert out.returncode == 0, out.stderr
        assert "make export-billing" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        embedded_brain(home, "db", "stop")


def test_a_record_claimed_by_a_process_that_died_is_written_by_the_next(tmp_path) -> None:
    """A writer killed while it held a record (renamed with its pid) leaves it to the next one."""
    from pybrain.hooks import spool

    kept = spool.keep(tmp_path, "session-end", {"session_id": "s"}, {"source": "claude-code"}, "/tmp", "t1")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    claimed = kept.with_name(f"{kept.name}.claim-{int(dead.stdout)}")
    os.replace(kept, claimed)
    assert spool.pending(tmp_path) == []
    written: list[dict] = []
    assert spool.drain(tmp_path, written.append, print, "t1") == 1
    assert [r["payload"]["session_id"] for r in written] == ["s"]
    assert not claimed.exists() and spool.pending(tmp_path) == []
    # a record for another database stays where it is
    other = spool.keep(tmp_path, "session-end", {"session_id": "o"}, {}, "/tmp", "t2")
    assert spool.drain(tmp_path, written.append, print, "t1") == 0
    assert spool.pending(tmp_path) == [other]


def test_a_session_end_leaves_what_was_kept_to_its_background_process(
    cli_env, conn, switch, transcript, project_dir, tmp_path
) -> None:
    """Within Claude Code's 1.5 s (BRAIN_HOOK_END_BY set) the session-end hook does not write
    the spool's records itself: the process it starts on its own does, first."""
    home = Path(cli_env["BRAIN_HOME"])
    cli_env["BRAIN_HOOK_END_BY"] = "5"
    out, _ = run_hook(cli_env, "session-start", payload("session-start", transcript, project_dir))
    assert out.returncode == 0, out.stderr
    switch.mode = "refuse"
    out, _ = run_hook(cli_env, "session-end", payload("session-end", transcript, project_dir))
    assert b"kept in" in out.stderr, out.stderr
    assert len(spooled(home)) == 1 and captured(conn) == []

    switch.mode = "pass"
    empty = tmp_path / "other-session.jsonl"
    empty.write_text("")
    other = payload("session-end", empty, project_dir, session_id="other-session")
    out, _ = run_hook(cli_env, "session-end", other)
    assert out.returncode == 0 and b"hook:" not in out.stderr, out.stderr
    deadline = time.monotonic() + 60
    while len(captured(conn)) < 5 or spooled(home):
        assert time.monotonic() < deadline, f"{len(captured(conn))} turns stored, {spooled(home)} waiting"
        time.sleep(0.2)
    assert [r["source_ref"] for r in captured(conn)] == [
        f"{SESSION}/{u}" for u in ("a3", "a4", "a6", "a7", "a9")
    ]
