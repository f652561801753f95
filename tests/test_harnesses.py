"""One store across harnesses: Claude Code, Codex and Cursor sessions on one repository,
one after another, through the exact hook commands each harness's wiring runs, fed
each harness's JSON and transcript (tests/fixtures/hooks/, tests/fixtures/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import test_codex
import test_cursor
import test_hooks
from test_hooks import run_hook

CLAUDE_REPLY = "Last reply: Updated infra/iam/billing.tf"
CODEX_REPLY = "Last reply: The export job's role lacked s3:PutObject"
CURSOR_REPLY = "Last reply: Opened #482 with the export role's policy"


def _context(out: Any) -> str:
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    if "additional_context" in answer:
        return answer["additional_context"]
    return answer["hookSpecificOutput"]["additionalContext"]


class Harnesses:
    """The three harnesses' hooks on one project folder, each with its own transcript."""

    def __init__(self, env: dict[str, str], tmp: Path, folder: Path) -> None:
        self.env, self.folder = env, folder
        self.files = {}
        for name, source in (
            ("claude-code", test_hooks.FIXTURES / "transcript.jsonl"),
            ("codex", test_codex.FIXTURES / "rollout.jsonl"),
            ("cursor", test_cursor.FIXTURES / "transcript.jsonl"),
        ):
            self.files[name] = tmp / f"{name}-{source.name}"
            shutil.copy(source, self.files[name])
        with self.files["cursor"].open("a", encoding="utf-8") as f:
            for role, text in (("user", "Open a pull request."), ("assistant", CURSOR_REPLY[12:] + ".")):
                f.write(
                    json.dumps({"role": role, "message": {"content": [{"type": "text", "text": text}]}})
                    + "\n"
                )

    def hook(self, harness: str, event: str, **changes: object) -> Any:
        module = {"claude-code": test_hooks, "codex": test_codex, "cursor": test_cursor}[harness]
        data = module.payload(event, self.files[harness], self.folder, **changes)
        args = () if harness == "claude-code" else ("--source", harness)
        out, _ = run_hook(self.env, event, data, *args)
        return out


def test_a_rule_and_the_last_handoff_reach_every_harness(
    brain_cli, cli_env, conn, tmp_path, project_dir
) -> None:
    h = Harnesses(cli_env, tmp_path, project_dir)
    _context(h.hook("claude-code", "session-start"))
    r = brain_cli("remember", "rule", "Deploy billing only from a signed tag", "--project", "billing")
    assert r.exit_code == 0, r.output
    assert h.hook("claude-code", "session-end").returncode == 0

    # Codex starts next: the rule, and the handoff of Claude Code's session, which ended last.
    context = _context(h.hook("codex", "session-start"))
    assert "Deploy billing only from a signed tag" in context and CLAUDE_REPLY in context
    assert h.hook("codex", "session-end").returncode == 0
    # Cursor next: Codex's handoff.
    context = _context(h.hook("cursor", "session-start"))
    assert "Deploy billing only from a signed tag" in context and CODEX_REPLY in context
    assert CLAUDE_REPLY not in context
    assert h.hook("cursor", "session-end").returncode == 0
    # Claude Code again: Cursor's.
    context = _context(h.hook("claude-code", "session-start", session_id="cc-2"))
    assert CURSOR_REPLY in context and CLAUDE_REPLY not in context

    counts = dict(
        conn.execute(
            "SELECT source_system, count(*) FROM brain.memory WHERE source_ref IS NOT NULL "
            "AND project = 'billing' GROUP BY 1"
        ).fetchall()
    )
    assert counts == {"claude-code": 5, "codex": 2, "cursor": 5}, counts
    repeats = conn.execute(
        "SELECT source_system, source_ref FROM brain.memory WHERE source_ref IS NOT NULL "
        "GROUP BY 1, 2 HAVING count(*) > 1"
    ).fetchall()
    assert repeats == []
    # Codex's turns are found by a search from any harness
    r = brain_cli("search", "AccessDenied new bucket PutObject", "--project", "billing", "--json")
    assert r.exit_code == 0, r.output
    codex_ids = {
        m
        for (m,) in conn.execute(
            "SELECT memory_id FROM brain.memory WHERE source_system = 'codex'"
        ).fetchall()
    }
    assert codex_ids & {hit["id"] for hit in json.loads(r.output)}
