"""Document ingest throughput: `brain ingest` end to end (pybrain.ingest.ingest).

Two corpora:

- the project's own documentation (README.md and docs/*.md), ingested with
  the hash embedder (the figure of pybrain and the database) and, unless
  skipped, with the local MiniLM model (the share of time a real embedder
  takes);
- a generated markdown corpus of about 10 MB (documents of headings,
  paragraphs, lists and fenced code built from the synthetic workspace's
  texts), with the hash embedder.

Each run starts from a fresh database and reads the files from disk, as the
command does: walk, read, hash, the listing call, then chunking, embedding
and writing in batches. A second run over the unchanged files (nothing
embedded, nothing written) is timed too. Each figure is the median of the
runs (3 by default).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from bench.corpus import Generator
from bench.server import BenchServer
from bench.util import log
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.ingest import collect
from pybrain.ingest import run as ingest_run

DB = "bench_docingest"
REPO = Path(__file__).resolve().parent.parent


def write_corpus(directory: Path, seed: int, target_bytes: int = 10_000_000) -> tuple[int, int]:
    """Markdown documents of about 9 kB under directory, target_bytes in all: (files, bytes)."""
    gen = Generator(seed)
    total = files = 0
    while total < target_bytes:
        mems = gen.memories(40)
        title = mems[0].headline
        parts = [f"# {title}", "", mems[0].body, ""]
        for i, m in enumerate(mems[1:], 1):
            parts += [f"## {m.headline}", "", m.body, ""]
            if i % 5 == 0:
                parts += ["```bash", f"kubectl rollout restart deployment/{gen.svc()}", gen.tool(), "```", ""]
            if i % 7 == 0:
                parts += [f"- {x.headline}" for x in gen.memories(4)] + [""]
            if i % 9 == 0:
                parts += ["| service | owner |", "|---|---|"] + [f"| {gen.svc()} | @{gen.person()} |"] * 3
                parts += [""]
        text = "\n".join(parts)
        sub = directory / f"area-{files // 50:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"doc-{files:04d}.md").write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
        files += 1
    return files, total


def _once(server: BenchServer, paths: list[str], root: Path, embedder: str) -> dict[str, Any]:
    url = server.create_database(DB)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            brain = Brain(conn, embedder=get_embedder(embedder))
            brain.use_embedding_space()
            listing = collect(paths, root=root)
            first = ingest_run(brain, listing)
            # the same files again: nothing changed
            again = ingest_run(brain, collect(paths, root=root))
            memories = conn.execute("SELECT count(*) FROM brain.memory WHERE state = 'active'").fetchone()[0]
    finally:
        server.drop_database(DB)
    if first.problems:
        raise RuntimeError(f"ingest problems: {first.problems[:3]}")
    docs = sum(first.documents.values())
    chunks = first.chunks["new"]
    return {
        "documents": docs,
        "chunks": chunks,
        "memories": memories,
        "bytes": sum(len(d.text.encode("utf-8")) for d in listing.documents),
        "seconds": first.seconds,
        "embed_seconds": first.embed_seconds,
        "documents_per_s": docs / first.seconds,
        "chunks_per_s": chunks / first.seconds,
        "embed_share": first.embed_seconds / first.seconds,
        "rerun_seconds": again.seconds,
        "rerun_documents_per_s": docs / again.seconds,
        "rerun_unchanged": again.documents["unchanged"],
        "rerun_embedded": again.embedded,
    }


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(runs)}
    for key in runs[0]:
        values = [r[key] for r in runs]
        m = statistics.median(values)
        out[key] = round(m, 3) if isinstance(m, float) else m
    out["seconds_each"] = [round(r["seconds"], 2) for r in runs]
    return out


def _measure(server: BenchServer, label: str, paths: list[str], root: Path, embedder: str, runs: int):
    results = []
    for i in range(runs):
        r = _once(server, paths, root, embedder)
        log(
            f"  {label}, run {i + 1}/{runs}: {r['documents']} documents, {r['chunks']} chunks in"
            f" {r['seconds']:.2f} s ({r['documents_per_s']:.1f} documents/s,"
            f" {r['chunks_per_s']:.0f} chunks/s,"
            f" {r['embed_share']:.0%} embedding); unchanged re-run {r['rerun_seconds']:.2f} s"
        )
        results.append(r)
    return _median(results)


def run(server: BenchServer, *, seed: int, runs: int = 3, minilm: bool = True, corpus_mb: int = 10) -> dict:
    log(f"== document ingest: brain ingest of the project's docs and a generated {corpus_mb} MB corpus")
    out: dict[str, Any] = {}
    docs = [str(REPO / "README.md"), str(REPO / "docs")]
    out["project_docs_hash"] = _measure(server, "project docs, hash", docs, REPO, "hash", runs)
    if minilm:
        get_embedder("local").embed(["warm up"])  # the model's load is not an ingest's cost
        out["project_docs_minilm"] = _measure(server, "project docs, MiniLM", docs, REPO, "local", runs)
    tmp = Path(tempfile.mkdtemp(prefix="pybrain-bench-docs-"))
    try:
        files, size = write_corpus(tmp, seed, corpus_mb * 1_000_000)
        log(f"  generated corpus: {files} markdown files, {size / 1e6:.1f} MB")
        out["generated_hash"] = _measure(server, "generated corpus, hash", [str(tmp)], tmp, "hash", runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
