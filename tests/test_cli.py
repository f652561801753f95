"""The `brain` command against the test database, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psycopg
from click.testing import CliRunner
from conftest import new_database
from helpers import unaged

from pybrain import db
from pybrain.cli import main

BODY = (
    "The nightly backup job copies the primary database to cold storage "
    "in the second region before four in the morning"
)


def run_brain(env: dict[str, str], *args: str | bytes, input: bytes | None = None):
    """`brain` in a subprocess: real argv bytes, real exit code."""
    return subprocess.run(
        [sys.executable, "-m", "pybrain", *args],
        input=input,
        capture_output=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_remember_duplicate_supersede_recall(brain_cli) -> None:
    r = brain_cli("remember", "fact", "Nightly backup to cold storage", BODY, "--tag", "ops")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("created #1 fact: Nightly backup to cold storage")

    r = brain_cli("remember", "fact", "nightly backup to  cold storage", BODY)
    assert r.output.strip() == "skipped: already stored as #1 (exact duplicate)"

    related = (
        BODY.replace("nightly", "weekly")
        .replace("cold", "archive")
        .replace("second", "third")
        .replace("four", "six")
    )
    r = brain_cli("remember", "fact", "Weekly backup to archive storage", related)
    assert r.exit_code == 1
    assert "error: A related fact already exists: #1" in r.stderr
    assert "hint: If the new text corrects or extends it, supersede it: brain supersede 1" in r.stderr
    assert "Traceback" not in r.output

    r = brain_cli(
        "supersede", "1", "Weekly backup to archive storage", related, "--reason", "backups moved to weekly"
    )
    assert r.output.strip() == "#1 superseded by #2"

    r = brain_cli("recall", "1")
    assert r.output.startswith("SUPERSEDED on ")
    assert 'Current version: #2 "Weekly backup to archive storage"' in r.output
    assert "tags: ops" in r.output

    r = brain_cli("recall", "2", "--json")
    data = json.loads(r.output)
    assert (data["id"], data["state"], data["supersedes"], data["tags"]) == (2, "active", 1, ["ops"])


def test_json_output_and_error_json(brain_cli) -> None:
    r = brain_cli("remember", "rule", "Never force-push shared branches", "--severity", "blocker", "--json")
    out = json.loads(r.output)
    assert out["action"] == "created" and out["memory_id"] == 1 and out["embedding_pending"] is False
    r = brain_cli("remember", "rule", "Key", "sk-abcdefghijklmnopqrstuvwxyz0123", "--json")
    assert r.exit_code == 1
    err = json.loads(r.output)
    assert err["code"] == "BR007" and err["error"] == "SecretDetected" and err["hint"]


def test_unsupersede_and_forget(brain_cli) -> None:
    brain_cli("remember", "fact", "API listens on 8080")
    brain_cli("supersede", "1", "API listens on 9090", "--reason", "port change")
    assert brain_cli("unsupersede", "1").output.strip() == "#1 is current again"
    r = brain_cli("forget", "1", "--reason", "service retired")
    assert r.output.strip() == "#1 forgotten"
    assert brain_cli("recall", "1").output.startswith("FORGOTTEN: service retired.")
    r = brain_cli("forget", "1")
    assert r.exit_code == 2 and "--reason" in r.output


def test_init_on_a_migrated_database(brain_cli) -> None:
    out = json.loads(brain_cli("init", "--json").output)
    assert out["migrations_applied"] == [] and out["embedding_space"] == "hash:feature-hash-v1"
    assert out["active_space"] == "hash:feature-hash-v1" and out["embedded"] is False


def test_init_writes_the_statements_of_the_space_it_registers(admin_url, monkeypatch, tmp_path) -> None:
    """A database with no space yet: `brain init` registers one and applies the function files
    once more, which write the space's own statements (the boot's PATTERN rules, planned once
    a session: sql/functions/015-boot.sql)."""
    with new_database(admin_url, f"brain_init_{os.getpid()}") as url:
        monkeypatch.setenv("BRAIN_DATABASE_URL", url)
        monkeypatch.setenv("BRAIN_EMBEDDER", "hash")
        monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
        r = CliRunner().invoke(main, ["init", "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["active_space"] == "hash:feature-hash-v1"
        with psycopg.connect(url, autocommit=True) as su:
            assert su.execute("SELECT to_regproc('brain._boot_patterns_1')").fetchone()[0] is not None
            assert not db.spaces_without_statements(su)


def test_unknown_kind_and_bad_arguments_are_usage_errors(brain_cli) -> None:
    r = brain_cli("remember", "belief", "Something")
    assert r.exit_code == 2 and "is not one of 'rule', 'fact'" in r.output
    assert "belief" not in r.output  # what was typed is not repeated: it may be a pasted secret
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    r = brain_cli("remember", token, "Something")
    assert r.exit_code == 2 and token not in r.output and token[:12] not in r.output
    r = brain_cli("search", "x", "--kind", token)
    assert r.exit_code == 2 and token not in r.output
    r = brain_cli("remember", "fact", "Something", "--metadata", "{not json")
    assert r.exit_code == 2 and "not valid JSON" in r.output


def test_invalid_utf8_in_argv_is_refused(cli_env) -> None:
    r = run_brain(cli_env, "remember", "fact", b"broken \xff\xfe headline")
    assert r.returncode == 2
    assert b"not valid UTF-8" in r.stderr
    assert b"Traceback" not in r.stderr


def test_body_from_stdin_with_bad_bytes(cli_env) -> None:
    r = run_brain(cli_env, "remember", "fact", "From stdin", "-", input=b"caf\xe9 latin-1")
    assert r.returncode == 2 and b"standard input is not valid UTF-8" in r.stderr
    r = run_brain(cli_env, "remember", "fact", "From stdin", "-", input=b"nul \x00 byte")
    assert r.returncode == 1 and b"NUL" in r.stderr
    r = run_brain(cli_env, "remember", "fact", "From stdin", "-", input=b"fine text")
    assert r.returncode == 0 and r.stdout.startswith(b"created #1 fact: From stdin")


def test_ten_megabyte_body_is_refused_quickly(cli_env) -> None:
    r = run_brain(cli_env, "remember", "fact", "Huge", "-", input=b"word " * 2_000_000)
    assert r.returncode == 1
    assert b"limit is 400 words and 20000 characters" in r.stderr
    assert run_brain(cli_env, "recall", "1").returncode == 1


def test_queued_write_and_worker_once(brain_cli, conn, server, monkeypatch) -> None:
    from pybrain.embed import clear_cache

    # The workspace embeds with Ollama; first it is down, then it is back.
    server.dims = 384
    conn.execute("SELECT brain.use_embedding_space('ollama', 'all-minilm', 384)")
    conn.execute("SELECT brain.activate_embedding_space('ollama:all-minilm')")
    monkeypatch.setenv("BRAIN_OLLAMA_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("BRAIN_EMBED_RETRIES", "1")
    clear_cache()
    r = brain_cli("remember", "fact", "Queued while the embedder is down")
    assert r.exit_code == 0
    assert "embedding pending" in r.output and "brain worker --once" in r.output
    assert server.received == []

    monkeypatch.setenv("BRAIN_OLLAMA_URL", server.url)
    clear_cache()
    r = brain_cli("worker", "--once")
    assert r.output.strip().startswith("embedded 1:")
    assert [x.body["input"] for x in server.received] == [["Queued while the embedder is down"]]
    assert brain_cli("worker", "--once", "--json").output.count('"embedded": 0') == 1


def test_curation_and_search_commands(brain_cli) -> None:
    brain_cli("remember", "fact", "Deploys use blue-green on prod", "Traffic flips between two clusters.")
    brain_cli(
        "remember",
        "rule",
        "Run migrations with the deploy tool",
        "--skill",
        '{"name": "migrations", "keywords": ["migrat"], "projects": [], "always_on": false}',
    )
    assert brain_cli("rate", "1", "up").output.strip() == "#1 rated up: rating +1"
    assert brain_cli("annotate", "1", "Canary since November").output.strip() == "#1 annotated"
    assert brain_cli("pin", "1").output.strip() == "#1 pinned"
    assert brain_cli("pin", "1").output.strip() == "#1 was already pinned"
    assert brain_cli("unpin", "1").output.strip() == "#1 unpinned"
    assert brain_cli("confirm", "1").output.strip() == "#1 confirmed"
    assert "annotation: Canary since November" in brain_cli("recall", "1").output

    out = brain_cli("search", "blue green deploys").output
    assert out.splitlines()[0].startswith("#1 · fact · ") and "Deploys use blue-green on prod" in out
    skill_first = brain_cli("search", "how do I write a migration").output.splitlines()[0]
    assert skill_first.startswith("#2 · rule · skill migrations")
    assert json.loads(brain_cli("search", "blue green", "--kind", "rule", "--json").stdout) == []
    assert brain_cli("search", "zebra crossing").output.strip().startswith("nothing relevant found: ")
    assert [h["id"] for h in json.loads(brain_cli("recent", "--json").stdout)] == [2, 1]
    skills = brain_cli("skills").output
    assert skills.startswith("migrations (#2, global): Run migrations with the deploy tool")
    assert "Run migrations" in brain_cli("skills", "migrations").output
    stats = json.loads(brain_cli("stats", "--json").stdout)
    assert stats["by_kind"] == {"fact": 1, "rule": 1} and stats["annotations"] == 1


def test_observe_command(brain_cli) -> None:
    r = brain_cli("observe", "User: the build is red", "Assistant: rerun it with --clean")
    assert r.output.splitlines() == ["text 1: created #1", "text 2: created #2", "2 rows: 2 created"]
    r = brain_cli("observe", "key sk-abcdefghijklmnopqrstuvwxyz0123")
    assert r.exit_code == 0 and r.output.splitlines() == [
        "text 1: created #3 (redacted openai-api-key at 5-37)",
        "1 rows: 1 created",
    ]


def test_lifecycle_commands(brain_cli) -> None:
    brain_cli("remember", "task", "Rotate the TLS certificates", "--priority", "2")
    assert brain_cli("task", "1", "blocked", "--note", "vendor").output.strip() == "task #1: open -> blocked"
    r = brain_cli("task", "1", "stale")
    assert r.exit_code == 2
    brain_cli("task", "1", "done")
    r = brain_cli("task", "1", "open")
    assert r.exit_code == 1 and "cannot become open" in r.stderr
    brain_cli("remember", "fact", "Office is on floor 3")
    assert brain_cli("archive", "2", "--reason", "moved").output.strip() == "#2 archived"
    assert brain_cli("restore", "2").output.strip() == "#2 restored"
    brain_cli("supersede", "2", "Office is on floor 5", "--reason", "moved again")
    history = brain_cli("history", "2").output
    assert history.startswith("#2: current version #3")
    assert "superseded by #3: moved again" in history and "#2 archive by" in history
    assert brain_cli("history", "99").exit_code == 1
    assert brain_cli("maintain").output.startswith("facts turned dormant 0")
    assert brain_cli("maintain", "--if-due").output.startswith("not due: last run")
    assert brain_cli("prune").output.strip() == "nothing to prune"
    r = brain_cli("capture", "We decided to use pnpm. Nice weather today. We need to rotate the keys soon.")
    assert r.output.splitlines() == [
        "created #4 decision: We decided to use pnpm.",
        "created #5 action: We need to rotate the keys soon.",
    ]


def test_session_commands(brain_cli) -> None:
    brain_cli("remember", "rule", "Never force-push to main", "--severity", "BLOCKER")
    out = brain_cli("boot", "--source", "claude", "--task", "fix the deploy", "--pid", "1").output
    assert out.startswith('# pybrain memory · global · session #1\nTask: "fix the deploy"')
    assert '## BLOCKER rules\n- #1 "Never force-push to main"' in unaged(out)
    payload = json.loads(brain_cli("boot", "--source", "cursor", "--json", "--pid", "1").stdout)
    assert payload["session_id"] == 2 and payload["sections"]["siblings"][0]["session_id"] == 1
    assert "#1 claude" in brain_cli("sessions").output
    ended = brain_cli("end", "--session", "1", "--handoff", "Deploy fixed.", "--pending", "docs")
    assert ended.output.strip() == "session #1 ended"
    again = brain_cli("boot", "--source", "claude", "--pid", "1").output
    assert '## Handoff from the last session\n"Deploy fixed."' in unaged(again)
    assert brain_cli("actions", "add", "Rebase before merging").output.strip() == "action item #1 raised"
    r = brain_cli("remember", "fact", "A write", "--session", "3")
    assert r.exit_code == 1 and "pending action item" in r.stderr
    assert brain_cli("actions", "list", "--session", "3").output.strip() == "#1 Rebase before merging"
    assert "0 still pending" in brain_cli("ack", "1", "will_execute", "--session", "3").output
    assert brain_cli("remember", "fact", "A write", "--session", "3").exit_code == 0
    assert brain_cli("scratch", "set", "branch", "main", "--project", "web").output.strip() == "branch set"
    assert brain_cli("scratch", "get", "branch", "--project", "web").output.strip() == "main"
    assert brain_cli("scratch", "get", "nope", "--project", "web").exit_code == 1
    assert brain_cli("scratch", "list", "--project", "web").output.strip() == "branch: main"
    r = brain_cli("end")
    assert r.exit_code == 2 and "--session" in r.output


def test_export_to_an_unwritable_place_is_a_clear_error(brain_cli, tmp_path) -> None:
    brain_cli("remember", "fact", "Exports go to the backup share")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for args in (["export", str(blocker / "x.jsonl")], ["export", "--markdown", str(blocker / "notes")]):
        r = brain_cli(*args)
        assert r.exit_code != 0, args
        assert "Cannot write" in r.output and "hint:" in r.output
        assert "Traceback" not in r.output
    r = brain_cli("export", str(blocker / "x.jsonl"), "--json")
    assert json.loads(r.output)["detail"]["path"].startswith(str(blocker))
    assert not list(tmp_path.glob("**/*.partial"))
