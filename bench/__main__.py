"""python -m bench: run the benchmark (see docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument(
        "--quick", action="store_true", help="10k workspace only, fewer queries, LongMemEval on 10 questions"
    )
    p.add_argument("--skip-longmemeval", action="store_true", help="leave out the LongMemEval retrieval run")
    p.add_argument(
        "--only-longmemeval",
        action="store_true",
        help="the LongMemEval retrieval run alone (no synthetic workspaces, boot or CLI figures)",
    )
    p.add_argument("--million", action="store_true", help="also a 1M-memory workspace (slow: ~1 h)")
    p.add_argument("--skip-cli", action="store_true", help="leave out the CLI cold-start measurement")
    p.add_argument("--skip-hooks", action="store_true", help="leave out the `brain hook` latency")
    p.add_argument(
        "--only-hooks", action="store_true", help="the `brain hook` latency alone (bench/hooks.py)"
    )
    p.add_argument(
        "--skip-harnesses",
        action="store_true",
        help="leave out each harness installed as the README says and its hooks timed (bench/harnesses.py)",
    )
    p.add_argument(
        "--only-harnesses",
        action="store_true",
        help="each harness installed as the README says and its hooks timed, alone (bench/harnesses.py)",
    )
    p.add_argument(
        "--skip-continuity",
        action="store_true",
        help="leave out the LongMemEval questions replayed through the hooks (bench/continuity.py)",
    )
    p.add_argument(
        "--only-continuity",
        action="store_true",
        help="the LongMemEval questions replayed through the hooks alone (bench/continuity.py)",
    )
    p.add_argument(
        "--continuity-questions",
        type=int,
        default=None,
        help="questions of the continuity replay (default: all; quick 6, one per type)",
    )
    p.add_argument(
        "--continuity-setting",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a workspace setting for each replayed question's workspace (repeatable), e.g. "
        "prompt_context_max=5",
    )
    p.add_argument(
        "--continuity-variant",
        action="append",
        default=[],
        metavar="LABEL:NAME=JSON[,NAME=JSON]",
        help="prompt hook settings the continuity questions are asked with again on the same stores "
        "(repeatable), e.g. small:prompt_context_max=3,prompt_context_tokens=300",
    )
    p.add_argument(
        "--continuity-replay-prompts",
        action="store_true",
        help="the haystack's own prompts go through the prompt hook too (measures nothing more; slower)",
    )
    p.add_argument(
        "--skip-embedders",
        action="store_true",
        help="leave out the local embedder's runtimes side by side (onnxruntime, and torch where installed)",
    )
    p.add_argument(
        "--skip-minilm-synthetic",
        action="store_true",
        help="leave out the synthetic workspace embedded with MiniLM (search and recall on real vectors)",
    )
    p.add_argument("--skip-docingest", action="store_true", help="leave out the document ingest throughput")
    p.add_argument(
        "--skip-exact-tokens",
        action="store_true",
        help="leave out the exact-token set (520 generated tokens, hash and MiniLM; about a minute)",
    )
    p.add_argument(
        "--skip-offtopic-docs",
        action="store_true",
        help="leave out the off-topic queries over the project's documentation (MiniLM; about two minutes)",
    )
    p.add_argument(
        "--docingest-mb",
        type=int,
        default=None,
        help="size of the generated markdown corpus (default 10, quick 2)",
    )
    p.add_argument(
        "--docingest-runs", type=int, default=None, help="runs of each ingest (default 3, quick 1)"
    )
    p.add_argument("--lme-questions", type=int, default=None, help="LongMemEval questions (default: all)")
    p.add_argument(
        "--questions-from",
        type=_question_sets,
        default=None,
        help="the LongMemEval question sets of the retrieval run, comma-separated (default dev60,train150;"
        " dev60 with --quick): each is run and their turn@1/@5/@10 by type printed side by side; the"
        " continuity replay takes the first (dev60 is the set figures are chosen on, train150 the one"
        " a fit is made on)",
    )
    p.add_argument(
        "--lme-setting",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a workspace setting for each LongMemEval question's workspace (repeatable), e.g. "
        "search_max_per_thread=2",
    )
    p.add_argument("--no-profile", action="store_true", help="skip the per-function profiles")
    p.add_argument(
        "--sizes",
        type=lambda v: [int(x) for x in v.split(",")],
        default=None,
        help="synthetic workspace sizes, comma-separated (default 10000,100000, plus 1000000 with --million)",
    )
    p.add_argument(
        "--only-synthetic",
        action="store_true",
        help="only the synthetic workspaces (no ingest, MiniLM, shaped boot, LongMemEval or CLI parts)",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep the server's data directory there and reuse the loaded workspaces in later runs",
    )
    p.add_argument(
        "--accept",
        action="store_true",
        help="this run's figures become the baseline later runs compare with (bench/baselines/figures.json)",
    )
    p.add_argument(
        "--compare",
        metavar="REV",
        default=None,
        help="run git revision REV (exported to a temporary directory, its own database) and this tree"
        " interleaved, --runs times each, with the other flags given; both columns, their spreads and"
        " the changes beyond them go to docs/benchmarks.md (bench/compare.py)",
    )
    p.add_argument("--runs", type=int, default=3, help="runs of each side with --compare (default 3)")
    p.add_argument("--seed", type=int, default=20261122)
    p.add_argument("--output", type=Path, default=RESULTS / "latest.json")
    return p.parse_args(argv)


def _question_sets(value: str) -> list[str]:
    from bench.longmemeval import DATA_SETS

    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names or any(n not in DATA_SETS for n in names) or len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(
            f"question sets are {', '.join(DATA_SETS)}, each once, comma-separated (got {value!r})"
        )
    return names


def _longmemeval(
    results: dict[str, Any],
    phase: Any,
    server: Any,
    cache: Any,
    n_questions: int | None,
    settings: dict[str, Any],
    sets: list[str],
) -> None:
    """The LongMemEval run on each question set: the first's is results["longmemeval"] (the
    figures the targets and the baseline read), every set's turn@k by type in
    results["longmemeval_sets"], which the report prints side by side."""
    from bench import longmemeval

    results["longmemeval_sets"] = {}
    for n, name in enumerate(sets):
        run = phase(
            "longmemeval" if n == 0 else f"longmemeval_{name}",
            lambda name=name: longmemeval.run(server, cache, n_questions, settings, name),
        )
        if n == 0:
            results["longmemeval"] = run
        results["longmemeval_sets"][name] = {"questions": run["questions"], "metrics": run["metrics"]}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.compare:
        from bench import compare

        compare.run(args.compare, _without_compare(sys.argv[1:] if argv is None else argv), args.runs)
        return 0
    # Never the user's BRAIN_HOME: everything the run touches lives in a temporary directory.
    home = Path(tempfile.mkdtemp(prefix="pybrain-bench-home-"))
    os.environ["BRAIN_HOME"] = str(home)
    os.environ.pop("BRAIN_DATABASE_URL", None)
    os.environ["BRAIN_EMBED_SERVER"] = "off"  # this process embeds by itself; the CLI part turns it on
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

    from bench import (
        boot,
        cli_start,
        continuity,
        docingest,
        embedders,
        harnesses,
        hooks,
        ingest,
        mcp_tools,
        report,
        synthetic,
        transactions,
    )
    from bench.embcache import EmbeddingCache
    from bench.server import BenchServer
    from bench.util import elapsed_total, log

    quick = args.quick
    sizes = [10_000] if quick else [10_000, 100_000]
    if args.million:
        sizes.append(1_000_000)
    if args.sizes:
        sizes = args.sizes
    full_counts = {
        "n_queries": 200,
        "n_filtered": 100,
        "n_recall_vectors": 100,
        "n_remember": 300,
        "n_remember_e2e": 100,
        "n_recall": 200,
    }
    quick_counts = {
        "n_queries": 60,
        "n_filtered": 30,
        "n_recall_vectors": 30,
        "n_remember": 100,
        "n_remember_e2e": 50,
        "n_recall": 100,
    }
    # A hybrid search over 1M memories takes seconds (the lexical legs): fewer queries there.
    million_counts = {
        "n_queries": 50,
        "n_filtered": 30,
        "n_recall_vectors": 30,
        "n_remember": 100,
        "n_remember_e2e": 30,
        "n_recall": 100,
    }
    lme_settings = {}
    for item in args.lme_setting:
        name, _, value = item.partition("=")
        lme_settings[name] = json.loads(value)
    continuity_settings = {}
    for item in args.continuity_setting:
        name, _, value = item.partition("=")
        continuity_settings[name] = json.loads(value)
    continuity_variants: dict[str, dict[str, Any]] = {}
    for item in args.continuity_variant:
        label, _, pairs = item.partition(":")
        continuity_variants[label] = {
            name: json.loads(value) for name, _, value in (pair.partition("=") for pair in pairs.split(","))
        }
    lme_questions = args.lme_questions if args.lme_questions is not None else (10 if quick else None)
    question_sets = args.questions_from or (["dev60"] if quick else ["dev60", "train150"])

    started = dt.datetime.now(dt.UTC)
    results: dict[str, Any] = {
        "started_at": started.strftime("%Y-%m-%d %H:%M UTC"),
        "mode": "quick" if quick else "full",
        "argv": sys.argv[1:] if argv is None else argv,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "synthetic_embedder": "hash:feature-hash-v1 (384 dims, feature hashing: not semantic)",
    }
    server = BenchServer(args.data_dir)
    phases: dict[str, float] = {}
    results["phase_seconds"] = phases

    def phase(name: str, fn: Any) -> Any:
        before = elapsed_total()
        try:
            return fn()
        finally:
            phases[name] = round(elapsed_total() - before, 1)

    try:
        results["machine"] = server.machine_info()
        results["mcp_tools"] = phase("mcp_tools", mcp_tools.run)
        profile = not args.no_profile
        if args.only_hooks:
            results["hooks"] = phase("hooks", lambda: hooks.run(server, home))
            return _finish(args, results, report, log, elapsed_total)
        if args.only_harnesses:
            results["harnesses"] = phase("harnesses", lambda: harnesses.run(server))
            return _finish(args, results, report, log, elapsed_total)
        continuity_questions = args.continuity_questions or (continuity.QUICK_QUESTIONS if quick else None)
        if args.only_continuity:
            results["continuity"] = phase(
                "continuity",
                lambda: continuity.run(
                    server,
                    EmbeddingCache(),
                    continuity_questions,
                    continuity_settings,
                    continuity_variants,
                    args.continuity_replay_prompts,
                    question_sets[0],
                ),
            )
            return _finish(args, results, report, log, elapsed_total)
        if args.only_longmemeval:
            _longmemeval(results, phase, server, EmbeddingCache(), lme_questions, lme_settings, question_sets)
            return _finish(args, results, report, log, elapsed_total)
        only = args.only_synthetic
        if not only:
            results["ingest"] = phase(
                "ingest",
                lambda: ingest.run(server, seed=args.seed, rows=10_000, quick=quick, profile=profile),
            )
        if not only and not args.skip_docingest:
            results["docingest"] = phase(
                "docingest",
                lambda: docingest.run(
                    server,
                    seed=args.seed,
                    runs=args.docingest_runs or (1 if quick else 3),
                    minilm=not quick,
                    corpus_mb=args.docingest_mb or (2 if quick else 10),
                ),
            )
        results["synthetic"] = {}
        for size in sizes:
            counts = quick_counts if quick else million_counts if size >= 1_000_000 else full_counts
            results["synthetic"][str(size)] = phase(
                f"synthetic_{size}",
                lambda size=size, counts=counts: synthetic.run(
                    server, size, seed=args.seed + size, profile=profile and size == sizes[-1], **counts
                ),
            )
        if not (only or args.skip_exact_tokens):
            from bench import exacttokens

            results["exact_tokens"] = phase("exact_tokens", lambda: exacttokens.run(server))
        if not (only or args.skip_offtopic_docs):
            from bench import offtopic

            results["offtopic_docs"] = phase("offtopic_docs", lambda: offtopic.docs_store(server))
        cache = None
        if not (args.skip_minilm_synthetic or only):
            cache = EmbeddingCache()

            def minilm(texts: list[str]) -> Any:
                cache.ensure(texts, "synthetic texts")
                return cache.get(texts)

            size = 10_000 if quick else 100_000
            counts = quick_counts if quick else full_counts
            results["synthetic_minilm"] = {
                str(size): phase(
                    f"synthetic_minilm_{size}",
                    lambda: synthetic.run(
                        server, size, seed=args.seed + size, profile=False, minilm=minilm, **counts
                    ),
                )
            }
        boot_size = 10_000 if quick else 100_000
        if not only:
            results["boot"] = phase(
                "boot",
                lambda: boot.run_shaped(server, seed=args.seed + 7, size=boot_size, n=30 if quick else 100),
            )
        if not (args.skip_longmemeval or only):
            cache = cache or EmbeddingCache()
            _longmemeval(results, phase, server, cache, lme_questions, lme_settings, question_sets)
        if not (args.skip_continuity or only):
            cache = cache or EmbeddingCache()
            results["continuity"] = phase(
                "continuity",
                lambda: continuity.run(
                    server,
                    cache,
                    continuity_questions,
                    continuity_settings,
                    continuity_variants,
                    args.continuity_replay_prompts,
                    question_sets[0],
                ),
            )
        if not (args.skip_cli or only):
            results["cli"] = phase("cli", lambda: cli_start.run(server, cache or EmbeddingCache(), home))
        if not (args.skip_embedders or only):
            results["embedders"] = phase("embedders", lambda: embedders.run(1 if quick else 3))
        if not (args.skip_hooks or only):
            results["hooks"] = phase("hooks", lambda: hooks.run(server, home))
        if not (args.skip_harnesses or only):
            results["harnesses"] = phase("harnesses", lambda: harnesses.run(server))
        if not only:
            results["transactions"] = phase("transactions", lambda: transactions.measure(server))
    finally:
        server.close()
        shutil.rmtree(home, ignore_errors=True)
    return _finish(args, results, report, log, elapsed_total)


def _without_compare(argv: list[str]) -> list[str]:
    """The flags each run of a comparison gets: all but --compare, --runs, --data-dir and --output."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--compare", "--runs", "--data-dir", "--output"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def _finish(
    args: argparse.Namespace, results: dict[str, Any], report: Any, log: Any, elapsed_total: Any
) -> int:
    results["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    results["duration_s"] = round(elapsed_total(), 1)
    results["targets"] = report.check_targets(results)
    from bench import regress

    results["regressions"] = regress.compare(results)
    if args.accept:
        regress.accept(results)
        log(f"figures accepted as the baseline: {regress.BASELINE}")

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(report.render(results))
    log(f"results written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
