"""What a capture hook could not write, kept on disk until the database is back.

When PreCompact or SessionEnd cannot reach the database (down, hung, not
migrated), `brain hook` keeps the hook's input in BRAIN_HOME/spool: one JSON
record per hook (the event, its options, the time it ran, its payload) and a
copy of the transcript it named, which Claude Code may delete before the
database is back. The next hook or `brain` command that reaches the database
runs each record through the same hook, in the order they were kept:
brain.observe_transcript skips the turns already stored (by source_ref), so a
record written twice stores nothing twice, and brain.end_session_of is given
the time the hook ran, so it ends the session that was live then, not one
booted since.

A record is claimed by renaming it (one writer at a time); it is removed once
written, put back when the database fails again, and moved to spool/failed
when the database refuses it (written again, it would be refused again). Each
try is counted in the record before it is made, so a record whose writing
fails, hangs or kills its process is tried TRIES times at most and then set
aside in spool/failed too: it never stands first in line for ever.

The folder and spool/failed are 0700 (made so when they existed before), and
records and transcript copies 0600, whatever the umask.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FAILED = "failed"
_CLAIM = ".claim-"
# How many times a record is tried before it is set aside in spool/failed.
TRIES = 2


def directory(home: Path) -> Path:
    return home / "spool"


def _private_folder(path: Path) -> None:
    """path, made if need be, and 0700 even when it existed before."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)


def _write_private(path: Path, text: str) -> None:
    """A new file (or one replaced whole) of text, 0600 whatever the umask."""
    partial = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            fd = -1
            out.write(text)
    finally:
        if fd >= 0:
            os.close(fd)
    os.replace(partial, path)  # whole or absent


def target(database_url: str | None, workspace: int | None) -> str:
    """Which memory a record is for (the database and workspace, not the password): a
    command set up for another database leaves it for one that reaches this one."""
    import hashlib

    where = "embedded"
    if database_url:
        from psycopg.conninfo import conninfo_to_dict

        try:
            params = conninfo_to_dict(database_url)
        except Exception:  # an unparsable URL: its text stands for it
            params = {"url": database_url}
        params.pop("password", None)
        where = json.dumps(params, sort_keys=True)
    return hashlib.sha256(f"{where}|{workspace or ''}".encode()).hexdigest()[:16]


def keep(
    home: Path, event: str, payload: dict[str, Any], options: dict[str, Any], seat: str, target: str
) -> Path:
    """Keep one capture hook's input; returns the record's path."""
    from pybrain.hooks.transcript import copy_tail

    spool = directory(home)
    _private_folder(spool)
    now = datetime.now(UTC)
    name = f"{now:%Y%m%dT%H%M%S%f}-{os.getpid()}-{event}"
    payload = {**payload, "cwd": seat}
    source = payload.get("transcript_path")
    if isinstance(source, str) and source.strip():
        original = Path(source).expanduser()
        if original.is_file():
            copies = spool / name
            _private_folder(copies)
            copy = copies / original.name  # the file's name is the session's when the payload has none
            # what the hook reads of it: its last transcript.MAX_BYTES
            copy_tail(original, copy)
            payload["transcript_path"] = str(copy)
    record = {"event": event, "at": now.isoformat(), "target": target, "options": options, "payload": payload}
    path = spool / f"{name}.json"
    _write_private(path, json.dumps(record, ensure_ascii=False))
    return path


def pending(home: Path) -> list[Path]:
    """The records waiting, oldest first (none: the directory is absent, which costs one stat)."""
    try:
        names = os.listdir(directory(home))
    except FileNotFoundError:
        return []
    return [directory(home) / n for n in sorted(names) if n.endswith(".json") and not n.startswith(".")]


def waiting(home: Path) -> bool:
    """Whether any record waits, one a writer holds included (none: one stat, the directory is absent)."""
    try:
        names = os.listdir(directory(home))
    except FileNotFoundError:
        return False
    return any(n.endswith(".json") or _CLAIM in n for n in names if not n.startswith("."))


def set_aside(home: Path) -> list[Path]:
    """The records set aside in spool/failed (refused, or tried TRIES times), oldest first."""
    try:
        names = os.listdir(directory(home) / FAILED)
    except FileNotFoundError:
        return []
    return [directory(home) / FAILED / n for n in sorted(names) if n.endswith(".json")]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _release_abandoned(home: Path) -> None:
    """Put back records claimed by a process that died before it wrote them."""
    try:
        names = os.listdir(directory(home))
    except FileNotFoundError:
        return
    for name in names:
        base, sep, pid = name.rpartition(_CLAIM)
        if sep and pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.replace(directory(home) / name, directory(home) / base)


def _remove(record: Path) -> None:
    copies = record.with_suffix("")
    shutil.rmtree(copies, ignore_errors=True)


def _set_aside(home: Path, claimed: Path, record: Path) -> Path:
    """Move a claimed record, and its transcript copy, to spool/failed; where it went."""
    failed = directory(home) / FAILED
    _private_folder(failed)
    os.replace(claimed, failed / record.name)
    copies = record.with_suffix("")
    if copies.exists():
        os.replace(copies, failed / copies.name)
    return failed / record.name


class Outage(Exception):
    """Writing a record failed because the database is not there (it stays for later)."""


def drain(
    home: Path,
    write: Callable[[dict[str, Any]], None],
    notice: Callable[[str], None],
    target: str,
    until: float | None = None,
) -> int:
    """Write every record waiting for target: write(record) raises Outage when the database
    is not there (the record and the rest stay), any other exception when it refuses the
    record (set aside in spool/failed). until: a time.monotonic() after which no record is
    begun (the rest wait for the next writer). Returns how many were written."""
    if not waiting(home):
        return 0
    _release_abandoned(home)
    done = 0
    for record in pending(home):
        if until is not None and time.monotonic() > until:
            break
        claimed = record.with_name(f"{record.name}{_CLAIM}{os.getpid()}")
        try:
            os.replace(record, claimed)
        except FileNotFoundError:
            continue  # another process took it
        try:
            data = json.loads(claimed.read_text(encoding="utf-8"))
            if data.get("target") != target:
                os.replace(claimed, record)  # another database's
                continue
            tries = data.get("tries") if isinstance(data.get("tries"), int) else 0
            if tries >= TRIES:
                where = _set_aside(home, claimed, record)
                notice(
                    f"a kept capture was tried {tries} times without being written "
                    f"and is set aside in {where}"
                )
                continue
            # counted before it is tried: a try that kills this process counts too
            _write_private(claimed, json.dumps({**data, "tries": tries + 1}, ensure_ascii=False))
            write(data)
        except Outage:
            os.replace(claimed, record)
            break
        except BaseException as exc:
            if not isinstance(exc, Exception):  # interrupted: the record stays for the next one
                os.replace(claimed, record)
                raise
            where = _set_aside(home, claimed, record)
            notice(f"a kept capture was refused and set aside in {where}: {exc}")
            continue
        claimed.unlink()
        _remove(record)
        done += 1
    return done
