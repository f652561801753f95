"""Health as an operator sees it: the database's view plus what only Python can check."""

from __future__ import annotations

import socket
import time
from typing import Any
from urllib.parse import urlsplit

from pybrain.client import Brain
from pybrain.embed import Embedder, local_available
from pybrain.embed.http import HttpEmbedder
from pybrain.errors import BrainError

PROBE_TIMEOUT = 2.0


def embedder_status(embedder: Embedder, timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """Whether the embedder can answer, checked within `timeout` seconds and without embedding."""
    out: dict[str, Any] = {"space": embedder.space, "dims": embedder.dims}
    if isinstance(embedder, HttpEmbedder):
        url = urlsplit(embedder.base_url)
        port = url.port or (443 if url.scheme == "https" else 80)
        started = time.perf_counter()
        try:
            with socket.create_connection((url.hostname or "localhost", port), timeout=timeout):
                pass
            out.update(reachable=True, latency_ms=round((time.perf_counter() - started) * 1000, 2))
        except OSError as exc:
            out.update(reachable=False, error=f"{url.hostname}:{port}: {exc.strerror or exc}")
    elif embedder.provider == "local":
        from pybrain.embed import server

        out.update(reachable=local_available(), warm_server=server.status(embedder.space)["running"])
    else:
        out.update(reachable=True)
    return out


def health(
    brain: Brain, *, started_at: float | None = None, tools: list[str] | None = None
) -> dict[str, Any]:
    report = brain.health()
    try:
        report["embedder"] = embedder_status(brain.embedder)
    except BrainError as exc:  # health reports a broken embedder instead of failing
        report["embedder"] = {"reachable": False, "error": exc.message}
    if started_at is not None:
        report["server_uptime_s"] = round(time.time() - started_at, 1)
    if tools is not None:
        report["tools"] = tools
    report["ok"] = bool(report["embedder"].get("reachable"))
    return report
