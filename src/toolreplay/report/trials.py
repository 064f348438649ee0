"""The report's "Consistency over trials" section: a view model for ``templates/trials.html.j2``.

Reads the trial fields of the typed results (``results.trials``, each configuration's
``pass_at_k``/``pass_hat_k``/``rounds_over_trials``/``tool_calls_over_trials``/
``failure_mode_rates``/``questions``, ``results.selection``) and lays out a small inline SVG
line chart of pass^k against k, one line per configuration. Results without trial fields give
None (the section is then left out). Deterministic: a function of the results only.
"""

from __future__ import annotations

from typing import Any

from toolreplay.report.summary import trial_range
from toolreplay.results.format import ConfigurationSummary, Results, Selection, SpreadRecord

#: Line colours per configuration, in results order (presentation attributes, not CSS).
COLOURS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b")


#: Dash pattern per line (after the single host's own dashes) and stroke widths: lines drawn
#: first are wider, so lines that coincide (two configurations at 1.0 for every k) show as
#: nested bands instead of one hiding the other.
DASHES = ("", "7 3", "2 2", "9 3 2 3", "4 4", "1 3")
WIDTHS = (7.0, 5.0, 3.0, 1.5)


WIDTH, HEIGHT = 420, 220


LEFT, RIGHT, TOP, BOTTOM = 44, 150, 14, 34


def _fmt(value: float) -> str:
    return f"{value:.2f}"


def _chart(configurations: list[ConfigurationSummary], n: int) -> dict[str, Any]:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(k: int) -> float:
        return round(LEFT + (plot_w * (k - 1) / (n - 1) if n > 1 else plot_w / 2), 1)

    def y(v: float) -> float:
        return round(TOP + plot_h * (1 - v), 1)

    lines = []
    for i, c in enumerate(configurations):
        curve = {int(k): float(v) for k, v in (c.pass_hat_k or {}).items()}
        points = [(x(k), y(curve[k])) for k in sorted(curve)]
        lines.append(
            {
                "name": c.name,
                "colour": COLOURS[i % len(COLOURS)],
                "dash": DASHES[i % len(DASHES)],
                "width": WIDTHS[min(i, len(WIDTHS) - 1)],
                "points": " ".join(f"{px},{py}" for px, py in points),
                "dots": [{"x": px, "y": py} for px, py in points],
                "legend_y": TOP + 8 + 16 * i,
            }
        )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "x0": LEFT,
        "x1": LEFT + plot_w,
        "y0": TOP,
        "y1": TOP + plot_h,
        "ticks_x": [{"k": k, "x": x(k)} for k in range(1, n + 1)],
        "ticks_y": [{"label": f"{v:.2f}", "y": y(v)} for v in (0.0, 0.25, 0.5, 0.75, 1.0)],
        "label_x": round(LEFT + plot_w / 2, 1),
        "label_y": HEIGHT - 4,
        "legend_x": LEFT + plot_w + 14,
        "lines": lines,
    }


def _mean_sd(spread: SpreadRecord | None) -> str:
    mean, sd = (0.0, 0.0) if spread is None else (spread.mean, spread.sd)
    return f"{mean:.2f} ± {sd:.2f}"


def _interval(c: ConfigurationSummary, k: int) -> str | None:
    """pass^k's 95% interval as ``"0.45–0.99"`` (None in results without one)."""
    i = (c.pass_hat_k_interval or {}).get(str(k))
    return None if i is None else f"{_fmt(i.low)}–{_fmt(i.high)}"


def trials_view(results: Results) -> dict[str, Any] | None:
    """``{"trials", "uniform", "text", "selection", "rows", "questions", "chart", "ks"}`` or
    None. ``trials`` is the most trials a configuration × question has; ``uniform`` whether
    every one has that many, ``text`` the count as worded (``"3"``, or ``"1–3"`` when not)."""
    configurations = [c for c in results.configurations if c.pass_hat_k is not None]
    if not configurations:
        return None
    n = results.trials or max(c.trials or 1 for c in configurations)
    ks = list(range(1, n + 1))
    rows = []
    for c in configurations:
        hat, at = c.pass_hat_k or {}, c.pass_at_k or {}
        rows.append(
            {
                "name": c.name,
                "pass_hat_k": [_fmt(hat[str(k)]) if str(k) in hat else "–" for k in ks],
                "pass_at_k": [_fmt(at[str(k)]) if str(k) in at else "–" for k in ks],
                "intervals": [_interval(c, k) for k in ks],
                "rounds": _mean_sd(c.rounds_over_trials),
                "tool_calls": _mean_sd(c.tool_calls_over_trials),
                "rates": [
                    {"mode": m, "rate": f"{r:.0%}"}
                    for m, r in (c.failure_mode_rates or {}).items()
                ],
            }
        )
    qids: dict[str, None] = {}  # in the order first met
    cells: dict[tuple[str, str], str] = {}
    for c in configurations:
        for q in c.questions or []:
            qids.setdefault(q.question_id)
            cells[(q.question_id, c.name)] = f"{q.passes}/{q.trials}"
    questions = [
        {"id": qid, "cells": [cells.get((qid, c.name), "–") for c in configurations]}
        for qid in qids
    ]
    sel = results.selection or Selection.model_validate({})
    low, high = trial_range(results)
    return {
        "trials": n,
        "uniform": low == high == n,
        "text": str(n) if low == high == n else f"{low}–{max(high, n)}",
        "ks": ks,
        "names": [c.name for c in configurations],
        "rows": rows,
        "questions": questions,
        "chart": _chart(configurations, n),
        "stand_in": results.provenance.provenance == "stand-in",
        "selection": {
            "eval_file": sel.eval_file or "",
            "configurations": ", ".join(sel.configurations or []),
            "questions": ", ".join(sel.questions or []),
            "all_configurations": sel.all_configurations is not False,
            "all_questions": sel.all_questions is not False,
        },
    }
