"""Small helpers: progress on stderr, percentiles, timers."""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

_START = time.perf_counter()


def log(message: str) -> None:
    """A progress line on stderr, stamped with the time since the run started."""
    elapsed = time.perf_counter() - _START
    print(f"[{int(elapsed // 60):2d}:{elapsed % 60:04.1f}] {message}", file=sys.stderr, flush=True)


def elapsed_total() -> float:
    return time.perf_counter() - _START


def percentile(values: Iterable[float], p: float) -> float | None:
    """The p-th percentile (0-100), linear interpolation between closest ranks."""
    data = sorted(values)
    if not data:
        return None
    if len(data) == 1:
        return data[0]
    rank = (len(data) - 1) * p / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return data[low] + (data[high] - data[low]) * (rank - low)


def summary(values: list[float], digits: int = 3) -> dict[str, float | int | None]:
    """n, p50, p95, p99, mean and max of latencies in milliseconds."""
    if not values:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "mean": None, "max": None}

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, digits)

    return {
        "n": len(values),
        "p50": r(percentile(values, 50)),
        "p95": r(percentile(values, 95)),
        "p99": r(percentile(values, 99)),
        "mean": r(statistics.fmean(values)),
        "max": r(max(values)),
    }


@contextmanager
def timed() -> Iterator[list[float]]:
    """with timed() as t: ...; t[0] is the elapsed seconds afterwards."""
    box = [0.0]
    start = time.perf_counter()
    try:
        yield box
    finally:
        box[0] = time.perf_counter() - start


def batched(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def show_settings(conn: Any, *names: str) -> dict[str, str]:
    """The server's settings by name, as SHOW gives them."""
    return {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in names}
