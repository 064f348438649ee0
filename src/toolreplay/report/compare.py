"""The report's comparison with an earlier run (``toolreplay report --compare``): a view model
for the compare section of ``templates/report.html.j2``, built on :func:`toolreplay.diff.diff_runs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.diff import Run, diff_runs
from toolreplay.report.episodes import message_anchor_of, one_line
from toolreplay.report.summary import mode_label
from toolreplay.report.text import text_view
from toolreplay.results.format import EpisodeResult, Results


def compare_view(
    before: Run,
    results: Results,
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
) -> dict[str, Any]:
    """What changed since ``before``: comparability, scores, and each changed episode with
    a link to its transcript (and the first differing message) in this page."""
    d = diff_runs(before, Run(label="this report", results=results))
    where = {(ep.configuration, ep.question_id): anchors[i] for i, ep in enumerate(episodes)}
    earlier = {(ep.configuration, ep.question_id): ep for ep in before.results.episodes}
    changes = []
    for n, c in enumerate(d.changes):
        anchor = where[(c.configuration, c.question_id)]
        fd = c.first_difference
        changes.append(
            {
                "key": c.key,
                "flipped": c.flipped,
                "passed": c.passed,
                "gained": [mode_label(m) for m in c.gained],
                "lost": [mode_label(m) for m in c.lost],
                "rounds": c.rounds,
                "tool_calls": c.tool_calls,
                "stop_reason": c.stop_reason,
                "anchor": anchor,
                "side_by_side": _side_by_side(
                    earlier[(c.configuration, c.question_id)].transcript,
                    episodes[anchors.index(anchor)].transcript,
                    None if fd is None else fd.index,
                    anchor,
                )
                if n < SIDE_BY_SIDE_MAX
                else None,
                "first_difference": None
                if fd is None
                else {
                    "index": fd.index,
                    "a": text_view(fd.a),
                    "b": text_view(fd.b),
                    "anchor": message_anchor_of(anchor, fd.index)
                    if fd.index < len(episodes[anchors.index(anchor)].transcript)
                    else anchor,
                },
            }
        )
    return {
        "label": before.label,
        "comparable": d.comparable,
        "differing": d.differing,
        "aspects": [
            {"name": x.name, "same": x.same, "a": x.a, "b": x.b, "required": x.required}
            for x in d.aspects
        ],
        "scores": [{"name": s.name, "a": s.a, "b": s.b, "changed": s.changed} for s in d.scores],
        "changes": changes,
        "flips": len(d.flips),
        "only_a": list(d.only_a),
        "only_b": list(d.only_b),
        "identical": d.identical,
    }


#: Changed episodes shown side by side (the first ones, in the diff's order); the others are
#: in the changes table with their first differing message.
SIDE_BY_SIDE_MAX = 100


#: Characters of a message shown in the side-by-side comparison (the rest is in the transcript).
SIDE_CLIP = 400


def _brief(message: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A message in a few lines for the side-by-side view: its role, text (clipped) and the
    tool calls it makes (name and one-line arguments)."""
    if message is None:
        return None
    content = message.get("content")
    text = content if isinstance(content, str) else (None if content is None else str(content))
    calls = [
        f"{(c.get('function') or {}).get('name', '?')}"
        f"({one_line((c.get('function') or {}).get('arguments'))})"
        for c in message.get("tool_calls") or []
    ]
    return {
        "role": str(message.get("role", "?")),
        "text": None if text is None else text_view(text, limit=SIDE_CLIP),
        "calls": [text_view(c, lang=False) for c in calls],
    }


def _side_by_side(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    first: int | None,
    anchor: str,
) -> list[dict[str, Any]]:
    """The two transcripts message by message: ``{"index", "a", "b" (see :func:`_brief`;
    None past a transcript's end), "same", "first" (the first differing message), "anchor"
    (this run's message)}``."""
    rows = []
    for i in range(max(len(a), len(b))):
        ma = a[i] if i < len(a) else None
        mb = b[i] if i < len(b) else None
        rows.append(
            {
                "index": i,
                "a": _brief(ma),
                "b": _brief(mb),
                "same": ma == mb,
                "first": i == first,
                "anchor": message_anchor_of(anchor, i) if mb is not None else None,
            }
        )
    return rows
