"""Episode sources: where a run's episodes come from, behind one small protocol.

Two sources exist:

- :class:`~toolreplay.evaluation.replayed.ReplayedSet`: a cassette set recorded by
  ``toolreplay record``, replayed through the study's hosts (workers, shards);
- :class:`~toolreplay.evaluation.wire.SuiteCassettes`: the cassettes a test suite recorded
  (the pytest plugin), read from the wire whatever framework sent them.

A source's :meth:`EpisodeSource.collect` returns every episode of the selection, each
assessed once (:func:`toolreplay.judging.assessment.assess`), with the set's manifest and the
audit of the checks that apply to that source (a check that does not apply is reported as not
applicable, never as a pass). :func:`toolreplay.evaluation.pipeline.evaluate` turns that into
results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolreplay.audit.tables import Audit
from toolreplay.cassettes.manifest import Manifest
from toolreplay.evals import EvalSuite
from toolreplay.judging.assessment import AssessedEpisode
from toolreplay.judging.verdicts import Judge
from toolreplay.results.format import Selection as SelectionRecord
from toolreplay.runs.configuration import Progress


class SelectionError(ValueError):
    """A ``--configurations`` or ``--questions`` name the source does not hold; the message
    starts with the option's name."""


class SourceError(ValueError):
    """The source cannot give its episodes (an episode that does not replay, a folder with no
    cassette, a malformed manifest); one line saying which and why."""


@dataclass(frozen=True)
class Selection:
    """Which configurations and question ids to evaluate (empty: all)."""

    configurations: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Collected:
    """What a source gives the pipeline: the set's ``manifest``; the ``suite`` restricted to
    the selected questions; the selected ``configurations`` (names, in order) and how many the
    source holds (``all_configurations``); every trial of the selection, assessed
    (``episodes``, configuration-major, then question, then trial); the most ``trials`` any
    configuration × question has; the ``audit`` of the checks that apply; ``notes`` to tell
    the user (e.g. a manifest written); ``unread``: each cassette no reader understood, as
    ``"CASSETTE: why"`` (a test suite's folder; a recorded set replays or fails); ``folder``
    the set's folder, which each episode's ``cassette`` is relative to (None: not known);
    ``test_ids`` the pytest node id that replayed each cassette (by its path relative to
    ``folder``), when the test session gave them (``pytest --toolreplay-report``)."""

    manifest: Manifest
    suite: EvalSuite
    configurations: tuple[str, ...]
    all_configurations: int
    episodes: tuple[AssessedEpisode, ...]
    trials: int
    audit: Audit
    notes: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()
    folder: Path | None = None
    test_ids: Mapping[str, str] | None = None


class EpisodeSource(Protocol):
    """Where episodes come from (module docstring)."""

    def collect(
        self,
        whole: EvalSuite,
        selection: Selection,
        judge: Judge,
        progress: Progress | None = None,
    ) -> Collected:
        """Every episode of ``selection`` assessed with ``judge``, and the audit of the whole
        eval file ``whole`` (the checks that apply to this source). Raises
        :class:`SelectionError` for an unknown name, :class:`SourceError` when the episodes
        cannot be had."""
        ...


def selection_record(
    whole: EvalSuite, collected: Collected, known_questions: Sequence[str] | None = None
) -> SelectionRecord:
    """The ``selection`` entry of results.json: the eval file (relative to the working
    folder when under it, else its name), the configurations and questions evaluated, and
    whether they are all the source and the eval file hold."""
    path = Path(whole.path)
    try:
        shown = path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = path.name
    known_q = list(known_questions) if known_questions is not None else whole.questions
    return SelectionRecord(
        eval_file=shown,
        configurations=list(collected.configurations),
        questions=[q.id for q in collected.suite.questions],
        all_configurations=len(collected.configurations) == collected.all_configurations,
        all_questions=len(collected.suite.questions) == len(known_q),
    )
