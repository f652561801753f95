"""One quoting rule for stored text: what an MCP tool shows (pybrain.mcp's json_text and quote)
escapes exactly what brain.quote_text escapes for the boot payload, the hooks and the CLI. SQL
is the rule; these tests call it and compare, code point by code point."""

from __future__ import annotations

import random

import pytest
from helpers import scalar

from pybrain.mcp.render import INVISIBLE, json_text, quote

SURROGATES = range(0xD800, 0xE000)
# Samples of each class of code point a stored text may hold (beyond the full sweep below,
# these show by name which class disagrees).
CLASSES = {
    "ASCII controls": [*map(chr, range(0x01, 0x20)), "\x7f"],
    "C1 controls": [*map(chr, range(0x80, 0xA0))],
    "line and paragraph separators": ["\r\n", "\u0085", "\u2028", "\u2029", "\u000b\u000c"],
    "bidi controls": [
        "\u061c",
        "\u200e",
        "\u200f",
        *map(chr, range(0x202A, 0x202F)),
        *map(chr, range(0x2066, 0x206A)),
    ],
    "zero-width characters": ["\u00ad", "\u180e", "\u200b", "\u200c", "\u200d", "\u2060", "\u2064", "\ufeff"],
    "other format characters": ["\u0600", "\u0605", "\u06dd", "\u070f", "\ufff9", "\ufffb", "\U000110bd"],
    "format characters quote_text keeps": ["\u0890", "\u0891", "\u08e2", "\U000110cd", "\U00013430"],
    "quotes": ['"', "'", "`", "\u2018\u2019", "\u201c\u201d", '\\"'],
    "backslash": ["\\", "\\\\", "\\u0041", "\\n"],
    "angle brackets": ["<", ">", "</pybrain-context>", "\u2039\u203a", "\uff1c\uff1e"],
    "emoji": ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f469\u200d\U0001f4bb", "\U0001f1eb\U0001f1f7"],
    "combining marks": ["e\u0301", "\u0300", "a\u20dd", "\u0345", "\u1ab0", "\U0001d165"],
    "private use": ["\ue000", "\uf8ff", "\U000f0000", "\U0010fffd"],
    "astral plane": ["\U0001d11e", "\U00020000", "\U0001bca0", "\U0001d173", "\U0001d17a", "\U0010ffff"],
    "tag characters": ["\U000e0001", "\U000e0020", "\U000e0041", "\U000e007f", "\U000e0080"],
    "unassigned": ["\u0378", "\u2065", "\U0003ffff", "\U000e0002"],
    "plain text": ["", " ", "Deploy with make deploy", "naïve café 東京 Ωμέγα"],
}


def sql_quote(conn, texts: list[str | None]) -> list[str]:
    """brain.quote_text of each text, in one round trip."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT brain.quote_text(t) FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
            (texts,),
        )
    ]


@pytest.mark.parametrize("name", list(CLASSES))
def test_python_quotes_each_class_as_sql_does(conn, name) -> None:
    texts = [*CLASSES[name], "".join(CLASSES[name]), f"before {''.join(CLASSES[name])} after"]
    assert [json_text(t) for t in texts] == sql_quote(conn, texts)


def test_python_quotes_every_code_point_as_sql_does(conn) -> None:
    """Every code point PostgreSQL text can hold (all but NUL and the surrogates), in blocks
    of 4096; a block that differs is compared character by character to name the culprits."""
    points = [cp for cp in range(1, 0x110000) if cp not in SURROGATES]
    blocks = ["".join(map(chr, points[i : i + 4096])) for i in range(0, len(points), 4096)]
    differ = [b for b, quoted in zip(blocks, sql_quote(conn, blocks), strict=True) if json_text(b) != quoted]
    chars = [ch for b in differ for ch in b]
    culprits = [
        f"U+{ord(ch):04X}: {python} != {sql}"
        for ch, sql in zip(chars, sql_quote(conn, chars), strict=True)
        if (python := json_text(ch)) != sql
    ]
    assert not differ and not culprits, culprits[:20]


def test_python_quotes_random_strings_as_sql_does(conn) -> None:
    pick = random.Random(33)
    samples = [ch for texts in CLASSES.values() for text in texts for ch in text]

    def any_char() -> str:
        while (cp := pick.randrange(1, 0x110000)) in SURROGATES:
            pass
        return chr(cp)

    def any_text() -> str:
        return "".join(
            pick.choice(samples) if pick.random() < 0.7 else any_char() for _ in range(pick.randrange(1, 60))
        )

    texts = [any_text() for _ in range(500)]
    assert [json_text(t) for t in texts] == sql_quote(conn, texts)


def test_no_text_is_the_empty_literal(conn) -> None:
    assert quote(None) == quote("") == sql_quote(conn, [None])[0] == '""'


def test_the_character_class_is_written_once_for_both(conn) -> None:
    """The class of invisible characters in pybrain.mcp.render is brain.quote_text's, verbatim."""
    source = scalar(conn, "SELECT prosrc FROM pg_proc WHERE oid = 'brain.quote_text(text)'::regprocedure")
    assert INVISIBLE in source


def test_a_lone_surrogate_is_escaped_only_in_python() -> None:
    """The JSON context's one addition: a JSON-RPC string may carry a lone surrogate, which
    PostgreSQL text cannot hold (so brain.quote_text never meets one); json_text escapes it so
    that what it returns stays encodable as UTF-8."""
    assert json_text("a\ud800b\udfff") == '"a\\ud800b\\udfff"'
    json_text("\ud83d").encode()
