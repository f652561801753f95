"""Two commits side by side on one machine: `python -m bench --compare REV`.

REV (any git revision: a commit, HEAD~1, a branch) is exported into a temporary directory
(`git archive`, so the repository's own worktrees are not touched) and runs from there on
this venv with its own PYTHONPATH, its own embedded PostgreSQL and its own databases; this
tree runs as it is. The two run interleaved (REV, this, REV, this, ...), each run a
`python -m bench` of its own with the flags given beside --compare, so that a change in the
machine's load falls on both columns alike. Each side keeps its data directory across its
runs, so only its first run loads the workspaces.

Per figure: each side's median over its runs and its spread (least to most). A figure is
called a change only when the two spreads do not overlap; otherwise it is reported as
within noise. The table, the commits and the machine's load at each run are written to
docs/benchmarks.md, between the markers of its comparison section.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.boot import PINNED
from bench.report import _get
from bench.util import log

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
START = "<!-- compare:start -->"
END = "<!-- compare:end -->"

# (name, path in a synthetic workspace's results, lower is better)
PER_SIZE: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("hybrid search p50 ms", ("search", "hybrid", "p50"), True),
    ("vector-only search p50 ms", ("search", "vector", "p50"), True),
    ("lexical-only search p50 ms", ("search", "lexical", "p50"), True),
    ("search, 1% tag filter p50 ms", ("search_filtered", "p50"), True),
    ("remember (created) p50 ms", ("remember", "p50_by_outcome", "created"), True),
    ("raw write (NN + INSERT) p50 ms", ("raw_floor", "write", "p50"), True),
    ("least hybrid statement p50 ms", ("raw_floor", "least_hybrid", "p50"), True),
    ("raw HNSW top-10 p50 ms", ("raw_floor", "hnsw_top10", "p50"), True),
    ("raw full-text top-10 p50 ms", ("raw_floor", "fts_top10", "p50"), True),
    ("recall p50 ms", ("recall", "p50"), True),
    ("boot with a task p50 ms", ("boot", "with_task_embedding", "p50"), True),
    (f"boot with a task, {PINNED} facts pinned, p50 ms", ("boot", "with_pinned", "p50"), True),
)


def figures(results: dict[str, Any]) -> dict[str, tuple[float, bool]]:
    """The figures of one run by name: value, and whether lower is better."""
    out: dict[str, tuple[float, bool]] = {}
    for size, ws in sorted((results.get("synthetic") or {}).items(), key=lambda x: int(x[0])):
        label = f"{int(size) // 1000}k"
        for name, path, lower in PER_SIZE:
            value = _get(ws, path)
            if isinstance(value, int | float):
                out[f"{label} {name}"] = (float(value), lower)
        for name, r in (ws.get("floor_ratios") or {}).items():
            if isinstance(r.get("ratio"), int | float):
                out[f"{label} {name} (x)"] = (float(r["ratio"]), True)
        for name, r in (ws.get("floor_context") or {}).items():
            if isinstance(r, int | float):
                out[f"{label} {name} (x)"] = (float(r), True)
        for name, r in (ws.get("search_by_filter") or {}).items():
            if isinstance(r, dict) and isinstance(r.get("p50"), int | float):
                out[f"{label} filtered {name} p50 ms"] = (float(r["p50"]), True)
    shaped = _get(results, ("boot", "with_task_embedding", "p50"))
    if isinstance(shaped, int | float):
        out["boot, 500 rules and 200 tasks, p50 ms"] = (float(shaped), True)
    return out


def verdict(before: list[float], after: list[float], lower_is_better: bool) -> str:
    """'faster'/'slower' (or 'better'/'worse') only when the spreads do not overlap."""
    if not before or not after:
        return ""
    if max(after) < min(before):
        return "lower" if not lower_is_better else "faster"
    if min(after) > max(before):
        return "higher" if not lower_is_better else "slower"
    return "within noise"


def summarize(base_runs: list[dict[str, Any]], head_runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per figure both sides have: each side's median and spread, and the verdict."""
    base = [figures(r) for r in base_runs]
    head = [figures(r) for r in head_runs]
    names = [n for n in (head[0] if head else {}) if any(n in b for b in base)]
    rows = []
    for name in names:
        b = [f[name][0] for f in base if name in f]
        h = [f[name][0] for f in head if name in f]
        lower = head[0][name][1]
        rows.append(
            {
                "figure": name,
                "before": {"median": statistics.median(b), "min": min(b), "max": max(b), "n": len(b)},
                "after": {"median": statistics.median(h), "min": min(h), "max": max(h), "n": len(h)},
                "verdict": verdict(b, h, lower),
            }
        )
    return rows


def _num(x: float) -> str:
    return f"{x:.2f}" if abs(x) < 100 else f"{x:.0f}"


def render(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        START,
        f"Side by side ({meta['date']}): `python -m bench --compare {meta['rev']} {' '.join(meta['flags'])}`"
        f": {meta['base_commit']} (before) and {meta['head_commit']} (after), {meta['runs']} runs each,"
        " interleaved, on one machine; each cell the median and, in brackets, the least and most of the"
        " runs. A figure is a change only when the two spreads do not overlap.",
        "",
        f"Load (1-minute average) at each run's start, in run order: {', '.join(meta['loads'])}.",
        "",
        "| figure | before | after | change |",
        "|---|---:|---:|---|",
    ]
    for r in rows:
        b, a = r["before"], r["after"]
        lines.append(
            f"| {r['figure']} | {_num(b['median'])} [{_num(b['min'])}..{_num(b['max'])}]"
            f" | {_num(a['median'])} [{_num(a['min'])}..{_num(a['max'])}] | {r['verdict']} |"
        )
    lines.append(END)
    return "\n".join(lines)


def write_doc(text: str, doc: Path = DOC) -> None:
    """The comparison section of docs/benchmarks.md replaced (added at the end the first time)."""
    old = doc.read_text(encoding="utf-8")
    if START in old and END in old:
        new = old[: old.index(START)] + text + old[old.index(END) + len(END) :]
    else:
        new = old.rstrip("\n") + "\n\n## Side by side: the previous commit and this one\n\n" + text + "\n"
    doc.write_text(new, encoding="utf-8")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def export(rev: str, into: Path) -> str:
    """REV's tree written into `into` (git archive); its short commit id."""
    commit = _git("rev-parse", "--short", rev)
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return commit


def _run(tree: Path, flags: list[str], data: Path, output: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, "-m", "bench", *flags, "--data-dir", str(data), "--output", str(output)]
    log(f"compare: {tree}: {' '.join(cmd[1:])}")
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads(output.read_text())


def run(rev: str, flags: list[str], runs: int = 3, doc: Path = DOC) -> dict[str, Any]:
    """REV and this tree, `runs` times each, interleaved; the comparison written to doc."""
    work = Path(tempfile.mkdtemp(prefix="pybrain-bench-compare-"))
    work.chmod(0o755)  # the embedded server's own system user reaches its data directory under it
    try:
        base_tree = work / "before"
        base_commit = export(rev, base_tree)
        dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
        head_commit = _git("rev-parse", "--short", "HEAD") + (" with uncommitted changes" if dirty else "")
        sides = {"before": (base_tree, []), "after": (ROOT, [])}
        loads = []
        for i in range(runs):
            for side, (tree, out) in sides.items():
                loads.append(f"{os.getloadavg()[0]:.2f} ({side})")
                out.append(_run(tree, flags, work / f"data-{side}", work / f"{side}-{i}.json"))
        rows = summarize(sides["before"][1], sides["after"][1])
        meta = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "rev": rev,
            "flags": flags,
            "base_commit": base_commit,
            "head_commit": head_commit,
            "runs": runs,
            "loads": loads,
        }
        write_doc(render(meta, rows), doc)
        log(f"compare: written to {doc}")
        return {"meta": meta, "rows": rows}
    finally:
        shutil.rmtree(work, ignore_errors=True)
