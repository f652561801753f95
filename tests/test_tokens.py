"""Bearer tokens of `brain serve`: created by admins, kept as hashes, verified by the database."""

from __future__ import annotations

import contextlib
import json

import psycopg
import pytest
from conftest import TEST_ROLE, new_database, with_database
from helpers import call_scalar, raises_br, remember, rows, scalar
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from test_migrations import RELEASED, older_release

from pybrain import db
from pybrain.errors import AccessDenied
from pybrain.serve import auth

SERVE_ROLE = "brain_serve_test"


def ensure_role(admin: psycopg.Connection, name: str, *, in_role: str = "brain_user") -> None:
    """A login role of the test server (roles are shared by the test databases)."""
    if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
        return
    # (another test process may create it first)
    with contextlib.suppress(psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw' IN ROLE {}").format(
                sql.Identifier(name), sql.Identifier(in_role)
            )
        )


@pytest.fixture
def serve_url(admin: psycopg.Connection, database: str) -> str:
    """The server's login role: a member of brain_server, nothing else."""
    ensure_role(admin, SERVE_ROLE, in_role="brain_server")
    return with_database(database, conninfo_to_dict(database)["dbname"], user=SERVE_ROLE, password="pw")


def create(conn: psycopg.Connection, **kwargs) -> dict:
    return call_scalar(conn, "create_token", **kwargs)


def test_a_token_is_shown_once_and_only_its_hash_is_kept(conn, admin, serve_url) -> None:
    remember(conn, kind="fact", headline="Billing runs on PostgreSQL 17 in eu-west")
    made = create(conn, role=TEST_ROLE, name="laptop-claude", expires_in="30 days")
    token = made["token"]
    assert auth.TOKEN_PATTERN.match(token), made
    assert made["access"] == "admin" and made["workspace"] == 1 and made["role"] == TEST_ROLE
    assert made["prefix"] == token[:12]
    # Nowhere in any table of the database: not the token, not its random part.
    tables = rows(
        admin,
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')",
    )
    found = []
    for t in tables:
        text = scalar(
            admin,
            sql.SQL("SELECT coalesce(string_agg(x::text, '|'), '') FROM {} x").format(
                sql.Identifier(t["nspname"], t["relname"])
            ),
        )
        if token[4:] in text or token[12:] in text:
            found.append(t["relname"])
    print(f"searched {len(tables)} tables for the token: found in {found or 'none'}")
    assert found == []
    stored = rows(admin, "SELECT token_hash, prefix, expires_at - created_at AS life FROM brain.token")
    import hashlib

    assert stored == [
        {
            "token_hash": hashlib.sha256(token.encode()).hexdigest(),
            "prefix": token[:12],
            "life": stored[0]["life"],
        }
    ]
    assert stored[0]["life"].days == 30
    # The server's role verifies it; the use is recorded.
    with psycopg.connect(serve_url, autocommit=True) as server:
        principal = auth.verify(server, token)
    assert principal == auth.Principal(
        workspace=1,
        role=TEST_ROLE,
        access="admin",
        token_id=made["token_id"],
        name="laptop-claude",
        expires_at=principal.expires_at,
    )
    listed = rows(conn, "SELECT * FROM brain.list_tokens()")
    assert [(t["name"], t["state"], t["last_used_at"] is not None) for t in listed] == [
        ("laptop-claude", "active", True)
    ]
    assert "token" not in listed[0] and "token_hash" not in listed[0]


def test_wrong_revoked_expired_and_orphaned_tokens_are_refused(conn, admin, serve_url) -> None:
    good = create(conn, role=TEST_ROLE, name="ci", access="read")
    gone = create(conn, role=TEST_ROLE, name="old-laptop")
    late = create(conn, role=TEST_ROLE, name="contractor", expires_in="1 hour")
    scalar(conn, "SELECT brain.revoke_token(name => 'old-laptop')")
    admin.execute("UPDATE brain.token SET expires_at = now() - interval '1 second' WHERE name = 'contractor'")
    with psycopg.connect(serve_url, autocommit=True) as server:
        assert auth.verify(server, good["token"]).access == "read"
        refused = {}
        for label, token in (
            ("none", None),
            ("garbage", "Bearer hunter2"),
            ("unknown", "pbt_" + "0" * 64),
            ("one digit off", good["token"][:-1] + ("0" if good["token"][-1] != "0" else "1")),
            ("revoked", gone["token"]),
            ("expired", late["token"]),
        ):
            with pytest.raises(auth.TokenRefused) as caught:
                auth.verify(server, token)
            refused[label] = (caught.value.status, caught.value.message)
        print(json.dumps(refused, indent=1))
        assert {k: v[0] for k, v in refused.items()} == dict.fromkeys(refused, 401)
        assert refused["revoked"][1] == "The token was revoked."
        assert refused["expired"][1] == "The token has expired."
        # The role loses its membership: the token is good but forbidden (403).
        scalar(admin, "SELECT brain.revoke_workspace(%s, 1)", (TEST_ROLE,))
        with pytest.raises(auth.TokenRefused) as caught:
            auth.verify(server, good["token"])
        assert caught.value.status == 403
        # Granted again, with less: the token's access falls with the role's.
        scalar(admin, "SELECT brain.grant_workspace(%s, 1, 'read')", (TEST_ROLE,))
        assert auth.verify(server, good["token"]).access == "read"
    states = {t["name"]: t["state"] for t in rows(admin, "SELECT * FROM brain.list_tokens(1, true)")}
    assert states == {"ci": "active", "old-laptop": "revoked", "contractor": "expired"}


def test_a_token_has_at_most_its_roles_access_and_only_admins_make_them(conn, admin, database) -> None:
    ensure_role(admin, "agent_writer")
    scalar(admin, "SELECT brain.grant_workspace('agent_writer', 1, 'write')")
    made = create(conn, role="agent_writer", name="writer")
    assert made["access"] == "write"
    assert create(conn, role="agent_writer", name="reader", access="read")["access"] == "read"
    with raises_br("BR009") as refused:
        create(conn, role="agent_writer", name="boss", access="admin")
    assert "cannot have admin" in refused.error.diag.message_primary
    with raises_br("BR009"):
        create(conn, role="agent_writer", name="writer")  # the name is taken
    with raises_br("BR009"):
        create(conn, role="agent_writer", name="forever", expires_in="11 years")
    # Not the owner, a superuser, or a role of the server.
    ensure_role(admin, SERVE_ROLE, in_role="brain_server")
    for role in ("postgres", "brain_server", SERVE_ROLE):
        with raises_br("BR009"):
            create(conn, role=role, name=f"as-{role}")
    ensure_role(admin, "agent_outsider")
    with raises_br("BR020"):
        create(conn, role="agent_outsider", name="outsider")
    # A writer is no admin: it may neither make, list nor revoke tokens.
    writer_url = with_database(
        database, conninfo_to_dict(database)["dbname"], user="agent_writer", password="pw"
    )
    with psycopg.connect(writer_url, autocommit=True) as writer:
        with raises_br("BR020"):
            create(writer, role="agent_writer", name="mine")
        with raises_br("BR020"):
            rows(writer, "SELECT * FROM brain.list_tokens()")
        with raises_br("BR020"):
            scalar(writer, "SELECT brain.revoke_token(%s)", (made["token_id"],))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            writer.execute("SELECT * FROM brain.token")
    assert scalar(admin, "SELECT count(*) FROM brain.token WHERE revoked_at IS NULL") == 2


def test_a_transaction_as_a_principal_has_its_role_workspace_and_access(conn, admin, serve_url) -> None:
    ensure_role(admin, "agent_writer")
    scalar(admin, "SELECT brain.grant_workspace('agent_writer', 1, 'write')")
    remember(conn, kind="rule", severity="PATTERN", headline="Deploy billing only after the canary passes")
    read_token = create(conn, role="agent_writer", name="reader", access="read")["token"]
    write_token = create(conn, role="agent_writer", name="writer")["token"]
    with psycopg.connect(serve_url, autocommit=True) as server:
        # Without a principal the server's role may do nothing but verify tokens.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            scalar(server, "SELECT count(*) FROM brain.memory")
        reader = auth.verify(server, read_token)
        with auth.transaction(server, reader) as cur:
            cur.execute("SELECT current_user AS who, brain.workspace_access() AS access")
            assert cur.fetchone() == {"who": "agent_writer", "access": "read"}
            cur.execute("SELECT count(*) AS n FROM brain.search('canary deploy')")
            assert cur.fetchone()["n"] == 1
        with pytest.raises(AccessDenied), auth.transaction(server, reader) as cur:
            cur.execute("SELECT * FROM brain.remember(kind => 'fact', headline => 'Readers cannot write')")
        writer = auth.verify(server, write_token)
        with auth.transaction(server, writer) as cur:
            cur.execute("SELECT * FROM brain.remember(kind => 'fact', headline => 'Writers store facts')")
            assert cur.fetchone()["action"] == "created"
        # Nothing outlives the transaction on the pooled connection.
        assert scalar(server, "SELECT current_user") == SERVE_ROLE
        assert scalar(server, "SELECT current_setting('brain.max_access', true)") in ("", None)


def test_cli_creates_lists_and_revokes_tokens(brain_cli) -> None:
    r = brain_cli("token", "create", "--role", TEST_ROLE, "--name", "laptop", "--expires-in", "2w")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("created token #1 laptop: admin access to workspace #1 as brain_tester")
    assert auth.TOKEN_PATTERN.match(lines[1].removeprefix("token: "))
    assert "shown once" in r.stderr
    r = brain_cli("token", "create", "--role", TEST_ROLE, "--name", "ci", "--access", "read", "--json")
    made = json.loads(r.output)
    assert made["access"] == "read" and made["expires_at"] is None
    listed = brain_cli("token", "list").output.splitlines()
    assert len(listed) == 2 and listed[1].startswith(f"#2 ci ({made['prefix']}…): brain_tester read, active;")
    assert made["token"] not in brain_cli("token", "list", "--json").output
    assert brain_cli("token", "revoke", "ci").output.strip() == "revoked token #2 ci"
    assert "revoked already" in brain_cli("token", "revoke", "#2").output
    r = brain_cli("token", "revoke", "#9")
    assert r.exit_code == 1 and "No token #9 in workspace 1" in r.stderr
    r = brain_cli("token", "create", "--role", TEST_ROLE, "--name", "x", "--expires-in", "soon")
    assert r.exit_code == 1 and "A lifetime is a number and a unit" in r.stderr
    assert len(brain_cli("token", "list").output.splitlines()) == 1
    assert len(brain_cli("token", "list", "--all").output.splitlines()) == 2


def test_015_upgrades_a_database_of_the_previous_release(admin_url: str) -> None:
    with new_database(admin_url, "brain_upgrade_015") as url, older_release(url, 13) as c:
        # (migration 013 gave the existing login roles write access to the default workspace)
        report = db.migrate(c)
        assert report.applied == sorted(RELEASED)[13:]
        assert db.is_current(c)
        made = create(c, role=TEST_ROLE, name="after-upgrade")
        assert made["access"] == "write"
        # The memberships of the previous release are unchanged, and access is what it was.
        assert scalar(c, "SELECT brain._access(1, %s)", (TEST_ROLE,)) == "write"
        c.execute("SELECT set_config('brain.max_access', 'read', false)")
        assert scalar(c, "SELECT brain._access(1, %s)", (TEST_ROLE,)) == "read"


def test_the_starlette_helpers_authenticate_and_refuse(conn, serve_url) -> None:
    from starlette.requests import Request

    from pybrain.serve.pool import open_pool

    token = create(conn, role=TEST_ROLE, name="dashboard", access="read")["token"]

    def request(authorization: str | None, client: str = "203.0.113.9") -> Request:
        headers = [(b"authorization", authorization.encode())] if authorization else []
        return Request(
            {"type": "http", "method": "GET", "path": "/", "headers": headers, "client": (client, 5000)}
        )

    pool = open_pool(serve_url, 1)
    try:
        principal = auth.authenticate(pool, request(f"Bearer {token}"))
        assert (principal.role, principal.workspace, principal.access, principal.name) == (
            TEST_ROLE,
            1,
            "read",
            "dashboard",
        )
        with pytest.raises(auth.TokenRefused) as caught:
            auth.authenticate(pool, request(None))
        response = auth.refusal(
            caught.value, "https://brain.example.com/.well-known/oauth-protected-resource/mcp"
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == (
            'Bearer error="invalid_token", error_description="A bearer token is required.", '
            'resource_metadata="https://brain.example.com/.well-known/oauth-protected-resource/mcp"'
        )
        # The anonymous principal only for a client on this machine.
        anonymous = auth.Principal(workspace=None, role=None, access=None)
        assert auth.authenticate(pool, request(None, "127.0.0.1"), anonymous=anonymous) is anonymous
        with pytest.raises(auth.TokenRefused) as caught:
            auth.authenticate(pool, request(None), anonymous=anonymous)
        assert caught.value.status == 403
        # A token is checked even where anonymous requests are allowed.
        with pytest.raises(auth.TokenRefused):
            auth.authenticate(pool, request("Bearer pbt_" + "c" * 64, "127.0.0.1"), anonymous=anonymous)
    finally:
        pool.close()
