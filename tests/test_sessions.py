"""The session registry, handoffs, action items and the scratchpad, in SQL."""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import subprocess
import sys

import psycopg
import pytest
from helpers import call_rows, call_scalar, each_refused, raises_br, remember, rows, scalar, unaged

T0 = dt.datetime(2026, 6, 1, 9, 0, tzinfo=dt.UTC)


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def at_t0(kwargs: dict) -> dict:
    """Arguments of a session call: now T0 unless given, the JSON ones as JSON text."""
    kwargs.setdefault("now", T0)
    for key in ("host_processes", "client_info", "snapshot"):
        if key in kwargs:
            kwargs[key] = json.dumps(kwargs[key])
    return kwargs


def boot(conn, source: str = "claude", **kwargs) -> dict:
    return call_scalar(conn, "boot_session", source=source, **at_t0(kwargs))


def active(conn, **kwargs) -> list[int]:
    return [r["session_id"] for r in call_rows(conn, "list_active_sessions", **at_t0(kwargs))]


def test_reboot_of_the_same_process_ends_the_old_session(conn) -> None:
    first = boot(conn, cwd="/src", pid=100, pid_started_at=T0, host="h1")
    other_pid = boot(conn, cwd="/src", pid=101, pid_started_at=T0, host="h1")
    again = boot(conn, cwd="/src", pid=100, pid_started_at=T0, host="h1", now=at(1))
    assert again["rebooted"] == [first["session_id"]]
    assert active(conn, now=at(1)) == [other_pid["session_id"], again["session_id"]]
    reason = scalar(
        conn, "SELECT end_reason FROM brain.session WHERE session_id = %s", (first["session_id"],)
    )
    assert reason == "rebooted"


def test_a_reused_pid_is_another_process(conn) -> None:
    first = boot(conn, cwd="/src", pid=100, pid_started_at=T0, host="h1")
    later = boot(conn, cwd="/src", pid=100, pid_started_at=at(30), host="h1", now=at(1))
    assert later["rebooted"] == []
    # The process table of h1 shows pid 100 started at T0+30min: the first session's process is gone.
    table = [[100, at(30).timestamp()], [7, 0.0]]
    assert active(conn, host="h1", host_processes=table, now=at(2)) == [later["session_id"]]
    assert (
        scalar(conn, "SELECT end_reason FROM brain.session WHERE session_id = %s", (first["session_id"],))
        == "process gone"
    )


def test_dead_process_and_stale_heartbeat_are_swept(conn) -> None:
    dead = boot(conn, pid=200, pid_started_at=T0, host="h1")["session_id"]
    elsewhere = boot(conn, pid=200, pid_started_at=T0, host="h2")["session_id"]
    quiet = boot(conn, host="h3")["session_id"]
    assert active(conn, host="h1", host_processes=[[1, 0.0]], now=at(1)) == [elsewhere, quiet]
    assert (
        scalar(conn, "SELECT end_reason FROM brain.session WHERE session_id = %s", (dead,)) == "process gone"
    )
    scalar(conn, "SELECT brain.update_active_task(%s, 'still here', now => %s)", (elsewhere, at(4)))
    assert active(conn, now=at(7)) == [elsewhere], "5-minute TTL: quiet's heartbeat is 7 minutes old"
    assert (
        scalar(conn, "SELECT end_reason FROM brain.session WHERE session_id = %s", (quiet,))
        == "heartbeat expired"
    )


def test_every_call_with_a_session_refreshes_its_heartbeat(conn) -> None:
    s = boot(conn)["session_id"]
    remember(conn, kind="fact", headline="Written by the session", session_id=s)
    heartbeat = scalar(conn, "SELECT heartbeat_at FROM brain.session WHERE session_id = %s", (s,))
    assert heartbeat > T0


def test_siblings_see_each_other_and_not_other_projects(conn) -> None:
    a = boot(conn, project="web", cwd="/web", task="fix the login form")["session_id"]
    b = boot(conn, "cursor", project="web", cwd="/web2")["session_id"]
    c = boot(conn, project="api")["session_id"]
    payload_b = scalar(conn, "SELECT brain.boot_payload(%s, now => %s)", (b, T0))
    assert [(o["session_id"], o["current_task"]) for o in payload_b["sections"]["siblings"]] == [
        (a, "fix the login form")
    ]
    payload_c = scalar(conn, "SELECT brain.boot_payload(%s, now => %s)", (c, T0))
    assert payload_c["sections"]["siblings"] == []
    assert active(conn, project="web", exclude_session=a) == [b]


def test_handoff_carries_over_to_the_next_session_of_the_same_project(conn) -> None:
    s1 = boot(conn, project="web")["session_id"]
    snapshot = {"summary": "login fixed", "status": "done", "blockers": [], "pending": ["deploy"]}
    scalar(
        conn,
        "SELECT brain.end_session(%s, 'Deploy is the next step.', %s, now => %s)",
        (s1, json.dumps(snapshot), at(10)),
    )
    same = boot(conn, project="web", now=at(20))
    handoff = same["sections"]["handoff"]
    assert (handoff["session_id"], handoff["text"], handoff["truncated"]) == (
        s1,
        "Deploy is the next step.",
        False,
    )
    assert handoff["snapshot"] == snapshot
    # whatever the harness: a Cursor session of the project gets it too
    assert boot(conn, "cursor", project="web", now=at(21))["sections"]["handoff"]["session_id"] == s1
    assert boot(conn, project="api", now=at(22))["sections"]["handoff"] is None


def test_a_long_handoff_is_cut_at_2000_characters(conn) -> None:
    s1 = boot(conn)["session_id"]
    scalar(conn, "SELECT brain.end_session(%s, %s, now => %s)", (s1, "word " * 1000, at(1)))
    handoff = boot(conn, now=at(2), token_budget=5000)["sections"]["handoff"]
    assert (
        len(handoff["text"]) == 2000 and handoff["text"].endswith(" … [truncated]") and handoff["truncated"]
    )


def test_end_session_checks(conn) -> None:
    s = boot(conn)["session_id"]
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.end_session(%s, 'x', '{\"mood\": \"good\"}')", (s,))
    with raises_br("BR007"):
        scalar(conn, "SELECT brain.end_session(%s, 'key AKIAIOSFODNN7EXAMPLE')", (s,))
    scalar(conn, "SELECT brain.end_session(%s)", (s,))
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.end_session(%s)", (s,))
    with raises_br("BR016"):
        scalar(conn, "SELECT brain.end_session(999)")
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.update_active_task(%s, 'late')", (s,))


def test_pending_action_items_block_writes_until_acknowledged(conn) -> None:
    writer = boot(conn, project="web")["session_id"]
    raiser = boot(conn, "ops", project="web")["session_id"]
    item = scalar(
        conn,
        "SELECT brain.create_action_item('Stop deploying from laptops', 'web', session => %s)",
        (raiser,),
    )
    remember(conn, kind="fact", headline="The raiser itself may write", session_id=raiser)
    with raises_br("BR013") as caught:
        remember(conn, kind="fact", headline="Blocked write", session_id=writer)
    assert f'"id": {item}' in caught.error.diag.message_detail
    with raises_br("BR013"):
        scalar(
            conn,
            "SELECT count(*) FROM brain.capture_context('We decided to use pnpm.', session_id => %s)",
            (writer,),
        )
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 1
    payload = scalar(conn, "SELECT brain.boot_payload(%s, now => %s)", (writer, T0))
    assert [a["id"] for a in payload["sections"]["action_items"]] == [item]
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.acknowledge_action_item(%s, %s, 'maybe')", (item, writer))
    out = scalar(
        conn, "SELECT brain.acknowledge_action_item(%s, %s, 'will_execute', 'on it')", (item, writer)
    )
    assert out["still_pending"] == 0
    assert remember(conn, kind="fact", headline="Released write", session_id=writer)["action"] == "created"
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.acknowledge_action_item(%s, %s, 'already_done')", (item, writer))


def test_action_items_are_scoped_by_project_and_source(conn) -> None:
    web_claude = boot(conn, project="web")["session_id"]
    web_cursor = boot(conn, "cursor", project="web")["session_id"]
    api_claude = boot(conn, project="api")["session_id"]
    scalar(conn, "SELECT brain.create_action_item('Only for claude in web', 'web', 'claude')")
    scalar(conn, "SELECT brain.create_action_item('Everyone everywhere')")
    pending = {
        s: [p["text"] for p in rows(conn, "SELECT text FROM brain.pending_action_items(%s)", (s,))]
        for s in (web_claude, web_cursor, api_claude)
    }
    # an item without a project belongs to the sessions without one: it blocks no project
    assert pending == {web_claude: ["Only for claude in web"], web_cursor: [], api_claude: []}


def test_scratchpad_per_session_and_project(conn) -> None:
    s = boot(conn, project="web")["session_id"]
    scalar(conn, "SELECT brain.scratch_set('branch', 'feature/login', session => %s)", (s,))
    scalar(conn, "SELECT brain.scratch_set('branch', 'main', project => 'web')")
    scalar(conn, "SELECT brain.scratch_set('branch', 'feature/login-2', session => %s)", (s,))
    assert scalar(conn, "SELECT brain.scratch_get('branch', session => %s)", (s,)) == "feature/login-2"
    assert scalar(conn, "SELECT brain.scratch_get('branch', project => 'web')") == "main"
    assert scalar(conn, "SELECT brain.scratch_get('missing', project => 'web')") is None
    assert [r["key"] for r in rows(conn, "SELECT * FROM brain.scratch_list(session => %s)", (s,))] == [
        "branch"
    ]
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 0, "notes are not memories"
    each_refused(
        conn,
        ("BR009", "SELECT brain.scratch_set('k', 'v')"),
        ("BR009", "SELECT brain.scratch_set('bad key!', 'v', project => 'web')"),
        ("BR005", "SELECT brain.scratch_set('k', repeat('x', 4001), project => 'web')"),
        ("BR007", "SELECT brain.scratch_set('k', 'AKIAIOSFODNN7EXAMPLE', project => 'web')"),
        ("BR016", "SELECT brain.scratch_get('k', session => 999)"),
    )


def test_boot_needs_a_source_and_a_sane_budget(conn) -> None:
    with raises_br("BR009"):
        boot(conn, source="two words")
    with raises_br("BR009"):
        boot(conn, token_budget=199)
    with raises_br("BR007"):
        boot(conn, task="deploy with AKIAIOSFODNN7EXAMPLE")
    assert scalar(conn, "SELECT count(*) FROM brain.session") == 0


def test_boots_record_the_tokens_they_inject(conn) -> None:
    remember(conn, kind="rule", headline="Never force-push to main", severity="BLOCKER")
    payload = boot(conn)
    (event,) = rows(conn, "SELECT session_id, budget, tokens, sections, dropped FROM brain.boot_event")
    assert (event["session_id"], event["budget"], event["tokens"]) == (
        payload["session_id"],
        2000,
        payload["tokens"],
    )
    assert event["sections"]["blockers"] == 1 and event["dropped"] == {}


@pytest.mark.parametrize("pinned_first", [True])
def test_blockers_put_pinned_first_and_include_global_and_project(conn, pinned_first) -> None:
    plain = remember(conn, kind="rule", headline="Global blocker", severity="BLOCKER")["memory_id"]
    pinned = remember(
        conn, kind="rule", headline="Pinned blocker", severity="BLOCKER", pinned=True, project="web"
    )["memory_id"]
    remember(conn, kind="rule", headline="Other project blocker", severity="BLOCKER", project="api")
    blockers = boot(conn, project="web")["sections"]["blockers"]
    assert [b["id"] for b in blockers] == [pinned, plain]


def test_an_unknown_session_is_refused(conn) -> None:
    with raises_br("BR016"):
        remember(conn, kind="fact", headline="From nowhere", session_id=4242)
    with raises_br("BR016"):
        scalar(conn, "SELECT brain.record_tool_event('search', now(), 1, true, 'mcp', 4242)")
    s = boot(conn)["session_id"]
    with raises_br("BR007"):
        scalar(conn, "SELECT brain.update_active_task(%s, 'deploy with AKIAIOSFODNN7EXAMPLE')", (s,))


def end_of(conn, source: str = "claude", **kwargs) -> dict:
    """brain.end_session_of as a later shell of a seat calls it."""
    return call_scalar(conn, "end_session_of", source=source, **at_t0(kwargs))


def status(conn, session: int) -> tuple[str, str | None]:
    row = rows(conn, "SELECT status, end_reason FROM brain.session WHERE session_id = %s", (session,))[0]
    return row["status"], row["end_reason"]


SEAT = {"project": "web", "cwd": "/src/web", "host": "laptop"}


def age(database: str, session: int, minutes: float) -> None:
    """Minutes pass for a session: its heartbeat moves back (a client's clock cannot run ahead)."""
    with psycopg.connect(database, autocommit=True) as owner:
        owner.execute(
            "UPDATE brain.session SET heartbeat_at = heartbeat_at - make_interval(secs => %s)"
            " WHERE session_id = %s",
            (minutes * 60, session),
        )


def test_a_session_without_a_process_lives_by_its_heartbeat(conn, database) -> None:
    s = boot(conn, **SEAT)["session_id"]
    # The host's process table is checked only for sessions bound to a process.
    assert active(conn, host="laptop", host_processes=[[1, 0.0]], now=at(4)) == [s]
    remember(conn, kind="fact", headline="Login form posts to the new API", session_id=s)
    heartbeat = scalar(conn, "SELECT heartbeat_at FROM brain.session WHERE session_id = %s", (s,))
    assert heartbeat > at(4), "a write of the session is a heartbeat, at the server's clock"
    age(database, s, 4)
    assert active(conn, now=None) == [s]
    age(database, s, 2)
    assert active(conn, now=None) == []
    assert status(conn, s) == ("ended", "heartbeat expired")


def test_end_from_a_later_shell_ends_the_session_of_its_seat(conn) -> None:
    other_dir = boot(conn, project="web", cwd="/src/web-2", host="laptop")["session_id"]
    other_source = boot(conn, "cursor", **SEAT)["session_id"]
    other_host = boot(conn, project="web", cwd="/src/web", host="desktop")["session_id"]
    mine = boot(conn, **SEAT, now=at(1))["session_id"]
    out = end_of(conn, **SEAT, handoff="Login fixed; deploy is next.", now=at(3))
    assert (out["session"], out["ended"], out["handoff_chars"]) == (mine, True, 28)
    assert status(conn, mine) == ("ended", "ended")
    assert active(conn, now=at(3)) == [other_dir, other_source, other_host]
    handoff = boot(conn, **SEAT, now=at(4))["sections"]["handoff"]
    assert (handoff["session_id"], handoff["text"]) == (mine, "Login fixed; deploy is next.")


def test_end_of_a_seat_takes_its_newest_live_session(conn) -> None:
    older = boot(conn, **SEAT)["session_id"]
    newer = boot(conn, **SEAT, now=at(1))["session_id"]
    assert end_of(conn, **SEAT, now=at(2))["session"] == newer
    assert end_of(conn, **SEAT, now=at(3))["session"] == older, "then the one still live"
    assert status(conn, older) == ("ended", "ended")


def test_a_handoff_for_a_session_whose_heartbeat_expired_is_kept(conn) -> None:
    s = boot(conn, **SEAT, task="fix the login form")["session_id"]
    snapshot = {"summary": "form fixed", "pending": ["deploy"]}
    out = end_of(conn, **SEAT, handoff="Deploy after the review.", snapshot=snapshot, now=at(40))
    assert (out["session"], out["ended"], out["had_ended"]["reason"]) == (s, False, "heartbeat expired")
    assert (out["source"], out["project"], out["handoff_chars"]) == ("claude", "web", 24)
    assert status(conn, s) == ("ended", "heartbeat expired")
    handoff = boot(conn, **SEAT, now=at(41))["sections"]["handoff"]
    assert (handoff["session_id"], handoff["text"], handoff["snapshot"]) == (
        s,
        "Deploy after the review.",
        snapshot,
    )
    assert (
        boot(conn, "cursor", **SEAT, now=at(42))["sections"]["handoff"]["text"] == "Deploy after the review."
    ), "the project's, whatever the source"


def test_a_handoff_for_a_session_maintenance_ended_is_kept(conn) -> None:
    s = boot(conn, **SEAT)["session_id"]
    counts = scalar(conn, "SELECT brain.maintain(now => %s)", (at(30),))
    assert counts["sessions_ended"] == 1
    assert status(conn, s) == ("ended", "heartbeat expired")
    out = scalar(conn, "SELECT brain.end_session(%s, 'Cache layer half done.', now => %s)", (s, at(31)))
    assert (out["ended"], out["had_ended"]["reason"], out["handoff_id"] > 0) == (
        False,
        "heartbeat expired",
        True,
    )
    assert boot(conn, **SEAT, now=at(32))["sections"]["handoff"]["text"] == "Cache layer half done."


def test_a_session_bound_to_a_process_ends_with_it_and_its_handoff_is_kept(conn) -> None:
    s = boot(conn, **SEAT, pid=4242, pid_started_at=T0)["session_id"]
    alive = [[4242, T0.timestamp()], [1, 0.0]]
    assert active(conn, host="laptop", host_processes=alive, now=at(1)) == [s]
    out = end_of(conn, **SEAT, host_processes=[[1, 0.0]], handoff="Rebase onto main first.", now=at(2))
    assert (out["session"], out["ended"], out["had_ended"]["reason"]) == (s, False, "process gone")
    assert boot(conn, **SEAT, now=at(3))["sections"]["handoff"]["text"] == "Rebase onto main first."


def test_a_handoff_with_no_session_to_name_is_stored_for_the_project(conn) -> None:
    with raises_br("BR016") as caught:
        end_of(conn, **SEAT)
    assert caught.error.diag.message_primary == "No session of that source, project, cwd and host."
    assert "/src/web" not in str(caught.error.diag.message_detail), "the seat is not repeated"
    out = end_of(conn, **SEAT, handoff="Staging is down until Monday.", now=at(1))
    assert (out["session"], out["ended"], out["project"], out["handoff_id"] > 0) == (None, False, "web", True)
    handoff = boot(conn, project="web", cwd="/elsewhere", now=at(2))["sections"]["handoff"]
    assert (handoff["session_id"], handoff["text"]) == (None, "Staging is down until Monday.")


def test_handoffs_come_in_the_order_they_were_written(conn) -> None:
    s1 = boot(conn, **SEAT)["session_id"]
    s2 = boot(conn, **{**SEAT, "cwd": "/src/web-2"})["session_id"]
    scalar(conn, "SELECT brain.end_session(%s, 'From the first session.', now => %s)", (s1, at(1)))
    assert boot(conn, "ops", now=at(2))["sections"]["handoff"] is None
    scalar(conn, "SELECT brain.end_session(%s, 'From the second session.', now => %s)", (s2, at(3)))
    # s1 ended before s2 and went on (Codex's session stops each turn): the handoff written
    # for it later is the newest
    scalar(conn, "SELECT brain.end_session(%s, 'The first, again.', now => %s)", (s1, at(4)))
    assert boot(conn, **SEAT, now=at(5))["sections"]["handoff"]["text"] == "The first, again."
    assert boot(conn, **SEAT, now=at(3))["sections"]["handoff"]["text"] == "From the second session."
    assert boot(conn, **SEAT, now=at(2))["sections"]["handoff"]["text"] == "From the first session."


def test_the_same_handoff_is_stored_once(conn) -> None:
    s1 = boot(conn, **SEAT)["session_id"]
    first = end_of(conn, **SEAT, handoff="Deploy after  the review.", now=at(1))
    assert first["ended"] and "unchanged" not in first
    s2 = boot(conn, **SEAT, now=at(2))["session_id"]
    again = end_of(conn, **SEAT, handoff="Deploy after the review.", now=at(3))
    assert (again["session"], again["ended"], again["unchanged"]) == (s2, True, True)
    # ended already, the same handoff again: not stored apart either
    retried = end_of(conn, **SEAT, handoff="Deploy after the review.", now=at(4))
    assert (retried["handoff_id"], retried["unchanged"]) == (None, True)
    assert scalar(conn, "SELECT count(*) FROM brain.handoff") == 0
    assert scalar(conn, "SELECT count(*) FROM brain.session WHERE handoff IS NOT NULL") == 1
    handoff = boot(conn, **SEAT, now=at(5))["sections"]["handoff"]
    assert (handoff["session_id"], handoff["text"]) == (s1, "Deploy after  the review.")
    # a new snapshot is a new handoff
    out = end_of(conn, **SEAT, handoff="Deploy after the review.", snapshot={"status": "blocked"}, now=at(6))
    assert "unchanged" not in out
    assert scalar(conn, "SELECT count(*) FROM brain.session WHERE handoff IS NOT NULL") == 2


def test_end_session_of_checks_before_it_stores(conn) -> None:
    s = boot(conn, **SEAT)["session_id"]
    with raises_br("BR009"):
        end_of(conn, "two words", **SEAT, handoff="x")
    with raises_br("BR009"):
        end_of(conn, **SEAT, handoff="x", snapshot={"mood": "good"})
    with raises_br("BR007"):
        end_of(conn, **SEAT, handoff="key AKIAIOSFODNN7EXAMPLE", now=at(30))
    assert scalar(conn, "SELECT count(*) FROM brain.handoff") == 0
    assert status(conn, s) == ("active", None), "a refused call changes nothing"
    with raises_br("BR011") as caught:
        end_of(conn, **SEAT, now=at(31))
    assert "has already ended (heartbeat expired)" in caught.error.diag.message_primary


def shell(env: dict[str, str], cwd, *args: str) -> subprocess.CompletedProcess[str]:
    """`brain` run by a new shell in `cwd`: its own process, whose parent shell exits after it."""
    return subprocess.run(
        ["sh", "-c", shlex.join([sys.executable, "-m", "pybrain", *args])],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_boot_in_one_shell_and_end_in_another(cli_env, tmp_path) -> None:
    repo = tmp_path / "web"
    repo.mkdir()
    booted = shell(cli_env, repo, "boot", "--source", "claude", "--project", "web", "--task", "fix login")
    assert booted.returncode == 0, booted.stderr
    assert booted.stdout.startswith('# pybrain memory · "web" · session #1\nTask: "fix login"')
    listed = shell(cli_env, tmp_path, "sessions").stdout
    assert listed.startswith(f"#1 claude · web · {repo} · by heartbeat · fix login"), listed
    ended = shell(cli_env, repo, "end", "--source", "claude", "--project", "web", "--handoff", "Login fixed.")
    assert (ended.returncode, ended.stdout) == (0, "session #1 ended\n"), ended.stderr
    again = shell(cli_env, repo, "boot", "--source", "claude", "--project", "web")
    assert '## Handoff from the last session\n"Login fixed."\n' in unaged(again.stdout)


def test_end_after_the_session_ended_keeps_the_handoff(brain_cli, conn, database) -> None:
    brain_cli("boot", "--source", "claude", "--project", "web", "--cwd", "/src/web")
    age(database, 1, 60)
    counts = scalar(conn, "SELECT brain.maintain()")
    assert counts["sessions_ended"] == 1
    r = brain_cli(
        "end", "--source", "claude", "--project", "web", "--cwd", "/src/web", "--handoff", "Review open."
    )
    assert r.exit_code == 0, r.output
    assert r.output.startswith("session #1 had already ended (heartbeat expired, ")
    assert r.output.endswith("); the handoff is stored for the next session of claude in web\n")
    out = brain_cli("boot", "--source", "claude", "--project", "web", "--cwd", "/src/web").output
    assert '## Handoff from the last session\n"Review open."\n' in unaged(out)
    r = brain_cli("end", "--source", "claude", "--project", "api", "--handoff", "API keys rotate Friday.")
    assert (r.exit_code, r.output) == (
        0,
        "no session of claude in api was found here; "
        "the handoff is stored for the next session of claude in api\n",
    )
    assert "API keys rotate Friday." in brain_cli("boot", "--source", "claude", "--project", "api").output
    r = brain_cli("end", "--source", "claude", "--project", "docs")
    assert r.exit_code == 1 and "No session of that source, project" in r.stderr


def test_a_session_bound_to_a_named_process_ends_with_it(cli_env, tmp_path) -> None:
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        booted = shell(
            cli_env, tmp_path, "boot", "--source", "cursor", "--project", "web", "--pid", str(agent.pid)
        )
        assert booted.returncode == 0, booted.stderr
        assert f"· pid {agent.pid} ·" in shell(cli_env, tmp_path, "sessions").stdout
    finally:
        agent.kill()
        agent.wait()
    assert shell(cli_env, tmp_path, "sessions").stdout == "no active sessions\n"
    ended = shell(
        cli_env, tmp_path, "end", "--source", "cursor", "--project", "web", "--handoff", "Tests green."
    )
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout.startswith("session #1 had already ended (process gone, ")
    assert "Tests green." in shell(cli_env, tmp_path, "boot", "--source", "cursor", "--project", "web").stdout
