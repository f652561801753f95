"""`brain hook EVENT`: memory from an agent client's hooks, without the agent deciding.

Claude Code runs a hook command at SessionStart, UserPromptSubmit, PreCompact
and SessionEnd with one JSON object on standard input (session_id,
transcript_path, cwd, hook_event_name, and per event source, prompt, trigger
or reason). Each event here is a thin shell over SQL:

- session-start: brain.boot_session; prints the boot payload as
  hookSpecificOutput.additionalContext.
- prompt: brain.prompt_context; prints the few memories the prompt brings up
  (nothing when none is relevant).
- pre-compact, session-end: the transcript's new turns through
  brain.observe_transcript (the gate redacts or refuses secrets), then a
  handoff from brain.transcript_handoff through brain.end_session_of.

A hook never blocks the session: whatever fails (no database, a deadline, bad
input) is one line on standard error, nothing on standard output, exit 0. A
database that has not accepted the connection CONNECT_BY seconds after the hook
started is given up; what pre-compact and session-end could not write is kept on disk
(pybrain.hooks.spool) and written by the next hook or command that reaches it.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TextIO

from pybrain.hooks.base import (  # noqa: F401  (names the CLI, the warm process and tests use)
    CAPTURE_EVENTS,
    CONTEXT_EVENTS,
    DEFAULT_TIMEOUT,
    EVENTS,
    FIRST_TURNS,
    HARNESSES,
    OUTPUT_CHARS,
    OUTPUT_TOKENS,
    Options,
    _deadline,
    _describe,
    _first_line,
    _fit,
    _from_cursor,
    _keep,
    _outage,
    _payload,
    _print,
    _told,
    _unavailable,
    read_input,
)
from pybrain.hooks.on_capture import capture, write_kept  # noqa: F401
from pybrain.hooks.on_prompt import prompt
from pybrain.hooks.on_start import session_start


def run(
    event: str, raw: bytes, options: Options, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run one hook: its JSON answer (if any) to `out`, a notice to `err` on failure. Always 0."""
    out = out or sys.stdout
    err = err or sys.stderr
    options = replace(options, timeout=options.timeout or DEFAULT_TIMEOUT[event], event=event)
    if event in CONTEXT_EVENTS and options.budget is not None:
        options = replace(options, budget=min(options.budget, OUTPUT_TOKENS))
    payload = None
    try:
        payload = _payload(raw)
        if options.source == "cursor":
            payload = _from_cursor(payload)
        with _deadline(options.timeout):
            answer = HANDLERS[event](payload, options)
    except Exception as exc:  # a hook never fails the session: it says why and exits 0
        kept = ""
        if payload is not None and event in CAPTURE_EVENTS and _outage(exc):
            try:
                kept = f"; its input is kept in {_keep(event, payload, options)} for the next hook or command"
            except Exception as failed:
                kept = f"; its input could not be kept ({type(failed).__name__}: {_first_line(str(failed))})"
        print(f"pybrain {event} hook: {_describe(exc)}{kept} (the session goes on without it)", file=err)
        if event in CONTEXT_EVENTS and _outage(exc):
            notice = _unavailable(event, exc, payload)
            if notice is not None:
                _print(out, notice, options.source)
        return 0
    if event in CONTEXT_EVENTS and payload is not None:
        _told(payload, forget=True)  # memory is back: a later outage is told again
    if answer is not None:
        _print(out, answer, options.source)
    return 0


HANDLERS = {
    "session-start": session_start,
    "prompt": prompt,
    "pre-compact": lambda payload, options: capture(payload, options, "compaction"),
    "session-end": lambda payload, options: capture(payload, options, "session end"),
}
