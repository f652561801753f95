"""Bounded input: a transcript, a hook's standard input and a single line have limits,
checked before they are read (docs/hooks.md, "The transcript"; docs/errors.md, BR030).

What the attacker tried, each in a process of its own with a memory cap and a deadline
(before these limits, /dev/zero as a transcript grew a hook to 22.8 GB):

- `/dev/zero` and a FIFO as a transcript, for the reader, the capture hook and
  `brain trajectory record --from-transcript`;
- `/dev/zero` as a hook's standard input;
- a transcript over the limit (the hooks keep its last part), and a line over the line limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_hooks import DOWN_URL

ROOT = Path(__file__).resolve().parent.parent
# A process that reads without bound meets this (or the deadline) instead of the machine's memory.
MEMORY_CAP = 1024 * 1024 * 1024
DEADLINE = 20


def _capped(
    script: str, args: list[str], stdin: object = subprocess.DEVNULL, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run a python script with args, its address space capped and a deadline: what got
    through is a MemoryError, a kill or a timeout, reported by the caller's assertion."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP}))\n" + script
    )
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "BRAIN_HOOK_SERVER": "off", **(env or {})}
    environ.pop("CLAUDE_PROJECT_DIR", None)
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            stdin=stdin,
            capture_output=True,
            env=environ,
            timeout=DEADLINE,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)}: still reading after {DEADLINE} s (no bound)")


def _brain(args: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    return _capped(
        "sys.argv = ['brain', *sys.argv[1:]]\nfrom pybrain.entry import main\nmain()\n", args, **kwargs
    )


READER = (
    "from pybrain.errors import InputTooLarge\n"
    "from pybrain.hooks.transcript import read_turns\n"
    "try:\n"
    "    print(len(read_turns(sys.argv[1], 's')))\n"
    "except InputTooLarge as exc:\n"
    "    print(exc.code, exc.message, exc.detail)\n"
)


def _reader(path: str) -> subprocess.CompletedProcess:
    return _capped(READER, [path])


def test_dev_zero_as_a_transcript_is_refused_unread() -> None:
    out = _reader("/dev/zero")
    print("tried: read_turns('/dev/zero'); got:", out.returncode, out.stdout[-300:], out.stderr[-300:])
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stdout.startswith(b"BR030"), out.stdout
    assert b"not a regular file" in out.stdout and b"64 MiB" in out.stdout


def test_a_fifo_as_a_transcript_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    out = _reader(str(fifo))
    print("tried: read_turns(a FIFO nobody writes); got:", out.returncode, out.stdout[-300:])
    assert out.returncode == 0 and out.stdout.startswith(b"BR030"), out.stderr.decode()[-2000:]


def test_the_capture_hook_refuses_dev_zero_and_keeps_nothing(tmp_path: Path) -> None:
    """The hook says why at once (not at its 45 s deadline) and keeps no record to replay."""
    home = tmp_path / "home"
    data = json.dumps(
        {"session_id": "s1", "transcript_path": "/dev/zero", "cwd": str(tmp_path), "reason": "other"}
    ).encode()
    (tmp_path / "in.json").write_bytes(data)
    with open(tmp_path / "in.json", "rb") as stdin:
        out = _brain(
            ["hook", "session-end"],
            stdin=stdin,
            env={"BRAIN_HOME": str(home), "BRAIN_DATABASE_URL": DOWN_URL},
        )
    print("tried: brain hook session-end with transcript_path /dev/zero; stderr:", out.stderr[-400:])
    assert out.returncode == 0
    assert b"BR030" in out.stderr, out.stderr
    assert list((home / "spool").glob("*.json")) == [], "a refused transcript is not kept for a replay"


def test_dev_zero_as_a_hooks_standard_input_is_refused() -> None:
    with open("/dev/zero", "rb") as zero:
        out = _brain(["hook", "session-end"], stdin=zero, env={"BRAIN_DATABASE_URL": DOWN_URL})
    print("tried: brain hook session-end < /dev/zero; stderr:", out.stderr[-400:])
    assert out.returncode == 0
    assert b"BR030" in out.stderr and b"8 MiB" in out.stderr, out.stderr


def test_trajectory_from_dev_zero_returns_with_br030() -> None:
    out = _brain(
        ["trajectory", "record", "--from-transcript", "/dev/zero"],
        env={"BRAIN_DATABASE_URL": DOWN_URL},
    )
    print(
        "tried: brain trajectory record --from-transcript /dev/zero; got:", out.returncode, out.stderr[-400:]
    )
    assert out.returncode == 1, out.stderr
    assert b"not a regular file" in out.stderr and b"limit of 64 MiB" in out.stderr


def _turn(uuid: str, text: str, role: str = "user") -> str:
    return json.dumps(
        {
            "type": role,
            "uuid": uuid,
            "timestamp": "2026-11-20T10:00:00Z",
            "message": {"role": role, "content": text},
        }
    )


def test_a_transcript_over_the_limit_keeps_its_last_part(tmp_path: Path, monkeypatch) -> None:
    from pybrain.hooks import transcript

    monkeypatch.setattr(transcript, "MAX_BYTES", 4096, raising=False)
    path = tmp_path / "t.jsonl"
    lines = [_turn(f"u{i:03d}", f"turn number {i} of a long session") for i in range(200)]
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 4096
    turns = transcript.read_turns(path, "s")
    refs = [t["ref"] for t in turns]
    print(f"tried: a {path.stat().st_size}-byte transcript with a 4096-byte limit; read {len(refs)} turns")
    assert refs, "nothing read"
    assert refs[-1] == "s/u199", "the latest turn is kept"
    assert "s/u000" not in refs, "the start is left out"
    assert sum(len(line) + 1 for line in lines[-len(refs) :]) <= 4096
    # the lines kept are whole: the first one read is a turn, not the tail of one
    assert refs == [f"s/u{i:03d}" for i in range(200 - len(refs), 200)]


def test_a_line_over_the_line_limit_is_skipped(tmp_path: Path, monkeypatch) -> None:
    from pybrain.hooks import transcript

    monkeypatch.setattr(transcript, "LINE_BYTES", 1000, raising=False)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([_turn("a", "before"), _turn("big", "x" * 50_000), _turn("b", "after")]) + "\n")
    lines = transcript.Lines(path)
    turns = transcript.read_turns(path, "s", lines)
    print("tried: a 50 kB line with a 1000-byte line limit; read", [t["ref"] for t in turns])
    assert [t["ref"] for t in turns] == ["s/a", "s/b"]
    assert lines.long_lines == 1 and "1 line(s) over" in lines.note()


def test_the_prompt_th_of_a_transcript_read_in_part_is_refused(tmp_path: Path, monkeypatch) -> None:
    from pybrain.errors import InputTooLarge
    from pybrain.hooks import trajectory, transcript

    monkeypatch.setattr(transcript, "MAX_BYTES", 2048)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(_turn(f"u{i}", f"prompt {i}") for i in range(100)) + "\n")
    with pytest.raises(InputTooLarge) as refused:
        trajectory.read_trajectory(path, prompt=1)
    assert refused.value.code == "BR030" and refused.value.detail["limit_bytes"] == 2048


def test_a_text_argument_from_dev_zero_is_refused() -> None:
    with open("/dev/zero", "rb") as zero:
        out = _brain(
            ["trajectory", "record", "--problem", "-", "--step", "ran it"],
            stdin=zero,
            env={"BRAIN_DATABASE_URL": DOWN_URL},
        )
    print("tried: brain trajectory record --problem - < /dev/zero; got:", out.returncode, out.stderr[-400:])
    assert out.returncode == 1
    assert b"over the 16 MiB" in out.stderr and b"limit_bytes=16777216" in out.stderr, out.stderr


def test_a_steps_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    from pybrain.cli import base

    big = tmp_path / "steps.json"
    with open(big, "wb") as out:
        out.truncate(base.STDIN_BYTES + 10)  # sparse: no disk written
    r = _brain(
        ["trajectory", "record", "--problem", "p", "--steps", str(big)], env={"BRAIN_DATABASE_URL": DOWN_URL}
    )
    print("tried: --steps with a file one byte over the limit; got:", r.returncode, r.stderr[-300:])
    assert r.returncode == 1 and b"16 MiB" in r.stderr + r.stdout
