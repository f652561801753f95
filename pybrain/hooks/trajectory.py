"""A trajectory from a Claude Code transcript or a Codex rollout file, without a model:
the tool calls between the prompt that started the work and the assistant turn that
closed it.

The problem is the person's prompt, the steps are the assistant's tool calls in
order (a Bash call's description and command, an edit's file and change, a
search's pattern, ...), each with its result; a call whose result the client
marked as an error is a failed attempt. The outcome is the last text the
assistant wrote before the next prompt. Which prompt started the work (a
confirmation such as "Good. Do that." goes on with the one before it) is the
database's to say (brain.trajectory_problem). Nothing is decided here about
what may be stored: the database removes what is marked <private> and replaces
secrets (brain.record_trajectory with redact => true), and keeps of each result
the lines that say what happened (brain.result_lines), before anything is
stored or embedded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pybrain.hooks.transcript import _CLIENT_MARKUP, _CLIENT_NOTICES, Lines, _codex_turn, _mib

# What is read of a tool result (its start and its end, when longer): the database keeps
# a few hundred characters of it (brain.result_lines).
RESULT_CHARS = 16000
# Of an edit, each side of the change; of a file written, its first line.
CHANGE_CHARS = 200
# The prompts before the one whose tool calls end the work that may have started it.
PROMPTS_BACK = 20
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
    if len(text) > RESULT_CHARS:
        half = RESULT_CHARS // 2
        text = f"{text[:half]}\n…\n{text[-half:]}"
    return text


def _clip(text: Any, chars: int = CHANGE_CHARS) -> str:
    text = str(text or "").strip()
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _change(name: str, given: dict[str, Any]) -> str | None:
    """What an edit changed, as a step's command: `old → new` (bounded), of a MultiEdit
    each change, of a Write the lines written and the first of them."""
    if isinstance(given.get("old_string"), str) or isinstance(given.get("new_string"), str):
        return f"{_clip(given.get('old_string'))} → {_clip(given.get('new_string'))}"
    edits = given.get("edits")
    if isinstance(edits, list) and edits:
        shown = [
            f"{_clip(e.get('old_string'), 120)} → {_clip(e.get('new_string'), 120)}"
            for e in edits[:3]
            if isinstance(e, dict)
        ]
        more = f" (+{len(edits) - 3} more edits)" if len(edits) > 3 else ""
        return "; ".join(shown) + more
    content = given.get("content") if name == "Write" else given.get("new_source")
    if isinstance(content, str):
        lines = content.splitlines()
        first = next((line for line in lines if line.strip()), "")
        return f"{len(lines)} line{'s' if len(lines) != 1 else ''}: {_clip(first, 120)}"
    return None


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
    if not command:
        command = _change(name, given)
    if command:
        step["command"] = command.strip()[:2000]
    files = [given[f] for f in _FILE_FIELDS if isinstance(given.get(f), str) and given[f].strip()]
    if files:
        step["files"] = files
    if "action" not in step and files:
        step["action"] = f"{name} {files[0]}"
    return step


@dataclass
class Work:
    """The prompts of a transcript read (spans: each prompt with the tool calls, results and
    last reply after it), and the one whose tool calls end the work (last, from 0)."""

    spans: list[dict[str, Any]]
    last: int
    left_out: str
    explicit: bool  # the prompt was named (--prompt): no going back from it
    harness: str = "claude-code"  # whose transcript: claude-code, or codex (a rollout file)

    @property
    def prompts(self) -> list[str]:
        """The prompts up to the last one, at most PROMPTS_BACK, in order."""
        return [s["problem"] for s in self.spans[self.back : self.last + 1]]

    @property
    def back(self) -> int:
        return max(0, self.last + 1 - PROMPTS_BACK)

    def trajectory(self, started: Callable[[Sequence[str]], int | None] | None = None) -> dict[str, Any]:
        """{problem, steps, outcome, source_system, source_ref, left_out}. Unless the prompt was named,
        `started` (brain.trajectory_problem) is given self.prompts and says which of them
        started the work (from 1; a confirmation goes on with the one before): the problem
        is that prompt and the steps are the tool calls from it on."""
        first = self.last
        if not self.explicit and started is not None:
            found = started(self.prompts)
            if found:
                first = self.back + found - 1
        work = self.spans[first : self.last + 1]
        results = {k: v for s in work for k, v in s["results"].items()}
        steps = []
        for use in (u for s in work for u in s["uses"]):
            step = _step(use)
            result = results.get(use.get("id"))
            if result is not None:
                if _result_text(result):
                    step["result"] = _result_text(result)
                step["failed"] = bool(result.get("is_error"))
            steps.append(step)
        return {
            "problem": _words(self.spans[first]["problem"], TEXT_WORDS["problem"]),
            "steps": steps,
            "outcome": _words(self.spans[self.last]["outcome"], TEXT_WORDS["outcome"]),
            "source_system": self.harness,
            "source_ref": self.spans[first]["ref"],
            "left_out": self.left_out,
        }


def _codex_command(given: dict[str, Any]) -> dict[str, Any]:
    """A Codex tool call's arguments with its command as one string: `bash -lc SCRIPT` is the
    script, another argument list its words joined."""
    command = given.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        shell = len(command) == 3 and command[1] in ("-lc", "-c")
        given = {**given, "command": command[2] if shell else " ".join(command)}
    return given


def _codex_patch(patch: str) -> dict[str, Any]:
    """An apply_patch call as a step's input: the files it touches and its first changed lines."""
    lines = patch.splitlines()
    files = [
        line.split(":", 1)[1].strip()
        for line in lines
        if line.startswith(("*** Update File:", "*** Add File:", "*** Delete File:"))
    ]
    changed = [line for line in lines if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))]
    out: dict[str, Any] = {"command": _clip("; ".join(changed[:3]) or patch)}
    if files:
        out["file_path"] = files[0]
    return out


def _codex_entry(entry: dict[str, Any], session: str) -> dict[str, Any] | None:
    """A Codex rollout line as the transcript entry it stands for (read_work reads those): a
    person's prompt or the assistant's text (what the capture hooks read, _codex_turn), a tool
    call (function_call, custom_tool_call such as apply_patch) or its output (exit code not
    0: failed). None for anything else (reasoning, events, the harness's own messages)."""
    item = entry.get("payload")
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "message":
        turn = _codex_turn(entry, session)
        if turn is None:
            return None
        sid, _, uuid = turn["ref"].partition("/")
        return {
            "type": turn["role"],
            "sessionId": sid,
            "uuid": uuid,
            "message": {"content": [{"type": "text", "text": turn["text"]}]},
        }
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        return None
    if kind in ("function_call", "custom_tool_call"):
        raw = item.get("arguments") if kind == "function_call" else item.get("input")
        try:
            given = json.loads(raw) if kind == "function_call" and isinstance(raw, str) else None
        except ValueError:
            given = None
        if isinstance(given, dict):
            given = _codex_command(given)
        elif isinstance(raw, str):
            given = _codex_patch(raw) if item.get("name") == "apply_patch" else {"command": raw}
        else:
            given = {}
        use = {"type": "tool_use", "id": call_id, "name": str(item.get("name") or "tool"), "input": given}
        return {"type": "assistant", "message": {"content": [use]}}
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        text, failed, parsed = json.dumps(output), False, output
        if isinstance(output, str):
            text = output
            try:
                parsed = json.loads(output)
            except ValueError:
                parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            code = (parsed.get("metadata") or {}).get("exit_code")
            text, failed = str(parsed["output"]), isinstance(code, int) and code != 0
        result = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": failed}
        return {"type": "user", "message": {"content": [result]}}
    return None


def read_work(path: str | Path, prompt: int | None = None) -> Work | None:
    """The work of one prompt of a transcript (the prompt-th, from 1; by default the last
    prompt that led to tool calls); None when it led to none. As the capture hooks, only the
    transcript's last MAX_BYTES are read (left_out says what was not, '' when nothing); the
    prompt-th of a transcript over that is refused (InputTooLarge): prompts are counted from
    the start, which is not read."""
    from pybrain.errors import InputTooLarge

    entries: list[dict[str, Any]] = []
    lines = Lines(path)
    codex_session, codex = "", False
    for line in lines:
        try:
            entry = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") in ("user", "assistant"):
            entries.append(entry)
        elif entry.get("type") == "session_meta" and isinstance(entry.get("payload"), dict):
            codex_session = str(entry["payload"].get("id") or "")
        elif entry.get("type") == "response_item":
            codex = True
            converted = _codex_entry(entry, codex_session)
            if converted is not None:
                entries.append(converted)
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
        last = max((i for i, s in enumerate(spans) if s["uses"]), default=None)
    else:
        last = prompt - 1 if 1 <= prompt <= len(spans) else None
    if last is None or not spans[last]["uses"]:
        return None
    harness = "codex" if codex else "claude-code"
    return Work(spans, last, lines.note(), explicit=prompt is not None, harness=harness)


def read_trajectory(
    path: str | Path,
    prompt: int | None = None,
    started: Callable[[Sequence[str]], int | None] | None = None,
) -> dict[str, Any] | None:
    """The trajectory of one prompt of a transcript (read_work, then Work.trajectory):
    {problem, steps, outcome, source_system, source_ref, left_out}; None when it led to no
    tool call."""
    work = read_work(path, prompt)
    return None if work is None else work.trajectory(started)
