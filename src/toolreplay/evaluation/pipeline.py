"""One evaluation pipeline: :func:`evaluate` turns an episode source and an eval file into
results and the audit, for ``toolreplay run``, ``toolreplay merge``, ``pytest
--toolreplay-report``, ``toolreplay diff`` and the library alike.

Data flow: the source gives every episode of the selection, each assessed once
(:class:`~toolreplay.evaluation.sources.Collected`); trial 1 of each configuration × question
becomes results.json's episodes and the per-configuration summaries, every later trial's full
record its ``trial_episodes``, every trial pass@k / pass^k, each episode's cassette (and test)
its origin, and the source's audit ``fidelity`` (:func:`toolreplay.results.build.build_results`:
one document built whole). Nothing is judged here: every consumer reads the assessments.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolreplay.audit.tables import Audit
from toolreplay.evals import EvalSuite
from toolreplay.evaluation.sources import (
    Collected,
    EpisodeSource,
    Selection,
    selection_record,
)
from toolreplay.judging.verdicts import FULL_JUDGE, Judge
from toolreplay.results.build import LaterTrials, Origin, TrialOutcomes, build_results
from toolreplay.results.format import Results
from toolreplay.results.trials import trial_outcome
from toolreplay.runs.configuration import Progress
from toolreplay.wire.episode import Episode


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` returns: ``results`` (the results.json document as the typed
    :class:`toolreplay.results.format.Results`; written by
    :func:`toolreplay.results.format.results_json_text`), the ``audit`` of the
    checks that apply to the source, what was ``collected`` (episodes with their assessments),
    and ``notes`` to tell the user (a manifest written)."""

    results: Results
    audit: Audit
    collected: Collected

    @property
    def notes(self) -> tuple[str, ...]:
        return self.collected.notes

    @property
    def passed(self) -> bool:
        """Whether the audit passed (its applicable checks)."""
        return self.audit.passed


def evaluate(
    source: EpisodeSource,
    suite: EvalSuite,
    selection: Selection | None = None,
    *,
    judge: Judge = FULL_JUDGE,
    progress: Progress | None = None,
) -> Evaluation:
    """Evaluate the episodes of ``source`` with the eval file ``suite`` (its questions,
    measures and expectations), restricted to ``selection`` (default: everything).

    Raises :class:`~toolreplay.evaluation.sources.SelectionError` for a selected name the
    source or eval file does not hold, :class:`~toolreplay.evaluation.sources.SourceError`
    when the source cannot give its episodes; a replay fault of a worker
    (:class:`toolreplay.runs.replay.WorkerDied`) and an interrupt pass through."""
    selection = selection or Selection()
    collected = source.collect(suite, selection, judge, progress)
    trial_one = [a for a in collected.episodes if a.trial == 1]
    later = [a for a in collected.episodes if a.trial > 1]
    outcomes = [trial_outcome(a.trial, a.episode, a.assessment) for a in collected.episodes]
    dirs: dict[str, Path] = {}  # the folders' resolved paths, for every episode's origin
    results = build_results(
        collected.manifest,
        [a.episode for a in trial_one],
        list(collected.configurations),
        judge,
        collected.suite.by_id,
        [a.assessment for a in trial_one],
        selection=selection_record(suite, collected),
        trials=TrialOutcomes(
            outcomes, [q.id for q in collected.suite.questions], collected.trials
        ),
        fidelity=collected.audit.to_fidelity(),
        origins=[origin_of(collected, a.episode, dirs) for a in trial_one],
        later=LaterTrials(
            [a.episode for a in later],
            [a.assessment for a in later],
            [origin_of(collected, a.episode, dirs) for a in later],
        ),
    )
    return Evaluation(results, collected.audit, collected)


def origin_of(
    collected: Collected, episode: Episode, resolved_dirs: dict[str, Path] | None = None
) -> Origin | None:
    """Where ``episode`` came from, as its results record says (:class:`~toolreplay.results.
    build.Origin`): its cassette (:func:`~toolreplay.evaluation.wire.shown_path`, with
    ``resolved_dirs`` as it takes it) and, in a test suite's set (provenance ``pytest``), the
    test that recorded it (:func:`~toolreplay.evaluation.wire.test_id_of`). None when the
    source does not say."""
    if collected.folder is None or not episode.cassette:
        return None
    from toolreplay.evaluation.wire import shown_path, test_id_of

    path = collected.folder / episode.cassette
    test_id = None
    if collected.manifest.provenance == "pytest":
        test_id = test_id_of(collected.folder, episode.cassette, collected.test_ids)
    return Origin(cassette=shown_path(path, collected.folder, resolved_dirs), test_id=test_id)
