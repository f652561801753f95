"""The local embedder's runtimes side by side: onnxruntime (the default) and the opt-in torch path.

Each path runs in fresh processes, one at a time, so neither's threads compete
with the other's: cold start (interpreter start excluded: import + load + first
vector), one query (p50 of 64), a batch of 32 documentation lines (texts per
second), peak memory, and the vectors of 512 texts, compared across paths by
cosine. Each figure is the median of `rounds` processes, the paths alternated.
The torch path is measured only where torch and sentence-transformers are
installed (`make test-torch` installs them).

    python -m bench.embedders [--rounds 3] [--output bench/results/embedders.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from bench.util import log

# What a child process does: load the path's model, time it, and save its vectors.
CHILD = r"""
import json, os, resource, sys, time
path, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if path == "torch":
    import sentence_transformers, torch
    t1 = time.perf_counter()
    from pybrain.embed.sbert import TorchEmbedder
    embedder = TorchEmbedder()
else:
    import onnxruntime, tokenizers
    t1 = time.perf_counter()
    from pybrain.embed.local import LocalEmbedder
    embedder = LocalEmbedder()
embedder.embed_one("warm up")
t2 = time.perf_counter()
rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:")) / 1024
queries = [f"how do we deploy service {i} to staging" for i in range(64)]
times = []
for q in queries:
    s = time.perf_counter(); embedder.embed_one(q); times.append(time.perf_counter() - s)
times.sort()
batch = [
    f"Section {i}: the payments-api reads its settings from /etc/payments/{i}.yaml; restart it "
    f"with `systemctl restart payments@{i}` after a change, and check the health endpoint." for i in range(32)
]
embedder.embed(batch)
s = time.perf_counter(); embedder.embed(batch); batch_s = time.perf_counter() - s
texts = json.loads(open(os.environ["BENCH_TEXTS"], encoding="utf-8").read())
import numpy
numpy.save(out, numpy.asarray(embedder.embed(texts), dtype=numpy.float32))
print(json.dumps({
    "import_s": t1 - t0, "load_and_first_vector_s": t2 - t1, "cold_s": t2 - t0,
    "query_p50_ms": 1000 * times[len(times) // 2], "query_p95_ms": 1000 * times[int(len(times) * 0.95)],
    "batch32_texts_per_s": len(batch) / batch_s,
    "rss_after_first_vector_mb": rss,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def sample_texts(count: int = 512) -> list[str]:
    """Texts of every length, past the 256-token limit too."""
    vocabulary = (
        "deploy staging nightly postgres replica lag migration orders table request failed retry timeout "
        "kubernetes pod crash loop config token rotate incident the a of to in and is was for with on "
        "café 東京 10.20.30.40 PURPLE_OCTOPUS v3.11.2 /etc/nginx/nginx.conf ERR_CONNECTION_RESET"
    )
    words = vocabulary.split()
    rng = np.random.default_rng(11)
    out = [""]
    while len(out) < count:
        n = int(rng.choice([1, 3, 8, 20, 50, 120, 250, 400, 900]))
        out.append(" ".join(words[int(i)] for i in rng.integers(0, len(words), n)))
    return out


def paths() -> list[str]:
    have_torch = all(find_spec(m) is not None for m in ("torch", "sentence_transformers"))
    return ["onnxruntime", "torch"] if have_torch else ["onnxruntime"]


def _child(path: str, home: Path, texts: list[str], out: Path) -> dict[str, Any]:
    listing = out.with_suffix(".json")
    listing.write_text(json.dumps(texts), encoding="utf-8")
    env = {
        **os.environ,
        "BRAIN_EMBED_SERVER": "off",
        "BRAIN_HOME": str(home),
        "BENCH_TEXTS": str(listing),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, path, str(out)], env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the {path} embedder failed: {proc.stderr.strip()[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(rounds: int = 3) -> dict[str, Any]:
    log("== Local embedder: onnxruntime beside the torch path, fresh processes, alternated")
    texts = sample_texts()
    measured: dict[str, list[dict[str, Any]]] = {p: [] for p in paths()}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory(prefix="bench-embedders-") as tmp:
        home = Path(tmp) / "home"
        # The graph is built once per machine: built here first, so cold starts read it.
        _child("onnxruntime", home, texts[:2], Path(tmp) / "build.npy")
        for r in range(rounds):
            for path in measured:
                out = Path(tmp) / f"{path}-{r}.npy"
                measured[path].append(_child(path, home, texts, out))
                vectors[path] = np.load(out)
    result: dict[str, Any] = {"rounds": rounds, "texts_compared": len(texts), "paths": {}}
    for path, runs in measured.items():
        medians = {k: round(statistics.median(run[k] for run in runs), 4) for k in runs[0]}
        result["paths"][path] = medians
        m = medians
        log(
            f"  {path:12} cold {m['cold_s']:.3f} s (import {m['import_s']:.3f}), "
            f"query p50 {m['query_p50_ms']:.2f} ms, batch of 32 {m['batch32_texts_per_s']:.0f} texts/s, "
            f"{m['rss_after_first_vector_mb']:.0f} MB after the first vector, peak {m['peak_rss_mb']:.0f} MB"
        )
    if "torch" in vectors:
        cosines = (vectors["onnxruntime"] * vectors["torch"]).sum(axis=1)
        result["min_cosine_onnxruntime_vs_torch"] = round(float(cosines.min()), 7)
        ort, torch = result["paths"]["onnxruntime"], result["paths"]["torch"]
        result["ratios"] = {
            "query_p50_onnxruntime_over_torch": round(ort["query_p50_ms"] / torch["query_p50_ms"], 3),
            "batch_onnxruntime_over_torch": round(
                ort["batch32_texts_per_s"] / torch["batch32_texts_per_s"], 3
            ),
        }
        worst = result["min_cosine_onnxruntime_vs_torch"]
        log(f"  min cosine onnxruntime vs torch over {len(texts)} texts: {worst}")
        log(f"  ratios: {result['ratios']}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedders", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(args.rounds)
    text = json.dumps(result, indent=2)
    if args.output:
        args.output.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
