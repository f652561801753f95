"""The agent loop over generated weeks (tests/simulation.py): fixed seeds here; `make sim
SEEDS=200` runs as many generated seeds, shrinks each violation to a short list of steps and
prints them."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import simulation
from conftest import TEST_ROLE, new_database, with_database
from psycopg.conninfo import conninfo_to_dict

CI_SEEDS = [11, 12, 13]
_runs = itertools.count()

# Invariants that today's code is known to break, each with what breaks it: a run whose only
# violations are of these is an expected failure (xfail, its report printed), any other
# violation fails. An entry goes when the code holds its invariant.
OPEN: dict[str, str] = {}


def expect(seed: int, steps: list, violations: list) -> None:
    """Fails on a violation of an invariant the code holds; an expected failure (xfail) when
    every violation is of an OPEN one."""
    if violations and all(v.invariant in OPEN for v in violations):
        pytest.xfail("open: " + simulation.report(seed, steps, violations))
    assert violations == [], simulation.report(seed, steps, violations)


@pytest.fixture
def fresh(admin_url: str, template_url: str, tmp_path: Path):
    """A new database (a copy of the migrated template) and an empty folder, per run."""

    @contextmanager
    def make() -> Iterator[tuple[str, str, Path]]:
        n = next(_runs)
        with new_database(admin_url, f"brain_sim_{os.getpid()}_{n}", "brain_template") as url:
            client = with_database(url, conninfo_to_dict(url)["dbname"], user=TEST_ROLE, password="test")
            folder = tmp_path / f"run{n}"
            folder.mkdir()
            yield client, url, folder

    return make


def test_the_generator_covers_every_kind_of_step() -> None:
    kinds = {s.kind for seed in CI_SEEDS for s in simulation.generate(seed)}
    kinds |= {s.kind for s in simulation.generate(14)}
    assert kinds == {
        "open",
        "say",
        "correct",
        "private",
        "compact",
        "clear",
        "end",
        "crash",
        "work",
        "fact",
        "backup",
        "down",
        "up",
    }
    assert simulation.generate(11) == simulation.generate(11)
    # sessions of the three harnesses, interleaved in one repository
    opened = [s for seed in CI_SEEDS for s in simulation.generate(seed) if s.kind == "open"]
    assert {s.harness for s in opened} == set(simulation.HARNESSES)
    in_one = [{s.harness for s in opened if s.arg == repo} for repo in range(len(simulation.REPOS))]
    assert any(len(harnesses) == 3 for harnesses in in_one)


@pytest.mark.parametrize("seed", CI_SEEDS)
def test_a_generated_fortnight_keeps_every_invariant(fresh, seed, capsys) -> None:
    steps = simulation.generate(seed)
    violations = simulation.run(steps, fresh, known=OPEN)
    with capsys.disabled():
        print("\n" + simulation.report(seed, steps, violations))
    expect(seed, steps, violations)


# What the simulation found, shrunk: each a list of steps that broke an invariant once.
S = simulation.Step
FOUND = {
    # two windows in one folder: the one that ended ended the other's session, whose turns
    # its crash then never had captured
    "two windows, one ends, the other crashes": [
        S("open", 1, 1),
        S("open", 2, 1),
        S("say", 2, 2571),
        S("end", 1),
        S("crash", 2),
        S("open", 3, 0),
    ],
    # a crashed session in a repository is captured by the next start in a subfolder of it
    "a crash captured from a subfolder": [S("open", 1, 0), S("say", 1, 5131), S("crash", 1), S("open", 2, 1)],
    # a compaction's note is not the last ended session's handoff
    "a compaction while another session had ended": [
        S("open", 1, 1),
        S("say", 1, 8079),
        S("end", 1),
        S("open", 2, 1),
        S("say", 2, 2985),
        S("compact", 2),
        S("open", 3, 0),
    ],
    # a crashed session captured by the start whose payload is shown: its handoff is in it
    "two crashes, one after the other": [
        S("open", 2, 1),
        S("say", 2, 8980),
        S("crash", 2),
        S("open", 7, 1),
        S("say", 7, 7829),
        S("crash", 7),
        S("open", 8, 1),
    ],
    # a compaction kept while the database hung, written before another window ended: the
    # session that compacted went on and ended last
    "a compaction kept through an outage": [
        S("open", 1, 0),
        S("open", 2, 0),
        S("say", 1, 6135),
        S("down", 0, 1),
        S("compact", 2),
        S("up", 0),
        S("private", 2, 1233),
        S("end", 1),
        S("end", 2),
        S("open", 5, 1),
    ],
    # of two crashed sessions, the one whose transcript went on longer ended last
    "two crashes in one repository": [
        S("open", 1, 0),
        S("say", 1, 3965),
        S("open", 2, 0),
        S("say", 2, 5131),
        S("crash", 2),
        S("say", 1, 4000),
        S("crash", 1),
        S("open", 3, 1),
        S("open", 4, 0),
    ],
    # a SessionEnd kept while the database was out, written by another session's hook once
    # it was back: its session was swept as a crash ('process gone') before it was ended
    "a SessionEnd written from the spool": [
        S("open", 1, 1),
        S("down", 0, 0),
        S("end", 1),
        S("open", 4, 2),
        S("up", 0),
        S("clear", 4),
    ],
    # (seed 1008) a window that compacted, then ended, after another window in the same
    # folder last spoke and before it crashed: the one that ended is the last to end
    "an end after a compaction, beside a crash": [
        S("open", 4, 3),
        S("say", 4, 1659),
        S("compact", 4),
        S("open", 6, 3),
        S("say", 6, 791),
        S("end", 4),
        S("crash", 6),
        S("open", 9, 3),
    ],
    # (seed 1000) a Cursor chat that ended (a new chat) after a Claude Code session's end, its
    # last turn's stop before that end: its handoff, stored again at its end, counted from
    # the stop
    "a Cursor session ends after another harness's session": [
        S("open", 3, 1),
        S("say", 3, 7959),
        S("open", 6, 1, "cursor"),
        S("say", 6, 6498),
        S("clear", 3),
        S("clear", 6),
    ],
    # (seeds 1006, 1007) a Claude Code session crashed, and the next session of its repository
    # started in Cursor or Codex: the crashed session's turns were captured by a start of its
    # own harness only
    "a crash captured by another harness's start": [
        S("open", 7, 1),
        S("say", 7, 8841),
        S("crash", 7),
        S("open", 9, 0, "cursor"),
        S("open", 1, 2),
        S("private", 1, 7313),
        S("crash", 1),
        S("open", 5, 2, "codex"),
    ],
    # (seed 1037) a session started while the database hung (never registered) ended once it
    # was back, after another window of its folder had crashed: its handoff was given to the
    # crashed session's row and counted from that crash
    "an end of a session never registered, after a crash in its folder": [
        S("open", 3, 3),
        S("say", 3, 3777),
        S("crash", 3),
        S("down", 0, 1),
        S("open", 4, 3),
        S("say", 4, 2351),
        S("up", 0),
        S("end", 4),
        S("open", 13, 3, "cursor"),
    ],
    # (seed 1002) a Codex session's second turn stopped after a Cursor turn in the same
    # repository: the handoff of that stop counted from the session's first stop
    "a Codex turn stops again after a Cursor turn": [
        S("open", 1, 1, "codex"),
        S("open", 3, 0, "cursor"),
        S("say", 1, 4602),
        S("work", 3, 9792),
        S("say", 1, 3898),
        S("open", 4, 1, "cursor"),
    ],
}


# Written for an invariant the generated seeds reach seldom: a service's port said in
# exchanges (say arg 7, 14, 21, 28: the gateway, ports 1007 ...), then written as a fact in
# alpha (fact 0: alpha's gateway), asked again in alpha and its subfolder, corrected
# (brain supersede), asked again; beta's gateway stays beta's.
FOUND["a fact written after the turns that said otherwise"] = [
    S("open", 1, 0),
    S("say", 1, 7),
    S("say", 1, 14),
    S("open", 2, 2),
    S("say", 2, 21),
    S("end", 2),
    S("fact", 0, 0),
    S("say", 1, 21),
    S("end", 1),
    S("open", 3, 1),
    S("say", 3, 28),
    S("fact", 0, 0),
    S("say", 3, 35),
    S("fact", 0, 2),
    S("say", 3, 42),
    S("work", 3, 7),
    S("backup", 0),
    S("end", 3),
    S("backup", 0),
]


# Corrections: a port said in an exchange, written as a fact (alpha's gateway), repeated by
# the agent, corrected in conversation (the newest statement now), asked again from the
# subfolder; then the fact superseded by hand, which leaves the turns that repeated the old
# fact's port stale, and asked again in each folder.
FOUND["a correction said, then a supersede by hand"] = [
    S("open", 1, 0),
    S("say", 1, 7),
    S("fact", 0, 0),
    S("say", 1, 14),
    S("correct", 1, 21),
    S("end", 1),
    S("open", 2, 1),
    S("say", 2, 28),
    S("fact", 0, 0),
    S("say", 2, 35),
    S("end", 2),
    S("open", 3, 0),
    S("say", 3, 42),
]


# (seed 11, shrunk) "Which port does the kestrel billing worker listen on now?" got the
# kestrel gateway's port fact: a line of another topic (a subject no memory names)
FOUND["a prompt about one service gets another's port fact"] = [
    S("open", 2, 0),
    S("fact", 0, 1),
    S("say", 2, 9711),
]


# (seed 1004) 57 generated steps, ending in a backup of a store with many turns that say the
# same words: the restored database's search ranked equal BM25 scores apart, for their sums
# of floats came out in another order under another plan (the shrinker could not shorten it).
FOUND["a backup of many equal turns ranks them as the live store does"] = simulation.generate(
    1004, steps=57, harnesses=("claude-code",), corrections=False
)


@pytest.mark.parametrize("case", sorted(FOUND))
def test_what_the_simulation_found_holds(fresh, case) -> None:
    violations = simulation.run(FOUND[case], fresh, known=OPEN)
    expect(0, FOUND[case], violations)


@pytest.mark.skipif(
    not (os.environ.get("PYBRAIN_SIM_SEEDS") or os.environ.get("PYBRAIN_SIM_SEED")),
    reason="make sim SEEDS=n runs it",
)
def test_many_seeds(fresh, capsys) -> None:
    """make sim SEEDS=n: n generated seeds, each violation shrunk to the steps that show it."""
    found = 0
    for seed in simulation.seeds_from_env(CI_SEEDS):
        steps = simulation.generate(seed, steps=int(os.environ.get("PYBRAIN_SIM_STEPS", "60")))
        violations = simulation.run(steps, fresh)
        if violations:
            found += 1
            short = simulation.shrink(steps, violations[0].invariant, fresh)
            again = simulation.run(short, fresh)
            with capsys.disabled():
                # (a violation the shorter list does not show again is timing's: the whole run's)
                print("\n" + simulation.report(seed, short if again else steps, again or violations))
    assert found == 0


def test_a_project_is_the_repository_that_holds_the_folder(tmp_path: Path) -> None:
    from pybrain.repo import find

    def project_of(folder: Path) -> str:
        """The label of the repository that holds folder (which project it names, the
        database decides: tests/test_repository_projects.py)."""
        return find(folder).label

    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "shop" / "web" / "src").mkdir(parents=True)
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")  # a worktree
    (tmp_path / "notes").mkdir()
    assert project_of(tmp_path / "shop") == "shop"
    assert project_of(tmp_path / "shop" / "web" / "src") == "shop"
    assert project_of(tmp_path / "wt") == "wt"
    assert project_of(tmp_path / "notes") == "notes"
