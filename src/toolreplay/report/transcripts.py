"""Transcripts and filters (the comparison with another run: :mod:`toolreplay.report.compare`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from toolreplay.report.episodes import (
    PRETTY_WIDTH,
    episode_error_view,
    episode_modes,
    highlight_segments,
    message_anchor_of,
    pretty_value,
)
from toolreplay.report.evidence import cited_fields, judge_citations, judge_values, pretty_spans
from toolreplay.report.labels import FAILURE_MODES
from toolreplay.report.origins import Transcript, failure_links, in_page_order, origin_view
from toolreplay.report.reasons import unmet_views
from toolreplay.report.summary import mode_label, ordered_names, question_trials, stop_view
from toolreplay.report.text import CLIP_AT, CLIP_JSON, Segment, plural_of, text_view
from toolreplay.results.format import (
    ConfigurationSummary,
    EpisodeResult,
    FailureModeRecord,
    GroundedValue,
    Results,
)
from toolreplay.wire.episode import REASONING_FIELDS, reasoning_text


def _marked(text: str, spans: Sequence[tuple[int, int, str]]) -> list[Segment]:
    """``text`` cut into segments, each span in ``spans`` (start, end, mark) its own marked
    segment; overlapping spans after the first are dropped."""
    out: list[Segment] = []
    at = 0
    for start, end, mark in sorted(spans):
        if start < at or not 0 <= start < end <= len(text):
            continue
        if start > at:
            out.append(Segment(text[at:start]))
        out.append(Segment(text[start:end], mark))
        at = end
    if at < len(text):
        out.append(Segment(text[at:]))
    return out


@lru_cache(maxsize=1024)
def _parsed_pretty(content: str, width: int) -> tuple[Any, tuple[str, dict[str, tuple[int, int]]]]:
    """A tool result's JSON text parsed and pretty-printed with its spans
    (:func:`~toolreplay.report.evidence.pretty_spans`), made once per text: a large run's
    transcripts repeat the same tool results many times (the same place's answer in every
    configuration and trial). ``ValueError`` when it is not JSON. Shared: do not mutate."""
    parsed = json.loads(content)
    return parsed, pretty_spans(parsed, width)


def _content(
    role: str,
    content: Any,
    modes: Sequence[FailureModeRecord],
    citations: Sequence[GroundedValue],
    width: int,
) -> tuple[dict[str, Any], bool, list[dict[str, Any]]]:
    """A message's content for display: ``(text, is_json, cited fields)``. A tool result (or
    any non-string content) that parses as JSON is pretty-printed, the fields the judge cites
    marked in it and listed first; failure evidence is marked by its span (prose) or its
    quoted text (JSON)."""
    parsed: Any = content
    is_json = False
    pretty: tuple[str, dict[str, tuple[int, int]]] | None = None
    if role == "tool" or not isinstance(content, str):
        if isinstance(content, str):
            try:
                parsed, pretty = _parsed_pretty(content, width)
                is_json = True
            except ValueError:
                parsed = content
        else:
            is_json = True
    if not is_json:
        raw = str(parsed)
        segments: list[Segment] = [Segment(raw)]
        for fm in modes:
            ev = fm.evidence
            if ev is None:
                continue
            marked = highlight_segments(raw, ev.span, ev.text, fm.mode)
            if marked:
                segments = marked
                break
        return text_view(segments, limit=CLIP_AT), False, []
    raw, spans = pretty if pretty is not None else pretty_spans(parsed, width)
    fields, cited = cited_fields(parsed, citations, spans)
    marks = [(a, b, "cited") for a, b in cited]
    for fm in modes:
        quoted = None if fm.evidence is None else fm.evidence.text
        if quoted and (at := raw.find(quoted)) >= 0:
            marks.append((at, at + len(quoted), fm.mode))
    segments = _marked(raw, marks) if marks else [Segment(raw)]
    cited_view = [{**f, "value": text_view(f["value"], lang=False)} for f in fields]
    return text_view(segments, limit=CLIP_JSON, lang=False), True, cited_view


def _message(
    index: int,
    message: Mapping[str, Any],
    call_names: dict[str, str],
    executed: set[str],
    marks: Mapping[int, list[FailureModeRecord]],
    anchor: str,
    citations: Mapping[int, list[GroundedValue]] | None = None,
    width: int = PRETTY_WIDTH,
) -> dict[str, Any]:
    """One transcript message (the chat-format dict it was recorded as) for display:
    ``{"index", "anchor", "role", "text" (None when content is None; else see
    :func:`text_view`), "json", "cited" (the fields of a tool result the judge cites: ``{"field",
    "value", "stated"}``, marked in the text too), "tool_calls":
    [{"id", "name", "arguments", "json", "run"}], "tool_call_id", "tool_name", "refusal",
    "reasoning" (None unless the message holds reasoning fields; else its readable text, see
    :func:`~toolreplay.wire.episode.reasoning_text`), "reasoning_fields" (their names),
    "modes"}``. The template shows the reasoning collapsed, only when there is some. Tool message
    content and tool-call arguments are pretty-printed when they parse as JSON; ``call_names``
    maps tool-call ids seen so far to tool names, so a tool message can name the call it
    answers; a tool call whose id no tool message answers (``executed``) has ``run`` False.
    ``marks`` maps message indexes to the failure modes whose evidence lies there,
    ``citations`` to the judge's values citing them (:func:`judge_citations`)."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    modes = list(marks.get(index, []))
    text = None
    is_json = False
    cited: list[dict[str, Any]] = []
    if content is not None:
        text, is_json, cited = _content(
            role, content, modes, (citations or {}).get(index, []), width
        )
    tool_calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name = str(function.get("name", "?"))
        own_id = str(call.get("id"))
        call_names[own_id] = name
        arguments, args_json = pretty_value(function.get("arguments"))
        tool_calls.append(
            {
                "id": call.get("id", ""),
                "name": name,
                "arguments": text_view(arguments, lang=not args_json),
                "json": args_json,
                "run": own_id in executed,
            }
        )
    call_id = message.get("tool_call_id")
    reasoning = reasoning_text(message)
    return {
        "index": index,
        "anchor": message_anchor_of(anchor, index),
        "role": role,
        "text": text,
        "json": is_json,
        "cited": cited,
        "tool_calls": tool_calls,
        "tool_call_id": call_id,
        "tool_name": call_names.get(str(call_id)) if call_id is not None else None,
        "refusal": message.get("refusal") if isinstance(message.get("refusal"), str) else None,
        "reasoning": None if reasoning is None else text_view(reasoning),
        "reasoning_fields": ", ".join(
            name for name in REASONING_FIELDS if message.get(name) is not None
        ),
        "modes": [{"mode": fm.mode, "label": mode_label(fm.mode)} for fm in modes],
    }


class _Lazy:
    """A sequence whose items are built when iterated (each time), so the template streams
    transcripts without the whole page's view of them being held at once."""

    def __init__(self, items: Sequence[Any], make: Callable[[Any], Any]) -> None:
        self._items, self._make = items, make

    def __iter__(self) -> Iterator[Any]:
        return (self._make(x) for x in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)


def _transcript(
    ep: EpisodeResult, anchor: str, lean: bool = False, system: str | None = None
) -> dict[str, Any]:
    """One episode's collapsible transcript (see :func:`_message` for each message), then the
    model API error it ended on (``error``: see
    :func:`toolreplay.report.episodes.episode_error_view`), which carries the ``error``
    label's badge. The judge's values link to the tool message and field they cite
    (``judge_values``). ``lean`` (a large run): lighter markup, JSON on wider lines, and a
    system message equal to ``system`` (the set's, shown once) is not repeated."""
    name = ep.configuration
    transcript = ep.transcript
    call_names: dict[str, str] = {}
    executed = {str(m.get("tool_call_id")) for m in transcript if m.get("role") == "tool"}
    marks: dict[int, list[FailureModeRecord]] = {}
    error = episode_error_view(ep, anchor)
    for fm in ep.failure_modes or []:
        if error is not None and fm.mode == "error":
            continue  # its evidence is the error, shown after the last message
        at = None if fm.evidence is None else fm.evidence.message_index
        if at is None or not 0 <= at < len(transcript):
            at = len(transcript) - 1  # evidence in the answer: the last reply
        marks.setdefault(at, []).append(fm)
    citations = judge_citations(ep)
    width = LEAN_WIDTH if lean else PRETTY_WIDTH
    shown = []
    for n, m in enumerate(transcript):
        if system is not None and m.get("role") == "system" and m.get("content") == system:
            shown.append({"index": n, "anchor": message_anchor_of(anchor, n), "shared": True})
            continue
        shown.append(_message(n, m, call_names, executed, marks, anchor, citations, width))
    return {
        "anchor": anchor,
        "configuration": name,
        "question_id": ep.question_id,
        "question": text_view(ep.question),
        "passed": ep.passed,
        "verdict": "" if ep.verdict is None else ep.verdict,
        # ExpectationRecord models: the template reads their attributes
        "expectations": ep.expectations or [],
        # failure reasons, first in the transcript: unmet expectations, then failure modes
        "unmet": unmet_views(ep),
        "reasons": [
            {"mode": fm.mode, "label": mode_label(fm.mode), "text": fm.explanation or ""}
            for fm in ep.failure_modes or []
        ],
        "judge_values": judge_values(ep, anchor, len(transcript)),
        "rounds": ep.rounds,
        "tool_calls": ep.tool_calls,
        "counts": f"{plural_of(ep.rounds, 'round')} · {plural_of(ep.tool_calls, 'tool call')}",
        "finish_reason": ep.finish_reason,
        "stop": stop_view(name, ep.stop_reason),
        "modes": [{"mode": m, "label": mode_label(m)} for m in ep.modes],
        "mode_names": episode_modes(ep),
        "messages": shown,
        "error": error,
        "error_modes": [{"mode": "error", "label": mode_label("error")}]
        if error is not None and "error" in ep.modes
        else [],
    }


#: JSON line width in the transcripts of a large run: one line, wrapped by the page (the
#: indentation of a thousand tool results would weigh more than their fields).
LEAN_WIDTH = 1_000_000


def shared_system(episodes: Sequence[EpisodeResult]) -> str | None:
    """The system prompt every episode opens with, when they all share one (else None)."""
    found: set[str] = set()
    for ep in episodes:
        first = ep.transcript[0] if ep.transcript else {}
        content = first.get("content")
        if first.get("role") != "system" or not isinstance(content, str):
            return None
        found.add(content)
        if len(found) > 1:
            return None
    return found.pop() if found else None


def transcripts_view(
    episodes: Sequence[EpisodeResult],
    configurations: Sequence[ConfigurationSummary],
    anchors: Sequence[str],
    lean: bool = False,
    system: str | None = None,
    *,
    results: Results | None = None,
    kept: dict[tuple[str, str, int], Transcript] | None = None,
) -> list[dict[str, Any]]:
    """Episodes grouped by configuration (configurations order, then any others), each
    followed by its later trials kept whole (``kept``, :func:`~toolreplay.report.origins.
    kept_trials`); each group's ``episodes`` are built lazily, as the template reaches them.
    Each transcript also has ``trial``, ``origin`` (its heading facts, from ``results``:
    :func:`~toolreplay.report.origins.origin_view`; None without ``results``) and ``nav``
    (``{"prev", "next"}`` failed transcripts' anchors, for a failed one; else None)."""
    names = ordered_names((ep.configuration for ep in episodes), [c.name for c in configurations])
    per_episode = in_page_order(episodes, anchors, kept or {})
    members_of = {
        name: [
            t for i, ep in enumerate(episodes) if ep.configuration == name for t in per_episode[i]
        ]
        for name in names
    }
    nav = failure_links([t for name in names for t in members_of[name]])
    counts = None if results is None else question_trials(results)

    def make(t: Transcript) -> dict[str, Any]:
        view = _transcript(t.record, t.anchor, lean, system)
        view["trial"] = t.trial
        view["origin"] = None if results is None else origin_view(t, results, counts)
        view["nav"] = nav.get(t.anchor)
        return view

    return [
        {"configuration": name, "episodes": _Lazy(members_of[name], make)} for name in names
    ]


#: Questions offered in the filter bar's list; a larger set is searched instead.
QUESTION_CHOICES = 40


def filters_view(
    episodes: Sequence[EpisodeResult], configurations: Sequence[ConfigurationSummary]
) -> dict[str, Any]:
    """The choices the filter bar offers: configurations, questions (a list only up to
    :data:`QUESTION_CHOICES` of them; beyond, the search box finds them), failure modes."""
    questions = {ep.question_id: ep.question for ep in episodes}
    modes = {m for ep in episodes for m in ep.modes}
    return {
        "configurations": ordered_names(
            (ep.configuration for ep in episodes), [c.name for c in configurations]
        ),
        "questions": [{"id": k, "question": v} for k, v in questions.items()]
        if len(questions) <= QUESTION_CHOICES
        else [],
        "modes": [
            {"mode": m, "label": mode_label(m)} for m in ordered_names(sorted(modes), FAILURE_MODES)
        ],
    }
