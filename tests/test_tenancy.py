"""Tenancy against a hostile client: a second role, a member of its own workspace
only, tries every table, view and function on another workspace's rows.

The victim's memories, sessions, scratch, action items, settings and tool events
carry a secret word (SECRET) the attacker never sends. A crossing is an attempt
whose result or error shows that word, or after which the victim workspace's
rows (compared as the owner) differ. Tables, views and functions are read from
the catalog, so a new one is attacked without changing this file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from conftest import new_database, with_database
from helpers import raises_br, remember, rows, scalar
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

SECRET = "quetzalcoatl"
ATTACKER = "brain_mallory"
VICTIM_WS = 1


@dataclass
class Tally:
    attempts: int = 0
    crossings: list[str] = field(default_factory=list)

    def report(self, what: str) -> str:
        return f"{what}: {self.attempts} attempts, {len(self.crossings)} crossings"


def victim_state(admin: psycopg.Connection) -> str:
    """A digest of every row of the victim workspace, read as the owner."""
    digest = hashlib.sha256()
    tables = [
        r[0]
        for r in admin.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id'"
            " WHERE n.nspname = 'brain' AND c.relkind = 'r' ORDER BY 1"
        )
    ]
    for t in tables:
        (text,) = admin.execute(
            sql.SQL(
                "SELECT coalesce(string_agg(x::text, '|' ORDER BY x::text), '')"
                " FROM {} x WHERE workspace_id = %s"
            ).format(sql.Identifier("brain", t)),
            (VICTIM_WS,),
        ).fetchone()
        digest.update(t.encode() + b"\0" + text.encode())
    return digest.hexdigest()


@pytest.fixture
def victim(conn) -> dict[str, Any]:
    """The default workspace, with something of every kind in it, written by the test role."""
    ids: dict[str, Any] = {}
    ids["rule"] = remember(
        conn, kind="rule", severity="BLOCKER", headline=f"Zanzibar deploys need the {SECRET} freeze"
    )["memory_id"]
    ids["fact"] = remember(conn, kind="fact", headline=f"Zanzibar database is {SECRET} cluster")["memory_id"]
    ids["task"] = remember(conn, kind="task", headline=f"Migrate Zanzibar to {SECRET} storage")["memory_id"]
    ids["incident"] = remember(
        conn,
        kind="incident",
        headline=f"Zanzibar outage from {SECRET} certificate",
        body="Renewal was missed.",
    )["memory_id"]
    ids["newer"] = scalar(
        conn,
        "SELECT (brain.supersede(%s, headline => %s, reason => 'moved')).memory_id",
        (ids["fact"], f"Zanzibar database is the {SECRET} replica"),
    )
    scalar(conn, "SELECT brain.annotate(%s, %s)", (ids["rule"], f"Asked by the {SECRET} team"))
    scalar(conn, "SELECT brain.pin(%s)", (ids["rule"],))
    # a rating with a request key: its answer is kept in the victim workspace
    scalar(conn, "SELECT brain.rate(%s, 'up', request_key => 'zanzibar-rating-1')", (ids["rule"],))
    boot = scalar(
        conn, "SELECT brain.boot_session('claude', project => 'zanzibar', task => 'Zanzibar rollout')"
    )
    ids["session"] = boot["session_id"]
    scalar(conn, "SELECT brain.scratch_set('zanzibar-key', %s, project => 'zanzibar')", (f"{SECRET} value",))
    ids["action_item"] = scalar(
        conn, "SELECT brain.create_action_item(%s, project => 'zanzibar')", (f"Rotate the {SECRET} keys",)
    )
    scalar(conn, "SELECT brain.set_setting('rrf_k', '61')")
    scalar(
        conn,
        "SELECT brain.record_tool_event('search', now(), 3.5, false, error_code => 'BR010', error => %s)",
        (f"Zanzibar {SECRET} failed",),
    )
    scalar(
        conn, "SELECT brain.end_session(%s, handoff => %s)", (ids["session"], f"Next: the {SECRET} cutover")
    )
    scalar(conn, "SELECT brain.maintain()")
    assert ids["session"], boot
    return ids


@pytest.fixture
def attacker_url(admin: psycopg.Connection, database: str, victim) -> str:
    """A login role in brain_user, admin of a workspace of its own and of nothing else."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ATTACKER,)).fetchone():
        admin.execute(f"CREATE ROLE {ATTACKER} LOGIN PASSWORD 'mallory' IN ROLE brain_user")
    ws = int(scalar(admin, "SELECT brain.create_workspace('attacker') ->> 'workspace'"))
    scalar(admin, "SELECT brain.grant_workspace(%s, %s, 'admin')", (ATTACKER, ws))
    url = with_database(database, conninfo_to_dict(database)["dbname"], user=ATTACKER, password="mallory")
    with psycopg.connect(url, autocommit=True) as c:
        scalar(c, "SELECT space_id FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384)")
        remember(c, kind="fact", headline="Attacker's own note about Zanzibar")
    return url


def _attempt(conn: psycopg.Connection, tally: Tally, label: str, query: Any, params: Any = None) -> None:
    tally.attempts += 1
    try:
        cur = conn.execute(query, params)
        out = json.dumps(cur.fetchall(), default=str) if cur.description else ""
        if cur.rowcount and cur.rowcount > 0 and re.match(r"\s*(UPDATE|DELETE|INSERT)", str(query), re.I):
            out += f" rows:{cur.rowcount}"
    except psycopg.Error as exc:
        out = f"{exc.diag.message_primary} {exc.diag.message_detail} {exc.diag.message_hint}"
    if SECRET in out.lower():
        tally.crossings.append(f"{label}: {out[:200]}")


def _modes(conn: psycopg.Connection):
    """Without choosing a workspace (the attacker's own), and choosing the victim's."""
    for mode in ("own", "victim"):
        value = "" if mode == "own" else str(VICTIM_WS)
        conn.execute("SELECT set_config('brain.workspace', %s, false)", (value,))
        yield mode


def test_direct_sql_on_every_table_and_view(admin, attacker_url, victim) -> None:
    tally = Tally()
    relations = rows(
        admin,
        "SELECT c.relname, c.relkind, EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid"
        " AND a.attname = 'workspace_id') AS scoped"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'v', 'm', 'p') ORDER BY 1",
    )
    assert len(relations) >= 18
    before = victim_state(admin)
    with psycopg.connect(attacker_url, autocommit=True) as c:
        c.execute("SET statement_timeout = '10s'")
        for rel in relations:
            name = sql.Identifier("brain", rel["relname"])
            cols = [
                r["attname"]
                for r in rows(
                    admin,
                    "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0"
                    " AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
                    (f"brain.{rel['relname']}",),
                )
            ]
            sample = rows(admin, sql.SQL("SELECT to_jsonb(x) AS j FROM {} x LIMIT 1").format(name))
            for mode in _modes(c):
                label = f"{rel['relname']} ({mode})"
                _attempt(c, tally, f"select {label}", sql.SQL("SELECT to_jsonb(x) FROM {} x").format(name))
                if not rel["scoped"] or rel["relkind"] != "r":
                    continue
                victim_rows = sql.SQL("WHERE workspace_id = {}").format(sql.Literal(VICTIM_WS))
                _attempt(
                    c,
                    tally,
                    f"update {label}",
                    sql.SQL("UPDATE {} SET workspace_id = workspace_id {}").format(name, victim_rows),
                )
                _attempt(
                    c,
                    tally,
                    f"move {label}",
                    sql.SQL("UPDATE {} SET workspace_id = workspace_id + 1 {}").format(name, victim_rows),
                )
                _attempt(c, tally, f"delete {label}", sql.SQL("DELETE FROM {} {}").format(name, victim_rows))
                if sample:
                    # A copy of a victim row, with fresh ids, inserted into the victim workspace.
                    doc = {
                        k: (
                            v + 1_000_000
                            if k.endswith("_id") and k != "workspace_id" and isinstance(v, int)
                            else v
                        )
                        for k, v in sample[0]["j"].items()
                    }
                    doc["workspace_id"] = VICTIM_WS
                    collist = sql.SQL(", ").join(sql.Identifier(x) for x in cols)
                    _attempt(
                        c,
                        tally,
                        f"insert {label}",
                        sql.SQL(
                            "INSERT INTO {} ({}) OVERRIDING SYSTEM VALUE"
                            " SELECT {} FROM jsonb_populate_record(NULL::{}, %s)"
                        ).format(name, collist, collist, name),
                        (json.dumps(doc, default=str),),
                    )
    if victim_state(admin) != before:
        tally.crossings.append("the victim workspace's rows changed")
    print(tally.report("direct SQL on tables and views"))
    assert tally.crossings == []


# The value the attacker passes for an argument, by name, then by type.
BY_NAME = {
    "embedding_space": "'hash:feature-hash-v1'",
    "query": "'Zanzibar'",
    "key": "'zanzibar-key'",
    "project": "'zanzibar'",
    "role": f"'{ATTACKER}'",
    "access": "'admin'",
    "direction": "'up'",
    "reason": "'taking it over'",
    "response": "'already_done'",
    "source": "'claude'",
    "name": "'rrf_k'",
    "workspace_id": str(VICTIM_WS),
    "organization_id": "1",
    "value": "'60'::jsonb",
}
BY_TYPE = {
    "text": "'Zanzibar'",
    "jsonb": "'{}'::jsonb",
    "boolean": "true",
    "double precision": "1.0",
    "real": "0.5",
    "timestamp with time zone": "now()",
    "interval": "'1 day'::interval",
    "text[]": "'{}'::text[]",
}


def _functions(admin: psycopg.Connection) -> list[dict[str, Any]]:
    return rows(
        admin,
        "SELECT p.oid::regprocedure::text AS signature, p.proname AS name, p.prosecdef AS definer,"
        " p.pronargs - p.pronargdefaults AS required,"
        " coalesce(p.proargnames, '{}') AS argnames,"
        " ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t) AS argtypes"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'brain' AND p.prokind = 'f' AND p.prorettype <> 'trigger'::regtype"
        "   AND has_function_privilege(%s, p.oid, 'EXECUTE') ORDER BY 1",
        (ATTACKER,),
    )


def _calls(fn: dict[str, Any], victim_ids: list[int]) -> list[str]:
    """Calls of fn with its required arguments: one per victim id where it takes an id."""
    args_for: list[list[str]] = []
    for i in range(fn["required"]):
        name = fn["argnames"][i] if i < len(fn["argnames"]) else ""
        typ = fn["argtypes"][i]
        if name in BY_NAME:
            args_for.append([f"{BY_NAME[name]}::{typ}" if typ != "jsonb" else BY_NAME[name]])
        elif typ in ("bigint", "integer", "smallint"):
            args_for.append([f"{v}::{typ}" for v in victim_ids])
        elif typ == "bigint[]":
            args_for.append([f"ARRAY[{', '.join(map(str, victim_ids))}]::bigint[]"])
        else:
            args_for.append([BY_TYPE.get(typ, f"NULL::{typ}")])
    calls = [[]]
    for options in args_for:
        if len(options) > 1 and any(len(o) > 1 for o in args_for[: args_for.index(options)]):
            options = options[:1]
        calls = [[*c, o] for c in calls for o in options]
    return [
        f"SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM brain.{fn['name']}({', '.join(c)}) AS x"
        for c in calls
    ]


def test_every_function_as_a_hostile_member_of_another_workspace(admin, attacker_url, victim, capsys) -> None:
    tally = Tally()
    functions = _functions(admin)
    assert len(functions) > 80, "the attacker sees the API"
    victim_ids = [victim[k] for k in ("rule", "fact", "newer", "task", "incident", "session", "action_item")]
    crossed_by: list[str] = []
    before = victim_state(admin)
    with psycopg.connect(attacker_url, autocommit=True) as c:
        c.execute("SET statement_timeout = '10s'")
        for fn in functions:
            for mode in _modes(c):
                for call in _calls(fn, victim_ids):
                    _attempt(c, tally, f"{fn['signature']} ({mode}) {call}", call)
            after = victim_state(admin)
            if after != before:
                crossed_by.append(fn["signature"])
                before = after
        # The calls an attacker would make first, with realistic arguments.
        for mode in _modes(c):
            for call in (
                "SELECT brain.search('Zanzibar freeze certificate')",
                f"SELECT brain.recall({victim['rule']})",
                f"SELECT brain.history({victim['fact']})",
                "SELECT brain.boot_session('claude', project => 'zanzibar', task => 'Zanzibar rollout')",
                "SELECT brain.metrics()",
                "SELECT brain.recent_errors()",
                "SELECT brain.stats()",
                "SELECT brain.scratch_list(project => 'zanzibar')",
                "SELECT brain.list_workspaces()",
                f"SELECT brain.list_members({VICTIM_WS})",
                f"SELECT brain.grant_workspace('{ATTACKER}', {VICTIM_WS}, 'admin')",
                f"SELECT brain.revoke_workspace('brain_tester', {VICTIM_WS})",
                "SELECT brain.set_setting('rrf_k', '1')",
                "SELECT brain.drop_embedding_space('hash:feature-hash-v1')",
                f"SELECT brain.forget({victim['rule']}, 'taking it over')",
                # the victim's request key: a new key in the attacker's workspace, refused in the victim's
                f"SELECT brain.rate({victim['rule']}, 'up', request_key => 'zanzibar-rating-1')",
            ):
                _attempt(c, tally, f"{call} ({mode})", call)
        assert scalar(c, "SELECT count(*) FROM brain.list_workspaces()") == 1
    if victim_state(admin) != before:
        crossed_by.append("a realistic call")
    tally.crossings += [f"changed the victim workspace: {f}" for f in crossed_by]
    with capsys.disabled():
        print(f"\n{tally.report(f'{len(functions)} functions as a hostile member')}")
    assert tally.crossings == []
    assert tally.attempts > 500


def test_choosing_a_foreign_workspace_is_an_error_not_an_empty_result(attacker_url) -> None:
    with psycopg.connect(attacker_url, autocommit=True) as c:
        c.execute("SELECT set_config('brain.workspace', %s, false)", (str(VICTIM_WS),))
        with raises_br("BR020") as caught:
            scalar(c, "SELECT count(*) FROM brain.memory")
        assert "not a member of workspace 1" in caught.error.diag.message_primary
        with raises_br("BR020"):
            scalar(c, "SELECT brain.search('Zanzibar')")
        c.execute("SELECT set_config('brain.workspace', 'one', false)")
        with raises_br("BR020"):
            scalar(c, "SELECT brain.current_workspace()")


def test_notifications_name_no_workspace_or_memory(conn, attacker_url) -> None:
    tally = Tally()
    with psycopg.connect(attacker_url, autocommit=True) as listener:
        listener.execute("LISTEN brain_embedding")
        remember(conn, kind="fact", headline=f"Queued {SECRET} fact")
        scalar(conn, "SELECT count(*) FROM brain.observe(%s)", (f"Observed {SECRET} event in Zanzibar.",))
        notes = list(listener.notifies(timeout=2, stop_after=2))
    assert notes, "the worker is woken"
    for n in notes:
        tally.attempts += 1
        if n.payload:
            tally.crossings.append(n.payload)
    print(tally.report("notifications"))
    assert tally.crossings == []


def test_a_reader_reads_and_does_not_write(admin, database) -> None:
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'brain_reader'").fetchone():
        admin.execute("CREATE ROLE brain_reader LOGIN PASSWORD 'reader' IN ROLE brain_user")
    scalar(admin, "SELECT brain.grant_workspace('brain_reader', 1, 'read')")
    url = with_database(
        database, conninfo_to_dict(database)["dbname"], user="brain_reader", password="reader"
    )
    with psycopg.connect(database, autocommit=True) as owner:
        mid = remember(owner, kind="fact", headline="Readers can find this")["memory_id"]
    with psycopg.connect(url, autocommit=True) as c:
        assert scalar(c, "SELECT brain.workspace_access()") == "read"
        assert scalar(c, "SELECT brain.recall(%s) ->> 'headline'", (mid,)) == "Readers can find this"
        assert scalar(c, "SELECT count(*) FROM brain.search('Readers find')") == 1
        with raises_br("BR020") as caught:
            remember(c, kind="fact", headline="A reader's note")
        assert "needs write" in caught.error.diag.message_primary
        with raises_br("BR020"):
            scalar(c, "SELECT brain.forget(%s, 'not mine to forget')", (mid,))
        with raises_br("BR020"):
            c.execute("UPDATE brain.memory SET pinned = true")
        # The bookkeeping of reading is allowed: a session and its boot.
        assert scalar(c, "SELECT brain.boot_session('reader') ->> 'session_id'") is not None
    with psycopg.connect(database, autocommit=True) as owner:
        assert scalar(owner, "SELECT access_count FROM brain.memory WHERE memory_id = %s", (mid,)) == 0
        assert scalar(owner, "SELECT count(*) FROM brain.memory") == 1


def test_the_application_role_cannot_reach_the_server(conn, victim) -> None:
    refusals = 0
    for statement in (
        "COPY (SELECT 1) TO PROGRAM 'id'",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT * FROM pg_read_binary_file('postgresql.conf')",
        "COPY brain.memory FROM '/etc/passwd'",
        "CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "CREATE FUNCTION brain.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "DO $$ BEGIN PERFORM 1; END $$",
        "CREATE TABLE public.t (x int)",
        "ALTER TABLE brain.memory NO FORCE ROW LEVEL SECURITY",
        "ALTER TABLE brain.memory DISABLE ROW LEVEL SECURITY",
        "SET ROLE postgres",
        "SET SESSION AUTHORIZATION postgres",
        "GRANT pg_read_server_files TO brain_tester",
    ):
        with pytest.raises(psycopg.Error):
            conn.execute(statement)
        refusals += 1
    assert (
        scalar(
            conn,
            "SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolbypassrls FROM pg_roles"
            " WHERE rolname = current_user",
        )
        is False
    )
    assert (
        scalar(
            conn,
            "SELECT pg_has_role(current_user, 'pg_use_reserved_connections', 'MEMBER')"
            " OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER')"
            " OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')"
            " OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')",
        )
        is False
    )
    assert refusals == 14


def test_audit_rows_cannot_be_forged_changed_or_deleted(conn, victim) -> None:
    count = scalar(conn, "SELECT count(*) FROM brain.audit")
    assert count >= 5
    attacks = [
        (
            "INSERT INTO brain.audit (memory_id, action, actor) VALUES (%s, 'forget', 'alice')",
            psycopg.errors.InsufficientPrivilege,
        ),
        ("UPDATE brain.audit SET actor = 'alice'", psycopg.errors.InsufficientPrivilege),
        ("DELETE FROM brain.audit", psycopg.errors.InsufficientPrivilege),
        ("TRUNCATE brain.audit", psycopg.errors.InsufficientPrivilege),
    ]
    for statement, error in attacks:
        with pytest.raises(error):
            conn.execute(statement, (victim["rule"],) if "%s" in statement else None)
    for call in (
        "SELECT brain._audit(%s, 'forget', 'alice')",
        "SELECT brain._audit_many(ARRAY[%s]::bigint[], 'forget', 'alice')",
    ):
        with raises_br("BR020") as caught:
            conn.execute(call, (victim["rule"],))
        assert "functions only" in caught.error.diag.message_primary
    assert scalar(conn, "SELECT count(*) FROM brain.audit") == count
    # Rows the API writes name the login role that wrote them.
    assert scalar(conn, "SELECT array_agg(DISTINCT db_role) FROM brain.audit") == ["brain_tester"]


def test_even_the_owner_session_keeps_the_audit_when_not_the_owner(database, victim) -> None:
    with psycopg.connect(database, autocommit=True) as owner:
        # The owner may correct the log; the trigger lets it.
        assert owner.execute("UPDATE brain.audit SET detail = detail WHERE false").rowcount == 0


def test_every_tenant_table_forces_row_level_security(admin) -> None:
    assert_forced(admin)


def assert_forced(admin) -> None:
    loose = rows(
        admin,
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'brain' AND c.relkind = 'r'"
        " AND c.relname NOT IN ('migration', 'account', 'organization')"
        " AND NOT (c.relrowsecurity AND c.relforcerowsecurity) ORDER BY 1",
    )
    assert loose == []


def test_security_definer_functions_pin_search_path_and_check_membership(admin, attacker_url) -> None:
    definers = rows(
        admin,
        "SELECT p.oid::regprocedure::text AS signature, p.proconfig FROM pg_proc p"
        " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'brain' AND p.prosecdef ORDER BY 1",
    )
    assert len(definers) >= 8
    for d in definers:
        assert any(c.startswith("search_path=pg_catalog") for c in d["proconfig"] or []), d
    # Called by a member of another workspace, with that workspace chosen, each refuses.
    # The membership checks themselves answer instead: no access there, and the
    # caller's own first workspace; brain.list_workspaces lists the caller's own.
    answers = {
        "_access": f"SELECT brain._access({VICTIM_WS}, current_user::text) IS NULL",
        "_default_workspace": f"SELECT brain._default_workspace(current_user::text) <> {VICTIM_WS}",
        "list_workspaces": f"SELECT bool_and(workspace_id <> {VICTIM_WS}) FROM brain.list_workspaces()",
    }
    callable_definers = [f for f in _functions(admin) if f["definer"] and f["name"] not in answers]
    assert callable_definers
    with psycopg.connect(attacker_url, autocommit=True) as c:
        c.execute("SELECT set_config('brain.workspace', %s, false)", (str(VICTIM_WS),))
        for query in answers.values():
            assert scalar(c, query) is True, query
        for fn in callable_definers:
            for call in _calls(fn, [1]):
                try:
                    c.execute(call)
                except psycopg.Error as exc:
                    assert exc.diag.sqlstate in ("BR020", "BR009", "BR021"), (fn["signature"], exc)
                else:
                    pytest.fail(f"{fn['signature']} acted in a workspace the caller is not a member of")


def test_only_owner_or_helpers_the_api_needs_are_private(admin) -> None:
    public = rows(
        admin,
        "SELECT p.oid::regprocedure::text AS f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'brain' AND has_function_privilege('public', p.oid, 'EXECUTE')",
    )
    assert public == [], "nothing in schema brain is executable by PUBLIC"
    assert (
        scalar(
            admin,
            "SELECT has_function_privilege('brain_user', 'brain._build_space_index(bigint)', 'EXECUTE')",
        )
        is False
    )


def test_cli_manages_workspaces_and_roles(brain_cli, database, monkeypatch, admin) -> None:
    # As the application role these are refused; as the owner they work.
    r = brain_cli("workspace", "create", "team-b")
    assert r.exit_code == 1 and "Only the owner of schema brain" in r.stderr
    monkeypatch.setenv("BRAIN_ADMIN_DATABASE_URL", database)
    assert brain_cli("workspace", "create", "team-b").output.strip() == "created workspace #2 team-b"
    r = brain_cli("workspace", "create", "team-b")
    assert r.exit_code == 1 and "exists" in r.stderr
    admin.execute("DROP ROLE IF EXISTS agent_cli")
    try:
        r = brain_cli("role", "create", "agent_cli", "--workspace", "2", "--json")
        created = json.loads(r.output)
        assert created["role"] == "agent_cli" and len(created["password"]) >= 32
        assert created["statement_timeout"] == "5000ms"
        assert brain_cli("workspace", "grant", "brain_tester", "2", "--access", "read").output.strip() == (
            "brain_tester: read access to workspace #2"
        )
        listed = json.loads(brain_cli("workspace", "list", "--json").output)
        # the default workspace: the test role, and brain_app once a command as the owner
        # enrolled it (when another test of the session made that role)
        default_members = admin.execute(
            "SELECT count(*) FROM brain.membership WHERE workspace_id = 1"
        ).fetchone()
        assert [(w["workspace_id"], w["name"], w["members"]) for w in listed] == [
            (1, "default", default_members[0]),
            (2, "team-b", 2),
        ]
        assert default_members[0] in (1, 2)
        r = brain_cli("workspace", "grant", "brain_tester", "9")
        assert r.exit_code == 1 and "No workspace #9" in r.stderr
        assert (
            brain_cli("workspace", "revoke", "brain_tester", "2").output.strip()
            == "brain_tester: access revoked"
        )
        assert "had no access" in brain_cli("workspace", "revoke", "brain_tester", "2").output
        # The new role logs in, sees its workspace only, and cannot leave it.
        url = with_database(
            database, conninfo_to_dict(database)["dbname"], user="agent_cli", password=created["password"]
        )
        with psycopg.connect(url, autocommit=True) as agent:
            assert scalar(agent, "SELECT brain.current_workspace()") == 2
            assert scalar(agent, "SHOW statement_timeout") == "5s"
            with raises_br("BR020"):
                agent.execute("SELECT set_config('brain.workspace', '1', false); SELECT brain.stats()")
    finally:
        admin.execute("DROP OWNED BY agent_cli")
        admin.execute("DROP ROLE IF EXISTS agent_cli")


def test_an_installation_of_the_previous_release_upgrades(admin_url) -> None:
    """A database at 007 (the previous release) with two workspaces of data, upgraded."""
    from pybrain import db

    name = "brain_upgrade_012"
    with new_database(admin_url, name) as url:
        with psycopg.connect(url, autocommit=True) as owner:
            owner.execute("CREATE SCHEMA brain")
            owner.execute(
                "CREATE TABLE brain.migration (name text PRIMARY KEY, sha256 text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for path in db.sql_files("migrations")[:7]:
                with owner.transaction():
                    owner.execute(path.read_text())
                    owner.execute(
                        "INSERT INTO brain.migration (name, sha256) VALUES (%s, %s)",
                        (path.name, hashlib.sha256(path.read_bytes()).hexdigest()),
                    )
            owner.execute("INSERT INTO brain.workspace (organization_id, name) VALUES (1, 'team-b')")
            for ws, text in ((1, "Default team ships on Mondays"), (2, f"Team B keeps the {SECRET} plan")):
                owner.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
                owner.execute(
                    "INSERT INTO brain.memory (kind, headline, normalized) VALUES ('fact', %s, lower(%s))",
                    (text, text),
                )
                owner.execute(
                    "INSERT INTO brain.audit (memory_id, action, actor) VALUES (1, 'insert', 'old')"
                )
            owner.execute("SELECT set_config('brain.workspace', '', false)")

            applied = db.migrate(owner).applied
            assert "013-tenancy.sql" in applied
        tester = with_database(admin_url, name, user="brain_tester", password="test")
        with psycopg.connect(tester, autocommit=True) as c:
            # The existing application role keeps the default workspace, and only it.
            assert scalar(c, "SELECT brain.workspace_access()") == "write"
            assert [r["headline"] for r in rows(c, "SELECT headline FROM brain.memory")] == [
                "Default team ships on Mondays"
            ]
            c.execute("SELECT set_config('brain.workspace', '2', false)")
            with raises_br("BR020"):
                scalar(c, "SELECT count(*) FROM brain.memory")
            c.execute("SELECT set_config('brain.workspace', '', false)")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                c.execute("DELETE FROM brain.audit")
            assert scalar(c, "SELECT count(*) FROM brain.audit") == 1
            assert remember(c, kind="fact", headline="Written after the upgrade")["action"] == "created"
        with psycopg.connect(url, autocommit=True) as owner:
            assert_forced(owner)


NEWCOMER = "brain_newcomer"


def _newcomer(admin: psycopg.Connection) -> str:
    """A login role in brain_user that belongs to no workspace yet."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (NEWCOMER,)).fetchone():
        admin.execute(f"CREATE ROLE {NEWCOMER} LOGIN PASSWORD 'newcomer' IN ROLE brain_user")
        admin.execute("SELECT brain.adopt_role(%s)", (NEWCOMER,))  # a role made by hand: tokens of it
    return NEWCOMER


def test_an_admin_manages_its_own_workspace_only(attacker_url, admin) -> None:
    newcomer = _newcomer(admin)
    with psycopg.connect(attacker_url, autocommit=True) as admin_of_2:
        ws = scalar(admin_of_2, "SELECT brain.current_workspace()")
        assert ws != VICTIM_WS
        granted = scalar(admin_of_2, "SELECT brain.grant_workspace(%s, %s, 'read')", (newcomer, ws))
        assert granted == {"workspace": ws, "role": newcomer, "access": "read"}
        members = rows(admin_of_2, "SELECT role_name, access FROM brain.list_members()")
        assert members == [
            {"role_name": ATTACKER, "access": "admin"},
            {"role_name": newcomer, "access": "read"},
        ]
        assert scalar(admin_of_2, "SELECT brain.revoke_workspace(%s, %s) -> 'revoked'", (newcomer, ws))
        with raises_br("BR020"):
            admin_of_2.execute("SELECT brain.create_workspace('mine too')")
        with raises_br("BR020"):
            admin_of_2.execute("SELECT brain.create_role('agent_x', %s)", (ws,))
        with raises_br("BR020"):
            admin_of_2.execute("SELECT brain.grant_workspace(%s, %s, 'admin')", (ATTACKER, VICTIM_WS))
        with raises_br("BR020"):
            admin_of_2.execute("SELECT * FROM brain.list_members(%s)", (VICTIM_WS,))


def test_a_grant_cannot_move_another_roles_writes(attacker_url, conn, admin) -> None:
    """The owner adds the victim to a second workspace: the victim, choosing none, is asked
    to choose, and nothing it writes lands in the other workspace. (An admin of that
    workspace may not add it: test_an_admin_cannot_enrol_or_impersonate_another_workspaces_role.)"""
    with psycopg.connect(attacker_url, autocommit=True) as c:
        ws = scalar(c, "SELECT brain.current_workspace()")
        scalar(admin, "SELECT brain.grant_workspace('brain_tester', %s, 'write')", (ws,))
        with raises_br("BR020") as caught:
            c.execute("SELECT brain.grant_workspace('brain_user', %s, 'write')", (ws,))
        assert "group role" in caught.error.diag.message_primary
        before = scalar(c, "SELECT count(*) FROM brain.memory")
    with raises_br("BR020") as caught:
        remember(conn, kind="fact", headline="Where does this go")
    assert "several workspaces; choose one" in caught.error.diag.message_primary
    conn.execute("SELECT set_config('brain.workspace', %s, false)", (str(VICTIM_WS),))
    assert remember(conn, kind="fact", headline="It goes where I chose")["action"] == "created"
    with psycopg.connect(attacker_url, autocommit=True) as c:
        assert scalar(c, "SELECT count(*) FROM brain.memory") == before


def test_an_admin_cannot_enrol_or_impersonate_another_workspaces_role(attacker_url, conn, admin) -> None:
    """The attacker, admin of its own workspace, enrols the victim's login role there and mints
    a token that runs as it (a token's requests are audited as its role). Enrolling a role
    that belongs to another workspace, or minting a token that runs as one, needs the role's
    owner: the owner of schema brain, or the role itself."""
    victim_role = "brain_tester"
    tried: list[tuple[str, str, tuple]] = []
    with psycopg.connect(attacker_url, autocommit=True) as c:
        ws = scalar(c, "SELECT brain.current_workspace()")
        for access in ("read", "write", "admin"):
            tried.append(
                (
                    f"enrol the victim's role with {access} access",
                    "SELECT brain.grant_workspace(%s, %s, %s)",
                    (victim_role, ws, access),
                )
            )
        tried += [
            (
                "a token as the victim's role in its own workspace",
                "SELECT brain.create_token(role => %s, name => 'x1', workspace_id => %s)",
                (victim_role, VICTIM_WS),
            ),
            (
                "a token as the victim's role in the attacker's workspace",
                "SELECT brain.create_token(role => %s, name => 'x2', workspace_id => %s)",
                (victim_role, ws),
            ),
        ]
        got_through = []
        for what, query, params in tried:
            try:
                c.execute(query, params)
            except psycopg.Error as exc:
                assert exc.diag.sqlstate == "BR020", (what, exc.diag.sqlstate, exc.diag.message_primary)
            else:
                got_through.append(what)
        # The owner enrols the victim's role there (its owner may): a token of it still
        # needs the owner, since the role also belongs to the victim's workspace.
        scalar(admin, "SELECT brain.grant_workspace(%s, %s, 'read')", (victim_role, ws))
        tried.append(("a token as the victim's role, enrolled by the owner", "", ()))
        try:
            c.execute(
                "SELECT brain.create_token(role => %s, name => 'x3', workspace_id => %s)", (victim_role, ws)
            )
        except psycopg.Error as exc:
            assert exc.diag.sqlstate == "BR020", exc.diag.message_primary
        else:
            got_through.append("a token as the victim's role, enrolled by the owner")
        # What an admin may still do: tokens of its own role, and of a role of its own workspace.
        newcomer = _newcomer(admin)
        assert scalar(c, "SELECT brain.grant_workspace(%s, %s, 'write')", (newcomer, ws))["role"] == newcomer
        assert (
            scalar(c, "SELECT brain.create_token(role => %s, name => 'own')", (ATTACKER,))["role"] == ATTACKER
        )
        assert (
            scalar(c, "SELECT brain.create_token(role => %s, name => 'team')", (newcomer,))["role"]
            == newcomer
        )
    impersonated = scalar(admin, "SELECT count(*) FROM brain.token WHERE role_name = %s", (victim_role,))
    print(f"\nenrolling or minting as a foreign role: {len(tried)} tried, {len(got_through)} got through")
    assert got_through == [] and impersonated == 0


def test_session_signals_reach_only_the_workspaces_own_listeners(attacker_url, conn, admin, victim) -> None:
    """The session triggers notify the workspace's own channel, named with 128 random bits and
    told only to members, with an empty payload. The attacker listens on the channel of old
    (brain_sessions, whose payload was the workspace id), on its own channel, and asks for the
    victim's; the victim starts and ends a session, leaves a handoff and raises an item."""
    tally = Tally()
    refused = [
        ("the victim's channel, choosing its workspace", "SELECT brain.sessions_channel()", "BR020"),
        ("the channel helper, with the victim's id", f"SELECT brain._sessions_channel({VICTIM_WS})", "42501"),
        ("the table of channels", "SELECT * FROM brain.workspace_channel", "42501"),
    ]
    own_channel = scalar(conn, "SELECT brain.sessions_channel()")
    with (
        psycopg.connect(attacker_url, autocommit=True) as listener,
        psycopg.connect(attacker_url, autocommit=True) as c,
    ):
        mine = scalar(c, "SELECT brain.sessions_channel()")
        assert mine != own_channel and re.fullmatch(r"brain_sessions_[0-9a-f]{32}", mine)
        c.execute("SELECT set_config('brain.workspace', %s, false)", (str(VICTIM_WS),))
        for label, query, code in refused:
            tally.attempts += 1
            try:
                out = json.dumps(c.execute(query).fetchall())
            except psycopg.Error as exc:
                assert exc.sqlstate == code, (label, exc.sqlstate)
                out = f"{exc.diag.message_primary} {exc.diag.message_detail}"
            if own_channel in out:
                tally.crossings.append(label)
        for channel in ("brain_sessions", mine):
            listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        with psycopg.connect(conn.info.dsn, autocommit=True) as victim_listener:
            victim_listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(own_channel)))
            s = scalar(conn, "SELECT brain.boot_session('claude', project => 'zanzibar')")["session_id"]
            scalar(
                conn,
                "SELECT brain.create_action_item(%s, project => 'zanzibar')",
                (f"Check the {SECRET} keys",),
            )
            scalar(conn, "SELECT brain.end_session(%s, handoff => %s)", (s, f"Next: {SECRET}"))
            told = list(victim_listener.notifies(timeout=2, stop_after=3))
        heard = list(listener.notifies(timeout=1))
    assert told and all(n.payload == "" and n.channel == own_channel for n in told), told
    tally.attempts += 4
    tally.crossings += [f"{n.channel}: {n.payload!r}" for n in heard]
    print("\n" + tally.report("session signals: asking for the victim's channel, listening while it works"))
    assert tally.crossings == []


def test_the_planner_tells_no_workspace_its_neighbours_size(admin, attacker_url, victim, capsys) -> None:
    """EXPLAIN shows the planner's estimate of the rows a condition keeps. Drawn from the most
    common values of workspace_id, it told a member of one workspace how many rows another
    holds. The estimate for a workspace id is now the same for every id, on every table."""
    admin.execute("SELECT set_config('brain.workspace', %s, false)", (str(VICTIM_WS),))
    admin.execute(
        "INSERT INTO brain.memory (kind, headline, normalized)"
        " SELECT 'fact', 'Filler note ' || i, 'filler note ' || i FROM generate_series(1, 3000) AS i"
    )
    tables = [
        r[0]
        for r in admin.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid"
            " AND a.attname = 'workspace_id' WHERE c.relnamespace = 'brain'::regnamespace"
            " AND c.relkind = 'r' AND has_table_privilege('brain_user', c.oid, 'SELECT') ORDER BY 1"
        )
    ]
    admin.execute("ANALYZE")
    own = None
    leaks = []
    with psycopg.connect(attacker_url, autocommit=True) as c:
        own = scalar(c, "SELECT brain.current_workspace()")
        for table in tables:
            estimates = {}
            for ws in (VICTIM_WS, own, 999):
                (plan,) = c.execute(
                    sql.SQL("EXPLAIN (FORMAT JSON) SELECT 1 FROM {} WHERE workspace_id = {}").format(
                        sql.Identifier("brain", table), sql.Literal(ws)
                    )
                ).fetchone()
                estimates[ws] = plan[0]["Plan"]["Plan Rows"]
            if len(set(estimates.values())) > 1:
                leaks.append(f"{table}: {estimates}")
    with capsys.disabled():
        print(f"\nplanner estimates by workspace id on {len(tables)} tables: {len(leaks)} differ {leaks[:5]}")
    assert leaks == []
