"""Claude Code session transcripts: the JSONL file a hook's `transcript_path` names.

Each line is one JSON object. The lines that carry the conversation have
`type` "user" or "assistant", a `uuid`, a `timestamp` and a `message` whose
`content` is a string or a list of blocks ("text", "thinking", "tool_use",
"tool_result", ...). A turn here is the text a person typed or the text the
assistant wrote: tool calls, tool results and thinking are left out, and so are
lines the client injected itself (`isMeta`, `isCompactSummary`, a sub-agent's
`isSidechain`, `isApiErrorMessage` and other replies of the `<synthetic>` model,
the `<command-…>` / `<local-command-…>` markup of slash commands, the
`<bash-input>` / `<bash-stdout>` / `<bash-stderr>` of shell mode, and the
"[Request interrupted by user]" notices). Which turns are new, and what is
stored, the database decides (brain.observe_transcript).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Markup Claude Code writes into user lines for slash commands and shell mode (`!`),
# and the notices it writes as user lines: not the person's words.
_CLIENT_MARKUP = ("<command-", "<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
_CLIENT_NOTICES = frozenset({"[Request interrupted by user]", "[Request interrupted by user for tool use]"})
# The model name of the replies the client writes itself (an API error, "No response requested.").
_SYNTHETIC = "<synthetic>"


def read_turns(path: str | Path, session: str) -> list[dict[str, Any]]:
    """The turns of a transcript, in order: {ref: "<session>/<uuid>", role, text, at}.

    A line that is not JSON (the client may be writing the last one) is skipped.
    """
    turns: list[dict[str, Any]] = []
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            turn = _turn(entry, session)
            if turn is not None:
                turns.append(turn)
    return turns


def _turn(entry: Any, session: str) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    if (
        entry.get("isMeta")
        or entry.get("isSidechain")
        or entry.get("isCompactSummary")
        or entry.get("isApiErrorMessage")
    ):
        return None
    message = entry.get("message")
    uuid = entry.get("uuid")
    if not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
        return None
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    else:
        return None
    role = entry["type"]
    if not text.strip() or (role == "user" and text.lstrip().startswith(_CLIENT_MARKUP)):
        return None
    if text.strip() in _CLIENT_NOTICES or message.get("model") == _SYNTHETIC:
        return None
    at = entry.get("timestamp")
    return {"ref": f"{session}/{uuid}", "role": role, "text": text, "at": at if isinstance(at, str) else None}
