"""The warm embedding server: served vectors equal in-process ones; it starts, idles out, stops."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from pybrain.embed import get_embedder, server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # A short path: Unix socket paths are limited to 108 bytes.
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    return tmp_path


def wait_for(predicate, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def serve_hash(idle: float) -> tuple[Path, threading.Thread]:
    """The hash embedder's server in a thread of this process (exits after idle seconds),
    once its socket is there."""
    path = server.socket_path("hash:feature-hash-v1")
    path.parent.mkdir(parents=True)
    thread = threading.Thread(target=server.serve, args=("hash", path, idle), daemon=True)
    thread.start()
    assert wait_for(path.exists, 10)
    return path, thread


def test_served_vectors_equal_in_process_vectors_and_idle_exit(home: Path) -> None:
    path, thread = serve_hash(idle=1.0)
    texts = ["the deploy failed", "PostgreSQL 18 ships pgvector"]
    assert server.request(path, texts) == get_embedder("hash").embed(texts)
    served = server.ServedEmbedder(get_embedder("hash"), "hash")
    assert served.embed(texts) == get_embedder("hash").embed(texts)
    assert served._local is False, "it asked the server"
    thread.join(15)
    assert not thread.is_alive(), "the server exits when idle"
    assert not path.exists()


def test_first_call_embeds_in_process_and_starts_a_server(home: Path, monkeypatch) -> None:
    monkeypatch.setenv("BRAIN_EMBED_SERVER", "auto")
    first = server.ServedEmbedder(get_embedder("hash"), "hash")
    try:
        assert first.embed_one("hello") == get_embedder("hash").embed_one("hello")
        assert first._local is True
        assert wait_for(lambda: server.status("hash:feature-hash-v1")["running"])
        second = server.ServedEmbedder(get_embedder("hash"), "hash")
        assert second.embed_one("hello") == get_embedder("hash").embed_one("hello")
        assert second._local is False
    finally:
        assert server.stop("hash:feature-hash-v1") is True
    assert wait_for(lambda: not server.status("hash:feature-hash-v1")["running"], 10)
    assert server.stop("hash:feature-hash-v1") is False


def test_bad_requests_get_an_error_answer(home: Path) -> None:
    path, thread = serve_hash(idle=2.0)
    with pytest.raises(Exception, match="texts must be a list of strings"):
        server.request(path, [1, 2])  # type: ignore[list-item]
    server.stop("hash:feature-hash-v1")
    thread.join(10)


def test_one_server_per_socket_and_no_traceback_when_a_caller_leaves(home: Path) -> None:
    """Servers started at once on one socket (hooks of several sessions): one serves, the
    others exit without loading a model; a caller that stops waiting costs the log no
    traceback."""
    import os
    import socket
    import subprocess
    import sys

    path = server.socket_path("hash:feature-hash-v1")
    log = home / "server.log"
    with open(log, "ab") as out:
        started = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pybrain.embed.server",
                    "--spec",
                    "hash",
                    "--socket",
                    str(path),
                    "--idle",
                    "20",
                ],
                env={**os.environ, "BRAIN_HOME": str(home)},
                stdout=out,
                stderr=out,
            )
            for _ in range(3)
        ]
    try:
        assert wait_for(lambda: sum(p.poll() is not None for p in started) == 2, 60), "two of three exit"
        assert all(p.returncode == 0 for p in started if p.poll() is not None)
        assert wait_for(path.exists, 30)
        assert server.request(path, ["the deploy failed"]) == get_embedder("hash").embed(
            ["the deploy failed"]
        )
        for _ in range(5):  # callers that go before the answer
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(path))
                sock.sendall(b'{"texts": ' + json.dumps([f"text {i}" for i in range(3000)]).encode() + b"}\n")
        time.sleep(2)  # their answers written (or not) before the server stops
        assert server.request(path, ["still here"]) == get_embedder("hash").embed(["still here"])
        assert server.stop("hash:feature-hash-v1")
        (alive,) = [p for p in started if p.returncode is None]
        assert alive.wait(30) == 0
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait()
    text = log.read_text()
    assert "Traceback" not in text and "BrokenPipeError" not in text, text
