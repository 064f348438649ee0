"""Report pieces per episode: its tool-call chain, highlighted evidence, a failure card."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolreplay.report.summary import mode_label
from toolreplay.report.text import Segment, text_view
from toolreplay.results.format import (
    CallRecord,
    EpisodeError,
    EpisodeResult,
    FailureModeRecord,
)


def _compact(value: Any) -> str:
    """Tool-call arguments on one line: ``宁德`` or ``39.9075, 116.3972``."""
    if isinstance(value, Mapping):
        return ", ".join(_compact(v) for v in value.values())
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _error_summary(error: EpisodeError) -> str:
    """A model API error in a few words: ``HTTP 500 from http://…`` or ``no response from …``."""
    status, endpoint = error.status, error.endpoint
    where = f" from {endpoint}" if endpoint else ""
    if status is not None:
        return f"HTTP {status}{where}" + (", not a chat completion" if status < 400 else "")
    return f"no response{where}"


def episode_error_view(ep: EpisodeResult, anchor: str) -> dict[str, Any] | None:
    """The model API error the episode ended on (``ep.error``) for display: ``{"anchor",
    "round", "summary", "status", "message"}`` (the message cut with "show all" when long);
    None when the episode did not end on one."""
    error = ep.error
    if error is None:
        return None
    message = error.message or error.text or ""
    return {
        "anchor": f"{anchor}-error",
        "round": ep.rounds + 1,
        "summary": _error_summary(error),
        "status": error.status,
        "message": text_view(message, lang=False),
    }


def chain_view(ep: EpisodeResult) -> dict[str, Any]:
    """The episode's tool calls grouped by round (``→`` between rounds, parallel calls side by
    side), then the pending tool calls the host never ran, then the error the episode ended
    on, if any."""
    calls = ep.calls
    if calls is None:  # older results: names only, one call per step
        calls = [
            CallRecord.model_validate({"round": i, "name": n})
            for i, n in enumerate(ep.tool_chain, 1)
        ]
    rounds: dict[int, list[dict[str, Any]]] = {}
    for call in calls:
        args = call.arguments
        rounds.setdefault(call.round, []).append(
            {"name": call.name, "args": None if args is None else text_view(_compact(args))}
        )
    pending = [
        {"name": c.name, "args": text_view(_compact(c.arguments))}
        for c in ep.pending_tool_calls or []
    ]
    error = ep.error
    return {
        "rounds": [rounds[k] for k in sorted(rounds)],
        "pending": pending,
        "error": None
        if error is None
        else (f"HTTP {error.status}" if error.status is not None else "no response"),
        "text": " → ".join(c.name for c in calls) or "(no tool call)",
    }


def episode_modes(ep: EpisodeResult) -> str:
    """The episode's failure modes as a space-separated attribute value (for filters)."""
    return " ".join(ep.modes)


def _text_of(message: Mapping[str, Any] | None) -> str | None:
    if message is None:
        return None
    content = message.get("content")
    return content if isinstance(content, str) else None


def highlight_segments(text: str, span: Any, quoted: str | None, mode: str) -> list[Segment] | None:
    """``text`` split so the evidence is its own marked segment: by ``span`` when it fits the
    text, else at the first occurrence of ``quoted``; None when neither locates it."""
    start = end = None
    if (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(x, int) for x in span)
        and 0 <= span[0] < span[1] <= len(text)
    ):
        start, end = span
    elif quoted:
        at = text.find(quoted)
        if at >= 0:
            start, end = at, at + len(quoted)
    if start is None or end is None:
        return None
    parts = [Segment(text[:start]), Segment(text[start:end], mode), Segment(text[end:])]
    return [p for p in parts if p.text]


PRETTY_WIDTH = 80


def pretty_json(value: Any, indent: int = 0, start: int | None = None) -> str:
    """``value`` as JSON indented by 2, except that an object or array whose one-line form fits
    within :data:`PRETTY_WIDTH` columns stays on one line: a forecast's
    ``{"value": 28.3, "unit": "°C"}`` reads as one line instead of four. ``indent`` is the
    block's indentation, ``start`` the column the value starts at (default ``indent``)."""
    flat = json.dumps(value, ensure_ascii=False)
    column = indent if start is None else start
    if not isinstance(value, (dict, list)) or not value or column + len(flat) < PRETTY_WIDTH:
        return flat
    inner = indent + 2
    pad = " " * inner
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            name = json.dumps(str(key), ensure_ascii=False) + ": "
            items.append(pad + name + pretty_json(item, inner, inner + len(name)))
        open_, close = "{", "}"
    else:
        items = [pad + pretty_json(item, inner) for item in value]
        open_, close = "[", "]"
    return open_ + "\n" + ",\n".join(items) + "\n" + " " * indent + close


def pretty_value(value: Any) -> tuple[str, bool]:
    """``(text, is_json)``: JSON text pretty-printed (:func:`pretty_json`) when it parses, other
    strings as they are, other values pretty-printed."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value, False
    return pretty_json(value), True


def one_line(value: Any) -> str:
    """Tool-call arguments as one line of JSON (a JSON string's text parsed first)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


def pending_calls_view(ep: EpisodeResult) -> list[dict[str, Any]]:
    """The episode's ``pending_tool_calls`` (requested in the last reply, never run)."""
    return [
        {"name": c.name, "arguments": text_view(one_line(c.arguments), lang=False)}
        for c in ep.pending_tool_calls or []
    ]


def message_anchor_of(anchor: str, index: int | None) -> str:
    return anchor if index is None else f"{anchor}-m{index}"


def failure_card(ep: EpisodeResult, fm: FailureModeRecord, anchor: str) -> dict[str, Any]:
    """One gallery card: the question, the final text (the evidence marked in it when it lies
    there), the evidence message otherwise, the tool calls the host never ran, and a link to
    the exact transcript message holding the evidence."""
    mode = fm.mode
    evidence = fm.evidence
    transcript = ep.transcript
    error = episode_error_view(ep, anchor) if mode == "error" else None
    index = None if evidence is None else evidence.message_index
    message = transcript[index] if index is not None and 0 <= index < len(transcript) else None
    answer = ep.answer
    span, quoted = (None, None) if evidence is None else (evidence.span, evidence.text)

    answer_marked = None
    evidence_message = None
    located = False
    target = _text_of(message)
    if error is not None:
        located = True  # the evidence is the error, shown in full (cut with "show all")
    elif message is None or target == answer:
        answer_marked = highlight_segments(answer, span, quoted, mode) if answer else None
        located = answer_marked is not None
    elif target is not None:
        marked = highlight_segments(target, span, quoted, mode)
        located = marked is not None
        evidence_message = {
            "index": index,
            "role": message.get("role", "?"),
            "text": text_view(marked or [Segment(target)]),
        }
    tool_call = None if evidence is None else evidence.tool_call
    evidence_call = (
        {"name": tool_call.name, "arguments": one_line(tool_call.arguments)} if tool_call else None
    )
    pending = pending_calls_view(ep)
    pending_plain = [
        {"name": p["name"], "arguments": one_line(c.arguments)}
        for p, c in zip(pending, ep.pending_tool_calls or [], strict=True)
    ]
    # link to the last message when the evidence names none (the answer is the last reply)
    link_index = index if message is not None else (len(transcript) - 1 if transcript else None)
    return {
        "mode": mode,
        "label": mode_label(mode),
        "explanation": text_view(fm.explanation or "", lang=False),
        "error": error,
        "configuration": ep.configuration,
        "question_id": ep.question_id,
        "question": text_view(ep.question),
        "passed": ep.passed,
        "anchor": anchor,
        "message_anchor": error["anchor"] if error else message_anchor_of(anchor, link_index),
        "message_index": link_index,
        "answer": text_view(answer_marked or [Segment(answer)]) if answer else None,
        "evidence_message": evidence_message,
        "quoted": text_view(quoted) if quoted and not located else None,
        # the evidence's tool call is shown apart only when it is not one of the pending ones
        "tool_call": None
        if evidence_call is None or evidence_call in pending_plain
        else {"name": evidence_call["name"], "arguments": text_view(evidence_call["arguments"])},
        "pending": pending,
    }
