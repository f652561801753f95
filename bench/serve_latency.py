"""python -m bench.serve_latency: latency of `brain serve`, tool calls over streamable HTTP with a token.

    python -m bench.serve_latency [--calls 200] [--clients 4] [--seed 500] [--scratch]
    make bench-serve                                   # --scratch, the hash embedder

Runs against the configured database (BRAIN_DATABASE_URL, else the embedded
one), or with --scratch against a throwaway embedded one that `brain init`
makes under a temporary BRAIN_HOME and that is stopped and removed after.
It creates a token for the application role as the owner, starts `brain
serve` on a free port, and times, with the official SDK client, `search`
calls one after another and from several clients at once, and a refused
request (a wrong token: 401). Revokes the token at the end. Every request is
verified against the database (brain.verify_token), so the figures include
that lookup.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.util import percentile
from pybrain import db
from pybrain.client import Brain
from pybrain.config import Settings

QUERIES = ("billing export", "staging VPN", "deploy pipeline", "nightly backup", "search index", "OPS-1042")


async def client(url: str, token: str, calls: int, out: list[float]) -> None:
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(calls):
            started = time.perf_counter()
            result = await session.call_tool("search", {"query": QUERIES[i % len(QUERIES)]})
            out.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result.content[0].text


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve_latency", description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=500)
    parser.add_argument("--scratch", action="store_true", help="a throwaway embedded database, removed after")
    args = parser.parse_args()
    if not args.scratch:
        measure(args)
        return
    home = Path(tempfile.mkdtemp(prefix="pybrain-bench-serve-"))
    os.environ["BRAIN_HOME"] = str(home)
    os.environ.pop("BRAIN_DATABASE_URL", None)
    brain = [sys.executable, "-m", "pybrain"]
    try:
        subprocess.run([*brain, "init"], check=True, stdout=subprocess.DEVNULL)
        measure(args)
    finally:
        subprocess.run([*brain, "db", "stop"], check=False, stdout=subprocess.DEVNULL)
        shutil.rmtree(home, ignore_errors=True)


def measure(args: argparse.Namespace) -> None:
    settings = Settings.from_env()
    with Brain.open(settings) as brain:
        texts = [
            f"The {QUERIES[i % 5]} was checked on day {i} (ticket OPS-{1000 + i})" for i in range(args.seed)
        ]
        for start in range(0, len(texts), 200):
            brain.observe(texts[start : start + 200], project="serve-latency")
    with Brain(db.connect(db.admin_url(settings)), workspace=settings.workspace) as admin:
        role = db.app_credentials(settings.home)["role"] if not settings.database_url else None
        role = role or admin.conn.execute("SELECT current_user").fetchone()[0]
        made = admin.value(
            "create_token", role=role, name=f"serve-latency-{os.getpid()}", expires_in="1 hour"
        )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pybrain", "serve", "--port", str(port)], stderr=subprocess.PIPE, text=True
    )
    try:
        proc.stderr.readline()
        while True:
            try:
                httpx2.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=5)
                break
            except httpx2.ConnectError:
                time.sleep(0.2)
        refused = []
        http = httpx2.Client(timeout=10)
        for _ in range(50):
            started = time.perf_counter()
            r = http.post(url, json={}, headers={"Authorization": "Bearer pbt_" + "0" * 64})
            refused.append((time.perf_counter() - started) * 1000)
            assert r.status_code == 401
        one: list[float] = []
        anyio.run(client, url, made["token"], args.calls, one)
        many: list[float] = []

        async def several() -> None:
            async with anyio.create_task_group() as tg:
                for _ in range(args.clients):
                    tg.start_soon(client, url, made["token"], args.calls // args.clients, many)

        started = time.perf_counter()
        anyio.run(several)
        wall = time.perf_counter() - started
        print(f"memories: {args.seed} observed; embedder {settings.embedder or 'default'}")
        print(f"refused (wrong token, 401): median {statistics.median(refused):.1f} ms")
        print(
            f"search, 1 client, {len(one)} calls: median {statistics.median(one):.1f} ms, "
            f"p95 {percentile(one, 95):.1f} ms"
        )
        print(
            f"search, {args.clients} clients at once, {len(many)} calls: "
            f"median {statistics.median(many):.1f} ms, p95 {percentile(many, 95):.1f} ms, "
            f"{len(many) / wall:.0f} calls/s"
        )
    finally:
        proc.terminate()
        proc.wait(20)
        with Brain(db.connect(db.admin_url(settings)), workspace=settings.workspace) as admin:
            admin.value("revoke_token", token_id=made["token_id"])


if __name__ == "__main__":
    main()
