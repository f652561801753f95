"""Request keys: a write sent again after its acknowledgement was lost changes nothing.

A client that lost the answer to a write (a failover, a connection cut during its
COMMIT) cannot know whether it took effect. `remember` sent again meets exact dedup
and `supersede` is refused naming the current version; the writes that would apply
twice (a rating, an annotation, an action item) take a `request_key`: the first call's
answer is kept in its workspace (brain.request_answer, under row-level security),
the same key with the same arguments is answered with it and changes nothing, the
same key with other arguments is refused (BR023). docs/sql-api.md, "Requests sent
again: request keys".
"""

from __future__ import annotations

import inspect
import threading
import time
from typing import Any

import psycopg
import pytest
from conftest import with_database
from helpers import owner_execute, raises_br, remember, rows, scalar
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.errors import RequestKeyReused

RATE = "SELECT brain.rate(id => %s, direction => %s, request_key => %s)"


def _votes(conn: psycopg.Connection, memory_id: int) -> tuple[int, int]:
    (row,) = rows(conn, "SELECT upvotes, downvotes FROM brain.memory WHERE memory_id = %s", (memory_id,))
    return row["upvotes"], row["downvotes"]


def _audit(conn: psycopg.Connection, action: str) -> int:
    return scalar(conn, "SELECT count(*) FROM brain.audit WHERE action = %s", (action,))


def _member(admin: psycopg.Connection, database: str, role: str, workspace: int, access: str) -> str:
    """The URL of a login role in brain_user with `access` to `workspace` and nothing else."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw' IN ROLE brain_user")
    scalar(admin, "SELECT brain.grant_workspace(%s, %s, %s)", (role, workspace, access))
    return with_database(database, conninfo_to_dict(database)["dbname"], user=role, password="pw")


def test_a_rating_sent_again_with_its_key_counts_once_and_gets_the_first_answer(conn) -> None:
    memory = remember(conn, kind="fact", headline="The cache lives on host nine")["memory_id"]
    first = scalar(conn, RATE, (memory, "up", "rate-7f3c"))
    again = scalar(conn, RATE, (memory, "up", "rate-7f3c"))
    assert first == again == {"id": memory, "upvotes": 1, "downvotes": 0, "rating": 1}
    assert _votes(conn, memory) == (1, 0)
    assert _audit(conn, "rate") == 1  # the answer again, no second audit row
    # Another vote with another key counts; the first key still answers as the first time.
    assert scalar(conn, RATE, (memory, "up", "rate-91aa"))["upvotes"] == 2
    assert scalar(conn, RATE, (memory, "up", "rate-7f3c")) == first
    assert _votes(conn, memory) == (2, 0)


def test_without_a_key_a_rating_sent_again_counts_again_as_before(conn) -> None:
    memory = remember(conn, kind="fact", headline="Staging deploys run nightly")["memory_id"]
    for _ in range(2):
        scalar(conn, "SELECT brain.rate(%s, 'up')", (memory,))
    scalar(conn, RATE, (memory, "up", None))  # an explicit NULL key is no key
    assert _votes(conn, memory) == (3, 0)
    assert scalar(conn, "SELECT count(*) FROM brain.request_answer") == 0


def test_a_key_names_one_request_other_arguments_are_refused(conn) -> None:
    a = remember(conn, kind="fact", headline="The nightly export starts at two")["memory_id"]
    b = remember(conn, kind="fact", headline="The billing cron starts at four")["memory_id"]
    scalar(conn, RATE, (a, "up", "key-1"))
    refusals = []
    for statement, params in (
        (RATE, (a, "down", "key-1")),  # another direction
        (RATE, (b, "up", "key-1")),  # a key from one memory used for another
        (RATE, (a, "UP", "key-1")),  # the arguments as sent, not as understood
        (  # another source
            "SELECT brain.rate(id => %s, direction => 'up', source => 'claude', request_key => %s)",
            (a, "key-1"),
        ),
        ("SELECT brain.annotate(id => %s, note => 'Moved to three', request_key => %s)", (a, "key-1")),
        ("SELECT brain.create_action_item(text => 'Check the export', request_key => %s)", ("key-1",)),
    ):
        with raises_br("BR023") as refused:
            conn.execute(statement, params)
        refusals.append(refused.error)
    error = refusals[0]
    said = f"{error.diag.message_primary} {error.diag.message_detail} {error.diag.message_hint}"
    assert "key-1" not in said
    assert "brain.rate" in error.diag.message_primary and "another request" in error.diag.message_primary
    assert '"function": "rate"' in error.diag.message_detail
    assert _votes(conn, a) == (1, 0) and _votes(conn, b) == (0, 0)
    assert scalar(conn, "SELECT count(*) FROM brain.annotation") == 0
    assert scalar(conn, "SELECT count(*) FROM brain.action_item") == 0


def test_a_call_that_failed_keeps_nothing_and_its_key_stays_free(conn) -> None:
    memory = remember(conn, kind="fact", headline="The queue drains in an hour")["memory_id"]
    with raises_br("BR009"):
        conn.execute(RATE, (memory, "sideways", "key-2"))
    with raises_br("BR010"):
        conn.execute(RATE, (999_999, "up", "key-2"))
    assert scalar(conn, "SELECT count(*) FROM brain.request_answer") == 0
    assert scalar(conn, RATE, (memory, "down", "key-2"))["downvotes"] == 1
    # inside a transaction that is rolled back, the key goes with the vote
    with pytest.raises(psycopg.errors.QueryCanceled), conn.transaction():
        conn.execute(RATE, (memory, "up", "key-3"))
        conn.execute("SET LOCAL statement_timeout = '1ms'")
        conn.execute("SELECT pg_sleep(1)")
    assert scalar(conn, RATE, (memory, "up", "key-3"))["upvotes"] == 1


def test_an_annotation_and_an_action_item_sent_again_with_their_keys_are_stored_once(conn) -> None:
    memory = remember(conn, kind="fact", headline="Backups are copied to the second site")["memory_id"]
    annotate = "SELECT brain.annotate(id => %s, note => %s, request_key => %s)"
    first = scalar(conn, annotate, (memory, "Weekly, on Sundays", "note-1"))
    assert scalar(conn, annotate, (memory, "Weekly, on Sundays", "note-1")) == first
    assert scalar(conn, "SELECT count(*) FROM brain.annotation") == 1
    assert _audit(conn, "annotate") == 1
    with raises_br("BR023"):
        conn.execute(annotate, (memory, "Weekly, on Mondays", "note-1"))

    session = scalar(conn, "SELECT brain.boot_session('claude', project => 'ops') -> 'session_id'")
    conn.execute("SELECT brain.set_setting('action_items_per_hour', '1')")
    item = "SELECT brain.create_action_item(text => %s, project => 'ops', session => %s, request_key => %s)"
    raised = scalar(conn, item, ("Rotate the backup keys", session, "item-1"))
    # sent again: the same item, and the hourly limit of 1 is not spent twice
    assert scalar(conn, item, ("Rotate the backup keys", session, "item-1")) == raised
    assert scalar(conn, "SELECT count(*) FROM brain.action_item") == 1
    with raises_br("BR009"):  # a second item is over the limit, as before
        conn.execute(item, ("Check the backup restore", session, "item-2"))


@pytest.mark.parametrize(
    ("key", "why"),
    [("", "empty"), (" ", "blank"), ("k" * 256, "too long"), ("a\nb", "a line break"), ("a\x01b", "control")],
)
def test_a_key_that_is_no_key_is_refused_without_repeating_it(conn, key: str, why: str) -> None:
    memory = remember(conn, kind="fact", headline="Keys are checked")["memory_id"]
    with raises_br("BR009") as refused:
        conn.execute(RATE, (memory, "up", key))
    said = f"{refused.error.diag.message_primary} {refused.error.diag.message_detail}"
    assert "request_key" in said and (len(key) < 3 or key not in said), why
    assert _votes(conn, memory) == (0, 0)
    assert scalar(conn, RATE, (memory, "up", "k" * 255))["upvotes"] == 1  # 255 characters is a key


def test_the_key_is_kept_as_a_digest_and_no_argument_is_kept(conn, admin) -> None:
    memory = remember(conn, kind="fact", headline="The report is mailed on Fridays")["memory_id"]
    key = "zq-key-1b7e-report"
    note = scalar(
        conn, "SELECT brain.annotate(id => %s, note => 'zq-note-private', request_key => %s)", (memory, key)
    )
    tables = [
        r["relname"]
        for r in rows(
            admin, "SELECT relname FROM pg_class WHERE relnamespace = 'brain'::regnamespace AND relkind = 'r'"
        )
    ]
    found = [
        t
        for t in tables
        if admin.execute(
            sql.SQL("SELECT 1 FROM {} x WHERE x::text ~ 'zq-key' LIMIT 1").format(sql.Identifier("brain", t))
        ).fetchone()
    ]
    assert found == []
    (kept,) = rows(admin, "SELECT function_name, answer, length(key_hash) AS n FROM brain.request_answer")
    assert kept == {"function_name": "annotate", "answer": note, "n": 32}


def test_the_same_key_in_another_workspace_is_another_request(admin, database, conn) -> None:
    """Keys are per workspace: a key another workspace used neither leaks its answer nor
    blocks the call, and no role reads another workspace's kept answers."""
    beta_ws = int(scalar(admin, "SELECT brain.create_workspace('beta') ->> 'workspace'"))
    alpha = psycopg.connect(_member(admin, database, "keys_alpha", 1, "write"), autocommit=True)
    beta = psycopg.connect(_member(admin, database, "keys_beta", beta_ws, "write"), autocommit=True)
    try:
        Brain(beta, embedder=get_embedder("hash")).use_embedding_space()
        a = remember(alpha, kind="fact", headline="Alpha's cache lives on host nine")["memory_id"]
        b = remember(beta, kind="fact", headline="Beta's queue lives on host two")["memory_id"]
        shared = "retry-0001"
        alpha_answer = scalar(alpha, RATE, (a, "up", shared))
        # Beta names alpha's memory id with alpha's key: no memory of beta's, no answer of alpha's.
        with raises_br("BR010"):
            beta.execute(RATE, (a, "up", shared))
        # Beta's own call with the same key is its own request, counted in beta.
        beta_answer = scalar(beta, RATE, (b, "down", shared))
        assert beta_answer == {"id": b, "upvotes": 0, "downvotes": 1, "rating": -1}
        assert scalar(beta, RATE, (b, "down", shared)) == beta_answer
        assert scalar(alpha, RATE, (a, "up", shared)) == alpha_answer
        # Beta choosing alpha's workspace is refused before any key is looked up.
        beta.execute("SELECT set_config('brain.workspace', '1', false)")
        with raises_br("BR020"):
            beta.execute(RATE, (a, "up", shared))
        beta.execute("SELECT set_config('brain.workspace', '', false)")
        # Each role sees its own workspace's kept answers only; a direct write is refused.
        assert scalar(beta, "SELECT array_agg(workspace_id) FROM brain.request_answer") == [beta_ws]
        assert scalar(alpha, "SELECT array_agg(workspace_id) FROM brain.request_answer") == [1]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no client deletes (migration 034)
            beta.execute("DELETE FROM brain.request_answer")
        for statement in (
            "UPDATE brain.request_answer SET answer = '{\"upvotes\": 99}'",
            "INSERT INTO brain.request_answer (key_hash, function_name, request_hash, answer)"
            " VALUES (sha256('k'), 'rate', sha256('r'), '{}')",
            "SELECT brain._keep_answer('retry-0001', '{\"upvotes\": 99}')",
            "SELECT brain._request_answer('planted-1', 'rate', '{}')",
            "SELECT brain._forget_request_keys(now())",
        ):
            with raises_br("BR020"):
                beta.execute(statement)
        assert _votes(admin, a) == (1, 0) and _votes(admin, b) == (0, 1)
    finally:
        alpha.close()
        beta.close()


def test_a_reader_is_refused_as_for_any_write(admin, database, conn) -> None:
    memory = remember(conn, kind="fact", headline="Readers read")["memory_id"]
    reader_url = _member(admin, database, "keys_reader", 1, "read")
    with psycopg.connect(reader_url, autocommit=True) as reader, raises_br("BR020"):
        reader.execute(RATE, (memory, "up", "reader-1"))
    assert scalar(conn, "SELECT count(*) FROM brain.request_answer") == 0


def test_the_same_key_sent_at_once_waits_for_the_first_and_gets_its_answer(conn, db_url) -> None:
    memory = remember(conn, kind="fact", headline="Two windows rate at once")["memory_id"]
    answers: list[Any] = []
    with psycopg.connect(db_url) as first, psycopg.connect(db_url, autocommit=True) as second:
        first.execute(RATE, (memory, "up", "both-1"))  # uncommitted: the key is claimed

        def send_again() -> None:
            answers.append(scalar(second, RATE, (memory, "up", "both-1")))

        thread = threading.Thread(target=send_again)
        thread.start()
        time.sleep(0.5)
        assert thread.is_alive(), "the second waits for the first"
        first.commit()
        thread.join(10)
    assert answers == [{"id": memory, "upvotes": 1, "downvotes": 0, "rating": 1}]
    assert _votes(conn, memory) == (1, 0)


def test_maintenance_forgets_a_key_after_request_key_hours(conn) -> None:
    memory = remember(conn, kind="fact", headline="Keys are kept a day")["memory_id"]
    scalar(conn, RATE, (memory, "up", "old-1"))
    scalar(conn, RATE, (memory, "up", "new-1"))
    assert scalar(conn, "SELECT brain.setting('request_key_hours')") == 24
    owner_execute(
        conn,
        "UPDATE brain.request_answer SET created_at = now() - interval '25 hours'"
        " WHERE answer->>'upvotes' = '1'",
    )
    # a maintenance replaying the past keeps what was young then; now, the old key goes
    assert scalar(conn, "SELECT brain.maintain(now() - interval '2 hours') -> 'request_keys_removed'") == 0
    assert scalar(conn, "SELECT brain.maintain() -> 'request_keys_removed'") == 1
    assert scalar(conn, "SELECT brain.maintain() -> 'request_keys_removed'") == 0
    assert scalar(conn, RATE, (memory, "up", "new-1"))["upvotes"] == 2  # kept
    # a key forgotten is a new request: sent again after that long, it counts
    assert scalar(conn, RATE, (memory, "up", "old-1"))["upvotes"] == 3


def test_the_python_client_sends_the_key(brain: Brain, conn) -> None:
    memory = brain.remember("fact", "The load balancer drains in thirty seconds").memory_id
    first = brain.rate(memory, "up", request_key="py-1")
    assert brain.rate(memory, "up", request_key="py-1") == first
    with pytest.raises(RequestKeyReused) as refused:
        brain.rate(memory, "down", request_key="py-1")
    assert refused.value.code == "BR023" and refused.value.detail["function"] == "rate"
    note = brain.annotate(memory, "Measured in March", request_key="py-2")
    assert brain.annotate(memory, "Measured in March", request_key="py-2") == note
    item = brain.create_action_item("Check the drain time", request_key="py-3")
    assert brain.create_action_item("Check the drain time", request_key="py-3") == item
    assert _votes(conn, memory) == (1, 0)
    # without a key each call is a request of its own, as before
    brain.rate(memory, "up")
    brain.rate(memory, "up")
    assert _votes(conn, memory) == (3, 0)


def test_the_keyed_writes_are_the_ones_the_client_keys(conn) -> None:
    """Every function that takes a request_key is keyed in the catalogue (brain.catalogue), its
    Brain method takes a request_key (and makes one when none is given), and it takes the key
    as its last argument, with a default: a call by position is as before."""
    found = rows(
        conn,
        "SELECT p.proname, p.proargnames[p.pronargs] AS last, p.pronargdefaults > 0 AS has_default"
        " FROM pg_proc p WHERE p.pronamespace = 'brain'::regnamespace AND 'request_key' = ANY(p.proargnames)"
        " AND left(p.proname, 1) <> '_'",
    )
    keyed = {r["name"] for r in rows(conn, "SELECT name FROM brain.catalogue() WHERE keyed")}
    assert {r["proname"] for r in found} == keyed and keyed
    assert all("request_key" in inspect.signature(getattr(Brain, name)).parameters for name in keyed), keyed
    assert all(r["last"] == "request_key" and r["has_default"] for r in found), found
