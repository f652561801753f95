"""Answers before questions, as a person meets them: a month of Claude Code sessions captured
by the hooks (questions, replies with tool calls, long logs, a long session of near-identical
steps), then `brain search` in its own process, the MCP server through the SDK's client, and the
dashboard in a browser.

What search shows (brain.search decides, the faces only display): a captured question is
shown with the reply that answers it, the reply first; each result stands on its own verdict
(no unrelated tail; a query nothing is about gets nothing, said plainly); and a run of
near-identical turns of one session stands as its best, saying how many it folded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import anyio
import pytest
from helpers import scalar
from test_hook_capture import PROJECT, claude, wired  # noqa: F401 (fixtures)
from test_mcp import agent, text_of
from test_ui import browser, start_ui  # noqa: F401 (fixture)

from pybrain.client import Brain

FIX = (
    "Found it: gunicorn kills the webhook worker after its default 30 s timeout while the handler waits "
    "on the ledger lock, so Stripe gets a 502 and drops the event. I raised --timeout to 120 in "
    "deploy/gunicorn.conf.py and the stripe webhooks are delivered again."
)
QUESTION = "Why are the stripe webhooks being dropped?"
FOLLOW_UP = "Are the stripe webhooks still being dropped after the timeout change?"
STILL_OK = "No: none dropped since the change, the Stripe dashboard shows every event delivered."
REQUEST_ID = "f3a9c2e1d7b4"
HOSTS = ["web-01", "web-02", "web-03", "web-04", "web-05", "web-06", "db-01", "db-02", "cache-01"]


def step(n: int, host: str) -> str:
    return (
        f"Step {n} of 9: check host {host} of the shop cluster. The service is up, the disk has room, "
        "the load is low, the certificate is valid and the clock is in sync: nothing to do on this host."
    )


def log_lines(n: int) -> str:
    lines = []
    for i in range(n):
        lines.append(
            f"2026/11/20 10:{i // 60:02d}:{i % 60:02d} [info] 31#31: *{1000 + i} client 10.0.3.{i % 250} "
            f'"GET /health HTTP/1.1" 200 upstream 0.00{i % 10}s'
        )
    lines.insert(
        n // 2,
        f"2026/11/20 10:30:00 [error] 31#31: *4417 upstream timed out (110: Connection timed out) "
        f'request_id={REQUEST_ID} "POST /stripe/webhook HTTP/1.1"',
    )
    return "\n".join(lines)


@pytest.fixture
def month(claude, brain_cli, cli_env, conn, local, monkeypatch) -> dict[str, Any]:  # noqa: F811
    """What the hooks captured, and two facts written by hand, with the default embedder
    (MiniLM, as `brain init` sets it up), each process embedding for itself."""
    for key, value in (("BRAIN_EMBEDDER", "local"), ("BRAIN_EMBED_SERVER", "off")):
        cli_env[key] = value
        monkeypatch.setenv(key, value)
    brain_ = Brain(conn, embedder=local)
    brain_.use_embedding_space()
    brain_.activate_space(local.space)
    for args in (
        ["fact", "Nightly deploys of the shop run at 02:00 UTC"],
        ["fact", "The shop's staging database listens on port 6432"],
    ):
        assert brain_cli("remember", *args, "--project", PROJECT).exit_code == 0
    # the stripe session: a question, the work, the reply with the fix; a follow-up
    a = claude.transcript("5a7e0c11-2b3c-4d5e-8f90-a1b2c3d4e5f6")
    claude.start(a)
    a.user(QUESTION)
    a.assistant("Let me look at the worker logs.", tool="journalctl -u shop-web --since today")
    a.tool_result(log_lines(40))
    a.assistant(FIX)
    a.user(FOLLOW_UP)
    a.assistant(STILL_OK)
    claude.end(a)
    # a long session of host checks: near-identical steps, and a pasted log
    b = claude.transcript("6b8f1d22-3c4d-4e5f-9a01-b2c3d4e5f607")
    claude.start(b)
    b.user("Run the host checks for the shop cluster, one host at a time.")
    for n, host in enumerate(HOSTS, 1):
        b.assistant(step(n, host), tool=f"ssh {host} uptime")
        b.tool_result(f"{host}: up 41 days, load average: 0.21, 0.18, 0.12")
    b.assistant("All nine hosts of the shop cluster are healthy.")
    b.user(f"Here is this morning's nginx error log of web-03, what failed?\n{log_lines(120)}")
    b.assistant(f"One request failed: request {REQUEST_ID}, a Stripe webhook POST that timed out upstream.")
    claude.end(b)
    # a hook embeds nothing without a warm embedding server: the worker embeds what they queued
    brain(cli_env, "worker", "--once")
    return {"a": a, "b": b}


def brain(cli_env: dict[str, str], *args: str) -> str:
    """`brain ...` in its own process, as a person types it."""
    out = subprocess.run(
        [sys.executable, "-m", "pybrain", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **cli_env},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def ids_in(text: str) -> list[int]:
    """The ids a listing's lines start with ("#12 · fact ..." or "#12 fact ..."), in order."""
    return [int(m.group(1)) for m in re.finditer(r"^#(\d+)", text, re.M)]


def turn_id(conn, text: str) -> int:
    return scalar(
        conn,
        "SELECT min(memory_id) FROM brain.memory"
        " WHERE source_system = 'claude-code' AND strpos(body || headline, %s) > 0",
        (text[:40],),
    )


def test_brain_search_answers_before_questions_and_keeps_only_relevant_lines(month, cli_env, conn) -> None:
    fix, question = turn_id(conn, FIX), turn_id(conn, QUESTION)
    floor = float(scalar(conn, "SELECT brain.setting('min_relevance')::float8"))

    # The reply with the fix first, the question beside it; no line of another topic.
    out = brain(cli_env, "search", "Why were the stripe webhooks dropped")
    assert ids_in(out)[:2] == [fix, question], out
    assert "gunicorn" in out.splitlines()[0] and f"beside #{fix}" in out.splitlines()[2], out
    for unrelated in ("Nightly deploys", "Step ", "host checks"):
        assert unrelated not in out, out
    hits = json.loads(brain(cli_env, "search", "Why were the stripe webhooks dropped", "--json"))
    assert all(h["verdict"] >= floor for h in hits), [(h["id"], h["verdict"]) for h in hits]
    everything = json.loads(
        brain(cli_env, "search", "Why were the stripe webhooks dropped", "--json", "--min-relevance", "0")
    )
    assert len(everything) > len(hits), "the nearest memories below the floor are there to cut"

    # Nine near-identical steps of one session stand as one, which says how many it folded.
    out = brain(cli_env, "search", "host checks of the shop cluster")
    steps = [line for line in out.splitlines() if "Step " in line and line.startswith("#")]
    assert len(steps) == 1 and "8 near-identical turns of its session folded" in steps[0], out
    assert "Run the host checks" in out and "All nine hosts" in out, out
    hits = json.loads(brain(cli_env, "search", "host checks of the shop cluster", "--json"))
    (kept,) = [h for h in hits if "Step " in h["headline"]]
    assert len(kept["metadata"]["folded"]) == 8

    # A query no memory is about: nothing, said plainly.
    out = brain(cli_env, "search", "the axolotl's mating season")
    assert out.startswith("nothing relevant found: no memory reaches the relevance floor"), out
    assert json.loads(brain(cli_env, "search", "the axolotl's mating season", "--json")) == []

    # An exact token in a long pasted log is found, and so is the reply that names it.
    out = brain(cli_env, "search", REQUEST_ID)
    assert REQUEST_ID in out.splitlines()[1] and "One request failed" in out, out


def test_the_mcp_search_tool_shows_the_same(month, cli_env, conn) -> None:
    fix, question = turn_id(conn, FIX), turn_id(conn, QUESTION)

    async def run() -> None:
        async with agent(cli_env) as session:
            text = await text_of(session, "search", query="Why were the stripe webhooks dropped")
            assert ids_in(text.split("\n", 1)[1])[:2] == [fix, question], text
            assert f"beside #{fix}" in text.splitlines()[2] and "Nightly" not in text, text
            text = await text_of(session, "search", query="host checks of the shop cluster")
            steps = [line for line in text.splitlines() if "Step " in line]
            assert len(steps) == 1 and "8 near-identical of its session folded" in steps[0], text
            text = await text_of(session, "search", query="the axolotl's mating season")
            assert text == "Nothing relevant found: no memory reaches the relevance floor (min_relevance).", (
                text
            )

    anyio.run(run)


def test_the_dashboard_shows_the_reply_first_and_folds_a_run(month, db_url, conn, tmp_path, browser) -> None:  # noqa: F811
    fix, question = turn_id(conn, FIX), turn_id(conn, QUESTION)
    for ui in start_ui(db_url, tmp_path, env={"BRAIN_EMBEDDER": "local"}):
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        try:
            page.goto(ui.url + "/memories?q=Why+were+the+stripe+webhooks+dropped")
            assert page.locator("#results").count() == 1, ui.log.read_text()[-3000:]
            rows = page.locator("#results tbody tr")
            first = [int(rows.nth(i).locator("td").first.inner_text()) for i in range(rows.count())]
            assert first[:2] == [fix, question], first
            assert f"beside #{fix}" in rows.nth(1).inner_text()
            assert "Nightly deploys" not in page.inner_text("#results")
            page.goto(ui.url + "/memories?q=host+checks+of+the+shop+cluster")
            steps = [t for t in page.locator("#results tbody tr").all_inner_texts() if "Step " in t]
            assert len(steps) == 1 and "8 near-identical of its session folded" in steps[0], steps
            page.goto(ui.url + "/memories?q=the+axolotl%27s+mating+season")
            assert page.locator("#results").count() == 0
            assert "Nothing relevant found" in page.inner_text("p.empty")
        finally:
            context.close()
