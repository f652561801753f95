"""The catalogue of the API (brain.catalogue, sql/functions/025a-tenancy-catalogue.sql): one
row for each public brain.* function with its traits, read by the client instead of lists of
function names kept in Python."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import psycopg
from helpers import rows

import pybrain
from pybrain.api import catalogue, transport
from pybrain.client import Brain
from pybrain.connector import ConnectionConnector

TRAITS = {"idempotent", "replica", "telemetry", "owner"}


def _public(conn) -> set[str]:
    return {
        r["proname"]
        for r in rows(
            conn,
            "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'brain'::regnamespace"
            " AND p.prokind IN ('f', 'p') AND left(p.proname, 1) <> '_'"
            " AND p.prorettype <> 'trigger'::regtype",
        )
    }


def test_every_public_function_has_one_catalogue_row(conn) -> None:
    began = time.perf_counter()
    found = rows(conn, "SELECT * FROM brain.catalogue()")
    print(f"brain.catalogue(): {len(found)} rows in {(time.perf_counter() - began) * 1000:.1f} ms")
    names = [r["name"] for r in found]
    public = _public(conn)
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(names) == public, (sorted(public - set(names)), sorted(set(names) - public))
    assert len(public) > 150
    # overloads are one row, with each signature
    (current,) = [r for r in found if r["name"] == "current_workspace"]
    assert len(current["signatures"]) == 2


def test_the_declared_traits_name_functions_that_exist(conn) -> None:
    declared = rows(conn, "SELECT * FROM brain._declared_traits()")
    every = {
        r["proname"]
        for r in rows(conn, "SELECT proname FROM pg_proc WHERE pronamespace = 'brain'::regnamespace")
    }
    assert {r["trait"] for r in declared} == TRAITS
    assert {r["name"] for r in declared} <= every, sorted({r["name"] for r in declared} - every)
    # a trait declared once a function
    pairs = [(r["name"], r["trait"]) for r in declared]
    assert len(pairs) == len(set(pairs))


def test_the_traits_sql_infers_and_the_declared_ones(conn) -> None:
    by = {r["name"]: r for r in rows(conn, "SELECT * FROM brain.catalogue()")}
    # STABLE: a read, sent again after a connection lost during its COMMIT
    assert by["stats"]["volatility"] == "stable" and by["stats"]["read_only"] and by["stats"]["idempotent"]
    # a write: neither
    assert by["remember"]["volatility"] == "volatile"
    assert not by["remember"]["idempotent"] and not by["remember"]["read_only"]
    # declared: a write a second call changes no further; a read a replica serves; telemetry
    assert by["observe_transcript"]["idempotent"] and not by["observe_transcript"]["read_only"]
    assert by["search"]["replica"] and by["search"]["read_only"] and by["search"]["idempotent"]
    assert by["record_tool_event"]["telemetry"] and not by["record_tool_event"]["idempotent"]
    assert by["adopt_role"]["owner_only"] and not by["remember"]["owner_only"]
    # keyed: pg_proc says which take a request_key
    assert {n for n, r in by.items() if r["keyed"]} == {"rate", "annotate", "create_action_item"}
    # the grant loop keeps the owner's functions from brain_user
    granted = rows(
        conn,
        "SELECT p.proname, has_function_privilege('brain_user', p.oid, 'EXECUTE') AS granted FROM pg_proc p"
        " WHERE p.pronamespace = 'brain'::regnamespace AND p.proname IN ('adopt_role', '_build_space_index',"
        " 'remember', 'catalogue')",
    )
    assert {r["proname"]: r["granted"] for r in granted} == {
        "adopt_role": False,
        "_build_space_index": False,
        "remember": True,
        "catalogue": True,
    }


def test_the_client_reads_its_traits_from_the_catalogue(brain) -> None:
    catalogue.forget()
    read = transport.catalogue(brain)
    assert catalogue.cached() is read
    assert read.has("search", "replica") and read.has("stats", "idempotent")
    assert not read.has("remember", "idempotent") and not read.has("no_such_function", "idempotent")
    assert read.names("telemetry") == {
        "record_tool_event",
        "record_injection",
        "note_use",
        "count_recall",
        "record_boot",
    }


def _name_lists(root: Path, names: set[str]) -> list[str]:
    """Each literal set, list or tuple (or frozenset of one) of two or more strings in root's
    Python files that are all names of public brain.* functions."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Set | ast.List | ast.Tuple):
                continue
            texts = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(texts) >= 2 and len(texts) == len(node.elts) and set(texts) <= names:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} {sorted(texts)}")
    return found


# Lists of names that are not facts about SQL functions: the MCP tools of each profile,
# which share some names with the functions they call.
NOT_FUNCTION_FACTS = {"pybrain/mcp/profiles.py"}


def test_no_python_list_of_function_names_remains(conn, tmp_path: Path) -> None:
    names = _public(conn)
    root = Path(pybrain.__file__).parent
    lists = [f for f in _name_lists(root, names) if f.split(":")[0] not in NOT_FUNCTION_FACTS]
    assert lists == [], "keep such facts in the catalogue (brain._declared_traits):\n" + "\n".join(lists)
    # the check finds such a list
    planted = tmp_path / "pybrain"
    planted.mkdir()
    (planted / "lists.py").write_text('IDEMPOTENT = frozenset({"stats", "health", "history"})\n')
    assert _name_lists(planted, names) == ["pybrain/lists.py:1 ['health', 'history', 'stats']"]


def test_with_a_reader_the_catalogue_is_read_there_and_else_on_the_primary(brain, db_url: str) -> None:
    """A replica has the primary's functions: with a reader the catalogue is read there, and so
    is read while the primary is away; a reader that cannot answer leaves it to the primary."""
    reader = ConnectionConnector(psycopg.connect(db_url, autocommit=True))
    try:
        brain.reader = reader
        brain.connector.close()  # the primary is away
        catalogue.forget()
        assert transport.catalogue(brain).has("search", "replica")
    finally:
        reader.close()
    other = Brain(psycopg.connect(db_url, autocommit=True))
    try:
        other.reader = reader  # closed: it cannot answer
        catalogue.forget()
        assert transport.catalogue(other).has("search", "replica")
    finally:
        other.close()
