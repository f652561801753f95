"""Every rule of gitleaks' default configuration is covered: the ids are read from
tests/data/gitleaks-rules.txt (with the gitleaks version they were read from), and for
each a sample made from the rule's format (tests/gitleaks_samples.py) is refused by a
write, found by the scanner and redacted from an observed text (issue 54).

Run with -s to see what each sample was found as."""

from __future__ import annotations

import psycopg
from gitleaks_samples import FORMATS, rule_ids, samples
from helpers import remember, rows, scalar


def test_the_list_is_read_and_every_rule_has_a_format() -> None:
    ids = rule_ids()
    assert len(ids) >= 200 and len(set(ids)) == len(ids)
    assert [i for i in ids if i not in FORMATS] == []


def test_every_gitleaks_rule_has_a_sample_the_gate_refuses(conn) -> None:
    missed = []
    for rule, text in samples().items():
        kinds = sorted({h["kind"] for h in rows(conn, "SELECT kind FROM brain.scan_secrets(%s)", (text,))})
        try:
            remember(conn, kind="fact", headline="Config note", body=text)
            refused = False
        except psycopg.Error as exc:
            refused = exc.sqlstate == "BR007"
        redacted = scalar(conn, "SELECT brain.redact_secrets(%s)", (text,))
        ok = bool(kinds) and refused and "[redacted:" in redacted
        print(f"  {'caught' if ok else 'MISSED':7} {rule:45} {', '.join(kinds) or '-'}")
        if not ok:
            missed.append(rule)
    print(f"missed: {len(missed)} / {len(samples())}")
    assert missed == []
