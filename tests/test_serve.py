"""`brain serve`: the MCP server over streamable HTTP, with bearer tokens.

A real uvicorn server on a free localhost port, the official SDK client over
streamable HTTP, a real PostgreSQL: nothing is mocked.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
import httpx2
import psycopg
import pytest
import uvicorn
from conftest import TEST_ROLE, with_database
from helpers import remember, rows, scalar
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from psycopg.conninfo import conninfo_to_dict
from test_mcp import call, initialize
from test_tenancy import SECRET as VICTIM_SECRET
from test_tenancy import VICTIM_WS, victim, victim_state
from test_tokens import SERVE_ROLE, create, ensure_role

from pybrain.serve.app import ServeOptions, build_app
from pybrain.serve.pool import open_pool

assert victim  # a fixture of test_tenancy: the victim workspace, with something of every kind

SECRET = "quetzalcoatl"


@pytest.fixture
def serve_url(admin: psycopg.Connection, database: str) -> str:
    ensure_role(admin, SERVE_ROLE, in_role="brain_server")
    return with_database(database, conninfo_to_dict(database)["dbname"], user=SERVE_ROLE, password="pw")


class Running:
    def __init__(self, base: str, app: Any) -> None:
        self.base = base
        self.url = base + "/mcp"
        self.app = app


def start(make_app: Callable[[int], Any]) -> Iterator[Running]:
    """uvicorn in a thread on a free port of 127.0.0.1, serving make_app(port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = make_app(port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield Running(f"http://127.0.0.1:{port}", app)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


@pytest.fixture
def served(serve_url: str) -> Iterator[Running]:
    pool = open_pool(serve_url, 4)
    try:
        yield from start(
            lambda port: build_app(pool, ServeOptions(port=port, profile="full"), embedder_spec="hash")
        )
    finally:
        pool.close()


def test_the_default_profile_over_http_is_the_lean_one(serve_url, conn) -> None:
    from pybrain.mcp import LEAN_TOOLS

    token = create(conn, role=TEST_ROLE, name="lean-client")["token"]
    pool = open_pool(serve_url, 2)
    try:
        for running in start(lambda port: build_app(pool, ServeOptions(port=port), embedder_spec="hash")):

            async def run(url: str = running.url) -> list[str]:
                async with agent(url, token) as s:
                    return [t.name for t in (await s.list_tools()).tools]

            names = anyio.run(run)
            print("tools over HTTP:", names)
            assert sorted(names) == sorted(LEAN_TOOLS) and len(names) <= 10
    finally:
        pool.close()


@asynccontextmanager
async def agent(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def search(session: ClientSession, query: str) -> list[dict[str, Any]]:
    """The hits of the search tool, as its JSON format gives them."""
    result = await session.call_tool("search", {"query": query, "format": "json"})
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_a_whole_session_over_http_with_a_token(served, conn, admin) -> None:
    token = create(conn, role=TEST_ROLE, name="laptop-claude", access="write")["token"]

    async def run() -> None:
        async with agent(served.url, token) as s:
            boot = await call(
                s, "boot_session", source="claude", project="billing", task="Ship the invoice export"
            )
            assert boot["session_id"] and "# " in boot["boot"]
            stored = await call(
                s,
                "remember",
                kind="fact",
                headline="Invoices export as CSV to the finance bucket",
                project="billing",
            )
            assert stored["action"] == "created"
            found = await search(s, "invoice export finance")
            assert [r["id"] for r in found][:1] == [stored["memory_id"]]
            # Every tool that needs no argument works as the token's role, as over stdio.
            tools = (await s.list_tools()).tools
            plain = sorted(
                t.name
                for t in tools
                if not t.input_schema.get("required") and t.name not in ("boot_session", "end_session")
            )
            assert len(plain) >= 5, plain
            for name in plain:
                result = await s.call_tool(name, {})
                assert not result.is_error, (name, result.content[0].text)
            ended = await call(s, "end_session", handoff="Export works; next: the PDF layout")
            assert ended

    anyio.run(run)
    session = rows(
        admin, "SELECT session_id, pid, ended_at IS NOT NULL AS ended, client_info FROM brain.session"
    )
    assert len(session) == 1 and session[0]["ended"] and session[0]["pid"] is None
    assert (
        session[0]["client_info"]["via"] == "http" and session[0]["client_info"]["token"] == "laptop-claude"
    )
    events = rows(admin, "SELECT tool, channel, session_id FROM brain.tool_event ORDER BY event_id")
    tools = [e["tool"] for e in events]
    assert tools[:3] == ["boot_session", "remember", "search"] and tools[-1] == "end_session"
    # (end_session's own event is recorded after it ended the session, as over stdio)
    assert {e["session_id"] for e in events[:-1]} == {session[0]["session_id"]}
    audit = rows(admin, "SELECT actor, db_role FROM brain.audit WHERE action = 'insert'")
    assert audit == [{"actor": TEST_ROLE, "db_role": SERVE_ROLE}]


INITIALIZE = initialize("probe", "1")


def post(url: str, body: dict[str, Any], token: str | None = None, **headers: str) -> httpx2.Response:
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers}
    if token is not None:
        sent["Authorization"] = token if token.startswith("Basic ") else f"Bearer {token}"
    return httpx2.post(url, json=body, headers=sent, timeout=30)


def test_a_call_sent_again_with_its_idempotency_key_is_answered_as_the_first_time(served, conn) -> None:
    """An HTTP client that lost the answer to a tools/call (a 503, a connection cut) sends it
    again with the same Idempotency-Key header: the rating counts once and the answer is the
    first one. The header is the request_key of a tool that takes one, quoted or not; a
    request_key argument that differs from it is refused; a tool that takes no key (pin) runs
    as without the header."""
    token = create(conn, role=TEST_ROLE, name="retrying-client", access="write")["token"]
    memory = remember(conn, kind="fact", headline="The retry drill runs on Tuesdays")["memory_id"]
    opened = post(served.url, INITIALIZE, token)
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    post(served.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token, **session)

    def tool(name: str, arguments: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        headers = {**session, **({"Idempotency-Key": key} if key is not None else {})}
        r = post(served.url, body, token, **headers)
        assert r.status_code == 200, r.text
        text = r.text
        if "text/event-stream" in r.headers.get("content-type", ""):
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        result = json.loads(text)["result"]
        if result.get("isError"):
            return {"error": result["content"][0]["text"]}
        return result["structuredContent"]

    key = "0b5f9d2e-5d0c-4a52-9a3b-7c1e2f3a4b5c"
    first = tool("rate", {"id": memory, "direction": "up"}, key)
    assert first == {"id": memory, "upvotes": 1, "downvotes": 0, "rating": 1}
    assert tool("rate", {"id": memory, "direction": "up"}, key) == first  # sent again
    assert tool("rate", {"id": memory, "direction": "up"}, f'"{key}"') == first  # the draft's quoted form
    assert tool("rate", {"id": memory, "direction": "up", "request_key": key}) == first  # as an argument
    reused = tool("rate", {"id": memory, "direction": "down"}, key)
    assert "sent with another request" in reused["error"] and key not in reused["error"]
    differs = tool("rate", {"id": memory, "direction": "up", "request_key": "another"}, "one-more")
    assert "differs from the request's Idempotency-Key header" in differs["error"]
    assert tool("rate", {"id": memory, "direction": "up"}, "one-more")["upvotes"] == 2
    assert tool("pin", {"id": memory}, "pin-1") == {"changed": True}
    assert tool("pin", {"id": memory}, "pin-1") == {"changed": False}  # idempotent by itself
    assert scalar(conn, "SELECT upvotes FROM brain.memory WHERE memory_id = %s", (memory,)) == 2
    assert scalar(conn, "SELECT count(*) FROM brain.audit WHERE action = 'rate'") == 2


def test_missing_wrong_revoked_expired_and_orphaned_tokens_get_401_or_403_and_no_data(
    served, conn, admin
) -> None:
    remember(conn, kind="fact", headline=f"Zanzibar database is the {SECRET} cluster")
    good = create(conn, role=TEST_ROLE, name="good")["token"]
    revoked = create(conn, role=TEST_ROLE, name="revoked")["token"]
    expired = create(conn, role=TEST_ROLE, name="expired", expires_in="1 day")["token"]
    scalar(conn, "SELECT brain.revoke_token(name => 'revoked')")
    admin.execute("UPDATE brain.token SET expires_at = now() - interval '1 minute' WHERE name = 'expired'")
    metadata_url = served.base + "/.well-known/oauth-protected-resource/mcp"
    outcomes = {}
    for label, token in (
        ("no token", None),
        ("another scheme", "Basic YWxpY2U6c2VjcmV0"),
        ("not a token", "hunter2"),
        ("unknown", "pbt_" + "a" * 64),
        ("revoked", revoked),
        ("expired", expired),
        ("good, one digit changed", good[:-1] + ("1" if good[-1] == "0" else "0")),
    ):
        r = post(served.url, INITIALIZE, token)
        outcomes[label] = r.status_code
        assert r.status_code == 401, (label, r.status_code, r.text)
        challenge = r.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata_url}"' in challenge, (
            challenge
        )
        assert SECRET not in r.text
    # The role loses its membership: the token is known but forbidden.
    scalar(admin, "SELECT brain.revoke_workspace(%s, 1)", (TEST_ROLE,))
    r = post(served.url, INITIALIZE, good)
    outcomes["role no longer a member"] = r.status_code
    assert r.status_code == 403 and 'error="insufficient_scope"' in r.headers["www-authenticate"]
    scalar(admin, "SELECT brain.grant_workspace(%s, 1, 'admin')", (TEST_ROLE,))
    r = post(served.url, INITIALIZE, good)
    outcomes["good"] = r.status_code
    print(json.dumps(outcomes))
    assert r.status_code == 200 and r.headers["mcp-session-id"]
    # The protected-resource metadata (RFC 9728) names the endpoint and the scope.
    meta = httpx2.get(metadata_url, timeout=10).json()
    assert meta["resource"] == served.url and meta["scopes_supported"] == ["brain"]
    assert meta["bearer_methods_supported"] == ["header"]


def test_a_revoked_token_is_refused_on_its_next_request(served, conn) -> None:
    remember(conn, kind="rule", severity="PATTERN", headline=f"Rotate the {SECRET} keys every quarter")
    made = create(conn, role=TEST_ROLE, name="soon-revoked")

    async def run() -> None:
        async with agent(served.url, made["token"]) as s:
            assert await search(s, "rotate keys quarter"), "the token works before it is revoked"
            scalar(conn, "SELECT brain.revoke_token(%s)", (made["token_id"],))
            leaked = None
            try:
                with anyio.fail_after(30):
                    result = await s.call_tool("search", {"query": "rotate keys quarter"})
                leaked = json.dumps(result.model_dump(), default=str)
                assert result.is_error
            except Exception as exc:  # the transport reports the 401
                print(f"after revocation: {type(exc).__name__}: {exc}")
            assert leaked is None or SECRET not in leaked

    anyio.run(run)


def test_a_read_token_reads_and_cannot_write(served, conn, admin) -> None:
    remember(conn, kind="fact", headline="The staging cluster runs PostgreSQL 18")
    token = create(conn, role=TEST_ROLE, name="reader", access="read")["token"]

    async def run() -> None:
        async with agent(served.url, token) as s:
            assert await search(s, "staging cluster PostgreSQL")
            result = await s.call_tool("remember", {"kind": "fact", "headline": "Readers write nothing here"})
            assert result.is_error and "needs write" in result.content[0].text, result.content[0].text
            # the refusal names the token's role, not the server's login
            assert TEST_ROLE in result.content[0].text and SERVE_ROLE not in result.content[0].text

    anyio.run(run)
    assert scalar(admin, "SELECT count(*) FROM brain.memory") == 1


def test_two_clients_at_once_keep_their_own_sessions(served, conn, admin) -> None:
    alice = create(conn, role=TEST_ROLE, name="alice-laptop")["token"]
    bob = create(conn, role=TEST_ROLE, name="bob-laptop")["token"]
    seen: dict[str, Any] = {}
    clients = 3
    # Each client boots, then (when all have booted) works and lists the others, then
    # (when all have listed) ends its session.
    booted, listed = anyio.Event(), anyio.Event()
    counts = {"booted": 0, "listed": 0}

    async def step(name: str, event: anyio.Event) -> None:
        counts[name] += 1
        if counts[name] == clients:
            event.set()
        await event.wait()

    async def client(name: str, token: str, task: str) -> None:
        async with agent(served.url, token) as s:
            boot = await call(s, "boot_session", source=name, project="billing", task=task)
            await step("booted", booted)
            await call(s, "scratch_set", key="draft", value=f"{name}'s draft")
            await call(s, "update_active_task", task=f"{task}, step 2")
            others = await call(s, "list_active_sessions", project="billing")
            seen[name] = {
                "session": boot["session_id"],
                "draft": (await call(s, "scratch_get", key="draft"))["value"],
                "others": [o["session_id"] for o in others["sessions"]],
            }
            await step("listed", listed)
            await call(s, "end_session", handoff=f"{name} hands off: {task}")

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client, "alice", alice, "Invoice export")
            tg.start_soon(client, "bob", bob, "Refund webhook")
            # The same token in a third client is a third session.
            tg.start_soon(client, "alice-again", alice, "Ledger report")

    anyio.run(run)
    print(json.dumps(seen, indent=1))
    sessions = {s["session"] for s in seen.values()}
    assert len(sessions) == 3
    for name, got in seen.items():
        assert got["draft"] == f"{name}'s draft"
        assert set(got["others"]) == sessions - {got["session"]}
    stored = rows(
        admin, "SELECT source, current_task, ended_at IS NOT NULL AS ended FROM brain.session ORDER BY 1"
    )
    assert stored == [
        {"source": "alice", "current_task": "Invoice export, step 2", "ended": True},
        {"source": "alice-again", "current_task": "Ledger report, step 2", "ended": True},
        {"source": "bob", "current_task": "Refund webhook, step 2", "ended": True},
    ]


def test_anonymous_access_only_with_the_flag_and_only_on_this_machine(serve_url, db_url, conn) -> None:
    remember(conn, kind="fact", headline="The anonymous laptop sees its own notes")
    with pytest.raises(Exception, match="this machine only"):
        ServeOptions(host="0.0.0.0", allow_anonymous_localhost=True).check()
    pool = open_pool(serve_url, 2)
    anonymous = open_pool(db_url, 2)
    try:
        options = ServeOptions(allow_anonymous_localhost=True)
        for running in start(
            lambda port: build_app(
                pool, replace(options, port=port), anonymous_pool=anonymous, embedder_spec="hash"
            )
        ):

            async def run(url: str = running.url) -> None:
                async with agent(url, None) as s:
                    assert await search(s, "anonymous laptop notes")

            anyio.run(run)
            # A token, when given, is still checked.
            assert post(running.url, INITIALIZE, "pbt_" + "b" * 64).status_code == 401
    finally:
        pool.close()
        anonymous.close()


# What the hostile client sends for an argument, by name (ids come from the victim).
HOSTILE_ARGS: dict[str, Any] = {
    "query": "Zanzibar freeze certificate",
    "project": "zanzibar",
    "key": "zanzibar-key",
    "value": "overwritten",
    "reason": "taking it over",
    "headline": "Zanzibar is ours now",
    "kind": "fact",
    "direction": "up",
    "response": "already_done",
    "name": "zanzibar",
    "text": "Zanzibar rollout notes",
    "task": "Zanzibar rollout",
    "note": "seen",
    "handoff": "Zanzibar handoff",
    "source": "claude",
    "window": "30 days",
    "older_than": "1 day",
}


def _hostile_calls(tool: Any, victim_ids: list[int]) -> list[dict[str, Any]]:
    """Arguments for a tool from its input schema: each victim id where it takes an id."""
    schema = tool.input_schema
    props = schema.get("properties", {})
    base: dict[str, Any] = {}
    id_args = []
    for arg in schema.get("required", []) + [p for p in ("project",) if p in props]:
        spec = props[arg]
        kinds = {s.get("type") for s in spec.get("anyOf", [spec])}
        if arg in HOSTILE_ARGS:
            base[arg] = HOSTILE_ARGS[arg]
        elif "enum" in spec:
            base[arg] = spec["enum"][0]
        elif "integer" in kinds:
            id_args.append(arg)
        elif "string" in kinds:
            base[arg] = "Zanzibar"
    if not id_args:
        return [base]
    return [{**base, **dict.fromkeys(id_args, i)} for i in victim_ids]


def test_a_token_for_one_workspace_never_reaches_another(served, conn, admin, victim, capsys) -> None:
    """test_tenancy's victim workspace, attacked through HTTP by a token of another workspace
    whose role can even read the victim's workspace with a token of its own."""
    ensure_role(admin, "brain_mallory_http")
    ws = int(scalar(admin, "SELECT brain.create_workspace('mallory-http') ->> 'workspace'"))
    scalar(admin, "SELECT brain.grant_workspace('brain_mallory_http', %s, 'admin')", (ws,))
    scalar(admin, "SELECT brain.grant_workspace('brain_mallory_http', %s, 'read')", (VICTIM_WS,))
    admin.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
    scalar(admin, "SELECT space_id FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384)")
    admin.execute("RESET brain.workspace")
    token = create(admin, role="brain_mallory_http", name="mallory", workspace_id=ws)["token"]
    victim_token = create(conn, role=TEST_ROLE, name="victim-laptop")["token"]
    victim_ids = [victim[k] for k in ("rule", "fact", "newer", "task", "incident", "session", "action_item")]
    # The victim's own client has an MCP session (its token's use is recorded now).
    r = post(served.url, INITIALIZE, victim_token)
    session_id = r.headers["mcp-session-id"]
    before = victim_state(admin)
    tried: list[str] = []
    crossed: list[str] = []

    async def run() -> None:
        async with agent(served.url, token) as s:
            tools = (await s.list_tools()).tools
            assert len(tools) >= 8
            boot = await s.call_tool("boot_session", {"source": "claude", "project": "zanzibar"})
            assert not boot.is_error
            for tool in sorted(tools, key=lambda t: t.name == "end_session"):
                for args in _hostile_calls(tool, victim_ids):
                    result = await s.call_tool(tool.name, args)
                    out = json.dumps(result.model_dump(), default=str)
                    tried.append(f"{tool.name}({json.dumps(args)})")
                    if VICTIM_SECRET in out.lower():
                        crossed.append(f"{tool.name}({json.dumps(args)}): {out[:200]}")

    anyio.run(run)
    # The victim's MCP session, named with this token or with none.
    search = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "Zanzibar"}},
    }
    for label, with_token in (("mallory's token", token), ("no token", None)):
        r = post(
            served.url,
            search,
            with_token,
            **{"mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"},
        )
        tried.append(f"the victim's MCP session with {label}: HTTP {r.status_code}")
        if r.status_code < 400 or VICTIM_SECRET in r.text.lower():
            crossed.append(f"the victim's MCP session with {label}: HTTP {r.status_code} {r.text[:200]}")
    if victim_state(admin) != before:
        crossed.append("the victim workspace's rows changed")
    with capsys.disabled():
        print(f"\nthrough HTTP: {len(tried)} attempts, {len(crossed)} crossings")
        for line in crossed:
            print("  crossed:", line)
    assert len(tried) > 40
    assert crossed == []
    # Its own workspace works: what it wrote is there, and only there.
    assert scalar(admin, "SELECT count(*) FROM brain.memory WHERE workspace_id = %s", (ws,)) >= 1


def test_wire_url_writes_remote_configs_that_refer_to_the_token(brain_cli, tmp_path, monkeypatch) -> None:
    token = "pbt_" + "5e" * 32
    monkeypatch.setenv("PYBRAIN_TOKEN", token)
    expected = {
        "claude-code": (
            "mcpServers",
            {"type": "http", "url": "https://brain.example.com/mcp"},
            "${PYBRAIN_TOKEN}",
        ),
        "cursor": ("mcpServers", {"url": "https://brain.example.com/mcp"}, "${env:PYBRAIN_TOKEN}"),
        "vscode": (
            "servers",
            {"type": "http", "url": "https://brain.example.com/mcp"},
            "${env:PYBRAIN_TOKEN}",
        ),
        "windsurf": ("mcpServers", {"serverUrl": "https://brain.example.com/mcp"}, "${env:PYBRAIN_TOKEN}"),
        "generic": (
            "mcpServers",
            {"type": "streamable-http", "url": "https://brain.example.com/mcp"},
            "${PYBRAIN_TOKEN}",
        ),
    }
    for client, (key, fields, reference) in expected.items():
        r = brain_cli("wire", client, "--url", "https://brain.example.com", "--token-env", "PYBRAIN_TOKEN")
        assert r.exit_code == 0, r.output
        assert token not in r.output
        assert json.loads(r.stdout) == {
            key: {"pybrain": {**fields, "headers": {"Authorization": f"Bearer {reference}"}}}
        }, client
    # --write merges into the client's file and keeps its other servers.
    target = tmp_path / ".mcp.json"
    target.write_text(json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}))
    r = brain_cli(
        "wire", "claude-code", "--url", "https://brain.example.com/mcp", "--token-env", "PYBRAIN_TOKEN",
        "--write", str(target),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    written = json.loads(target.read_text())
    assert written["mcpServers"]["github"] == {"command": "gh-mcp"}
    assert written["mcpServers"]["pybrain"]["headers"] == {"Authorization": "Bearer ${PYBRAIN_TOKEN}"}
    assert token not in target.read_text()
    # On this machine, plain http and no token (anonymous) are allowed.
    r = brain_cli("wire", "cursor", "--url", "http://127.0.0.1:8765/mcp")
    assert json.loads(r.stdout) == {"mcpServers": {"pybrain": {"url": "http://127.0.0.1:8765/mcp"}}}
    refused = {
        "clear text to another machine": ("cursor", "http://brain.example.com/mcp", "PYBRAIN_TOKEN"),
        "the token instead of its variable": ("cursor", "https://brain.example.com/mcp", token),
        "no token for another machine": ("cursor", "https://brain.example.com/mcp", None),
        "a client without references": ("claude-desktop", "https://brain.example.com/mcp", "PYBRAIN_TOKEN"),
        "credentials in the URL": ("vscode", "https://alice:pw@brain.example.com/mcp", "PYBRAIN_TOKEN"),
    }
    for label, (client, url, env) in refused.items():
        r = brain_cli("wire", client, "--url", url, *(["--token-env", env] if env else []))
        assert r.exit_code == 1, (label, r.output)
        assert token not in r.output, label
        assert r.stdout == "", label


def test_brain_serve_runs_as_a_process(cli_env, serve_url, conn) -> None:
    import os
    import subprocess
    import sys

    remember(conn, kind="fact", headline="The brain serve process answers over HTTP")
    token = create(conn, role=TEST_ROLE, name="process")["token"]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    env = {**os.environ, **cli_env, "BRAIN_SERVE_DATABASE_URL": serve_url, "BRAIN_EMBED_SERVER": "off"}
    refused = subprocess.run(
        [sys.executable, "-m", "pybrain", "serve", "--host", "0.0.0.0", "--allow-anonymous-localhost"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "this machine only" in refused.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "pybrain", "serve", "--port", str(port), "--pool-size", "3"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # (the test's server role has no connection limit: the server says so first)
        lines = [proc.stderr.readline() for _ in range(2)]
        assert "has no connection limit" in lines[0], lines
        assert f"pybrain MCP at http://127.0.0.1:{port}/mcp" in lines[1], lines
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            try:
                assert post(url, INITIALIZE).status_code == 401
                break
            except httpx2.ConnectError:
                assert time.monotonic() < deadline, "brain serve did not listen"
                time.sleep(0.2)

        async def run() -> None:
            async with agent(url, token) as s:
                found = await search(s, "brain serve process HTTP")
                assert found[0]["headline"] == "The brain serve process answers over HTTP"

        anyio.run(run)
    finally:
        proc.terminate()
        proc.wait(20)
        proc.stderr.close()
