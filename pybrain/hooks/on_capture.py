"""PreCompact and SessionEnd: the transcript's new turns stored through the gate, then the
session's handoff; what has no time left is stored by the background process or the next start."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from typing import Any, TextIO

from pybrain.hooks import base
from pybrain.hooks.base import (
    DEFAULT_TIMEOUT,
    Options,
    _describe,
    _end_by,
    _finish_later,
    _harness,
    _keep,
    _kept_waiting,
    _mark_transcript,
    _NoEmbedder,
    _outage,
    _project,
    _quick,
    _seat,
    _store_turns,
    _string,
)


def capture(payload: dict[str, Any], options: Options, event: str) -> None:
    """Observe the transcript's new turns, then end the session with a handoff written from them."""
    from pybrain.hooks.transcript import Lines, read_turns

    path = _string(payload, "transcript_path")
    session = _string(payload, "session_id") or (
        os.path.splitext(os.path.basename(path))[0] if path else None
    )
    turns: list[dict[str, Any]] = []
    missing = None
    lines = None
    if path and session:
        try:
            # (its last transcript.MAX_BYTES; a file that is not regular is refused, InputTooLarge)
            lines = Lines(os.path.expanduser(path))
            turns = read_turns(lines.path, session, lines)
        except FileNotFoundError:
            missing = path  # the session is ended with its handoff all the same
    detail = _string(payload, "trigger") or _string(payload, "reason")
    when = f"{event} ({detail})" if detail else event
    clock = time.perf_counter()
    # The live session-end hook has Claude Code's 1.5 s: it hands off first (from every
    # turn), then stores turns until END_BY and leaves the rest to the next session start.
    until = _end_by() if event == "session end" and options.at is None else None
    left = 0
    kept = ""
    with base._brain(options, start=True) as opened:
        write_kept_first(options)
        options = _project(options, opened, payload)
        embedder = base._hook_embedder(opened, remote=True) or _NoEmbedder()
        brain = opened.embedding_with(embedder)

        def hand_off() -> dict[str, Any]:
            return brain.hand_off_transcript(
                turns,
                when,
                options.source,
                project=options.project,
                cwd=_seat(payload),
                client=_harness(options)[1],
                transcript=session,
                compaction=event == "compaction",
                now=options.at,
            )

        rows: list[dict[str, Any]] = []
        if until is None:
            if turns:
                rows = brain.observe_transcript(
                    turns,
                    source_system=_harness(options)[0],
                    project=options.project,
                    source_agent=options.source,
                )
            ended = hand_off()
        else:
            ended = hand_off()
            # Embedded here with the hash embedder (in this process, a few ms); with any other,
            # stored queued (a model or a network round trip would not keep to the deadline),
            # and the background process embeds them.
            space = opened.active_space()
            inline = space is not None and space.provider == "hash"
            rows, left = _store_turns(brain, turns, options, until, embed=inline)
            queued = not inline and any(r["action"] == "created" for r in rows)
            marked = None
            if left and ended.get("session") and path and session:
                marked = brain.value(
                    "leave_capture", session=ended["session"], transcript=path, client_session=session
                )["capture_left"]
                if marked is not None:  # its next start reads the rest of this transcript
                    _mark_transcript(opened, options, session, path)
            if left and marked is None:
                # no session of its own to mark: its input is kept, for the background process
                # (below) or the next hook or command to write
                kept = f"{left} turns kept in {_keep('session-end', payload, options)}"
            if marked is not None:
                later = (
                    "in the background"
                    if _finish_later(options, _seat(payload))
                    else "by the next session start"
                )
                kept = f"{left} turns left to store {later}"
            elif (queued and base._hook_embedder(opened, remote=True) is not None) or _kept_waiting():
                _finish_later(options, _seat(payload))  # it embeds them, and writes what was kept
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["action"]] = counts.get(r["action"], 0) + 1
    summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "no new turns"
    if kept:
        summary = f"{summary}, {kept}"
    if missing:
        summary = f"no transcript at {missing}"
    elif lines is not None and lines.note():
        summary = f"{summary} (the transcript read in part: {lines.note()})"
    where = f"session #{ended['session']}" if ended.get("session") else "the next session"
    handed = (
        "nothing to hand off"
        if ended.get("handoff") is None
        else "the same handoff as before"
        if ended.get("unchanged")
        else f"handoff for {where}"
    )
    print(f"pybrain {event}: {summary}; {handed} ({time.perf_counter() - clock:.2f} s)", file=sys.stderr)


# The capture events, by the hook's name, as a handoff names them.
CAPTURED = {"pre-compact": "compaction", "session-end": "session end"}


def write_kept_first(options: Options) -> None:
    """What earlier capture hooks kept on disk, written once the database has answered, in
    at most half the hook's time: the hook's own work comes after (not at a live session
    end within Claude Code's 1.5 s: its background process writes them)."""
    if options.at is None and not _quick(options):
        from pybrain.config import Settings

        write_kept(Settings.from_env(), seconds=(options.timeout or 10.0) / 2)


def write_kept(settings: Any, err: TextIO | None = None, seconds: float | None = None) -> int:
    """Write the capture hooks' inputs kept in the spool of settings.home for its database,
    oldest first, through the same hooks (see pybrain.hooks.spool); the number written.
    Stops at the first outage, and begins no record after `seconds`."""
    from pybrain.hooks import spool

    def write(record: dict[str, Any]) -> None:
        event = record["event"]
        kept = record.get("options") or {}
        options = Options(
            source=kept.get("source") or "claude-code",
            # (None: the seat's repository, named when the record is written)
            project=kept["project"] if isinstance(kept.get("project"), str) else None,
            budget=kept.get("budget"),
            timeout=DEFAULT_TIMEOUT[event],
            event=event,
            at=datetime.fromisoformat(record["at"]),
        )
        seat = os.environ.pop("CLAUDE_PROJECT_DIR", None)  # the record's seat, not this process's
        try:
            capture(record["payload"], options, CAPTURED[event])
        except Exception as exc:
            if _outage(exc):
                raise spool.Outage(str(exc)) from exc
            raise RuntimeError(_describe(exc)) from exc
        finally:
            if seat is not None:
                os.environ["CLAUDE_PROJECT_DIR"] = seat

    return spool.drain(
        settings.home,
        write,
        lambda line: print(f"pybrain: {line}", file=err or sys.stderr),
        spool.target(settings.database_url, settings.workspace),
        None if seconds is None else time.monotonic() + seconds,
    )
