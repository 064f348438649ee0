"""Report sections at the top: header, verdict line, the grid, metrics and charts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolreplay.report.labels import FAILURE_MODES, HOSTS, METRICS, SOURCES, toolset_labels
from toolreplay.report.reasons import UNMET, UNMET_LABEL
from toolreplay.report.text import format_number
from toolreplay.results.format import (
    ConfigurationSummary,
    Endpoint,
    EpisodeResult,
    Provenance,
    Results,
)


def _endpoint(e: Endpoint) -> dict[str, Any]:
    return {
        "name": e.name.removesuffix("_url") if e.role == "tool" else e.name,
        "url": e.url,
        "host": e.host,
        "loopback": e.loopback,
        "source": e.source,
        "label": SOURCES.get(e.source, e.source),
    }


def _endpoints(prov: Provenance) -> dict[str, Any] | None:
    """What answered at each endpoint (``provenance.endpoints``): ``{"model": endpoint | None,
    "tools": [endpoint], "tools_source": "live" | "fixture-server" | "stand-in" | "mixed" |
    None}``; None for results that do not record it."""
    found = prov.endpoints
    if not found:
        return None
    model = next((_endpoint(e) for e in found if e.role == "model"), None)
    tools = [_endpoint(e) for e in found if e.role == "tool"]
    sources = {t["source"] for t in tools}
    source = (sources.pop() if len(sources) == 1 else "mixed") if tools else None
    return {
        "model": model,
        "tools": tools,
        "tools_source": source,
        "tools_label": SOURCES.get(source or "", "several sources") if source else None,
    }


def header_view(results: Results) -> dict[str, Any]:
    """The page's heading facts; among them ``streamed`` (the set's replies were streamed)
    and ``streamed_some``: ``{"count", "total"}`` of the episodes kept whole (every trial's
    records) whose replies were streamed, when some but not the whole set were (else None)."""
    prov = results.provenance
    endpoints = _endpoints(prov)
    model = endpoints["model"] if endpoints else None
    kept = [*results.episodes, *(results.trial_episodes or [])]
    some = sum(1 for e in kept if e.streamed is True)
    return {
        "cassette_set": results.cassette_set,
        "provenance": prov.provenance,
        "stand_in": prov.provenance == "stand-in",
        "live": prov.provenance == "live",
        "pytest": prov.provenance == "pytest",
        "streamed": prov.streamed is True,
        "streamed_some": {"count": some, "total": len(kept)}
        if some and prov.streamed is not True
        else None,
        "model": prov.model,
        "endpoint_host": prov.endpoint_host,
        "endpoints": endpoints,
        # a set that names several hosts (a suite testing several providers) is not said to
        # be on loopback: the endpoint read is the first model URL's alone
        "model_on_loopback": model is not None
        and model["loopback"]
        and "," not in prov.endpoint_host,
        "recorded_on": prov.recorded_on or "unknown",
        "today": prov.today or "unknown",
        "judge": "unknown" if results.judge is None else results.judge,
        "packages": [{"name": k, "version": v} for k, v in (prov.packages or {}).items()],
        "episodes": len(results.episodes),
        "configurations": len(results.configurations),
        "trials": trial_count_of(results),
        # "3" when every configuration × question has 3 trials, else "1–3": the wording of a
        # set whose questions were recorded a different number of times
        "trials_text": trials_text(results),
        "trials_uniform": trial_range(results)[0] == trial_range(results)[1],
    }


def without_empty(results: Results) -> tuple[Results, list[str]]:
    """``results`` without the configurations no episode was read for (a test module whose
    cassettes all failed to be read), and their names. The report leaves them out of its
    tables and charts, where a 0/0 row would read as a result, and names them instead."""
    empty = [c.name for c in results.configurations if c.total == 0]
    if not empty:
        return results, []
    kept = [c for c in results.configurations if c.total > 0]
    return results.model_copy(update={"configurations": kept}), empty


def trial_count_of(results: Results) -> int:
    """Trials per episode (1 for results without trial fields); the most any question has."""
    return max(results.trials or 1, 1)


def question_trials(results: Results) -> dict[tuple[str, str], int]:
    """Trials each configuration × question has, from the configurations' ``questions``, else
    counted from ``trial_outcomes``; empty for results without trial fields."""
    out = {
        (c.name, q.question_id): q.trials for c in results.configurations for q in c.questions or []
    }
    if not out:
        for o in results.trial_outcomes or []:
            key = (o.configuration, o.question_id)
            out[key] = out.get(key, 0) + 1
    return out


def trial_range(results: Results) -> tuple[int, int]:
    """Fewest and most trials of a configuration × question. A suite's cassette may hold one
    conversation twice and another once, so the counts need not agree: the report says "each
    recorded N times" only when they do."""
    most = trial_count_of(results)
    counts = [n for n in question_trials(results).values() if n > 0]
    return (min(counts), max(max(counts), most)) if counts else (most, most)


def trials_text(results: Results) -> str:
    """The trial count as the report words it: ``"3"`` when every configuration × question has
    3 trials, ``"1–3"`` when they differ."""
    low, high = trial_range(results)
    return str(high) if low == high else f"{low}–{high}"


def _percent_interval(c: ConfigurationSummary) -> str | None:
    """pass@1's interval (``pass_hat_k_interval["1"]``) in whole percents: ``"45–99%"``."""
    i = (c.pass_hat_k_interval or {}).get("1")
    return None if i is None else f"{round(100 * i.low)}–{round(100 * i.high)}%"


def over_trials_view(results: Results) -> dict[str, dict[str, Any]] | None:
    """Per configuration, its passes over every trial: ``{"passed", "total", "always",
    "questions", "status", "modes"}`` (``always``: questions that passed in every trial;
    ``modes``: trials carrying each failure mode, from ``trial_outcomes``; ``interval``:
    pass@1's 95% interval as ``"45–99%"``, None in results without one). None for a set with
    one trial per episode (trial 1 is then the whole story)."""
    if trial_count_of(results) < 2:
        return None
    counts: dict[str, dict[str, int]] = {}
    for o in results.trial_outcomes or []:
        per = counts.setdefault(o.configuration, {})
        for mode in dict.fromkeys(o.failure_modes or []):
            per[mode] = per.get(mode, 0) + 1
    out: dict[str, dict[str, Any]] = {}
    for c in results.configurations:
        questions = c.questions
        if not questions:
            continue
        passed = sum(q.passes for q in questions)
        total = sum(q.trials for q in questions)
        per = counts.get(c.name, {})
        out[c.name] = {
            "passed": passed,
            "total": total,
            "always": sum(1 for q in questions if q.passes == q.trials),
            "questions": len(questions),
            "status": pass_status(passed, total),
            "interval": _percent_interval(c),
            "modes": [
                {"mode": m, "label": mode_label(m), "count": per[m]}
                for m in ordered_names(sorted(per), FAILURE_MODES)
            ],
        }
    return out or None


def episode_anchors(episodes: Sequence[EpisodeResult]) -> list[str]:
    """A stable, unique HTML id per episode: ``ep-<n>-<configuration>-<question id>``."""
    out = []
    for n, ep in enumerate(episodes, 1):
        slug = re.sub(r"[^a-z0-9]+", "-", f"{ep.configuration}-{ep.question_id}".lower())
        out.append(f"ep-{n}-{slug.strip('-')}")
    return out


def mode_label(mode: str) -> str:
    if mode == UNMET:
        return UNMET_LABEL
    return FAILURE_MODES.get(mode, mode.replace("_", " "))


def mode_counts_view(episodes: Sequence[EpisodeResult]) -> dict[str, dict[str, int]] | None:
    """Per configuration, episodes carrying each failure mode (known modes first); None when
    no episode was classified."""
    if not any(ep.failure_modes is not None for ep in episodes):
        return None
    counts: dict[str, dict[str, int]] = {}
    for ep in episodes:
        per = counts.setdefault(ep.configuration, {})
        for mode in ep.modes:
            per[mode] = per.get(mode, 0) + 1
    return {
        name: {m: per[m] for m in ordered_names(sorted(per), FAILURE_MODES)}
        for name, per in counts.items()
    }


def _modes_of(name: str, modes: dict[str, dict[str, int]] | None) -> list[dict[str, Any]] | None:
    if modes is None:
        return None
    return [
        {"mode": m, "label": mode_label(m), "count": n} for m, n in modes.get(name, {}).items()
    ]


def verdict_view(
    configurations: Sequence[ConfigurationSummary],
    modes: dict[str, dict[str, int]] | None,
    fidelity: Mapping[str, Any] | None,
    episodes: Sequence[EpisodeResult],
    trials: Mapping[str, Mapping[str, Any]] | None = None,
    n_trials: int = 1,
    unmet: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The first-screen line: which configurations passed, which failed and why (failure
    modes), and the fidelity audit's score. With several trials (``trials``, from
    :func:`over_trials_view`) a configuration passed only when every trial of every question
    passed, and its score is over trials (trial 1's, the study's run, beside it); the modes
    are then counted over trials. ``unmet`` (:func:`toolreplay.report.reasons.unmet_counts`):
    per configuration, trial 1's episodes with an unmet expectation, a reason of their own
    shown before the modes."""
    rows = []
    for c in configurations:
        over = (trials or {}).get(c.name)
        done, total = (over["passed"], over["total"]) if over else (c.passed, c.total)
        rows.append(
            {
                "name": c.name,
                "passed": c.passed,
                "total": c.total,
                "status": pass_status(done, total),
                "ok": bool(total) and done == total,
                "modes": over["modes"] if over else _modes_of(c.name, modes),
                "trials": over,
                "unmet": (unmet or {}).get(c.name, 0),
            }
        )
    over_all = None
    if trials:
        over_all = {
            "n": n_trials,
            "passed": sum(t["passed"] for t in trials.values()),
            "total": sum(t["total"] for t in trials.values()),
        }
    return {
        "passed": [r for r in rows if r["ok"]],
        "failed": [r for r in rows if not r["ok"] and r["status"] != "empty"],
        "trials": over_all,
        "episodes_passed": sum(1 for ep in episodes if ep.passed),
        "episodes": len(episodes),
        "classified": modes is not None,
        "fidelity": None
        if fidelity is None
        else {
            "passed": fidelity["checks_passed"],
            # a check that does not apply to the set counts neither as passed nor as failed
            "total": sum(1 for c in fidelity["checks"] if not c.get("not_applicable")),
            "not_applicable": sum(1 for c in fidelity["checks"] if c.get("not_applicable")),
            "ok": bool(fidelity["checks"])
            and all(c["passed"] or c.get("not_applicable") for c in fidelity["checks"]),
            "failed": [
                c["title"]
                for c in fidelity["checks"]
                if not c["passed"] and not c.get("not_applicable")
            ],
        },
    }


def pass_status(passed: int, total: int) -> str:
    """``all`` / ``none`` / ``partial`` (``empty`` when there is nothing to pass)."""
    if total == 0:
        return "empty"
    if passed == total:
        return "all"
    return "none" if passed == 0 else "partial"


def split_configuration_name(name: str) -> tuple[str, str] | None:
    """``single+atomic`` → ``("single", "atomic")``; None for other names (e.g. ablations)."""
    match = re.fullmatch(r"([^+\s]+)\+([^+\-\s]+)", name)
    return (match.group(1), match.group(2)) if match else None


def ordered_names(seen: Iterable[str], known: Iterable[str]) -> list[str]:
    seen = list(dict.fromkeys(seen))
    return [k for k in known if k in seen] + [s for s in seen if s not in known]


def stop_view(configuration: str, reason: str) -> dict[str, str]:
    """A stop reason for display: ``{"reason", "label", "title"}``. The single host always
    stops after its one tool round, which the episode records as ``max_rounds``; that is its
    design, not a cap being hit, and the label says so."""
    host = (split_configuration_name(configuration) or ("", ""))[0]
    if reason == "max_rounds" and host == "single":
        return {
            "reason": reason,
            "label": "stopped after its one tool round",
            "title": "stop reason max_rounds: the single host always stops after round 2 "
            "(one tool round and one answer request), by design; no cap was hit",
        }
    if reason == "unknown":
        return {
            "reason": reason,
            "label": "unknown (no finish reason)",
            "title": "stop reason unknown: the last reply named no finish reason "
            "(finish_reason, stop_reason or finishReason missing or null), so whether the "
            "model finished or was cut off cannot be told; it is not counted as converged",
        }
    return {"reason": reason, "label": reason, "title": "stop reason"}


def grid_view(
    configurations: Sequence[ConfigurationSummary],
    modes: dict[str, dict[str, int]] | None = None,
    trials: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Rows are hosts, columns toolsets, cells passed/total and failure-mode counts, like the
    study's table (trial 1). With several trials each cell also gives its passes over trials
    (``trials``, from :func:`over_trials_view`), and its colour is theirs."""
    cells: dict[tuple[str, str], ConfigurationSummary] = {}
    for c in configurations:
        parts = split_configuration_name(c.name)
        if parts:
            cells.setdefault(parts, c)
    hosts = ordered_names((h for h, _ in cells), HOSTS)
    labels = toolset_labels()
    toolsets = ordered_names((t for _, t in cells), labels)
    rows = []
    for host in hosts:
        row = []
        for toolset in toolsets:
            cell = cells.get((host, toolset))
            over = None if cell is None else (trials or {}).get(cell.name)
            row.append(
                None
                if cell is None
                else {
                    "name": cell.name,
                    "passed": cell.passed,
                    "total": cell.total,
                    "trial1_status": pass_status(cell.passed, cell.total),
                    "status": over["status"] if over else pass_status(cell.passed, cell.total),
                    "modes": _modes_of(cell.name, modes),
                    "trials": over,
                }
            )
        rows.append({"host": host, "caption": HOSTS.get(host, ""), "cells": row})
    return {
        "columns": [{"toolset": t, "caption": labels.get(t, "")} for t in toolsets],
        "rows": rows,
    }


def _metric(c: ConfigurationSummary, key: str) -> float:
    """The value of the metric ``key`` (a :data:`~toolreplay.report.labels.METRICS` key)."""
    values = {
        "avg_rounds": c.avg_rounds,
        "avg_tool_calls": c.avg_tool_calls,
        "recorded_wall_time_s": c.recorded_wall_time_s,
        "avg_tokens": c.avg_tokens,
    }
    return values[key]


def metrics_view(
    configurations: Sequence[ConfigurationSummary],
    modes: dict[str, dict[str, int]] | None = None,
) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "passed": c.passed,
            "total": c.total,
            "status": pass_status(c.passed, c.total),
            "cells": [
                {"label": label, "value": format_number(_metric(c, key), fmt)}
                for key, label, fmt in METRICS
            ],
            "stop_reasons": [
                {**stop_view(c.name, k), "count": v} for k, v in (c.stop_reasons or {}).items()
            ],
            "modes": _modes_of(c.name, modes),
        }
        for c in configurations
    ]


CHART_BAR_H = 18


CHART_GAP = 6


CHART_BAR_W = 150.0


CHART_VALUE_W = 64


def charts_view(
    configurations: Sequence[ConfigurationSummary], skip: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """One horizontal bar chart per metric (except ``skip``); geometry precomputed for the
    SVG (fixed decimals, so the markup is deterministic)."""
    label_w = max([len(c.name) for c in configurations] + [8]) * 7 + 10
    width = label_w + CHART_BAR_W + CHART_VALUE_W
    charts = []
    for key, label, fmt in METRICS:
        if key in skip:
            continue
        values = [float(_metric(c, key)) for c in configurations]
        top = max([*values, 0.0])
        bars = []
        for i, (c, v) in enumerate(zip(configurations, values, strict=True)):
            y = i * (CHART_BAR_H + CHART_GAP)
            w = CHART_BAR_W * v / top if top > 0 else 0.0
            bars.append(
                {
                    "name": c.name,
                    "value": format_number(_metric(c, key), fmt),
                    "y": y,
                    "text_y": f"{y + CHART_BAR_H * 0.72:.1f}",
                    "w": f"{w:.1f}",
                    "value_x": f"{label_w + w + 4:.1f}",
                    "host": (split_configuration_name(c.name) or ("other", ""))[0],
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
