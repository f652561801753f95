"""Wall time of each `brain hook` event, as Claude Code runs it: a new process per call.

    python scripts/hook_latency.py [--runs 10] [--seed 1000]

Runs against the configured database (BRAIN_DATABASE_URL, else the embedded
one) in BRAIN_WORKSPACE, with the payload fixtures of tests/fixtures/hooks.
--seed first observes that many memories under project hook-latency, so the
prompt hook searches a populated table. Prints the median and the slowest run
per event, and the share of it that is Python's start and imports (`brain
--version` and `python -c "import pybrain.cli"`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hooks"
PAYLOADS = {
    "session-start": "session_start.json",
    "prompt": "user_prompt_submit.json",
    "pre-compact": "pre_compact.json",
    "session-end": "session_end.json",
}
PROJECT = "hook-latency"
TOPICS = (
    "billing export",
    "finance bucket",
    "staging VPN",
    "deploy pipeline",
    "nightly backup",
    "search index",
)
EVENTS = ("failed", "was rerun", "moved to a new region", "got a new owner", "needs a review", "was fixed")


def seed(count: int) -> None:
    from pybrain.client import Brain

    texts = []
    for i in range(count):
        topic, event = TOPICS[i % len(TOPICS)], EVENTS[(i // len(TOPICS)) % len(EVENTS)]
        texts.append(f"The {topic} {event} on day {i} (ticket OPS-{1000 + i})")
    with Brain.open() as brain:
        for start in range(0, count, 200):
            brain.observe(texts[start : start + 200], project=PROJECT)


def timed(args: list[str], data: bytes = b"") -> float:
    started = time.perf_counter()
    out = subprocess.run(args, input=data, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {out.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    if opts.seed:
        seed(opts.seed)
    brain = [sys.executable, "-m", "pybrain"]
    with tempfile.TemporaryDirectory() as tmp:
        transcript = Path(tmp) / "transcript.jsonl"
        transcript.write_bytes((FIXTURES / "transcript.jsonl").read_bytes())
        rows = [
            ("python -c 'import pybrain.cli'", [sys.executable, "-c", "import pybrain.cli"], b""),
            ("brain --version", [*brain, "--version"], b""),
        ]
        for event, name in PAYLOADS.items():
            data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
            data.update(transcript_path=str(transcript), cwd=tmp)
            rows.append(
                (
                    f"brain hook {event}",
                    [*brain, "hook", event, "--project", PROJECT],
                    json.dumps(data).encode(),
                )
            )
        print(f"{'command':<34}{'median s':>10}{'max s':>9}   ({opts.runs} runs, {os.cpu_count()} cpus)")
        for label, args, data in rows:
            times = [timed(args, data) for _ in range(opts.runs)]
            print(f"{label:<34}{statistics.median(times):>10.3f}{max(times):>9.3f}")


if __name__ == "__main__":
    main()
