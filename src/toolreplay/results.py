"""``reports/results.json``: the judged episodes and per-configuration summary.

Shape (keys kept stable; fields may be added)::

    {"format": 1, "cassette_set": "reference", "provenance": {...}, "judge": "measured-value",
     "configurations": [{"name", "passed", "total", "avg_rounds", "avg_tool_calls",
                         "recorded_wall_time_s", "avg_tokens", "stop_reasons",
                         "failure_modes"}, ...],
     "episodes": [{"configuration", "question_id", "question", "answer", "passed", "verdict",
                   "rounds", "tool_calls", "tool_chain", "calls", "stop_reason", "usage",
                   "recorded_wall_time_s", "failure_modes", "transcript"}, ...]}

An episode's ``failure_modes`` is a list of :meth:`toolreplay.failures.FailureMode.to_dict`
(``{"mode", "explanation", "evidence": {"message_index", "span", "text", "tool_call"}}``); a
configuration's ``failure_modes`` counts the episodes carrying each mode
(``{"empty_answer": 2, ...}``, modes with no episode left out).

Trial fields (added by :func:`toolreplay.trials.add_trial_metrics`; the fields above, the 2×2
table included, come from trial 1 alone, the study's run)::

    "selection": {"eval_file": "evals/weather.yaml", "configurations": [names run],
                  "questions": [ids run], "all_configurations": bool, "all_questions": bool},
    "trials": n,                                   # trials per configuration × question
    "configurations": [{..., "trials": n,
        "pass_at_k":  {"1": float, ..., "n": float},  # unbiased, mean over the questions
        "pass_hat_k": {"1": float, ..., "n": float},  # pass^k, same
        "rounds_over_trials":     {"mean", "sd", "min", "max"},  # over every trial
        "tool_calls_over_trials": {"mean", "sd", "min", "max"},
        "failure_mode_rates": {"empty_answer": 0.65, ...},  # trials with the mode / trials
        "questions": [{"question_id", "trials", "passes", "pass_at_k", "pass_hat_k"}]}],
    "trial_outcomes": [{"configuration", "question_id", "trial", "passed", "rounds",
                        "tool_calls", "stop_reason", "failure_modes": [mode, ...]}, ...]

``pass_at_k`` = 1 − C(n−c, k)/C(n, k) and ``pass_hat_k`` = C(c, k)/C(n, k) with c passes in n
trials (:mod:`toolreplay.metrics`); keys are k as strings (JSON object keys), values in [0, 1]
rounded to 4 places. A one-trial set has ``"trials": 1`` and curves with the single key "1".

Written with sorted-free, fixed key order and ``ensure_ascii=False``; regenerating from the same
cassettes gives byte-identical output (times are the manifest's recorded ones).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .cassettes import Manifest
from .episode import Episode
from .failures import classify, mode_counts
from .judge import Judge

RESULTS_FORMAT = 1


def episode_record(episode: Episode, judge: Judge, measure: str | None = None) -> dict[str, Any]:
    """One episode as a results.json entry, judged by ``judge`` for a question that measures
    ``measure`` (``temperature``, ``precipitation``, ``comparison``; None: any value)."""
    verdict = judge.judge(episode.answer, measure)
    calls = [
        {"round": rnd.index, "name": r.call.name, "arguments": r.call.parsed_arguments()}
        for rnd in episode.rounds
        for r in rnd.results
    ]
    return {
        "configuration": episode.configuration,
        "question_id": episode.question_id,
        "question": episode.question,
        "measure": measure,
        "answer": episode.answer,
        "passed": verdict.passed,
        "verdict": verdict.explanation,
        "rounds": len(episode.rounds),
        "tool_calls": len(episode.tool_calls),
        "tool_chain": episode.tool_chain,
        "calls": calls,
        "pending_tool_calls": [
            {"name": c.name, "arguments": c.parsed_arguments()} for c in episode.pending_tool_calls
        ],
        "stop_reason": episode.stop_reason,
        "usage": episode.usage.to_dict(),
        "recorded_wall_time_s": episode.wall_time_s,
        "failure_modes": [f.to_dict() for f in classify(episode, judge, measure)],
        "transcript": list(episode.transcript),
    }


def summarize(records: Sequence[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Per configuration (in ``names`` order): passed/total, average rounds and tool calls
    (2 decimals), recorded wall time summed (s), average total tokens, stop-reason counts,
    failure-mode counts (episodes per mode)."""
    out = []
    for name in names:
        eps = [r for r in records if r["configuration"] == name]
        n = len(eps) or 1
        out.append(
            {
                "name": name,
                "passed": sum(1 for r in eps if r["passed"]),
                "total": len(eps),
                "avg_rounds": round(sum(r["rounds"] for r in eps) / n, 2),
                "avg_tool_calls": round(sum(r["tool_calls"] for r in eps) / n, 2),
                "recorded_wall_time_s": round(sum(r["recorded_wall_time_s"] for r in eps), 3),
                "avg_tokens": round(sum(r["usage"]["total_tokens"] for r in eps) / n, 1),
                "stop_reasons": dict(sorted(Counter(r["stop_reason"] for r in eps).items())),
                "failure_modes": mode_counts([f["mode"] for f in r["failure_modes"]] for r in eps),
            }
        )
    return out


def provenance(manifest: Manifest) -> dict[str, Any]:
    return {
        "provenance": manifest.provenance,
        "model": manifest.model,
        "endpoint_host": manifest.endpoint_host,
        "recorded_on": manifest.recorded_on,
        "today": manifest.today,
        "packages": manifest.packages,
    }


def build_results(
    manifest: Manifest,
    episodes: Sequence[Episode],
    configuration_names: Sequence[str],
    judge: Judge,
    measures: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The results.json document; ``measures`` maps question ids to their declared measure
    (from the eval file) so each answer is judged for what its question asks."""
    m = measures or {}
    records = [episode_record(e, judge, m.get(e.question_id)) for e in episodes]
    return {
        "format": RESULTS_FORMAT,
        "cassette_set": manifest.cassette_set,
        "provenance": provenance(manifest),
        "judge": judge.name,
        "configurations": summarize(records, configuration_names),
        "episodes": records,
    }


def write_results(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
