"""The report's first screen: a scorecard, one row per configuration, worst first.

Built from the verdict (:func:`toolreplay.report.summary.verdict_view`): each row gives trial
1's passed/total (the study's run) and, with several trials, the passes over every trial, a
pass-rate bar, and the failure reasons ranked by count (failure modes over trials, or trial 1's
on a one-trial set; unmet expectations, trial 1's); each reason links to the failure gallery's
group (``href``) and, with the script, to the episode table filtered to that configuration and
reason (``data-filter``: the script's ``#f:`` fragment, every trial's rows when counted over
trials). A badge says whether the baseline audit passed
and what it audited against. Every colour matches the number it paints: trial 1's figure by
trial 1's status, the over-trials figure by its own.

Deterministic: a function of the verdict only (ties keep the results' order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from toolreplay.report.reasons import UNMET
from toolreplay.report.summary import pass_status

#: Width of the pass-rate bar in the SVG (px); its height.
BAR_W, BAR_H = 120, 12


def filter_href(configuration: str, mode: str, every_trial: bool) -> str:
    """The fragment that opens the episode table filtered to ``configuration``'s failures
    carrying ``mode`` (``every_trial``: every trial's row, not only trial 1's), e.g.
    ``#f:fail=1&c=single%2Batomic&m=empty_answer&t=all``."""
    parts = ["fail=1", f"c={quote(configuration, safe='')}", f"m={quote(mode, safe='')}"]
    if every_trial:
        parts.append("t=all")
    return "#f:" + "&".join(parts)


def _rate(passed: int, total: int) -> float:
    return passed / total if total else 0.0


def _reasons(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    over = row["trials"] is not None
    reasons = []
    if row["unmet"]:
        reasons.append(
            {
                "mode": UNMET,
                "label": "unmet expectation",
                "count": row["unmet"],
                "scope": "trial 1" if over else "",
                "href": filter_href(row["name"], UNMET, every_trial=False),
                "gallery": f"#mode-{UNMET}",
            }
        )
    for m in row["modes"] or []:
        reasons.append(
            {
                "mode": m["mode"],
                "label": m["label"].lower(),
                "count": m["count"],
                "scope": "over trials" if over else "",
                "href": filter_href(row["name"], m["mode"], every_trial=over),
                "gallery": f"#mode-{m['mode']}",
            }
        )
    # most frequent first; equal counts keep the order above (unmet, then the known modes)
    return sorted(reasons, key=lambda r: -int(r["count"]))


def scorecard_view(verdict: Mapping[str, Any], eval_file: str | None = None) -> dict[str, Any]:
    """``{"rows", "trials", "audit"}``: ``rows`` one per configuration, worst first (lowest
    pass rate over trials, or in trial 1 on a one-trial set): ``{"name", "status", "trial1":
    {"passed", "total", "status"}, "over": {"passed", "total", "always", "questions",
    "status", "interval"} | None, "percent"`` (int, 0–100, of the figure the row is ranked by;
    ``interval``: pass@1's 95% interval as ``"45–99%"``, or None),
    ``"bar_w"`` (str, px of :data:`BAR_W`), ``"reasons"`` (ranked: ``{"mode", "label",
    "count", "scope", "href", "gallery"}``), ``"classified"}``; ``trials``: the verdict's
    over-all figures or None; ``audit``: None when no audit ran, else ``{"ok", "passed",
    "total", "not_applicable", "failed", "reference"}`` (``reference``: the eval file the
    baseline was checked against, or None)."""
    rows = []
    for r in [*verdict["failed"], *verdict["passed"]]:
        over = r["trials"]
        trial1 = {
            "passed": r["passed"],
            "total": r["total"],
            "status": pass_status(r["passed"], r["total"]),
        }
        ranked = (over["passed"], over["total"]) if over else (r["passed"], r["total"])
        rate = _rate(*ranked)
        rows.append(
            {
                "name": r["name"],
                "status": r["status"],
                "trial1": trial1,
                "over": None
                if over is None
                else {
                    "passed": over["passed"],
                    "total": over["total"],
                    "always": over["always"],
                    "questions": over["questions"],
                    "status": over["status"],
                    "interval": over.get("interval"),
                },
                "rate": rate,
                "percent": round(100 * rate),
                "bar_w": f"{BAR_W * rate:.1f}",
                "reasons": _reasons(r),
                "classified": r["modes"] is not None,
            }
        )
    order = {r["name"]: i for i, r in enumerate(rows)}
    rows.sort(key=lambda r: (r["rate"], order[r["name"]]))
    fidelity = verdict["fidelity"]
    audit = None if fidelity is None else {**fidelity, "reference": eval_file}
    return {"rows": rows, "trials": verdict["trials"], "audit": audit, "bar": BAR_W}
