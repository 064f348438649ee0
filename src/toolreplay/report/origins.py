"""Every trial's transcript in the report: the trials after the first (results'
``trial_episodes``) placed after their trial 1, each transcript's heading facts (configuration,
question, trial, the test and cassette it came from, the command that replays it) and the
links from each failed transcript to the previous and next failed one.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from toolreplay.report.summary import question_trials
from toolreplay.results.format import EpisodeResult, Results


def trial_anchor(anchor: str, trial: int) -> str:
    """The HTML id of a trial's transcript: trial 1's own ``anchor``, ``<anchor>-t<trial>``
    for a later one (``ep-3-single-oneshot-hottest-t3``)."""
    return anchor if trial <= 1 else f"{anchor}-t{trial}"


@dataclass(frozen=True)
class Transcript:
    """One transcript of the page: its ``record`` (an episode of ``episodes`` or
    ``trial_episodes``), ``anchor`` and ``trial`` (from 1)."""

    record: EpisodeResult
    anchor: str
    trial: int


def kept_trials(
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
    trial_episodes: Sequence[EpisodeResult],
) -> dict[tuple[str, str, int], Transcript]:
    """The trials after the first that results keep whole, by ``(configuration, question id,
    trial)``, each anchored after its trial 1 (:func:`trial_anchor`). A trial whose trial 1
    is not among ``episodes`` is left out (it has no row to hang from)."""
    first = {(ep.configuration, ep.question_id): anchors[i] for i, ep in enumerate(episodes)}
    out: dict[tuple[str, str, int], Transcript] = {}
    for record in trial_episodes:
        base = first.get((record.configuration, record.question_id))
        trial = record.trial or 1
        if base is None or trial < 2:
            continue
        out[(record.configuration, record.question_id, trial)] = Transcript(
            record, trial_anchor(base, trial), trial
        )
    return out


def in_page_order(
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
    kept: dict[tuple[str, str, int], Transcript],
) -> dict[int, list[Transcript]]:
    """Per trial-1 episode (by its index), its transcript then its later trials' (by trial)."""
    later: dict[tuple[str, str], list[Transcript]] = {}
    for (configuration, question_id, _), t in kept.items():
        later.setdefault((configuration, question_id), []).append(t)
    return {
        i: [
            Transcript(ep, anchors[i], 1),
            *sorted(later.get((ep.configuration, ep.question_id), []), key=lambda t: t.trial),
        ]
        for i, ep in enumerate(episodes)
    }


def failure_links(order: Sequence[Transcript]) -> dict[str, dict[str, str | None]]:
    """For each failed transcript (by anchor, in page ``order``): ``{"prev", "next"}``, the
    anchors of the failed transcripts before and after it (None at either end)."""
    failed = [t.anchor for t in order if not t.record.passed]
    last = len(failed) - 1
    return {
        a: {"prev": failed[n - 1] if n else None, "next": failed[n + 1] if n < last else None}
        for n, a in enumerate(failed)
    }


def _set_folder(cassette: str, cassette_set: str) -> tuple[str | None, str]:
    """``(folder holding the set, set)`` read from a cassette path ``<folder>/<set>/...``;
    ``(None, set)`` when the path does not show them."""
    parts = PurePosixPath(cassette).parts
    if cassette_set in parts[:-1]:
        at = parts.index(cassette_set)
        return (str(PurePosixPath(*parts[:at])) if at else None), cassette_set
    return None, cassette_set


def replay_command(
    record: EpisodeResult, results: Results, counts: Mapping[tuple[str, str], int] | None = None
) -> dict[str, str] | None:
    """The command that replays just this episode, ``{"command", "note"}``: for a test
    suite's episode whose test is known as a node id, ``pytest <test id>``; else
    ``toolreplay run`` selecting its configuration and question (``--configurations``,
    ``--questions``: every trial of that pair is replayed, the run has no option for one
    trial), written to ``reports/replay`` so the full report is left alone. None when results
    do not say where the episode came from (no ``cassette``)."""
    if record.test_id and "::" in record.test_id:
        return {
            "command": f"pytest {shlex.quote(record.test_id)}",
            "note": "runs the test that recorded it, replaying its cassette",
        }
    if not record.cassette:
        return None
    words = ["toolreplay", "run"]
    selection = results.selection
    if selection is not None and selection.eval_file:
        words += ["--eval", selection.eval_file]
    if results.provenance.provenance != "pytest":
        folder, name = _set_folder(record.cassette, results.cassette_set)
        if folder and folder != "cassettes":
            words += ["--cassettes", folder]
        words += ["--set", name]
    words += [
        "--configurations", record.configuration,
        "--questions", record.question_id,
        "--out", "reports/replay",
    ]  # fmt: skip
    trials = _trials_of(record, results, counts)
    note = "replays this configuration × question"
    if trials > 1:
        note += f" (all {trials} trials: toolreplay run has no option for one trial)"
    return {"command": shlex.join(words), "note": note}


def _trials_of(
    record: EpisodeResult, results: Results, counts: Mapping[tuple[str, str], int] | None
) -> int:
    """Trials of the record's configuration × question (a suite's questions need not have
    the same count); the set's count when results do not say."""
    if counts is None:
        counts = question_trials(results)
    found = counts.get((record.configuration, record.question_id))
    return found if found else max(results.trials or 1, 1)


def origin_view(
    t: Transcript, results: Results, counts: Mapping[tuple[str, str], int] | None = None
) -> dict[str, Any]:
    """A transcript's heading facts: ``{"trial", "trials" (its configuration × question's
    trial count), "streamed" (its replies were streamed), "test_id", "cassette", "replay"}``
    (:func:`replay_command`; None when unknown). ``counts``:
    :func:`~toolreplay.report.summary.question_trials`, worked out once by the caller."""
    if counts is None:
        counts = question_trials(results)
    return {
        "trial": t.trial,
        "trials": _trials_of(t.record, results, counts),
        "streamed": t.record.streamed is True,
        "test_id": t.record.test_id,
        "cassette": t.record.cassette,
        "replay": replay_command(t.record, results, counts),
    }
