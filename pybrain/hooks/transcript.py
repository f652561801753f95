"""Session transcripts: the JSONL file a hook's `transcript_path` names, as Claude
Code writes it, or as Codex writes its session files (below).

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

Codex's session file (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`) has lines
`{"timestamp", "type", "payload"}`; the conversation is in the lines of type
"response_item" whose payload is a "message" of role "user" or "assistant",
its `content` a list of "input_text" / "output_text" blocks. Tool calls and
their output, reasoning, the "developer" role and the context Codex writes as
user messages itself (`<environment_context>`, `<user_instructions>`, the
AGENTS.md instructions) are left out. A Codex line has no id: a turn's ref is
`<session>/` and a digest of its timestamp, role and text, the same at every
capture.

What is read is bounded (docs/hooks.md, "The transcript"): only a regular file
(a FIFO or a device such as /dev/zero is refused unread, InputTooLarge), and of
it the last MAX_BYTES, from the first whole line, so a long session's latest
turns are the ones kept; a line longer than LINE_BYTES (an image or a large
tool result, never a typed turn) is skipped without being held in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

# The part of a transcript read: its last 64 MiB (a long session's JSONL, tool
# results included, is a few MiB to a few tens), and no line longer than 8 MiB.
MAX_BYTES = 64 * 1024 * 1024
LINE_BYTES = 8 * 1024 * 1024
_STEP = 1024 * 1024

# Markup Claude Code writes into user lines for slash commands and shell mode (`!`),
# and the notices it writes as user lines: not the person's words.
_CLIENT_MARKUP = ("<command-", "<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
_CLIENT_NOTICES = frozenset({"[Request interrupted by user]", "[Request interrupted by user for tool use]"})
# The model name of the replies the client writes itself (an API error, "No response requested.").
_SYNTHETIC = "<synthetic>"


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.3g} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"


def open_regular(path: str | Path, what: str, limit: int) -> tuple[BinaryIO, int]:
    """A regular file opened for reading, and its size. Anything else (a FIFO, a device,
    a socket) is refused before a byte is read, and a FIFO without a writer does not block."""
    from pybrain.errors import InputTooLarge

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputTooLarge(
                f"The {what} {path} is not a regular file: its size cannot be checked against "
                f"the limit of {_mib(limit)} before it is read, so it is not read.",
                detail={"what": what, "limit_bytes": limit},
                hint="Name the file itself (a FIFO or a device such as /dev/zero is refused).",
            )
        return os.fdopen(fd, "rb"), info.st_size
    except BaseException:
        os.close(fd)
        raise


class Lines:
    """The lines of the last `max_bytes` of a regular file (from its first whole line), each
    at most `line_bytes` long: a longer one is skipped unread. After iterating, `dropped`
    is the number of bytes left out at the start and `long_lines` the lines skipped."""

    def __init__(
        self,
        path: str | Path,
        what: str = "transcript",
        max_bytes: int | None = None,
        line_bytes: int | None = None,
    ) -> None:
        self.path, self.what = path, what
        self.max_bytes = max_bytes or MAX_BYTES
        self.line_bytes = line_bytes or LINE_BYTES
        self.dropped = 0
        self.long_lines = 0
        self.size = 0

    def __iter__(self) -> Iterator[str]:
        stream, self.size = open_regular(self.path, self.what, self.max_bytes)
        with stream:
            left = self.max_bytes
            if self.size > self.max_bytes:
                start = self.size - self.max_bytes
                stream.seek(start - 1)
                # the rest of the line the cut falls in (unless the cut is at a line's start)
                left -= self._skip_line(stream, self.max_bytes + 1) - 1
                self.dropped = stream.tell()
            while left > 0:
                line = stream.readline(min(self.line_bytes + 1, left))
                if not line:
                    break
                left -= len(line)
                if len(line) > self.line_bytes and not line.endswith(b"\n"):
                    self.long_lines += 1
                    left -= self._skip_line(stream, left)
                    continue
                yield line.decode("utf-8", errors="replace")

    @staticmethod
    def _skip_line(stream: BinaryIO, most: int) -> int:
        """Read through the end of the current line, a step at a time; the bytes read."""
        read = 0
        while read < most:
            part = stream.readline(min(_STEP, most - read))
            read += len(part)
            if not part or part.endswith(b"\n"):
                break
        return read

    def note(self) -> str:
        """What was left out, for a message ('' when nothing was)."""
        parts = []
        if self.dropped:
            parts.append(
                f"its first {_mib(self.dropped)} left out (only the last {_mib(self.max_bytes)} is read)"
            )
        if self.long_lines:
            parts.append(f"{self.long_lines} line(s) over {_mib(self.line_bytes)} skipped")
        return "; ".join(parts)


def read_turns(path: str | Path, session: str, lines: Lines | None = None) -> list[dict[str, Any]]:
    """The turns of a transcript, in order: {ref: "<session>/<uuid>", role, text, at}.

    Only the last MAX_BYTES are read (`lines`, a Lines of path, says what was left out).
    A line that is not JSON (the client may be writing the last one) is skipped.
    """
    turns: list[dict[str, Any]] = []
    seen: dict[str, int] = {}  # (Cursor) the turns of each digest so far
    for line in lines if lines is not None else Lines(path):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if "type" not in entry and "role" in entry:
            turn = _cursor_turn(entry, session, seen)
        elif entry.get("type") == "response_item":
            turn = _codex_turn(entry, session)
        else:
            turn = _turn(entry, session)
        if turn is not None:
            turns.append(turn)
    return turns


def copy_tail(source: str | Path, target: Path) -> None:
    """Copy what read_turns would read of source (its last MAX_BYTES, from a whole line)
    to target, a new file readable by its owner alone."""
    stream, size = open_regular(source, "transcript", MAX_BYTES)
    with stream:
        if size > MAX_BYTES:
            stream.seek(size - MAX_BYTES - 1)
            Lines._skip_line(stream, MAX_BYTES + 1)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as out:
            left = MAX_BYTES
            while left > 0:
                part = stream.read(min(_STEP, left))
                if not part:
                    break
                out.write(part)
                left -= len(part)


def _message_text(content: Any) -> str | None:
    """A message's text: a string as it is, or its text blocks joined (other blocks, such as
    tool calls, left out); None for anything else."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return None


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
    text = _message_text(message.get("content"))
    if text is None:
        return None
    role = entry["type"]
    if not text.strip() or (role == "user" and text.lstrip().startswith(_CLIENT_MARKUP)):
        return None
    if text.strip() in _CLIENT_NOTICES or message.get("model") == _SYNTHETIC:
        return None
    at = entry.get("timestamp")
    return {"ref": f"{session}/{uuid}", "role": role, "text": text, "at": at if isinstance(at, str) else None}


# What the hooks inject: not the person's words when a harness writes it as a user message.
INJECTED_OPEN = "<pybrain-context>"
# What Codex writes as user messages itself: not the person's words.
_CODEX_MARKUP = (
    "<pybrain-context>",
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<turn_aborted>",
)


def _codex_turn(entry: dict[str, Any], session: str) -> dict[str, Any] | None:
    item = entry.get("payload")
    if (
        not isinstance(item, dict)
        or item.get("type") != "message"
        or item.get("role") not in ("user", "assistant")
    ):
        return None
    content = item.get("content")
    if not isinstance(content, list):
        return None
    text = "\n\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in ("input_text", "output_text")
        and isinstance(block.get("text"), str)
    )
    role = item["role"]
    if not text.strip() or (role == "user" and text.lstrip().startswith(_CODEX_MARKUP)):
        return None
    at = entry.get("timestamp")
    at = at if isinstance(at, str) else None
    digest = hashlib.sha256(f"{at}\n{role}\n{text}".encode()).hexdigest()[:32]
    return {"ref": f"{session}/{digest}", "role": role, "text": text, "at": at}


# Cursor writes what the person typed inside <user_query>…</user_query>, beside the
# context it adds itself to user lines (<user_info>, <attached_files>, <system_reminder>, …,
# each a block of its own): the person's words are the query alone; a user line
# without one is the person's text with Cursor's blocks taken out.
_CURSOR_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_CURSOR_BLOCK = re.compile(
    r"<(user_info|attached_files|additional_data|system_reminder|open_and_recently_viewed_files"
    r"|manually_added_selection|cursor_commands|git_status|rules|agent_skills)>.*?</\1>\s*",
    re.S,
)


def _cursor_words(text: str) -> str:
    queries = _CURSOR_QUERY.findall(text)
    return "\n\n".join(queries) if queries else _CURSOR_BLOCK.sub("", text).strip()


def _cursor_turn(entry: dict[str, Any], session: str, seen: dict[str, int]) -> dict[str, Any] | None:
    role = entry.get("role")
    message = entry.get("message")
    if role not in ("user", "assistant") or not isinstance(message, dict):
        return None
    text = _message_text(message.get("content"))
    if text is None:
        return None
    if not text.strip() or (role == "user" and text.lstrip().startswith(INJECTED_OPEN)):
        return None
    # the ref: of the line as written, the same whatever markup a later version strips
    key = hashlib.sha256(f"{role}\n{text}".encode()).hexdigest()[:24]
    if role == "user":
        text = _cursor_words(text)
        if not text:
            return None
    seen[key] = seen.get(key, 0) + 1
    return {"ref": f"{session}/{key}-{seen[key]}", "role": role, "text": text, "at": None}
