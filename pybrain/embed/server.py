"""A background process that keeps a slow-loading embedder warm for CLI calls.

Importing torch and loading MiniLM takes seconds; one embedding takes
milliseconds. The first `brain` call that needs the local model starts
`python -m pybrain.embed.server` in the background and embeds in-process; later
calls send their texts over a Unix socket under BRAIN_HOME/run and get vectors
back in milliseconds. The server exits after BRAIN_EMBED_SERVER_IDLE seconds
(default 1800) without requests. BRAIN_EMBED_SERVER=off turns all this off.

Protocol: one JSON line {"texts": [...]} in, one JSON line
{"vectors": [...]} or {"error": "..."} out, per connection; {"stop": true}
asks the server to exit.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pybrain.config import Settings
from pybrain.embed.base import Embedder, env_float
from pybrain.errors import EmbedderError

DEFAULT_IDLE = 1800.0
CONNECT_TIMEOUT = 0.2


def enabled() -> bool:
    return os.environ.get("BRAIN_EMBED_SERVER", "auto").strip().lower() != "off"


def socket_path(space: str) -> Path:
    # AF_UNIX paths are short (108 bytes): a digest keeps the name small.
    digest = hashlib.sha1(space.encode()).hexdigest()[:10]
    return Settings.from_env().home / "run" / f"embed-{digest}.sock"


def request(path: Path, texts: list[str], timeout: float = 120.0) -> list[list[float]]:
    """Vectors from a running server; OSError when none answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(str(path))
        sock.settimeout(timeout)
        sock.sendall(json.dumps({"texts": texts}).encode() + b"\n")
        with sock.makefile("rb") as reader:
            line = reader.readline()
    if not line:
        raise ConnectionError("the embedding server closed the connection")
    answer = json.loads(line)
    if "error" in answer:
        raise EmbedderError(f"The embedding server failed: {answer['error']}")
    return answer["vectors"]


class ServedEmbedder(Embedder):
    """An embedder that uses a warm server when one runs, else itself (and starts one)."""

    def __init__(self, inner: Embedder, spec: str) -> None:
        self.inner = inner
        self.spec = spec
        self.provider, self.model, self.dims = inner.provider, inner.model, inner.dims
        self.path = socket_path(inner.space)
        self._started = False
        self._local = False

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        if not self._local:
            try:
                return request(self.path, texts)
            except (OSError, ValueError):
                # No server (or a broken one): this process embeds by itself from now
                # on, and a server is started for the calls that come after it.
                self._local = True
                self._start()
        return self.inner._embed_batch(texts)

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = open(self.path.with_suffix(".log"), "ab")  # noqa: SIM115 - handed to the child
        with log:
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pybrain.embed.server",
                    "--spec",
                    self.spec,
                    "--socket",
                    str(self.path),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.server.touch()
        try:
            payload = json.loads(self.rfile.readline())
            if payload.get("stop"):
                self.wfile.write(b'{"stopped": true}\n')
                threading.Thread(target=self.server.shutdown, daemon=True).start()
                return
            texts = payload["texts"]
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise ValueError("texts must be a list of strings")
            answer = {"vectors": self.server.embedder.embed(texts)}
        except (ValueError, KeyError, TypeError, EmbedderError) as exc:
            answer = {"error": str(exc)}
        except OSError:
            return  # the caller went away while it was read
        try:
            self.wfile.write(json.dumps(answer).encode() + b"\n")
        except OSError:
            return  # the caller stopped waiting (a hook at its deadline): nothing to tell
        finally:
            self.server.touch()


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.embedder = embedder
        self.last_used = time.monotonic()
        # Bound and listening under a temporary name, then renamed into place:
        # whoever sees the socket file can connect at once (between bind and
        # listen a connection would be refused).
        staging = path.with_name(f".{path.name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()
        super().__init__(str(staging), _Handler)
        os.replace(staging, path)
        self.server_address = str(path)

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line in the log, not a traceback, for a connection that failed."""
        error = sys.exc_info()[1]
        print(f"pybrain embedding server: a request failed: {error!r}", file=sys.stderr)


def serve(spec: str, path: Path, idle: float) -> int:
    """Serve embeddings on path until idle seconds pass without a request."""
    import fcntl

    os.environ["BRAIN_EMBED_SERVER"] = "off"  # the server embeds by itself
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # One server per socket: it holds this lock for its life (the kernel lets it go when the
    # process ends, killed or not). Two started at once: the second returns here.
    lock = open(path.with_suffix(".lock"), "ab")  # noqa: SIM115 - held while serving
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return 0
    try:
        return _serve_locked(spec, path, idle)
    finally:
        lock.close()


def _serve_locked(spec: str, path: Path, idle: float) -> int:
    from pybrain.embed import providers

    if path.exists():
        with contextlib.suppress(OSError):
            request(path, [])
            return 0  # a server of an older release, without the lock, answers already
        path.unlink()
    embedder = providers.create(*providers.parse(spec))  # the model itself: this process serves it
    embedder.embed(["warm up"])  # load the model before taking requests
    old_umask = os.umask(0o077)
    try:
        server = _Server(path, embedder)
    finally:
        os.umask(old_umask)

    def watch() -> None:
        while time.monotonic() - server.last_used < idle:
            time.sleep(min(idle, 5.0))
        server.shutdown()

    threading.Thread(target=watch, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return 0


def stop(space: str) -> bool:
    """Ask the server of a space to exit; False when none was running."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(socket_path(space)))
            sock.sendall(b'{"stop": true}\n')
            sock.recv(64)
    except OSError:
        return False
    return True


def status(space: str) -> dict[str, object]:
    path = socket_path(space)
    try:
        request(path, [], timeout=5)
        running = True
    except (OSError, ValueError, EmbedderError):
        running = False
    return {"space": space, "socket": str(path), "running": running}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pybrain.embed.server", description=__doc__)
    parser.add_argument("--spec", required=True, help="provider[:model], as BRAIN_EMBEDDER")
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--idle", type=float, default=None, help="seconds before exiting when unused")
    args = parser.parse_args(argv)
    idle = args.idle if args.idle is not None else env_float("BRAIN_EMBED_SERVER_IDLE", DEFAULT_IDLE)
    return serve(args.spec, args.socket, idle)


if __name__ == "__main__":
    sys.exit(main())
