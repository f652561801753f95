"""What the write gate costs per write, before and after a change of its SQL.

Two databases on one throwaway embedded server: `after`, migrated by this tree, and
`before`, the same with the function files of a git revision (default: main) applied
over it. As the client role (brain.create_role, row-level security), on ordinary texts
a write carries (tests' corpora of ordinary engineering text, cut at 600 characters):

- gate: brain._refuse_secrets over a headline and a body plus brain.injection_signals
  of the body, every text in one statement, the time divided by the texts;
- remember: one brain.remember per text (queued for embedding), the median call.

Each figure is the median of 3 passes; passes alternate between the two databases.
Run: python -m bench.gate_cost [--before main] [--passes 3]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from bench.server import BenchServer
from bench.util import log

ROOT = Path(__file__).resolve().parent.parent


def _texts() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    import gate_corpus
    import injection_classes
    import secret_corpus

    texts = gate_corpus.ordinary() + injection_classes.ordinary() + secret_corpus.BENIGN
    return [t[:600] for t in texts]


def _apply_functions(url: str, revision: str) -> None:
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{revision}:sql/functions"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    with psycopg.connect(url, autocommit=True) as conn:
        for name in sorted(n for n in names if n.endswith(".sql")):
            text = subprocess.run(
                ["git", "show", f"{revision}:sql/functions/{name}"],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            conn.execute(text)


def _gate_ms(conn: psycopg.Connection, texts: list[str]) -> float:
    t0 = time.perf_counter()
    conn.execute(
        "SELECT count(*) FROM unnest(%s::text[]) AS u(t)"
        " WHERE brain._refuse_secrets(jsonb_build_object('headline', 'Ops note', 'body', u.t)) IS NULL"
        " AND brain.injection_signals(u.t) IS NOT NULL",
        (texts,),
    ).fetchone()
    return (time.perf_counter() - t0) * 1000 / len(texts)


def _remember_ms(conn: psycopg.Connection, texts: list[str], tag: str) -> float:
    times = []
    for i, t in enumerate(texts):
        t0 = time.perf_counter()
        with contextlib.suppress(psycopg.Error):
            conn.execute(
                "SELECT brain.remember(kind => 'fact', headline => %s, body => %s)",
                (f"Ops note {tag} {i}", t),
                prepare=True,
            )
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _caught(conn: psycopg.Connection) -> dict[str, str]:
    """How much of each generated corpus the gate catches (tests/gate_corpus.py and friends)."""
    import gate_corpus
    import gitleaks_samples
    import injection_classes

    def secrets(texts: list[str]) -> int:
        return conn.execute(
            "SELECT count(*) FROM unnest(%s::text[]) AS u(t) WHERE brain.find_secrets(u.t) <> '{}'", (texts,)
        ).fetchone()[0]

    def flagged(texts: list[str]) -> int:
        return conn.execute(
            "SELECT count(*) FROM unnest(%s::text[]) AS u(t) WHERE brain.injection_signals(u.t) <> '{}'",
            (texts,),
        ).fetchone()[0]

    out = {}
    gl = list(gitleaks_samples.samples().values())
    out["gitleaks samples found"] = f"{secrets(gl)} / {len(gl)}"
    for name, corpus in (
        ("passwords in commands and prose", gate_corpus.command_secrets()),
        ("encodings", gate_corpus.encoded_secrets()),
    ):
        dev, held = gate_corpus.split(corpus, key=lambda s: s[1])
        out[name] = (
            f"dev {secrets([t for _, t, _ in dev])} / {len(dev)},"
            f" held-out {secrets([t for _, t, _ in held])} / {len(held)}"
        )
    dev, held = gate_corpus.split(injection_classes.payloads(), key=lambda p: p[1])
    out["injection payloads flagged"] = (
        f"dev {flagged([t for _, t in dev])} / {len(dev)},"
        f" held-out {flagged([t for _, t in held])} / {len(held)}"
    )
    ordinary = gate_corpus.ordinary()
    out["ordinary text refused"] = f"{secrets(ordinary)} / {len(ordinary)}"
    ordinary = injection_classes.ordinary()
    out["ordinary text flagged"] = f"{flagged(ordinary)} / {len(ordinary)}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the git revision whose function files are `before`")
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    texts = _texts()
    with BenchServer() as server:
        server.create_database("gate_after")
        server.create_database("gate_before")
        _apply_functions(server.url("gate_before"), args.before)
        log(f"{len(texts)} ordinary texts; before = {args.before}'s functions, after = this tree's")
        figures: dict[str, dict[str, list[float]]] = {
            "before": {"gate": [], "remember": []},
            "after": {"gate": [], "remember": []},
        }
        conns = {name: server.connect_client(f"gate_{name}") for name in ("before", "after")}
        for conn in conns.values():  # warm each backend's caches
            _gate_ms(conn, texts[:50])
        for p in range(args.passes):
            for name, conn in conns.items():
                figures[name]["gate"].append(_gate_ms(conn, texts))
                figures[name]["remember"].append(_remember_ms(conn, texts, f"{p}"))
        for name, conn in conns.items():
            for what, figure in _caught(conn).items():
                print(f"{name:6}: {what}: {figure}")
        for conn in conns.values():
            conn.close()
        for name in ("before", "after"):
            g, r = figures[name]["gate"], figures[name]["remember"]
            print(
                f"{name:6}: gate {statistics.median(g):.3f} ms a write"
                f" (passes {', '.join(f'{x:.3f}' for x in g)});"
                f" remember {statistics.median(r):.3f} ms (passes {', '.join(f'{x:.3f}' for x in r)})"
            )
        print(f"machine: {server.machine_info()}")


if __name__ == "__main__":
    main()
