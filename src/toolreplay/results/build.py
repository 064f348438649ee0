"""Building results: episodes and audit into the results models, summaries per configuration,
provenance, and the atomic write of results.json.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolreplay.cassettes.format import LOOPBACK
from toolreplay.cassettes.manifest import Manifest
from toolreplay.evals import Question
from toolreplay.judging.assessment import Assessment, assess
from toolreplay.judging.episode_errors import EpisodeError
from toolreplay.judging.failures import mode_counts
from toolreplay.judging.grounding import Target
from toolreplay.judging.verdicts import Judge
from toolreplay.outputs import atomic_write_text
from toolreplay.results.format import RESULTS_FORMAT, check_results
from toolreplay.results.trials import summarize_trials
from toolreplay.wire.episode import Episode


def episode_record(
    episode: Episode,
    judge: Judge,
    measure: Question | str | None = None,
    assessment: Assessment | None = None,
) -> dict[str, Any]:
    """One episode as a results.json entry, judged by ``judge`` for its question (``measure``:
    the :class:`~toolreplay.evals.Question`, whose measure, day and places the answer is
    grounded against; or only a measure name, ``temperature``, ``precipitation``,
    ``comparison``; None: any value). ``passed`` is False whenever a value is labelled
    ``fabricated_value``; ``verdict_evidence`` is
    :meth:`toolreplay.judging.verdicts.Verdict.to_dict`'s
    ``evidence``. A question with expectations (``Question.expect``) gets ``expectations``
    (:meth:`~toolreplay.judging.expectations.ExpectationResult.to_dict` each) and passes only
    when all of them pass. An episode that ended on a model API error (stop reason ``error``) also
    gets ``error``: :meth:`toolreplay.judging.failures.EpisodeError.to_dict` (status, endpoint,
    the server's message, the recorded text)."""
    assessed = assessment if assessment is not None else assess(episode, measure, judge)
    verdict, labels, checked = assessed.verdict, assessed.failure_modes, assessed.expectations
    calls = [
        {"round": rnd.index, "name": r.call.name, "arguments": r.call.parsed_arguments()}
        for rnd in episode.rounds
        for r in rnd.results
    ]
    record: dict[str, Any] = {
        "configuration": episode.configuration,
        "question_id": episode.question_id,
        "question": episode.question,
        "measure": Target.of(measure).measure,
        "answer": episode.answer,
        "passed": assessed.passed,
        "verdict": verdict.explanation,
        "verdict_evidence": verdict.to_dict()["evidence"],
        "rounds": len(episode.rounds),
        "tool_calls": len(episode.tool_calls),
        "tool_chain": episode.tool_chain,
        "calls": calls,
        "pending_tool_calls": [
            {"name": c.name, "arguments": c.parsed_arguments()} for c in episode.pending_tool_calls
        ],
        "stop_reason": episode.stop_reason,
        "finish_reason": episode.rounds[-1].reply.finish_reason if episode.rounds else None,
        "usage": episode.usage.to_dict(),
        "recorded_wall_time_s": episode.wall_time_s,
        "failure_modes": [f.to_dict() for f in labels],
        "transcript": list(episode.transcript),
    }
    if checked:  # after failure_modes, before transcript
        record = {
            **{k: v for k, v in record.items() if k != "transcript"},
            "expectations": [r.to_dict() for r in checked],
            "transcript": record["transcript"],
        }
    if episode.stop_reason == "error":
        record["error"] = EpisodeError.parse(episode.error).to_dict()
    return record


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


#: What answered at an endpoint (:func:`endpoint_source`).
LIVE, FIXTURE_SERVER, STAND_IN, PYTEST = "live", "fixture-server", "stand-in", "pytest"


def endpoint_source(role: str, url: str, provenance: str) -> str:
    """What answered at ``url`` when the set was recorded, judged from the URL: the model
    endpoint (``role`` ``model``) on loopback in a ``stand-in`` set is the stand-in; a tool
    endpoint on loopback is the fixture server; anything else is live (a model server on
    loopback in a ``live`` set is a live model running on the recording machine); every
    endpoint of a ``pytest`` set (recorded in a user's tests) is ``pytest``: what answered
    there is for the tests to say."""
    loopback = (urlsplit(url).hostname or "") in LOOPBACK
    if provenance == PYTEST:  # recorded in a user's tests: what answered is theirs to say
        return PYTEST
    if role == "model":
        return STAND_IN if loopback and provenance == STAND_IN else LIVE
    return FIXTURE_SERVER if loopback else LIVE


def endpoints(manifest: Manifest) -> list[dict[str, Any]]:
    """The model endpoint, then each tool endpoint (manifest order), as
    ``{"name", "role", "url", "host", "loopback", "source"}`` (:class:`Endpoint`)."""
    found = [("model", "model", manifest.model_base_url)]
    found += [(name, "tool", url) for name, url in manifest.tool_urls.items()]
    return [
        {
            "name": name,
            "role": role,
            "url": url,
            "host": urlsplit(url).hostname or "",
            "loopback": (urlsplit(url).hostname or "") in LOOPBACK,
            "source": endpoint_source(role, url, manifest.provenance),
        }
        for name, role, url in found
    ]


def provenance(manifest: Manifest) -> dict[str, Any]:
    """The manifest's provenance fields, as :class:`Provenance` describes them, with what
    answered at each endpoint (:func:`endpoints`); ``streamed: true`` when the set's model
    replies were streamed (the eval file's ``stream: true``), absent otherwise."""
    found: dict[str, Any] = {
        "provenance": manifest.provenance,
        "model": manifest.model,
        "endpoint_host": manifest.endpoint_host,
        "recorded_on": manifest.recorded_on,
        "today": manifest.today,
        "packages": manifest.packages,
        "endpoints": endpoints(manifest),
    }
    if manifest.settings.get("stream") is True:
        found["streamed"] = True
    return found


def build_results(
    manifest: Manifest,
    episodes: Sequence[Episode],
    configuration_names: Sequence[str],
    judge: Judge,
    measures: Mapping[str, Question | str] | None = None,
    assessments: Sequence[Assessment] | None = None,
    *,
    selection: Mapping[str, Any] | None = None,
    trials: TrialOutcomes | None = None,
    fidelity: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results.json document, built whole (nothing is added to it afterwards).

    ``episodes`` are trial 1 of each configuration × question; ``measures`` maps question
    ids to their question (or only its declared measure) from the eval file, so each answer
    is judged for what it asks; ``assessments``, one per episode in order, when the episodes
    were already assessed. ``selection`` is the run's ``selection`` entry; ``trials`` every
    trial's outcome (:func:`toolreplay.results.trials.trial_outcome`) with the question ids
    and the set's trial count, from which each configuration gets its pass@k / pass^k fields
    and the document ``trials`` and ``trial_outcomes``; ``fidelity`` the audit
    (:meth:`toolreplay.audit.tables.Audit.to_dict`). Left out when None."""
    m = measures or {}
    done: Sequence[Assessment | None] = assessments or [None] * len(episodes)
    records = [
        episode_record(e, judge, m.get(e.question_id), a)
        for e, a in zip(episodes, done, strict=True)
    ]
    configurations = summarize(records, configuration_names)
    if trials is not None:
        summary = summarize_trials(trials.outcomes, configuration_names, trials.question_ids)
        configurations = [{**c, **summary[c["name"]]} for c in configurations]
    results: dict[str, Any] = {
        "format": RESULTS_FORMAT,
        "cassette_set": manifest.cassette_set,
        "provenance": provenance(manifest),
        "judge": judge.name,
        "configurations": configurations,
        "episodes": records,
    }
    if selection is not None:
        results["selection"] = dict(selection)
    if trials is not None:
        results["trials"] = trials.trials
        results["trial_outcomes"] = [dict(o) for o in trials.outcomes]
    if fidelity is not None:
        results["fidelity"] = dict(fidelity)
    return results


@dataclass(frozen=True)
class TrialOutcomes:
    """Every trial's outcome (``outcomes``: :func:`toolreplay.results.trials.trial_outcome`
    each), the ``question_ids`` they answer (in order) and the set's ``trials`` count."""

    outcomes: Sequence[Mapping[str, Any]]
    question_ids: Sequence[str]
    trials: int


def write_results(path: Path, results: dict[str, Any]) -> None:
    """Write ``results`` as ``results.json`` (UTF-8, 2-space indent, key order kept),
    atomically: a reader or a full disk never leaves a truncated file; the old one stays until
    the new one is complete.

    Raises :class:`ResultsError` before writing anything when ``results`` does not validate
    against :class:`Results`; :class:`OSError` when ``path`` cannot be written."""
    check_results(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(results, ensure_ascii=False, indent=2) + "\n")

