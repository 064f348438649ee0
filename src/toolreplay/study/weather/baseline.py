"""The weather study's baseline audit: the recorded Open-Meteo traffic of the oneshot baseline
held against the reference (:mod:`toolreplay.study.weather.reference`, a specification written
from the study's description that shares no code with the toolsets it audits): which query each
call sent and with which parameters, whether it sent the 市 retry exactly when due, which place
it returned and whether that is the reference's pick, and which heuristic acted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolreplay.audit.tables import Check
from toolreplay.audit.traffic import _read, recorded_tool_results
from toolreplay.cassettes.manifest import (
    Manifest,
    cassette_path,
    episode_key,
)
from toolreplay.evals import EvalSuite
from toolreplay.runs.configuration import (
    Configuration,
)
from toolreplay.study.weather import reference as ref

HEURISTICS = ref.HEURISTICS


def _returned_place(result: Any) -> Mapping[str, Any] | None:
    place = result.get("place") if isinstance(result, Mapping) else None
    return place if isinstance(place, Mapping) else None


def _same_place(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    keys = ("name", "admin1", "latitude", "longitude")
    return (a is None) == (b is None) and (
        a is None or b is None or all(a.get(k) == b.get(k) for k in keys)
    )


def _signature(name: str, args: Any) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"


def place_changes(full: Path, ablated: Path) -> list[str]:
    """Tool calls made in both recorded episodes whose *returned* place differs, in words
    (``get_weather({"city": "宁德"}) returned 宁德市 (福建省 PPLA2) with it, 宁德 (西藏自治区
    PPL) without``)."""
    theirs: dict[str, Any] = {}
    for name, args, result in recorded_tool_results(ablated):
        theirs.setdefault(_signature(name, args), result)
    out = []
    for name, args, result in recorded_tool_results(full):
        sig = _signature(name, args)
        if sig not in theirs:
            continue
        a, b = _returned_place(result), _returned_place(theirs[sig])
        if (a is not None or b is not None) and not _same_place(a, b):
            shown_a = _place(a) if a else "no place"
            shown_b = _place(b) if b else "no place"
            out.append(f"{sig} returned {shown_a} with it, {shown_b} without")
    return out


@dataclass(frozen=True)
class _Request:
    """One recorded Open-Meteo request: ``kind`` ``search`` or ``forecast`` (or ``other``), its
    URI parameters, whether it answered 200, and for a search the candidates (empty when the
    answer had no ``results``: nothing found). ``position``: the interaction's index."""

    kind: str
    params: Mapping[str, list[str]]
    ok: bool
    results: list[dict[str, Any]]
    position: int

    @property
    def name(self) -> str:
        return self.params.get("name", [""])[0]


def _requests(path: Path) -> list[_Request]:
    """Every recorded request that is not a model request, in order."""
    out = []
    for position, i in enumerate(_read(path)):
        parts = urlsplit(i["request"]["uri"])
        if parts.path.endswith("/chat/completions"):
            continue
        kind = (
            "search"
            if parts.path.endswith("/search")
            else "forecast"
            if parts.path.endswith("/forecast")
            else "other"
        )
        status = (i["response"].get("status") or {}).get("code")
        body = (i["response"].get("body") or {}).get("parsed_body")
        results = body.get("results") if isinstance(body, Mapping) else None
        out.append(
            _Request(
                kind,
                parse_qs(parts.query, keep_blank_values=True),
                status == 200,
                [r for r in results if isinstance(r, dict)] if isinstance(results, list) else [],
                position,
            )
        )
    return out


@dataclass(frozen=True)
class Departure:
    """One way a recorded ``get_weather`` call departs from the reference
    (:mod:`toolreplay.study.weather.reference`): ``heuristic`` names the heuristic at fault
    (``admin_seat``, ``population_order``, ``shi_retry``), or what else differs (``geocoding
    query``: the first query's parameters, which every heuristic chooses from; ``forecast``;
    ``geocoding``: traffic no reference call sends); ``text`` says what, in words."""

    heuristic: str
    text: str
    #: for a 市 retry the reference would not send: the feature code of the seat picked first
    seat_code: str = ""


@dataclass(frozen=True)
class CallAudit:
    """The reference's verdict on one recorded episode: its departures, how many
    ``get_weather`` calls were checked, and the seat codes after which the baseline rightly
    sent no 市 retry (to tell a seat level missing from its list from a retry that fires too
    often)."""

    departures: tuple[Departure, ...]
    calls: int
    seats_kept: frozenset[str]


def _why(
    returned: Mapping[str, Any],
    expected: Mapping[str, Any],
    first: _Request,
    second: _Request | None,
    expected_from_retry: bool,
) -> tuple[str, str]:
    """The heuristic a returned place that is not the reference's pick points to, and why."""
    in_first = any(_same_place(returned, c) for c in first.results)
    in_second = second is not None and any(_same_place(returned, c) for c in second.results)
    if expected_from_retry and not in_second:
        return "shi_retry", f"the 市 retry's answer ({second.name if second else ''}) was not used"
    if not expected_from_retry and in_second and not in_first:
        return "shi_retry", "the answer of a 市 retry the reference does not send was used"
    if not in_first and not in_second:
        return "geocoding", "no geocoding answer recorded for the call holds that place"
    if ref.is_seat(returned) != ref.is_seat(expected):
        return "admin_seat", (
            "an admin seat beats any other place"
            if ref.is_seat(expected)
            else "this baseline runs without the admin-seat preference"
        )
    if ref.population(returned) != ref.population(expected):
        return "population_order", (
            f"population {ref.population(returned):,} returned, "
            f"{ref.population(expected):,} picked: the larger population wins"
        )
    return "population_order", "a tie in population keeps Open-Meteo's order"


def audit_calls(path: Path, on: tuple[str, ...] = ref.HEURISTICS) -> CallAudit:
    """Hold every ``get_weather`` call recorded at ``path`` against the reference with the
    heuristics ``on``: the geocoding query it sent (parameters), whether it sent the 市 retry
    exactly when the reference does (and with the same parameters), the forecast query (the
    returned place's coordinates, variables, units, timezone, days), and whether the place it
    returned is the one the reference picks from the answers recorded for that call.

    The calls are read from the recorded tool messages, their Open-Meteo requests from the
    recorded interactions: a host stores the requests of one model reply's calls in call order,
    so each call's requests follow the previous call's."""
    requests = _requests(path)
    calls = [
        (args, result)
        for name, args, result in recorded_tool_results(path)
        if name == "get_weather"
        and isinstance(args, Mapping)
        and isinstance(args.get("city"), str)
        and args["city"]
    ]
    out: list[Departure] = []
    kept: set[str] = set()
    at = 0

    def peek() -> _Request | None:
        return requests[at] if at < len(requests) else None

    for k, (args, result) in enumerate(calls):
        city = str(args["city"])
        head = f"get_weather({city})"
        returned = _returned_place(result)
        first = peek()
        if first is None or first.kind != "search" or first.name != city:
            if returned is not None:
                out.append(
                    Departure(
                        "geocoding",
                        f"{head} returned {_place(returned)}, but no geocoding query for "
                        f"{city} was recorded for it",
                    )
                )
            continue  # the tool refused the call before any request (e.g. bad arguments)
        at += 1
        diffs = ref.geocoding_differences(first.params, city)
        if diffs:
            out.append(
                Departure(
                    "geocoding query",
                    f"{head}: the geocoding query was sent with {', '.join(diffs)}; "
                    "admin_seat and population_order choose among the candidates it asks "
                    "for, and shi_retry reads its pick",
                )
            )
        if not first.ok:
            continue  # the reference reports the error: no retry, no forecast
        picked = ref.pick(first.results, on)
        due = ref.retry_due(city, picked, on)
        retry_name = ref.retry_name(city)
        following = calls[k + 1][0]["city"] if k + 1 < len(calls) else None
        nxt = peek()
        retried = (
            nxt is not None
            and nxt.kind == "search"
            and nxt.name == retry_name
            and (due or following != retry_name)
        )
        expected = picked
        second = None
        shown_pick = _place(picked) if picked is not None else "nothing"
        if retried and nxt is not None:
            at += 1
            second = nxt
            diffs = ref.geocoding_differences(nxt.params, retry_name)
            if diffs:
                out.append(
                    Departure(
                        "shi_retry",
                        f"{head}: the 市 retry {retry_name} was sent with {', '.join(diffs)}",
                    )
                )
            if not due:
                if city.endswith(ref.SHI):
                    out.append(
                        Departure(
                            "shi_retry",
                            f"{head} re-queried {retry_name}, but the name already ends in "
                            f"{ref.SHI}: the reference sends no retry",
                        )
                    )
                else:
                    code = str(picked.get("feature_code")) if picked is not None else ""
                    out.append(
                        Departure(
                            "shi_retry",
                            f"{head} re-queried {retry_name} after picking {shown_pick}, an "
                            f"admin seat ({', '.join(ref.ADMIN_SEATS)}): the reference sends "
                            "no retry",
                            seat_code=code,
                        )
                    )
            if not nxt.ok:
                continue
            if due:
                expected = ref.final_pick(picked, ref.pick(nxt.results, on))
        elif due:
            out.append(
                Departure(
                    "shi_retry",
                    f"{head} sent no 市 retry, but the reference re-queries {retry_name} after "
                    f"picking {shown_pick}"
                    + (" (not an admin seat)" if picked is not None else " (nothing found)"),
                )
            )
        elif picked is not None and ref.is_seat(picked) and not city.endswith(ref.SHI):
            kept.add(str(picked.get("feature_code")))
        nxt = peek()
        forecast_failed = False
        if nxt is not None and nxt.kind == "forecast":
            at += 1
            forecast_failed = not nxt.ok
            target = returned if returned is not None else expected
            diffs = ref.forecast_differences(nxt.params, target) if target is not None else []
            if diffs:
                out.append(
                    Departure(
                        "forecast", f"{head}: the forecast query was sent with {', '.join(diffs)}"
                    )
                )
        if returned is None and expected is not None and not forecast_failed:
            out.append(
                Departure(
                    "geocoding",
                    f"{head} returned no place, but the reference picks {_place(expected)} from "
                    "the geocoding answers recorded for it",
                )
            )
        elif returned is not None and expected is None:
            out.append(
                Departure(
                    "geocoding",
                    f"{head} returned {_place(returned)}, but the reference finds no place in "
                    "the geocoding answers recorded for it",
                )
            )
        elif returned is not None and expected is not None and not _same_place(returned, expected):
            heuristic, why = _why(returned, expected, first, second, expected is not picked)
            out.append(
                Departure(
                    heuristic,
                    f"{head} returned {_place(returned)}, but the reference heuristics pick "
                    f"{_place(expected)} from the geocoding answers recorded for it ({why})",
                )
            )
    if at < len(requests):
        rest = requests[at:]
        shown = ", ".join(f"{r.kind} {r.name}" if r.kind == "search" else r.kind for r in rest[:3])
        out.append(
            Departure(
                "geocoding",
                f"{len(rest)} recorded Open-Meteo request(s) that no reference get_weather call "
                f"sends ({shown}{', ...' if len(rest) > 3 else ''})",
            )
        )
    return CallAudit(tuple(out), len(calls), frozenset(kept))


def _attributed(departure: Departure, seats_kept: frozenset[str]) -> Departure:
    """A 市 retry sent after a seat: when no recorded call kept that seat level without a
    retry, the baseline's seat list lacks it (``admin_seat``); otherwise its retry fires too
    often (``shi_retry``)."""
    if not departure.seat_code:
        return departure
    code = departure.seat_code
    if code not in seats_kept:
        return replace(
            departure,
            heuristic="admin_seat",
            text=f"{departure.text}; the baseline does not count {code} as an admin seat (no "
            f"recorded call picked a {code} without re-querying)",
        )
    return replace(
        departure,
        text=f"{departure.text}; the retry fires after an admin seat ({code} counts as a seat "
        "in other recorded calls)",
    )


def _searches(path: Path) -> list[tuple[str, list[dict[str, Any]], int]]:
    """``(name, results, position)`` of every geocoding request recorded in a cassette, in
    order; ``position`` is the interaction's index, so two searches with nothing recorded
    between them (the same tool call) can be told from two tool calls."""
    return [(r.name, r.results, r.position) for r in _requests(path) if r.kind == "search"]


def _without(heuristic: str) -> tuple[str, ...]:
    return tuple(h for h in HEURISTICS if h != heuristic)


def _place(c: Mapping[str, Any]) -> str:
    return f"{c.get('name')} ({c.get('admin1', '?')} {c.get('feature_code', '?')})"


def exercised_heuristics(path: Path) -> dict[str, list[tuple[str, bool]]]:
    """How each baseline heuristic acted in a recorded oneshot episode: per heuristic, a list
    of ``(evidence text, decided)``, from the recorded geocoding answers.

    A heuristic *acts* on an answer when it has something to do: ``admin_seat`` when admin
    seats and other places are mixed; ``population_order`` when 2+ candidates are compared;
    ``shi_retry`` when a query for ``X`` without an admin seat is followed, within the same
    tool call (the next recorded interaction), by one for ``X市``.
    It *decides* when switching it off alone would change the place chosen (for the retry:
    when the retry found an admin seat)."""
    found: dict[str, list[tuple[str, bool]]] = {h: [] for h in HEURISTICS}
    searches = _searches(path)
    for n, (name, results, position) in enumerate(searches):
        seats = [c for c in results if ref.is_seat(c)]
        others = [c for c in results if not ref.is_seat(c)]
        pick = ref.pick(results)
        if seats and others:
            decided = ref.pick(results, _without("admin_seat")) != pick
            found["admin_seat"].append(
                (
                    f"{name}: preferred {_place(seats[0])} over "
                    + ", ".join(_place(c) for c in others),
                    decided,
                )
            )
        if len(results) >= 2:
            decided = ref.pick(results, _without("population_order")) != pick
            pops = ", ".join(f"{c.get('population', 0):,}" for c in results)
            found["population_order"].append(
                (f"{name}: compared {len(results)} candidates by population ({pops})", decided)
            )
        nxt = searches[n + 1] if n + 1 < len(searches) else None
        # The tool's own retry: the very next recorded interaction re-queries X市. A model that
        # calls get_weather("X市") itself shows a model request in between.
        retry = ref.retry_name(name)
        if not seats and nxt is not None and nxt[0] == retry and nxt[2] == position + 1:
            first = _place(results[0]) if results else "no candidate"
            decided = any(ref.is_seat(c) for c in nxt[1])
            found["shi_retry"].append(
                (f"{name}: no admin seat ({first}); re-queried {nxt[0]}", decided)
            )
    return found


def check_baseline(
    set_dir: Path,
    suite: EvalSuite,
    manifest: Manifest,
    oneshot: Sequence[Configuration],
    ablated: Sequence[Configuration] = (),
) -> Check:
    """Check 1. A heuristic *would change* the place where, on the geocoding answers recorded
    for the full baseline, switching it off alone changes the pick; it *changed the place
    chosen* only where the place the tool returned differs between the full baseline's and the
    ablated baseline's recorded tool results for the same call. Fails, naming the heuristic,
    when a heuristic is off, never acted (and the reference would not have acted either), or a
    recorded get_weather call of the full or an ablated baseline departs from the reference
    (:func:`audit_calls`): a query sent with other parameters, a 市 retry sent when not due or
    not sent when due, a place returned that the reference would not pick (e.g. a retry whose
    result is discarded)."""
    configured = tuple(suite.experiment.baseline)
    recorded = tuple(manifest.settings.get("baseline_heuristics", HEURISTICS))
    evidence = [
        f"configured (eval file {Path(suite.path).name}): {', '.join(configured) or 'none'}",
        f"recorded (manifest): {', '.join(recorded) or 'none'}",
    ]
    missing = [h for h in HEURISTICS if h not in configured or h not in recorded]
    idle: list[str] = []
    deciding: list[str] = []
    uses = {
        episode_key(config.name, q.id): exercised_heuristics(path)
        for config in oneshot
        for q in suite.questions
        if (path := cassette_path(set_dir, config.name, q.id)).exists()
    }
    departures, calls, episodes = _departures(set_dir, suite, manifest, oneshot, ablated)
    for h in HEURISTICS:
        acted: dict[str, str] = {}
        would: set[str] = set()
        for key, found in uses.items():
            for text, made_a_difference in found[h]:
                acted.setdefault(key, text)
                if made_a_difference:
                    would.add(key)
        if not acted:
            idle.append(h)
            evidence.append(f"{h}: acted in no recorded episode")
            continue
        changed: dict[str, list[str]] = {}
        measured = False
        for config in oneshot:
            variant = next((a for a in ablated if a.ablated == h and a.host == config.host), None)
            if variant is None:
                continue
            for q in suite.questions:
                full = cassette_path(set_dir, config.name, q.id)
                other = cassette_path(set_dir, variant.name, q.id)
                if full.exists() and other.exists():
                    measured = True
                    diffs = place_changes(full, other)
                    if diffs:
                        changed[episode_key(config.name, q.id)] = diffs
        first_key, first_text = next(iter(acted.items()))
        line = (
            f"{h}: acted in {len(acted)} recorded episode(s), e.g. {first_key}: {first_text}; "
            f"would change the pick on the recorded geocoding answers in {len(would)}"
            + (f" ({', '.join(sorted(would))})" if would else "")
        )
        if measured:
            line += f"; changed the place chosen in {len(changed)}" + (
                f" ({', '.join(sorted(changed))}: {next(iter(changed.values()))[0]})"
                if changed
                else " (the places returned with and without it are the same)"
            )
            if changed:
                deciding.append(h)
        else:
            line += "; whether it changed the place returned is not measured (no ablated recording)"
        evidence.append(line)
    evidence.append(
        f"reference ({ref.__name__}, written from the study's description; no code shared with "
        f"the toolsets): {calls} get_weather call(s) in {episodes} recorded episode(s) of the "
        "full and ablated baselines, every trial"
        + (
            f"; {len(departures)} departure(s)"
            if departures
            else ": each sent the reference's geocoding query, its 市 retry exactly when due "
            "and its forecast query, and returned the place it picks"
        )
    )
    evidence += [f"unfaithful: {d.heuristic}: {key}: {d.text}" for key, d in departures]
    named = {h for _, d in departures for h in HEURISTICS if h in d.heuristic}
    idle = [h for h in idle if h not in named]  # the baseline's fault, not the eval file's
    problems = []
    if missing:
        problems.append(
            f"the oneshot baseline runs without {', '.join(missing)}: it is weaker than the "
            "reference, so any win against it is inflated"
        )
    if departures:
        problems.append(_departure_summary(departures))
    if idle:
        problems.append(
            f"{', '.join(idle)} never acted in the recorded episodes: add a question whose "
            "geocoding answer gives it something to do"
        )
    if problems:
        return Check("baseline_heuristics", False, "; ".join(problems), tuple(evidence))
    return Check(
        "baseline_heuristics",
        True,
        "all three reference heuristics are on, each acted on a recorded geocoding answer, and "
        "every recorded get_weather call is the reference's (the same queries, the 市 retry "
        "exactly when due, the place it picks); "
        + (
            f"only {', '.join(deciding)} changed the place chosen"
            if deciding and len(deciding) < len(HEURISTICS)
            else "each changed the place chosen somewhere"
            if deciding
            else "none changed the place chosen"
        ),
        tuple(evidence),
    )


#: The order departures are summed up in: the heuristics, then what every heuristic reads.
_LABELS = (*HEURISTICS, "geocoding query", "forecast", "geocoding")


def _departures(
    set_dir: Path,
    suite: EvalSuite,
    manifest: Manifest,
    oneshot: Sequence[Configuration],
    ablated: Sequence[Configuration],
) -> tuple[list[tuple[str, Departure]], int, int]:
    """Every departure from the reference of the full baseline (all heuristics on) and of each
    ablated baseline (all but the one it ablates), over every recorded trial, keyed by episode;
    with the number of get_weather calls and of episodes read."""
    audits: list[tuple[str, CallAudit]] = []
    for config in [*oneshot, *ablated]:
        on = tuple(h for h in HEURISTICS if h != config.ablated)
        for q in suite.questions:
            for trial in range(1, max(manifest.trials, 1) + 1):
                path = cassette_path(set_dir, config.name, q.id, trial)
                if path.exists():
                    audits.append((episode_key(config.name, q.id, trial), audit_calls(path, on)))
    kept = frozenset(code for _, a in audits for code in a.seats_kept)
    departures = [(key, _attributed(d, kept)) for key, a in audits for d in a.departures]
    departures.sort(key=lambda kd: _LABELS.index(kd[1].heuristic))  # stable: episode order kept
    return departures, sum(a.calls for _, a in audits), len(audits)


def _departure_summary(departures: Sequence[tuple[str, Departure]]) -> str:
    """One sentence: how many departures, and the first of each heuristic."""
    first: dict[str, tuple[str, Departure]] = {}
    counts: dict[str, int] = {}
    for key, d in departures:
        first.setdefault(d.heuristic, (key, d))
        counts[d.heuristic] = counts.get(d.heuristic, 0) + 1
    parts = [f"{h} ×{counts[h]} (e.g. {key}: {d.text})" for h, (key, d) in first.items()]
    return (
        f"the baseline departs from the reference heuristics ({ref.__name__}) in "
        f"{len(departures)} place(s): {'; '.join(parts)}: it is not the study's baseline, so "
        "a comparison against it proves nothing"
    )
