"""No error message, log line or tool event carries an argument's value (issue 30, items 6 and 10).

An attacker (or a careless agent) puts a distinctive value into every argument that a check
refuses: a fake secret and a plain marker. Every public SQL function is called from the
catalog with the marker in each of its text, text[] and JSON arguments (as a client role
made by brain.create_role, and as the owner), the import functions get documents whose
every field holds it, and the CLI (bad choices, numbers, extra arguments) and the MCP server
(wrong choices and types) are sent it. An echo is the marker in an error's message, detail,
hint or context, in a rejected row's error, in the CLI's or the MCP server's output or
stderr, in a tool event, or in the server's log.

Run with -s to see what was tried and what got through; docs/security.md quotes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import anyio
import psycopg
import pytest
from helpers import remember, rows, scalar
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.json import Jsonb
from test_security import _server_log

from pybrain import db

PLAIN = "ZZECHOZZ"
FAKE_SECRET = "sk-live-ECHO" + "4f9a2b7c1d8e3f60a5b4"  # not a real format: the scanner may let it by
MARKERS = (PLAIN, FAKE_SECRET)
NEEDLES = (PLAIN, "ECHO4f9a2b7c", "4f9a2b7c1d8e")  # a fragment of either is an echo

AGENT = "echo_agent"
AGENT_PASSWORD = "echo-agent-password-1"


def echoes(text: Any) -> bool:
    """The marker, or a piece of the fake secret, in text (as it is, or JSON-escaped)."""
    if text is None:
        return False
    s = text if isinstance(text, str) else json.dumps(text, default=str)
    return any(n in s or n.lower() in s.lower() for n in NEEDLES)


class Tally:
    def __init__(self) -> None:
        self.tried = 0
        self.through: list[str] = []

    def saw(self, what: str, said: Any) -> None:
        self.tried += 1
        if echoes(said):
            text = said if isinstance(said, str) else json.dumps(said, default=str)
            at = min((i for n in NEEDLES if (i := text.lower().find(n.lower())) >= 0), default=0)
            self.through.append(f"{what}: {text[max(0, at - 100) : at + 60]!r}")

    def tried_rows(self, c: psycopg.Connection, what: str, statement: str, params: Any) -> list[dict] | None:
        """The rows of a statement run in a transaction rolled back after; None when it
        raised, and then what the error said is seen."""
        try:
            with c.transaction(force_rollback=True):
                return rows(c, statement, params)
        except psycopg.Error as exc:
            self.saw(what, said(exc))
            return None


def said(exc: psycopg.Error) -> str:
    d = exc.diag
    return " | ".join(str(x) for x in (d.message_primary, d.message_detail, d.message_hint, d.context) if x)


# --- SQL: every public function, by catalog --------------------------------------------

# The value of a required argument that is not under attack, by name, then by type.
BY_NAME: dict[str, str] = {
    "kind": "'fact'",
    "headline": "'Deploys run from the release branch'",
    "body": "'The pipeline tags each release.'",
    "query": "'deploys'",
    "source": "'claude'",
    "project": "'web'",
    "role": f"'{AGENT}'",
    "access": "'write'",
    "direction": "'up'",
    "response": "'already_done'",
    "reason": "'the release process changed'",
    "note": "'checked against the runbook'",
    "key": "'current-branch'",
    "value": "'60'::jsonb",
    "name": "'rrf_k'",
    "embedding_space": "'hash:feature-hash-v1'",
    "workspace_id": "1",
    "organization_id": "1",
    "problem": "'The deploy job fails on a cold runner'",
    "steps": """'[{"action": "restart the runner"}]'::jsonb""",
    "outcome": "'green again'",
    "docs": "'[]'::jsonb",
    "documents": "'[]'::jsonb",
    "turns": "'[]'::jsonb",
    "snapshot": """'{"summary": "s", "status": "s", "blockers": [], "pending": []}'::jsonb""",
    "texts": "ARRAY['Deploys go out at night']",
    "text": "'Deploy the release branch'",
    "trigger": "'boot'",
    "how": "'cite'",
    "tool": "'search'",
    "channel": "'sql'",
}
BY_TYPE: dict[str, str] = {
    "text": "'deploys'",
    "jsonb": "'{}'::jsonb",
    "boolean": "false",
    "double precision": "1.0",
    "real": "0.5",
    "integer": "1",
    "smallint": "1",
    "timestamp with time zone": "now()",
    "interval": "'1 day'::interval",
    "text[]": "'{}'::text[]",
    "double precision[]": "NULL::double precision[]",
}
ATTACKED = ("text", "character varying", "text[]", "jsonb", "name")


def _jsonb_variants(m: str) -> list[Any]:
    doc = {
        "record": m, "kind": m, "state": m, "origin": m, "category": m, "severity": m, "status": m,
        "headline": "A headline of an import", "source": m, "name": m, "trigger": m,
    }  # fmt: skip
    return [m, [m], {m: m}, {"name": m}, [doc], [{"kind": m, "headline": "An imported fact"}]]


def _functions(conn: psycopg.Connection, role: str) -> list[dict[str, Any]]:
    return rows(
        conn,
        "SELECT p.proname AS name, p.oid::regprocedure::text AS signature,"
        "  p.pronargs - p.pronargdefaults AS required,"
        "  ARRAY(SELECT coalesce(p.proargnames[i + 1], '') FROM generate_subscripts(p.proargtypes, 1) AS i"
        "        ORDER BY i) AS argnames,"
        "  ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t) AS argtypes"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'brain' AND p.prokind = 'f' AND p.proname NOT LIKE '\\_%%'"
        "   AND p.prorettype <> 'trigger'::regtype AND p.provariadic = 0"
        "   AND (p.proargmodes IS NULL OR NOT p.proargmodes && ARRAY['o', 't', 'v']::\"char\"[])"
        "   AND has_function_privilege(%s, p.oid, 'EXECUTE') ORDER BY 2",
        (role,),
    )


def _calls(fn: dict[str, Any], ids: dict[str, int]) -> list[tuple[str, str, list[Any]]]:
    """(what, statement, params): each attacked argument given each marker, the required
    others a plausible value."""
    names, types = fn["argnames"], fn["argtypes"]
    if any(not n for n in names):
        return []
    out = []
    for target, (tname, ttype) in enumerate(zip(names, types, strict=True)):
        if ttype not in ATTACKED:
            continue
        if ttype == "jsonb":
            values = [Jsonb(v) for m in MARKERS for v in _jsonb_variants(m)]
        elif ttype == "text[]":
            values = [[m] for m in MARKERS]
        else:
            values = list(MARKERS)
        parts = []
        for i in range(fn["required"]):
            if i == target:
                continue
            n, t = names[i], types[i]
            if n in BY_NAME:
                v = BY_NAME[n]
            elif t in ("bigint", "integer") and n in ids:
                v = str(ids[n])
            elif t in ("bigint", "integer"):
                v = str(ids["id"])
            elif t == "bigint[]":
                v = f"ARRAY[{ids['id']}]::bigint[]"
            else:
                v = BY_TYPE.get(t, f"NULL::{t}")
            parts.append(f"{n} => {v}")
        cast = "text" if ttype == "name" else ttype
        parts.append(f"{tname} => %s::{cast}")
        statement = f"SELECT * FROM brain.{fn['name']}({', '.join(parts)})"
        for v in values:
            shown = json.dumps(v.obj) if isinstance(v, Jsonb) else json.dumps(v)
            out.append((f"{fn['name']}({tname} => {shown[:50]})", statement, [v]))
    return out


def _attack_catalog(c: psycopg.Connection, role: str, ids: dict[str, int], tally: Tally) -> int:
    functions = _functions(c, role)
    for fn in functions:
        for what, statement, params in _calls(fn, ids):
            result = tally.tried_rows(c, f"[{role}] {what}", statement, params)
            if result is not None:
                # a row refused inside a batch reports its error in a column
                errors = [
                    r.get(k) for r in result for k in ("error", "reason", "message") if isinstance(r, dict)
                ]
                tally.saw(f"[{role}] {what} (rows)", [e for e in errors if e])
    return len(functions)


def _agent_url(database: str) -> str:
    params = conninfo_to_dict(database)
    params.update(user=AGENT, password=AGENT_PASSWORD)
    return make_conninfo(**params)


@pytest.fixture
def agent_url(database: str) -> str:
    """A client role made the documented way: brain.create_role, admin of workspace 1."""
    with psycopg.connect(database, autocommit=True) as owner:
        _client_role(owner, AGENT, AGENT_PASSWORD, "admin")
    return _agent_url(database)


def _client_role(owner: psycopg.Connection, name: str, password: str, access: str) -> None:
    """brain.create_role; a role left by an earlier test's database (roles belong to the
    server) is granted this database's workspace instead."""
    if owner.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
        owner.execute("SELECT brain.grant_workspace(%s, 1, %s)", (name, access))
    else:
        owner.execute(
            "SELECT brain.create_role(%s, 1, %s, password => %s, statement_timeout => '10s')",
            (name, access, password),
        )


def _seed(c: psycopg.Connection) -> dict[str, int]:
    fact = remember(c, kind="fact", headline="Deploys run from the release branch")["memory_id"]
    task = remember(c, kind="task", headline="Rotate the staging keys")["memory_id"]
    remember(
        c,
        kind="rule",
        headline="Migrations run through the migration skill",
        skill_trigger=Jsonb({"name": "db-migrations", "keywords": ["migration"]}),
    )
    session = scalar(c, "SELECT brain.boot_session(source => 'claude', project => 'web')")["session_id"]
    return {
        "id": fact,
        "memory_id": fact,
        "old_id": fact,
        "task": task,
        "session": session,
        "session_id": session,
    }


# --- SQL: targeted calls ----------------------------------------------------------------


def _targeted(c: psycopg.Connection, tally: Tally) -> None:
    """The checks known to repeat a value, each reached with its other arguments right."""
    statements: list[tuple[str, str]] = [
        ("remember kind", "SELECT brain.remember(kind => %s, headline => 'A headline')"),
        ("remember severity", "SELECT brain.remember(kind => 'rule', headline => 'A rule', severity => %s)"),
        (
            "remember severity on a fact",
            "SELECT brain.remember(kind => 'fact', headline => 'A', severity => %s)",
        ),
        ("remember category", "SELECT brain.remember(kind => 'fact', headline => 'A fact', category => %s)"),
        ("remember origin", "SELECT brain.remember(kind => 'fact', headline => 'A fact', origin => %s)"),
        (
            "remember on_related",
            "SELECT brain.remember(kind => 'fact', headline => 'A fact', on_related => %s)",
        ),
        ("remember status", "SELECT brain.remember(kind => 'task', headline => 'A task', status => %s)"),
        (
            "remember complexity",
            "SELECT brain.remember(kind => 'incident', headline => 'An incident', complexity => %s)",
        ),
        (
            "remember status on a fact",
            "SELECT brain.remember(kind => 'fact', headline => 'A fact', status => %s)",
        ),
        (
            "remember skill name",
            """SELECT brain.remember(kind => 'rule', headline => 'A rule',
            skill_trigger => jsonb_build_object('name', %s::text))""",
        ),
        (
            "remember skill keywords",
            """SELECT brain.remember(kind => 'rule', headline => 'A rule',
            skill_trigger => jsonb_build_object('name', 'x-y', 'keywords', %s::text))""",
        ),
        (
            "supersede severity",
            "SELECT brain.supersede(old_id => 3, headline => 'A rule', reason => 'r', severity => %s)",
        ),
        ("update_task status", "SELECT brain.update_task(2, status => %s)"),
        ("rate direction", "SELECT brain.rate(1, %s)"),
        ("record_injection trigger", "SELECT brain.record_injection(%s)"),
        ("note_use how", "SELECT brain.note_use(ARRAY[1]::bigint[], %s)"),
        ("injection_metrics group_by", "SELECT * FROM brain.injection_metrics(group_by => %s)"),
        ("load_pack name", "SELECT brain.load_pack(%s)"),
        ("create_pack name", "SELECT brain.create_pack(%s, query => 'deploys')"),
        (
            "create_pack filters",
            "SELECT brain.create_pack('p', query => 'deploys', filters => to_jsonb(%s::text))",
        ),
        ("load_skill name", "SELECT * FROM brain.load_skill(%s)"),
        ("set_setting name", "SELECT brain.set_setting(%s, '1'::jsonb)"),
        ("set_setting value", "SELECT brain.set_setting('rrf_k', to_jsonb(%s::text))"),
        (
            "create_token name twice",
            "SELECT brain.create_token('echo_agent', %s), brain.create_token('echo_agent', %s)",
        ),
        ("create_token role", "SELECT brain.create_token(%s, 'laptop')"),
        ("create_token access", "SELECT brain.create_token('echo_agent', 'laptop2', access => %s)"),
        ("revoke_token name", "SELECT brain.revoke_token(name => %s)"),
        ("grant_workspace role", "SELECT brain.grant_workspace(%s, 1)"),
        ("grant_workspace access", "SELECT brain.grant_workspace('echo_agent', 1, %s)"),
        ("end_session_of source", "SELECT brain.end_session_of(%s, project => 'web', handoff => 'h')"),
        ("end_session_of project", "SELECT brain.end_session_of('claude', project => %s, handoff => 'h')"),
        (
            "end_session_of cwd",
            "SELECT brain.end_session_of('claude', project => 'x', cwd => %s, handoff => 'h')",
        ),
        ("use_embedding_space provider", "SELECT brain.use_embedding_space(%s, 'm', 8)"),
        ("embedding_progress", "SELECT brain.embedding_progress(%s)"),
        ("drop_embedding_space", "SELECT brain.drop_embedding_space(%s)"),
        ("record_tool_event channel", "SELECT brain.record_tool_event('search', now(), 1.0, true, %s)"),
        ("scratch key", "SELECT brain.scratch_set(%s || ' !', 'v', project => 'web')"),
        ("acknowledge response", "SELECT brain.acknowledge_action_item(1, 1, %s)"),
        ("list_memories tiers", "SELECT * FROM brain.list_memories(tiers => ARRAY[%s])"),
        ("list_memories kinds", "SELECT * FROM brain.list_memories(kinds => ARRAY[%s])"),
        ("list_memories states", "SELECT * FROM brain.list_memories(states => ARRAY[%s])"),
    ]
    for what, statement in statements:
        if "%s" not in statement:
            continue
        for m in MARKERS:
            params = [m] * statement.count("%s")
            try:
                with c.transaction(force_rollback=True):
                    c.execute(statement, params)
            except psycopg.Error as exc:
                tally.saw(f"targeted: {what} ({m[:8]})", said(exc))
            else:
                tally.saw(f"targeted: {what} ({m[:8]}) accepted", "")


def _imports(c: psycopg.Connection, tally: Tally) -> None:
    """Import documents whose every field in turn holds the marker: a refused document
    reports its error in the result row, which must not repeat it either."""
    base = {"kind": "fact", "headline": "An imported fact about deploys", "body": "From a file."}
    fields = [
        "kind", "state", "origin", "category", "severity", "status", "priority", "id", "created_at",
        "updated_at", "importance", "halflife_days", "tags", "metadata", "complexity", "pinned",
        "supersedes", "superseded_by", "expires_at", "due_at", "source_agent", "upvotes", "folds",
    ]  # fmt: skip
    for m in MARKERS:
        docs = [{**base, f: m} for f in fields]
        docs.append({**base, "kind": "rule", "severity": m})
        docs.append({**base, "kind": "task", "status": m})
        docs.append({**base, "kind": "rule", "skill_trigger": {"name": m}})
        docs.append({**base, "kind": "rule", "skill_trigger": {"name": "db-migrations"}})
        docs.append({**base, "invalid": f"{m} is not a JSON number.", "line": 3})
        docs.append({**base, "folds": [{"headline": m, "at": m}]})
        got = tally.tried_rows(
            c, f"import_memories ({m[:8]})", "SELECT * FROM brain.import_memories(%s)", (Jsonb(docs),)
        )
        if got is not None:
            for d, r in zip(docs, got, strict=False):
                changed = next((k for k, v in d.items() if v == m or k in ("skill_trigger", "invalid")), "?")
                tally.saw(f"import_memories field {changed} ({m[:8]})", r.get("error"))
        sessions = [
            {"record": m},
            {"record": "session", "source": m, "started_at": "2026-01-01T00:00:00Z", "id": 1},
            {"record": "session", "source": "claude", "started_at": m, "id": 2},
            {"record": "session", "source": "claude", "started_at": "2026-01-01T00:00:00Z", "id": m},
            {"record": "handoff", "source": m, "created_at": "2026-01-01T00:00:00Z", "text": "t"},
            {"record": "handoff", "source": "claude", "created_at": m, "text": "t"},
        ]
        packs = [
            {"record": "pack", "name": m, "query": "deploys"},
            {"record": "pack", "name": "p", "filters": m},
        ]
        for function, docs in (("import_sessions", sessions), ("import_packs", packs)):
            for d in docs:
                what = f"{function} {sorted(d)} ({m[:8]})"
                got = tally.tried_rows(c, what, f"SELECT * FROM brain.{function}(%s)", (Jsonb([d]),))
                if got is not None:
                    tally.saw(what, [r.get("error") for r in got])


def test_no_sql_error_repeats_an_argument(database, admin_url, agent_url, capsys) -> None:
    db.quiet_logging(admin_url)
    tally = Tally()
    with psycopg.connect(database, autocommit=True) as admin:
        log_before = _server_log(admin) or ""
    with psycopg.connect(agent_url, autocommit=True) as c:
        ids = _seed(c)
        n_client = _attack_catalog(c, AGENT, ids, tally)
        _targeted(c, tally)
        _imports(c, tally)
    with psycopg.connect(database, autocommit=True) as owner:
        owner_role = owner.execute("SELECT current_user").fetchone()[0]
        n_owner = _attack_catalog(owner, owner_role, ids, tally)
        owner_calls = [
            ("create_role name twice", "SELECT brain.create_role(%s, 1), brain.create_role(%s, 1)"),
            ("create_role access", "SELECT brain.create_role('echo_b', 1, %s)"),
            ("create_role timeout", "SELECT brain.create_role('echo_c', 1, statement_timeout => %s)"),
            ("create_workspace twice", "SELECT brain.create_workspace(%s), brain.create_workspace(%s)"),
            ("create_workspace name", "SELECT brain.create_workspace(%s || E'\\n')"),
            ("grant a group role", "SELECT brain.grant_workspace(%s, 1)"),
            ("token for a non-client", "SELECT brain.create_token(%s, 'x')"),
        ]
        for what, statement in owner_calls:
            for m in (PLAIN.lower(), PLAIN):
                try:
                    with owner.transaction(force_rollback=True):
                        owner.execute(statement, [m] * statement.count("%s"))
                except psycopg.Error as exc:
                    tally.saw(f"owner: {what} ({m})", said(exc))
        log = _server_log(owner)
        events = owner.execute(
            "SELECT coalesce(string_agg(concat_ws(' ', tool, error), ' '), '') FROM brain.tool_event"
        ).fetchone()[0]
    logged = log is not None and echoes(log[len(log_before) :])
    with capsys.disabled():
        print(
            f"\nSQL: {n_client} functions as a client, {n_owner} as the owner, the known checks, imports: "
            f"{tally.tried} tried, {len(tally.through)} echoed; in the server's log: {logged}"
            + ("" if log is not None else " (server log not readable here)")
            + f"; in a tool event: {echoes(events)}"
        )
        for t in tally.through:
            print(f"  GOT THROUGH {t}")
    assert (tally.through, logged, echoes(events)) == ([], False, False)


# --- the CLI -----------------------------------------------------------------------------


def _brain(
    env: dict[str, str], *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pybrain", *args],
        capture_output=True,
        env={**os.environ, **env, **(extra_env or {})},
        timeout=120,
        check=False,
    )


def test_no_cli_error_repeats_an_argument(cli_env, conn, capsys) -> None:
    remember(conn, kind="fact", headline="Deploys run from the release branch")
    tally = Tally()
    m = FAKE_SECRET
    cases: list[tuple[str, list[str], dict[str, str] | None]] = [
        ("remember KIND", ["remember", m, "A headline"], None),
        ("remember --severity", ["remember", "rule", "A rule", "--severity", m], None),
        ("remember --origin", ["remember", "fact", "A fact", "--origin", m], None),
        ("remember --on-related", ["remember", "fact", "A fact", "--on-related", m], None),
        ("remember --status", ["remember", "task", "A task", "--status", m], None),
        ("remember --complexity", ["remember", "incident", "An incident", "--complexity", m], None),
        ("remember --category", ["remember", "fact", "A fact", "--category", m], None),
        ("remember --importance", ["remember", "fact", "A fact", "--importance", m], None),
        ("remember --priority", ["remember", "task", "A task", "--priority", m], None),
        ("remember --halflife-days", ["remember", "fact", "A fact", "--halflife-days", m], None),
        ("remember --metadata", ["remember", "fact", "A fact", "--metadata", "{" + m], None),
        ("remember, an extra argument", ["remember", "fact", "A fact", "a body", m], None),
        ("recall ID", ["recall", m], None),
        ("rate DIRECTION", ["rate", "1", m], None),
        ("search --kind", ["search", "deploys", "--kind", m], None),
        ("search --max-results", ["search", "deploys", "--max-results", m], None),
        ("search --min-relevance", ["search", "deploys", "--min-relevance", m], None),
        ("search --as-of", ["search", "deploys", "--as-of", m], None),
        ("task STATUS", ["task", "2", m], None),
        ("wire CLIENT", ["wire", m], None),
        ("hook EVENT", ["hook", m], None),
        ("import --format", ["import", "--format", m, "/dev/null"], None),
        ("workspace grant WORKSPACE", ["workspace", "grant", "someone", m], None),
        ("BRAIN_SESSION", ["session", "end"], {"BRAIN_SESSION": m}),
    ]
    for what, args, extra in cases:
        r = _brain(cli_env, *args, extra_env=extra)
        out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
        if r.returncode == 0:
            tally.saw(f"brain {what} (accepted)", out)
        else:
            tally.saw(f"brain {what}", out)
    with capsys.disabled():
        print(f"\nCLI: {tally.tried} tried, {len(tally.through)} echoed")
        for t in tally.through:
            print(f"  GOT THROUGH {t}")
    assert tally.through == []


# --- the MCP server ----------------------------------------------------------------------


def test_no_mcp_error_repeats_an_argument(cli_env, conn, database, capsys) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    remember(conn, kind="fact", headline="Deploys run from the release branch")
    task = remember(conn, kind="task", headline="Rotate the staging keys")["memory_id"]
    m = FAKE_SECRET
    calls: list[tuple[str, dict[str, Any]]] = [
        ("remember", {"kind": m, "headline": "A headline"}),
        ("remember", {"kind": "rule", "headline": "A rule", "severity": m}),
        ("remember", {"kind": "fact", "headline": "A fact", "category": m}),
        ("remember", {"kind": "fact", "headline": "A fact", "origin": m}),
        ("remember", {"kind": "fact", "headline": "A fact", "on_related": m}),
        ("remember", {"kind": "task", "headline": "A task", "status": m}),
        ("remember", {"kind": "incident", "headline": "An incident", "complexity": m}),
        ("remember", {"kind": "fact", "headline": "A fact", "importance": m}),
        ("remember", {"kind": "rule", "headline": "A rule", "skill_trigger": {"name": m}}),
        ("remember", {"kind": "rule", "headline": "A rule", "skill_trigger": m}),
        ("remember", {"kind": "fact", "headline": "A fact", m: m}),
        ("search", {"query": "deploys", "max_results": m}),
        ("search", {"query": "deploys", "kinds": [m]}),
        ("search", {"query": "deploys", "as_of": m}),
        ("recall", {"id": m}),
        ("rate", {"id": 1, "direction": m}),
        ("update_task", {"id": task, "status": m}),
        ("load_skill", {"name": m}),
        ("load_pack", {"name": m}),
        ("acknowledge_action_item", {"id": 1, "response": m}),
        ("scratch_set", {"key": m + " !", "value": "v"}),
        ("metrics", {"window": m}),
        (m, {}),
    ]
    tally = Tally()

    async def run(errlog) -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "pybrain", "mcp"],
            env={**cli_env, "BRAIN_EMBED_SERVER": "off", "BRAIN_MCP_PROFILE": "full"},
        )
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            await s.call_tool("boot_session", {"source": "claude", "project": "web"})
            for tool, arguments in calls:
                try:
                    result = await s.call_tool(tool, arguments)
                except Exception as exc:  # a protocol error is read too
                    tally.saw(f"mcp {tool} {sorted(arguments)}", str(exc))
                    continue
                text = " ".join(getattr(c, "text", "") for c in result.content)
                label = f"mcp {tool} {sorted(k if k != m else 'UNKNOWN' for k in arguments)}"
                tally.saw(label + ("" if result.is_error else " (accepted)"), text)

    with tempfile.TemporaryFile("w+") as errlog:
        anyio.run(run, errlog)
        errlog.seek(0)
        stderr = errlog.read()
    with psycopg.connect(database, autocommit=True) as admin:
        events = admin.execute(
            "SELECT coalesce(string_agg(concat_ws(' ', tool, error_code, error), E'\\n'), '')"
            " FROM brain.tool_event"
        ).fetchone()[0]
    tally.saw("mcp server's stderr", stderr)
    tally.saw("tool events", events)
    with capsys.disabled():
        print(f"\nMCP: {tally.tried} tried, {len(tally.through)} echoed")
        for t in tally.through:
            print(f"  GOT THROUGH {t}")
    assert tally.through == []


# --- secrets stored before the scanner knew them ------------------------------------------


def test_stored_secrets_are_found_by_id_never_by_value(database, agent_url, capsys) -> None:
    """A row that holds a secret the gate would refuse today (stored by an older release,
    here planted by the owner with the triggers off) is reported by id, field and kind."""
    from secret_corpus import SECRETS
    from test_security import leaks

    with psycopg.connect(agent_url, autocommit=True) as c:
        clean = remember(c, kind="fact", headline="Deploys run from the release branch")["memory_id"]
        planted = [remember(c, kind="fact", headline=f"Service note {i}")["memory_id"] for i in range(3)]
        annotation = scalar(c, "SELECT brain.annotate(%s, 'Checked against the runbook.')", (planted[0],))
    samples = [SECRETS[0], SECRETS[len(SECRETS) // 2], SECRETS[-1]]
    with psycopg.connect(database, autocommit=True) as owner:
        owner.execute("SET session_replication_role = replica")  # as an older release stored them
        owner.execute("UPDATE brain.memory SET body = %s WHERE memory_id = %s", (samples[0][1], planted[0]))
        owner.execute(
            "UPDATE brain.memory SET metadata = jsonb_build_object('note', %s::text) WHERE memory_id = %s",
            (samples[1][1], planted[1]),
        )
        owner.execute(
            "UPDATE brain.annotation SET note = %s WHERE memory_id = %s", (samples[2][1], planted[0])
        )
        owner.execute(
            "UPDATE brain.memory SET state = 'archived', archived_at = now() WHERE memory_id = %s",
            (planted[2],),
        )
        owner.execute("UPDATE brain.memory SET body = %s WHERE memory_id = %s", (samples[0][1], planted[2]))
        _client_role(owner, "echo_reader", "echo-reader-pass-1", "read")
    with psycopg.connect(agent_url, autocommit=True) as c:
        found = rows(c, "SELECT * FROM brain.scan_stored_secrets()")
        paged = rows(
            c, "SELECT * FROM brain.scan_stored_secrets(max_rows => 1, after_id => %s)", (planted[0],)
        )
    shown = json.dumps(found, default=str)
    leaked = [kind for kind, _, secret in samples if leaks(shown, secret)]
    with capsys.disabled():
        print(
            f"\nstored secrets found: {[(r['memory_id'], r['state'], r['field'], r['kinds']) for r in found]}"
        )
        print(f"values shown: {leaked}")
    assert {(r["memory_id"], r["field"]) for r in found} == {
        (planted[0], "body"),
        (planted[0], f"annotation #{annotation}"),
        (planted[1], "metadata"),
        (planted[2], "body"),
    }
    assert all(r["kinds"] for r in found) and clean not in {r["memory_id"] for r in found}
    assert [r["memory_id"] for r in paged] == [planted[1]]
    assert leaked == []
    reader = make_conninfo(
        **{**conninfo_to_dict(database), "user": "echo_reader", "password": "echo-reader-pass-1"}
    )
    with psycopg.connect(reader, autocommit=True) as r, pytest.raises(psycopg.Error) as caught:
        r.execute("SELECT * FROM brain.scan_stored_secrets()")
    assert caught.value.sqlstate == "BR020"
