"""The catalogue of offline mutations: what :func:`mutants` makes of one recorded episode.

Every mutant is a new :class:`~toolreplay.wire.episode.Episode` built in memory (cassettes
are never touched) with one change of the kind a worse agent or a broken tool would make:

Group ``tool_result``: ``value_plus_one`` (a measured number +1 in its unit),
``value_times_ten``, ``value_digits_swapped`` (two adjacent digits swapped), ``results_swapped``
(two calls of one tool get each other's results), ``result_dropped`` (the call stays in the
model's reply, its result is gone), ``result_error`` (the result becomes a tool error),
``day_shifted`` (every date in the tool results one day later).

Group ``answer``: ``answer_number`` (a number of the answer +1), ``answer_unit_dropped``,
``answer_unit_changed`` (°C→°F, mm→cm, units→kg, €→$), ``answer_place`` (a place or entity of
the question named as another question's), ``answer_promise`` (the answer becomes "let me
check…"), ``answer_empty``.

Group ``trajectory``: ``call_dropped`` (a call, its result and its message gone),
``call_repeated`` (one call made twice), ``calls_reordered`` (two calls swap places),
``argument_changed`` (an argument names another question's place, or a number +1).

The transcript is rebuilt from the mutated rounds (the messages before the first model reply,
then each reply and its tool messages; an unchanged message kept as recorded, a changed tool
message keeping its other fields): an episode whose transcript is not that shape (a framework
that wrote something else on the wire) gets the answer mutations only.

**Equivalent** (:attr:`Mutant.equivalent`): a tool-result value the answer never cites (the
number, rounded to any of the answer's precisions, appears nowhere in the answer) while the
answer states numbers of its own — the answer cannot depend on it, so surviving it says
nothing about the eval file. An answer that states no number at all (a conclusion only:
"广州最热") may rest on any value, so no change to it is called equivalent.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult

#: The operators by group, in catalogue order (the module docstring says what each does).
OPERATORS: dict[str, tuple[str, ...]] = {
    "tool_result": (
        "value_plus_one", "value_times_ten", "value_digits_swapped", "results_swapped",
        "result_dropped", "result_error", "day_shifted",
    ),
    "answer": (
        "answer_number", "answer_unit_dropped", "answer_unit_changed", "answer_place",
        "answer_promise", "answer_empty",
    ),
    "trajectory": ("call_dropped", "call_repeated", "calls_reordered", "argument_changed"),
}  # fmt: skip

GROUP_OF = {op: group for group, ops in OPERATORS.items() for op in ops}

#: Unit spellings an answer writes after a number, with the unit each is changed into.
UNIT_CHANGES: dict[str, str] = {
    "°C": "°F", "℃": "℉", "°F": "°C", "摄氏度": "华氏度", "度": "华氏度", "mm": "cm",
    "毫米": "厘米", "%": " mm", "km/h": "mph", "units": "kg", "unit": "kg", "pcs": "kg",
    "EUR": "USD", "euros": "dollars", "euro": "dollar",
}  # fmt: skip
_BEFORE_CHANGES = {"€": "$", "$": "€"}

_NUMBER = re.compile(r"(?<![\w.\-])-?\d+(?:\.\d+)?")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Mutant:
    """One mutation of one episode: its ``operator`` (:data:`OPERATORS`), ``change`` (the exact
    change in words, e.g. ``tool result 1 (get_weather) $.current.temperature_2m.value:
    28.3 → 29.3``), the mutated ``episode`` and whether it is ``equivalent`` (module
    docstring)."""

    operator: str
    change: str
    episode: Episode
    equivalent: bool = False

    @property
    def group(self) -> str:
        """``tool_result``, ``answer`` or ``trajectory``."""
        return GROUP_OF[self.operator]


@dataclass(frozen=True)
class Context:
    """What the answer and argument mutations draw names from: ``places`` the episode's
    question is about (its places' queries and names, its entities) and ``others``, the names
    of the eval file's questions in file order, of which a mutation takes only those not in
    ``places`` (so the names of the other questions; one tuple shared by every context)."""

    places: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    units_before: tuple[str, ...] = ()


# ---- the transcript ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """An episode's transcript read along its rounds: the ``prefix`` (the messages before the
    first model reply), the message of each reply and tool result (by the object's id: an
    unchanged reply or result keeps its message as recorded, extra fields and argument
    spelling included), and each tool message by its call id."""

    episode: Episode  # keeps the ids below alive
    prefix: tuple[dict[str, Any], ...]
    replies: dict[int, dict[str, Any]]
    results: dict[int, dict[str, Any]]
    by_call: dict[str, dict[str, Any]]


def _prefix(episode: Episode) -> _Shape | None:
    """The transcript's shape when it is a prefix followed by each round's reply and its tool
    messages in order (None otherwise: the trajectory and tool-result mutations are then not
    made)."""
    t = episode.transcript
    n = 0
    while n < len(t) and t[n].get("role") != "assistant":
        n += 1
    replies: dict[int, dict[str, Any]] = {}
    results: dict[int, dict[str, Any]] = {}
    by_call: dict[str, dict[str, Any]] = {}
    pos = n
    for rnd in episode.rounds:
        if pos >= len(t) or t[pos].get("role") != "assistant":
            return None
        replies[id(rnd.reply)] = t[pos]
        pos += 1
        for r in rnd.results:
            if pos >= len(t) or t[pos].get("role") != "tool":
                return None
            if t[pos].get("tool_call_id") != r.call.id:
                return None
            results[id(r)] = by_call[r.call.id] = t[pos]
            pos += 1
    if pos != len(t):
        return None
    return _Shape(episode, t[:n], replies, results, by_call)


def _transcript(shape: _Shape, rounds: tuple[Round, ...]) -> tuple[dict[str, Any], ...]:
    messages = list(shape.prefix)
    for rnd in rounds:
        messages.append(shape.replies.get(id(rnd.reply)) or rnd.reply.to_message())
        for r in rnd.results:
            kept = shape.results.get(id(r))
            if kept is None:
                base = shape.by_call.get(r.call.id, {})
                kept = {**base, **r.to_message()}
            messages.append(kept)
    return tuple(messages)


def _rebuilt(episode: Episode, shape: _Shape, rounds: list[Round]) -> Episode:
    rounds = [r if r.index == i else replace(r, index=i) for i, r in enumerate(rounds)]
    return replace(episode, rounds=tuple(rounds), transcript=_transcript(shape, tuple(rounds)))


def _with_answer(episode: Episode, answer: str) -> Episode:
    """``episode`` whose final answer (and final assistant message) is ``answer``."""
    transcript = list(episode.transcript)
    if transcript and transcript[-1].get("role") == "assistant":
        transcript[-1] = {**transcript[-1], "content": answer}
    rounds = list(episode.rounds)
    if rounds and not rounds[-1].results:
        rounds[-1] = replace(rounds[-1], reply=replace(rounds[-1].reply, content=answer))
    return replace(episode, answer=answer, transcript=tuple(transcript), rounds=tuple(rounds))


# ---- tool results --------------------------------------------------------------------------


def _leaves(value: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _set(value: Any, path: str, new: Any) -> Any:
    """A copy of ``value`` with the leaf at ``path`` (as :func:`_leaves` names it) set."""
    if path == "$":
        return new
    if isinstance(value, dict):
        for k, v in value.items():
            if path == f"$.{k}" or path.startswith((f"$.{k}.", f"$.{k}[")):
                return {**value, k: _set(v, "$" + path[len(f"$.{k}") :], new)}
    if isinstance(value, list):
        m = re.match(r"\$\[(\d+)\]", path)
        if m:
            i = int(m.group(1))
            return [*value[:i], _set(value[i], "$" + path[m.end() :], new), *value[i + 1 :]]
    return value


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def cited(value: float, answer: str) -> bool:
    """Whether ``answer`` states ``value``: a number of the answer equals it rounded to that
    number's decimals (``28.3`` cites 28.34; ``28`` cites 28.3)."""
    for n in _numbers(answer):
        decimals = len(n.split(".")[1]) if "." in n else 0
        if abs(float(n) - round(value, decimals)) < 1e-9 or abs(float(n) - value) < 1e-9:
            return True
    return False


def _uncited(value: float, answer: str) -> bool:
    """The equivalence rule: ``answer`` states numbers, and ``value`` is not among them."""
    return bool(_numbers(answer)) and not cited(value, answer)


def _swap_digits(text: str) -> str | None:
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    for a, b in itertools.pairwise(digits):
        if b == a + 1 and text[a] != text[b]:
            swapped = text[:a] + text[b] + text[a] + text[b + 1 :]
            if not re.match(r"-?0\d", swapped):  # no leading zero: still a JSON number
                return swapped
    return None


def _value_changes(v: float | int) -> dict[str, Any]:
    text = json.dumps(v)
    swapped = _swap_digits(text)
    out: dict[str, Any] = {
        "value_plus_one": round(v + 1, 10) if isinstance(v, float) else v + 1,
        "value_times_ten": round(v * 10, 10) if isinstance(v, float) else v * 10,
    }
    if swapped is not None:
        out["value_digits_swapped"] = json.loads(swapped)
    return out


def _parsed(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def _results(episode: Episode) -> list[tuple[int, int, ToolResult]]:
    return [(i, j, r) for i, rnd in enumerate(episode.rounds) for j, r in enumerate(rnd.results)]


def _replace_result(rounds: list[Round], i: int, j: int, result: ToolResult | None) -> None:
    results = list(rounds[i].results)
    if result is None:
        del results[j]
    else:
        results[j] = result
    rounds[i] = replace(rounds[i], results=tuple(results))


def _tool_result_mutants(
    episode: Episode, prefix: _Shape, pick: Callable[[list[Any]], Any]
) -> Iterator[Mutant]:
    results = _results(episode)
    answer = episode.answer
    # values: one the answer cites and one it does not, each changed three ways
    sites_cited: list[tuple[Any, ...]] = []
    sites_other: list[tuple[Any, ...]] = []
    for n, (i, j, r) in enumerate(results):
        data = _parsed(r.content)
        for path, v in _leaves(data):
            if isinstance(v, bool) or not isinstance(v, int | float):
                continue
            (sites_cited if cited(v, answer) else sites_other).append((n, i, j, r, data, path, v))
    for sites in (sites_cited, sites_other):
        if not sites:
            continue
        n, i, j, r, data, path, v = pick(sites)
        for op, new in _value_changes(v).items():
            if new == v:
                continue
            rounds = list(episode.rounds)
            content = json.dumps(_set(data, path, new), ensure_ascii=False)
            _replace_result(rounds, i, j, replace(r, content=content))
            change = f"tool result {n + 1} ({r.call.name}) {path}: {v} → {new}"
            yield Mutant(op, change, _rebuilt(episode, prefix, rounds), _uncited(v, answer))
    # two calls of one tool swap results
    pairs = [
        (a, b) for a in range(len(results)) for b in range(a + 1, len(results))
        if results[a][2].call.name == results[b][2].call.name
        and results[a][2].content != results[b][2].content
    ]  # fmt: skip
    if pairs:
        a, b = pick(pairs)
        (ia, ja, ra), (ib, jb, rb) = results[a], results[b]
        rounds = list(episode.rounds)
        _replace_result(rounds, ia, ja, replace(ra, content=rb.content, error=rb.error))
        _replace_result(rounds, ib, jb, replace(rb, content=ra.content, error=ra.error))
        change = f"tool results {a + 1} and {b + 1} ({ra.call.name}) swapped"
        yield Mutant("results_swapped", change, _rebuilt(episode, prefix, rounds))
    if results:
        n = pick(list(range(len(results))))
        i, j, r = results[n]
        rounds = list(episode.rounds)
        _replace_result(rounds, i, j, None)
        change = f"tool result {n + 1} ({r.call.name}) dropped; its call stays in the reply"
        yield Mutant("result_dropped", change, _rebuilt(episode, prefix, rounds))
        rounds = list(episode.rounds)
        error = "tool failed: upstream service unavailable"
        content = json.dumps({"error": error})
        _replace_result(rounds, i, j, replace(r, content=content, error=error))
        change = f"tool result {n + 1} ({r.call.name}) → error {error!r}"
        yield Mutant("result_error", change, _rebuilt(episode, prefix, rounds))
    shifted = [(i, j, r, _shift_dates(r.content)) for i, j, r in results]
    if any(new != r.content for _, _, r, new in shifted):
        rounds = list(episode.rounds)
        for i, j, r, new in shifted:
            _replace_result(rounds, i, j, replace(r, content=new))
        first = next(m.group() for _, _, r, _ in shifted for m in [_DATE.search(r.content)] if m)
        change = f"every date in the tool results one day later ({first} → {_shift_dates(first)})"
        yield Mutant("day_shifted", change, _rebuilt(episode, prefix, rounds))


def _shift_dates(text: str) -> str:
    def later(m: re.Match[str]) -> str:
        try:
            day = date(int(m.group(1)), int(m.group(2)), int(m.group(3))) + timedelta(days=1)
        except ValueError:
            return m.group()
        return day.isoformat()

    return _DATE.sub(later, text)


# ---- the answer ----------------------------------------------------------------------------


def _answer_mutants(
    episode: Episode, context: Context, pick: Callable[[list[Any]], Any]
) -> Iterator[Mutant]:
    answer = episode.answer
    if not answer.strip():
        return
    numbers = list(_NUMBER.finditer(answer))
    if numbers:
        m = pick(numbers)
        text = m.group()
        whole, _, decimals = text.partition(".")
        new = str(int(whole) + 1) + (f".{decimals}" if decimals else "")
        if whole.startswith("-") and int(whole) == -1:
            new = "0" + (f".{decimals}" if decimals else "")
        mutated = answer[: m.start()] + new + answer[m.end() :]
        yield Mutant("answer_number", f"answer: {text} → {new}", _with_answer(episode, mutated))
    units = sorted(UNIT_CHANGES, key=len, reverse=True)
    unit_at = re.compile(r"(\d)(\s?)(" + "|".join(re.escape(u) for u in units) + r")(?![A-Za-z])")
    found = list(unit_at.finditer(answer))
    before = [u for u in (*_BEFORE_CHANGES, *context.units_before) if u and u in answer]
    if found:
        m = pick(found)
        unit = m.group(3)
        dropped = unit_at.sub(lambda x: x.group(1), answer)
        yield Mutant("answer_unit_dropped", f"answer: every {unit!r} after a number removed",
                     _with_answer(episode, dropped))  # fmt: skip
        new_unit = UNIT_CHANGES[unit]
        changed = answer[: m.start(3)] + new_unit + answer[m.end(3) :]
        yield Mutant("answer_unit_changed", f"answer: {unit!r} → {new_unit!r} (value kept)",
                     _with_answer(episode, changed))  # fmt: skip
    elif before:
        unit = before[0]
        yield Mutant("answer_unit_dropped", f"answer: every {unit!r} removed",
                     _with_answer(episode, answer.replace(unit, "")))  # fmt: skip
        new_unit = _BEFORE_CHANGES.get(unit, "$")
        yield Mutant("answer_unit_changed", f"answer: {unit!r} → {new_unit!r} (value kept)",
                     _with_answer(episode, answer.replace(unit, new_unit, 1)))  # fmt: skip
    named = [p for p in context.places if p and p in answer]
    others = [o for o in context.others if o and o not in answer and o not in context.places]
    if named and others:
        name, other = named[0], pick(others)
        yield Mutant("answer_place", f"answer: {name!r} → {other!r}",
                     _with_answer(episode, answer.replace(name, other)))  # fmt: skip
    promise = "让我查一下……" if _CJK.search(answer) else "Let me check that for you…"
    yield Mutant("answer_promise", f"answer → {promise!r}", _with_answer(episode, promise))
    yield Mutant("answer_empty", "answer → ''", _with_answer(episode, ""))


# ---- the trajectory ------------------------------------------------------------------------


def _without_call(rnd: Round, call_id: str) -> Round:
    calls = tuple(c for c in rnd.reply.tool_calls if c.id != call_id)
    results = tuple(r for r in rnd.results if r.call.id != call_id)
    return replace(rnd, reply=replace(rnd.reply, tool_calls=calls), results=results)


def _with_calls(rnd: Round, pairs: list[tuple[ToolCall, ToolResult]]) -> Round:
    reply: ModelReply = replace(rnd.reply, tool_calls=tuple(c for c, _ in pairs))
    return replace(rnd, reply=reply, results=tuple(r for _, r in pairs))


def _trajectory_mutants(
    episode: Episode, prefix: _Shape, context: Context, pick: Callable[[list[Any]], Any]
) -> Iterator[Mutant]:
    results = _results(episode)
    if not results:
        return
    n = pick(list(range(len(results))))
    i, _, r = results[n]
    rounds = list(episode.rounds)
    rounds[i] = _without_call(rounds[i], r.call.id)
    if not rounds[i].reply.tool_calls and not rounds[i].reply.content:
        del rounds[i]
    yield Mutant("call_dropped", f"tool call {n + 1} {r.call.signature()} dropped",
                 _rebuilt(episode, prefix, rounds))  # fmt: skip
    rounds = list(episode.rounds)
    again = ToolCall(f"{r.call.id}_again", r.call.name, r.call.arguments)
    pairs = [(x.call, x) for x in rounds[i].results] + [(again, replace(r, call=again))]
    rounds[i] = _with_calls(rounds[i], pairs)
    yield Mutant("call_repeated", f"tool call {n + 1} {r.call.signature()} made twice",
                 _rebuilt(episode, prefix, rounds))  # fmt: skip
    if len(results) >= 2:
        a, b = pick([(a, a + 1) for a in range(len(results) - 1)])
        (ia, ja, ra), (ib, jb, rb) = results[a], results[b]
        rounds = list(episode.rounds)
        ca = [(x.call, x) for x in rounds[ia].results]
        cb = ca if ia == ib else [(x.call, x) for x in rounds[ib].results]
        ca[ja], cb[jb] = (rb.call, rb), (ra.call, ra)
        rounds[ia] = _with_calls(rounds[ia], ca)
        rounds[ib] = _with_calls(rounds[ib], cb)
        change = f"tool calls {a + 1} ({ra.call.name}) and {b + 1} ({rb.call.name}) reordered"
        yield Mutant("calls_reordered", change, _rebuilt(episode, prefix, rounds))
    args = r.call.parsed_arguments()
    if isinstance(args, dict) and args:
        key = sorted(args)[0]
        old = args[key]
        others = [o for o in context.others if o != old and o not in context.places]
        if isinstance(old, bool) or old is None:
            new: Any = not old
        elif isinstance(old, int | float):
            new = old + 1
        elif isinstance(old, str) and others:
            new = others[0]
        else:
            new = str(old)[::-1] + "x"
        call = replace(r.call, arguments=json.dumps({**args, key: new}, ensure_ascii=False))
        rounds = list(episode.rounds)
        pairs = [
            (call, replace(x, call=call)) if x.call.id == r.call.id else (x.call, x)
            for x in rounds[i].results
        ]
        rounds[i] = _with_calls(rounds[i], pairs)
        change = f"tool call {n + 1} ({r.call.name}) argument {key}: {old!r} → {new!r}"
        yield Mutant("argument_changed", change, _rebuilt(episode, prefix, rounds))


# ---- all of them ---------------------------------------------------------------------------


def mutants(episode: Episode, context: Context, pick: Callable[[list[Any]], Any]) -> list[Mutant]:
    """Every mutant of ``episode`` the catalogue makes, in catalogue order; ``pick`` chooses
    one site among several (a seeded ``random.Random(...).choice``, so the result is
    deterministic). A mutant identical to the episode is left out. Never raises for a
    well-formed episode."""
    prefix = _prefix(episode)
    made: list[Mutant] = []
    if prefix is not None:
        made += _tool_result_mutants(episode, prefix, pick)
    made += _answer_mutants(episode, context, pick)
    if prefix is not None:
        made += _trajectory_mutants(episode, prefix, context, pick)
    order = {op: k for k, op in enumerate(GROUP_OF)}
    made.sort(key=lambda m: order[m.operator])
    return [m for m in made if m.episode != episode]


__all__ = ["GROUP_OF", "OPERATORS", "UNIT_CHANGES", "Context", "Mutant", "cited", "mutants"]
