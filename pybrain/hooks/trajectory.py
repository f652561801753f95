"""A trajectory from a Claude Code transcript, without a model: the tool calls
between a prompt and the assistant turn that closed it.

The problem is the person's prompt, the steps are the assistant's tool calls in
order (a Bash call's description and command, an edit's file, a search's
pattern, ...), each with the first line of its result; a call whose result the
client marked as an error is a failed attempt. The outcome is the last text the
assistant wrote before the next prompt. Secrets are not looked for here: the
database replaces them (brain.record_trajectory with redact => true) before
anything is stored or embedded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pybrain.hooks.transcript import _CLIENT_MARKUP, _CLIENT_NOTICES, Lines, _mib

RESULT_CHARS = 300
TEXT_WORDS = {"problem": 150, "outcome": 200}
# The input field that says what a tool call did, per tool (the first present wins).
_COMMAND_FIELDS = ("command", "pattern", "query", "url", "prompt", "skill")
_FILE_FIELDS = ("file_path", "notebook_path", "path")


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text_of(blocks: list[dict[str, Any]]) -> str:
    return "\n\n".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        content = "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    text = str(content or "").strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:RESULT_CHARS]


def _is_prompt(entry: dict[str, Any], blocks: list[dict[str, Any]]) -> bool:
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isSidechain"):
        return False
    if entry.get("isCompactSummary") or any(b.get("type") == "tool_result" for b in blocks):
        return False
    text = _text_of(blocks).strip()
    return bool(text) and not text.startswith(_CLIENT_MARKUP) and text not in _CLIENT_NOTICES


def _step(use: dict[str, Any]) -> dict[str, Any]:
    name = str(use.get("name") or "tool")
    given = use.get("input") if isinstance(use.get("input"), dict) else {}
    step: dict[str, Any] = {"tool": name}
    if isinstance(given.get("description"), str) and given["description"].strip():
        step["action"] = given["description"].strip()
    command = next(
        (given[f] for f in _COMMAND_FIELDS if isinstance(given.get(f), str) and given[f].strip()), None
    )
    if command:
        step["command"] = command.strip()[:2000]
    files = [given[f] for f in _FILE_FIELDS if isinstance(given.get(f), str) and given[f].strip()]
    if files:
        step["files"] = files
    if "action" not in step and files:
        step["action"] = f"{name} {files[0]}"
    return step


def read_trajectory(path: str | Path, prompt: int | None = None) -> dict[str, Any] | None:
    """The trajectory of one prompt of a transcript (the prompt-th, from 1; by default the last
    prompt that led to tool calls): {problem, steps, outcome, source_ref, left_out}; None when it
    led to none. As the capture hooks, only the transcript's last MAX_BYTES are read (left_out
    says what was not, '' when nothing); the prompt-th of a transcript over that is refused
    (InputTooLarge): prompts are counted from the start, which is not read."""
    from pybrain.errors import InputTooLarge

    entries: list[dict[str, Any]] = []
    lines = Lines(path)
    for line in lines:
        try:
            entry = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") in ("user", "assistant"):
            entries.append(entry)
    if prompt is not None and lines.dropped:
        raise InputTooLarge(
            f"The transcript {path} is over the {_mib(lines.max_bytes)} read of a transcript, "
            "so its prompts cannot be counted from the start.",
            detail={"what": "transcript", "limit_bytes": lines.max_bytes, "size": lines.size},
            hint="Leave --prompt out: the last prompt that led to tool calls is taken from the part read.",
        )
    spans: list[dict[str, Any]] = []
    for entry in entries:
        blocks = _blocks(entry.get("message"))
        if _is_prompt(entry, blocks):
            spans.append(
                {
                    "problem": _text_of(blocks).strip(),
                    "uses": [],
                    "results": {},
                    "outcome": "",
                    "ref": f"{entry.get('sessionId', '')}/{entry.get('uuid', '')}",
                }
            )
            continue
        if not spans or entry.get("isSidechain"):
            continue
        span = spans[-1]
        for b in blocks:
            if entry["type"] == "assistant" and b.get("type") == "tool_use":
                span["uses"].append(b)
            elif b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                span["results"][b["tool_use_id"]] = b
        text = _text_of(blocks).strip() if entry["type"] == "assistant" else ""
        if text:
            span["outcome"] = text
    if prompt is None:
        with_calls = [s for s in spans if s["uses"]]
        span = with_calls[-1] if with_calls else None
    else:
        span = spans[prompt - 1] if 1 <= prompt <= len(spans) else None
    if span is None or not span["uses"]:
        return None
    steps = []
    for use in span["uses"]:
        step = _step(use)
        result = span["results"].get(use.get("id"))
        if result is not None:
            if _result_text(result):
                step["result"] = _result_text(result)
            step["failed"] = bool(result.get("is_error"))
        steps.append(step)
    return {
        "problem": _words(span["problem"], TEXT_WORDS["problem"]),
        "steps": steps,
        "outcome": _words(span["outcome"], TEXT_WORDS["outcome"]),
        "source_ref": span["ref"],
        "left_out": lines.note(),
    }
