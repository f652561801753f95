"""What an attacker tries against the secret scanner: the formats the rules missed, and
every way of writing a token so that a pattern does not see it (issues 30 and 39).

Run with -s to see what was tried and what got through; docs/security.md quotes it.
"""

from __future__ import annotations

import random
import statistics
import time

import psycopg
from helpers import remember, rows, scalar
from secret_corpus import ATTACKS, BENIGN, BENIGN_39, BENIGN_MORE, EVASIONS_39, SECRETS
from test_security import leaks


def _got_through(conn, samples: list[tuple[str, str, str]]) -> list[str]:
    got_through: list[str] = []
    for what, text, secret in samples:
        hits = rows(conn, "SELECT kind, start_at, end_at FROM brain.scan_secrets(%s)", (text,))
        # a write is refused whole, naming the field and kind, never the value
        try:
            remember(conn, kind="fact", headline="Config note", body=text)
        except psycopg.Error as exc:
            said = " ".join(
                filter(None, (exc.diag.message_primary, exc.diag.message_detail, exc.diag.message_hint))
            )
            refused = exc.sqlstate == "BR007" and not leaks(said, secret)
        else:
            refused = False
        # an observed text is stored with the stretch that hid it redacted
        stored = scalar(conn, "SELECT brain.redact_secrets(%s)", (text,))
        redacted = not leaks(stored, secret) and secret not in stored
        ok = bool(hits) and refused and redacted
        kinds = ", ".join(sorted({h["kind"] for h in hits})) or "-"
        print(f"  {'caught' if ok else 'GOT THROUGH':11} {what} ({kinds})")
        if not ok:
            got_through.append(what)
    print(f"got through: {len(got_through)} / {len(samples)}")
    return got_through


def test_every_attack_is_caught_through_the_scanner_a_write_and_an_observation(conn) -> None:
    print(f"\n{len(ATTACKS)} attacks on the scanner:")
    assert _got_through(conn, ATTACKS) == []


def test_every_issue_39_evasion_is_caught(conn) -> None:
    """Markdown escapes, HTML tags and table cells inside a token, upper-cased tokens,
    groups of four, bare PEM bodies, PuTTY key files, .pgpass lines, pass= and pw:,
    ?auth= and &token=, Discord, Atlassian and Firebase keys."""
    print(f"\n{len(EVASIONS_39)} samples of issue 39:")
    assert _got_through(conn, EVASIONS_39) == []
    assert len(SECRETS) + len(ATTACKS) + len(EVASIONS_39) >= 150


def test_no_ordinary_text_of_issue_39_is_refused(conn) -> None:
    """Placeholders (ghp_xxxx, <your-password>, ${TOKEN}), tables, HTML, markdown escapes,
    prose about passing and tokens, bare certificate and public key bodies, colon lists."""
    refused = []
    for t in BENIGN_39:
        kinds = scalar(conn, "SELECT brain.find_secrets(%s)", (t,))
        if kinds:
            refused.append(t)
            print(f"  REFUSED ({', '.join(kinds)}): {t[:100]!r}")
    print(f"\nordinary texts of issue 39 refused: {len(refused)} / {len(BENIGN_39)}")
    assert len(BENIGN_39) >= 100 and refused == []


def test_no_ordinary_text_is_refused(conn) -> None:
    texts = BENIGN + BENIGN_MORE
    refused = [t for t in texts if scalar(conn, "SELECT brain.find_secrets(%s)", (t,))]
    print(f"\nordinary texts refused: {len(refused)} / {len(texts)} ({len(BENIGN_MORE)} for the decoders)")
    assert len(texts) >= 300 and refused == []


def test_the_scan_stays_cheap(conn) -> None:
    """The per-write cost: brain._refuse_secrets over a headline and a body, the median of
    a few hundred ordinary texts, above a statement that does nothing."""
    texts = [t for t in BENIGN + BENIGN_MORE if len(t) < 600][:200] * 2

    def median_ms(query: str) -> float:
        times = []
        for t in texts:
            t0 = time.perf_counter()
            conn.execute(query, (t,), prepare=True)
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1000

    noop = median_ms("SELECT length(%s::text)")
    scan = median_ms(
        "SELECT brain._refuse_secrets(jsonb_build_object('headline', 'Config note', 'body', %s::text))"
    )
    print(f"\nscan per write: {scan - noop:.3f} ms (median of {len(texts)}, above a no-op of {noop:.3f} ms)")
    assert scan - noop < 5.0  # a loaded machine; about 0.3 ms on a quiet one


def _rot47(s: str) -> str:
    return "".join(chr(33 + (ord(c) - 33 + 47) % 94) if 33 <= ord(c) <= 126 else c for c in s)


def test_the_rot47_hints_read_a_text_as_its_rotated_reading_reads(conn) -> None:
    """brain._rot47_hints, over the text as sent, matches exactly the texts whose ROT47
    reading the hints match case-insensitively: every hint in every mix of cases, cut
    one character short or followed by another character, among random printable text."""
    rnd = random.Random(47)
    hints = [
        "ghp_",
        "gho_",
        "github_pat_",
        "glpat-",
        "glrt-",
        "xoxb-",
        "xapp-",
        "sk-",
        "sk_live_",
        "rk_live_",
        "akia",
        "asia",
        "a3t",
        "aiza",
        "hf_",
        "npm_",
        "pypi-",
        "sg.",
        "ya29.",
        "eyj",
        "hvs.",
        "hvb.",
        "dop_v1_",
        "shpat_",
        "lin_api_",
        "glsa_",
        "dapi",
        "ltai",
        "pscale_",
        "sntry",
        "whsec_",
        "pass1",
        "passw:",
        "passwd ",
        "password=",
        "passwordx",
        "pwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "private key",
        "bearer",
        "authorization",
        "mysql",
        "sshpass",
        "curl",
    ]
    readings = []
    for _ in range(6000):
        if rnd.random() < 0.6:
            hint = "".join(c.upper() if rnd.random() < 0.5 else c for c in rnd.choice(hints))
            if rnd.random() < 0.3:
                hint = hint[:-1] + rnd.choice("xX_-.9 Z")
            noise = ["".join(chr(rnd.randint(32, 126)) for _ in range(rnd.randint(0, 6))) for _ in range(2)]
            readings.append(noise[0] + hint + noise[1])
        else:
            readings.append("".join(chr(rnd.randint(32, 126)) for _ in range(rnd.randint(1, 40))))
    texts = [_rot47(r) for r in readings]
    got = rows(
        conn,
        "SELECT x, brain._rotated(x, 'rot47') ~* brain._rotated_hints() AS reading,"
        " x ~ brain._rot47_hints() AS sent FROM unnest(%s::text[]) AS x",
        (texts,),
    )
    differ = [r["x"] for r in got if r["reading"] != r["sent"]]
    matched = sum(r["reading"] for r in got)
    print(f"\n{len(texts)} texts, {matched} whose ROT47 reading holds a hint; read otherwise: {len(differ)}")
    assert matched > 2000 and differ == []
