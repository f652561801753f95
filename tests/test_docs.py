"""The documentation keeps up with the code: error codes and public SQL functions.

No database needed: these tests read docs/, sql/functions/ and pybrain.errors.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pybrain import db
from pybrain.errors import _BY_SQLSTATE

DOCS = Path(__file__).resolve().parent.parent / "docs"
ERRORS_MD = DOCS / "errors.md"
SQL_API_MD = DOCS / "sql-api.md"

CREATE_FUNCTION = re.compile(
    r"\bCREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+brain\.([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.IGNORECASE
)
COMMENT_ON_FUNCTION = re.compile(
    r"\bCOMMENT\s+ON\s+FUNCTION\s+brain\.([A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE
)
SQL_CODE = re.compile(r"'(BR0\d\d)'")


def _function_sql() -> str:
    files = db.sql_files("functions")
    assert files, "no files in sql/functions"
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


SQL = _function_sql()
PUBLIC_FUNCTIONS = sorted({name for name in CREATE_FUNCTION.findall(SQL) if not name.startswith("_")})
COMMENTED_FUNCTIONS = set(COMMENT_ON_FUNCTION.findall(SQL))
SQL_CODES = sorted(set(SQL_CODE.findall(SQL)))
PYTHON_CODES = sorted(_BY_SQLSTATE)


def _errors_md() -> str:
    return ERRORS_MD.read_text(encoding="utf-8")


def _sql_api_md() -> str:
    return SQL_API_MD.read_text(encoding="utf-8")


def test_the_sql_defines_public_functions_and_raises_codes() -> None:
    # Guards the regular expressions: an empty list would make the tests below vacuous.
    assert "remember" in PUBLIC_FUNCTIONS
    assert "BR001" in SQL_CODES


@pytest.mark.parametrize("code", PYTHON_CODES)
def test_every_python_error_class_is_in_errors_md(code: str) -> None:
    text = _errors_md()
    cls = _BY_SQLSTATE[code]
    assert code in text, f"{code} is missing from docs/errors.md"
    assert re.search(rf"\b{cls.__name__}\b", text), f"{cls.__name__} ({code}) is missing from docs/errors.md"


@pytest.mark.parametrize("code", SQL_CODES)
def test_every_code_raised_in_sql_has_a_class(code: str) -> None:
    assert code in _BY_SQLSTATE, f"sql/functions raises {code}, which pybrain.errors._BY_SQLSTATE lacks"


@pytest.mark.parametrize("code", SQL_CODES)
def test_every_code_raised_in_sql_is_in_errors_md(code: str) -> None:
    assert code in _errors_md(), f"sql/functions raises {code}, which docs/errors.md does not list"


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_every_public_function_is_in_sql_api_md(name: str) -> None:
    assert re.search(rf"\bbrain\.{name}\b", _sql_api_md()), f"brain.{name} is missing from docs/sql-api.md"


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_every_public_function_has_a_comment(name: str) -> None:
    assert name in COMMENTED_FUNCTIONS, f"brain.{name} has no COMMENT ON FUNCTION in sql/functions"


def test_the_readme_demo_lists_every_migration() -> None:
    """The README shows `make demo`'s `brain init` on a new database: it applies every migration
    the release ships, and the count of function files."""
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    (line,) = [ln for ln in readme.splitlines() if ln.startswith("migrations: 001-")]
    names, functions = line.removeprefix("migrations: ").split("; ")
    assert names.split(", ") == [p.name for p in db.sql_files("migrations")]
    assert functions == f"{len(db.sql_files('functions'))} function files applied"
