"""Failure reasons beside the failure modes: the eval file's expectations an episode does not
meet.

An episode fails when the judge fails it, when it carries a failure mode, or when one of its
expectations (``results.json`` ``episodes[].expectations``, checked by
:mod:`toolreplay.judging.expectations`) is not met. The report shows every unmet expectation
as a failure reason labelled :data:`UNMET` ("Unmet expectation") next to the failure modes,
worded from the expectation's own record: ``"not met: <expected> — <explanation>"`` (e.g.
``not met: at most 2 rounds — 3 rounds, more than 2; round 3 is over the limit``). Nothing in
``results.json`` changes: the failure-mode taxonomy and its counts stay the classifier's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolreplay.results.format import EpisodeResult, FailureModeRecord

#: The failure reason an unmet expectation shows as (its badge class and gallery anchor).
UNMET = "unmet_expectation"

#: Its label, beside the failure modes' labels.
UNMET_LABEL = "Unmet expectation"


def unmet_text(expected: str, explanation: str) -> str:
    """``"not met: <expected> — <explanation>"``: the expectation in words and why it failed."""
    return f"not met: {expected} — {explanation}"


def unmet_views(ep: EpisodeResult) -> list[dict[str, Any]]:
    """The episode's unmet expectations, in the eval file's order: ``{"mode", "label", "kind",
    "text", "message_index"}`` each (``message_index``: the transcript message the check rests
    on, or None). Empty when every expectation is met or the question declares none."""
    out = []
    for x in ep.expectations or []:
        if x.passed:
            continue
        out.append(
            {
                "mode": UNMET,
                "label": UNMET_LABEL,
                "kind": x.kind,
                "text": unmet_text(x.expected, x.explanation),
                "message_index": None if x.evidence is None else x.evidence.message_index,
            }
        )
    return out


def unmet_records(ep: EpisodeResult) -> list[FailureModeRecord]:
    """The unmet expectations as gallery entries: a :class:`FailureModeRecord` each, mode
    :data:`UNMET`, explanation :func:`unmet_text`, the expectation's own evidence (for the
    card's quote and link; never written to results)."""
    return [
        FailureModeRecord(
            mode=UNMET, explanation=unmet_text(x.expected, x.explanation), evidence=x.evidence
        )
        for x in ep.expectations or []
        if not x.passed
    ]


def unmet_counts(episodes: Sequence[EpisodeResult]) -> dict[str, int]:
    """Per configuration, the episodes with at least one unmet expectation (none: left out)."""
    counts: dict[str, int] = {}
    for ep in episodes:
        if any(not x.passed for x in ep.expectations or []):
            counts[ep.configuration] = counts.get(ep.configuration, 0) + 1
    return counts
