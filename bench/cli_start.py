"""Cold start of the `brain` command: `brain search "..."` as a subprocess, wall time.

The workspace's active space is local (MiniLM), so the query must be embedded
with the model. Measured three ways: BRAIN_EMBED_SERVER=off (every call
imports onnxruntime and loads the model), the first call with the warm embedding
server allowed (it embeds in-process and starts the server), and calls once
the server runs. Then the parts: interpreter start, importing pybrain.cli,
importing onnxruntime and tokenizers, loading the model.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from bench import embcache
from bench.corpus import Generator
from bench.embcache import EmbeddingCache
from bench.server import BenchServer
from bench.util import log

DB = "bench_cli"
QUERY = "how do we deploy payments-api"


def _brain() -> list[str]:
    script = Path(sys.executable).parent / "brain"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pybrain"]


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return elapsed


def _python(code: str, env: dict[str, str]) -> str:
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def run(server: BenchServer, cache: EmbeddingCache, home: Path, runs: int = 5) -> dict[str, Any]:
    log("== CLI cold start: `brain search` as a subprocess, local embedder")
    url = server.create_database(DB)
    memories = Generator(99).memories(300)
    inputs = [m.embedding_input() for m in memories]
    cache.ensure(inputs, "CLI workspace memories")
    vecs = cache.get(inputs)
    with server.connect(DB) as conn:
        conn.execute("SELECT brain.use_embedding_space('local', 'all-MiniLM-L6-v2', 384)")
        for m, v in zip(memories, vecs, strict=True):
            args = m.remember_args() | {"embedding": [float(x) for x in v]}
            names = ", ".join(f"{k} => %({k})s" for k in args)
            try:
                conn.execute(f"SELECT action FROM brain.remember({names})", args)
            except psycopg.errors.DatabaseError as exc:
                if not (exc.sqlstate or "").startswith("BR"):
                    raise  # a related memory exists (BR008): the generator repeats itself
        conn.execute("ANALYZE")
    env = {
        **os.environ,
        "BRAIN_DATABASE_URL": url,
        "BRAIN_EMBEDDER": "local",
        "BRAIN_WORKSPACE": "1",
        "BRAIN_HOME": str(home),
        "BRAIN_EMBED_SERVER_IDLE": "120",
    }
    cmd = [*_brain(), "search", QUERY]
    out: dict[str, Any] = {"command": f"brain search {QUERY!r}", "runs": runs}

    off = {**env, "BRAIN_EMBED_SERVER": "off"}
    times = [_wall(cmd, off) for _ in range(runs)]
    out["no_warm_server"] = {
        "median_s": round(statistics.median(times), 3),
        "runs_s": [round(t, 3) for t in times],
    }
    log(f"  BRAIN_EMBED_SERVER=off: median {out['no_warm_server']['median_s']} s")

    auto = {**env, "BRAIN_EMBED_SERVER": "auto"}
    first = _wall(cmd, auto)
    ready = _wait_for_server(auto)
    times = [_wall(cmd, auto) for _ in range(runs)]
    out["first_call_starting_the_server_s"] = round(first, 3)
    out["warm_server"] = {
        "median_s": round(statistics.median(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "server_ready_after_s": ready,
    }
    log(f"  first call {first:.2f} s; with the warm server: median {out['warm_server']['median_s']} s")
    _stop_server(auto)

    # The parts.
    parts: dict[str, float] = {}
    parts["python_start_s"] = statistics.median(_wall([sys.executable, "-c", "pass"], env) for _ in range(3))
    parts["import_pybrain_cli_s"] = statistics.median(
        float(
            _python(
                "import time; t = time.perf_counter(); import pybrain.cli; print(time.perf_counter() - t)",
                env,
            )
        )
        for _ in range(3)
    )
    parts["brain_help_s"] = statistics.median(_wall([*_brain(), "--help"], env) for _ in range(3))
    model = _python(
        "import os, time; os.environ['BRAIN_EMBED_SERVER'] = 'off'\n"
        "t0 = time.perf_counter(); import onnxruntime, tokenizers; t1 = time.perf_counter()\n"
        "from pybrain.embed.local import LocalEmbedder; e = LocalEmbedder(); e.embed_one('warm up')\n"
        "t2 = time.perf_counter(); e.embed_one('how do we deploy payments-api'); t3 = time.perf_counter()\n"
        "print(t1 - t0, t2 - t1, t3 - t2)",
        env,
    ).split()
    parts["import_onnxruntime_and_tokenizers_s"] = float(model[0])
    parts["load_model_and_first_embedding_s"] = float(model[1])
    parts["one_embedding_warm_s"] = float(model[2])
    out["parts"] = {k: round(v, 3) for k, v in parts.items()}
    out["importtime_top"] = _importtime(env)
    log(f"  parts: {out['parts']}")
    server.drop_database(DB)
    return out


def _wait_for_server(env: dict[str, str], timeout: float = 90.0) -> float | None:
    code = (
        "from pybrain.embed import server; import sys; "
        f"sys.exit(0 if server.status({embcache.SPACE!r})['running'] else 1)"
    )
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if subprocess.run([sys.executable, "-c", code], env=env, capture_output=True).returncode == 0:
            return round(time.perf_counter() - start, 1)
        time.sleep(0.5)
    return None


def _stop_server(env: dict[str, str]) -> None:
    code = f"from pybrain.embed import server; server.stop({embcache.SPACE!r})"
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)


def _importtime(env: dict[str, str], top: int = 10) -> list[dict[str, Any]]:
    """The slowest imports under `import pybrain.cli` (python -X importtime; cumulative, depth <= 2)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pybrain.cli"],
        env=env,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        try:
            micros = int(cumulative.strip())
        except ValueError:
            continue  # the header line
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        if depth <= 2:
            rows.append({"module": name.strip(), "depth": depth, "cumulative_ms": round(micros / 1000, 1)})
    rows.sort(key=lambda r: -r["cumulative_ms"])
    return rows[:top]
