"""UserPromptSubmit: the few memories the prompt brings up (brain.prompt_context)."""

from __future__ import annotations

import os
from typing import Any

from pybrain.hooks import base
from pybrain.hooks.base import (
    Options,
    _harness,
    _project,
    _string,
)


def prompt(payload: dict[str, Any], options: Options) -> dict[str, Any] | None:
    text = payload.get("prompt")
    if not isinstance(text, str):
        raise ValueError("the UserPromptSubmit input has no prompt")
    if not text.strip():
        return None
    session = _string(payload, "session_id")
    with base._brain(options, start=False) as brain:
        options = _project(options, brain, payload)
        # What may be searched for: the prompt without what the person marked <private>
        # (a span they left open in an earlier message included), which never reaches the
        # embedder either.
        text = _searchable(brain, payload, text)
        if not text:
            return None
        embedder = base._hook_embedder(brain, remote=False)
        vector = None
        if embedder is not None:
            from pybrain.errors import EmbedderError

            try:
                vector = embedder.embed_one(text)
            except EmbedderError:
                vector = None  # by words only
        context = brain.value(
            "prompt_context",
            prompt=text,
            query_embedding=vector,
            embedding_space=embedder.space if vector is not None else None,
            project=options.project or None,
            exclude_source_system=_harness(options)[0] if session else None,
            exclude_ref_prefix=f"{session}/" if session else None,
            token_budget=options.budget,
        )
    if not context["text"]:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context["text"]}}


# How much of the transcript's end the prompt hook reads for a <private> span its person left
# open in an earlier message.
PROMPT_TRANSCRIPT_BYTES = 256 * 1024


def _searchable(brain: Any, payload: dict[str, Any], prompt: str) -> str:
    """What of a prompt may be searched for and embedded: the last text of
    brain.capturable_turns over the person's turns at the transcript's end (its last
    PROMPT_TRANSCRIPT_BYTES) and the prompt, so that a <private> they left open hides this
    prompt up to its </private>; without a transcript, the prompt alone."""
    from psycopg.types.json import Jsonb

    from pybrain.errors import InputTooLarge
    from pybrain.hooks.transcript import Lines, read_turns

    path = _string(payload, "transcript_path")
    session = _string(payload, "session_id") or "prompt"
    turns: list[dict[str, Any]] = []
    if path:
        try:
            lines = Lines(os.path.expanduser(path), max_bytes=PROMPT_TRANSCRIPT_BYTES)
            turns = [t for t in read_turns(lines.path, session, lines) if t["role"] == "user"]
        except (OSError, InputTooLarge, ValueError):
            turns = []
    if turns and turns[-1]["text"] == prompt:
        turns = turns[:-1]  # the client wrote the prompt before the hook ran
    turns.append({"ref": f"{session}/prompt", "role": "user", "text": prompt})
    return str(brain.value("capturable_turns", turns=Jsonb(turns))[-1]["text"])
