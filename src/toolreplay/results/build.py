"""Building results: the typed :class:`~toolreplay.results.format.Results` built whole from
the episodes, their assessments and the audit (:func:`build_results`), summaries per
configuration, provenance, and the atomic write of results.json (:func:`write_results`).

The judging's objects become their results records here, one function each
(:func:`evidence_record`, :func:`failure_mode_record`, :func:`expectation_record`,
:func:`error_record`, :func:`conclusion_record`, :func:`verdict_evidence`,
:func:`usage_record`): the judging sits below the results and does not know their models.
Only the fields the file holds are set (an optional field such as ``expectations``,
``error``, ``claims`` or ``streamed`` is left unset, and so absent, when it does not apply).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolreplay.cassettes.format import LOOPBACK
from toolreplay.cassettes.manifest import Manifest
from toolreplay.evals import Question
from toolreplay.judging import comparisons, episode_errors, failures
from toolreplay.judging.assessment import Assessment, assess
from toolreplay.judging.expectations import ExpectationResult
from toolreplay.judging.failures import mode_counts
from toolreplay.judging.grounding import Target
from toolreplay.judging.verdicts import Judge, Verdict
from toolreplay.outputs import atomic_write_text
from toolreplay.results.format import (
    RESULTS_FORMAT,
    CallRecord,
    Conclusion,
    ConfigurationSummary,
    Endpoint,
    EpisodeError,
    EpisodeResult,
    Evidence,
    ExpectationRecord,
    FailureModeRecord,
    Fidelity,
    GroundedValue,
    Provenance,
    Results,
    Selection,
    ToolCallRecord,
    TrialOutcome,
    Usage,
    VerdictEvidence,
    results_json_text,
)
from toolreplay.results.trials import summarize_trials
from toolreplay.wire.episode import Episode
from toolreplay.wire.episode import Usage as WireUsage


def evidence_record(evidence: failures.Evidence) -> Evidence:
    """A label's or an expectation's :class:`~toolreplay.judging.failures.Evidence` as
    results store it (every field set; the tool call's arguments parsed)."""
    call = evidence.tool_call
    return Evidence(
        message_index=evidence.message_index,
        span=list(evidence.span) if evidence.span is not None else None,
        text=evidence.text,
        tool_call=(
            ToolCallRecord(name=call.name, arguments=call.parsed_arguments())
            if call is not None
            else None
        ),
    )


def failure_mode_record(label: failures.FailureMode) -> FailureModeRecord:
    """One failure-mode label as results store it: ``{"mode", "explanation", "evidence"}``."""
    return FailureModeRecord(
        mode=label.mode, explanation=label.explanation, evidence=evidence_record(label.evidence)
    )


def expectation_record(checked: ExpectationResult) -> ExpectationRecord:
    """One expectation checked, as results store it: ``{"kind", "expected", "passed",
    "explanation", "evidence"}``."""
    return ExpectationRecord(
        kind=checked.kind,
        expected=checked.expected,
        passed=checked.passed,
        explanation=checked.explanation,
        evidence=evidence_record(checked.evidence),
    )


def error_record(error: episode_errors.EpisodeError) -> EpisodeError:
    """The model API error an episode ended on, as results store it."""
    return EpisodeError(
        status=error.status, endpoint=error.endpoint, message=error.message, text=error.text
    )


def conclusion_record(conclusion: comparisons.Conclusion) -> Conclusion:
    """A comparison's conclusion as results store it (``claims`` only when the answer states
    any)."""
    record = Conclusion(
        said=conclusion.said,
        span=list(conclusion.span) if conclusion.span else None,
        actual=conclusion.actual,
        values=list(conclusion.values),
        correct=conclusion.correct,
    )
    if conclusion.claims:
        record.claims = list(conclusion.claims)
    return record


def verdict_evidence(verdict: Verdict) -> VerdictEvidence:
    """What the verdict rests on: each value checked against the tool results (a format-only
    judge: span, text and kind of each value read) and a comparison's conclusion."""
    values = (
        [GroundedValue.model_validate(c.to_dict()) for c in verdict.checks]
        if verdict.checks
        else [
            GroundedValue(span=[v.start, v.end], text=v.text, kind=v.kind) for v in verdict.values
        ]
    )
    return VerdictEvidence(
        values=values,
        conclusion=conclusion_record(verdict.conclusion) if verdict.conclusion else None,
    )


def usage_record(usage: WireUsage) -> Usage:
    """Token usage as results store it (with the total)."""
    return Usage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
    )


def episode_record(
    episode: Episode,
    judge: Judge,
    measure: Question | str | None = None,
    assessment: Assessment | None = None,
    origin: Origin | None = None,
) -> EpisodeResult:
    """One episode as a results.json entry, judged by ``judge`` for its question (``measure``:
    the :class:`~toolreplay.evals.Question`, whose measure, day and places the answer is
    grounded against; or only a measure name, ``temperature``, ``precipitation``,
    ``comparison``; None: any value). ``passed`` is False whenever a value is labelled
    ``fabricated_value``; ``verdict_evidence`` is :func:`verdict_evidence`. A question with
    expectations (``Question.expect``) gets ``expectations`` (:func:`expectation_record` each)
    and passes only when all of them pass. An episode that ended on a model API error (stop
    reason ``error``) also gets ``error``: :func:`error_record` (status, endpoint, the
    server's message, the recorded text). ``streamed: true`` when its model replies were
    streamed (:attr:`Episode.streamed`), absent otherwise. ``origin`` (:class:`Origin`): the
    cassette it came from and the test that recorded it, set when known; ``trial`` is set for
    a trial after the first (the records of ``trial_episodes``)."""
    assessed = assessment if assessment is not None else assess(episode, measure, judge)
    verdict, labels, checked = assessed.verdict, assessed.failure_modes, assessed.expectations
    record = EpisodeResult(
        configuration=episode.configuration,
        question_id=episode.question_id,
        **_origin_fields(episode, origin),
        question=episode.question,
        measure=Target.of(measure).measure,
        answer=episode.answer,
        passed=assessed.passed,
        verdict=verdict.explanation,
        verdict_evidence=verdict_evidence(verdict),
        rounds=len(episode.rounds),
        tool_calls=len(episode.tool_calls),
        tool_chain=list(episode.tool_chain),
        calls=[
            CallRecord(round=rnd.index, name=r.call.name, arguments=r.call.parsed_arguments())
            for rnd in episode.rounds
            for r in rnd.results
        ],
        pending_tool_calls=[
            ToolCallRecord(name=c.name, arguments=c.parsed_arguments())
            for c in episode.pending_tool_calls
        ],
        stop_reason=episode.stop_reason,
        finish_reason=episode.rounds[-1].reply.finish_reason if episode.rounds else None,
        usage=usage_record(episode.usage),
        recorded_wall_time_s=episode.wall_time_s,
        failure_modes=[failure_mode_record(f) for f in labels],
        transcript=list(episode.transcript),
    )
    if episode.streamed:  # set only when it applies (absent otherwise); the model orders it
        record.streamed = True
    if checked:  # the fields' order (after failure_modes, before transcript) is the model's
        record.expectations = [expectation_record(r) for r in checked]
    if episode.stop_reason == "error":
        record.error = error_record(episode_errors.EpisodeError.parse(episode.error))
    return record


@dataclass(frozen=True)
class Origin:
    """Where an episode came from, as results show it: ``cassette`` (the cassette's path, see
    :attr:`~toolreplay.results.format.EpisodeResult.cassette`) and ``test_id`` (the test that
    recorded it, in a test suite's set); None when not known."""

    cassette: str | None = None
    test_id: str | None = None


def _origin_fields(episode: Episode, origin: Origin | None) -> dict[str, Any]:
    """The optional ``trial``, ``test_id`` and ``cassette`` of a record, only those that apply
    (a field not passed stays unset, and so absent from the file)."""
    fields: dict[str, Any] = {}
    if episode.trial > 1:
        fields["trial"] = episode.trial
    if origin is not None and origin.test_id:
        fields["test_id"] = origin.test_id
    if origin is not None and origin.cassette:
        fields["cassette"] = origin.cassette
    return fields


def _wall_time(record: EpisodeResult) -> int | float:
    # 0.0 stays a float (the sum of recorded times is written as the times are)
    return 0 if record.recorded_wall_time_s is None else record.recorded_wall_time_s


def summarize(
    records: Sequence[EpisodeResult], names: Sequence[str]
) -> list[ConfigurationSummary]:
    """Per configuration (in ``names`` order): passed/total, average rounds and tool calls
    (2 decimals), recorded wall time summed (s; the integer 0 for no episodes), average total
    tokens, stop-reason counts, failure-mode counts (episodes per mode)."""
    out = []
    for name in names:
        eps = [r for r in records if r.configuration == name]
        n = len(eps) or 1
        out.append(
            ConfigurationSummary(
                name=name,
                passed=sum(1 for r in eps if r.passed),
                total=len(eps),
                avg_rounds=round(sum(r.rounds for r in eps) / n, 2),
                avg_tool_calls=round(sum(r.tool_calls for r in eps) / n, 2),
                recorded_wall_time_s=round(sum(_wall_time(r) for r in eps), 3),
                avg_tokens=round(sum(r.usage.total_tokens if r.usage else 0 for r in eps) / n, 1),
                stop_reasons=dict(sorted(Counter(r.stop_reason for r in eps).items())),
                failure_modes=mode_counts(
                    [f.mode for f in r.failure_modes or ()] for r in eps
                ),
            )
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


def endpoints(manifest: Manifest) -> list[Endpoint]:
    """The model endpoint, then each tool endpoint (manifest order), with what answered
    there (:func:`endpoint_source`)."""
    found = [("model", "model", manifest.model_base_url)]
    found += [(name, "tool", url) for name, url in manifest.tool_urls.items()]
    return [
        Endpoint(
            name=name,
            role=role,
            url=url,
            host=urlsplit(url).hostname or "",
            loopback=(urlsplit(url).hostname or "") in LOOPBACK,
            source=endpoint_source(role, url, manifest.provenance),
        )
        for name, role, url in found
    ]


def provenance(manifest: Manifest) -> Provenance:
    """The manifest's provenance fields, with what answered at each endpoint
    (:func:`endpoints`); ``streamed: true`` when the set's model replies were streamed (the
    eval file's ``stream: true``), absent otherwise."""
    found = Provenance(
        provenance=manifest.provenance,
        model=manifest.model,
        endpoint_host=manifest.endpoint_host,
        recorded_on=manifest.recorded_on,
        today=manifest.today,
        packages=manifest.packages,
        endpoints=endpoints(manifest),
    )
    if manifest.settings.get("stream") is True:
        found.streamed = True
    return found


def build_results(
    manifest: Manifest,
    episodes: Sequence[Episode],
    configuration_names: Sequence[str],
    judge: Judge,
    measures: Mapping[str, Question | str] | None = None,
    assessments: Sequence[Assessment] | None = None,
    *,
    selection: Selection | None = None,
    trials: TrialOutcomes | None = None,
    fidelity: Fidelity | None = None,
    origins: Sequence[Origin | None] | None = None,
    later: LaterTrials | None = None,
) -> Results:
    """The results.json document as the typed :class:`~toolreplay.results.format.Results`,
    built whole (nothing is added to it afterwards).

    ``episodes`` are trial 1 of each configuration × question; ``measures`` maps question
    ids to their question (or only its declared measure) from the eval file, so each answer
    is judged for what it asks; ``assessments``, one per episode in order, when the episodes
    were already assessed. ``selection`` is the run's ``selection`` entry; ``trials`` every
    trial's outcome (:func:`toolreplay.results.trials.trial_outcome`) with the question ids
    and the set's trial count, from which each configuration gets its pass@k / pass^k fields
    and the document ``trials`` and ``trial_outcomes``; ``fidelity`` the audit
    (:meth:`toolreplay.audit.tables.Audit.to_fidelity`); ``origins``, one per episode in
    order (:class:`Origin` or None), where each came from; ``later`` the trials after the
    first, assessed, with their origins (:class:`LaterTrials`): their full records become
    ``trial_episodes`` (left out when there are none). Left out when None."""
    m = measures or {}
    done: Sequence[Assessment | None] = assessments or [None] * len(episodes)
    where: Sequence[Origin | None] = origins or [None] * len(episodes)
    records = [
        episode_record(e, judge, m.get(e.question_id), a, o)
        for e, a, o in zip(episodes, done, where, strict=True)
    ]
    configurations = summarize(records, configuration_names)
    if trials is not None:
        summary = summarize_trials(trials.outcomes, configuration_names, trials.question_ids)
        configurations = [
c.model_copy(update=dict(summary[c.name])) for c in configurations
        ]
    results = Results(
        format=RESULTS_FORMAT,
        cassette_set=manifest.cassette_set,
        provenance=provenance(manifest),
        judge=judge.name,
        configurations=configurations,
        episodes=records,
    )
    if selection is not None:
        results.selection = selection
    if trials is not None:
        results.trials = trials.trials
        results.trial_outcomes = list(trials.outcomes)
    if later is not None and later.episodes:
        results.trial_episodes = [
            episode_record(e, judge, m.get(e.question_id), a, o)
            for e, a, o in zip(later.episodes, later.assessments, later.origins, strict=True)
        ]
    if fidelity is not None:
        results.fidelity = fidelity
    return results


@dataclass(frozen=True)
class TrialOutcomes:
    """Every trial's outcome (``outcomes``: :func:`toolreplay.results.trials.trial_outcome`
    each), the ``question_ids`` they answer (in order) and the set's ``trials`` count."""

    outcomes: Sequence[TrialOutcome]
    question_ids: Sequence[str]
    trials: int


@dataclass(frozen=True)
class LaterTrials:
    """The trials after the first (``episodes``, each with its ``trial`` set), their
    ``assessments`` and ``origins`` (:class:`Origin` or None), one each, in order."""

    episodes: Sequence[Episode]
    assessments: Sequence[Assessment]
    origins: Sequence[Origin | None]


def write_results(path: Path, results: Results | Mapping[str, Any]) -> None:
    """Write ``results`` as ``results.json`` (:func:`~toolreplay.results.format.
    results_json_text`: UTF-8, 2-space indent, the models' key order), atomically: a reader or
    a full disk never leaves a truncated file; the old one stays until the new one is
    complete.

    Raises :class:`ResultsError` before writing anything when ``results`` (a mapping) does not
    validate against :class:`Results`; :class:`OSError` when ``path`` cannot be written."""
    text = results_json_text(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
