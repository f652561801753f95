"""The write guard reads no translated text (issue 42, item 5).

brain._write_guard lets a statement change the memory tables when a public PL/pgSQL
function of schema brain runs it. It reads the call stack (PG_CONTEXT), whose words the
server translates (lc_messages): a German server writes "PL/pgSQL-Funktion brain.remember(…)
Zeile 12". The decision (brain._api_frame) reads the function's signature only, which is
never translated. The stacks below are shaped as the server writes them in English,
German, French and Japanese (the wording of its message catalogues for these frames).
"""

from __future__ import annotations

import psycopg
import pytest
from helpers import raises_br, scalar

GUARD = {
    "en": "PL/pgSQL function brain._write_guard() line 5 at GET DIAGNOSTICS",
    "de": "PL/pgSQL-Funktion brain._write_guard() Zeile 5 bei GET DIAGNOSTICS",
    "fr": "fonction PL/pgSQL brain._write_guard(), ligne 5 à GET DIAGNOSTICS",
    "ja": "PL/pgSQL関数brain._write_guard()の5行目 GET DIAGNOSTICS",
}
FRAME = {
    "en": "PL/pgSQL function {f}(text,text) line 40 at SQL statement",
    "de": "PL/pgSQL-Funktion {f}(text,text) Zeile 40 bei SQL-Anweisung",
    "fr": "fonction PL/pgSQL {f}(text,text), ligne 40 à instruction SQL",
    "ja": "PL/pgSQL関数{f}(text,text)の40行目 SQL文",
}
STATEMENT = {
    "en": "SQL statement \"INSERT INTO brain.memory(workspace_id, headline) VALUES (1, 'x')\"",
    "de": "SQL-Anweisung »INSERT INTO brain.memory(workspace_id, headline) VALUES (1, 'x')«",
    "fr": "instruction SQL « INSERT INTO brain.memory(workspace_id, headline) VALUES (1, 'x') »",
    "ja": "SQL文 \"INSERT INTO brain.memory(workspace_id, headline) VALUES (1, 'x')\"",
}


def api_frame(conn: psycopg.Connection, *frames: str) -> bool:
    return scalar(conn, "SELECT brain._api_frame(%s)", ("\n".join(frames),))


@pytest.mark.parametrize("lang", sorted(GUARD))
def test_a_public_functions_frame_is_found_in_any_language(conn, lang) -> None:
    public = FRAME[lang].format(f="brain.remember")
    private = FRAME[lang].format(f="brain._store_memories")
    assert api_frame(conn, GUARD[lang], private, public)
    assert api_frame(conn, GUARD[lang], STATEMENT[lang], public)
    # the guard's own frame, an internal helper called directly, a statement naming a table
    assert not api_frame(conn, GUARD[lang])
    assert not api_frame(conn, GUARD[lang], private)
    assert not api_frame(conn, GUARD[lang], STATEMENT[lang], private)


def test_what_only_looks_like_a_public_frame_is_none(conn) -> None:
    guard = GUARD["en"]
    for frame in (
        'SQL function "remember" statement 1',  # an SQL function's frame names no schema
        "PL/pgSQL function xbrain.remember(text) line 1 at RETURN",  # another schema's name
        'PL/pgSQL function "brain.remember"(text) line 1 at RETURN',
        "PL/pgSQL function brain.no_such_function(text) line 1 at RETURN",
        "PL/pgSQL function brain.remember line 1 at RETURN",  # no signature
        "PL/pgSQL function pg_temp_3.remember(text) line 1 at RETURN",
    ):
        assert not api_frame(conn, guard, frame), frame
    # the guard's own frame is never the one that lets a statement through
    assert not api_frame(conn, FRAME["en"].format(f="brain.remember"))


def test_a_clients_own_write_is_still_refused(conn) -> None:
    """The guard as before: a client's direct INSERT and UPDATE are refused, the API's pass."""
    memory = scalar(conn, "SELECT memory_id FROM brain.remember(kind => 'fact', headline => 'Via the API')")
    with raises_br("BR020"):
        conn.execute("UPDATE brain.memory SET headline = 'Direct' WHERE memory_id = %s", (memory,))
    with raises_br("BR020"):
        conn.execute(
            "INSERT INTO brain.annotation (workspace_id, memory_id, note) VALUES (1, %s, 'direct')", (memory,)
        )
    assert scalar(conn, "SELECT headline FROM brain.memory WHERE memory_id = %s", (memory,)) == "Via the API"
