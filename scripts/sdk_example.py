"""pybrain from Python: the `Brain` class (docs/python.md), end to end.

    BRAIN_EMBEDDER=hash python scripts/sdk_example.py

Uses the configured database (BRAIN_DATABASE_URL, else the embedded one,
started and migrated when needed) and workspace, in the project
"sdk-example". Each step prints one line; the memories it writes stay (run it
in a scratch database, or archive them afterwards).
"""

from __future__ import annotations

import uuid

from pybrain.client import Brain
from pybrain.errors import BrainError, SecretDetected

PROJECT = "sdk-example"


def main() -> None:
    run = uuid.uuid4().hex[:8]  # the example may run twice in one database
    # Brain.open reads BRAIN_DATABASE_URL, BRAIN_WORKSPACE and BRAIN_EMBEDDER; the
    # actor names who writes in the audit trail.
    with Brain.open(actor="sdk-example") as brain:
        # 1. A session: what the agent should know before it starts.
        boot = brain.boot_session("sdk-example", project=PROJECT, task="speed up the nightly billing export")
        session = boot["session_id"]
        handoff = (boot["sections"]["handoff"] or {}).get("text")
        print(f"booted session #{session} ({boot['tokens']} tokens), last handoff: {handoff}")

        # 2. Authored memories go through the write gate.
        rule = brain.remember(
            "rule",
            f"Never rerun the billing export against production by hand ({run})",
            severity="BLOCKER",
            project=PROJECT,
        )
        fact = brain.remember(
            "fact",
            f"The billing export takes 41 minutes since the invoice table passed 18 million rows ({run})",
            body="Measured on the 2026-11-19 run; the S3 upload is 6 minutes of it.",
            project=PROJECT,
            tags=["billing"],
        )
        print(f"remember: rule {rule.action} #{rule.memory_id}, fact {fact.action} #{fact.memory_id}")

        # The gate refuses what it must, with a code, a message and a hint.
        try:
            brain.remember("fact", "The export uses key AKIA2E3KQ7ZP4XWN6RLM", project=PROJECT)
        except SecretDetected as exc:
            print(f"refused {exc.code}: {exc.message}")

        # 3. Observed text (chat turns, tool output) in one batch: headlines derived, deduplicated.
        rows = brain.observe(
            [
                f"User: why is the billing export slow? ({run})",
                f"Assistant: the invoice scan is sequential ({run})",
            ],
            project=PROJECT,
            source_system="sdk-example",
            source_refs=[f"{run}/1", f"{run}/2"],
        )
        print("observe:", ", ".join(f"{r['action']} #{r['memory_id']}" for r in rows))

        # 4. Hybrid search (vector + words + trigrams), then a recall by id.
        hits = brain.search("how many minutes does the billing export take", project=PROJECT, max_results=3)
        print("search:", ", ".join(f"#{h['id']} {h['kind']}" for h in hits))
        print(f"recall: {brain.recall(fact.memory_id)['headline']!r}")

        # 5. A belief changes: supersede keeps the chain.
        newer = brain.supersede(
            fact.memory_id,
            f"The billing export takes 12 minutes with the invoice scan in parallel ({run})",
            reason="parallel scan shipped",
        )
        print(f"supersede: #{fact.memory_id} -> #{newer.memory_id}")
        print(f"recall old: {brain.recall(fact.memory_id)['banner']}")

        # 6. End the session with a handoff for the next one.
        ended = brain.end_session(
            session, handoff=f"Parallel invoice scan shipped ({run}); next: the S3 upload."
        )
        print(f"end: session #{ended['session']} ended={ended['ended']}")


if __name__ == "__main__":
    try:
        main()
    except BrainError as exc:
        raise SystemExit(f"error: {exc.message}") from exc
