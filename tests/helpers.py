"""Small helpers shared by the tests."""

from __future__ import annotations

import contextlib
import math
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row

from pybrain.embed.hash import HashEmbedder

DIMS = 384  # the hash embedder's space, registered in the template database


class CountingEmbedder(HashEmbedder):
    """The hash embedder, keeping the texts it is asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super()._embed_batch(texts)


def unit(similarity: float = 1.0, axis: int = 1) -> list[float]:
    """A unit vector whose cosine similarity with e0 is `similarity`."""
    v = [0.0] * DIMS
    v[0] = similarity
    v[axis] = math.sqrt(max(0.0, 1.0 - similarity * similarity))
    return v


def rows(conn: psycopg.Connection, query: str, params: Any = None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(query, params)
        return cur.fetchall() if cur.description else []


def one(conn: psycopg.Connection, query: str, params: Any = None) -> dict[str, Any]:
    (row,) = rows(conn, query, params)
    return row


def scalar(conn: psycopg.Connection, query: str, params: Any = None) -> Any:
    return next(iter(one(conn, query, params).values()))


def named_call(function: str, args: Mapping[str, Any]) -> str:
    """`brain.function(k => %(k)s, ...)`: a call of a brain function, each of args by name."""
    return f"brain.{function}({', '.join(f'{k} => %({k})s' for k in args)})"


def call_rows(conn: psycopg.Connection, function: str, **args: Any) -> list[dict[str, Any]]:
    """The rows of brain.function called with named arguments."""
    return rows(conn, f"SELECT * FROM {named_call(function, args)}", args)


def call_scalar(conn: psycopg.Connection, function: str, **args: Any) -> Any:
    """The value of brain.function called with named arguments."""
    return scalar(conn, f"SELECT {named_call(function, args)}", args)


def remember(conn: psycopg.Connection, **kwargs: Any) -> dict[str, Any]:
    """brain.remember with named arguments; embeddings are sent as float8[]."""
    return one(conn, f"SELECT * FROM {named_call('remember', kwargs)}", kwargs)


def raises_br(code: str) -> _BrRaises:
    """Expect a database error with this SQLSTATE; .error holds it afterwards."""
    return _BrRaises(code)


def each_refused(conn: psycopg.Connection, *cases: tuple[str, str]) -> None:
    """Each statement of cases (code, statement) fails with that code, as raises_br checks it."""
    for code, statement in cases:
        with raises_br(code):
            conn.execute(statement)


class _BrRaises:
    def __init__(self, code: str) -> None:
        self.code = code
        self.error: psycopg.Error | None = None

    def __enter__(self) -> _BrRaises:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None:
            pytest.fail(f"expected SQLSTATE {self.code}, nothing was raised")
        if not isinstance(exc, psycopg.Error):
            return False
        assert exc.diag.sqlstate == self.code, (exc.diag.sqlstate, exc.diag.message_primary)
        self.error = exc
        return True


OWNER_URL = ""  # the test server's superuser URL (set by conftest)


def owner_execute(conn: psycopg.Connection, query: Any, params: Any = None) -> None:
    """A statement run as the owner of schema brain on conn's database, in conn's workspace: for a
    test that backdates or plants rows, since client roles change the memory tables only through the
    API (sql/functions/004b-write-guard.sql)."""
    workspace = conn.execute("SELECT current_setting('brain.workspace', true)").fetchone()[0] or ""
    with psycopg.connect(make_conninfo(OWNER_URL, dbname=conn.info.dbname), autocommit=True) as owner:
        owner.execute("SELECT set_config('brain.workspace', %s, false)", (workspace,))
        owner.execute(query, params)


def memory_count(conn: psycopg.Connection) -> int:
    return scalar(conn, "SELECT count(*) FROM brain.memory")


@contextmanager
def functions_tracked(database: str) -> Iterator[None]:
    """The test role's new sessions in this test's database count function calls (track_functions)."""
    with psycopg.connect(database, autocommit=True) as owner:
        dbname = owner.info.dbname
        owner.execute(f"ALTER ROLE brain_tester IN DATABASE {dbname} SET track_functions = 'all'")
    try:
        yield
    finally:
        with psycopg.connect(database, autocommit=True) as owner:
            owner.execute(f"ALTER ROLE brain_tester IN DATABASE {dbname} RESET track_functions")


def function_calls(conn: psycopg.Connection, function: str) -> int:
    """Calls of a function by this connection not yet flushed to the statistics: within one
    transaction, the difference of two readings counts the calls between them."""
    return scalar(conn, "SELECT pg_stat_get_xact_function_calls(%s::regproc)", (function,)) or 0


@contextmanager
def logged_plans(conn: psycopg.Connection, *, analyze: bool = False) -> Iterator[list[str]]:
    """The plan of every statement run on conn (a superuser's: LOAD) meanwhile, nested ones
    included (auto_explain, sent as notices), collected into the list yielded."""
    plans: list[str] = []

    def keep(d: psycopg.errors.Diagnostic) -> None:
        plans.append(d.message_primary or "")

    conn.add_notice_handler(keep)
    conn.execute("LOAD 'auto_explain'")
    conn.execute(
        "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;"
        + (" SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on;" if analyze else "")
        + " SET client_min_messages = log"
    )
    try:
        yield plans
    finally:
        conn.execute("RESET client_min_messages; SET auto_explain.log_min_duration = -1")
        conn.remove_notice_handler(keep)


def embedded_env(home: Path) -> dict[str, str]:
    """This environment, with the embedded database under home and the hash embedder."""
    env = {k: v for k, v in os.environ.items() if k != "BRAIN_DATABASE_URL"}
    env.update(BRAIN_HOME=str(home), BRAIN_EMBEDDER="hash")
    return env


def embedded_brain(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`brain ARGS` in a process of its own, on the embedded database under home."""
    return subprocess.run(
        [sys.executable, "-m", "pybrain", *args],
        capture_output=True,
        text=True,
        env=embedded_env(home),
        timeout=120,
    )


AGE = re.compile(r" \(\d+(?:s|m|h|d|w|mo|y)(?: ago)?\)")


def unaged(text: str) -> str:
    """A rendered boot payload without the age each line and the handoff's heading say
    ("- #3 fact (2d ago) ..."): for asserting on the rest of a line."""
    return AGE.sub("", text)


# What a hook prints on standard output when memory is down (docs/hooks.md, "Never in the way").
UNAVAILABLE = "pybrain: memory is unavailable "


def outage_output_ok(event: str, stdout: bytes | str) -> bool:
    """Whether a hook's standard output is what it prints with the database out: for the hooks
    that add context (session-start, prompt: the hook's name or Claude Code's event), nothing
    or one JSON line whose additionalContext (Cursor's additional_context) is one line saying
    memory is unavailable; for
    the capture hooks, nothing."""
    import json

    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    if not text.strip():
        return event in ("prompt", "UserPromptSubmit") or event not in ("session-start", "SessionStart")
    if (
        event not in ("session-start", "prompt", "SessionStart", "UserPromptSubmit")
        or len(text.splitlines()) != 1
    ):
        return False
    try:
        answer = json.loads(text)
        # (Cursor's hooks answer {"additional_context": ...})
        context = answer.get("additional_context") or answer["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    return isinstance(context, str) and context.startswith(UNAVAILABLE) and "\n" not in context


def pump(src: socket.socket, dst: socket.socket) -> None:
    """A test relay's one direction: what src sends goes to dst until either side closes or
    fails; then both are shut down, so the other direction ends too."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
