"""The `brain` command's entry point, and the hook process's side of the warm process.

`brain hook EVENT` runs before every prompt of a Claude Code session, in a new
process each time, so it goes straight to the hooks without importing the CLI
(click and every command's modules); every other command, and a hook command
this parser does not take as it is (--help, an unknown option, a value out of
range), goes to the click CLI in pybrain.cli, which says what is wrong.

A hook is handed to the warm process (pybrain.hooks.warm) when one runs: this
module then imports nothing beyond the standard library's json, os, socket,
struct and sys. Without one, the hook runs here and starts one for the next.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time

from pybrain.paths import home


def _process_start() -> float:
    """When this process started (time.time()), its interpreter's start included where the
    system says (Linux: /proc); else now."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime", encoding="ascii") as uptime:
            since_boot = float(uptime.read().split()[0])
        started = time.time() - (since_boot - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()
    return min(started, time.time())


STARTED = _process_start()

# The `brain hook` events (pybrain.hooks.EVENTS; a test keeps them the same).
HOOK_EVENTS = ("session-start", "prompt", "pre-compact", "session-end")
# The `brain hook` options, as pybrain.cli declares them: name -> (type, lowest, highest).
_HOOK_OPTIONS: dict[str, tuple[type, float, float]] = {
    "--source": (str, 0, 0),
    "--project": (str, 0, 0),
    "--timeout": (float, 0.1, 600),
    "--budget": (int, 20, 100000),
}


def hook_arguments(args: list[str]) -> dict[str, object] | None:
    """`brain hook` arguments as run(event, ...) takes them; None for anything else."""
    if not args or args[0] not in HOOK_EVENTS:
        return None
    found: dict[str, object] = {"event": args[0]}
    rest = args[1:]
    while rest:
        name, sep, value = rest[0].partition("=")
        if name not in _HOOK_OPTIONS or name.lstrip("-") in found:
            return None
        if not sep:
            if len(rest) < 2:
                return None
            value, rest = rest[1], rest[2:]
        else:
            rest = rest[1:]
        kind, low, high = _HOOK_OPTIONS[name]
        if kind is not str:
            try:
                number = kind(value)
            except ValueError:
                return None
            if not low <= number <= high:
                return None
            found[name.lstrip("-")] = number
        else:
            found[name.lstrip("-")] = value
    found.setdefault("source", "claude-code")
    # None: the repository of the session's folder (pybrain.hooks.run)
    found.setdefault("project", os.environ.get("BRAIN_PROJECT"))
    return found


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["hook"]:
        parsed = hook_arguments(args[1:])
        if parsed is not None:
            # The warm process runs it, with every module imported already.
            forwarding = enabled()
            if forwarding:
                code = forward(args)
                if code is not None:
                    sys.exit(code)
            import warnings

            from pybrain.hooks import Options, base, read_input, run

            base.STARTED = STARTED

            # platformdirs warns about XDG_RUNTIME_DIR as root; its fallback works
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            options = Options(
                str(parsed["source"]),
                parsed["project"],  # type: ignore[arg-type]
                parsed.get("timeout"),  # type: ignore[arg-type]
                parsed.get("budget"),  # type: ignore[arg-type]
            )
            code = run(str(parsed["event"]), read_input(sys.stdin.buffer), options)
            if forwarding:
                try:
                    start()  # for the hooks that come after this one
                except OSError as exc:
                    print(f"pybrain: no warm hook process ({exc})", file=sys.stderr)
            sys.exit(code)
    from pybrain.cli import main as cli

    cli()


# --- the warm process, from the hook process's side (see pybrain.hooks.warm) ---------

CONNECT_TIMEOUT = 0.2
START_TIMEOUT = 1.0
START_EVERY = 30.0
DEFAULT_IDLE = 1800.0
SOCKET_NAME = "hooks-{}.sock"  # one warm process per installed pybrain: its folder's digest
# AF_UNIX paths are at most 108 bytes; longer: no warm process.
_MAX_PATH = 100


def enabled() -> bool:
    """Whether hooks go to the warm process: not with BRAIN_HOOK_SERVER=off, nor where there
    is no fork and no passing of descriptors over a Unix socket (Windows)."""
    if os.name != "posix" or not hasattr(socket, "send_fds") or not hasattr(os, "fork"):
        return False
    return os.environ.get("BRAIN_HOOK_SERVER", "auto").strip().lower() != "off"


def socket_path(brain_home: str | None = None) -> str:
    """The warm process's socket for this pybrain (two installations sharing a BRAIN_HOME,
    say pipx's and a project's virtual environment, each have their own)."""
    import hashlib

    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1(f"{sys.prefix}\0{here}".encode()).hexdigest()[:10]
    return os.path.join(brain_home or home(), "run", SOCKET_NAME.format(digest))


def forward(argv: list[str], timeout: float = 600.0) -> int | None:
    """Run `brain hook ...` in the warm process: its exit code, or None when the caller
    must run it itself (no warm process, or it declined)."""
    path = socket_path()
    if len(path) > _MAX_PATH:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(path)
        except OSError:
            return None
        request = json.dumps(
            {
                "argv": argv,
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "ppid": os.getppid(),
                "started": STARTED,
            }
        ).encode()
        try:
            socket.send_fds(sock, [struct.pack(">I", len(request)) + request[:32768]], [0, 1, 2])
            if len(request) > 32768:
                sock.sendall(request[32768:])
            # A fork answers in milliseconds; a warm process that does not (stopped, swamped)
            # is left, and the hook runs here (closing the socket makes its child give up).
            sock.settimeout(START_TIMEOUT)
            started = sock.recv(1)
        except OSError:
            return None
        if started != b"R":
            return None
        try:
            sock.settimeout(timeout)
            code = sock.recv(1)
        except OSError:
            code = b""
        return code[0] if code else 0  # it ran; a child that died said nothing: a hook never fails
    finally:
        sock.close()


def start() -> None:
    """Start the warm process in the background (it exits at once when one runs already).
    At most one attempt a START_EVERY seconds: one that fails is not paid on every prompt."""
    import subprocess
    import time

    path = socket_path()
    if len(path) > _MAX_PATH:
        return
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    marker = path[: -len(".sock")] + ".started"
    try:
        if time.time() - os.stat(marker).st_mtime < START_EVERY:
            return
    except FileNotFoundError:
        pass
    with open(marker, "wb"):
        pass
    with open(path[: -len(".sock")] + ".log", "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "pybrain.hooks.warm", "--socket", path],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )


def stop() -> bool:
    """Ask the warm process of this BRAIN_HOME to exit; False when none ran."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(socket_path())
            request = json.dumps({"stop": True}).encode()
            sock.sendall(struct.pack(">I", len(request)) + request)
            sock.recv(1)
    except OSError:
        return False
    return True
