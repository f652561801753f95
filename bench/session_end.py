"""`brain hook session-end` with a long transcript, as the plugin runs it (issue 40).

Claude Code gives its SessionEnd hooks 1.5 s in all, whatever a plugin's `timeout`
says. This runs the plugin's exact command (`sh plugin/bin/brain hook session-end`,
BRAIN_COMMAND naming the installed `brain`, its own process: no warm process) on a
transcript of `turns` turns in Claude Code's JSONL shape (prompts, replies with
thinking and tool calls, tool results: long-ish, varied texts), against a fresh
database each run, and reports the wall time of the whole process, the turns it
stored, and the turns the next SessionStart stored (what the hook left to it).
The figure is the median of `runs` runs.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.server import BenchServer
from bench.util import log

DB = "bench_session_end"
ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "plugin" / "bin" / "brain"

_SUBJECTS = (
    "the billing export",
    "the nightly backup job",
    "the staging VPN",
    "the search index rebuild",
    "the payouts webhook",
    "the deploy pipeline",
    "the reconciler's credentials",
    "the invoice PDF renderer",
)
_FILES = ("jobs/export.py", "infra/iam/billing.tf", "web/app.py", "deploy/ci.yml", "db/migrations/0042.sql")
_WORDS = [
    *("partition", "retry", "timeout", "bucket", "policy", "gunicorn", "worker", "queue", "latency"),
    *("index", "replica", "schema", "migration", "rollback", "feature", "flag", "cache", "cron"),
    *("invalidation", "window", "region", "quota", "token", "header", "payload", "checksum"),
    *("lockfile", "dependency", "upgrade", "regression", "flaky", "assertion", "fixture", "tenant"),
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def write_transcript(path: Path, session: str, turns: int, seed: int = 40) -> list[str]:
    """A Claude Code transcript of `turns` turns (half prompts, half replies, every other
    reply with thinking and a tool call, then its tool result); the turns' source_refs."""
    rng = random.Random(seed)
    refs: list[str] = []
    last = None
    lines = []
    minute = 0

    def line(kind: str, message: dict[str, Any], **extra: Any) -> str:
        nonlocal last, minute
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        minute += 1
        entry = {
            "parentUuid": last,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(path.parent),
            "sessionId": session,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uid,
            "timestamp": f"2026-11-20T{10 + minute // 3600:02d}:{minute // 60 % 60:02d}:{minute % 60:02d}Z",
            **extra,
        }
        last = uid
        lines.append(json.dumps(entry))
        return uid

    for i in range(turns):
        subject = rng.choice(_SUBJECTS)
        if i % 2 == 0:
            text = (
                f"Turn {i}: {subject} {rng.choice(('failed again', 'is slow', 'needs a change'))}. "
                + " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(1, 4)))
            )
            refs.append(f"{session}/{line('user', {'role': 'user', 'content': text})}")
            continue
        text = f"Turn {i}: about {subject}, in {rng.choice(_FILES)}. " + " ".join(
            _sentence(rng, rng.randint(8, 22)) for _ in range(rng.randint(2, 9))
        )
        blocks: list[dict[str, Any]] = []
        tool = i % 4 == 1
        if tool:
            blocks.append({"type": "thinking", "thinking": _sentence(rng, 40), "signature": "c2ln"})
        blocks.append({"type": "text", "text": text})
        if tool:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": "Bash",
                    "input": {"command": f"grep -n {rng.choice(_WORDS)} {rng.choice(_FILES)}"},
                }
            )
        message = {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": blocks,
            "stop_reason": "tool_use" if tool else "end_turn",
            "usage": {"input_tokens": 900, "output_tokens": 60},
        }
        refs.append(f"{session}/{line('assistant', message, requestId=f'req_{i}')}")
        if tool:
            output = "\n".join(f"{n}: {_sentence(rng, 10)}" for n in range(rng.randint(3, 40)))
            line(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": output}],
                },
                toolUseResult={"stdout": output, "stderr": ""},
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return refs


def _brain() -> str:
    return str(Path(sys.executable).parent / "brain")


def _hook(event: str, payload: dict[str, Any], env: dict[str, str], cwd: str) -> tuple[float, str, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        ["sh", str(LAUNCHER), "hook", event],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=300,
    )
    return time.perf_counter() - started, proc.stdout.decode(), proc.stderr.decode()


def _stored(url: str, session: str) -> tuple[int, int, int]:
    """The rows of a session's turns, its distinct turns, and its distinct (turn, text) pairs."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*), count(DISTINCT source_ref), count(DISTINCT (source_ref, headline, body))"
            " FROM brain.memory WHERE source_ref LIKE %s",
            (f"{session}/%",),
        ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def _use_space(url: str, embedder: str) -> None:
    import psycopg

    from pybrain.client import Brain
    from pybrain.embed import get_embedder

    with psycopg.connect(url, autocommit=True) as conn:
        Brain(conn, embedder=get_embedder(embedder)).use_embedding_space()


def run(
    server: BenchServer, home: Path, turns: int = 2000, runs: int = 3, embedder: str = "hash"
) -> dict[str, Any]:
    log(f"== session-end: `brain hook session-end` on a {turns}-turn transcript, {runs} runs ({embedder})")
    out: dict[str, Any] = {
        "turns": turns,
        "embedder": embedder,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }
    times: list[float] = []
    stored: list[int] = []
    later: list[dict[str, Any]] = []
    background: list[float] = []
    bytes_ = 0
    for n in range(runs):
        url = server.create_database(DB)
        _use_space(url, embedder)
        with tempfile.TemporaryDirectory() as tmp:
            session = str(uuid.UUID(int=random.Random(n).getrandbits(128)))
            path = Path(tmp) / f"{session}.jsonl"
            refs = write_transcript(path, session, turns, seed=n)
            bytes_ = path.stat().st_size
            env = {
                **os.environ,
                "BRAIN_COMMAND": _brain(),
                "BRAIN_DATABASE_URL": url,
                "BRAIN_EMBEDDER": embedder,
                "BRAIN_HOME": str(Path(tmp) / "home"),
                "BRAIN_HOOK_SERVER": "off",
                "BRAIN_EMBED_SERVER": "off",
                "BRAIN_PROJECT": "bench",
                "CLAUDE_PROJECT_DIR": tmp,
            }
            base = {"session_id": session, "transcript_path": str(path), "cwd": tmp}
            _hook("session-start", {**base, "source": "startup"}, env, tmp)
            seconds, _, err = _hook("session-end", {**base, "reason": "prompt_input_exit"}, env, tmp)
            times.append(seconds)
            stored.append(_stored(url, session)[1])
            # the hook's background process (pybrain.hooks.finish) stores what it left
            began = time.perf_counter()
            while _stored(url, session)[1] < len(refs) and time.perf_counter() - began < 120:
                time.sleep(0.2)
            background.append(round(time.perf_counter() - began, 1))
            # the next sessions of the project capture what is still left, a share of each start
            starts, start_times = 0, []
            while _stored(url, session)[1] < len(refs) and starts < 10:
                nxt = str(uuid.UUID(int=random.Random(100 * n + starts).getrandbits(128)))
                payload = {"session_id": nxt, "transcript_path": str(Path(tmp) / f"{nxt}.jsonl"), "cwd": tmp}
                took, _, _ = _hook("session-start", {**payload, "source": "startup"}, env, tmp)
                starts += 1
                start_times.append(round(took, 2))
            rows, distinct, texts = _stored(url, session)
            later.append({"turns": distinct, "starts": starts, "start_s": start_times})
            if distinct != len(refs) or texts != rows:
                raise RuntimeError(f"{distinct} turns ({rows} rows, {texts} distinct) of {len(refs)}: {err}")
            log(
                f"  run {n + 1}: {seconds:.2f} s, {stored[-1]} of {len(refs)} turns by the hook, the rest"
                f" in the background within {background[-1]} s, then {starts} starts ({start_times} s);"
                f" {err.strip()[-160:]}"
            )
        server.drop_database(DB)
    out.update(
        transcript_bytes=bytes_,
        runs_s=[round(t, 3) for t in times],
        median_s=round(statistics.median(times), 3),
        stored_by_the_hook=stored,
        stored_in_the_background_within_s=background,
        then_by_the_next_starts=later,
        loadavg_end=[round(x, 2) for x in os.getloadavg()],
    )
    log(f"  median {out['median_s']} s")
    return out


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    bench_server = BenchServer()
    try:
        with tempfile.TemporaryDirectory() as home_dir:
            print(
                json.dumps(run(bench_server, Path(home_dir), args.turns, args.runs, args.embedder), indent=2)
            )
    finally:
        bench_server.close()
