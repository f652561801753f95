"""`<private>` spans closed across messages, in the three harnesses' transcripts.

A person opens `<private>` in one message and closes it in their next: the first message's
rest and the second's first half are private. Nothing of that text may be stored, audited,
handed off or given to the embedder. Each harness's capture hook is fed its own transcript
shape (Claude Code's JSONL, Codex's rollout file, Cursor's agent transcript), with enough
turns before the span that the capture cuts it into batches (the span opens in one batch and
closes in the next), and once more after a first capture that saw only the opening message.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest
import test_codex
import test_cursor
import test_hooks
from psycopg.types.json import Jsonb
from test_hooks import run_hook

from pybrain.hooks import FIRST_TURNS
from pybrain.hooks.transcript import read_turns

# The words of the private text: none of them may be anywhere in the database.
HIDDEN = ("zanzibar-staging-7781", "quokka-middle-2210", "quokka-tail-5531", "wombat-reply-none")
OPEN = "Deploy notes follow. <private>my staging db password is zanzibar-staging-7781"
MIDDLE = "the replica sits at quokka-middle-2210 behind the bastion"
CLOSE = "and the host is quokka-tail-5531 </private> and the export job is fine now."
SOURCES = {"claude-code": "claude-code", "codex": "codex", "cursor": "cursor"}
SESSIONS = {
    "claude-code": test_hooks.SESSION,
    "codex": test_codex.SESSION,
    "cursor": test_cursor.CONVERSATION,
}


def line(harness: str, role: str, text: str, n: int) -> str:
    """One message as the harness writes it in its transcript."""
    at = f"2026-11-20T10:{n // 60:02d}:{n % 60:02d}.000Z"
    if harness == "claude-code":
        message: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant":
            message = {
                "role": role,
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": text}],
            }
        data = {
            "sessionId": test_hooks.SESSION,
            "type": role,
            "uuid": f"p{n}",
            "timestamp": at,
            "message": message,
        }
    elif harness == "codex":
        kind = "input_text" if role == "user" else "output_text"
        item = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
        data = {"timestamp": at, "type": "response_item", "payload": item}
    else:
        data = {"role": role, "message": {"content": [{"type": "text", "text": text}]}}
    return json.dumps(data) + "\n"


def setup(harness: str, tmp_path: Path) -> tuple[Path, Any]:
    """The harness's fixture transcript copied under the name it gives it; a payload maker."""
    if harness == "claude-code":
        path = tmp_path / f"{test_hooks.SESSION}.jsonl"
        shutil.copy(test_hooks.FIXTURES / "transcript.jsonl", path)
        return path, test_hooks.payload
    if harness == "codex":
        path = tmp_path / f"rollout-2026-11-20T09-00-00-{test_codex.SESSION}.jsonl"
        shutil.copy(test_codex.FIXTURES / "rollout.jsonl", path)
        return path, test_codex.payload
    path = tmp_path / f"{test_cursor.CONVERSATION}.jsonl"
    shutil.copy(test_cursor.FIXTURES / "transcript.jsonl", path)
    return path, test_cursor.payload


def append(path: Path, harness: str, turns: list[tuple[str, str]], start: int) -> int:
    with path.open("a", encoding="utf-8") as f:
        for i, (role, text) in enumerate(turns):
            f.write(line(harness, role, text, start + i))
    return start + len(turns)


def found_anywhere(conn: psycopg.Connection, word: str) -> list[str]:
    """The tables of schema brain with a row whose text holds word."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'brain' AND c.relkind IN ('r', 'p')"
        ).fetchall()
    ]
    return [
        t
        for t in tables
        if conn.execute(
            f"SELECT EXISTS (SELECT FROM brain.{t} x WHERE x::text ILIKE %s)", (f"%{word}%",)
        ).fetchone()[0]
    ]


def hook(cli_env: dict[str, str], harness: str, event: str, data: bytes) -> None:
    # (BRAIN_HOOK_END_BY: the live session end stores its turns in batches, as it does in use)
    out, _ = run_hook({**cli_env, "BRAIN_HOOK_END_BY": "60"}, event, data, "--source", SOURCES[harness])
    print(event, out.stderr.decode().strip())
    assert out.returncode == 0 and b"hook:" not in out.stderr, out.stderr


@pytest.mark.parametrize("harness", ["claude-code", "codex", "cursor"])
def test_a_private_span_over_two_messages_is_never_stored(
    harness, cli_env, conn, admin, tmp_path, project_dir
) -> None:
    transcript, payload = setup(harness, tmp_path)
    hook(cli_env, harness, "session-start", payload("session-start", transcript, project_dir))
    # the opening message is the last of the capture's first batch (FIRST_TURNS turns); the
    # rest of the span comes in the next
    before = len(read_turns(transcript, SESSIONS[harness]))
    count = FIRST_TURNS - before - 1
    filler = [
        (("assistant", "user")[(count - 1 - i) % 2], f"Step {i} of the export fix is checked.")
        for i in range(count)
    ]
    n = append(transcript, harness, filler, 0)
    n = append(transcript, harness, [("user", OPEN)], n)
    assert len(read_turns(transcript, SESSIONS[harness])) == FIRST_TURNS
    # a first capture (Claude Code: a compaction; Codex and Cursor: a turn's stop) sees only
    # the opening message: its rest is hidden
    first = "pre-compact" if harness == "claude-code" else "session-end"
    hook(cli_env, harness, first, payload(first, transcript, project_dir))
    n = append(
        transcript,
        harness,
        [
            ("assistant", "Noted; I will not repeat it."),
            ("user", MIDDLE),
            ("assistant", "Go on."),
            ("user", CLOSE),
            ("assistant", "Good: the export job ran."),
            ("user", "Thanks. <private>wombat-reply-none"),
        ],
        n,
    )
    hook(cli_env, harness, "session-end", payload("session-end", transcript, project_dir))
    stored = [
        r[0]
        for r in conn.execute(
            "SELECT coalesce(nullif(body, ''), headline) FROM brain.memory WHERE source_system = %s",
            (harness,),
        ).fetchall()
    ]
    print(f"{harness}: {len(stored)} turns stored:", stored[-8:])
    assert "User: Deploy notes follow." in stored
    assert "User: and the export job is fine now." in stored, "what follows the closing tag is kept"
    assert "Assistant: Noted; I will not repeat it." in stored, "the other speaker's turn between is theirs"
    assert "User: Thanks." in stored
    assert "Assistant: Go on." in stored
    for word in HIDDEN:
        assert found_anywhere(admin, word) == [], word
    # the handoff quotes the last request without its private part
    handoffs = [
        r[0]
        for r in conn.execute(
            "SELECT handoff FROM brain.session UNION ALL SELECT text FROM brain.handoff"
        ).fetchall()
    ]
    assert any("Last request: Thanks." in (h or "") for h in handoffs), handoffs


def test_a_closing_tag_without_an_opener_hides_what_precedes_it(conn) -> None:
    def capturable(text: str) -> str:
        return conn.execute("SELECT brain.capturable_text(%s)", (text,)).fetchone()[0]

    assert capturable("second half </private> and fine") == "and fine"
    assert capturable("a </private> b <private>c</private> d") == "b d"
    assert capturable("keep <private>x</private> this") == "keep this"
    assert capturable("keep <private>to the end") == "keep"
    assert capturable("no tags at all") == "no tags at all"


def test_capturable_turns_carries_an_open_span_to_the_same_speakers_next_turn(conn) -> None:
    turns = [
        {"ref": "s/1", "role": "user", "text": "A <PRIVATE>hidden one"},
        {"ref": "s/2", "role": "assistant", "text": "Reply stays."},
        {"ref": "s/3", "role": "user", "text": "hidden two"},
        {"ref": "s/4", "role": "user", "text": "hidden three </private> shown"},
        {"ref": "s/5", "role": "user", "text": "shown again"},
        {"ref": "s/6", "role": "assistant", "text": "<private>reply hidden"},
        {"ref": "s/7", "role": "user", "text": "user shown"},
        {"ref": "s/8", "role": "assistant", "text": "still hidden</private>reply shown"},
    ]
    (out,) = conn.execute("SELECT brain.capturable_turns(%s)", (Jsonb(turns),)).fetchone()
    assert [t["text"] for t in out] == [
        "A",
        "Reply stays.",
        "",
        "shown",
        "shown again",
        "",
        "user shown",
        "reply shown",
    ]
    assert [t["ref"] for t in out] == [t["ref"] for t in turns]


def test_the_prompt_hook_never_searches_a_span_left_open_in_an_earlier_prompt(
    brain, tmp_path, monkeypatch
) -> None:
    """The person opened <private> in their last message: the next prompt is private up to
    its </private>. Neither the embedder nor the search gets that part."""
    import contextlib

    from pybrain import hooks

    inner = brain.embedder
    sent: list[str] = []

    class Recording:
        provider, model, dims, space = inner.provider, inner.model, inner.dims, inner.space

        def embed(self, texts: list[str]) -> list[list[float]]:
            sent.extend(texts)
            return inner.embed(texts)

        def embed_one(self, text: str) -> list[float]:
            return self.embed([text])[0]

    @contextlib.contextmanager
    def opened(options, *, start: bool):
        yield brain

    monkeypatch.setattr(hooks.base, "_brain", opened)
    monkeypatch.setattr(hooks.base, "_hook_embedder", lambda _brain, *, remote: Recording())
    brain.remember("fact", "The staging database listens on port 6543")
    transcript, _ = setup("claude-code", tmp_path)
    append(transcript, "claude-code", [("user", OPEN), ("assistant", "Noted.")], 0)
    ask = {"session_id": test_hooks.SESSION, "transcript_path": str(transcript)}
    assert hooks.prompt({**ask, "prompt": MIDDLE}, hooks.Options()) is None
    assert sent == []
    answer = hooks.prompt(
        {**ask, "prompt": f"{CLOSE} Which port does the staging database use?"}, hooks.Options()
    )
    assert answer is not None and "6543" in answer["hookSpecificOutput"]["additionalContext"]
    assert sent == ["and the export job is fine now. Which port does the staging database use?"]
    assert all(word not in " ".join(sent) for word in HIDDEN)
