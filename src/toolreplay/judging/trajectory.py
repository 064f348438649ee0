"""Trajectory expectations: what an episode's tool calls, rounds and stop reason should be.

One check per kind of :mod:`toolreplay.evals.expectations` (``tool_called``, ``tool_not_called``,
``tool_sequence``, ``tool_arguments``, ``max_rounds``, ``max_tool_calls``, ``stop_reason``),
each ``(expectation, episode) -> (passed, explanation, evidence)``; :data:`TRAJECTORY_CHECKS`
maps each expectation type to its check. Tool calls are the calls the host executed, in order
(:func:`executed_calls`), each with the transcript index of the assistant message that made it;
``tool_not_called`` also fails on a call left pending in the final reply. Used through
:func:`toolreplay.judging.expectations.check_expectations`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolreplay.evals import (
    MaxRounds,
    MaxToolCalls,
    StopReason,
    ToolArguments,
    ToolCalled,
    ToolNotCalled,
    ToolSequence,
)
from toolreplay.judging.failures import Evidence, final_index
from toolreplay.wire.episode import Episode, ToolCall


@dataclass(frozen=True)
class Call:
    """An executed tool call with the transcript index of the assistant message that made it."""

    call: ToolCall
    message_index: int | None
    round: int


def executed_calls(episode: Episode) -> list[Call]:
    """The executed tool calls in order, each with its message index and round."""
    where: dict[str, int] = {}
    for i, m in enumerate(episode.transcript):
        for tc in m.get("tool_calls") or []:
            where.setdefault(str(tc.get("id")), i)
    return [
        Call(r.call, where.get(r.call.id), rnd.index) for rnd in episode.rounds for r in rnd.results
    ]


def _pending(episode: Episode) -> list[Call]:
    index = final_index(episode)
    last = episode.rounds[-1].index if episode.rounds else 0
    return [Call(c, index, last) for c in episode.pending_tool_calls]


def _shown(call: ToolCall) -> str:
    args = call.parsed_arguments()
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return f"{call.name}({text})"


def _chain(calls: Sequence[Call]) -> str:
    return " → ".join(c.call.name for c in calls) or "no tool call"


def _at(call: Call | None) -> Evidence:
    if call is None:
        return Evidence()
    return Evidence(call.message_index, None, _shown(call.call), call.call)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


# ---- trajectory ----------------------------------------------------------------------------


def _tool_called(e: ToolCalled, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = executed_calls(episode)
    made = [c for c in calls if c.call.name == e.tool]
    if not made:
        return False, f"{e.tool} was never called (calls: {_chain(calls)})", Evidence()
    rounds = ", ".join(str(r) for r in dict.fromkeys(c.round for c in made))
    ok = len(made) >= e.at_least
    why = f"{e.tool} was called {_times(len(made))} (round {rounds})"
    if not ok:
        why += f", fewer than the {e.at_least} expected"
    return ok, why, _at(made[0])


def _tool_not_called(e: ToolNotCalled, episode: Episode) -> tuple[bool, str, Evidence]:
    for c in (*executed_calls(episode), *_pending(episode)):
        if c.call.name == e.tool:
            pending = " (left pending: the host never ran it)" if c in _pending(episode) else ""
            return (
                False,
                f"{e.tool} was called in round {c.round}: {_shown(c.call)}{pending}",
                _at(c),
            )
    return True, f"{e.tool} was not called (calls: {_chain(executed_calls(episode))})", Evidence()


def _sequence(e: ToolSequence, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = executed_calls(episode)
    names = [c.call.name for c in calls]
    want = list(e.tools)
    made = f"made {_chain(calls)}"
    if e.mode == "exact":
        for i, (got, exp) in enumerate(zip(names, want, strict=False)):
            if got != exp:
                return False, f"call {i + 1} is {got}, expected {exp}; {made}", _at(calls[i])
        if len(names) != len(want):
            extra = calls[len(want)] if len(names) > len(want) else None
            why = (
                f"{len(names) - len(want)} call(s) more than the {len(want)} expected"
                if extra
                else f"{want[len(names)]} (call {len(names) + 1}) was never made"
            )
            return False, f"{why}; {made}", _at(extra)
        return True, f"the calls are exactly {_chain(calls)}", _at(calls[0] if calls else None)
    if e.mode == "in_order":
        pos = 0
        for c in calls:
            if pos < len(want) and c.call.name == want[pos]:
                pos += 1
        if pos < len(want):
            done = " → ".join(want[:pos]) or "none of them"
            return (
                False,
                f"{want[pos]} (expected call {pos + 1} in order) was not made after {done}; {made}",
                Evidence(),
            )
        return True, f"{' → '.join(want)} were called in this order; {made}", Evidence()
    have, need = Counter(names), Counter(want)
    missing = sorted((need - have).elements())
    unexpected = sorted((have - need).elements())
    first = next((c for c in calls if c.call.name in set(unexpected)), None)
    gaps = "; ".join(
        p
        for p in (
            f"missing {', '.join(missing)}" if missing else "",
            f"not expected {', '.join(unexpected)}" if unexpected else "",
        )
        if p
    )
    ok = {
        "any_order": not missing and not unexpected,
        "subset": not unexpected,
        "superset": not missing,
    }[e.mode]
    what = {
        "any_order": "the expected calls in some order",
        "subset": "only expected calls",
        "superset": "every expected call",
    }[e.mode]
    if ok:
        return True, f"{made}: {what}", Evidence()
    return False, f"{made}, not {what}: {gaps}", _at(first)


def _lookup(args: Any, dotted: str) -> tuple[bool, Any]:
    node = args
    for part in dotted.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def subset_mismatch(expected: Any, actual: Any, tolerance: float = 0.0, at: str = "") -> str | None:
    """Where ``actual`` does not hold ``expected`` as a JSON subset (objects: every expected
    key, recursively; lists: same length, item by item; numbers within ``tolerance``; else
    equal), in words; None when it does."""
    where = at or "the arguments"
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where} is {json.dumps(actual, ensure_ascii=False)}, not an object"
        for k, v in expected.items():
            if k not in actual:
                return f"{(at + '.' if at else '')}{k} is missing"
            found = subset_mismatch(v, actual[k], tolerance, f"{at + '.' if at else ''}{k}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return (
                f"{where} is {json.dumps(actual, ensure_ascii=False)}, expected "
                f"{json.dumps(expected, ensure_ascii=False)}"
            )
        for i, (x, y) in enumerate(zip(expected, actual, strict=True)):
            found = subset_mismatch(x, y, tolerance, f"{at}[{i}]")
            if found:
                return found
        return None
    number = (int, float)
    if (
        isinstance(expected, number)
        and isinstance(actual, number)
        and not isinstance(expected, bool)
        and not isinstance(actual, bool)
    ):
        if math.isclose(expected, actual, rel_tol=0.0, abs_tol=tolerance):
            return None
        within = f" (tolerance {tolerance:g})" if tolerance else ""
        return f"{where} is {actual}, expected {expected}{within}"
    if expected == actual:
        return None
    return (
        f"{where} is {json.dumps(actual, ensure_ascii=False)}, expected "
        f"{json.dumps(expected, ensure_ascii=False)}"
    )


def _arguments_mismatch(e: ToolArguments, call: ToolCall) -> str | None:
    args = call.parsed_arguments()
    if isinstance(args, str):
        return f"its arguments are not JSON: {args!r}"
    found = subset_mismatch(dict(e.equals), args, e.tolerance) if e.equals else None
    if found:
        return found
    for key, pattern in e.matches.items():
        present, value = _lookup(args, key)
        if not present:
            return f"{key} is missing"
        shown = json.dumps(value, ensure_ascii=False)
        if not isinstance(value, str):
            return f"{key} is {shown}, not a string to match /{pattern}/"
        if re.search(pattern, value) is None:
            return f"{key} is {shown}, which does not match /{pattern}/"
    return None


def _tool_arguments(e: ToolArguments, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = [c for c in executed_calls(episode) if c.call.name == e.tool]
    if not calls:
        return (
            False,
            f"{e.tool} was never called (calls: {_chain(executed_calls(episode))})",
            Evidence(),
        )
    checked = [(c, _arguments_mismatch(e, c.call)) for c in calls]
    bad = [(c, why) for c, why in checked if why]
    good = [c for c, why in checked if not why]
    if e.calls == "all" and bad:
        c, why = bad[0]
        return False, f"{_shown(c.call)} in round {c.round}: {why}", _at(c)
    if e.calls == "any" and not good:
        c, why = bad[0]
        more = f" (and {len(bad) - 1} other call(s) of {e.tool})" if len(bad) > 1 else ""
        return False, f"{_shown(c.call)} in round {c.round}: {why}{more}", _at(c)
    c = good[0]
    every = "every call of " + e.tool if e.calls == "all" else _shown(c.call)
    return True, f"{every} has the expected arguments (round {c.round})", _at(c)


def _round_index(episode: Episode, n: int) -> int | None:
    """Transcript index of the assistant message of round ``n`` (1-based)."""
    seen = 0
    for i, m in enumerate(episode.transcript):
        if m.get("role") == "assistant":
            seen += 1
            if seen == n:
                return i
    return None


def _max_rounds(e: MaxRounds, episode: Episode) -> tuple[bool, str, Evidence]:
    n = len(episode.rounds)
    if n <= e.limit:
        return True, f"{n} round(s), within {e.limit}", Evidence()
    return (
        False,
        f"{n} rounds, more than {e.limit}; round {e.limit + 1} is over the limit",
        Evidence(_round_index(episode, e.limit + 1)),
    )


def _max_tool_calls(e: MaxToolCalls, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = executed_calls(episode)
    if len(calls) <= e.limit:
        return True, f"{len(calls)} tool call(s), within {e.limit}", Evidence()
    over = calls[e.limit]
    return (
        False,
        f"{len(calls)} tool calls, more than {e.limit} ({_chain(calls)}); call {e.limit + 1} "
        f"is {_shown(over.call)}",
        _at(over),
    )


def _stop_reason(e: StopReason, episode: Episode) -> tuple[bool, str, Evidence]:
    ok = episode.stop_reason in e.reasons
    wanted = " or ".join(e.reasons)
    why = f"the episode stopped: {episode.stop_reason}" + ("" if ok else f", expected {wanted}")
    return ok, why, Evidence(final_index(episode))


#: Expectation type → its check.
TRAJECTORY_CHECKS: dict[type, Any] = {
    ToolCalled: _tool_called,
    ToolNotCalled: _tool_not_called,
    ToolSequence: _sequence,
    ToolArguments: _tool_arguments,
    MaxRounds: _max_rounds,
    MaxToolCalls: _max_tool_calls,
    StopReason: _stop_reason,
}


__all__ = ["TRAJECTORY_CHECKS", "Call", "executed_calls", "subset_mismatch"]
