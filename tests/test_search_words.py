"""Search finds what people type, and the relevance floor never hides evidence (docs/ranking.md):
the floor answers "nothing relevant" and never trims a relevant list, neighbours never push a
relevant hit out, and previews show the passage that matched."""

from __future__ import annotations

from helpers import remember, rows
from test_retrieval import ids, observe, search


def test_the_floor_answers_nothing_relevant_and_never_trims(conn) -> None:
    turns = [
        f"user: turn {i} about {'the cellar door code 4417' if i == 5 else 'weather and gardening'}"
        for i in range(10)
    ]
    memory = {r["item"]: r["memory_id"] for r in observe(conn, turns, threads=["chat"] * 10)}
    alone = search(conn, "cellar door code", min_relevance=0)
    floor = (alone[0]["relevance"] + max(r["relevance"] for r in alone[1:])) / 2
    # The best hit is relevant: the list as the ranking gives it, hits below the floor too.
    assert ids(search(conn, "cellar door code", min_relevance=floor)) == ids(alone)
    # Nothing is: nothing.
    assert search(conn, "cellar door code", min_relevance=min(1.0, alone[0]["relevance"] + 0.01)) == []
    assert search(conn, "quantum chromodynamics lattice") == []
    # Neighbours take the places of hits below the floor, never of a relevant hit.
    found = search(conn, "cellar door code", min_relevance=floor, neighbours=1, max_results=3)
    assert ids(found) == [memory[6], memory[5], memory[7]]


def test_neighbours_never_push_a_relevant_hit_out(conn) -> None:
    threads = []
    for t in range(4):
        threads += [(f"chat{t}", f"user: chat {t} turn {i} about the weather today") for i in range(6)]
        threads += [(f"chat{t}", f"user: chat {t} mentions the ferry timetable for Skye number {t}")]
    out = observe(conn, [x[1] for x in threads], threads=[x[0] for x in threads])
    direct = search(conn, "ferry timetable Skye", min_relevance=0, max_results=4)
    assert len(direct) == 4 and all("ferry" in r["headline"] for r in direct)
    floor = min(r["relevance"] for r in direct) / 2
    with_neighbours = search(conn, "ferry timetable Skye", min_relevance=floor, neighbours=1, max_results=4)
    assert ids(with_neighbours) == ids(direct), "every relevant hit stays; no room is left for neighbours"
    assert len(out) == len(threads)


def test_the_prompt_hook_keeps_only_relevant_hits(conn) -> None:
    a = remember(conn, kind="fact", headline="The staging database listens on port 6543")["memory_id"]
    remember(conn, kind="fact", headline="The staging cache is warmed at noon")
    hit = search(conn, "staging database port", min_relevance=0)
    assert ids(hit)[0] == a and len(hit) == 2
    floor = (hit[0]["relevance"] + hit[1]["relevance"]) / 2
    conn.execute("SELECT brain.set_setting('prompt_context_min_relevance', %s)", (str(floor),))
    out = rows(conn, "SELECT brain.prompt_context(prompt => 'staging database port') AS c")[0]["c"]
    assert f"#{a} " in out["text"] and "cache" not in out["text"]


def test_previews_show_the_passage_that_matched(conn) -> None:
    lines = [f"event {i} pod-{i % 7} step {i * 13} completed." for i in range(100, 160)]
    remember(conn, kind="fact", headline="Worker log of the night run", body=" ".join(lines))
    (hit,) = search(conn, "event 150 step 1950")
    assert "event 150 pod-3 step 1950" in hit["preview"] and hit["preview"].startswith("…")
    assert len(hit["preview"]) <= 160
    (hit,) = search(conn, "pod-3 1950")
    assert "1950" in hit["preview"]
    # A short body is shown whole; a search by vector alone, or without a match, starts at the start.
    assert rows(conn, "SELECT brain.match_preview('short body', 'body') AS p")[0]["p"] == "short body"
    assert rows(conn, "SELECT brain.match_preview(%s, '') AS p", (" ".join(lines),))[0]["p"].startswith(
        "event 100 "
    )
