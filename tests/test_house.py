"""The rules of the house (scripts/check_house.py): file and function sizes, a Brain built in
one place, no import circle in pybrain/, docs/house.md naming every room, and the SQL duplicate
pairs when their counter is there. Each rule is shown to fail on a small tree that breaks it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _checker():
    spec = importlib.util.spec_from_file_location("check_house", ROOT / "scripts" / "check_house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_house"] = module
    spec.loader.exec_module(module)
    return module


house = _checker()


def test_the_house_keeps_its_rules() -> None:
    problems = house.check(ROOT)
    assert problems == [], "\n".join(problems)
    graph = house.import_graph(ROOT)
    assert "pybrain.embed.server" in graph["pybrain.embed"]  # the graph sees function-level imports
    assert len(graph) > 90


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _tree(root: Path) -> None:
    """A small tree that keeps every rule."""
    _write(root, "pybrain/__init__.py", "")
    _write(root, "pybrain/api/__init__.py", "")
    _write(root, "pybrain/api/transport.py", "def send():\n    return 1\n")
    _write(
        root, "pybrain/api/brain.py", "class Brain:\n    pass\n\n\ndef open_brain():\n    return Brain()\n"
    )
    _write(root, "pybrain/a.py", "from pybrain import b\n")
    _write(root, "pybrain/b.py", "import os\n")
    _write(root, "sql/functions/001-text.sql", "-- text\n")
    _write(root, "pybrain/api/memories.py", "def stats(brain):\n    return brain.value('stats')\n")
    _write(root, "docs/house.md", "`pybrain/` `pybrain/api/` `a.py` `b.py` `001-text.sql`\n")
    _write(root, "scripts/sql_pairs.py", (ROOT / "scripts" / "sql_pairs.py").read_text(encoding="utf-8"))


def test_a_tree_that_keeps_the_rules_passes(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert house.check(tmp_path) == []


def test_each_broken_rule_is_reported(tmp_path: Path) -> None:
    _tree(tmp_path)
    _write(tmp_path, "pybrain/big.py", "x = 1\n" * 901)
    _write(tmp_path, "pybrain/client.py", "x = 1\n" * 301)
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    _write(tmp_path, "pybrain/api/transport.py", f"def send():\n{body}    return 1\n")
    _write(tmp_path, "pybrain/face.py", "from pybrain.api.brain import Brain\n\nbrain = Brain()\n")
    _write(tmp_path, "pybrain/api/memories.py", "def stats(brain):\n    return brain.transaction()\n")
    # a circle through an import inside a function
    _write(tmp_path, "pybrain/b.py", "def late():\n    from pybrain.a import thing\n    return thing\n")
    _write(tmp_path, "sql/functions/002-settings.sql", "-- settings\n")
    _write(
        tmp_path,
        "scripts/sql_pairs.py",
        "def read(folder):\n    return {}\n\n\n"
        "def pairs(texts):\n    return {(n, n + 1): [] for n in range(14)}\n",
    )
    problems = house.check(tmp_path)
    said = "\n".join(problems)
    assert "pybrain/big.py has 901 lines" in said
    assert "pybrain/client.py has 301 lines (a face: at most 300)" in said
    assert "pybrain/api/transport.py:1 send has 42 lines" in said
    assert "pybrain/face.py:3 builds a Brain" in said
    assert "pybrain/api/memories.py:2 uses .transaction" in said
    assert "import circle of 2 modules: pybrain.a <-> pybrain.b" in said
    assert "docs/house.md does not name big.py" in said and "does not name 002-settings.sql" in said
    assert "sql/functions: 14 duplicate pairs (at most 12;" in said
    assert len(problems) == 11, said  # big.py, face.py, client.py and 002-settings.sql unnamed: four
    assert house.main([str(tmp_path)]) == 1
