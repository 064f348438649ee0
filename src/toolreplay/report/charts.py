"""The report's charts where people would rather look than read: pass rate per configuration,
the distribution of rounds and of tool calls per configuration (not only their averages), and
failure modes by configuration.

Each function returns the geometry of an inline SVG (numbers with fixed decimals, so the markup
is deterministic), drawn by ``templates/_charts.html.j2``: no script, every chart an
``role="img"`` with a ``<title>`` that says what it shows in words, every value also written
as text beside its mark. Counts come from every trial when the results have trials
(``results.trial_outcomes``), else from the episodes (trial 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from toolreplay.report.labels import FAILURE_MODES
from toolreplay.report.summary import mode_label, ordered_names, split_configuration_name
from toolreplay.results.format import Results

#: Row height and gap (px) shared by the charts; the width of a rate bar at 100 %.
ROW_H, GAP, RATE_W = 18, 6, 200

#: Side of a distribution or failure-mode cell (px).
CELL = 30


def _label_width(names: Sequence[str]) -> int:
    return max([len(n) for n in names] + [8]) * 7 + 12


def _host(name: str) -> str:
    return (split_configuration_name(name) or ("other", ""))[0]


def _outcomes(results: Results) -> tuple[list[tuple[str, int, int, list[str]]], str]:
    """(configuration, rounds, tool calls, failure modes) per trial (or per episode when the
    results have no trials), and the words for what was counted."""
    if results.trial_outcomes and (results.trials or 1) > 1:
        rows = [
            (o.configuration, o.rounds or 0, o.tool_calls or 0, list(o.failure_modes or []))
            for o in results.trial_outcomes
        ]
        return rows, f"over every trial ({results.trials} per episode)"
    rows = [(e.configuration, e.rounds, e.tool_calls, list(e.modes)) for e in results.episodes]
    return rows, "over the episodes"


def pass_rate_chart(results: Results) -> dict[str, Any] | None:
    """Pass rate per configuration: a bar of trial 1's rate and, with trials, one of the rate
    over every trial. ``{"width", "height", "label_x", "bar_x", "rows": [{"name", "host",
    "bars": [{"key", "label", "y", "w", "text_x", "text_y", "text"}]}], "title"}``; None
    without configurations."""
    configurations = list(results.configurations)
    if not configurations:
        return None
    over = {c.name: c for c in configurations if c.questions}
    with_trials = (results.trials or 1) > 1 and bool(over)
    label_w = _label_width([c.name for c in configurations])
    rows, y, words = [], 0, []
    for c in configurations:
        figures = [("t1", "trial 1", c.passed, c.total)]
        if with_trials and c.name in over:
            qs = over[c.name].questions or []
            figures.append(
                ("over", "over trials", sum(q.passes for q in qs), sum(q.trials for q in qs))
            )
        bars = []
        for key, label, passed, total in figures:
            rate = passed / total if total else 0.0
            w = RATE_W * rate
            text = f"{round(100 * rate)}% ({passed}/{total})"
            bars.append(
                {
                    "key": key,
                    "label": label,
                    "y": y,
                    "w": f"{w:.1f}",
                    "text_x": f"{label_w + w + 4:.1f}",
                    "text_y": f"{y + ROW_H * 0.72:.1f}",
                    "text": text,
                }
            )
            words.append(f"{c.name} {label} {text}")
            y += ROW_H + 2
        rows.append({"name": c.name, "host": _host(c.name), "y": bars[0]["text_y"], "bars": bars})
        y += GAP
    return {
        "width": label_w + RATE_W + 110,
        "height": max(y - GAP, 1),
        "label_x": label_w - 6,
        "bar_x": label_w,
        "full_w": RATE_W,
        "rows": rows,
        "legend": with_trials,
        "title": "Pass rate per configuration: " + "; ".join(words),
    }


def _grid(
    names: list[str], columns: list[str], counts: dict[tuple[str, str], int], title: str
) -> dict[str, Any]:
    label_w = _label_width(names)
    top = max(counts.values(), default=0)
    cells = []
    for i, name in enumerate(names):
        for j, col in enumerate(columns):
            n = counts.get((name, col), 0)
            # shade by share of the largest count: 0 leaves the cell blank
            level = 0 if n == 0 or top == 0 else 1 + min(3, int(4 * n / top - 1e-9))
            cells.append(
                {
                    "x": label_w + j * CELL,
                    "y": 16 + i * CELL,
                    "text_x": f"{label_w + j * CELL + CELL / 2:.1f}",
                    "text_y": f"{16 + i * CELL + CELL * 0.65:.1f}",
                    "n": n,
                    "level": level,
                }
            )
    return {
        "width": label_w + max(len(columns), 1) * CELL + 8,
        "height": 16 + len(names) * CELL + 2,
        "label_x": label_w - 6,
        "cell": CELL,
        "rows": [
            {"name": n, "text_y": f"{16 + i * CELL + CELL * 0.65:.1f}"} for i, n in enumerate(names)
        ],
        "columns": [
            {"label": c, "x": f"{label_w + j * CELL + CELL / 2:.1f}"} for j, c in enumerate(columns)
        ],
        "cells": cells,
        "title": title,
    }


def distribution_chart(results: Results, field: str) -> dict[str, Any] | None:
    """How many trials (or episodes) of each configuration made 0, 1, 2, … rounds
    (``field="rounds"``) or tool calls (``field="tool_calls"``): a grid of configurations ×
    values, each cell its count, shaded by it. Same shape as :func:`failure_mode_chart`
    plus ``"what"``; None without episodes."""
    rows, what = _outcomes(results)
    if not rows:
        return None
    names = [c.name for c in results.configurations]
    counts: Counter[tuple[str, str]] = Counter()
    values: set[int] = set()
    for row in rows:
        value = row[1] if field == "rounds" else row[2]
        values.add(value)
        counts[(row[0], str(value))] += 1
    columns = [str(v) for v in range(min(values), max(values) + 1)]
    label = "rounds" if field == "rounds" else "tool calls"
    words = "; ".join(
        f"{n}: " + ", ".join(f"{counts[(n, v)]}× {v}" for v in columns if counts[(n, v)])
        for n in names
    )
    chart = _grid(names, columns, dict(counts), f"Distribution of {label} {what}: {words}")
    return {**chart, "what": what, "label": label}


def failure_mode_chart(results: Results) -> dict[str, Any] | None:
    """Failure modes by configuration: a grid of configurations × modes (known modes first),
    each cell how many trials (or episodes) carried the mode. ``{"width", "height", "label_x",
    "cell", "rows", "columns", "cells": [{"x", "y", "text_x", "text_y", "n", "level"}],
    "title", "what", "modes"}``; None when no episode carries a mode."""
    rows, what = _outcomes(results)
    counts: Counter[tuple[str, str]] = Counter()
    for configuration, _, _, modes in rows:
        for mode in dict.fromkeys(modes):
            counts[(configuration, mode)] += 1
    if not counts:
        return None
    modes = ordered_names(sorted({m for _, m in counts}), FAILURE_MODES)
    names = [c.name for c in results.configurations]
    keys = [str(i + 1) for i in range(len(modes))]
    keyed = {(n, keys[modes.index(m)]): v for (n, m), v in counts.items()}
    words = "; ".join(
        f"{n}: "
        + ", ".join(f"{mode_label(m).lower()} ×{counts[(n, m)]}" for m in modes if counts[(n, m)])
        for n in names
        if any(counts[(n, m)] for m in modes)
    )
    chart = _grid(names, keys, keyed, f"Failure modes by configuration {what}: {words}")
    return {
        **chart,
        "what": what,
        "modes": [
            {"key": k, "label": mode_label(m), "mode": m} for k, m in zip(keys, modes, strict=True)
        ],
    }


def charts_view(results: Results) -> dict[str, Any]:
    """Every chart of this module: ``{"pass_rate", "rounds", "tool_calls", "failure_modes"}``
    (each None when it has nothing to show)."""
    return {
        "pass_rate": pass_rate_chart(results),
        "rounds": distribution_chart(results, "rounds"),
        "tool_calls": distribution_chart(results, "tool_calls"),
        "failure_modes": failure_mode_chart(results),
    }
