"""The background worker's requests (pybrain.hooks.finish): a file for each seat that
asks, under BRAIN_HOME/run/finish-TARGET/, and the lock of the one worker that takes them.
The hooks leave requests here and the worker reads them; neither imports the other."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LOCK = "worker.lock"


def folder(home: Path, target: str) -> Path:
    return home / "run" / f"finish-{target}"


def ask(home: Path, target: str, wanted: dict[str, Any]) -> Path:
    """Leave a request for the worker (the same seat asked twice is one request)."""
    where = folder(home, target)
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:16]
    path = where / f"{name}.json"
    partial = where / f".{name}.{os.getpid()}"
    partial.write_text(json.dumps(wanted), encoding="utf-8")
    os.replace(partial, path)
    return path


def requests(home: Path, target: str) -> list[Path]:
    try:
        names = sorted(os.listdir(folder(home, target)))
    except FileNotFoundError:
        return []
    return [folder(home, target) / n for n in names if n.endswith(".json") and not n.startswith(".")]


@contextlib.contextmanager
def worker_lock(home: Path, target: str) -> Iterator[bool]:
    """The worker's lock of a home and database, taken without waiting: True when this
    process holds it (the kernel lets it go when the process ends, killed or not)."""
    import fcntl

    where = folder(home, target)
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(where / LOCK, "ab") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def working(home: Path, target: str) -> bool:
    """Whether a worker holds the lock now."""
    with worker_lock(home, target) as held:
        return not held
