"""The human-readable table of a run, and the design targets."""

from __future__ import annotations

import json
from typing import Any

from bench.boot import PINNED

# (label, getter path, comparison, target value, unit)
TARGETS = [
    ("search p50 in the database", ("search", "hybrid", "p50"), "<=", 5.0, "ms"),
    ("search p95 in the database", ("search", "hybrid", "p95"), "<=", 15.0, "ms"),
    ("remember p50 in the database", ("remember", "p50"), "<=", 5.0, "ms"),
    ("vector recall@10", ("vector_recall", "mean_recall_at_10"), ">=", 0.95, ""),
    (
        "boot_session p50 in the database, synthetic mix (10% rules, 8% tasks)",
        ("boot", "with_task_embedding", "p50"),
        "<=",
        10.0,
        "ms",
    ),
    ("injection recorded, p50 in the database", ("boot", "injection_record", "p50"), "<=", 1.0, "ms"),
]


# Rows both workspace tables print: (label, path in a workspace's results).
SEARCH_ROWS = (
    ("  search, hybrid (text + embedding)", ("search", "hybrid")),
    ("  search, vector only", ("search", "vector")),
    ("  search, lexical only (text)", ("search", "lexical")),
    ("  search, hybrid, 1% tag filter", ("search_filtered",)),
    ("  search, hybrid, odd queries (fragments)", ("search_odd",)),
)
QUALITY_ROWS = (
    ("  vector recall@10 vs exact scan", ("vector_recall", "mean_recall_at_10")),
    ("  vector recall@10, 1% tag filter", ("vector_recall_filtered", "mean_recall_at_10")),
    ("  filtered searches with all rows that exist", ("search_filtered", "fraction_complete")),
)


# pybrain over the raw PostgreSQL floor, and a p95 over its p50, at most (issue 28's bounds).
FLOOR_RATIO = 2.0
TAIL_RATIO = 2.0
TAIL_ROWS = (
    ("  remember", ("remember",)),
    ("  search, hybrid", ("search", "hybrid")),
    ("  search, hybrid, odd queries", ("search_odd",)),
    ("  search, vector only", ("search", "vector")),
    ("  search, lexical only", ("search", "lexical")),
    ("  boot_session (task embedding)", ("boot", "with_task_embedding")),
)


def _get(d: Any, path: tuple) -> Any:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target against the 100k workspace (the largest measured one if 100k was not run)."""
    sizes = sorted(int(s) for s in results.get("synthetic", {}))
    out = []
    if sizes:
        size = 100_000 if 100_000 in sizes else sizes[-1]
        ws = results["synthetic"][str(size)]
        for label, path, op, target, unit in TARGETS:
            value = _get(ws, path)
            out.append(_verdict(f"{label} ({size // 1000}k, hash vectors)", value, op, target, unit))
    for size in sizes:
        ws = results["synthetic"][str(size)]
        for key, r in (ws.get("floor_ratios") or {}).items():
            label = f"{key} ({size // 1000}k, p50 as a client role)"
            out.append(_verdict(label, r.get("ratio"), "<=", FLOOR_RATIO, "x"))
        for label, path in TAIL_ROWS:
            d = _get(ws, path) or {}
            ratio = round(d["p95"] / d["p50"], 2) if d.get("p50") and d.get("p95") else None
            out.append(_verdict(f"p95 / p50,{label.strip()} ({size // 1000}k)", ratio, "<=", TAIL_RATIO, "x"))
    minilm = results.get("synthetic_minilm", {})
    for size in sorted(minilm, key=int)[-1:]:
        ws = minilm[size]
        for label, path, op, target, unit in TARGETS:
            if path[0] in ("search", "vector_recall"):
                value = _get(ws, path)
                out.append(
                    _verdict(f"{label} ({int(size) // 1000}k, MiniLM vectors)", value, op, target, unit)
                )
    ingest = _get(results, ("ingest", "batch_1000", "rows_per_s"))
    out.append(
        _verdict("bulk ingest, brain.observe_batch calls (batches of 1000)", ingest, ">=", 2000, "rows/s")
    )
    shaped = _get(results, ("boot", "with_task_embedding", "p50"))
    size = _get(results, ("boot", "memories"))
    label = f"boot_session p50, {size or '?'} memories with 500 rules and 200 open tasks"
    out.append(_verdict(label, shaped, "<=", 10.0, "ms"))
    overall = _get(results, ("longmemeval", "metrics", "overall"))
    if overall:
        n = overall["questions"]
        hybrid = overall["hybrid"]["turn@10"]
        best_leg = max(overall["vector"]["turn@10"], overall["lexical"]["turn@10"])
        out.append(_verdict(f"LongMemEval hybrid turn@10 ({n} questions)", hybrid, ">=", 0.85, ""))
        out.append(
            _verdict(
                f"LongMemEval hybrid turn@10 minus the best single leg ({n} questions)",
                round(hybrid - best_leg, 3),
                ">=",
                0.05,
                "",
            )
        )
        out.append(
            _verdict(
                f"LongMemEval hybrid session all@10 ({n} questions)",
                overall["hybrid"]["session_all@10"],
                ">=",
                0.95,
                "",
            )
        )
        if "hybrid_floor" in overall:
            out.append(
                _verdict(
                    f"LongMemEval hybrid turn@10 through the default path, floor on ({n} questions)",
                    overall["hybrid_floor"]["turn@10"],
                    ">=",
                    0.88,
                    "",
                )
            )
    off = _get(results, ("longmemeval", "offtopic"))
    if off:
        stores = _get(results, ("longmemeval", "data")) or "dev60"
        label = f"off-topic queries over the {stores} stores that return nothing ({off['queries']})"
        out.append(_verdict(label, off["empty_share"], ">=", 0.95, ""))
    docs = results.get("offtopic_docs")
    if docs:
        label = f"off-topic queries over the project's documentation that return nothing ({docs['queries']})"
        out.append(_verdict(label, round(docs["empty"] / docs["queries"], 3), ">=", 0.95, ""))
    exact = results.get("exact_tokens")
    for name in ("hash", "local"):
        if exact and name in exact:
            label = f"exact tokens first, relevance >= {exact['floor']} ({exact['tokens']}, {name})"
            out.append(_verdict(label, exact[name]["hybrid"]["share"], ">=", 1.0, ""))
    clock = _get(results, ("longmemeval", "clock_shift", "check"))
    if clock:
        out.append(
            _verdict(
                "LongMemEval recall@10, clock moved " + "/".join(clock["legs"]) + " days: change from fresh",
                clock["max_change_points"],
                "<=",
                clock["tolerance_points"],
                "points",
            )
        )
    cli = _get(results, ("cli", "no_warm_server", "median_s"))
    out.append(_verdict("CLI `brain search`, cold (no warm embedding server)", cli, "<=", 1.5, "s"))
    cold = _get(results, ("embedders", "paths", "onnxruntime", "cold_s"))
    out.append(_verdict("local embedder cold start (import + load + first vector)", cold, "<=", 1.0, "s"))
    ratios = _get(results, ("embedders", "ratios")) or {}
    out.append(
        _verdict(
            "local embedder query p50 / the torch path's",
            ratios.get("query_p50_onnxruntime_over_torch"),
            "<=",
            0.5,
            "x",
        )
    )
    out.append(
        _verdict(
            "local embedder batch texts/s / the torch path's",
            ratios.get("batch_onnxruntime_over_torch"),
            ">=",
            1.0,
            "x",
        )
    )
    cosine = _get(results, ("embedders", "min_cosine_onnxruntime_vs_torch"))
    out.append(_verdict("local embedder vectors: min cosine vs the torch path", cosine, ">=", 0.9999, ""))
    warm = _get(results, ("cli", "warm_server", "median_s"))
    out.append(_verdict("CLI `brain search`, warm embedding server", warm, "<=", 1.0, "s"))
    for event in ("session-start", "prompt"):
        for stat, goal in (("p50_ms", 200), ("p95_ms", 400)):
            value = _get(results, ("hooks", "warm_process", event, stat))
            label = f"`brain hook {event}`, warm process: {stat[:3]} (median of 3 rounds)"
            out.append(_verdict(label, value, "<=", goal, "ms"))
    hung = _get(results, ("hooks", "hung_database", "max_ms"))
    out.append(
        _verdict("`brain hook` (every event) against a hung database: slowest", hung, "<=", 1000, "ms")
    )
    end = _get(results, ("hooks", "session_end", "median_s"))
    label = "`brain hook session-end`, 2,000-turn transcript, as the plugin runs it (median of 3)"
    out.append(_verdict(label, end, "<=", 1.5, "s"))
    for name, h in (_get(results, ("harnesses", "harnesses")) or {}).items():
        for event, ms in h["target"]["events"].items():
            label = f"{name} as the README installs it: {event} p50 warm (median of 3 rounds)"
            out.append(_verdict(label, ms, "<=", results["harnesses"]["target_ms"], "ms"))
    ratio = _get(results, ("continuity", "metrics", "overall", "ratio"))
    label = (
        "continuity: evidence injected by the hooks / search turn@10"
        f" (LongMemEval {_get(results, ('continuity', 'data')) or 'dev60'})"
    )
    out.append(_verdict(label, ratio, ">=", 0.9, "x"))
    lean = _get(results, ("mcp_tools", "profiles", "lean"))
    if lean:
        out.append(_verdict("MCP default (lean) profile: tools", lean["tools"], "<=", 10, "tools"))
        label = "MCP default (lean) profile: schema tokens (chars/4)"
        out.append(_verdict(label, lean["schema_tokens"], "<=", 2000, "tokens"))
    return out


def _verdict(label: str, value: Any, op: str, target: float, unit: str) -> dict[str, Any]:
    if value is None:
        return {"target": label, "value": None, "goal": f"{op} {target:g} {unit}".strip(), "met": None}
    met = value <= target if op == "<=" else value >= target
    if op == "<=":
        miss = None if met else f"{value / target:.1f}x the target"
    else:
        miss = None if met else f"{(target - value) / target:.0%} short" if target else None
    return {
        "target": label,
        "value": value,
        "unit": unit,
        "goal": f"{op} {target:g} {unit}".strip(),
        "met": met,
        "miss": miss,
    }


def render(results: dict[str, Any]) -> str:
    lines: list[str] = []
    m = results["machine"]
    lines.append(
        f"pybrain benchmark, {results['started_at']} ({results['mode']} run, {results['duration_s']:.0f} s)"
    )
    lines.append(
        f"machine: {m['cores']} cores ({m['cpu']}), {m['memory_gb']} GB RAM; PostgreSQL {m['postgresql']} "
        f"(embedded), pgvector {m['pgvector']}, pg_trgm {m['pg_trgm']}; "
        f"shared_buffers {m['server_settings']['shared_buffers']}, "
        f"work_mem {m['server_settings']['work_mem']}"
    )
    lines.append(f"pybrain: {m.get('pybrain_commit')}; load average at start {results.get('loadavg_start')}")
    lines.append("")

    syn = results.get("synthetic", {})
    if syn:
        sizes = sorted(syn, key=int)
        lines.append(
            "Synthetic workspaces: generated engineering memories, embedded with pybrain's `hash` embedder"
        )
        lines.append(
            "(feature hashing, 384 dims: fast, not semantic, hard for HNSW; MiniLM vectors further down)."
        )
        header = f"{'':44}" + "".join(f"{_size(s) + ' p50':>10}{'p95':>9}" for s in sizes)
        lines.append(header)

        def row(label: str, path: tuple, digits: int = 2) -> None:
            cells = ""
            for s in sizes:
                d = _get(syn[s], path) or {}
                cells += f"{_fmt(d.get('p50'), digits):>10}{_fmt(d.get('p95'), digits):>9}"
            lines.append(f"{label:44}{cells}")

        lines.append("in the database, as a client role (brain.create_role; under row-level security) (ms)")
        row("  remember (60% new, 40% near-duplicates)", ("remember",))
        for label, path in SEARCH_ROWS:
            row(label, path)
        row("  recall", ("recall",))
        row("  boot_session, synthetic mix (task embedding)", ("boot", "with_task_embedding"))
        row("  search, hybrid, as the superuser (no RLS)", ("search_superuser", "hybrid"))
        row("  boot_session, synthetic mix (no task)", ("boot", "without_task"))
        row(f"  boot_session, {PINNED} facts pinned (task embedding)", ("boot", "with_pinned"))
        row("  injection recorded (10 items)", ("boot", "injection_record"), 3)
        row("  injected memory used (recall)", ("boot", "injection_use"), 3)
        lines.append("the raw PostgreSQL floor, same tables and indexes (ms)")
        row("  raw HNSW top-10", ("raw_floor", "hnsw_top10"))
        row("  raw full-text top-10 (the same words)", ("raw_floor", "fts_top10"))
        row("  raw HNSW, search's depth (candidates)", ("raw_floor", "hnsw_top_candidates"))
        row("  raw full-text, search's depth", ("raw_floor", "fts_top_candidates"))
        row("  least hybrid: both legs at depth, fused", ("raw_floor", "least_hybrid"))
        row("  raw HNSW top-10, 1% tag filter", ("raw_floor", "filtered_hnsw_top10"))
        row("  raw exact top-10, 1% tag filter", ("raw_floor", "filtered_exact_top10"))
        row("  raw INSERT (memory row and vector)", ("raw_floor", "insert"))
        row("  raw write (nearest neighbour, then INSERT)", ("raw_floor", "write"))
        lines.append(f"pybrain p50 / raw p50 (* over {FLOOR_RATIO:g}x)")
        for key in next((syn[s].get("floor_ratios") or {} for s in sizes if syn[s].get("floor_ratios")), {}):
            cells = ""
            for s in sizes:
                ratio = _get(syn[s], ("floor_ratios", key, "ratio"))
                mark = " *" if ratio is not None and ratio > FLOOR_RATIO else ""
                cells += f"{_fmt(ratio) + mark:>10}{'':9}"
            lines.append(f"  {key:42}" + cells)
        lines.append("not targets: the least statement doing search's candidate work")
        context = next((syn[s]["floor_context"] for s in sizes if syn[s].get("floor_context")), {})
        for key in context:
            cells = "".join(f"{_fmt(_get(syn[s], ('floor_context', key))):>10}{'':9}" for s in sizes)
            lines.append(f"  {key:42}" + cells)
        lines.append(f"p95 / p50 (* over {TAIL_RATIO:g}x)")
        for label, path in TAIL_ROWS:
            cells = ""
            for s in sizes:
                d = _get(syn[s], path) or {}
                ratio = round(d["p95"] / d["p50"], 2) if d.get("p50") and d.get("p95") else None
                mark = " *" if ratio is not None and ratio > TAIL_RATIO else ""
                cells += f"{_fmt(ratio) + mark:>10}{'':9}"
            lines.append(f"{label:44}" + cells)
        lines.append("where a search's time goes, p50 (ms; bench/latency.py search_breakdown)")
        for label, key in (
            ("  weighing the query's words (lexical_terms)", ("lexical_terms_ms", "p50")),
            ("  vector leg alone (search, vector only)", ("vector_leg_p50_ms",)),
            ("  lexical leg alone, words weighed", ("lexical_leg_p50_ms_with_terms",)),
            ("  fusion and weighting (hybrid - the legs)", ("fusion_and_weighting_ms",)),
            ("  first search of a session (plans)", ("first_search_of_a_session_ms", "p50")),
            ("  second search of a session", ("second_search_of_a_session_ms", "p50")),
        ):
            cells = "".join(f"{_fmt(_get(syn[s], ('search_breakdown', *key))):>10}{'':9}" for s in sizes)
            lines.append(f"{label:44}" + cells)
        lines.append("end to end through pybrain.client.Brain (ms)")
        row("  remember (check, hash embed, write)", ("remember_e2e",))
        row("  search (hash embed, search)", ("search_e2e",))
        lines.append("quality")
        for label, path in QUALITY_ROWS:
            lines.append(f"{label:44}" + "".join(f"{_fmt(_get(syn[s], path), 3):>10}{'':9}" for s in sizes))
        for s in sizes:
            legs = _get(syn[s], ("search", "leg_sizes")) or {}
            lex, tri = legs.get("lexical", {}), legs.get("trigram", {})
            lines.append(
                f"rows the text legs match per query ({_size(s)}): lexical median {lex.get('median_rows')}"
                f" ({_fmt(lex.get('median_share'), 3)} of the workspace), p95 {lex.get('p95_rows')}, of which"
                f" it scores at most {lex.get('lexical_max_rows')} (median {lex.get('median_ranked')}, p95"
                f" {lex.get('p95_ranked')}); trigram median {tri.get('median_rows')},"
                f" p95 {tri.get('p95_rows')}"
                " (it runs only when the lexical leg found fewer than 5)"
            )
        for s in sizes:
            tp = syn[s].get("remember_throughput")
            if tp:
                lines.append(
                    f"remember throughput ({_size(s)}, {tp['cores']} cores): "
                    + ", ".join(
                        f"{r['clients']} clients {r['writes_per_s']}/s (x{r['speedup']})"
                        for r in tp["runs"].values()
                    )
                    + f"; at {tp['cores']} clients x{tp['speedup_at_cores']}"
                    + f" (target x{tp['target_speedup_at_cores']})"
                )
        lines.append(
            "remember outcomes: "
            + "; ".join(f"{_size(s)} {_get(syn[s], ('remember', 'outcomes'))}" for s in sizes)
        )
        lines.append(
            "bench loader (remember without embedding, then COPY + HNSW build): "
            + "; ".join(
                f"{_size(s)} {syn[s]['load']['remember_rows_per_s']} rows/s, "
                f"HNSW build {syn[s]['load']['hnsw_build_seconds']} s"
                for s in sizes
            )
        )
        lines.append("")

    mini = results.get("synthetic_minilm", {})
    for size, ws in sorted(mini.items(), key=lambda x: int(x[0])):
        lines.append(
            f"The {_size(size)} workspace again, embedded with all-MiniLM-L6-v2 (`local` embedder): read side"
        )
        for label, path in SEARCH_ROWS:
            d = _get(ws, path) or {}
            lines.append(f"{label:44}{_fmt(d.get('p50')):>10}{_fmt(d.get('p95')):>9}  ms (p50, p95)")
        for label, path in QUALITY_ROWS:
            lines.append(f"{label:44}{_fmt(_get(ws, path), 3):>10}")
        sweep = _get(ws, ("vector_recall", "ef_search_sweep")) or {}
        if sweep:
            lines.append(
                "  hnsw_ef_search sweep (recall@10, vector-only p50 ms): "
                + "; ".join(
                    f"{ef}: {_fmt(d['mean_recall_at_10'], 3)}, {_fmt(d['search_p50_ms'])}"
                    for ef, d in sweep.items()
                )
            )
        lines.append("")

    lines += docingest_lines(results.get("docingest"))

    ing = results.get("ingest")
    if ing:
        lines.append("Bulk ingest: brain.observe_batch, observed rows with precomputed hash embeddings")
        for key, label in (
            ("cold_first_batch", "fresh database, first batch (no planner statistics yet)"),
            ("batch_1000", "batches of 1000"),
            ("batch_500", "batches of 500"),
            ("batch_50", "batches of 50 (below index_defer_rows: indexed at once)"),
            ("batch_1000_two_connections", "batches of 1000, two connections, two projects"),
            ("new_workspace_first_batch", "new workspace in an analyzed database, first batch"),
        ):
            if key in ing:
                d = ing[key]
                lines.append(
                    f"  {label:58} {d['rows_per_s']:>6} rows/s  ({d['rows']:,} rows, "
                    f"per-batch min {d.get('min_batch_rows_per_s', '-')}, "
                    f"max {d.get('max_batch_rows_per_s', '-')})"
                )
                if "index" in d:
                    ix = d["index"]
                    lines.append(
                        f"  {'  then brain.index_vectors (' + '/'.join(ix['actions']) + ')':58} "
                        f"{ix['seconds']:>6} s       ({ix['indexed']:,} indexed, {ix['folded']} folded;"
                        f" {ix['rows_per_s_with_index']} rows/s with the calls)"
                    )
        for key, label in (
            ("search_while_waiting", "hybrid search while the 10k vectors wait"),
            ("search_after_index", "hybrid search once they are indexed"),
        ):
            if key in ing:
                d = ing[key]
                lines.append(
                    f"  {label:58} p50 {_fmt(d['p50'])} ms, p95 {_fmt(d['p95'])} ms"
                    f" ({d['waiting_vectors']:,} vectors waiting)"
                )
        lines.append("")

    lme = results.get("longmemeval")
    if lme:
        lines.append(
            f"LongMemEval-S retrieval, {lme['questions']} questions, {lme['embedder']}, {lme['granularity']}"
        )
        lines.append(
            f"  {lme['turns']:,} turns, {lme['chunks']:,} chunks; "
            f"ingest {lme['ingest']['rows_per_s']} rows/s; "
            f"embedding: {lme['embedding']}"
        )
        metrics = lme["metrics"]
        cols = ("session_any@5", "session_any@10", "session_all@10", "turn@10")
        lines.append(f"  {'question type':28}{'n':>4}  {'mode':8}" + "".join(f"{c:>16}" for c in cols))
        for group, d in metrics.items():
            for i, mode in enumerate(("vector", "lexical", "hybrid")):
                name = group if i == 0 else ""
                n = str(d["questions"]) if i == 0 else ""
                lines.append(
                    f"  {name:28}{n:>4}  {mode:8}" + "".join(f"{_fmt(d[mode][c], 3):>16}" for c in cols)
                )
        lines.extend(_before_after_lines(metrics))
        vr = lme.get("vector_recall_minilm")
        if vr:
            lines.append(
                f"  vector recall@10 with MiniLM vectors ({vr['rows']:,} chunks in one workspace, "
                f"{vr['queries']} question vectors): {vr['mean_recall_at_10']}"
            )
        lines.append(
            "  search latency in the database (ms): "
            + ", ".join(
                f"{mode} p50 {_fmt(s['p50'])} p95 {_fmt(s['p95'])}" for mode, s in lme["search_ms"].items()
            )
        )
        if lme.get("search_ms_first"):
            lines.append(
                "  the first search of each mode in a question's new workspace (plans the statement): "
                + ", ".join(
                    f"{mode} p50 {_fmt(s['p50'])} p95 {_fmt(s['p95'])}"
                    for mode, s in lme["search_ms_first"].items()
                )
            )
        lines.extend(_clock_shift_lines(lme.get("clock_shift")))
        lines.append("")
        lines.extend(_question_set_lines(results.get("longmemeval_sets")))

    exact = results.get("exact_tokens")
    if exact:
        lines.append(
            f"Exact tokens (issue 31): {exact['tokens']} generated tokens of {exact['shapes']} shapes"
            f" hidden in bodies beside near misses;"
            f" the token's memory first with relevance >= {exact['floor']}"
        )
        for name in ("hash", "local"):
            d = exact.get(name)
            if d:
                lines.append(
                    f"  {d['embedder']:24} default path {d['hybrid']['found']}/{exact['tokens']}"
                    f" ({d['hybrid']['share']:.1%}),"
                    f" by words alone {d['lexical']['found']}/{exact['tokens']},"
                    f" by the relevance maps alone (exact_token_relevance 0) {d['maps_alone']['found']}"
                    + (f"; missed e.g. {d['hybrid']['missed']}" if d["hybrid"]["missed"] else "")
                )
        lines.append("")
    docs = results.get("offtopic_docs")
    if docs:
        lines.append(
            f"Off-topic queries over the project's documentation ({docs['documents']} files,"
            f" {docs['memories']:,} memories, MiniLM), default path: {docs['empty']} of {docs['queries']}"
            f" return nothing (of those whose subject no memory names, {docs['never_stored_empty']}"
            f" of {docs['never_stored']}); best relevance at min_relevance 0 at most"
            f" {max(docs['best_relevance'] or [0])};"
            f" on-topic questions answered {docs['answered']}/{docs['on_topic']}"
        )
        lines.append("")
    off = _get(results, ("longmemeval", "offtopic"))
    if off:
        stores = _get(results, ("longmemeval", "data")) or "dev60"
        lines.append(
            f"Off-topic queries over the LongMemEval {stores} stores, default path: {off['empty']} of"
            f" {off['queries']} return nothing (of those whose subject no memory names,"
            f" {off['never_stored_empty']} of {off['never_stored']})"
        )
        lines.append("")

    tools = results.get("mcp_tools")
    if tools:
        lines.append("MCP tools/list, schemas as compact JSON at 4 characters a token")
        for name, d in tools["profiles"].items():
            default = " (default)" if name == tools["default"] else ""
            lines.append(f"  {name + default:16} {d['tools']:>3} tools, {d['schema_tokens']:>5} tokens")
        lines.append("")

    hooks = results.get("hooks")
    if hooks:
        lines.append(
            f"Hooks: `brain hook EVENT`, one process a call ({hooks['rounds']} rounds of {hooks['runs']}; "
            f"medians of the rounds' p50 / p95; {hooks['memories']} memories; load {hooks['loadavg_start']})"
        )
        for mode, label in (
            ("own_process", "own process (BRAIN_HOOK_SERVER=off)"),
            ("warm_process", "warm process"),
        ):
            figures = ", ".join(
                f"{event} {r['p50_ms']:.0f} / {r['p95_ms']:.0f} ms" for event, r in hooks[mode].items()
            )
            lines.append(f"  {label}: {figures}")
        tool = hooks.get("mcp_tool_call")
        if tool:
            lines.append(
                f"  an mcp_tool handler instead (tools/call {tool['tool']} on a running brain mcp): "
                f"{tool['p50_ms']:.0f} / {tool['p95_ms']:.0f} ms"
            )
        hung = hooks["hung_database"]
        for mode in ("own_process", "warm_process"):
            figures = ", ".join(f"{event} {ms:.0f} ms" for event, ms in hung[mode].items())
            lines.append(f"  hung database, slowest of 3, {mode.replace('_', ' ')}: {figures}")
        end = hooks.get("session_end")
        if end:
            lines.append(
                f"  session-end, {end['turns']:,}-turn transcript ({end['transcript_bytes'] / 1e6:.1f} MB), "
                f"the plugin's command: median {end['median_s']:.2f} s of {end['runs_s']}; turns stored by "
                f"the hook {end['stored_by_the_hook']}, the rest in the background within "
                f"{end['stored_in_the_background_within_s']} s"
            )
        lines.append("")
    lines += harnesses_lines(results.get("harnesses"))
    if results.get("transactions"):
        t = results["transactions"]
        lines += [
            "",
            "## Transactions a call (bench/transactions.py)",
            "",
            f"Through the Python client, the median of {t['runs']} runs: "
            + ", ".join(f"{k} {v:g}" for k, v in t["transactions"].items())
            + ".",
        ]
    if results.get("continuity"):
        from bench import continuity

        lines.extend(continuity.render(results["continuity"])[1:])
        lines.append("")
    cli = results.get("cli")
    if cli:
        lines.append(f"CLI: {cli['command']} (median of {cli['runs']} runs, wall time)")
        lines.append(
            f"  no warm embedding server (BRAIN_EMBED_SERVER=off): {cli['no_warm_server']['median_s']} s"
        )
        lines.append(
            "  first call, starts the warm server:                 "
            f"{cli['first_call_starting_the_server_s']} s"
        )
        lines.append(
            f"  with the warm server running:                       {cli['warm_server']['median_s']} s"
        )
        lines.append("  parts: " + ", ".join(f"{k} {v}" for k, v in cli["parts"].items()))
        lines.append("")

    emb = results.get("embedders")
    if emb:
        lines.append(f"Local embedder runtimes (fresh processes, median of {emb['rounds']})")
        for name, d in emb["paths"].items():
            lines.append(
                f"  {name:12} cold {d['cold_s']:.3f} s (import {d['import_s']:.3f} s), query p50 "
                f"{d['query_p50_ms']:.2f} ms, batch of 32 {d['batch32_texts_per_s']:.0f} texts/s, "
                f"{d['rss_after_first_vector_mb']:.0f} MB after the first vector"
            )
        if "min_cosine_onnxruntime_vs_torch" in emb:
            lines.append(
                f"  min cosine over {emb['texts_compared']} texts: {emb['min_cosine_onnxruntime_vs_torch']}; "
                + ", ".join(f"{k} {v}" for k, v in emb["ratios"].items())
            )
        lines.append("")

    from bench import regress

    lines += regress.lines(results.get("regressions"))
    lines.append("Targets")
    for t in results.get("targets", []):
        status = "n/a" if t["met"] is None else "met" if t["met"] else f"MISSED ({t['miss']})"
        lines.append(f"  {t['target']:62} {_fmt(t['value'])} {t.get('unit', '')}  goal {t['goal']}: {status}")
    return "\n".join(lines)


def _before_after_lines(metrics: dict[str, Any]) -> list[str]:
    """The same figures from main before issue 15 (bench/baselines/longmemeval.json), same questions."""
    from bench.longmemeval import BASELINE

    if not BASELINE.exists() or "overall" not in metrics:
        return []
    baseline = json.loads(BASELINE.read_text())
    before = baseline["metrics"].get(str(metrics["overall"]["questions"]))
    if not before:
        return [
            f"  (no figures from before for {metrics['overall']['questions']} questions in {BASELINE.name})"
        ]
    cols = ("turn@5", "turn@10", "session_all@10")
    lines = [
        f"  before ({baseline['commit']}: {baseline['ranking']}) -> after, same questions",
        f"  {'question type':28}{'n':>4}  {'mode':8}" + "".join(f"{c:>22}" for c in cols),
    ]
    for group, d in metrics.items():
        for i, mode in enumerate(("vector", "lexical", "hybrid")):
            was = before.get(group, {}).get(mode)
            if not was:
                continue
            name = group if i == 0 else ""
            n = str(d["questions"]) if i == 0 else ""
            cells = "".join(f"{_fmt(was.get(c), 3) + ' -> ' + _fmt(d[mode].get(c), 3):>22}" for c in cols)
            lines.append(f"  {name:28}{n:>4}  {mode:8}{cells}")
    return lines


def _question_set_lines(sets: dict[str, Any] | None) -> list[str]:
    """turn@1 / @5 / @10 of search's ranking (hybrid) by question type, each question set side by
    side: dev60 is what figures are chosen on, train150 what a fit is made on."""
    if not sets:
        return []
    names = list(sets)
    head = f"  {'question type':28}" + "".join(f"{name + ' (n) turn@1/@5/@10':>34}" for name in names)
    lines = ["LongMemEval hybrid turn@1 / @5 / @10 by type, the question sets side by side", head]
    types = list(dict.fromkeys(t for d in sets.values() for t in d["metrics"]))
    types = [t for t in types if t != "overall"] + ["overall"]
    for t in types:
        cells = []
        for name in names:
            d = sets[name]["metrics"].get(t)
            if d is None:
                cells.append(f"{'-':>34}")
                continue
            h = d["hybrid"]
            figures = " / ".join(_fmt(h.get(k), 3) for k in ("turn@1", "turn@5", "turn@10"))
            cells.append(f"{'(' + str(d['questions']) + ') ' + figures:>34}")
        lines.append(f"  {t:28}" + "".join(cells))
    lines.append("")
    return lines


def _clock_shift_lines(clock: dict[str, Any] | None) -> list[str]:
    """The LongMemEval store searched again with the clock moved on: recall@10 per leg and mode."""
    if not clock:
        return []
    modes = clock["check"]["modes"]
    metrics = clock["check"]["metrics"]
    short = {"session_any@10": "any@10", "turn@10": "turn@10"}
    lines = [
        f"  The same stores with the clock moved on (brain.maintain, then brain.search at that time), "
        f"{clock['questions']} questions, overall:"
    ]
    lines.append(
        f"  {'clock':34}{'dormant':>8}{'same top 10':>12}"
        + "".join(f"{mode + ' ' + short.get(m, m):>16}" for mode in modes for m in metrics)
        + f"{'change':>8}"
    )
    for leg in clock["legs"].values():
        label = f"+{leg['days']} days" + (", episodic_decay on" if leg["episodic_decay"] else "")
        if leg["days"] == 0:
            label += " (fresh store)"
        lines.append(
            f"  {label:34}{_fmt(leg['dormant_share'], 3):>8}{_fmt(leg.get('same_top10'), 3):>12}"
            + "".join(f"{_fmt(leg[mode][m], 3):>16}" for mode in modes for m in metrics)
            + f"{_fmt(leg['max_change_points'], 1):>8}"
        )
    check = clock["check"]
    lines.append(
        f"  recall@10 ({', '.join(metrics)}; {', '.join(modes)}) at {', '.join(check['legs'])} days within "
        f"{_fmt(check['tolerance_points'], 0)} point of the fresh store: "
        f"{'pass' if check['passed'] else 'FAIL'} "
        f"(largest change {_fmt(check['max_change_points'], 1)} points)"
    )
    return lines


def _size(s: str) -> str:
    n = int(s)
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def docingest_lines(doc: dict[str, Any] | None) -> list[str]:
    """The document ingest table (bench/docingest.py): medians of the runs."""
    if not doc:
        return []
    lines = ["Document ingest: brain ingest end to end (walk, read, chunk, embed, write; median of runs)"]
    for key, label in (
        ("project_docs_hash", "project docs (README, docs/), hash embedder"),
        ("project_docs_minilm", "project docs (README, docs/), MiniLM"),
        ("generated_hash", "generated markdown corpus, hash embedder"),
    ):
        d = doc.get(key)
        if not d:
            continue
        lines.append(
            f"  {label:48} {d['documents']:>5} docs {d['chunks']:>6} chunks {d['bytes'] / 1e6:5.1f} MB"
            f"  {d['seconds']:7.2f} s  {d['documents_per_s']:7.2f} docs/s {d['chunks_per_s']:7.1f} chunks/s"
            f"  embedding {d['embed_share']:.0%}  (runs {d['runs']}: {d['seconds_each']})"
        )
        lines.append(
            f"  {'  unchanged re-run':48} {d['rerun_seconds']:7.2f} s,"
            f" {d['rerun_documents_per_s']:.0f} docs/s, {d['rerun_embedded']} embedded"
        )
    lines.append("")
    return lines


def harnesses_lines(run: dict[str, Any] | None) -> list[str]:
    """Each harness installed as the README says (bench/harnesses.py): the install, the first
    session's boot, each wired event warm, and the target's verdict."""
    if not run:
        return []
    lines = [
        f"Harnesses installed as README.md says: a fresh HOME, a new git folder, {run['memories']} memories;"
        f" warm: medians of {run['rounds']} rounds of {run['runs']}, p50 / p95 ms"
        f" (load {run['loadavg_start']} -> {run['loadavg_end']})"
    ]
    for name, h in run["harnesses"].items():
        steps = "; ".join(f"{step['command']}: {step['ms']:.0f} ms" for step in h["install"])
        firsts = ", ".join(f"{event} {ms:.0f}" for event, ms in h["first_call_ms"].items())
        warm = ", ".join(f"{event} {r['p50_ms']:.0f} / {r['p95_ms']:.0f}" for event, r in h["warm"].items())
        goal = ", ".join(h["target"]["events"])
        verdict = "PASS" if h["target"]["passed"] else "FAIL"
        lines += [
            f"  {name}: install {h['install_ms']:.0f} ms ({steps})",
            f"    first session's boot {h['first_boot_ms']:.0f} ms (the warm process up"
            f" {h['warm_process_ready_after_s']} s later); each event's first call then: {firsts} ms",
            f"    warm: {warm}",
            f"    {goal} p50 <= {run['target_ms']} ms warm: {verdict}",
        ]
    lines.append("")
    return lines
