"""The generated parts of the documentation are what the database and the settings say (tests/docgen.py).

A failure here means the SQL or pybrain.config changed and the documentation
did not: `make docs` rewrites the blocks, then read the diff.
"""

from __future__ import annotations

import re
from pathlib import Path

import docgen
import psycopg
import pytest

from pybrain import config, words
from pybrain.config import ENVIRONMENT, ENVIRONMENT_HELP

PYBRAIN = Path(__file__).resolve().parent.parent / "pybrain"
VARIABLE = re.compile(r"\bBRAIN_[A-Z0-9][A-Z0-9_]*\b")


@pytest.fixture
def generator(database: str) -> docgen.Generator:
    with psycopg.connect(database, autocommit=True) as conn:
        return docgen.Generator(conn)


def test_generated_blocks_match_the_database_and_the_settings(generator: docgen.Generator) -> None:
    drifted = []
    for path in docgen.FILES:
        for m in docgen.BLOCK.finditer(path.read_text(encoding="utf-8")):
            if m["body"] != generator.body(m["kind"], m["args"] or ""):
                drifted.append(f"{path.name}: <!-- {m['kind']}: {' '.join((m['args'] or '').split())} -->")
    assert not drifted, "generated blocks differ (run `make docs`):\n" + "\n".join(drifted)
    assert generator.used, "no signature block found: the marker pattern is wrong"


def test_every_public_function_has_a_signature_block(generator: docgen.Generator) -> None:
    for path in docgen.FILES:
        generator.fill(path.read_text(encoding="utf-8"))
    missing = sorted(set(generator.functions) - generator.used)
    assert not missing, "no <!-- signature: ... --> block in the docs for: " + ", ".join(
        f"brain.{name}" for name in missing
    )


def test_a_signature_is_one_line_when_it_fits() -> None:
    assert docgen.signature("pin", "id bigint, source text DEFAULT NULL::text", "boolean") == (
        "brain.pin(id bigint, source text DEFAULT NULL) RETURNS boolean"
    )
    long = ", ".join(f"argument_{i} timestamp with time zone DEFAULT now()" for i in range(4))
    assert docgen.signature("f", long, "TABLE(a integer, b text)") == (
        "brain.f(\n"
        + ",\n".join(f"    argument_{i} timestamptz DEFAULT now()" for i in range(4))
        + "\n) RETURNS TABLE (a integer, b text)"
    )


def test_the_word_lists_are_the_database_constraints(database: str) -> None:
    with psycopg.connect(database) as conn:
        for name, (table, column) in words.SOURCES.items():
            assert getattr(words, name.upper()) == docgen.check_constraint(conn, table, column), name


def test_remember_takes_the_remembered_kinds(conn: psycopg.Connection) -> None:
    call = "SELECT (brain.remember(kind => %s, headline => 'A valid headline', check_only => true)).action"
    for kind in words.KINDS:
        if kind in words.REMEMBERED_KINDS:
            assert conn.execute(call, (kind,)).fetchone()[0] == "valid", kind
        else:
            with pytest.raises(psycopg.Error) as refused:
                conn.execute(call, (kind,))
            assert refused.value.sqlstate == "BR001", kind


def test_every_environment_variable_the_code_reads_is_listed() -> None:
    used = set()
    for path in PYBRAIN.rglob("*.py"):
        used |= set(VARIABLE.findall(path.read_text(encoding="utf-8")))
    listed = {v.name for v in ENVIRONMENT}
    assert not used - listed, f"pybrain reads {sorted(used - listed)}, which pybrain.config.ENVIRONMENT lacks"
    assert not listed - used, f"pybrain.config.ENVIRONMENT lists {sorted(listed - used)}, which nothing reads"


def test_brain_help_names_every_environment_variable(brain_cli) -> None:
    shown = brain_cli("--help").output
    assert "Environment:" in shown
    for v in ENVIRONMENT:
        assert v.name in ENVIRONMENT_HELP
        assert re.search(rf"\b{v.name}\b", shown), f"{v.name} is missing from `brain --help`"
    assert all(v.help for v in ENVIRONMENT if v.group == "general"), "a general variable needs its help line"
    assert config.environment_help() == ENVIRONMENT_HELP
