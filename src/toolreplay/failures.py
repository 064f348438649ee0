"""Failure classifier: why an episode's answer failed, with the evidence each label rests on.

:func:`classify` gives an :class:`~toolreplay.episode.Episode` zero or more
:class:`FailureMode` labels (an episode can carry several):

=======================  ==================================================================
mode                     when
=======================  ==================================================================
``empty_answer``         form A: the final text is empty. Usually the last reply held tool
                         calls the host never executed (:attr:`Episode.pending_tool_calls`);
                         also a forced final round (tools withheld) that returned no text, a
                         reply with neither text nor tool calls, or an episode that ended on
                         a model API error before any answer.
``unfulfilled_promise``  form B: the final text announces an action still to be taken
                         (我将重新查询, 让我再查一下, 接下来我将查询, I'll look that up, let me
                         check...), holds no measured value, and the host has stopped.
``fabricated_value``     a measured value in the answer that no tool result of the episode
                         holds, after unit conversion and rounding to the answer's precision
                         (one label per such value).
``no_measurement``       a non-empty answer with no measured value and no promise.
=======================  ==================================================================

"Measured value" means what :func:`toolreplay.judge.find_measured_values` finds with the
judge's unit patterns, so numbers in dates (``2026-09-17``, ``9月17日``) and coordinates
(``31.2222, 121.4581``, ``北纬39.9度``) never count. The pass/fail verdict and the stop reason
are not failure modes; they are reported beside them.

Serialised shape of one label (:meth:`FailureMode.to_dict`, consumed by the HTML report)::

    {"mode": str, "explanation": str,
     "evidence": {"message_index": int | None,   # index into episode.transcript
                  "span": [start, end] | None,    # char offsets into that message's content
                  "text": str | None,             # the quoted sentence or value
                  "tool_call": {"name": str, "arguments": Any} | None}}
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from .episode import Episode, ToolCall
from .judge import (
    FULL_JUDGE,
    NO_VALUE,
    NUMBER,
    UNIT_PATTERNS,
    Judge,
    MeasuredValue,
    find_measured_values,
    relevant_values,
)

EMPTY_ANSWER = "empty_answer"
UNFULFILLED_PROMISE = "unfulfilled_promise"
FABRICATED_VALUE = "fabricated_value"
NO_MEASUREMENT = "no_measurement"
#: Every mode, in the order labels are given and counted.
FAILURE_MODES = (EMPTY_ANSWER, UNFULFILLED_PROMISE, FABRICATED_VALUE, NO_MEASUREMENT)


@dataclass(frozen=True)
class Evidence:
    """What a label rests on. ``message_index`` indexes ``episode.transcript``; ``span`` is
    ``(start, end)`` character offsets into that message's ``content``; ``text`` quotes the
    sentence or value; ``tool_call`` is the pending tool call the label points at. Any of
    them may be None."""

    message_index: int | None = None
    span: tuple[int, int] | None = None
    text: str | None = None
    tool_call: ToolCall | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape in the module docstring (tool call arguments parsed)."""
        return {
            "message_index": self.message_index,
            "span": list(self.span) if self.span is not None else None,
            "text": self.text,
            "tool_call": (
                {"name": self.tool_call.name, "arguments": self.tool_call.parsed_arguments()}
                if self.tool_call is not None
                else None
            ),
        }


@dataclass(frozen=True)
class FailureMode:
    """One label: ``mode`` (one of :data:`FAILURE_MODES`), a one-line ``explanation`` and
    the :class:`Evidence`."""

    mode: str
    explanation: str
    evidence: Evidence

    def to_dict(self) -> dict[str, Any]:
        """``{"mode", "explanation", "evidence": {...}}`` (see the module docstring)."""
        return {
            "mode": self.mode,
            "explanation": self.explanation,
            "evidence": self.evidence.to_dict(),
        }


# ---- promises ------------------------------------------------------------------------------

# A verb of looking something up, not in the completed aspect (查到, 查询了, 获取过 are done).
_ZH_VERB = (
    r"(?:查询|查詢|查看|查找|查|核实|核實|核对|核對|确认|確認|检查|檢查|获取|獲取|搜索|检索|檢索"
    r"|调用|調用|定位|看一?下|看看|试试|試試|尝试|嘗試)"
    r"(?![询詢看找]?[到了過过])"
)
# Up to 10 characters between the intent and the verb, none a negation or a clause break.
_ZH_GAP = r"(?:(?![不无没未别])[^，,。！？!?；;：:\n]){0,10}?"
_PROMISE_PATTERNS = (
    re.compile(
        r"(?:我们?|我們|咱们)(?:将|將|会|會|要|这就|這就|马上|馬上|立即|立刻|稍后|稍後|现在|現在"
        r"|再|先|需要|得|来|來|去|打算|准备|準備)" + _ZH_GAP + _ZH_VERB
    ),
    re.compile(r"[让讓]我们?" + _ZH_GAP + _ZH_VERB),
    # no subject: 马上为您查询 / 现在为您查询天气 / 這就幫您查詢
    re.compile(
        r"(?<![您你]可以)(?<![请請])(?:马上|馬上|现在|現在|这就|這就|立即|立刻)就?"
        r"(?:为您|帮您|给您|為您|幫您|給您)?(?:重新|再次|再)?" + _ZH_VERB
    ),
    re.compile(
        r"(?:接下来|下一步)[，,]?(?:我们?)?(?:将|会|要|再)?(?:为您|帮您|给您)?"
        r"(?:重新|再次|再|先|去|来|继续|进一步)*" + _ZH_VERB
    ),
    re.compile(r"正在(?:为您|帮您)?(?:重新)?" + _ZH_VERB),
    re.compile(r"请?稍等|请?稍候"),
    re.compile(
        r"\b(?:(?:I|we)(?:'ll|’ll| will| shall| am going to|'m going to|’m going to| are going to"
        r"|'re going to| need to| have to|'d like to| would like to)"
        r"|let me|let's|let us|next,? (?:I|we)(?:'ll|’ll| will))"
        r"(?!\s+(?:not|never|know)\b)(?:\s+[\w'-]+){0,3}?\s+"
        r"(?:check|look|query|re-?query|search|fetch|get|retrieve|find|call|verify|confirm"
        r"|try|pull|re-?check)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:one moment|just a moment|please wait|hold on)\b", re.IGNORECASE),
)

# A sentence ends at Chinese or English end punctuation or a line break. A full stop ends one
# only before whitespace or the end, so decimals (31.2222) stay inside their sentence.
_SENTENCE_END = re.compile(r"[。！？!?；;…]+|\.(?=\s|$)|\n+")


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` spans of the sentences of ``text``, end punctuation included,
    surrounding whitespace excluded, empty sentences skipped."""
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int) -> None:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))

    start = 0
    for m in _SENTENCE_END.finditer(text):
        add(start, m.start() if m.group().startswith("\n") else m.end())
        start = m.end()
    add(start, len(text))
    return spans


def find_promise(text: str) -> tuple[int, int] | None:
    """The span of the first sentence of ``text`` that announces an action still to be
    taken (a re-query, a check, a look-up), or None."""
    hits = [m.start() for p in _PROMISE_PATTERNS for m in p.finditer(text)]
    if not hits:
        return None
    first = min(hits)
    return next(((s, e) for s, e in sentences(text) if s <= first < e), (first, len(text)))


# ---- grounding ------------------------------------------------------------------------------

# Numbers under these keys are places, identifiers or times, never measurements.
_NOT_MEASUREMENT_KEYS = frozenset(
    {
        "latitude", "longitude", "lat", "lon", "lng", "elevation", "population", "id",
        "timezone", "utc_offset_seconds", "generationtime_ms", "time", "date", "interval",
    }
)  # fmt: skip

# unit regex → (kind, factor to the kind's canonical unit, offset); canonical: °C, mm, %, km/h.
_UNITS: tuple[tuple[re.Pattern[str], str, float, float], ...] = tuple(
    (re.compile(p, re.IGNORECASE), kind, factor, offset)
    for p, kind, factor, offset in (
        (r"^(?:°\s?F|℉|degrees?\s?(?:F|Fahrenheit)|fahrenheit)$", "temperature", 5 / 9, -32),
        (r"^(?:" + UNIT_PATTERNS["temperature"] + r")$", "temperature", 1.0, 0.0),
        (r"^(?:cm|厘米)$", "precipitation", 10.0, 0.0),
        (r"^(?:inch(?:es)?|in)$", "precipitation", 25.4, 0.0),
        (r"^(?:" + UNIT_PATTERNS["precipitation"] + r")$", "precipitation", 1.0, 0.0),
        (r"^(?:" + UNIT_PATTERNS["probability"] + r")$", "probability", 1.0, 0.0),
        (r"^(?:m/s|米/秒)$", "wind", 3.6, 0.0),
        (r"^(?:mph)$", "wind", 1.609344, 0.0),
        (r"^(?:kn|knots?)$", "wind", 1.852, 0.0),
        (r"^(?:" + UNIT_PATTERNS["wind"] + r")$", "wind", 1.0, 0.0),
    )
)


def to_canonical(value: float, unit: str) -> tuple[str, float, float] | None:
    """``(kind, value in the kind's canonical unit, factor)`` for a value in ``unit``
    (°C/℃/度/°F → °C, mm/毫米/cm/inch → mm, % → %, km/h/m/s/mph/kn → km/h); None for a unit
    this module does not know."""
    unit = unit.strip()
    for pattern, kind, factor, offset in _UNITS:
        if pattern.match(unit):
            return kind, (value + offset) * factor, factor
    return None


@dataclass(frozen=True)
class ToolValue:
    """A number found in a tool message: ``value`` as given, its ``unit`` (None for a bare
    number), the transcript ``message_index`` and the JSON ``path`` (``$`` for plain text)."""

    value: float
    unit: str | None
    message_index: int
    path: str

    @property
    def text(self) -> str:
        return f"{self.value:g}{self.unit or ''}"


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _walk(node: Any, key: str, path: str, index: int) -> Iterator[ToolValue]:
    if isinstance(node, Mapping):
        value, unit = node.get("value"), node.get("unit")
        if _is_number(value) and isinstance(unit, str):
            yield ToolValue(float(value), unit, index, f"{path}.value")
        for k, v in node.items():
            if _is_number(value) and isinstance(unit, str) and k in ("value", "unit"):
                continue
            yield from _walk(v, str(k), f"{path}.{k}", index)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, key, f"{path}[{i}]", index)
    elif _is_number(node):
        k = key.lower()
        if k not in _NOT_MEASUREMENT_KEYS and not k.endswith(("_id", "_code")):
            yield ToolValue(float(node), None, index, path)
    elif isinstance(node, str):
        for mv in find_measured_values(node):
            yield ToolValue(mv.value, mv.unit, index, path)


def tool_values(transcript: Sequence[Mapping[str, Any]]) -> tuple[ToolValue, ...]:
    """Every number in the transcript's tool messages.

    A tool message's content is parsed as JSON when it can be (else read as text). Found:
    ``{"value": 30.9, "unit": "°C"}`` pairs; other numbers (unit None) except those under
    coordinate, identifier and time keys (``latitude``, ``longitude``, ``population``,
    ``*_code``, ``*_id``...); measured values written in strings."""
    found: list[ToolValue] = []
    for index, message in enumerate(transcript):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if not isinstance(content, str):
            continue
        try:
            found.extend(_walk(json.loads(content), "", "$", index))
        except ValueError:
            found.extend(
                ToolValue(mv.value, mv.unit, index, "$") for mv in find_measured_values(content)
            )
    return tuple(found)


def _decimals(text: str, value: MeasuredValue) -> int:
    m = re.match(NUMBER, text[value.start : value.end])
    number = m.group(1) if m else ""
    return len(number.split(".", 1)[1]) if "." in number else 0


def grounding(
    text: str, value: MeasuredValue, pool: Iterable[ToolValue]
) -> tuple[ToolValue | None, ToolValue | None]:
    """``(match, nearest)`` for a measured ``value`` of ``text`` against tool values.

    ``match`` is a tool value equal to it after conversion to a common unit and rounding to
    the precision the answer wrote (26°C matches 26.1 °C, 2.3 m/s matches 8.1 km/h); a bare
    tool number matches when it rounds to the answer's number. ``nearest`` is the closest tool
    value of the same kind (for the explanation). Either may be None."""
    half = 0.5 * 10.0 ** -_decimals(text, value) + 1e-9
    mine = to_canonical(value.value, value.unit)
    nearest: tuple[float, ToolValue] | None = None
    for tv in pool:
        if tv.unit is None:
            if abs(tv.value - value.value) <= half:
                return tv, tv
            continue
        theirs = to_canonical(tv.value, tv.unit)
        if mine is None or theirs is None or theirs[0] != mine[0]:
            continue
        distance = abs(theirs[1] - mine[1])
        if distance <= half * mine[2]:
            return tv, tv
        if nearest is None or distance < nearest[0]:
            nearest = (distance, tv)
    return None, nearest[1] if nearest else None


# ---- classification -------------------------------------------------------------------------


def _final_index(episode: Episode) -> int | None:
    """Index of the final assistant reply in the transcript (None when the episode ended
    before one, e.g. on an API error)."""
    if episode.transcript and episode.transcript[-1].get("role") == "assistant":
        return len(episode.transcript) - 1
    return None


def _call_text(call: ToolCall) -> str:
    args = call.parsed_arguments()
    shown = json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args
    return f"{call.name}({shown})"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _empty(episode: Episode, index: int | None) -> FailureMode:
    pending = episode.pending_tool_calls
    last = episode.rounds[-1] if episode.rounds else None
    if pending:
        calls = ", ".join(_call_text(c) for c in pending)
        why = (
            f"the final reply has no text, only {_plural(len(pending), 'tool call')} the host "
            f'never executed: {calls}; the host stopped ({episode.stop_reason}) and returned ""'
        )
    elif episode.stop_reason == "error" or index is None:
        why = f"the episode ended before any answer (stop reason {episode.stop_reason})"
        if episode.error:
            why += f": {episode.error}"
    elif last is not None and not last.tools_offered:
        why = (
            f"tools were withheld in the final round (stop reason {episode.stop_reason}) and "
            "the model returned no text"
        )
    else:
        why = "the model's final reply has neither text nor tool calls"
    return FailureMode(
        EMPTY_ANSWER, why, Evidence(index, None, None, pending[0] if pending else None)
    )


def classify(
    episode: Episode, judge: Judge = FULL_JUDGE, measure: str | None = None
) -> tuple[FailureMode, ...]:
    """The failure modes of ``episode`` (see the module docstring), in :data:`FAILURE_MODES`
    order; ``()`` for an answer that holds only grounded measured values.

    ``judge`` supplies the unit patterns that decide what a measured value is (so with the
    narrow judge "26度" is no measurement); with ``measure`` (the question's declared measure)
    only values of that measure count as answering it, so "风速 12 km/h，气温我将重新查询" is
    still an unfulfilled promise for a temperature question. Every value is checked for
    grounding. Never raises for a well-formed episode."""
    index = _final_index(episode)
    answer = episode.answer
    if not answer.strip():
        return (_empty(episode, index),)
    values = find_measured_values(answer, judge.patterns)
    relevant = relevant_values(answer, values, measure)
    pending = episode.pending_tool_calls
    labels: list[FailureMode] = []
    if not relevant:
        promise = find_promise(answer)
        if promise is not None:
            start, end = promise
            sentence = answer[start:end]
            if pending:
                tail = f"; the reply's tool call {_call_text(pending[0])} was never executed"
            else:
                tail = ""
            labels.append(
                FailureMode(
                    UNFULFILLED_PROMISE,
                    "the answer announces an action still to be taken and holds no measured "
                    f"value{' of ' + measure if measure else ''}, but the host has stopped "
                    f"({episode.stop_reason}){tail}",
                    Evidence(index, promise, sentence, pending[0] if pending else None),
                )
            )
        elif measure != NO_VALUE:  # a `none` question needs no measured value
            labels.append(
                FailureMode(
                    NO_MEASUREMENT,
                    f"the answer holds no measured value with a unit "
                    f"{'for ' + measure + ' ' if measure else ''}({judge.name} judge) and "
                    "announces no further action",
                    Evidence(index, (0, len(answer)), answer, None),
                )
            )
    pool = tool_values(episode.transcript)
    for value in values:
        match, nearest = grounding(answer, value, pool)
        if match is not None:
            continue
        written = answer[value.start : value.end]
        if nearest is not None:
            near = f"; the nearest {value.kind} in a tool result is {nearest.text}"
        elif pool:
            near = f"; the tool results hold no {value.kind} value"
        else:
            near = "; no tool result was returned in this episode"
        labels.append(
            FailureMode(
                FABRICATED_VALUE,
                f"the answer states {written}, which appears in no tool result "
                f"(after unit conversion and rounding){near}",
                Evidence(index, (value.start, value.end), written, None),
            )
        )
    return tuple(labels)


def mode_counts(labels_per_episode: Iterable[Iterable[str]]) -> dict[str, int]:
    """How many episodes carry each mode (an episode with two fabricated values counts
    once), in :data:`FAILURE_MODES` order, modes with no episode left out."""
    counts = Counter(mode for modes in labels_per_episode for mode in set(modes))
    return {m: counts[m] for m in FAILURE_MODES if counts[m]}
