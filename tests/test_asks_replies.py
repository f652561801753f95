"""A question about what the assistant said finds the assistant's reply (issue 41).

Search weighs a captured assistant turn at assistant_turn_weight (0.25) of a
person's: a reply restates the question at length, while what the person said
is the fact. But "which restaurant did you recommend" asks for the reply
itself. brain._asks_replies tells such questions apart ("you recommended",
"your suggestion", "the plan we outlined"), and search then weighs the
assistant's turns as a person's. The turns are stored as the capture hooks
store them and embedded by the default embedder.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
import pytest

from pybrain.client import Brain

EXCHANGES = [
    (
        "I'm going to Lisbon in May and I love vegan food. I always look for vegan restaurants with "
        "several locations in a city, so I can eat near wherever I am.",
        "Lisbon is great for that. Look at the Mercado da Ribeira food hall and the bakeries in Alfama.",
    ),
    (
        "We land in Lisbon on Friday evening and want a vegan restaurant for the first dinner there.",
        "I'd go to Ao 26 Vegan Food Project in Chiado: hearty Portuguese dishes, all plant-based, and it "
        "has a second location in Cais do Sodré.",
    ),
    (
        "My sister went to a vegan restaurant in Lisbon last year and didn't like it much.",
        "Tastes differ; small places change chefs often, so a review from last year may not hold.",
    ),
]


@pytest.fixture
def trip(conn: psycopg.Connection, local: Any) -> Brain:
    brain = Brain(conn, embedder=local)
    brain.use_embedding_space()
    brain.activate_space(local.space)
    at = dt.datetime.now(dt.UTC) - dt.timedelta(days=3)
    turns = []
    for n, (prompt, reply) in enumerate(EXCHANGES):
        for k, (role, text) in enumerate((("user", prompt), ("assistant", reply))):
            when = (at + dt.timedelta(minutes=2 * n + k)).isoformat()
            turns.append({"ref": f"trip-0001/{n}-{role}", "role": role, "text": text, "at": when})
    brain.observe_transcript(turns, source_system="claude-code", project="travel", source_agent="claude-code")
    return brain


@pytest.mark.local_model
@pytest.mark.parametrize(
    "question",
    [
        "Can you remind me of the vegan restaurant in Lisbon you recommended?",
        "Which vegan restaurant in Lisbon did you suggest for the first dinner?",
        "What was your recommendation for a vegan restaurant in Lisbon?",
    ],
)
def test_a_question_about_the_reply_finds_the_reply(trip: Brain, local: Any, question: str) -> None:
    hits = trip.search(question, project="travel", max_results=5)
    print(question, [(h["headline"][:50], round(h["score"], 4)) for h in hits])
    assert hits, question
    assert "Ao 26" in hits[0]["headline"] + hits[0]["preview"], [h["headline"] for h in hits]


@pytest.mark.local_model
def test_a_question_about_what_the_person_said_still_puts_the_person_first(trip: Brain, local: Any) -> None:
    hits = trip.search(
        "What did my sister think of the vegan restaurant in Lisbon?", project="travel", max_results=5
    )
    assert hits and "sister" in hits[0]["headline"], [h["headline"] for h in hits]


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("Can you remind me of that vegan eatery you recommended last time?", True),
        ("what song you said best exemplified the band's growth", True),
        ("You mentioned a few options, which one uses mnemonics?", True),
        ("I remember you told me about the refining processes", True),
        ("What were the three objectives we outlined for the project?", True),
        ("what was your suggestion for the retry budget", True),
        ("Which port did you suggest for the staging database?", True),
        ("Can you remind me what I said about my gym schedule?", False),
        ("I mentioned my sister's new job, where is it?", False),
        ("How often do I attend yoga classes?", False),
        ("you", False),
        ("", False),
        (None, False),
    ],
)
def test_asks_replies(conn: psycopg.Connection, query: str | None, asks: bool) -> None:
    assert conn.execute("SELECT brain._asks_replies(%s)", (query,)).fetchone()[0] is asks
