"""What brain_owner plants in schema brain runs as brain_owner at the next upgrade, never as the
installer (issue 54, item 1).

brain_owner owns schema brain; the SECURITY DEFINER functions run as it, so a flaw in one lets
a client run SQL as brain_owner. Whatever it plants on the schema's tables (a default, a check,
a trigger, a rule, an index expression, a policy) or in the functions the installer calls then
runs when the installer (the superuser, on the embedded server) next migrates. Each probe below
logs the role it runs as, after trying to take the session's own role back (RESET ROLE) and to
read a server file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest
from conftest import new_database
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pybrain import db
from pybrain.errors import BrainError

AGENT = "agent_owner_probe"

# brain_owner creates no function (migration 012 revokes the languages from PUBLIC), so what it
# plants are expressions of the functions there are. Each probe records the role that ran it
# (set_config: a setting of the session that ran it, which the test reads after the upgrade).
PROBES = [
    "ALTER TABLE brain.migration ALTER COLUMN applied_at"
    " SET DEFAULT (CASE WHEN set_config('probe.default', current_user, false) <> '' THEN now() END)",
    "ALTER TABLE brain.migration ADD CONSTRAINT probe"
    " CHECK (set_config('probe.check', current_user, false) <> '')",
    "CREATE RULE probe AS ON INSERT TO brain.migration"
    " DO ALSO SELECT set_config('probe.rule', current_user, false)",
    "ALTER TABLE brain.migration ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE brain.migration FORCE ROW LEVEL SECURITY",
    "CREATE POLICY probe ON brain.migration USING (set_config('probe.policy', current_user, false) <> '')",
    "CREATE INDEX probe ON brain.migration ((name || sha256))",
    "ALTER TABLE brain.workspace ADD CONSTRAINT probe"
    " CHECK (set_config('probe.workspace', current_user, false) <> '')",
    "ALTER TABLE brain.workspace ALTER COLUMN name"
    " SET DEFAULT set_config('probe.unused', current_user, false)",
    "ALTER TABLE brain.membership ADD CONSTRAINT probe"
    " CHECK (set_config('probe.membership', current_user, false) <> '')",
    # a trigger runs a function of the schema's own (or a built-in): none of them is brain_owner's to write
    "CREATE TRIGGER probe BEFORE UPDATE ON brain.membership FOR EACH ROW"
    " EXECUTE FUNCTION suppress_redundant_updates_trigger()",
    # what the installer calls, made to run as itself rather than as the owner
    "ALTER FUNCTION brain._grant_workspace(text, bigint, text) SECURITY INVOKER",
    "ALTER FUNCTION brain._claim_objects() SECURITY DEFINER SET search_path = brain, pg_catalog",
]

# What fires at an upgrade: the row of the new migration in brain.migration, the migration's
# UPDATE of brain.workspace, and a grant the installer makes after it (as brain init gives the
# application role its workspace).
FIRED = {"default", "check", "rule", "workspace", "membership"}


@pytest.fixture
def released(admin_url: str):
    with new_database(admin_url, "brain_owner_upgrade") as url:
        yield url


def test_what_brain_owner_plants_never_runs_as_the_installer(
    released: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with psycopg.connect(released, autocommit=True) as installer:
        db.migrate(installer)
        installer.execute(f"DROP ROLE IF EXISTS {AGENT}")
        installer.execute(
            "SELECT brain.create_role(%s, 1, 'write', password => 'owner-probe-password')", (AGENT,)
        )
        # as the previous release left it: brain_owner with ADMIN on each application role
        installer.execute(f"GRANT {AGENT} TO brain_owner WITH ADMIN TRUE, INHERIT FALSE, SET FALSE")
        installer.execute(f"REVOKE {AGENT} FROM brain_server")
        with psycopg.connect(released, autocommit=True) as flaw:
            flaw.execute("SET ROLE brain_owner")
            flaw.execute(f"GRANT {AGENT} TO brain_server")  # its token's grant, made with that ADMIN
        try:
            with psycopg.connect(released, autocommit=True) as flaw:
                flaw.execute("SET ROLE brain_owner")
                for probe in PROBES:
                    flaw.execute(probe)
                for refused in (
                    "CREATE FUNCTION brain.probe() RETURNS trigger LANGUAGE plpgsql"
                    " AS $$BEGIN RETURN NEW; END$$",
                    "CREATE OR REPLACE FUNCTION brain._claim_objects() RETURNS integer LANGUAGE sql"
                    " AS 'SELECT 0'",
                ):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="language"):
                        flaw.execute(refused)
            # a release that adds a migration
            shipped = tmp_path / "sql"
            shutil.copytree(db.sql_dir(), shipped)
            number = len(db.sql_files("migrations")) + 1
            probe = f"{number:03d}-probe.sql"
            (shipped / "migrations" / probe).write_text("UPDATE brain.workspace SET name = name;\n")
            monkeypatch.setattr(db, "sql_dir", lambda: shipped)
            assert db.migrate(installer).applied == [probe]
            installer.execute("SELECT brain.grant_workspace(%s, 1, 'read')", (AGENT,))
            ran = {
                what: role
                for what in (*FIRED, "policy", "unused")
                if (
                    role := installer.execute(
                        "SELECT current_setting(%s, true)", (f"probe.{what}",)
                    ).fetchone()[0]
                )
            }
            for what, role in sorted(ran.items()):
                print(f"{what:12} ran as {role}")
            assert set(ran) >= FIRED, "each planted expression ran"
            assert set(ran.values()) == {"brain_owner"}

            # an expression that reads a server file stops the upgrade rather than read it
            with psycopg.connect(released, autocommit=True) as flaw:
                flaw.execute("SET ROLE brain_owner")
                flaw.execute("ALTER TABLE brain.migration ADD COLUMN loot text")
                flaw.execute(
                    "ALTER TABLE brain.migration ALTER COLUMN loot"
                    " SET DEFAULT pg_read_file('postgresql.conf')"
                )
                flaw.execute(
                    sql.SQL(
                        "ALTER TABLE brain.migration ADD CONSTRAINT loot"
                        " CHECK (lo_export(0, {}) = 1) NOT VALID"
                    ).format(str(tmp_path / "written-by-the-server"))
                )
            (shipped / "migrations" / f"{number + 1:03d}-probe.sql").write_text("SELECT 1;\n")
            with pytest.raises(BrainError, match="pg_read_file"):
                db.migrate(installer)
            with psycopg.connect(released, autocommit=True) as flaw:
                flaw.execute("SET ROLE brain_owner")
                flaw.execute("ALTER TABLE brain.migration DROP COLUMN loot")
            with pytest.raises(BrainError, match="lo_export"):
                db.migrate(installer)
            assert not (tmp_path / "written-by-the-server").exists()

            # brain_owner holds no role: it can neither grant itself one nor give it an object
            assert installer.execute(
                "SELECT count(*) FROM pg_auth_members WHERE member = 'brain_owner'::regrole"
            ).fetchone() == (0,)
            with psycopg.connect(released, autocommit=True) as flaw:
                flaw.execute("SET ROLE brain_owner")
                for attempt in (
                    f"GRANT {AGENT} TO brain_owner WITH SET TRUE",
                    f"ALTER TABLE brain.migration OWNER TO {AGENT}",
                ):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        flaw.execute(attempt)
            # brain serve still acts for it: a token of it, and the token's role is settable
            token = installer.execute("SELECT brain.create_token(%s, 'laptop', 1)", (AGENT,)).fetchone()[0]
            assert token["role"] == AGENT
            assert installer.execute(
                "SELECT pg_has_role('brain_server', %s, 'SET'),"
                " (SELECT count(*) FROM pg_auth_members WHERE grantor = 'brain_owner'::regrole)",
                (AGENT,),
            ).fetchone() == (True, 0)
            with psycopg.connect(
                make_conninfo(released, user=AGENT, password="owner-probe-password"), autocommit=True
            ) as agent:
                assert agent.execute("SELECT brain.current_workspace()").fetchone() == (1,)
        finally:
            installer.execute("RESET ROLE")
            installer.execute(f"DROP OWNED BY {AGENT}")
            installer.execute(f"DROP ROLE {AGENT}")


def test_an_installer_that_is_not_a_superuser_upgrades_as_brain_owner_too(
    released: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a managed server the installer is a role with CREATEROLE and BYPASSRLS, a member of
    brain_owner (migration 027): what brain_owner planted runs as brain_owner there too."""
    installer_role = "installer_probe"
    with psycopg.connect(released, autocommit=True) as superuser:
        db.migrate(superuser)
        superuser.execute(f"DROP ROLE IF EXISTS {installer_role}")
        superuser.execute(
            f"CREATE ROLE {installer_role} LOGIN CREATEROLE BYPASSRLS PASSWORD 'installer-probe'"
        )
        superuser.execute(f"GRANT brain_owner TO {installer_role}")
        # a server where the languages stayed the installer's (docs/security.md)
        superuser.execute(f"GRANT USAGE ON LANGUAGE plpgsql, sql TO {installer_role}")
        try:
            with psycopg.connect(released, autocommit=True) as flaw:
                flaw.execute("SET ROLE brain_owner")
                for probe in PROBES:
                    flaw.execute(probe)
            shipped = tmp_path / "sql"
            shutil.copytree(db.sql_dir(), shipped)
            probe = f"{len(db.sql_files('migrations')) + 1:03d}-probe.sql"
            (shipped / "migrations" / probe).write_text("UPDATE brain.workspace SET name = name;\n")
            monkeypatch.setattr(db, "sql_dir", lambda: shipped)
            url = make_conninfo(released, user=installer_role, password="installer-probe")
            with psycopg.connect(url, autocommit=True) as installer:
                # pgvector's and pg_trgm's settings, which function files set, are known once loaded
                installer.execute("SELECT '[1]'::public.vector, public.similarity('a', 'b')")
                assert db.migrate(installer).applied == [probe]
                ran = {
                    what: role
                    for what in (*FIRED, "policy", "unused")
                    if (
                        role := installer.execute(
                            "SELECT current_setting(%s, true)", (f"probe.{what}",)
                        ).fetchone()[0]
                    )
                }
            assert set(ran) >= FIRED - {"membership"}, "each planted expression ran"
            assert set(ran.values()) == {"brain_owner"}
        finally:
            superuser.execute(f"DROP OWNED BY {installer_role}")
            superuser.execute(f"DROP ROLE {installer_role}")
