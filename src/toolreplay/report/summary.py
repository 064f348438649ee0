"""Report sections at the top: header, verdict line, the grid, metrics and charts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolreplay.report.labels import FAILURE_MODES, HOSTS, METRICS, toolset_labels
from toolreplay.report.text import _number


def _header(results: Mapping[str, Any]) -> dict[str, Any]:
    prov = results["provenance"]
    return {
        "cassette_set": results["cassette_set"],
        "provenance": prov["provenance"],
        "stand_in": prov["provenance"] == "stand-in",
        "live": prov["provenance"] == "live",
        "model": prov["model"],
        "endpoint_host": prov["endpoint_host"],
        "recorded_on": prov.get("recorded_on") or "unknown",
        "today": prov.get("today") or "unknown",
        "judge": results.get("judge", "unknown"),
        "packages": [{"name": k, "version": v} for k, v in prov.get("packages", {}).items()],
        "episodes": len(results["episodes"]),
        "configurations": len(results["configurations"]),
    }


def _anchors(episodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """A stable, unique HTML id per episode: ``ep-<n>-<configuration>-<question id>``."""
    out = []
    for n, ep in enumerate(episodes, 1):
        slug = re.sub(r"[^a-z0-9]+", "-", f"{ep['configuration']}-{ep['question_id']}".lower())
        out.append(f"ep-{n}-{slug.strip('-')}")
    return out


def _mode_label(mode: str) -> str:
    return FAILURE_MODES.get(mode, mode.replace("_", " "))


def _mode_counts(episodes: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]] | None:
    """Per configuration, episodes carrying each failure mode (known modes first); None when
    no episode was classified."""
    if not any("failure_modes" in ep for ep in episodes):
        return None
    counts: dict[str, dict[str, int]] = {}
    for ep in episodes:
        per = counts.setdefault(ep["configuration"], {})
        for mode in dict.fromkeys(f["mode"] for f in ep.get("failure_modes", [])):
            per[mode] = per.get(mode, 0) + 1
    return {
        name: {m: per[m] for m in _ordered(sorted(per), FAILURE_MODES)}
        for name, per in counts.items()
    }


def _modes_of(name: str, modes: dict[str, dict[str, int]] | None) -> list[dict[str, Any]] | None:
    if modes is None:
        return None
    return [
        {"mode": m, "label": _mode_label(m), "count": n} for m, n in modes.get(name, {}).items()
    ]


def _verdict(
    configurations: Sequence[Mapping[str, Any]],
    modes: dict[str, dict[str, int]] | None,
    fidelity: Mapping[str, Any] | None,
    episodes: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The first-screen line: which configurations passed, which failed and why (failure
    modes), and the fidelity audit's score."""
    passed = [c for c in configurations if c["total"] and c["passed"] == c["total"]]
    failed = [
        {
            "name": c["name"],
            "passed": c["passed"],
            "total": c["total"],
            "status": _status(c["passed"], c["total"]),
            "modes": _modes_of(c["name"], modes),
        }
        for c in configurations
        if c["passed"] < c["total"]
    ]
    return {
        "passed": [{"name": c["name"], "passed": c["passed"], "total": c["total"]} for c in passed],
        "failed": failed,
        "episodes_passed": sum(1 for ep in episodes if ep["passed"]),
        "episodes": len(episodes),
        "classified": modes is not None,
        "fidelity": None
        if fidelity is None
        else {
            "passed": fidelity["checks_passed"],
            "total": len(fidelity["checks"]),
            "ok": bool(fidelity["checks"]) and fidelity["checks_passed"] == len(fidelity["checks"]),
            "failed": [c["title"] for c in fidelity["checks"] if not c["passed"]],
        },
    }


def _status(passed: int, total: int) -> str:
    """``all`` / ``none`` / ``partial`` (``empty`` when there is nothing to pass)."""
    if total == 0:
        return "empty"
    if passed == total:
        return "all"
    return "none" if passed == 0 else "partial"


def _split_name(name: str) -> tuple[str, str] | None:
    """``single+atomic`` → ``("single", "atomic")``; None for other names (e.g. ablations)."""
    match = re.fullmatch(r"([^+\s]+)\+([^+\-\s]+)", name)
    return (match.group(1), match.group(2)) if match else None


def _ordered(seen: Iterable[str], known: Iterable[str]) -> list[str]:
    seen = list(dict.fromkeys(seen))
    return [k for k in known if k in seen] + [s for s in seen if s not in known]


def _stop(configuration: str, reason: str) -> dict[str, str]:
    """A stop reason for display: ``{"reason", "label", "title"}``. The single host always
    stops after its one tool round, which the episode records as ``max_rounds``; that is its
    design, not a cap being hit, and the label says so."""
    host = (_split_name(configuration) or ("", ""))[0]
    if reason == "max_rounds" and host == "single":
        return {
            "reason": reason,
            "label": "stopped after its one tool round",
            "title": "stop reason max_rounds: the single host always stops after round 2 "
            "(one tool round and one answer request), by design; no cap was hit",
        }
    return {"reason": reason, "label": reason, "title": "stop reason"}


def _grid(
    configurations: Sequence[Mapping[str, Any]], modes: dict[str, dict[str, int]] | None = None
) -> dict[str, Any]:
    """Rows are hosts, columns toolsets, cells passed/total and failure-mode counts, like the
    study's table."""
    cells: dict[tuple[str, str], Mapping[str, Any]] = {}
    for c in configurations:
        parts = _split_name(c["name"])
        if parts:
            cells.setdefault(parts, c)
    hosts = _ordered((h for h, _ in cells), HOSTS)
    labels = toolset_labels()
    toolsets = _ordered((t for _, t in cells), labels)
    rows = []
    for host in hosts:
        row = []
        for toolset in toolsets:
            cell = cells.get((host, toolset))
            row.append(
                None
                if cell is None
                else {
                    "name": cell["name"],
                    "passed": cell["passed"],
                    "total": cell["total"],
                    "status": _status(cell["passed"], cell["total"]),
                    "modes": _modes_of(cell["name"], modes),
                }
            )
        rows.append({"host": host, "caption": HOSTS.get(host, ""), "cells": row})
    return {
        "columns": [{"toolset": t, "caption": labels.get(t, "")} for t in toolsets],
        "rows": rows,
    }


def _metrics(
    configurations: Sequence[Mapping[str, Any]], modes: dict[str, dict[str, int]] | None = None
) -> list[dict[str, Any]]:
    return [
        {
            "name": c["name"],
            "passed": c["passed"],
            "total": c["total"],
            "status": _status(c["passed"], c["total"]),
            "cells": [
                {"label": label, "value": _number(c[key], fmt)} for key, label, fmt in METRICS
            ],
            "stop_reasons": [
                {**_stop(c["name"], k), "count": v} for k, v in c.get("stop_reasons", {}).items()
            ],
            "modes": _modes_of(c["name"], modes),
        }
        for c in configurations
    ]


CHART_BAR_H = 18


CHART_GAP = 6


CHART_BAR_W = 150.0


CHART_VALUE_W = 64


def _charts(
    configurations: Sequence[Mapping[str, Any]], skip: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """One horizontal bar chart per metric (except ``skip``); geometry precomputed for the
    SVG (fixed decimals, so the markup is deterministic)."""
    label_w = max([len(c["name"]) for c in configurations] + [8]) * 7 + 10
    width = label_w + CHART_BAR_W + CHART_VALUE_W
    charts = []
    for key, label, fmt in METRICS:
        if key in skip:
            continue
        values = [float(c[key]) for c in configurations]
        top = max([*values, 0.0])
        bars = []
        for i, (c, v) in enumerate(zip(configurations, values, strict=True)):
            y = i * (CHART_BAR_H + CHART_GAP)
            w = CHART_BAR_W * v / top if top > 0 else 0.0
            bars.append(
                {
                    "name": c["name"],
                    "value": _number(c[key], fmt),
                    "y": y,
                    "text_y": f"{y + CHART_BAR_H * 0.72:.1f}",
                    "w": f"{w:.1f}",
                    "value_x": f"{label_w + w + 4:.1f}",
                    "host": (_split_name(c["name"]) or ("other", ""))[0],
                }
            )
        charts.append(
            {
                "key": key,
                "label": label,
                "width": f"{width:.0f}",
                "height": max(len(bars) * (CHART_BAR_H + CHART_GAP) - CHART_GAP, 1),
                "label_x": label_w - 6,
                "bar_x": label_w,
                "bar_h": CHART_BAR_H,
                "bars": bars,
            }
        )
    return charts
