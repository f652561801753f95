"""Duplicate pairs in sql/functions (scripts/sql_pairs.py): at most 12. No database needed.

A pair is two places (in one file or two) sharing a run of 6 or more lines that are the same,
or the same shape with other names, strings and numbers, with each function's
CREATE ... AS $$ header collapsed to one line.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "sql_pairs.py"
FUNCTIONS = ROOT / "sql" / "functions"
MOST_PAIRS = 12

_spec = importlib.util.spec_from_file_location("sql_pairs", SCRIPT)
assert _spec is not None and _spec.loader is not None
sql_pairs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sql_pairs)


def _run(*args: str) -> tuple[int, list[str]]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    head, *rows = out.splitlines()
    m = re.fullmatch(r"(\d+) pairs in (\d+) files \(\d+ lines\)", head)
    assert m, head
    return int(m.group(1)), rows


def test_sql_functions_have_at_most_12_duplicate_pairs() -> None:
    count, rows = _run("--list")
    assert count == len(rows)
    assert count <= MOST_PAIRS, "\n".join(
        [f"{count} duplicate pairs in sql/functions (at most {MOST_PAIRS}):", *rows]
    )


# A loop written twice: once in each of two files, with other names (the same shape).
PLANTED = """
CREATE OR REPLACE FUNCTION brain._planted_{n}(ids bigint[])
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    {v} bigint;
    total integer := 0;
BEGIN
    FOREACH {v} IN ARRAY ids LOOP
        UPDATE brain.memory m SET access_count = m.access_count + 1 WHERE m.memory_id = {v};
        total := total + 1;
        IF total > 100 THEN
            RAISE EXCEPTION 'too many: %', total;
        END IF;
        PERFORM brain._note_use(ARRAY[{v}], 'planted');
    END LOOP;
    RETURN total;
END
$$;
"""


def test_a_planted_duplicate_is_found(tmp_path: Path) -> None:
    for path in FUNCTIONS.glob("*.sql"):
        shutil.copy(path, tmp_path / path.name)
    before, _ = _run(str(tmp_path))
    (tmp_path / "900-planted-a.sql").write_text(PLANTED.format(n="a", v="one_id"), encoding="utf-8")
    (tmp_path / "901-planted-b.sql").write_text(PLANTED.format(n="b", v="other_id"), encoding="utf-8")
    after, rows = _run(str(tmp_path), "--list")
    assert after == before + 1
    assert any(r.startswith("900-planted-a.sql:") and "~ 901-planted-b.sql:" in r for r in rows), rows


def test_headers_alike_are_not_a_pair() -> None:
    """Two signatures with many parameters alike are one line each once collapsed."""
    header = (
        "CREATE OR REPLACE FUNCTION brain.f{n}(\n"
        + "".join(f"    p{k} text DEFAULT NULL,\n" for k in range(12))
        + "    q integer DEFAULT 0\n)\nRETURNS void\nLANGUAGE sql\nAS $$ SELECT 1 $$;\n"
    )
    texts = {"a.sql": header.format(n=1), "b.sql": header.format(n=2)}
    assert sql_pairs.pairs(texts) == {}
    raw = {name: text.replace("AS $$", "AS\n$$") for name, text in texts.items()}
    # (the same text not recognised as a header: its parameter lines pair)
    raw = {name: text.replace("CREATE OR REPLACE FUNCTION", "-- x\nSELECT") for name, text in raw.items()}
    assert list(sql_pairs.pairs(raw)) == [("a.sql", "b.sql")]


def test_a_run_in_many_places_is_a_pattern_not_a_pair() -> None:
    block = "".join(f"    v{k} := brain.step_{k}(v{k - 1}, 'x');\n" for k in range(1, 8))
    texts = {f"f{n}.sql": f"-- file {n}\n{block}" for n in range(sql_pairs.MOST_PLACES + 1)}
    assert sql_pairs.pairs(texts) == {}
    del texts["f0.sql"]
    assert len(sql_pairs.pairs(texts)) == sql_pairs.MOST_PLACES * (sql_pairs.MOST_PLACES - 1) // 2
