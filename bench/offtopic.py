"""Queries about things never stored: the relevance floor must answer them with nothing.

Two hundred questions (100 subjects, two phrasings each) on subjects that
neither the LongMemEval dev conversations nor the project's documentation
speak of. `bench/longmemeval.py` runs them over the dev stores, and
`offtopic_docs` over a store of the project's documentation, through the
default path (hybrid, the default min_relevance): the share that returns
nothing is the figure (issue 31: at least 95%).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg

from bench import latency

SUBJECTS = [
    "the mating season of the axolotl",
    "the wingspan of the Andean condor",
    "the gestation period of a narwhal",
    "the migration route of the Arctic tern",
    "the venom of the blue-ringed octopus",
    "the lifespan of a Greenland shark",
    "the diet of the aye-aye lemur",
    "the hibernation of the edible dormouse",
    "the courtship dance of the bird of paradise",
    "the bioluminescence of the anglerfish lure",
    "the rules of Byzantine chant notation",
    "the succession crisis of the Merovingian kings",
    "the fall of the Khmer empire at Angkor",
    "the Treaty of Westphalia signatories",
    "the coinage of the Kushan emperors",
    "the siege engines of the Assyrian army",
    "the Hanseatic League's trading posts in Bergen",
    "the Minoan palace at Knossos",
    "the Peloponnesian War's Sicilian expedition",
    "the reign of Empress Theodora",
    "the orbital period of the moon Titan",
    "the composition of Saturn's rings",
    "the magnetar SGR 1806-20",
    "the Chandrasekhar limit of white dwarfs",
    "the redshift of the quasar 3C 273",
    "the Oort cloud's outer boundary",
    "the rotation curve of the Andromeda galaxy",
    "the neutrino detector under Lake Baikal",
    "the Kuiper belt object Arrokoth",
    "the atmosphere of the exoplanet WASP-39b",
    "the conjugation of Basque auxiliary verbs",
    "the click consonants of the Xhosa language",
    "the vowel harmony of Finnish",
    "the ergative case in Georgian",
    "the tones of Vietnamese",
    "the writing system of Linear B",
    "the grammar of classical Nahuatl",
    "the runes of the Elder Futhark",
    "the honorifics of Korean speech levels",
    "the evidential markers of Quechua",
    "the offside rule in Australian rules football",
    "the scoring of a curling end",
    "the hand signals of a cricket umpire",
    "the judging of a figure skating triple axel",
    "the weight classes of sumo wrestling",
    "the rules of jai alai",
    "the points table of the decathlon",
    "the handicap system of polo",
    "the equipment of a fencing sabre bout",
    "the course of the Iditarod sled race",
    "the fermentation of Icelandic hakarl",
    "the curing of Iberian jamon",
    "the recipe for Hungarian dobos torte",
    "the ceremony of Japanese kaiseki",
    "the aging of Comte cheese",
    "the distillation of mezcal in Oaxaca",
    "the brewing of Belgian lambic",
    "the spices of Ethiopian berbere",
    "the baking of Georgian khachapuri",
    "the preparation of Peruvian ceviche",
    "the tuning of a Baroque harpsichord",
    "the fingering of a Renaissance lute",
    "the raga system of Hindustani music",
    "the gamelan orchestras of Bali",
    "the construction of a didgeridoo",
    "the pipe organ of Haarlem's St. Bavo church",
    "the twelve-tone technique of Schoenberg",
    "the throat singing of Tuva",
    "the libretto of Wagner's Parsifal",
    "the bagpipe drones of the Scottish Highlands",
    "the tectonics of the Afar triangle",
    "the eruption of Krakatoa in 1883",
    "the formation of the Giant's Causeway columns",
    "the permafrost of the Siberian Yamal peninsula",
    "the salt flats of Salar de Uyuni",
    "the karst caves of Son Doong",
    "the glaciers of Patagonia's ice field",
    "the coral atolls of the Maldives",
    "the monsoon of the Indian subcontinent",
    "the tides of the Bay of Fundy",
    "the proof of Fermat's last theorem",
    "the Banach-Tarski paradox",
    "the classification of finite simple groups",
    "the Riemann hypothesis and its zeros",
    "the Collatz conjecture",
    "the four colour theorem's computer proof",
    "the Navier-Stokes existence problem",
    "the Monty Hall problem",
    "the Mandelbrot set's area",
    "the Ramanujan tau function",
    "the heraldry of the Holy Roman Empire",
    "the canonization process of saints",
    "the Mongol postal relay system",
    "the Inca knotted cords called quipu",
    "the Egyptian mummification ritual",
    "the Viking longship keel",
    "the Samurai sword forging process",
    "the Aztec ball game ullamaliztli",
    "the lighthouse of Alexandria",
    "the Antikythera mechanism",
]
PHRASINGS = ("What do you know about {}?", "Tell me about {}, please.")
QUERIES = [p.format(s) for s in SUBJECTS for p in PHRASINGS]
assert len(QUERIES) == 200


def empty_share(conn: psycopg.Connection, queries: list[str], vecs: np.ndarray) -> dict[str, Any]:
    """Each query through the default path (hybrid, the default floor): how many return nothing;
    and the best relevance of each with min_relevance 0 (what a floor would have to stay above)."""
    empty = empty_never = 0
    best: list[float] = []
    never: list[bool] = []
    for q, v in zip(queries, vecs, strict=True):
        found = conn.execute(
            "SELECT count(*) FROM brain.search(query => %s, query_embedding => %s, max_results => 10)",
            (q, latency._vec(v)),
        ).fetchone()[0]
        empty += found == 0
        (top,) = conn.execute(
            "SELECT max(relevance) FROM brain.search(query => %s, query_embedding => %s,"
            " max_results => 10, min_relevance => 0)",
            (q, latency._vec(v)),
        ).fetchone()
        best.append(round(float(top or 0), 4))
        # never stored: a word of the query (its subject) that no memory of the store holds
        (unknown,) = conn.execute(
            "SELECT count(*) FROM unnest(tsvector_to_array(to_tsvector('english', %s))) AS l(w)"
            " WHERE NOT EXISTS (SELECT FROM brain.memory m WHERE m.workspace_id = brain.current_workspace()"
            " AND m.tsv @@ quote_literal(l.w)::tsquery)",
            (q,),
        ).fetchone()
        never.append(unknown > 0)
        empty_never += found == 0 and unknown > 0
    return {
        "queries": len(queries),
        "empty": empty,
        "best_relevance": best,
        "never_stored": sum(never),
        "never_stored_empty": empty_never,
    }


def tally(total: dict[str, Any], conn: psycopg.Connection, queries: list[str], vecs: np.ndarray) -> None:
    """empty_share of queries, added into total (queries, empty, best_relevance, never_stored,
    never_stored_empty): the off-topic prompts asked beside each question of a run."""
    o = empty_share(conn, queries, vecs)
    for key in ("queries", "empty", "best_relevance", "never_stored", "never_stored_empty"):
        total[key] += o[key]


def docs_store(server: Any) -> dict[str, Any]:
    """The project's documentation (README.md and docs/*.md) ingested with the local MiniLM
    model into a fresh database, then the 200 off-topic queries through the default path."""
    from bench.docingest import REPO
    from bench.util import log
    from pybrain.client import Brain
    from pybrain.embed import get_embedder
    from pybrain.errors import BrainError
    from pybrain.ingest import collect
    from pybrain.ingest import run as ingest_run

    url = server.create_database(DOCS_DB)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            embedder = get_embedder("local")
            brain = Brain(conn, embedder=embedder)
            brain.use_embedding_space()
            paths = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
            done = 0
            for path in paths:  # one file at a time: a file the ingest refuses is left out
                try:
                    done += sum(ingest_run(brain, collect([str(path)], root=REPO)).documents.values())
                except BrainError as exc:
                    log(f"  {path.name} left out: {exc}")
            memories = conn.execute("SELECT count(*) FROM brain.memory WHERE state = 'active'").fetchone()[0]
            vecs = np.asarray(embedder.embed(QUERIES))
            out = empty_share(conn, QUERIES, vecs)
            # and a few questions the documentation answers, which must not come back empty
            on_topic = [
                "how does search rank results",
                "what does brain worker do",
                "how do I ingest documents",
                "what is the relevance floor",
                "how are embeddings calibrated per model",
            ]
            answered = sum(
                1
                for q, v in zip(on_topic, embedder.embed(on_topic), strict=True)
                if conn.execute(
                    "SELECT count(*) FROM brain.search(query => %s, query_embedding => %s)",
                    (q, latency._vec(np.asarray(v))),
                ).fetchone()[0]
            )
    finally:
        server.drop_database(DOCS_DB)
    out.update(memories=memories, documents=done, on_topic=len(on_topic), answered=answered)
    return out


DOCS_DB = "bench_offtopic_docs"


def main() -> None:
    import json

    from bench.server import BenchServer
    from bench.util import log

    with BenchServer() as server:
        out = docs_store(server)
    log(
        f"off-topic queries over the project's documentation ({out['memories']} memories): "
        f"{out['empty']} of {out['queries']} return nothing;"
        f" on-topic answered {out['answered']}/{out['on_topic']}"
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
