"""Bounded inputs: each at its edge is accepted, one past it is a BR009 naming it, nothing
is written and nothing hangs; MCP arguments are checked strictly."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import psycopg
import pytest
from helpers import each_refused, raises_br, remember, scalar
from mcp.server.mcpserver.exceptions import ToolError

from pybrain.client import Brain
from pybrain.embed import get_embedder


def counts(conn: psycopg.Connection) -> tuple[int, ...]:
    return tuple(
        scalar(conn, f"SELECT count(*) FROM brain.{t}")
        for t in ("memory", "session", "scratch", "action_item", "annotation", "setting", "audit")
    )


def refused(conn: psycopg.Connection, query: str, params: Any, field: str) -> None:
    """The call fails with BR009 naming the field, quickly, and writes nothing."""
    before = counts(conn)
    started = time.monotonic()
    with raises_br("BR009") as caught:
        conn.execute(query, params)
    assert time.monotonic() - started < 10
    assert field in caught.error.diag.message_primary, caught.error.diag.message_primary
    assert counts(conn) == before


@pytest.mark.parametrize(
    ("name", "ok", "bad"),
    [
        ("rrf_k", 1, -1),
        ("rrf_k", 10000, 0),
        ("search_candidates", 1000, 1001),
        ("search_candidates", 40, 40.5),
        ("fact_dormant_threshold", 0.5, 0),
        ("fact_dormant_threshold", 0.99, 1),
        ("fact_halflife_days", 0.01, 0),
        ("hnsw_ef_search", 1000, 1001),
        ("boot_token_budget", 200, 199),
        ("prompt_context_tokens", 4000, 4001),
        ("prompt_context_max", 1, 0),
        ("session_ttl_minutes", 1, 0),
    ],
)
def test_settings_are_checked_against_their_range(conn, name: str, ok: float, bad: float) -> None:
    assert scalar(conn, "SELECT brain.set_setting(%s, %s::text::jsonb)", (name, str(ok))) == ok
    refused(conn, "SELECT brain.set_setting(%s, %s::text::jsonb)", (name, str(bad)), name)
    assert scalar(conn, "SELECT brain.setting(%s)", (name,)) == ok


def test_rrf_k_below_one_is_refused_and_search_keeps_working(conn) -> None:
    remember(conn, kind="fact", headline="Search still ranks after a refused setting")
    refused(conn, "SELECT brain.set_setting('rrf_k', '-1')", None, "rrf_k")
    assert scalar(conn, "SELECT count(*) FROM brain.search('ranks refused setting')") == 1


def test_every_numeric_setting_has_a_range(conn) -> None:
    defaults = scalar(conn, "SELECT brain.setting_defaults()")
    ranges = scalar(conn, "SELECT brain.setting_ranges()")
    numeric = {k for k, v in defaults.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    assert numeric - set(ranges) == set(), "give the new settings a range in brain.setting_ranges()"
    for name, r in ranges.items():
        assert r["min"] <= defaults[name] <= r["max"], name


def test_every_setting_at_either_end_of_its_range_keeps_its_readers_working(conn, database) -> None:
    """One range per setting, for set_setting and for every function that reads it: a value
    set_setting accepts never breaks a boot, a prompt's context, a search or maintenance
    (boot_token_budget 100 to 199 was accepted and broke every boot), and a value stored
    before its range narrowed reads as the default."""
    remember(conn, kind="rule", severity="BLOCKER", headline="Deploy only signed tags")
    remember(conn, kind="fact", headline="The deploy pipeline runs on the build host")
    ranges = scalar(conn, "SELECT brain.setting_ranges()")
    broken = []
    for name, r in sorted(ranges.items()):
        for edge in (r["min"], r["max"]):
            scalar(conn, "SELECT brain.set_setting(%s, %s::text::jsonb)", (name, json.dumps(edge)))
            for call in (
                "SELECT brain.boot_session('claude', project => 'web', task => 'deploy')",
                "SELECT brain.prompt_context('how do we deploy?')",
                "SELECT count(*) FROM brain.search('deploy pipeline')",
            ):
                try:
                    conn.execute(call)
                except psycopg.Error as exc:
                    broken.append((name, edge, call.split("(")[0][7:], exc.sqlstate))
        scalar(conn, "SELECT brain.reset_setting(%s)", (name,))
    print(
        f"\nsettings: {2 * len(ranges)} edges of {len(ranges)} ranges, {len(broken)} broke a reader: {broken}"
    )
    assert broken == []
    # An override stored outside its range (by an earlier release) reads as the default.
    with psycopg.connect(database, autocommit=True) as owner:
        owner.execute(
            "INSERT INTO brain.setting (workspace_id, name, value) VALUES (1, 'boot_token_budget', '150')"
        )
    assert scalar(conn, "SELECT brain.setting('boot_token_budget')") == 2000
    assert scalar(conn, "SELECT brain.boot_session('claude') ->> 'session_id'") is not None


def test_a_long_query_is_refused_at_once(conn) -> None:
    remember(conn, kind="fact", headline="Queries have a length limit")
    assert scalar(conn, "SELECT count(*) FROM brain.search(%s)", ("limit " * 666,)) == 1  # 3996 characters
    refused(conn, "SELECT count(*) FROM brain.search(%s)", ("x" * 4001,), "query")
    refused(conn, "SELECT count(*) FROM brain.search(%s)", ("a" * 1_000_000,), "query")


def test_chunk_sizes_are_bounded(conn) -> None:
    text = "One sentence here. Another sentence there."
    assert scalar(conn, "SELECT count(*) FROM brain.chunk_text(%s, max_tokens => 32)", (text,)) == 1
    for bad in (0, -5, 31, 65537):
        refused(
            conn, "SELECT count(*) FROM brain.chunk_text(%s, max_tokens => %s)", (text, bad), "max_tokens"
        )


def test_text_fields_are_bounded_wherever_they_are_written(conn) -> None:
    remember(conn, kind="fact", headline="Project at its limit", project="p" * 200)
    refused(
        conn,
        "SELECT brain.remember(kind => 'fact', headline => 'Project too long', project => %s)",
        ("p" * 201,),
        "project",
    )
    refused(
        conn,
        "SELECT brain.remember(kind => 'fact', headline => 'Agent too long', source_agent => %s)",
        ("a" * 201,),
        "source_agent",
    )
    mid = remember(conn, kind="fact", headline="To be forgotten")["memory_id"]
    refused(conn, "SELECT brain.forget(%s, %s)", (mid, "r" * 2001), "reason")
    assert scalar(conn, "SELECT state FROM brain.memory WHERE memory_id = %s", (mid,)) == "active"
    scalar(conn, "SELECT brain.forget(%s, %s)", (mid, "r" * 2000))
    refused(conn, "SELECT brain.annotate(%s, %s)", (mid, "n" * 10001), "note")
    refused(conn, "SELECT brain.scratch_set(%s, 'v', project => 'web')", ("k" * 201,), "key")
    refused(conn, "SELECT brain.boot_session(%s)", ("s" * 201,), "source")
    refused(conn, "SELECT brain.boot_session('claude', task => %s)", ("t" * 2001,), "current_task")


def test_workspace_and_role_names_are_checked(database) -> None:
    with psycopg.connect(database, autocommit=True) as owner:
        for bad in ("", " ", "x" * 101, "two\nlines"):
            with raises_br("BR009"):
                owner.execute("SELECT brain.create_workspace(%s)", (bad,))
        for bad in ("Robert'); DROP TABLE x; --", "pg_monitor", "a" * 64, ""):
            with raises_br("BR009"):
                owner.execute("SELECT brain.create_role(%s, 1)", (bad,))
        each_refused(
            owner,
            ("BR021", "SELECT brain.create_role('agent_nowhere', 999)"),
            ("BR009", "SELECT brain.create_role('agent_slow', 1, statement_timeout => '2h')"),
            ("BR021", "SELECT brain.grant_workspace('brain_tester', 999)"),
            ("BR021", "SELECT brain.grant_workspace('no_such_role', 1)"),
            ("BR009", "SELECT brain.grant_workspace('brain_tester', 1, 'owner')"),
            ("BR009", "SELECT brain.grant_workspace('postgres', 1)"),
        )
        assert owner.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'agent\\_%'").fetchone() == (
            0,
        )


# --- MCP -------------------------------------------------------------------------------


@pytest.fixture
def server(conn):
    from pybrain.mcp import Service, build_server

    return build_server(Service(Brain(conn, embedder=get_embedder("hash"))), "full")


def _numeric_arguments(server) -> list[tuple[str, str, str]]:
    """(tool, argument, 'integer' | 'number') for every numeric argument of every tool."""
    out = []
    for tool in anyio.run(server.list_tools):
        for name, prop in tool.input_schema.get("properties", {}).items():
            kinds = {prop.get("type")} | {p.get("type") for p in prop.get("anyOf", [])}
            if "integer" in kinds:
                out.append((tool.name, name, "integer"))
            elif "number" in kinds:
                out.append((tool.name, name, "number"))
    return out


def _call(server, tool: str, arguments: dict[str, Any]) -> str:
    async def run() -> Any:
        return await server.call_tool(tool, arguments)

    with pytest.raises(ToolError) as caught:
        anyio.run(run)
    return str(caught.value)


def test_mcp_refuses_coerced_ids_and_numbers_on_every_tool(server, conn) -> None:
    numeric = _numeric_arguments(server)
    assert {("recall", "id", "integer"), ("search", "max_results", "integer")} <= set(numeric)
    assert len(numeric) >= 20
    refusals = 0
    for tool, arg, kind in numeric:
        bad = [True, False, "1", "12", None if kind == "never" else [1]]
        if kind == "integer":
            bad += [1.0, 1.5]
        for value in bad:
            text = _call(server, tool, {arg: value})
            assert repr(arg) in text, (tool, arg, value, text)
            if not isinstance(value, bool | None):  # true, false and null are named as such
                assert json.dumps(value) not in text.split(" must be ")[1], (tool, value, text)
            refusals += 1
    errors = scalar(conn, "SELECT count(*) FROM brain.tool_event WHERE error_code = 'invalid_arguments'")
    assert errors == refusals
    print(f"\nMCP: {refusals} coerced values refused on {len(numeric)} numeric arguments")


def test_mcp_refuses_unknown_arguments_naming_them(server) -> None:
    for tool in anyio.run(server.list_tools):
        text = _call(server, tool.name, {"workspace": 2, "sudo": True})
        assert "'sudo'" in text and "'workspace'" in text, text


def test_mcp_takes_well_typed_arguments(server, conn) -> None:
    mid = remember(conn, kind="fact", headline="Strict arguments still work")["memory_id"]

    async def run() -> Any:
        return await server.call_tool("recall", {"id": mid})

    result = anyio.run(run)
    assert "Strict arguments still work" in str(result)


def test_mcp_argument_errors_never_repeat_the_value(server) -> None:
    """A secret passed in the wrong field is named by type only: the SDK logs the message."""
    secret = "AKIA" + "Q3EXAMPLE7VALUE2X9"
    for arguments in ({"id": secret}, {"max_results": [secret]}, {"max_results": {"k": secret}}):
        tool = "recall" if "id" in arguments else "search"
        text = _call(server, tool, arguments)
        assert secret not in text and "AKIA" not in text, text
        assert "must be" in text and (
            "not a string" in text or "not an array" in text or "not an object" in text
        )
