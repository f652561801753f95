"""Connections are bounded (issue 30): live dashboard pages share one LISTEN, a token and
a role hold a capped number of them, `brain serve`'s role has a connection limit below
the server's, the CLI's role may take reserved slots, `brain serve` answers 503 with
Retry-After at once while the database is down and serves again within 2 s of its
return, and it works behind PgBouncer in transaction mode.

Real servers only: the test database, an embedded PostgreSQL of this module's own
(restarted and reconfigured), and Debian's pgbouncer started by the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import psycopg
import pytest
from click.testing import CliRunner
from conftest import TEST_ROLE, with_database
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from test_outages import Server, restartable
from test_serve import INITIALIZE, agent, call, post, search, start
from test_tokens import SERVE_ROLE, create, ensure_role

from pybrain import db, worker
from pybrain.cli import main
from pybrain.client import Brain
from pybrain.config import Settings
from pybrain.connector import Scope, scoped
from pybrain.embed import get_embedder
from pybrain.serve import auth, live
from pybrain.serve.app import ServeOptions, build_app, serve_database_url
from pybrain.serve.pool import open_pool, pooled_brain
from pybrain.serve.ui.app import Dashboard, create_app

assert restartable  # a fixture of test_outages: an embedded PostgreSQL of this module's own


def count_connections(admin_url: str, user: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (user,)).fetchone()[0]


# --- live pages: one LISTEN, capped per token and per role ---------------------------------


@pytest.fixture
def serve_url(database: str, admin_url: str) -> str:
    with psycopg.connect(admin_url, autocommit=True) as admin:
        ensure_role(admin, SERVE_ROLE, in_role="brain_server")
    return with_database(database, conninfo_to_dict(database)["dbname"], user=SERVE_ROLE, password="pw")


def test_110_live_pages_of_one_read_token_leave_the_cli_working(
    serve_url: str, database: str, admin_url: str, conn: psycopg.Connection, db_url: str
) -> None:
    token = create(conn, role=TEST_ROLE, name="attacker", access="read")["token"]
    dashboard = Dashboard(serve_url, workspace=None, embedder_spec="hash", require_token=True)
    report: dict[str, object] = {}

    async def attack(base: str) -> None:
        statuses: list[int] = []
        seen: list[str] = []
        opened = asyncio.Event()

        async def page(http: httpx2.AsyncClient) -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with http.stream("GET", base + "/sessions/events", headers=headers) as r:
                statuses.append(r.status_code)
                if len(statuses) == 110:
                    opened.set()
                if r.status_code != 200:
                    return
                text = ""
                async for chunk in r.aiter_text():
                    text += chunk
                    if "event: change" in text:
                        break
                seen.append(text)

        limits = httpx2.Limits(max_connections=200, max_keepalive_connections=0)
        http = httpx2.AsyncClient(timeout=30, limits=limits)
        tasks = [asyncio.create_task(page(http)) for _ in range(110)]
        await asyncio.wait_for(opened.wait(), 60)
        await asyncio.sleep(0.5)
        held = await asyncio.to_thread(count_connections, admin_url, SERVE_ROLE)
        # The CLI, as a client role, while the pages are open.
        t0 = time.monotonic()
        env = {"BRAIN_DATABASE_URL": db_url, "BRAIN_EMBEDDER": "hash"}
        result = await asyncio.to_thread(
            CliRunner().invoke, main, ["remember", "fact", "The CLI got in during the attack"], env=env
        )
        cli_seconds = time.monotonic() - t0
        # A change reaches every open page through the one LISTEN.
        await asyncio.to_thread(
            conn.execute, "SELECT brain.boot_session(source => 'drill', project => 'p', cwd => '/tmp/p')"
        )
        deadline = time.monotonic() + 15
        while len(seen) < statuses.count(200) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await http.aclose()
        report.update(
            statuses=statuses,
            held=held,
            listeners=dashboard.listener.connections,
            cli=(result.exit_code, result.output.strip()[:100], round(cli_seconds, 2)),
            changed=sum("event: change" in s for s in seen),
        )

    for running in start(lambda port: create_app(dashboard)):
        anyio.run(attack, running.base)
    statuses = report["statuses"]
    assert isinstance(statuses, list)
    opened, refused = statuses.count(200), statuses.count(429)
    print(
        f"\n[110 live pages, one read token] opened {opened}, refused {refused} (429), other "
        f"{len(statuses) - opened - refused}; connections of {SERVE_ROLE} while open: {report['held']} "
        f"(LISTEN connections made: {report['listeners']}); CLI: {report['cli']}; "
        f"pages told of the change: {report['changed']}/{opened}"
    )
    assert opened == live.STREAMS_PER_TOKEN and refused == 110 - opened
    assert report["held"] <= 4 + 1, "the pool (4) and the one LISTEN"
    assert report["listeners"] == 1
    cli = report["cli"]
    assert isinstance(cli, tuple) and cli[0] == 0, cli
    assert report["changed"] == opened
    assert dashboard.listener.subscribers == 0 and dashboard.streams._tokens == {}


def test_stream_limits_per_token_and_per_role() -> None:
    limits = live.StreamLimits(per_token=2, per_role=3)
    assert limits.acquire("t1", "alice") is None and limits.acquire("t1", "alice") is None
    assert "this token" in (limits.acquire("t1", "alice") or "")
    assert limits.acquire("t2", "alice") is None
    assert "the role alice" in (limits.acquire("t3", "alice") or "")
    assert limits.acquire("t3", "bob") is None
    limits.release("t1", "alice")
    assert limits.acquire("t3", "alice") is None


def test_one_token_holds_at_most_half_the_pool(serve_url: str, conn: psycopg.Connection) -> None:
    """Three slow calls of one token and one call of another, on a pool of 4: the token holds
    2 connections at once, its third call waits for one of them, the other token's call runs."""
    create(conn, role=TEST_ROLE, name="hog")
    hog = auth.Principal(workspace=1, role=TEST_ROLE, access="read", token_id=1, name="hog")
    other = auth.Principal(workspace=1, role=TEST_ROLE, access="read", token_id=2, name="other")
    pool = open_pool(serve_url, 4)
    started: dict[str, float] = {}
    t0 = time.monotonic()

    def slow(name: str, principal: auth.Principal, seconds: float) -> None:
        with pooled_brain(pool, principal, embedder_spec="hash").transaction() as cur:
            started[name] = round(time.monotonic() - t0, 2)
            cur.execute("SELECT pg_sleep(%s)", (seconds,))

    try:
        threads = [threading.Thread(target=slow, args=(f"hog{i}", hog, 1.0)) for i in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        threads.append(threading.Thread(target=slow, args=("other", other, 0.1)))
        threads[-1].start()
        for t in threads:
            t.join(30)
    finally:
        pool.close()
    print(f"\n[shares of a pool of 4] started at (s): {dict(sorted(started.items(), key=lambda kv: kv[1]))}")
    hogs = sorted(v for k, v in started.items() if k.startswith("hog"))
    assert hogs[1] < 0.5 and hogs[2] >= 0.9, "the third waits for one of the first two"
    assert started["other"] < 0.6, "another token is not held up by the first"


# --- reserved connections and the server role's limit -----------------------------------------


@pytest.fixture
def small_server(restartable: Server) -> Iterator[Server]:
    """The module's own server with 20 connections: 3 for superusers, 3 reserved."""
    with psycopg.connect(restartable.url, autocommit=True) as c:
        c.execute("ALTER SYSTEM SET max_connections = 20")
        c.execute("ALTER SYSTEM SET reserved_connections = 3")
    restartable.restart()
    try:
        yield restartable
    finally:
        with psycopg.connect(restartable.url, autocommit=True) as c:
            c.execute("ALTER SYSTEM RESET max_connections")
            c.execute("ALTER SYSTEM RESET reserved_connections")
        restartable.restart()


def _fill(url: str, held: list[psycopg.Connection], most: int = 50) -> str:
    """Connect as url's role until refused; why it was refused."""
    for _ in range(most):
        try:
            held.append(psycopg.connect(url, connect_timeout=5))
        except psycopg.OperationalError as exc:
            return str(exc).strip().splitlines()[-1]
    return "never refused"


def test_the_cli_gets_in_when_the_server_role_and_others_took_every_other_slot(
    small_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_ADMIN_DATABASE_URL", small_server.url)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    settings = Settings.from_env()
    serve = serve_database_url(settings)  # brain_serve, as `brain serve` makes it on the embedded server
    with psycopg.connect(small_server.url, autocommit=True) as admin:
        app_role = db.ensure_app_role(admin, tmp_path)
        limit = admin.execute("SELECT rolconnlimit FROM pg_roles WHERE rolname = 'brain_serve'").fetchone()[0]
        privileged = admin.execute(
            "SELECT pg_has_role('brain_serve', 'pg_use_reserved_connections', 'USAGE'),"
            " pg_has_role(%s, 'pg_use_reserved_connections', 'USAGE')",
            (app_role,),
        ).fetchone()
        if not admin.execute("SELECT FROM pg_roles WHERE rolname = 'noisy'").fetchone():
            admin.execute("CREATE ROLE noisy LOGIN PASSWORD 'pw'")
    assert 0 < limit <= 20 - 3 - 3 - 10, limit
    assert privileged == (False, True)
    app_url = db.database_url(settings)
    held: list[psycopg.Connection] = []
    try:
        serve_refused = _fill(serve, held)
        serve_held = len(held)
        noisy_refused = _fill(make_conninfo(small_server.url, user="noisy", password="pw"), held)
        t0 = time.monotonic()
        result = CliRunner().invoke(
            main,
            ["remember", "fact", "The CLI still gets in"],
            env={"BRAIN_DATABASE_URL": app_url, "BRAIN_EMBEDDER": "hash"},
        )
        cli_seconds = time.monotonic() - t0
        print(
            f"\n[slots] brain_serve held {serve_held} (limit {limit}): {serve_refused!r}; others held "
            f"{len(held) - serve_held} more: {noisy_refused!r}; CLI as {app_role}: exit {result.exit_code} "
            f"in {cli_seconds:.2f} s: {result.output.strip()[:80]}"
        )
        assert serve_held == limit and "too many connections for role" in serve_refused
        assert "reserved" in noisy_refused
        assert result.exit_code == 0, result.output
    finally:
        for c in held:
            c.close()


def test_brain_serve_refuses_a_pool_its_role_cannot_hold(serve_url: str, admin_url: str) -> None:
    from pybrain.errors import InvalidArgument
    from pybrain.serve.app import check_connection_limit

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT 8").format(sql.Identifier(SERVE_ROLE)))
    try:
        check_connection_limit(serve_url, 7)
        with pytest.raises(InvalidArgument, match="may open 8"):
            check_connection_limit(serve_url, 10)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT -1").format(sql.Identifier(SERVE_ROLE)))


# --- brain serve under a database restart -----------------------------------------------------


def test_brain_serve_answers_503_while_the_database_is_down_and_serves_again_within_2s(
    restartable: Server,
) -> None:
    with psycopg.connect(restartable.url, autocommit=True) as admin:
        for role, parent in (("drill_serve", "brain_server"), ("drill_agent", "brain_user")):
            if not admin.execute("SELECT FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                admin.execute(
                    sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw' IN ROLE {}").format(
                        sql.Identifier(role), sql.Identifier(parent)
                    )
                )
        admin.execute(
            "SELECT brain.grant_workspace('drill_agent', 1, 'write') WHERE NOT EXISTS"
            " (SELECT FROM brain.membership WHERE role_name = 'drill_agent')"
        )
        token = admin.execute(
            "SELECT brain.create_token(role => 'drill_agent', name => %s)", (f"drill-{time.time_ns()}",)
        ).fetchone()[0]["token"]
    serve_url = make_conninfo(restartable.url, user="drill_serve", password="pw")
    pool = open_pool(serve_url, 4)
    try:
        for running in start(lambda port: build_app(pool, ServeOptions(port=port), embedder_spec="hash")):
            assert post(running.url, INITIALIZE, token).status_code == 200
            restartable.stop()
            try:
                down = []
                for _ in range(9):
                    t0 = time.monotonic()
                    r = post(running.url, INITIALIZE, token)
                    down.append(
                        (r.status_code, r.headers.get("retry-after"), round(time.monotonic() - t0, 3))
                    )
                    # Said before any token is checked: nothing of the server's address or socket.
                    assert r.json()["error"] == "database_unavailable" and ".s.PGSQL" not in r.text, r.text
            finally:
                restartable.start()
            back_at = time.monotonic()
            first_ok = None
            while time.monotonic() - back_at < 10:
                if post(running.url, INITIALIZE, token).status_code == 200:
                    first_ok = time.monotonic() - back_at
                    break
                time.sleep(0.05)
            after = [post(running.url, INITIALIZE, token).status_code for _ in range(9)]
            # A restart between two calls (the pool's connections all broken): no call fails.
            restartable.restart()
            restarted = [post(running.url, INITIALIZE, token).status_code for _ in range(9)]
            print(
                f"\n[database down] 9 calls: {down}\n[database back] first 200 after "
                f"{first_ok if first_ok is None else round(first_ok, 2)} s; the next 9: {after}; "
                f"9 calls after a restart: {restarted}"
            )
            assert all(status == 503 and retry == "2" and seconds < 1.0 for status, retry, seconds in down), (
                down
            )
            assert first_ok is not None and first_ok <= 2.0
            assert after == [200] * 9
            assert restarted == [200] * 9
    finally:
        pool.close()


# --- behind PgBouncer in transaction mode ------------------------------------------------------


def _pgbouncer() -> str | None:
    return shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.path.exists(p)), None
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def bouncer(database: str) -> Iterator[str]:
    """pgbouncer in transaction mode in front of the test server; yields the URL of the test
    database through it (as the superuser; change user= for another role)."""
    with _bouncer(database) as url:
        yield url


# What docs/serve.md tells a team to add to pgbouncer.ini in transaction mode: what one
# client SET on a server connection is reset before the next client gets it.
RESET_EVERY_TRANSACTION = "server_reset_query = DISCARD ALL\nserver_reset_query_always = 1\n"


@contextlib.contextmanager
def _bouncer(
    database: str, *, pool_size: int = 4, extra: str = "", ignore: str = "extra_float_digits,options"
) -> Iterator[str]:
    binary = _pgbouncer()
    if binary is None:
        message = "pgbouncer is not installed (Debian: apt-get install -y pgbouncer)"
        if os.environ.get("BRAIN_TEST_REQUIRE_COMPONENTS"):
            pytest.fail(message)  # CI installs it (.ci/run): nothing is skipped there
        pytest.skip(message)
    params = conninfo_to_dict(database)
    host = params.get("host") or "127.0.0.1"
    port = _free_port()
    work = Path(tempfile.mkdtemp(prefix="pybrain-pgbouncer-"))
    work.chmod(0o777)
    users = work / "users.txt"
    users.write_text("".join(f'"{u}" "pw"\n' for u in (params.get("user"), TEST_ROLE, SERVE_ROLE)))
    ini = work / "pgbouncer.ini"
    ini.write_text(
        "[databases]\n"
        f"* = host={host} port={params.get('port', 5432)}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        "auth_type = trust\n"
        f"auth_file = {users}\n"
        "pool_mode = transaction\n"
        f"default_pool_size = {pool_size}\nmax_client_conn = 200\n"
        f"ignore_startup_parameters = {ignore}\n"
        f"logfile = {work / 'pgbouncer.log'}\npidfile = {work / 'pgbouncer.pid'}\n" + extra
    )
    command = [binary, str(ini)]
    if os.geteuid() == 0:
        # pgbouncer will not run as root: it runs as the server's user (who may use its socket).
        import pwd

        owner = Path(host).stat().st_uid if host.startswith("/") else pwd.getpwnam("nobody").pw_uid
        command[1:1] = ["-u", pwd.getpwuid(owner).pw_name]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = make_conninfo(database, host="127.0.0.1", port=str(port))
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with psycopg.connect(url, connect_timeout=2) as c:
                    c.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log = (work / "pgbouncer.log").read_text() if (work / "pgbouncer.log").exists() else ""
                    out = proc.stdout.read().decode() if proc.stdout and proc.poll() is not None else ""
                    raise AssertionError(f"pgbouncer did not start: {out} {log}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def test_brain_serve_works_behind_pgbouncer_in_transaction_mode(
    bouncer: str, serve_url: str, conn: psycopg.Connection, admin_url: str
) -> None:
    through = make_conninfo(bouncer, user=SERVE_ROLE, password="pw")
    other = create(conn, role=TEST_ROLE, name="bouncer-agent")["token"]
    reader = create(conn, role=TEST_ROLE, name="bouncer-reader", access="read")["token"]
    pool = open_pool(through, 8)
    outcomes: dict[str, object] = {}

    async def session(url: str) -> None:
        async with agent(url, other) as s:
            # More calls of the same query than psycopg's prepare threshold (5), in a row.
            for i in range(12):
                await call(s, "remember", kind="fact", headline=f"Bouncer drill fact number {i} about ports")
            hits = await search(s, "bouncer drill fact ports")
            outcomes["hits"] = len(hits)
            outcomes["boot"] = bool(await call(s, "boot_session", source="bouncer"))
        async with agent(url, reader) as r:
            refused = await r.call_tool("remember", {"kind": "fact", "headline": "A read token cannot write"})
            outcomes["read_refused"] = refused.is_error and "needs write" in refused.content[0].text
            # SET LOCAL ended with its transaction: the reader's next call is a reader's again.
            outcomes["reader_hits"] = len(await search(r, "bouncer drill fact ports"))

    try:
        for running in start(
            lambda port: build_app(pool, ServeOptions(port=port, profile="full"), embedder_spec="hash")
        ):
            anyio.run(session, running.url)
    finally:
        pool.close()
    # LISTEN through a transaction-mode pooler: the server connection goes back to the pool
    # after the statement, so the notification never reaches the client.
    with (
        psycopg.connect(bouncer, autocommit=True) as listener,
        psycopg.connect(admin_url, autocommit=True) as notifier,
    ):
        listener.execute("LISTEN brain_bouncer_drill")
        notifier.execute("NOTIFY brain_bouncer_drill, 'x'")
        heard = list(listener.notifies(timeout=1.0, stop_after=1))
    # psycopg's own prepared statements (here at once: prepare_threshold=0) meet another
    # server connection on the next transaction once another client holds the first one.
    prepared_error = ""
    with (
        psycopg.connect(bouncer, autocommit=True, prepare_threshold=0) as a,
        psycopg.connect(bouncer) as b,
    ):
        a.execute("SELECT 1 + %s", (1,))
        b.execute("SELECT pg_backend_pid()")  # b's transaction stays open, on a server connection
        try:
            for _ in range(3):
                a.execute("SELECT 1 + %s", (1,))
        except psycopg.Error as exc:
            prepared_error = str(exc).strip().splitlines()[0]
    print(
        f"\n[pgbouncer, transaction mode] {outcomes}; LISTEN through it heard {len(heard)} notification(s); "
        f"psycopg's prepared statements: {prepared_error or 'no error'}"
    )
    assert outcomes["hits"] and outcomes["boot"] and outcomes["read_refused"] and outcomes["reader_hits"]
    assert heard == []
    version = subprocess.run(
        [_pgbouncer() or "pgbouncer", "--version"], capture_output=True, text=True
    ).stdout
    major, minor = (int(x) for x in version.split()[1].split(".")[:2])
    if (major, minor) < (1, 21):  # protocol-level prepared statements came with 1.21
        assert "does not exist" in prepared_error, "why the pools set prepare_threshold=None"


def test_the_dashboard_answers_503_while_the_database_is_down_and_its_live_page_listens_again(
    restartable: Server,
) -> None:
    dashboard = Dashboard(restartable.url, workspace=None, embedder_spec="hash")
    report: dict[str, object] = {}

    async def drill(base: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            assert (await http.get(base + "/memories")).status_code == 200
            seen = ""
            listening = asyncio.Event()
            changed = asyncio.Event()

            async def page() -> None:
                nonlocal seen
                async with http.stream("GET", base + "/sessions/events") as r:
                    async for chunk in r.aiter_text():
                        seen += chunk
                        if "retry:" in seen:
                            listening.set()
                        if "event: change" in seen:
                            changed.set()
                            return

            task = asyncio.create_task(page())
            await asyncio.wait_for(listening.wait(), 10)
            await asyncio.to_thread(restartable.stop)
            try:
                down = []
                for _ in range(5):
                    t0 = time.monotonic()
                    r = await http.get(base + "/memories")
                    down.append(
                        (r.status_code, r.headers.get("retry-after"), round(time.monotonic() - t0, 3))
                    )
                report["down"] = down
            finally:
                await asyncio.to_thread(restartable.start)
            back = time.monotonic()
            while (await http.get(base + "/memories")).status_code != 200 and time.monotonic() - back < 10:
                await asyncio.sleep(0.05)
            report["back"] = round(time.monotonic() - back, 2)
            await asyncio.wait_for(changed.wait(), 10)
            report["live page refreshed after"] = round(time.monotonic() - back, 2)
            await task

    for running in start(lambda port: create_app(dashboard)):
        anyio.run(drill, running.base)
    print(f"\n[dashboard, database down and back] {report}")
    down = report["down"]
    assert isinstance(down, list)
    assert all(status == 503 and retry == "2" and seconds < 1.0 for status, retry, seconds in down), down
    assert isinstance(report["back"], float) and report["back"] <= 2.0
    assert dashboard.listener.connections == 2  # the one LISTEN, made again once


@pytest.mark.parametrize("reset", [False, True], ids=["pgbouncer as installed", "with the reset docs give"])
def test_nothing_one_client_sets_reaches_the_next_through_pgbouncer(database: str, conn, reset: bool) -> None:
    """One server connection (pool size 1), clients one after the other. pybrain's own settings
    (the workspace, actor, session, role, access ceiling, the worker's statement_timeout) are
    local to each transaction, so they never reach the next client; what a client SETs for its
    session itself does in transaction mode unless pgbouncer resets it, as docs/serve.md says."""
    conn.execute("SELECT brain.remember(kind => 'fact', headline => 'Bouncer resets drill fact')")
    names = (
        "brain.workspace",
        "brain.actor",
        "brain.session",
        "brain.max_access",
        "statement_timeout",
        "role",
    )
    read = "SELECT " + ", ".join(f"current_setting('{n}', true)" for n in names)
    with _bouncer(database, pool_size=1, extra=RESET_EVERY_TRANSACTION if reset else "") as url:
        through = make_conninfo(url, user=TEST_ROLE, password="pw")
        with psycopg.connect(through, autocommit=True, prepare_threshold=None) as fresh:
            defaults = fresh.execute(read).fetchone()
        # pybrain: a Brain on a connection through the bouncer, and a scope with a role and a ceiling
        with psycopg.connect(through, autocommit=True, prepare_threshold=None) as a:
            brain = Brain(a, embedder=get_embedder("hash"), actor="agent-a")
            assert brain.search("bouncer resets drill")
            # `brain worker` (once) on the same connection: its long statement_timeout is its
            # transactions' own
            worker.run(
                brain,
                once=True,
                batch=8,
                poll=1,
                retry_failed=False,
                stop=worker.Stop(),
                say=print,
                talk=False,
            )
            with brain.transaction() as cur:
                assert cur.execute("SHOW statement_timeout").fetchone()["statement_timeout"] == "30min"
            with scoped(
                a, Scope(role=TEST_ROLE, workspace=1, access="read", actor="agent-a", session=7)
            ) as cur:
                cur.execute("SELECT 1")
        with psycopg.connect(through, autocommit=True, prepare_threshold=None) as b:
            after_pybrain = b.execute(read).fetchone()
        # a raw client's own session SETs
        with psycopg.connect(through, autocommit=True, prepare_threshold=None) as a:
            a.execute("SET statement_timeout = '1ms'")
            a.execute(
                "SELECT set_config('brain.workspace', '99', false),"
                " set_config('brain.actor', 'mallory', false)"
            )
        with psycopg.connect(through, autocommit=True, prepare_threshold=None) as b:
            after_raw = b.execute(read).fetchone()
    # (a custom setting once set in a session reads '' afterwards, as unset: the same for pybrain)
    defaults, after_pybrain, after_raw = (
        tuple(v or "" for v in row) for row in (defaults, after_pybrain, after_raw)
    )
    leaked = {n: (d, r) for n, d, r in zip(names, defaults, after_raw, strict=True) if d != r}
    print(
        f"\n[pgbouncer, {'reset' if reset else 'no reset'}] pybrain left: "
        f"{dict(zip(names, after_pybrain, strict=True))}; a raw client's SETs reached the next: {leaked}"
    )
    assert after_pybrain == defaults, "pybrain sets nothing for the session"
    if reset:
        assert leaked == {}
    else:
        assert set(leaked) == {"statement_timeout", "brain.workspace", "brain.actor"}, (
            "pgbouncer's own behaviour"
        )


def test_the_hooks_work_behind_pgbouncer_as_installed(database: str, conn, tmp_path: Path) -> None:
    """PgBouncer refuses a startup option it does not know (`options`, unless
    ignore_startup_parameters lists it): the hooks set their statement_timeout per
    transaction instead, and a session starts and ends through it."""
    from test_hooks import FIXTURES, SESSION, captured, payload, run_hook

    transcript = tmp_path / "claude" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    shutil.copy(FIXTURES / "transcript.jsonl", transcript)
    project = tmp_path / "project"
    project.mkdir()
    with _bouncer(database, ignore="extra_float_digits") as url:
        env = {
            "BRAIN_DATABASE_URL": make_conninfo(url, user=TEST_ROLE, password="pw"),
            "BRAIN_EMBEDDER": "hash",
            "BRAIN_HOME": str(tmp_path / "home"),
        }
        outs = [
            run_hook(env, event, payload(event, transcript, project))[0]
            for event in ("session-start", "session-end")
        ]
    print(
        f"\n[hooks through pgbouncer, options not ignored] {[(o.returncode, o.stderr[:120]) for o in outs]}"
    )
    assert all(o.returncode == 0 and b"kept in" not in o.stderr for o in outs), outs
    assert not list((tmp_path / "home").glob("spool/*.json")), "nothing was left for later"
    assert captured(conn), "the session's turns were written through the pooler"
