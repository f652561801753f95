"""A local HTTP server that speaks the Ollama and OpenAI embedding APIs, for tests."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def fake_vector(text: str, dims: int) -> list[float]:
    """Deterministic and text-specific: equal texts get equal vectors, others point elsewhere."""
    digest = hashlib.shake_128(text.encode()).digest(2 * dims)
    return [int.from_bytes(digest[2 * i : 2 * i + 2], "big") / 32768 - 1 for i in range(dims)]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeServer:
    """Speaks Ollama's /api/embed and OpenAI's /v1/embeddings with deterministic vectors."""

    url: str = ""
    dims: int = 8
    responses: list[tuple[int, Any]] = field(default_factory=list)  # answered first, in order
    always: tuple[int, Any] | None = None
    delay: float = 0.0
    drop_one: bool = False
    # Outages: hold every request without an answer until the test ends; refuse
    # (HTTP 400, echoing the text as some providers do) every request holding a
    # text that contains one of `refuse`; answer NaN for texts containing one of `nan_for`,
    # and an all-zero vector for texts containing one of `zero_for`.
    black_hole: bool = False
    refuse: set[str] = field(default_factory=set)
    nan_for: set[str] = field(default_factory=set)
    zero_for: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if self.responses:
            return self.responses.pop(0)
        if self.always:
            return self.always
        texts = body["input"]
        for text in texts:
            if any(marker in text for marker in self.refuse):
                return 400, {"error": {"message": f"invalid input: {text!r} cannot be embedded"}}
        vectors = [
            [float("nan")] * self.dims
            if any(marker in text for marker in self.nan_for)
            else [0.0] * self.dims
            if any(marker in text for marker in self.zero_for)
            else fake_vector(text, self.dims)
            for text in texts
        ]
        if self.drop_one:
            vectors.pop()
        if path == "/api/embed":
            return 200, {"model": body["model"], "embeddings": vectors}
        if path == "/v1/embeddings":
            # Out of order on purpose: clients must sort by index.
            data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
            return 200, {"object": "list", "data": data[::-1], "model": body["model"]}
        return 404, {"error": "404 page not found"}


class Handler(BaseHTTPRequestHandler):
    server: Any

    def do_POST(self) -> None:
        fake: FakeServer = self.server.fake
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fake.received.append(Received(self.path, dict(self.headers), body))
        if fake.black_hole:
            fake.release.wait(120)
            self.close_connection = True
            return  # nothing was ever answered
        if fake.delay:
            fake.release.wait(fake.delay)
        status, payload = fake.answer(self.path, body)
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except OSError:
            pass  # the client gave up waiting (the timeout test)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake = FakeServer(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    monkeypatch.setenv("BRAIN_OLLAMA_URL", fake.url)
    monkeypatch.setenv("BRAIN_OPENAI_BASE_URL", fake.url + "/v1/")
    monkeypatch.setenv("BRAIN_EMBED_RETRY_DELAY", "0.01")
    yield fake
    fake.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join()
