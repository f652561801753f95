"""Belief revision: supersede chains, recall banners, unsupersede, forget, audit."""

from __future__ import annotations

import json

import pytest
from helpers import call_rows, one, raises_br, remember, rows, scalar, unit


def supersede(conn, old_id: int, headline: str, **kwargs) -> dict:
    (row,) = call_rows(conn, "supersede", old_id=old_id, headline=headline, **kwargs)
    return row


def recall(conn, memory_id: int) -> dict:
    return scalar(conn, "SELECT brain.recall(%s)", (memory_id,))


def state(conn, memory_id: int) -> dict:
    return one(
        conn,
        "SELECT state, superseded_by, supersedes, supersede_reason FROM brain.memory WHERE memory_id = %s",
        (memory_id,),
    )


@pytest.fixture
def chain(conn) -> list[int]:
    """Three versions of one belief: a → b → c."""
    a = remember(
        conn,
        kind="fact",
        headline="ON script starts the MCP server",
        embedding=unit(1.0),
        pinned=True,
        tags=["startup"],
    )["memory_id"]
    b = supersede(
        conn, a, "ON script starts MCP via tmux", reason="found the tmux call", embedding=unit(0.8)
    )["memory_id"]
    c = supersede(
        conn,
        b,
        "MCP client spawns the server since v0.7",
        body="The ON script no longer starts it.",
        reason="v0.7 changed start-up",
        embedding=unit(0.7),
    )["memory_id"]
    return [a, b, c]


def test_supersede_chain_of_three_links_every_version(conn, chain) -> None:
    a, b, c = chain
    assert state(conn, a) == {
        "state": "superseded",
        "superseded_by": b,
        "supersedes": None,
        "supersede_reason": "found the tmux call",
    }
    assert state(conn, b) == {
        "state": "superseded",
        "superseded_by": c,
        "supersedes": a,
        "supersede_reason": "v0.7 changed start-up",
    }
    assert state(conn, c)["state"] == "active"
    assert scalar(conn, "SELECT brain.current_version(%s)", (a,)) == c


def test_recall_of_an_old_version_carries_a_banner_to_the_end_of_the_chain(conn, chain) -> None:
    a, b, c = chain
    m = recall(conn, a)
    assert m["headline"] == "ON script starts the MCP server"
    assert m["current_id"] == c
    assert m["banner"].startswith("SUPERSEDED on ")
    assert f"by #{b}" in m["banner"] and f"Current version: #{c}" in m["banner"]
    assert "MCP client spawns the server since v0.7" in m["banner"]
    current = recall(conn, c)
    assert current["banner"] is None and current["current_id"] == c
    assert current["body"] == "The ON script no longer starts it."


def test_supersede_inherits_tags_but_not_the_pin_by_default(conn, chain) -> None:
    _, b, _ = chain
    assert one(conn, "SELECT pinned, tags FROM brain.memory WHERE memory_id = %s", (b,)) == {
        "pinned": False,
        "tags": ["startup"],
    }


def test_inherit_pinned_on_request(conn) -> None:
    a = remember(conn, kind="rule", headline="Run tests before pushing", pinned=True, severity="BLOCKER")[
        "memory_id"
    ]
    b = supersede(conn, a, "Run the full suite before pushing", reason="stricter", inherit_pinned=True)[
        "memory_id"
    ]
    assert scalar(conn, "SELECT pinned FROM brain.memory WHERE memory_id = %s", (b,)) is True


def test_superseded_rule_becomes_deprecated_and_unsupersede_restores_it(conn) -> None:
    a = remember(conn, kind="rule", headline="Use npm", severity="BLOCKER")["memory_id"]
    b = supersede(conn, a, "Use pnpm", reason="monorepo")["memory_id"]
    assert scalar(conn, "SELECT severity FROM brain.rule WHERE memory_id = %s", (a,)) == "DEPRECATED"
    assert scalar(conn, "SELECT severity FROM brain.rule WHERE memory_id = %s", (b,)) == "BLOCKER"
    assert scalar(conn, "SELECT brain.unsupersede(%s)", (a,)) == a
    assert scalar(conn, "SELECT severity FROM brain.rule WHERE memory_id = %s", (a,)) == "BLOCKER"
    assert state(conn, a)["state"] == "active"
    assert state(conn, b)["state"] == "tombstoned"


def test_supersede_requires_a_reason(conn) -> None:
    a = remember(conn, kind="fact", headline="Port is 8080")["memory_id"]
    for reason in (None, "", "   "):
        with raises_br("BR014"):
            supersede(conn, a, "Port is 9090", reason=reason)
    assert state(conn, a)["state"] == "active"


def test_supersede_goes_through_the_gate(conn) -> None:
    a = remember(conn, kind="fact", headline="Port is 8080")["memory_id"]
    with raises_br("BR007"):
        supersede(conn, a, "Port is 9090", body="password=hunter2hunter2hunter2", reason="r")
    with raises_br("BR004"):
        supersede(conn, a, " ".join(["long"] * 16), reason="r")
    assert state(conn, a)["state"] == "active"
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 1


def test_superseding_an_old_version_points_at_the_current_one(conn, chain) -> None:
    a, _, c = chain
    with raises_br("BR011") as caught:
        supersede(conn, a, "Something else", reason="r")
    assert f"#{c}" in caught.error.diag.message_hint


def test_supersede_with_the_same_text_is_refused(conn) -> None:
    a = remember(conn, kind="fact", headline="Port is 8080")["memory_id"]
    with raises_br("BR011"):
        supersede(conn, a, "port is   8080", reason="r")


@pytest.mark.usefixtures("chain")
def test_default_reads_exclude_superseded_rows_from_dedup(conn) -> None:
    again = remember(conn, kind="fact", headline="ON script starts the MCP server")
    assert again["action"] == "created", "exact dedup only matches active memories"


def test_unsupersede_refuses_when_the_successor_moved_on(conn, chain) -> None:
    a, b, c = chain
    with raises_br("BR011") as caught:
        scalar(conn, "SELECT brain.unsupersede(%s)", (a,))
    assert f"Unsupersede #{b} first" in caught.error.diag.message_hint
    assert scalar(conn, "SELECT brain.unsupersede(%s)", (b,)) == b
    assert state(conn, c)["state"] == "tombstoned"
    assert state(conn, b)["state"] == "active"
    assert recall(conn, a)["current_id"] == b


def test_unsupersede_of_an_active_memory_is_refused(conn) -> None:
    a = remember(conn, kind="fact", headline="Port is 8080")["memory_id"]
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.unsupersede(%s)", (a,))


def test_forget_tombstones_with_reason_and_replacement(conn) -> None:
    a = remember(conn, kind="fact", headline="Old wiki lives at wiki.local")["memory_id"]
    b = remember(conn, kind="fact", headline="Docs live in the repo")["memory_id"]
    with raises_br("BR014"):
        scalar(conn, "SELECT brain.forget(%s, '')", (a,))
    scalar(conn, "SELECT brain.forget(%s, reason => 'wiki retired', replaced_by => %s)", (a, b))
    m = recall(conn, a)
    assert m["state"] == "tombstoned"
    assert m["banner"] == f"FORGOTTEN: wiki retired. Replaced by #{b}."
    assert m["current_id"] == b
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.forget(%s, 'again')", (a,))


def test_forget_never_deletes(conn) -> None:
    a = remember(conn, kind="fact", headline="Temporary fact")["memory_id"]
    scalar(conn, "SELECT brain.forget(%s, 'no longer true')", (a,))
    assert scalar(conn, "SELECT count(*) FROM brain.memory") == 1


def test_forget_checks_its_arguments(conn) -> None:
    a = remember(conn, kind="fact", headline="A fact")["memory_id"]
    with raises_br("BR010"):
        scalar(conn, "SELECT brain.forget(%s, 'r', replaced_by => 999)", (a,))
    with raises_br("BR009"):
        scalar(conn, "SELECT brain.forget(%s, 'r', replaced_by => %s)", (a, a))
    gone = remember(conn, kind="fact", headline="Gone fact")["memory_id"]
    scalar(conn, "SELECT brain.forget(%s, 'wrong')", (gone,))
    with raises_br("BR011"):
        scalar(conn, "SELECT brain.forget(%s, 'r', replaced_by => %s)", (a, gone))
    m = scalar(conn, "SELECT brain.recall(%s)", (gone,))
    assert m["current_id"] is None and m["banner"] == "FORGOTTEN: wrong."
    with raises_br("BR010"):
        scalar(conn, "SELECT brain.forget(999, 'r')")


def test_recall_of_a_missing_memory(conn) -> None:
    with raises_br("BR010"):
        recall(conn, 12345)


def test_recall_counts_accesses(conn) -> None:
    a = remember(conn, kind="fact", headline="Counted")["memory_id"]
    recall(conn, a)
    assert recall(conn, a)["access_count"] == 2


def test_every_mutation_is_audited_with_a_snapshot(conn, chain) -> None:
    a, b, c = chain
    scalar(conn, "SELECT brain.unsupersede(%s)", (b,))
    scalar(conn, "SELECT brain.forget(%s, 'wrong')", (b,))
    trail = rows(conn, "SELECT memory_id, action, actor, snapshot FROM brain.audit ORDER BY audit_id")
    assert [(t["memory_id"], t["action"]) for t in trail] == [
        (a, "insert"),
        (b, "insert"),
        (a, "supersede"),
        (c, "insert"),
        (b, "supersede"),
        (c, "forget"),
        (b, "unsupersede"),
        (b, "forget"),
    ]
    assert all(t["snapshot"]["id"] == t["memory_id"] and t["actor"] for t in trail)
    assert trail[2]["snapshot"]["state"] == "superseded"


def test_a_supersede_of_a_captured_turn_is_an_authored_memory(conn) -> None:
    """A person correcting what was said in a session writes their own memory: explicit, of
    their headline, with its own source, not the turn's transcript reference and role."""
    turns = [
        {"ref": "s1/0", "role": "user", "text": "Where does staging pgbouncer listen now?"},
        {"ref": "s1/1", "role": "assistant", "text": "Through pgbouncer on port 6432, moved on day 8."},
    ]
    conn.execute(
        "SELECT count(*) FROM brain.observe_transcript(%s::jsonb, 'claude-code')", (json.dumps(turns),)
    )
    turn = scalar(conn, "SELECT memory_id FROM brain.memory WHERE source_ref = 's1/1'")
    new = supersede(
        conn,
        turn,
        "Staging pgbouncer listens on port 5433",
        body="Moved on day 8.",
        reason="the port changed",
        source="alice",
    )["memory_id"]
    m = one(
        conn,
        "SELECT kind, origin, category, headline, source_agent, source_system, source_ref, metadata"
        " FROM brain.memory WHERE memory_id = %s",
        (new,),
    )
    assert (m["kind"], m["origin"], m["headline"]) == (
        "fact",
        "explicit",
        "Staging pgbouncer listens on port 5433",
    )
    assert m["category"] != "episodic" and m["source_agent"] == "alice"
    assert (m["source_system"], m["source_ref"]) == (None, None)
    assert "role" not in m["metadata"] and "turn" not in m["metadata"]
    context = scalar(conn, "SELECT brain.prompt_context('which port does staging pgbouncer listen on?')")
    (line,) = [x for x in context["text"].splitlines() if x.startswith(f"- #{new} ")]
    assert "Staging pgbouncer listens on port 5433" in line, line
