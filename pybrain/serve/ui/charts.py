"""Charts drawn on the server as SVG geometry: no script, nothing inline for the CSP to allow.

Each function turns rows the database computed into coordinates the
templates draw (templates/_chart.html); nothing here decides about memories.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

WIDTH = 1000
HEIGHT = 200
PAD_LEFT = 48
PAD_RIGHT = 12
PAD_TOP = 12
PAD_BOTTOM = 24


@dataclass
class Chart:
    title: str
    unit: str
    y_max: float
    width: int = WIDTH
    height: int = HEIGHT
    lines: list[dict[str, Any]] = field(default_factory=list)  # {name, css, points}
    bars: list[dict[str, Any]] = field(default_factory=list)  # {x, y, w, h, css, label}
    rules: list[dict[str, Any]] = field(default_factory=list)  # {y, label, css}
    x_labels: list[dict[str, Any]] = field(default_factory=list)  # {x, text}
    legend: list[dict[str, str]] = field(default_factory=list)  # {name, css}
    empty: bool = False

    @property
    def plot(self) -> dict[str, float]:
        return {
            "left": PAD_LEFT,
            "right": self.width - PAD_RIGHT,
            "top": PAD_TOP,
            "bottom": self.height - PAD_BOTTOM,
        }

    def y_ticks(self) -> list[dict[str, Any]]:
        if self.empty:
            return []  # no scale for nothing (it read "0 ms", "0.5 ms", "1 ms" over an empty plot)
        p = self.plot
        return [
            {"y": p["bottom"] - (p["bottom"] - p["top"]) * f, "text": _number(self.y_max * f, self.unit)}
            for f in (0.0, 0.5, 1.0)
        ]


def _number(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value * 100:.0f}%"
    if value >= 100 or value == int(value):
        return f"{value:.0f}{unit}"
    if value >= 1:
        return f"{value:.1f}{unit}"
    return f"{value:.2g}{unit}"  # 0.25 ms, 0.005 ms: never rounded to 0


def _nice_max(value: float) -> float:
    """The smallest of 1, 2, 2.5 or 5 times a power of ten at or above value."""
    if value <= 0:
        return 1.0
    power = 10 ** (len(str(int(value))) - 1) if value >= 1 else 1.0
    if value < 1:
        while power / 10 >= value:
            power /= 10
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _x_labels(starts: list[datetime], x_of: Any) -> list[dict[str, Any]]:
    if not starts:
        return []
    picks = sorted({0, len(starts) // 2, len(starts) - 1})
    span = (starts[-1] - starts[0]).total_seconds() if len(starts) > 1 else 0
    fmt = "%H:%M" if span <= 36 * 3600 else "%b %d"
    anchors = {0: "start", len(starts) - 1: "end"}
    return [
        {"x": x_of(i), "text": starts[i].strftime(fmt), "anchor": anchors.get(i, "middle")} for i in picks
    ]


def series_chart(
    title: str, unit: str, rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]
) -> Chart:
    """Lines over time buckets (brain.metrics_series rows): columns are (column, legend name, css)."""
    values = [r[c] for r in rows for c, _, _ in columns if r[c] is not None]
    chart = Chart(title, unit, 1.0 if unit == "%" else _nice_max(max(values, default=0)))
    chart.empty = not values
    p = chart.plot
    n = max(len(rows), 1)
    step = (p["right"] - p["left"]) / max(n - 1, 1)

    def x_of(i: int) -> float:
        return round(p["left"] + step * i, 1)

    def y_of(v: float) -> float:
        return round(p["bottom"] - (p["bottom"] - p["top"]) * min(v / chart.y_max, 1.0), 1)

    for column, name, css in columns:
        points = " ".join(f"{x_of(i)},{y_of(r[column])}" for i, r in enumerate(rows) if r[column] is not None)
        chart.lines.append({"name": name, "css": css, "points": points})
        chart.legend.append({"name": name, "css": css})
    chart.x_labels = _x_labels([r["bucket_start"] for r in rows], x_of)
    return chart


def count_chart(title: str, rows: list[dict[str, Any]]) -> Chart:
    """Calls per bucket as bars, the failed part of each bar marked (brain.metrics_series rows)."""
    top = max((r["calls"] for r in rows), default=0)
    chart = Chart(title, "", _nice_max(top))
    chart.empty = top == 0
    p = chart.plot
    n = max(len(rows), 1)
    slot = (p["right"] - p["left"]) / n
    height = p["bottom"] - p["top"]
    for i, r in enumerate(rows):
        x = round(p["left"] + slot * i + slot * 0.1, 1)
        w = round(slot * 0.8, 1)
        ok_h = round(height * (r["calls"] - r["errors"]) / chart.y_max, 1)
        err_h = round(height * r["errors"] / chart.y_max, 1)
        when = r["bucket_start"].strftime("%b %d %H:%M")
        if ok_h:
            chart.bars.append(
                {
                    "x": x,
                    "y": p["bottom"] - ok_h,
                    "w": w,
                    "h": ok_h,
                    "css": "ok",
                    "label": f"{when}: {r['calls']} calls",
                }
            )
        if err_h:
            chart.bars.append(
                {
                    "x": x,
                    "y": p["bottom"] - ok_h - err_h,
                    "w": w,
                    "h": err_h,
                    "css": "err",
                    "label": f"{when}: {r['errors']} errors",
                }
            )
    chart.legend = [{"name": "calls", "css": "ok"}, {"name": "errors", "css": "err"}]
    chart.x_labels = _x_labels(
        [r["bucket_start"] for r in rows], lambda i: round(p["left"] + slot * (i + 0.5), 1)
    )
    return chart


def decay_chart(rows: list[dict[str, Any]], threshold: float) -> Chart:
    """Facts by decay score, lowest first (brain.decay_outlook rows), with the dormant threshold."""
    chart = Chart("Facts by decay score", "", 1.0)
    chart.empty = not rows
    p = chart.plot
    n = max(len(rows), 1)
    slot = (p["right"] - p["left"]) / n
    height = p["bottom"] - p["top"]
    for i, r in enumerate(rows):
        h = round(height * max(min(r["decay"], 1.0), 0.0), 1)
        css = "dormant" if r["dormant"] else "soon" if r["dormant_soon"] else "ok"
        chart.bars.append(
            {
                "x": round(p["left"] + slot * i + slot * 0.1, 1),
                "y": p["bottom"] - h,
                "w": max(round(slot * 0.8, 1), 0.5),
                "h": h,
                "css": css,
                "label": f"#{r['id']} {r['headline']}: {r['decay']:.2f}",
            }
        )
    chart.rules.append(
        {
            "y": round(p["bottom"] - height * threshold, 1),
            "label": f"dashed: dormant below {threshold:g}",
            "css": "threshold",
        }
    )
    chart.legend = [
        {"name": "dormant", "css": "dormant"},
        {"name": "dormant soon", "css": "soon"},
        {"name": "active", "css": "ok"},
    ]
    return chart
