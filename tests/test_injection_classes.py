"""brain.injection_signals measured per class on generated variants
(tests/injection_classes.py), split in a dev half (the signals were written against it)
and a held-out half (measured once, after): overrides and their synonyms, the same in
thirteen languages, role lines, tool calls of the major harnesses and model formats,
downloads run by a shell, base64 and ROT13 instructions, leetspeak, combining marks
inside words (issue 54). Run with -s to see the figures docs/security.md quotes."""

from __future__ import annotations

from collections import Counter

from gate_corpus import split
from helpers import rows
from injection_classes import ordinary, payloads
from injection_corpus import BENIGN


def _signals(conn, texts: list[str]) -> list[list[str]]:
    got = rows(
        conn,
        "SELECT brain.injection_signals(t) AS s"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
        (texts,),
    )
    return [r["s"] for r in got]


def test_every_class_is_flagged_on_both_halves(conn) -> None:
    dev, held = split(payloads(), key=lambda p: p[1])
    figures = {}
    for name, half in (("dev", dev), ("held-out", held)):
        got = _signals(conn, [t for _, t in half])
        missed = [(c, t) for (c, t), s in zip(half, got, strict=True) if not s]
        by_class = Counter(c.split(":")[0] for c, _ in half)
        missed_by = Counter(c.split(":")[0] for c, _ in missed)
        figures[name] = (len(half) - len(missed), len(half))
        print(f"\n{name}: flagged {len(half) - len(missed)} / {len(half)}")
        for c in sorted(by_class):
            print(f"  {c:18} {by_class[c] - missed_by[c]:4} / {by_class[c]}")
        for c, t in missed:
            print(f"  missed ({c}): {t!r}")
    assert figures["dev"][0] == figures["dev"][1]
    assert figures["held-out"][0] * 100 >= 95 * figures["held-out"][1]


def test_ordinary_text_near_each_class_stays_under_two_in_a_hundred(conn) -> None:
    texts = ordinary() + BENIGN
    dev, held = split(texts)
    for name, half in (("dev", dev), ("held-out", held)):
        flagged = [(t, s) for t, s in zip(half, _signals(conn, half), strict=True) if s]
        print(f"\nordinary text flagged ({name}): {len(flagged)} / {len(half)}")
        for t, s in flagged:
            print(f"  {s}: {t!r}")
        assert len(flagged) * 100 <= 2 * len(half)
