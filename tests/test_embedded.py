"""The embedded database as a new user meets it: `brain db ...` and `brain init`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import embedded_brain as brain
from helpers import embedded_env


def test_db_lifecycle_and_first_write(tmp_path: Path) -> None:
    home = tmp_path / "brain-home"
    status = brain(home, "db", "status")
    assert status.returncode == 3 and status.stdout.startswith("stopped")
    try:
        started = brain(home, "db", "start", "--json")
        assert started.returncode == 0, started.stderr
        assert json.loads(started.stdout)["pgdata"] == str(home / "pgdata")
        init = brain(home, "init")
        assert init.returncode == 0, init.stderr
        assert f"database: embedded PostgreSQL, data in {home / 'pgdata'}" in init.stdout
        assert "001-core-schema.sql" in init.stdout
        assert brain(home, "init").stdout.count("schema up to date") == 1
        wrote = brain(home, "remember", "fact", "The embedded database works")
        assert wrote.stdout.startswith("created #1 fact"), wrote.stderr
        status = json.loads(brain(home, "db", "status", "--json").stdout)
        assert status["running"] and status["pgdata"] == str(home / "pgdata")
        # The commands connect as the application role brain init created, not as the superuser.
        url = brain(home, "db", "url").stdout.strip()
        assert f"host={home / 'pgdata'}" in url and "user=brain_app" in url
        assert status["url"].startswith("postgresql://postgres")
        assert (home / "app-role.json").stat().st_mode & 0o777 == 0o600
    finally:
        stopped = brain(home, "db", "stop")
    assert stopped.stdout.strip() == "stopped"
    assert brain(home, "db", "status").returncode == 3
    assert brain(home, "db", "stop").stdout.strip() == "not running"


def test_commands_start_the_database_on_first_use(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    try:
        wrote = brain(home, "remember", "fact", "No init needed")
        assert wrote.returncode == 0, wrote.stderr
        assert wrote.stdout.startswith("created #1 fact")
    finally:
        brain(home, "db", "stop")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="only root is restricted")
def test_root_may_not_keep_the_database_under_root(tmp_path: Path) -> None:
    r = brain(Path("/root/pybrain-home-test"), "db", "start")
    assert r.returncode == 1
    assert "cannot live under /root" in r.stderr and "hint:" in r.stderr
    assert not Path("/root/pybrain-home-test").exists()


def test_db_status_with_an_external_database(tmp_path: Path) -> None:
    env = {**os.environ, "BRAIN_DATABASE_URL": "postgresql://app:secret@db.example/brain"}
    r = subprocess.run(
        [sys.executable, "-m", "pybrain", "db", "status"], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 0
    assert "postgresql://app:***@db.example/brain" in r.stdout and "secret" not in r.stdout


def _shared_buffers_mb(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        (blocks,) = conn.execute(
            "SELECT setting::bigint FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
    return blocks * 8 // 1024


def test_the_embedded_server_gets_pybrains_memory_and_keeps_a_chosen_one(tmp_path: Path) -> None:
    import psycopg

    from pybrain.db import TUNED_FILE, _earlier_shared_buffers_mb, shared_buffers_mb

    home = tmp_path / "tuned"
    try:
        assert brain(home, "db", "start").returncode == 0
        url = brain(home, "db", "url").stdout.strip()
        assert _shared_buffers_mb(url) == shared_buffers_mb() >= 128
        assert (home / "pgdata" / TUNED_FILE).read_text().strip() == str(shared_buffers_mb())
        # A server an earlier release tuned (an eighth of the RAM, at most 1 GB, and no
        # record of it) gets this release's figure.
        admin = json.loads(brain(home, "db", "status", "--json").stdout)["url"]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{_earlier_shared_buffers_mb()}MB'")
        (home / "pgdata" / TUNED_FILE).unlink()
        brain(home, "db", "stop")
        assert brain(home, "db", "start").returncode == 0
        assert _shared_buffers_mb(url) == shared_buffers_mb()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET shared_buffers = '200MB'")
        brain(home, "db", "stop")
        assert brain(home, "db", "start").returncode == 0
        assert _shared_buffers_mb(url) == 200, "a value set with ALTER SYSTEM is the user's"
    finally:
        brain(home, "db", "stop")


@pytest.mark.skipif(
    not Path("/proc/sys/vm/overcommit_memory").exists()
    or Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "1",
    reason="a kernel that maps any amount of memory would start the server",
)
def test_a_memory_size_the_server_cannot_map_is_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the server will not start with pybrain's shared_buffers (here 4 TB, more than the kernel
    maps), it starts again on what it had, and that size is not tried again."""
    from pybrain import db

    home = tmp_path / "refused"
    try:
        assert brain(home, "db", "start").returncode == 0
        admin = json.loads(brain(home, "db", "status", "--json").stdout)["url"]
        before = _shared_buffers_mb(admin)
        monkeypatch.setattr(db, "shared_buffers_mb", lambda: 4 * 1024 * 1024)
        assert db.tune_memory(admin, home / "pgdata") is True
        assert _shared_buffers_mb(admin) == before, "running again, on what it had"
        assert (home / "pgdata" / db.REFUSED_FILE).read_text().strip() == str(4 * 1024 * 1024)
        assert db.tune_memory(admin, home / "pgdata") is False, "not tried again"
        assert brain(home, "remember", "fact", "The server still answers").returncode == 0
    finally:
        brain(home, "db", "stop")


def test_the_embedded_servers_memory_is_a_quarter_of_a_containers_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """psutil reports the machine's RAM, also inside a container limited to less (cgroups): there
    a quarter of the host's 64 GB (8 GB of shared_buffers) is more than the container may use, and
    a store that fills them has the server's processes killed for memory. The limit of the
    process's cgroup or of any cgroup above it counts, cgroup v2 or v1."""
    from types import SimpleNamespace

    import psutil

    from pybrain import db

    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=64 << 30))
    root = tmp_path / "cgroup"
    proc = tmp_path / "self-cgroup"
    monkeypatch.setattr(db, "CGROUP_ROOT", root, raising=False)
    monkeypatch.setattr(db, "PROC_SELF_CGROUP", proc, raising=False)
    # cgroup v2: the process's own group unlimited, the slice above it at 2 GB
    (root / "app.slice" / "brain.service").mkdir(parents=True)
    (root / "app.slice" / "brain.service" / "memory.max").write_text("max\n")
    (root / "app.slice" / "memory.max").write_text(f"{2 << 30}\n")
    proc.write_text("0::/app.slice/brain.service\n")
    assert db.shared_buffers_mb() == 512
    # cgroup v1, as in a container: the memory controller's group at 4 GB
    (root / "memory").mkdir()
    (root / "memory" / "memory.limit_in_bytes").write_text(f"{4 << 30}\n")
    proc.write_text("12:memory:/\n11:cpu,cpuacct:/\n")
    assert db.shared_buffers_mb() == 1024
    # no limit (v1 writes a figure near 2^63): the machine's RAM
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert db.shared_buffers_mb() == 8192
    # no cgroup file at all
    proc.unlink()
    assert db.shared_buffers_mb() == 8192


def test_a_restart_cut_short_leaves_the_figure_pybrains_to_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `brain db start` at once on a new home: the second starts the server while the first's
    restart has it stopped, and the first's pg_ctl, waiting for a pid file that never goes, is cut
    off after 60 s (TimeoutExpired) though the server runs with pybrain's figure. That figure
    stays pybrain's to change; unrecorded, it passed for one the user chose with ALTER SYSTEM."""
    import contextlib

    from pybrain import db

    home = tmp_path / "cut"
    try:
        assert brain(home, "db", "start").returncode == 0
        admin = json.loads(brain(home, "db", "status", "--json").stdout)["url"]
        pgdata = home / "pgdata"
        first = _shared_buffers_mb(admin)
        restart = db._pg_ctl

        def cut_short(path: Path, args: list[str], **kwargs: object) -> None:
            restart(path, args, **kwargs)
            if "restart" in args:
                raise subprocess.TimeoutExpired(["pg_ctl", *args], 60)

        monkeypatch.setattr(db, "_pg_ctl", cut_short)
        monkeypatch.setattr(db, "shared_buffers_mb", lambda: first + 16)
        with contextlib.suppress(subprocess.TimeoutExpired):
            db.tune_memory(admin, pgdata)
        assert _shared_buffers_mb(admin) == first + 16
        assert (pgdata / db.TUNED_FILE).read_text().strip() == str(first + 16)
        monkeypatch.setattr(db, "_pg_ctl", restart)
        monkeypatch.setattr(db, "shared_buffers_mb", lambda: first + 32)
        assert db.tune_memory(admin, pgdata) is True, "pybrain's own figure, raised"
        assert _shared_buffers_mb(admin) == first + 32
    finally:
        brain(home, "db", "stop")


def test_two_commands_starting_the_server_at_once_both_get_it(tmp_path: Path) -> None:
    """Two `brain db start` on a new home at once (an editor launching two MCP servers): one starts
    the server and tunes its memory (a restart), the other waits for it and reuses it. Before,
    the second started the server while the first one's restart had it down, and the first
    waited 60 s for pg_ctl and failed."""
    from pybrain.db import TUNED_FILE, shared_buffers_mb

    home = tmp_path / "twice"
    try:
        starts = [
            subprocess.Popen(
                [sys.executable, "-m", "pybrain", "db", "start"],
                env=embedded_env(home),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        done = [p.communicate(timeout=120) for p in starts]
        assert [p.returncode for p in starts] == [0, 0], [err for _, err in done]
        url = brain(home, "db", "url").stdout.strip()
        assert _shared_buffers_mb(url) == shared_buffers_mb()
        assert (home / "pgdata" / TUNED_FILE).read_text().strip() == str(shared_buffers_mb())
    finally:
        brain(home, "db", "stop")
