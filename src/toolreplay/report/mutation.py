"""The report's "Mutation score" section: a view model for ``templates/_mutation.html.j2``.

Reads results' optional ``mutation`` section (:class:`~toolreplay.results.mutation.
MutationRecord`, written by ``toolreplay run --mutate``): the score over every mutant in plain
words, a table per configuration and one per check ("caught by"), the operators, and the
surviving mutants grouped by operator, each linked to its episode's transcript like the failure
gallery. Results without the section give None (the section is left out). Deterministic: a
function of the results only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.report.origins import Transcript
from toolreplay.report.text import CLIP_AT, text_view
from toolreplay.results.format import EpisodeResult, Results
from toolreplay.results.mutation import MutationScoreRecord

#: The width of a score's bar, px (the scorecard's).
BAR_W = 80

#: Each operator group in words.
GROUP_LABELS = {
    "tool_result": "tool results",
    "answer": "the answer",
    "trajectory": "the trajectory",
}

#: The checks a kill is credited to besides the expectation kinds, in words.
CHECK_LABELS = {
    "verdict": "the judge's verdict",
    "failure_mode": "a failing failure mode",
}

__all__ = ["BAR_W", "mutation_view", "percent"]


def percent(score: float | None) -> str:
    """A score 0-1 as ``"76%"``; ``"–"`` for None (no mutant scored)."""
    return "–" if score is None else f"{100 * score:.0f}%"


def _row(name: str, s: MutationScoreRecord, label: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "percent": percent(s.score),
        "killed": s.killed,
        "survived": s.survived,
        "scored": s.killed + s.survived,
        "equivalent": s.equivalent,
        "bar_w": f"{BAR_W * (s.score or 0.0):.1f}",
        "scored_any": s.score is not None,
    }


def mutation_view(
    results: Results,
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
    kept: Mapping[tuple[str, str, int], Transcript],
) -> dict[str, Any] | None:
    """The section's view of ``results.mutation``, or None when results carry none:
    ``{"total", "mutated", "skipped", "seed", "budget", "configurations", "questions",
    "checks", "operators", "survivors", "survivor_count", "bar"}``. ``total`` and each row are
    ``{"name", "label", "percent", "killed", "survived", "scored", "equivalent", "bar_w",
    "scored_any"}``; ``survivors`` is a list per operator (catalogue order) of ``{"operator",
    "group", "count", "mutants"}``, each ``{"configuration", "question_id", "trial",
    "change" (:func:`~toolreplay.report.text.text_view`), "anchor"}``. ``anchor`` is the
    transcript's HTML id (trial 1: ``anchors`` of ``episodes``; a later trial: its ``kept``
    transcript's), None when the page holds no transcript of that episode (not linked)."""
    m = results.mutation
    if m is None:
        return None
    first = {(ep.configuration, ep.question_id): anchors[i] for i, ep in enumerate(episodes)}

    def anchor(configuration: str, question_id: str, trial: int) -> str | None:
        if trial <= 1:
            return first.get((configuration, question_id))
        t = kept.get((configuration, question_id, trial))
        return None if t is None else t.anchor

    groups: dict[str, dict[str, Any]] = {}
    for name in m.by_operator:  # catalogue order
        groups[name] = {"operator": name, "group": "", "count": 0, "mutants": []}
    for s in m.survivors:
        g = groups.setdefault(
            s.operator, {"operator": s.operator, "group": "", "count": 0, "mutants": []}
        )
        g["group"] = GROUP_LABELS.get(s.group, s.group)
        g["count"] += 1
        g["mutants"].append(
            {
                "configuration": s.configuration,
                "question_id": s.question_id,
                "trial": s.trial,
                # never cut: the change is not in the transcript the clip note points to
                "change": text_view(s.change, limit=max(CLIP_AT, len(s.change))),
                "anchor": anchor(s.configuration, s.question_id, s.trial),
            }
        )
    return {
        "total": _row("total", m.total),
        "mutated": m.mutated,
        "skipped": m.skipped,
        "seed": m.seed,
        "budget": m.budget,
        "configurations": [_row(k, s) for k, s in m.by_configuration.items()],
        "questions": [_row(k, s) for k, s in m.by_question.items()],
        "checks": [_row(k, s, CHECK_LABELS.get(k, "")) for k, s in m.by_check.items()],
        "operators": [_row(k, s) for k, s in m.by_operator.items()],
        "survivors": [g for g in groups.values() if g["count"]],
        "survivor_count": len(m.survivors),
        "bar": BAR_W,
    }
