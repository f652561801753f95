"""A run's figures against the last accepted run's (bench/baselines/figures.json).

The baseline is a run someone accepted (`python -m bench --accept`): its figures, the
commit and the machine they came from. A later run on the same machine class (same CPU
model and core count) prints each figure beside it, and marks REGRESSED any that is more
than a quarter worse. It is printed, never a failing test: figures of a shared machine
move, and a person reads them.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from bench.report import _get

BASELINE = Path(__file__).resolve().parent / "baselines" / "figures.json"
WORSE_BY = 0.25

# (name, path in a run's results, lower is better); sizes are filled in per workspace.
PER_SIZE = (
    ("remember p50 ms", ("remember", "p50"), True),
    ("search hybrid p50 ms", ("search", "hybrid", "p50"), True),
    ("search vector p50 ms", ("search", "vector", "p50"), True),
    ("search lexical p50 ms", ("search", "lexical", "p50"), True),
    ("search hybrid p95 ms", ("search", "hybrid", "p95"), True),
    ("search 1% tag filter p50 ms", ("search_filtered", "p50"), True),
    ("recall p50 ms", ("recall", "p50"), True),
    ("boot_session p50 ms", ("boot", "with_task_embedding", "p50"), True),
    ("remember end to end p50 ms", ("remember_e2e", "p50"), True),
    ("search end to end p50 ms", ("search_e2e", "p50"), True),
)
OTHER = (
    ("boot_session, 500 rules and 200 tasks, p50 ms", ("boot", "with_task_embedding", "p50"), True),
    ("ingest, batches of 1000, rows/s", ("ingest", "batch_1000", "rows_per_s"), False),
    ("CLI brain search, cold, s", ("cli", "no_warm_server", "median_s"), True),
    ("local embedder cold start s", ("embedders", "paths", "onnxruntime", "cold_s"), True),
    ("hook session-start p50 ms", ("hooks", "warm_process", "session-start", "p50_ms"), True),
    ("hook prompt p50 ms", ("hooks", "warm_process", "prompt", "p50_ms"), True),
    ("LongMemEval hybrid turn@10", ("longmemeval", "metrics", "overall", "hybrid", "turn@10"), False),
)


def figures(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The figures a run has, by name: value and whether lower is better."""
    out: dict[str, dict[str, Any]] = {}
    for size, ws in sorted((results.get("synthetic") or {}).items(), key=lambda x: int(x[0])):
        for name, path, lower in PER_SIZE:
            value = _get(ws, path)
            if isinstance(value, int | float):
                out[f"{int(size) // 1000}k {name}"] = {"value": value, "lower_is_better": lower}
    for name, path, lower in OTHER:
        value = _get(results, path)
        if isinstance(value, int | float):
            out[name] = {"value": value, "lower_is_better": lower}
    return out


def machine_class(machine: dict[str, Any]) -> str:
    return f"{machine.get('cores')} cores, {machine.get('cpu')}"


def compare(results: dict[str, Any], baseline_path: Path = BASELINE) -> dict[str, Any] | None:
    """Each figure of this run that the baseline has, with its change; None without a baseline."""
    if not baseline_path.exists():
        return None
    base = json.loads(baseline_path.read_text())
    same = base["machine_class"] == machine_class(results["machine"])
    rows = []
    now = figures(results)
    for name, before in base["figures"].items():
        if name not in now:
            continue
        value, was = now[name]["value"], before["value"]
        change = (value - was) / was if was else None
        if change is None:
            worse = False
        else:
            worse = change > WORSE_BY if before["lower_is_better"] else change < -WORSE_BY
        rows.append(
            {"figure": name, "before": was, "now": value, "change": change, "regressed": bool(worse and same)}
        )
    return {
        "baseline_commit": base["commit"],
        "baseline_accepted_at": base["accepted_at"],
        "baseline_machine": base["machine_class"],
        "same_machine_class": same,
        "rows": rows,
        "regressed": [r["figure"] for r in rows if r["regressed"]],
    }


def accept(results: dict[str, Any], baseline_path: Path = BASELINE) -> None:
    """This run's figures become the baseline (merged over the last one: a partial run keeps the
    figures it did not measure)."""
    old = json.loads(baseline_path.read_text()) if baseline_path.exists() else {"figures": {}}
    machine = machine_class(results["machine"])
    kept = old["figures"] if old.get("machine_class") == machine else {}
    baseline = {
        "commit": results["machine"].get("pybrain_commit"),
        "accepted_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine_class": machine,
        "load_average": [results.get("loadavg_start"), results.get("loadavg_end")],
        "figures": kept | figures(results),
    }
    baseline_path.parent.mkdir(parents=True, exist_ok=True)
    baseline_path.write_text(json.dumps(baseline, indent=2) + "\n")


def lines(comparison: dict[str, Any] | None) -> list[str]:
    if comparison is None:
        return ["Against the last accepted run: none accepted yet (python -m bench --accept)", ""]
    head = (
        f"Against the last accepted run ({comparison['baseline_commit']},"
        f" {comparison['baseline_accepted_at']}, {comparison['baseline_machine']})"
    )
    if not comparison["same_machine_class"]:
        head += ": another machine class, shown but not judged"
    out = [head]
    for r in comparison["rows"]:
        change = "-" if r["change"] is None else f"{r['change']:+.0%}"
        mark = "  REGRESSED" if r["regressed"] else ""
        out.append(f"  {r['figure']:52}{r['before']:>12g}{r['now']:>12g}{change:>8}{mark}")
    out.append(
        f"  {len(comparison['regressed'])} regressed (worse by more than {WORSE_BY:.0%})"
        if comparison["same_machine_class"]
        else ""
    )
    out.append("")
    return out
