"""The Python SDK example of docs/python.md runs against the test database, twice."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "scripts" / "sdk_example.py"


def run_example(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_sdk_example_runs(cli_env, conn) -> None:
    lines = run_example(cli_env).splitlines()
    assert re.fullmatch(r"booted session #1 \(\d+ tokens\), last handoff: None", lines[0])
    assert re.fullmatch(r"remember: rule created #\d+, fact created #\d+", lines[1])
    assert lines[2] == (
        "refused BR007: The headline holds what looks like a secret (aws-access-key-id at character 21);"
        " nothing was stored."
    )
    assert re.fullmatch(r"observe: created #\d+, created #\d+", lines[3])
    fact = re.search(r"fact created #(\d+)", lines[1]).group(1)
    assert f"#{fact} fact" in lines[4].removeprefix("search: ").split(", ")
    assert lines[5].startswith("recall: 'The billing export takes 41 minutes since the invoice table")
    newer = re.fullmatch(rf"supersede: #{fact} -> #(\d+)", lines[6]).group(1)
    assert lines[7].startswith("recall old: SUPERSEDED on ") and f"Current version: #{newer}" in lines[7]
    assert lines[8] == "end: session #1 ended=True"
    # what it wrote is in the database, with the session's handoff
    handoff = conn.execute("SELECT handoff FROM brain.session WHERE session_id = 1").fetchone()[0]
    assert handoff.startswith("Parallel invoice scan shipped")

    # A second run in the same database stores its own memories and gets the handoff.
    again = run_example(cli_env).splitlines()
    assert again[0].startswith("booted session #2 (")
    assert again[0].endswith(f"last handoff: {handoff}")
    assert again[-1] == "end: session #2 ended=True"
