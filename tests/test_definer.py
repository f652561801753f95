"""SECURITY DEFINER functions as doors: a read-only member of its own workspace tries to make
every one of them run something it named, prepared, shadowed or set.

A definer runs as the owner of schema brain. Whatever of the caller's session it resolves at
run time — a prepared statement, a temporary table, function or operator, the search_path, a
role it SET, a custom setting — would run with the owner's rights. Each attack below plants
code that, when run, logs the role it ran as into the attacker's own temporary table; after
every call the log must be empty, the victim workspace unchanged, no victim text shown and the
attacker's role unchanged. The definers are read from the catalog, so a new one is attacked
without changing this file. A second part checks what a definer bug could reach at all: the
owner is not a superuser, runs no program, reads no server file, creates no role.
"""

from __future__ import annotations

import json
import re
from typing import Any

import psycopg
import pytest
from conftest import with_database
from helpers import rows, scalar
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from test_tenancy import SECRET, VICTIM_WS, _calls, victim, victim_state  # noqa: F401  (victim: its fixture)

READER = "brain_eve"
MARK = "planted-by-eve"


@pytest.fixture
def reader_url(admin: psycopg.Connection, database: str, victim) -> str:
    """A login role with read access to a workspace of its own, and nothing else."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER,)).fetchone():
        admin.execute(f"CREATE ROLE {READER} LOGIN PASSWORD 'eve' IN ROLE brain_user")
    ws = int(scalar(admin, "SELECT brain.create_workspace('eve') ->> 'workspace'"))
    scalar(admin, "SELECT brain.grant_workspace(%s, %s, 'read')", (READER, ws))
    admin.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
    scalar(admin, "SELECT space_id FROM brain.use_embedding_space('hash', 'feature-hash-v1', 384)")
    scalar(admin, "SELECT (brain.remember(kind => 'fact', headline => 'Zanzibar probe notes')).memory_id")
    admin.execute("SELECT set_config('brain.workspace', '', false)")
    return with_database(database, conninfo_to_dict(database)["dbname"], user=READER, password="eve")


def _role_state(admin: psycopg.Connection) -> Any:
    return rows(
        admin,
        "SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls, r.rolreplication,"
        " ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid"
        "       WHERE m.member = r.oid ORDER BY 1) AS member_of"
        " FROM pg_roles r WHERE r.rolname = %s",
        (READER,),
    )


def _plant(c: psycopg.Connection, admin: psycopg.Connection) -> int:
    """The attacker's own objects in pg_temp, each logging the role that runs it: a log
    table, a function per name schema brain uses (with its argument types), operators, and a
    temporary table of the name of each relation of schema brain. The counts planted and
    refused (a client may not create functions, so neither functions nor operators)."""
    c.execute("CREATE TEMP TABLE IF NOT EXISTS hijack_log (ran_as text, what text)")
    c.execute("GRANT ALL ON pg_temp.hijack_log TO PUBLIC")  # whoever runs the planted code logs
    planted = refused = 0
    try:
        c.execute(
            "CREATE OR REPLACE FUNCTION pg_temp.hijacked(what text) RETURNS boolean LANGUAGE sql"
            " AS $$ INSERT INTO pg_temp.hijack_log VALUES (current_user, what) RETURNING false $$"
        )
    except psycopg.errors.InsufficientPrivilege:
        refused += 1
    functions = rows(
        admin,
        "SELECT DISTINCT p.proname,"
        " ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t) AS argtypes"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'brain' AND p.prokind = 'f' AND p.prorettype <> 'trigger'::regtype"
        "   AND NOT p.proretset ORDER BY 1",
    )
    builtins = [
        ("current_setting", ["text", "boolean"]),
        ("set_config", ["text", "text", "boolean"]),
        ("lower", ["text"]),
        ("format", ["text", "text"]),
        ("md5", ["text"]),
        ("pg_has_role", ["name", "name", "text"]),
        ("to_tsvector", ["regconfig", "text"]),
        ("jsonb_build_object", ["text", "text"]),
        ("array_position", ["text[]", "text"]),
        ("now", []),
    ]
    for name, argtypes in [(f["proname"], f["argtypes"]) for f in functions] + builtins:
        args = ", ".join(argtypes)
        try:
            c.execute(
                sql.SQL(
                    "CREATE OR REPLACE FUNCTION pg_temp.{}({}) RETURNS boolean LANGUAGE sql"
                    " AS $$ SELECT pg_temp.hijacked({}) $$"
                ).format(sql.Identifier(name), sql.SQL(args), sql.Literal(f"function {name}"))
            )
            planted += 1
        except psycopg.errors.InsufficientPrivilege:
            refused += 1
    for op, left, right in [
        ("=", "bigint", "bigint"),
        ("=", "text", "text"),
        ("@@", "tsvector", "tsquery"),
        ("<=>", "public.vector", "public.vector"),
        ("%>", "text", "text"),
    ]:
        fn = f"op_{len(op)}_{left.replace('.', '_')}"
        try:
            c.execute(
                sql.SQL(
                    "CREATE OR REPLACE FUNCTION pg_temp.{}(a {}, b {}) RETURNS boolean LANGUAGE sql"
                    " AS $$ SELECT pg_temp.hijacked({}) $$"
                ).format(sql.Identifier(fn), sql.SQL(left), sql.SQL(right), sql.Literal(f"operator {op}"))
            )
            c.execute(
                f"CREATE OPERATOR pg_temp.{op}"
                f" (LEFTARG = {left}, RIGHTARG = {right}, FUNCTION = pg_temp.{fn})"
            )
            planted += 1
        except psycopg.errors.InsufficientPrivilege:
            refused += 1
        except psycopg.errors.DuplicateFunction:
            planted += 1
    relations = [
        r[0]
        for r in admin.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'v', 'p') ORDER BY 1"
        )
    ]
    for rel in relations:
        try:
            c.execute(
                sql.SQL("CREATE TEMP TABLE IF NOT EXISTS {} (LIKE {})").format(
                    sql.Identifier(rel), sql.Identifier("brain", rel)
                )
            )
        except psycopg.errors.InsufficientPrivilege:  # a table clients may not read
            c.execute(
                sql.SQL("CREATE TEMP TABLE IF NOT EXISTS {} (workspace_id bigint)").format(
                    sql.Identifier(rel)
                )
            )
        planted += 1
    return planted, refused


def _hijack_prepared(c: psycopg.Connection, rettype: str | None) -> list[str]:
    """Every statement the session holds, replaced by one of the same name and parameter types
    that logs the role running it and returns no rows of the shape the caller expects."""
    replaced = []
    for name, types in c.execute(
        "SELECT name, parameter_types::text[] FROM pg_prepared_statements"
    ).fetchall():
        c.execute(sql.SQL("DEALLOCATE {}").format(sql.Identifier(name)))
        shape = f"(NULL::{rettype}).*" if rettype and "." in rettype else f"NULL::{rettype or 'text'}"
        params = f"({', '.join(types)})" if types else ""
        c.execute(
            sql.SQL(
                "PREPARE {}{} AS INSERT INTO pg_temp.hijack_log SELECT current_user, {} RETURNING {}"
            ).format(sql.Identifier(name), sql.SQL(params), sql.Literal(f"prepared {name}"), sql.SQL(shape))
        )
        replaced.append(name)
    return replaced


def _hostile_settings(c: psycopg.Connection, victim: dict[str, Any], mode: str) -> None:
    """Every custom setting pybrain reads, set to what would help the attacker; the planner's
    and text search's settings too; search_path with pg_temp first."""
    settings = {
        "brain.workspace": str(VICTIM_WS) if mode == "victim" else "",
        "brain.max_access": "admin",
        "brain.actor": "postgres",
        "brain.session": str(victim["session"]),
        "brain.commit_checks": "{}",
        "brain.trajectory": "{}",
        "default_text_search_config": "pg_catalog.simple",
        "enable_indexscan": "off",
        "plan_cache_mode": "force_custom_plan",
        "search_path": "pg_temp, public, pg_catalog",
    }
    for key, value in settings.items():
        c.execute("SELECT set_config(%s, %s, false)", (key, value))


def _definers(admin: psycopg.Connection) -> list[dict[str, Any]]:
    return rows(
        admin,
        "SELECT p.oid::regprocedure::text AS signature, p.proname AS name, p.prosecdef AS definer,"
        " p.pronargs - p.pronargdefaults AS required,"
        " coalesce(p.proargnames, '{}') AS argnames,"
        " ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t) AS argtypes,"
        " CASE WHEN t.typtype = 'c' OR t.oid = 'record'::regtype THEN NULL"
        "      ELSE format_type(p.prorettype, NULL) END AS scalar_type,"
        " CASE WHEN t.typtype = 'c' THEN format_type(p.prorettype, NULL) END AS row_type"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_type t ON t.oid = p.prorettype"
        " WHERE n.nspname = 'brain' AND p.prosecdef AND p.prokind = 'f'"
        "   AND has_function_privilege(%s, p.oid, 'EXECUTE') ORDER BY 1",
        (READER,),
    )


def test_a_read_only_member_cannot_run_its_statement_through_search(
    admin, reader_url, victim, capsys
) -> None:
    """The reported attack: search prepares its statement under a name the caller can read
    from pg_prepared_statements; the caller replaces it and searches again."""
    tried, got_through = [], []
    with psycopg.connect(reader_url, autocommit=True) as c:
        c.execute("SELECT count(*) FROM brain.search('probe notes')")
        names = [r[0] for r in c.execute("SELECT name FROM pg_prepared_statements")]
        tried.append(f"search left {len(names)} prepared statement(s) in the caller's session")
        if names:
            got_through.append(f"prepared statements left to the caller: {names}")
        for name in names:
            c.execute(sql.SQL("DEALLOCATE {}").format(sql.Identifier(name)))
            c.execute(
                sql.SQL(
                    "PREPARE {}(brain.search_request) AS SELECT"
                    " (jsonb_populate_record(NULL::brain.search_result, jsonb_build_object("
                    "'headline', (SELECT string_agg(m.headline, ' | ') FROM brain.memory m),"
                    " 'preview', (SELECT r.rolsuper::text FROM pg_roles r WHERE r.rolname = current_user)"
                    " || ' as ' || current_user))).*"
                ).format(sql.Identifier(name))
            )
            tried.append(f"replaced {name} with a statement reading every workspace's headlines")
        out = json.dumps(rows(c, "SELECT headline, preview FROM brain.search('probe notes')"), default=str)
        if SECRET in out or " as " in out:
            got_through.append(f"search ran the caller's statement: {out[:300]}")
    with capsys.disabled():
        print("\nsearch's statement:", "; ".join(tried), "| got through:", got_through or "nothing")
    assert got_through == []


@pytest.mark.parametrize("acting", ["login role", "SET ROLE brain_user"])
def test_every_definer_in_a_hostile_session(admin, reader_url, victim, capsys, acting) -> None:
    definers = _definers(admin)
    assert len(definers) >= 10, "the reader can execute the API's definers"
    victim_ids = [victim[k] for k in ("rule", "fact", "newer", "task", "incident", "session", "action_item")]
    before, role_before = victim_state(admin), _role_state(admin)
    attempts, got_through = 0, []
    # prepare_threshold: the driver prepares none of its own, so each one the session holds is a definer's
    with psycopg.connect(reader_url, autocommit=True, prepare_threshold=None) as c:
        c.execute("SET statement_timeout = '10s'")
        planted, refused = _plant(c, admin)
        if acting != "login role":
            c.execute("SET ROLE brain_user")
        for fn in definers:
            for mode in ("own", "victim"):
                for call in _calls(fn, victim_ids):
                    # Twice: the first call may leave something of its own in the session
                    # (a prepared statement) for the attacker to replace before the second.
                    for round_ in (1, 2):
                        _hostile_settings(c, victim, mode)
                        if round_ == 2:
                            _hijack_prepared(c, fn["row_type"] or fn["scalar_type"])
                        attempts += 1
                        try:
                            cur = c.execute(call)
                            out = json.dumps(cur.fetchall(), default=str)
                        except psycopg.Error as exc:
                            out = f"{exc.diag.message_primary} {exc.diag.message_detail}"
                        c.execute("RESET search_path")
                        if SECRET in out.lower():
                            got_through.append(f"{fn['signature']} ({mode}): victim text {out[:160]}")
                        logged = c.execute("SELECT ran_as, what FROM pg_temp.hijack_log").fetchall()
                        if logged:
                            got_through.append(f"{fn['signature']} ({mode}) ran the caller's {logged}")
                            c.execute("DELETE FROM pg_temp.hijack_log")
                        held = c.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0]
                        if held and round_ == 1:
                            got_through.append(
                                f"{fn['signature']} ({mode}) left {held} prepared statement(s)"
                            )
                    c.execute("DEALLOCATE ALL")
    if victim_state(admin) != before:
        got_through.append("the victim workspace changed")
    if _role_state(admin) != role_before:
        got_through.append(f"the reader's role changed: {_role_state(admin)}")
    with capsys.disabled():
        print(
            f"\n{len(definers)} definers as a read-only member ({acting}), {planted} objects planted in"
            f" pg_temp ({refused} refused), hostile settings and hijacked statements: {attempts} calls, "
            f"{len(got_through)} got through"
        )
        for line in got_through[:20]:
            print("  ", line)
    assert got_through == []


def _search_plans(admin: psycopg.Connection) -> list[dict[str, Any]]:
    """The functions that hold search's statements and their plans: brain._search_ranked, the
    filters' count and the vector leg by shape (each space's walk among them), as the catalog
    has them."""
    return rows(
        admin,
        "SELECT p.oid::regprocedure::text AS f, p.prosrc, p.proconfig, p.proowner::regrole::text AS owner,"
        " p.proacl::text AS acl FROM pg_proc p WHERE p.pronamespace = 'brain'::regnamespace"
        " AND (p.proname IN ('_search_ranked', '_search_kept')"
        "      OR p.proname ~ '^_search_vector_(kept|all|[0-9]+_[0-9]+)$') ORDER BY 1",
    )


def test_a_hostile_session_cannot_touch_searchs_plans(admin, reader_url, victim, capsys) -> None:
    """Search runs its statements as functions of schema brain whose plans PL/pgSQL keeps for the
    session (brain._search_ranked, the vector leg by shape: 005e-search-vector.sql). A reader
    tries every way at them: run one, replace, alter, drop or shadow one, plant a prepared
    statement of each one's name and its own objects in pg_temp, set the planner, DEALLOCATE
    ALL and DISCARD PLANS. Everything that would change one is refused, the catalog's functions
    are as they were, and each kind of search (the walk of the space's index, a small
    workspace's every vector, selective filters' few rows) finds what a clean session finds and
    runs nothing of the reader's."""
    from pybrain import db

    ws = int(scalar(admin, "SELECT workspace_id FROM brain.workspace WHERE name = 'eve'"))
    admin.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
    for i in range(1, 4):
        vec = [0.0] * 384
        vec[0], vec[i] = 0.9, 0.1 * i
        admin.execute(
            "SELECT brain.remember(kind => 'fact', headline => %s, embedding => %s::float8[])",
            (f"Probe notes of survey {i}", vec),
        )
    db.migrate(admin)  # the walk of eve's space, written when the function files are applied
    shapes = _search_plans(admin)
    assert any(re.search(r"_search_vector_\d+_\d+\(", f["f"]) for f in shapes), shapes
    assert len(shapes) >= 5, [f["f"] for f in shapes]
    vector = "{" + ",".join(["1"] + ["0"] * 383) + "}"
    searches = [
        f"SELECT id, vector_rank FROM brain.search('probe notes', '{vector}', min_relevance => 0)",
        f"SELECT id, vector_rank FROM brain.search('probe', '{vector}', tags => '{{}}', min_relevance => 0)",
    ]

    def each_kind(c: psycopg.Connection) -> list[Any]:
        # a small workspace (every vector; a filter keeping few rows), then past exact_rank_rows (the walk)
        found = []
        for walk in (False, True):
            admin.execute("SELECT set_config('brain.workspace', %s, false)", (str(ws),))
            admin.execute("SELECT brain.set_setting('exact_rank_rows', %s)", ("0" if walk else "2000",))
            found += [c.execute(q).fetchall() for q in searches]
        return found

    with psycopg.connect(reader_url, autocommit=True) as c:
        clean = each_kind(c)
    assert all(len([r for r in found if r[1] is not None]) == 3 for found in clean), clean
    refused, got_through = [], []
    with psycopg.connect(reader_url, autocommit=True, prepare_threshold=None) as c:
        c.execute("SET statement_timeout = '10s'")
        _plant(c, admin)
        for f in shapes:
            name = f["f"].split("(")[0]
            short = name.split(".")[1]
            args = f["f"][len(name) + 1 : -1]
            attempts = {
                "run": f"SELECT * FROM {name}({', '.join('NULL' for _ in args.split(','))})",
                "replace": f"CREATE OR REPLACE FUNCTION {f['f']} RETURNS SETOF record LANGUAGE sql"
                " AS $$ SELECT NULL $$",
                "alter": f"ALTER FUNCTION {f['f']} SET plan_cache_mode = force_custom_plan",
                "reset": f"ALTER FUNCTION {f['f']} RESET ALL",
                "drop": f"DROP FUNCTION {f['f']}",
                "shadow": f"CREATE FUNCTION pg_temp.{short}({args}) RETURNS SETOF record LANGUAGE sql"
                " AS $$ SELECT NULL $$",
            }
            for what, statement in attempts.items():
                try:
                    c.execute(statement)
                    got_through.append(f"{what} {f['f']}")
                except psycopg.errors.InsufficientPrivilege:
                    refused.append(what)
            c.execute(
                sql.SQL("PREPARE {} AS INSERT INTO pg_temp.hijack_log SELECT current_user, {}").format(
                    sql.Identifier(short), sql.Literal(f"prepared {short}")
                )
            )
        _hostile_settings(c, victim, "own")
        c.execute("DISCARD PLANS")
        hostile = each_kind(c)
        c.execute("DEALLOCATE ALL")
        again = each_kind(c)
        logged = c.execute("SELECT ran_as, what FROM pg_temp.hijack_log").fetchall()
    if logged:
        got_through.append(f"search ran the reader's {logged}")
    if hostile != clean or again != clean:
        got_through.append(f"a hostile session's searches differ: {hostile} {again} (clean {clean})")
    if _search_plans(admin) != shapes:
        got_through.append("search's functions changed")
    with capsys.disabled():
        print(
            f"\nsearch's {len(shapes)} functions: {len(refused)} attempts refused, "
            f"{len(got_through)} got through"
        )
    assert got_through == []
    assert len(refused) == 6 * len(shapes)


def test_no_function_prepares_or_runs_a_named_statement(admin) -> None:
    """A prepared statement belongs to the caller's session, which may replace it: no function
    of schema brain prepares, runs or deallocates one (a definer calls the others)."""
    found = rows(
        admin,
        "SELECT p.oid::regprocedure::text AS f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = 'brain'"
        " AND p.prosrc ~* '(\\mPREPARE\\M|\\mDEALLOCATE\\M|EXECUTE\\s+%I|''EXECUTE\\s)'",
    )
    assert found == []


def test_definers_resolve_nothing_the_caller_may_create(admin) -> None:
    """Each definer pins its search_path: pg_catalog first, pg_temp last, and between them
    only schemas in which no client role may create anything."""
    definers = rows(
        admin,
        "SELECT p.oid::regprocedure::text AS f, p.proconfig FROM pg_proc p"
        " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'brain' AND p.prosecdef",
    )
    assert definers
    for d in definers:
        (path,) = [c.split("=", 1)[1] for c in d["proconfig"] or [] if c.startswith("search_path=")] or [""]
        schemas = [s.strip() for s in path.split(",")]
        assert schemas[0] == "pg_catalog" and schemas[-1] == "pg_temp", d
        for schema in schemas[1:-1]:
            for role in ("brain_user", "brain_server", "public"):
                assert not scalar(admin, "SELECT has_schema_privilege(%s, %s, 'CREATE')", (role, schema)), (
                    d["f"],
                    role,
                    schema,
                )


# What a definer bug could reach: the owner's rights.


def _owner(admin: psycopg.Connection) -> str:
    return scalar(admin, "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'brain'")


def test_the_schema_owner_is_not_a_superuser_and_owns_every_object(admin) -> None:
    owner = _owner(admin)
    attributes = rows(
        admin,
        "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolcanlogin"
        " FROM pg_roles WHERE rolname = %s",
        (owner,),
    )
    assert attributes == [
        {
            "rolsuper": False,
            "rolcreaterole": False,
            "rolcreatedb": False,
            "rolreplication": False,
            "rolcanlogin": False,
        }
    ]
    powers = rows(
        admin,
        "SELECT g.rolname FROM pg_roles g WHERE g.rolname IN ('pg_execute_server_program',"
        " 'pg_read_server_files', 'pg_write_server_files', 'pg_read_all_data', 'pg_write_all_data',"
        " 'pg_signal_backend', 'pg_create_subscription') AND pg_has_role(%s, g.oid, 'MEMBER')",
        (owner,),
    )
    assert powers == []
    others = rows(
        admin,
        "SELECT kind, name, owner FROM ("
        " SELECT 'relation' AS kind, c.oid::regclass::text AS name, c.relowner::regrole::text AS owner"
        "   FROM pg_class c WHERE c.relnamespace = 'brain'::regnamespace"
        " UNION ALL SELECT 'function', p.oid::regprocedure::text, p.proowner::regrole::text"
        "   FROM pg_proc p WHERE p.pronamespace = 'brain'::regnamespace"
        " UNION ALL SELECT 'type', t.oid::regtype::text, t.typowner::regrole::text"
        "   FROM pg_type t WHERE t.typnamespace = 'brain'::regnamespace) AS x"
        " WHERE owner <> %s ORDER BY 1, 2",
        (owner,),
    )
    assert others == []


def test_as_the_owner_no_program_no_file_no_role(admin, capsys) -> None:
    """What a caller that made a definer run its SQL would have: the owner's rights."""
    owner = _owner(admin)
    attempts = {
        "run a program": "COPY (SELECT 1) TO PROGRAM 'true'",
        "read a server file": "SELECT pg_read_file('postgresql.conf')",
        "copy from a server file": "COPY brain.setting FROM '/etc/passwd'",
        "create a role": "CREATE ROLE brain_owned_now LOGIN",
        "make a role a superuser": "ALTER ROLE brain_user SUPERUSER",
        "grant itself a server role": "GRANT pg_execute_server_program TO " + owner,
        "create an untrusted function": (
            "CREATE FUNCTION brain.sh() RETURNS int LANGUAGE c AS 'libc', 'system'"
        ),
        "change a server setting": "ALTER SYSTEM SET log_statement = 'none'",
        "load a library": "LOAD 'auto_explain'",
    }
    got_through = []
    for what, statement in attempts.items():
        try:
            with admin.transaction():
                admin.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(owner)))
                admin.execute(statement)
                got_through.append(what)
                raise _Undo
        except _Undo:
            pass
        except psycopg.Error as exc:
            assert exc.diag.sqlstate in ("42501", "0A000", "25001", "58P01"), (what, exc.diag.sqlstate, exc)
    with capsys.disabled():
        print(
            f"\nas {owner}: {len(attempts)} server-level actions tried, got through: {got_through or 'none'}"
        )
    assert got_through == []


class _Undo(Exception):
    pass


def test_an_app_role_is_never_a_member_of_the_owner(admin) -> None:
    owner = _owner(admin)
    members = rows(
        admin,
        "SELECT r.rolname FROM pg_roles r WHERE pg_has_role(r.oid, 'brain_user', 'MEMBER')"
        " AND pg_has_role(r.oid, %s, 'MEMBER') AND NOT r.rolsuper AND r.rolname <> %s",
        (owner, owner),
    )
    assert members == []
    assert re.fullmatch(r"[a-z_]+", owner)
