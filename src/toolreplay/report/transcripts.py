"""Transcripts, filters and the comparison with another run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from toolreplay.diff import Run, diff_runs
from toolreplay.report.episodes import (
    _episode_error,
    _episode_modes,
    _highlight,
    _message_anchor,
    _pretty,
)
from toolreplay.report.labels import FAILURE_MODES
from toolreplay.report.summary import _mode_label, _ordered, _stop
from toolreplay.report.text import CLIP_AT, CLIP_JSON, Segment, _plural, _text
from toolreplay.wire.episode import REASONING_FIELDS, reasoning_text


def _message(
    index: int,
    message: Mapping[str, Any],
    call_names: dict[str, str],
    executed: set[str],
    marks: Mapping[int, list[Mapping[str, Any]]],
    anchor: str,
) -> dict:
    """One transcript message for display: ``{"index", "anchor", "role", "text" (None when
    content is None; else see :func:`_text`), "json", "tool_calls": [{"id", "name",
    "arguments", "json", "run"}], "tool_call_id", "tool_name", "refusal", "reasoning" (None
    unless the message holds reasoning fields; else its readable text, see
    :func:`~toolreplay.wire.episode.reasoning_text`), "reasoning_fields" (their names),
    "modes"}``. The template shows the reasoning collapsed, only when there is some. Tool message
    content and tool-call arguments are pretty-printed when they parse as JSON; ``call_names``
    maps tool-call ids seen so far to tool names, so a tool message can name the call it
    answers; a tool call whose id no tool message answers (``executed``) has ``run`` False.
    ``marks`` maps message indexes to the failure modes whose evidence lies there."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    modes = list(marks.get(index, []))
    text = None
    is_json = False
    if content is not None:
        raw, is_json = (
            _pretty(content) if role == "tool" or not isinstance(content, str) else (content, False)
        )
        segments: list[Segment] = [Segment(raw)]
        for fm in modes:
            ev = fm.get("evidence") or {}
            marked = _highlight(raw, ev.get("span"), ev.get("text"), fm["mode"])
            if marked and not is_json:
                segments = marked
                break
        text = _text(segments, limit=CLIP_JSON if is_json else CLIP_AT, lang=not is_json)
    tool_calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name = str(function.get("name", "?"))
        own_id = str(call.get("id"))
        call_names[own_id] = name
        arguments, args_json = _pretty(function.get("arguments"))
        tool_calls.append(
            {
                "id": call.get("id", ""),
                "name": name,
                "arguments": _text(arguments, lang=not args_json),
                "json": args_json,
                "run": own_id in executed,
            }
        )
    call_id = message.get("tool_call_id")
    reasoning = reasoning_text(message)
    return {
        "index": index,
        "anchor": _message_anchor(anchor, index),
        "role": role,
        "text": text,
        "json": is_json,
        "tool_calls": tool_calls,
        "tool_call_id": call_id,
        "tool_name": call_names.get(str(call_id)) if call_id is not None else None,
        "refusal": message.get("refusal") if isinstance(message.get("refusal"), str) else None,
        "reasoning": None if reasoning is None else _text(reasoning),
        "reasoning_fields": ", ".join(
            name for name in REASONING_FIELDS if message.get(name) is not None
        ),
        "modes": [{"mode": fm["mode"], "label": _mode_label(fm["mode"])} for fm in modes],
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


def _transcript(ep: Mapping[str, Any], anchor: str) -> dict[str, Any]:
    """One episode's collapsible transcript (see :func:`_message` for each message), then the
    model API error it ended on (``error``: see :func:`toolreplay.report.episodes._episode_error`),
    which carries the ``error`` label's badge."""
    name = ep["configuration"]
    transcript = ep["transcript"]
    call_names: dict[str, str] = {}
    executed = {str(m.get("tool_call_id")) for m in transcript if m.get("role") == "tool"}
    marks: dict[int, list[Mapping[str, Any]]] = {}
    error = _episode_error(ep, anchor)
    for fm in ep.get("failure_modes", []):
        if error is not None and fm["mode"] == "error":
            continue  # its evidence is the error, shown after the last message
        ev = fm.get("evidence") or {}
        at = ev.get("message_index")
        if not isinstance(at, int) or not 0 <= at < len(transcript):
            at = len(transcript) - 1  # evidence in the answer: the last reply
        marks.setdefault(at, []).append(fm)
    return {
        "anchor": anchor,
        "configuration": name,
        "question_id": ep["question_id"],
        "question": _text(ep["question"]),
        "passed": ep["passed"],
        "verdict": ep.get("verdict", ""),
        "expectations": ep.get("expectations", []),
        "rounds": ep["rounds"],
        "tool_calls": ep["tool_calls"],
        "counts": f"{_plural(ep['rounds'], 'round')} · {_plural(ep['tool_calls'], 'tool call')}",
        "finish_reason": ep.get("finish_reason"),
        "stop": _stop(name, ep["stop_reason"]),
        "modes": [
            {"mode": m, "label": _mode_label(m)}
            for m in dict.fromkeys(f["mode"] for f in ep.get("failure_modes", []))
        ],
        "mode_names": _episode_modes(ep),
        "messages": [
            _message(n, m, call_names, executed, marks, anchor) for n, m in enumerate(transcript)
        ],
        "error": error,
        "error_modes": [{"mode": "error", "label": _mode_label("error")}]
        if error is not None and any(f["mode"] == "error" for f in ep.get("failure_modes", []))
        else [],
    }


def _transcripts(
    episodes: Sequence[Mapping[str, Any]],
    configurations: Sequence[Mapping[str, Any]],
    anchors: Sequence[str],
) -> list[dict[str, Any]]:
    """Episodes grouped by configuration (configurations order, then any others); each
    group's ``episodes`` are built lazily, as the template reaches them."""
    names = _ordered((ep["configuration"] for ep in episodes), [c["name"] for c in configurations])
    groups = []
    for name in names:
        members = [i for i, ep in enumerate(episodes) if ep["configuration"] == name]
        groups.append(
            {
                "configuration": name,
                "episodes": _Lazy(members, lambda i: _transcript(episodes[i], anchors[i])),
            }
        )
    return groups


def _filters(
    episodes: Sequence[Mapping[str, Any]], configurations: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The choices the filter bar offers: configurations, questions, failure modes."""
    questions = {ep["question_id"]: ep["question"] for ep in episodes}
    modes = {f["mode"] for ep in episodes for f in ep.get("failure_modes", [])}
    return {
        "configurations": _ordered(
            (ep["configuration"] for ep in episodes), [c["name"] for c in configurations]
        ),
        "questions": [{"id": k, "question": v} for k, v in questions.items()],
        "modes": [
            {"mode": m, "label": _mode_label(m)} for m in _ordered(sorted(modes), FAILURE_MODES)
        ],
    }


def _compare(
    before: Run,
    results: Mapping[str, Any],
    episodes: Sequence[Mapping[str, Any]],
    anchors: Sequence[str],
) -> dict[str, Any]:
    """What changed since ``before``: comparability, scores, and each changed episode with
    a link to its transcript (and the first differing message) in this page."""
    d = diff_runs(before, Run(label="this report", results=results))
    where = {(ep["configuration"], ep["question_id"]): anchors[i] for i, ep in enumerate(episodes)}
    changes = []
    for c in d.changes:
        anchor = where[(c.configuration, c.question_id)]
        fd = c.first_difference
        changes.append(
            {
                "key": c.key,
                "flipped": c.flipped,
                "passed": c.passed,
                "gained": [_mode_label(m) for m in c.gained],
                "lost": [_mode_label(m) for m in c.lost],
                "rounds": c.rounds,
                "tool_calls": c.tool_calls,
                "stop_reason": c.stop_reason,
                "anchor": anchor,
                "first_difference": None
                if fd is None
                else {
                    "index": fd["index"],
                    "a": _text(fd["a"]),
                    "b": _text(fd["b"]),
                    "anchor": _message_anchor(anchor, fd["index"])
                    if fd["index"] < len(episodes[anchors.index(anchor)]["transcript"])
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
        "scores": list(d.scores),
        "changes": changes,
        "flips": len(d.flips),
        "only_a": list(d.only_a),
        "only_b": list(d.only_b),
        "identical": d.identical,
    }
