"""Dependent staleness: a supersede marks what still states the old value.

When the staging port fact is superseded (6432 → 5433), the rule and the
captured turn that still say 6432 are marked as depending on a changed fact,
with a link to the change, wherever they are shown (boot, prompt context,
search, the CLI, MCP), and rank below the current statement; `brain stale`
lists them; undoing the supersede takes the marks away; another project and
another workspace see none of it.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import psycopg
import psycopg.rows
import pytest
from helpers import owner_execute, scalar
from test_mcp import agent, call, text_of

from pybrain.client import Brain, render_boot
from pybrain.embed import get_embedder

OLD = "Staging pgbouncer listens on port 6432"
NEW = "Staging pgbouncer listens on port 5433"
RULE = "Connect to staging only through pgbouncer on port 6432, never to postgres directly"
QUESTION = "Which port does staging pgbouncer listen on?"
ANSWER = "Staging pgbouncer listens on 6432, the default we set up."


def mark(on: int, by: int) -> str:
    return f"(depends on #{on}, changed by #{by}: brain stale)"


@pytest.fixture
def infra(conn: psycopg.Connection) -> dict[str, Any]:
    """A project whose port fact, rule and captured turns say 6432; another project that
    says 6432 of something else; the fact superseded by 5433."""
    brain = Brain(conn, embedder=get_embedder("hash"))
    brain.use_embedding_space()
    ids: dict[str, Any] = {"brain": brain}
    ids["fact"] = brain.remember("fact", OLD, project="infra").memory_id
    ids["rule"] = brain.remember("rule", RULE, project="infra", severity="BLOCKER").memory_id
    turns = [
        {"ref": "t1/0-user", "role": "user", "text": QUESTION, "at": "2026-11-20T10:00:00Z"},
        {"ref": "t1/0-assistant", "role": "assistant", "text": ANSWER, "at": "2026-11-20T10:00:05Z"},
    ]
    brain.observe_transcript(turns, source_system="claude-code", project="infra", source_agent="claude-code")
    ids["turn"] = scalar(conn, "SELECT memory_id FROM brain.memory WHERE source_ref = 't1/0-assistant'")
    ids["asked"] = scalar(conn, "SELECT memory_id FROM brain.memory WHERE source_ref = 't1/0-user'")
    ids["other"] = brain.remember("fact", "The web cache listens on port 6432", project="web").memory_id
    # a trajectory whose steps (not its problem or outcome) state the old port
    ids["trajectory"] = brain.record_trajectory(
        "The staging migrations hung on a locked table",
        [
            {
                "action": "Checked the locks through pgbouncer",
                "command": "psql -h staging -p 6432 -c 'select 1'",
            }
        ],
        outcome="Killed the idle transaction; migrations ran.",
        project="infra",
    ).memory_id
    ids["new"] = brain.supersede(ids["fact"], NEW, "moved to the new pgbouncer on day 8").memory_id
    return ids


def stale_rows(conn: psycopg.Connection, **kw: Any) -> list[dict[str, Any]]:
    names = ", ".join(f"{k} => %({k})s" for k in kw)
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        return cur.execute(f"SELECT * FROM brain.stale({names})", kw).fetchall()


def test_a_supersede_marks_what_states_the_old_value(conn, infra) -> None:
    rows = stale_rows(conn, project="infra")
    assert {r["id"] for r in rows} == {infra["rule"], infra["turn"], infra["trajectory"]}
    for r in rows:
        assert r["old_values"] == ["6432"]
        assert (r["changed_id"], r["change_id"]) == (infra["fact"], infra["new"])
        assert r["changed_headline"] == OLD and r["change_headline"] == NEW
    # the question states no value, the other project's 6432 is another fact's
    assert infra["asked"] not in {r["id"] for r in rows}
    assert stale_rows(conn, project="web") == []
    assert {r["id"] for r in stale_rows(conn)} == {infra["rule"], infra["turn"], infra["trajectory"]}
    assert {r["id"] for r in stale_rows(conn, change=infra["new"])} == {
        infra["rule"],
        infra["turn"],
        infra["trajectory"],
    }
    assert stale_rows(conn, change=infra["other"]) == []


def test_a_supersede_reads_the_memories_holding_the_old_value_not_the_project(conn) -> None:
    """The marks' candidates are the memories whose words hold an old value, found through the
    full-text index (brain._project_holding, as the owner in the caller's own workspace): as the
    caller, under row-level security, `@@` could not use the index and the supersede read every
    memory of the project (10k memories: 4 ms, and the distinguishing terms of each candidate
    computed again, 10 ms). Counted as the rows the supersede reads of brain.memory, in a
    project of 3,000."""
    brain = Brain(conn, embedder=get_embedder("hash"))
    owner_execute(
        conn,
        "INSERT INTO brain.memory (kind, project, headline, normalized)"
        " SELECT 'rule', 'infra', x.t, lower(x.t) FROM generate_series(1, 3000) AS i,"
        " LATERAL (SELECT format('Nightly job %s of team %s exports the ledger', i, i % 7) AS t) AS x",
    )
    owner_execute(conn, "ANALYZE brain.memory")
    fact = brain.remember("fact", OLD, project="infra").memory_id
    rule = brain.remember("rule", RULE, project="infra").memory_id
    read = (
        "SELECT coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0)"
        " FROM pg_stat_xact_user_tables WHERE schemaname = 'brain' AND relname = 'memory'"
    )
    conn.execute("BEGIN")
    before = scalar(conn, read)
    new = scalar(conn, "SELECT (brain.supersede(%s, %s, 'moved')).memory_id", (fact, NEW))
    rows = scalar(conn, read) - before
    conn.execute("COMMIT")
    assert {r["id"] for r in stale_rows(conn, change=new)} == {rule}
    assert rows < 500, rows


@pytest.mark.parametrize("query", ["staging pgbouncer port", "staging pgbouncer port 6432"])
def test_search_ranks_the_marked_below_the_current_statement_and_marks_them(conn, infra, query) -> None:
    # (asked with the old value, the memories that state it match better than the change)
    hits = infra["brain"].search(query, project="infra")
    order = [h["id"] for h in hits]
    assert infra["new"] in order and infra["rule"] in order and infra["turn"] in order
    for dependent in (infra["rule"], infra["turn"]):
        assert order.index(infra["new"]) < order.index(dependent), order
    by_id = {h["id"]: h for h in hits}
    for dependent in (infra["rule"], infra["turn"]):
        assert by_id[dependent]["stale"] == {"on": infra["fact"], "by": infra["new"], "values": ["6432"]}
        # the mark says more than "older": the older mark is left to memories it alone explains
        assert by_id[dependent]["newer_related"] is None
    assert by_id[infra["new"]]["stale"] is None
    # another project's search sees no mark
    assert all(h["stale"] is None for h in infra["brain"].search("port 6432", project="web"))


def test_boot_and_prompt_context_show_the_mark(conn, infra) -> None:
    payload = infra["brain"].boot_session("claude", project="infra")
    (blocker,) = [b for b in payload["sections"]["blockers"] if b["id"] == infra["rule"]]
    assert blocker["stale"] == " " + mark(infra["fact"], infra["new"])
    text = render_boot(payload)
    (line,) = [x for x in text.splitlines() if x.startswith(f"- #{infra['rule']} ")]
    assert line.endswith(mark(infra["fact"], infra["new"]))

    embedder = get_embedder("hash")
    out = scalar(
        conn,
        "SELECT brain.prompt_context(%s, query_embedding => %s, embedding_space => %s, project => 'infra')",
        (QUESTION, embedder.embed_one(QUESTION), embedder.space),
    )
    lines = [x for x in (out["text"] or "").splitlines() if x.startswith("- #")]
    print("\n".join(lines))
    ids = [int(re.match(r"- #(\d+) ", x).group(1)) for x in lines]
    assert infra["new"] in ids, lines
    stated = [x for x in lines if "6432" in x]
    assert stated, lines
    for x in stated:
        assert mark(infra["fact"], infra["new"]) in x
        assert ids.index(infra["new"]) < lines.index(x)


def test_unsupersede_takes_the_marks_away(conn, infra) -> None:
    infra["brain"].unsupersede(infra["fact"])
    assert stale_rows(conn) == []
    assert all(h["stale"] is None for h in infra["brain"].search("staging pgbouncer port", project="infra"))
    payload = infra["brain"].boot_session("claude", project="infra")
    assert all(not b["stale"] for b in payload["sections"]["blockers"])
    # superseding again marks them again
    again = infra["brain"].supersede(infra["fact"], NEW + " since day 8", "moved").memory_id
    assert {(r["id"], r["change_id"]) for r in stale_rows(conn)} == {
        (infra["rule"], again),
        (infra["turn"], again),
        (infra["trajectory"], again),
    }


def test_another_workspace_sees_no_marks(conn, admin, infra) -> None:
    ws = int(scalar(admin, "SELECT brain.create_workspace('elsewhere') ->> 'workspace'"))
    scalar(admin, "SELECT brain.grant_workspace(%s, %s, 'admin')", (conn.info.user, ws))
    conn.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
    assert stale_rows(conn) == []
    assert scalar(conn, "SELECT count(*) FROM brain.stale_mark") == 0
    # a client cannot plant a mark in its own workspace: only a supersede writes one
    conn.execute("SELECT set_config('brain.workspace', '', false)")
    with pytest.raises(psycopg.Error) as refused:
        conn.execute(
            "INSERT INTO brain.stale_mark (memory_id, changed_id, change_id, old_values)"
            " VALUES (%s, %s, %s, '{x1}')",
            (infra["other"], infra["fact"], infra["new"]),
        )
    assert refused.value.sqlstate == "BR020"


def test_cli_and_mcp_list_what_a_change_left(brain_cli, cli_env, conn, infra) -> None:
    out = brain_cli("stale", "--project", "infra").output
    assert f"#{infra['rule']} rule" in out and f"#{infra['turn']} " in out
    assert f"states 6432 of #{infra['fact']}" in out and f"changed by #{infra['new']}" in out
    assert "nothing stale" in brain_cli("stale", "--project", "web").output
    listed = json.loads(brain_cli("stale", "--json").output)
    assert {r["id"] for r in listed} == {infra["rule"], infra["turn"], infra["trajectory"]}
    found = brain_cli("search", "staging pgbouncer port", "--project", "infra").output
    assert f"depends on #{infra['fact']}, changed by #{infra['new']}: brain stale" in found

    async def run() -> None:
        async with agent(cli_env, profile="full") as s:
            got = await call(s, "stale", project="infra")
            assert {r["id"] for r in got["stale"]} == {infra["rule"], infra["turn"], infra["trajectory"]}
            assert (await call(s, "stale", project="web"))["stale"] == []
            shown = await text_of(s, "search", query="staging pgbouncer port", project="infra")
            (line,) = [x for x in shown.splitlines() if x.startswith(f"#{infra['rule']} ")]
            assert f"depends on #{infra['fact']}, changed by #{infra['new']}" in line

    asyncio.run(run())


def test_a_packs_lines_show_the_mark(conn, infra) -> None:
    brain = infra["brain"]
    brain.create_pack(
        "staging", memory_ids=[infra["new"], infra["rule"], infra["trajectory"]], project="infra"
    )
    rendered = brain.render_pack("staging")
    by_id = {i["id"]: i for i in rendered["items"]}
    assert by_id[infra["new"]]["stale"] == ""
    for dependent in (infra["rule"], infra["trajectory"]):
        assert by_id[dependent]["stale"] == " " + mark(infra["fact"], infra["new"])
        (line,) = [x for x in rendered["text"].splitlines() if x.startswith(f"- #{dependent} ")]
        assert line.endswith(mark(infra["fact"], infra["new"]))
    brain.unsupersede(infra["fact"])
    assert mark(infra["fact"], infra["new"]) not in brain.render_pack("staging")["text"]


def test_the_dashboards_search_marks_them(db_url: str, infra, tmp_path) -> None:
    import requests
    from test_ui import start_ui

    for ui in start_ui(db_url, tmp_path):
        r = requests.get(ui.url + "/memories?q=staging+pgbouncer+port&project=infra")
        assert r.status_code == 200
        row = r.text.split(f'<a href="/memories/{infra["rule"]}">{infra["rule"]}</a>')[1].split("</tr>")[0]
        assert f'depends on <a href="/memories/{infra["fact"]}">#{infra["fact"]}</a>' in row, row
        assert f'changed by <a href="/memories/{infra["new"]}">#{infra["new"]}</a>' in row, row
        new_row = r.text.split(f'<a href="/memories/{infra["new"]}">{infra["new"]}</a>')[1].split("</tr>")[0]
        assert "depends on" not in new_row
