"""`brain hook EVENT` as Claude Code runs it: a new process per event, the payload on stdin.

Wall time of each hook, in three rounds of `runs` calls (the figure is the median of
the three rounds' p50 and p95): in its own process (BRAIN_HOOK_SERVER=off: Python's
start and psycopg's import paid every time) and through the warm process
(pybrain.hooks.warm, which the first hook starts). Then each hook against a database
that accepts connections and never answers (a listening socket on 127.0.0.1): the
slowest of three calls; pre-compact and session-end keep their input on disk there.
The workspace holds `seed` observed memories (hash embedder), as the prompt hook
would search them. Targets (issue 27): session-start and prompt p50 <= 200 ms and
p95 <= 400 ms warm; every hook <= 1 s against the hung database.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.server import BenchServer
from bench.util import log, percentile

DB = "bench_hooks"
EVENTS = ("session-start", "prompt", "pre-compact", "session-end")
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hooks"
PAYLOADS = {
    "session-start": "session_start.json",
    "prompt": "user_prompt_submit.json",
    "pre-compact": "pre_compact.json",
    "session-end": "session_end.json",
}
TOPICS = (
    "billing export",
    "finance bucket",
    "staging VPN",
    "deploy pipeline",
    "nightly backup",
    "search index",
)
HAPPENINGS = (
    "failed",
    "was rerun",
    "moved to a new region",
    "got a new owner",
    "needs a review",
    "was fixed",
)


def _brain() -> list[str]:
    script = Path(sys.executable).parent / "brain"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pybrain"]


def _call(event: str, data: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [*_brain(), "hook", event, "--project", "bench"], input=data, env=env, capture_output=True
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0 or b"hook:" in proc.stderr:
        raise RuntimeError(f"brain hook {event} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def _rounds(event: str, data: bytes, env: dict[str, str], runs: int, rounds: int) -> dict[str, Any]:
    return rounds_of(lambda: _call(event, data, env), runs, rounds)


def rounds_of(call: Callable[[], float], runs: int, rounds: int) -> dict[str, Any]:
    """`rounds` rounds of `runs` calls of call (its seconds): the median of the rounds' p50
    and p95 in milliseconds, and every call's time."""
    p50s, p95s, every = [], [], []
    for _ in range(rounds):
        times = [call() for _ in range(runs)]
        every.append([round(t * 1000, 1) for t in times])
        p50s.append(percentile(times, 50) * 1000)
        p95s.append(percentile(times, 95) * 1000)
    return {
        "p50_ms": round(statistics.median(p50s), 1),
        "p95_ms": round(statistics.median(p95s), 1),
        "rounds_p50_ms": [round(x, 1) for x in p50s],
        "rounds_p95_ms": [round(x, 1) for x in p95s],
        "runs_ms": every,
    }


def seed_memories(url: str, count: int, project: str = "bench") -> None:
    """count observed memories in project, embedded with the hash embedder."""
    import psycopg

    from pybrain.client import Brain
    from pybrain.embed import get_embedder

    texts = []
    for i in range(count):
        topic, happening = TOPICS[i % len(TOPICS)], HAPPENINGS[(i // len(TOPICS)) % len(HAPPENINGS)]
        texts.append(f"The {topic} {happening} on day {i} (ticket OPS-{1000 + i})")
    with psycopg.connect(url, autocommit=True) as conn:
        brain = Brain(conn, embedder=get_embedder("hash"))
        brain.use_embedding_space()
        for start in range(0, count, 200):
            brain.observe(texts[start : start + 200], project=project)
        conn.execute("ANALYZE")


def wait_for_warm(env: dict[str, str], timeout: float = 60.0) -> float | None:
    from pybrain.entry import socket_path

    path = Path(socket_path(env["BRAIN_HOME"]))
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if path.exists():
            return round(time.perf_counter() - started, 2)
        time.sleep(0.05)
    return None


def stop_warm(env: dict[str, str]) -> None:
    code = "from pybrain.hooks import warm; warm.stop()"
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)


def run(server: BenchServer, home: Path, runs: int = 10, rounds: int = 3, seed: int = 2000) -> dict[str, Any]:
    log(f"== hooks: `brain hook EVENT` as Claude Code runs it ({rounds} rounds of {runs} calls)")
    url = server.create_database(DB)
    seed_memories(url, seed)
    hook_home = home / "hooks"
    env = {
        **os.environ,
        "BRAIN_DATABASE_URL": url,
        "BRAIN_EMBEDDER": "hash",
        "BRAIN_HOME": str(hook_home),
        "BRAIN_HOOK_SERVER_IDLE": "300",
    }
    env.pop("CLAUDE_PROJECT_DIR", None)
    out: dict[str, Any] = {
        "memories": seed,
        "runs": runs,
        "rounds": rounds,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }
    with tempfile.TemporaryDirectory() as tmp:
        transcript = Path(tmp) / "8d0c6f3e-2b1a-4c59-9e0f-5a7d3c1b2e44.jsonl"
        transcript.write_bytes((FIXTURES / "transcript.jsonl").read_bytes())
        payloads = {}
        for event, name in PAYLOADS.items():
            data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
            data.update(transcript_path=str(transcript), cwd=tmp)
            payloads[event] = json.dumps(data).encode()

        own = {**env, "BRAIN_HOOK_SERVER": "off"}
        out["own_process"] = {e: _rounds(e, payloads[e], own, runs, rounds) for e in EVENTS}
        log("  own process: " + ", ".join(f"{e} p50 {r['p50_ms']} ms" for e, r in out["own_process"].items()))

        auto = {**env, "BRAIN_HOOK_SERVER": "auto"}
        first = _call("prompt", payloads["prompt"], auto)
        out["first_call_starting_the_warm_process_ms"] = round(first * 1000, 1)
        out["warm_process_ready_after_s"] = wait_for_warm(auto)
        try:
            out["warm_process"] = {e: _rounds(e, payloads[e], auto, runs, rounds) for e in EVENTS}
        finally:
            stop_warm(auto)
        log(
            "  warm process: "
            + ", ".join(f"{e} p50 {r['p50_ms']} ms" for e, r in out["warm_process"].items())
        )

        prompt_text = json.loads(payloads["prompt"])["prompt"]
        out["mcp_tool_call"] = _mcp_tool_calls(env, prompt_text, runs, rounds)
        log(f"  an MCP tool call on a running brain mcp: p50 {out['mcp_tool_call']['p50_ms']} ms")

        out["hung_database"] = _hung(payloads, env, hook_home)
        log(f"  hung database: slowest {out['hung_database']['max_ms']} ms")
    server.drop_database(DB)
    # SessionEnd with a 2,000-turn transcript, within Claude Code's 1.5 s (bench/session_end.py)
    from bench import session_end

    out["session_end"] = session_end.run(server, home)
    out["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _hung(payloads: dict[str, bytes], env: dict[str, str], home: Path) -> dict[str, Any]:
    """Each hook against a server that accepts and never answers: the slowest of 3 calls each,
    in its own process and through the warm process."""
    result: dict[str, Any] = {}
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        hung = {
            **env,
            "BRAIN_DATABASE_URL": f"postgresql://brain:brain@127.0.0.1:{silent.getsockname()[1]}/brain",
        }
        for mode, flag in (("own_process", "off"), ("warm_process", "auto")):
            menv = {**hung, "BRAIN_HOOK_SERVER": flag}
            if flag == "auto":
                _call_quietly("session-start", payloads["session-start"], menv)
                wait_for_warm(menv)
            try:
                runs = {
                    e: [round(_call_quietly(e, payloads[e], menv) * 1000, 1) for _ in range(3)]
                    for e in EVENTS
                }
                result[mode] = {e: max(times) for e, times in runs.items()}
                result[f"{mode}_runs_ms"] = runs
            finally:
                if flag == "auto":
                    stop_warm(menv)
    kept = sorted((home / "spool").glob("*.json"))
    result["kept_records"] = len(kept)
    result["max_ms"] = max(max(result[m].values()) for m in ("own_process", "warm_process"))
    return result


def _call_quietly(event: str, data: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([*_brain(), "hook", event, "--project", "bench"], input=data, env=env, capture_output=True)
    return time.perf_counter() - started


def _mcp_tool_calls(env: dict[str, str], query: str, runs: int, rounds: int) -> dict[str, Any]:
    """What an `mcp_tool` hook handler would cost instead of a process: a tools/call of
    `search` (the prompt's text, 3 results) on a `brain mcp` already running, round trip
    through its stdio, measured as the hooks are (three rounds of `runs`)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=_brain()[0], args=[*_brain()[1:], "mcp"], env=env)

    async def measure() -> list[list[float]]:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.call_tool("search", {"query": query, "max_results": 3})  # the first plans
                every = []
                for _ in range(rounds):
                    times = []
                    for _ in range(runs):
                        started = time.perf_counter()
                        result = await session.call_tool("search", {"query": query, "max_results": 3})
                        times.append(time.perf_counter() - started)
                        if result.is_error:
                            raise RuntimeError(f"search failed: {result.content}")
                    every.append(times)
                return every

    every = anyio.run(measure)
    p50s = [percentile(t, 50) * 1000 for t in every]
    p95s = [percentile(t, 95) * 1000 for t in every]
    return {
        "tool": "search",
        "p50_ms": round(statistics.median(p50s), 1),
        "p95_ms": round(statistics.median(p95s), 1),
        "runs_ms": [[round(t * 1000, 1) for t in times] for times in every],
    }
