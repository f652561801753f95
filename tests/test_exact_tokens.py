"""A query equal to a token stored verbatim in a memory finds that memory first,
above the relevance floor: IPs, error codes, identifiers, hex ids, versions,
paths, ticket keys (docs/ranking.md, "Exact tokens")."""

from __future__ import annotations

import random

from helpers import rows, scalar

from bench.exacttokens import BODIES, NEAR_MISSES, WORDS, tokens

# The generated set lives in bench/exacttokens.py (make bench prints its figure).


def test_exact_tokens_of_a_query(conn) -> None:
    def exact(q: str) -> list[str]:
        return scalar(conn, "SELECT brain.exact_tokens(%s)", (q,))

    assert exact("10.20.30.40") == ["10.20.30.40"]
    assert sorted(exact("PURPLE_OCTOPUS zebra-7")) == ["purple_octopus", "zebra-7"]
    assert exact("PaymentGateway") == ["paymentgateway"]
    assert exact("what happened in 2023") == [], "a question of four words or more"
    assert exact("deploy 2023") == [], "a year is not a token"
    assert exact("deploy failed") == []
    holds = "SELECT brain.holds_tokens(%s, %s)"
    assert scalar(conn, holds, ("host 10.20.30.40.", ["10.20.30.40"]))
    assert not scalar(conn, holds, ("host 10.20.30.40", ["10.20.30.4"]))
    assert not scalar(conn, holds, ("host 10.20.30.40", ["0.20.30.40"]))
    assert scalar(conn, holds, ("see /srv/app/x-1.yml, then", ["srv/app/x-1.yml"]))


def test_500_tokens_hidden_in_bodies_come_first_above_the_floor(brain, conn) -> None:
    rnd = random.Random(7)
    toks = tokens(520)
    texts = []
    for tok in toks:
        a, b, c = rnd.sample(WORDS, 3)
        texts.append(rnd.choice(BODIES).format(a=a, b=b, c=c, tok=tok))
    # Near-misses that share a token's parts but not the token.
    texts += NEAR_MISSES
    out = brain.observe(texts, origin="observed", source_system="logs")
    assert [r["action"] for r in out].count("created") == len(texts)
    ids = [r["memory_id"] for r in out]
    bodies = {r["memory_id"]: r["body"] or r["headline"] for r in rows(conn, "SELECT * FROM brain.memory")}
    missed = {"hybrid": [], "lexical": []}
    for i, tok in enumerate(toks):
        for mode in missed:
            hits = brain.search(tok, max_results=3) if mode == "hybrid" else _lexical(conn, tok)
            first = hits[0] if hits else None
            if first is None or first["id"] != ids[i] or first["relevance"] < 0.05:
                missed[mode].append((tok, bodies[ids[i]], [(h["id"], h["relevance"]) for h in hits]))
    share = {mode: 1 - len(m) / len(toks) for mode, m in missed.items()}
    # Before: the relevance maps alone (exact_token_relevance 0), hybrid.
    conn.execute("SELECT brain.set_setting('exact_token_relevance', '0')")
    before = sum(
        1
        for i, tok in enumerate(toks)
        if (h := brain.search(tok, max_results=1, min_relevance=0))
        and h[0]["id"] == ids[i]
        and h[0]["relevance"] >= 0.05
    )
    print(f"exact tokens found first above the floor: {share} of {len(toks)}; maps alone (hybrid): {before}")
    assert missed == {"hybrid": [], "lexical": []}


def _lexical(conn, query: str) -> list[dict]:
    return rows(conn, "SELECT id, relevance FROM brain.search(query => %s, max_results => 3)", (query,))


def test_the_issue_examples_through_the_cli(brain_cli, conn) -> None:
    brain_cli("remember", "fact", "Primary database host", "The primary listens on 10.20.30.40 port 5432.")
    brain_cli(
        "remember", "fact", "Feature flag for the octopus rollout", "Flag PURPLE_OCTOPUS gates zebra-7."
    )
    for q, headline in (
        ("10.20.30.40", "Primary database host"),
        ("PURPLE_OCTOPUS", "Feature flag"),
        ("zebra-7", "Feature flag"),
    ):
        out = brain_cli("search", q).output
        assert "nothing relevant found" not in out.lower() and headline in out.splitlines()[0], (q, out)
