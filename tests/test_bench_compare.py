"""`python -m bench --compare REV` (bench/compare.py): a figure is a change only when the two
sides' spreads do not overlap, and the comparison replaces its own section of the document.
No database needed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import compare, report
from bench.__main__ import _without_compare, parse_args


def _run(hybrid: float, remember: float) -> dict:
    return {
        "synthetic": {
            "10000": {
                "search": {"hybrid": {"p50": hybrid}},
                "remember": {"p50_by_outcome": {"created": remember}},
            }
        }
    }


def test_a_change_is_called_only_when_the_spreads_do_not_overlap() -> None:
    before = [_run(10.0, 5.0), _run(11.0, 5.5), _run(12.0, 6.0)]
    after = [_run(6.0, 5.2), _run(6.5, 5.9), _run(7.0, 6.4)]
    rows = {r["figure"]: r for r in compare.summarize(before, after)}
    hybrid = rows["10k hybrid search p50 ms"]
    assert hybrid["before"] == {"median": 11.0, "min": 10.0, "max": 12.0, "n": 3}
    assert hybrid["after"]["median"] == 6.5 and hybrid["verdict"] == "faster"
    assert rows["10k remember (created) p50 ms"]["verdict"] == "within noise"
    assert compare.verdict([1.0, 2.0], [2.5, 3.0], True) == "slower"


def test_the_comparison_replaces_its_own_section(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nFigures.\n")
    meta = {
        "date": "2026-12-02 03:00 UTC",
        "rev": "HEAD~1",
        "flags": ["--sizes", "10000"],
        "base_commit": "aaaaaaa",
        "head_commit": "bbbbbbb",
        "runs": 3,
        "loads": ["1.00 (before)", "1.10 (after)"],
    }
    rows = compare.summarize([_run(10.0, 5.0)], [_run(6.0, 5.0)])
    compare.write_doc(compare.render(meta, rows), doc)
    first = doc.read_text()
    assert "| 10k hybrid search p50 ms | 10.00 [10.00..10.00] | 6.00 [6.00..6.00] | faster |" in first
    compare.write_doc(compare.render(dict(meta, head_commit="ccccccc"), rows), doc)
    second = doc.read_text()
    assert second.count(compare.START) == 1 and "ccccccc" in second and "bbbbbbb" not in second
    assert second.startswith("# Benchmarks\n\nFigures.\n")


def test_each_run_gets_the_flags_but_the_comparisons_own() -> None:
    argv = ["--compare", "HEAD~1", "--sizes", "10000", "--runs=2", "--only-synthetic", "--output", "x.json"]
    assert _without_compare(argv) == ["--sizes", "10000", "--only-synthetic"]


def test_a_revision_is_exported_without_touching_the_repository(tmp_path: Path) -> None:
    def worktrees() -> str:
        listed = subprocess.run(["git", "worktree", "list"], cwd=compare.ROOT, capture_output=True, text=True)
        return listed.stdout

    before = worktrees()
    commit = compare.export("HEAD", tmp_path / "tree")
    assert (tmp_path / "tree" / "bench" / "__main__.py").exists() and commit
    assert worktrees() == before


def test_the_question_sets_are_named_once_each_and_printed_side_by_side() -> None:
    assert parse_args(["--questions-from", "train150,dev60"]).questions_from == ["train150", "dev60"]
    assert parse_args([]).questions_from is None  # dev60 and train150, dev60 alone with --quick
    for bad in ("dev61", "dev60,dev60", ","):
        with pytest.raises(SystemExit):
            parse_args(["--questions-from", bad])

    def metrics(t1: float, t5: float, t10: float) -> dict:
        return {"questions": 3, "hybrid": {"turn@1": t1, "turn@5": t5, "turn@10": t10}}

    sets = {
        "dev60": {
            "questions": 3,
            "metrics": {"multi-session": metrics(0.1, 0.5, 0.7), "overall": metrics(0.1, 0.5, 0.7)},
        },
        "train150": {
            "questions": 3,
            "metrics": {"knowledge-update": metrics(0.3, 0.9, 1.0), "overall": metrics(0.3, 0.9, 1.0)},
        },
    }
    lines = report._question_set_lines(sets)
    rows = {line.split()[0]: line for line in lines[2:] if line.strip()}
    assert "0.100 / 0.500 / 0.700" in rows["multi-session"] and rows["multi-session"].rstrip().endswith("-")
    assert "0.300 / 0.900 / 1.000" in rows["knowledge-update"]
    assert "0.100 / 0.500 / 0.700" in rows["overall"] and "0.300 / 0.900 / 1.000" in rows["overall"]
    assert list(rows)[-1] == "overall"
