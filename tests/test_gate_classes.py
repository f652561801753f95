"""The gate measured on corpora built by a method (tests/gate_corpus.py), each split in
a dev half (the rules were written against it) and a held-out half (issue 54). Run with
-s to see the figures docs/security.md quotes."""

from __future__ import annotations

import psycopg
from gate_corpus import ENCODINGS, ORDINARY_ENCODED, command_secrets, encoded_secrets, ordinary, split
from helpers import remember, scalar


def _caught(conn, text: str, secret: str) -> bool:
    try:
        remember(conn, kind="fact", headline="Ops note", body=text)
        return False
    except psycopg.Error as exc:
        if exc.sqlstate != "BR007":
            raise
    redacted = scalar(conn, "SELECT brain.redact_secrets(%s)", (text,))
    return secret not in redacted


def test_passwords_in_command_lines_and_prose_are_a_class(conn) -> None:
    samples = command_secrets()
    dev, held = split(samples, key=lambda s: s[1])
    figures = {}
    for name, half in (("dev", dev), ("held-out", held)):
        missed = [(c, t) for c, t, s in half if not _caught(conn, t, s)]
        figures[name] = (len(half) - len(missed), len(half))
        for c, t in missed:
            print(f"  missed ({name}, {c}): {t!r}")
    classes = sorted({c for c, _, _ in samples})
    print(
        f"\npasswords in commands and prose ({len(classes)} classes): caught dev {figures['dev']},"
        f" held-out {figures['held-out']}"
    )
    assert figures["dev"][0] == figures["dev"][1] and figures["held-out"][0] == figures["held-out"][1]


def test_ordinary_text_and_near_misses_stay_under_two_in_a_hundred(conn) -> None:
    texts = ordinary()
    dev, held = split(texts)
    figures = {}
    for name, half in (("dev", dev), ("held-out", held)):
        refused = [t for t in half if scalar(conn, "SELECT brain.find_secrets(%s)", (t,))]
        figures[name] = (len(refused), len(half))
        for t in refused:
            print(f"  refused ({name}): {t!r}")
    print(f"\nordinary text refused: dev {figures['dev']}, held-out {figures['held-out']}")
    for n, total in figures.values():
        assert n * 100 <= 2 * total


def test_text_is_decoded_before_it_is_scanned(conn) -> None:
    """Every encoding of tests/gate_corpus.py over four secrets: refused, and redacted
    (the encoded stretch goes); ordinary text in the same encodings passes."""
    samples = encoded_secrets()
    dev, held = split(samples, key=lambda s: s[1])
    figures = {}
    for name, half in (("dev", dev), ("held-out", held)):
        missed = []
        for enc, text, _ in half:
            kinds = scalar(conn, "SELECT brain.find_secrets(%s)", (text,))
            redacted = scalar(conn, "SELECT brain.redact_secrets(%s)", (text,))
            if not kinds or "[redacted:" not in redacted:
                missed.append((enc, text))
        figures[name] = (len(half) - len(missed), len(half))
        for enc, text in missed:
            print(f"  missed ({name}, {enc}): {text[:120]!r}")
    refused = [t for t in ORDINARY_ENCODED if scalar(conn, "SELECT brain.find_secrets(%s)", (t,))]
    print(
        f"\nencodings ({len(ENCODINGS)}): caught dev {figures['dev']}, held-out {figures['held-out']};"
        f" ordinary encoded text refused {len(refused)} / {len(ORDINARY_ENCODED)}"
    )
    assert figures["dev"][0] == figures["dev"][1] and figures["held-out"][0] == figures["held-out"][1]
    assert refused == []
