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


def _holds(request: _Request | None, place: Mapping[str, Any] | None) -> bool:
    return (
        request is not None
        and place is not None
        and any(_same_place(place, c) for c in request.results)
    )


def _why(returned: Mapping[str, Any], expected: Mapping[str, Any], on: Sequence[str]) -> tuple[
    str, str
]:  # fmt: skip
    """The heuristic a place picked from one answer that is not the reference's pick from it
    points to, and why (``on``: the heuristics the reference runs with)."""
    seat_differs = ref.is_seat(returned) != ref.is_seat(expected)
    pops = ref.population(returned), ref.population(expected)
    if seat_differs and "admin_seat" in on:
        return "admin_seat", (
            "an admin seat beats any other place"
            if ref.is_seat(expected)
            else "the admin-seat preference decides between them"
        )
    if pops[0] != pops[1] and "population_order" in on:
        return "population_order", (
            f"population {pops[0]:,} returned, {pops[1]:,} picked: the larger population wins"
        )
    if seat_differs:
        return "admin_seat", "this ablated baseline must not prefer admin seats"
    if pops[0] != pops[1]:
        return "population_order", (
            "this ablated baseline must keep Open-Meteo's order, not sort by population"
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
        (str(args["city"]), _returned_place(result))
        for name, args, result in recorded_tool_results(path)
        if name == "get_weather"
        and isinstance(args, Mapping)
        and isinstance(args.get("city"), str)
        and args["city"]
    ]
    walk = _Walk(requests, on)
    for k, (city, returned) in enumerate(calls):
        walk.call(city, returned, calls[k + 1][0] if k + 1 < len(calls) else None)
    rest = requests[walk.at :]
    if rest:
        shown = ", ".join(f"{r.kind} {r.name}" if r.kind == "search" else r.kind for r in rest[:3])
        walk.out.append(
            Departure(
                "geocoding",
                f"{len(rest)} recorded Open-Meteo request(s) that no reference get_weather call "
                f"sends ({shown}{', ...' if len(rest) > 3 else ''})",
            )
        )
    return CallAudit(tuple(walk.out), len(calls), frozenset(walk.kept))


class _Walk:
    """Reads one episode's Open-Meteo requests call by call (see :func:`audit_calls`)."""

    def __init__(self, requests: list[_Request], on: tuple[str, ...]) -> None:
        self.requests, self.on = requests, on
        self.at = 0
        self.out: list[Departure] = []
        self.kept: set[str] = set()

    def _next(self, kind: str, name: str | None = None) -> _Request | None:
        r = self.requests[self.at] if self.at < len(self.requests) else None
        if r is None or r.kind != kind or (name is not None and r.name != name):
            return None
        return r

    def call(self, city: str, returned: Mapping[str, Any] | None, following: str | None) -> None:
        head = f"get_weather({city})"
        first = self._next("search", city)
        if first is None:
            if returned is not None:
                self.out.append(
                    Departure(
                        "geocoding",
                        f"{head} returned {_place(returned)}, but no geocoding query for {city} "
                        "was recorded for it",
                    )
                )
            return  # the tool refused the call before any request (e.g. bad arguments)
        self.at += 1
        if diffs := ref.geocoding_differences(first.params, city):
            self.out.append(
                Departure(
                    "geocoding query",
                    f"{head}: the geocoding query was sent with {', '.join(diffs)}; admin_seat "
                    "and population_order choose among the candidates it asks for, and "
                    "shi_retry reads its pick",
                )
            )
        if not first.ok:
            return  # the reference reports the error: no retry, no forecast
        picked = ref.pick(first.results, self.on)
        due = ref.retry_due(city, picked, self.on)
        retry = ref.retry_name(city)
        second = self._next("search", retry)
        if second is not None and second.position != first.position + 1:
            second = None  # a model request in between: the model's own query for X市
        elif second is not None and not due and following == retry and returned is None:
            second = None  # the next call of the same reply queries X市 itself
        if second is not None:
            self.at += 1
            if diffs := ref.geocoding_differences(second.params, retry):
                self.out.append(
                    Departure(
                        "shi_retry",
                        f"{head}: the 市 retry {retry} was sent with {', '.join(diffs)}",
                    )
                )
        # The tool's own first pick, where the place it returned shows it.
        own = returned if _holds(first, returned) and not _holds(second, returned) else None
        pick_departs = own is not None and (picked is None or not _same_place(own, picked))
        retry_explained = False
        if own is not None and pick_departs:
            heuristic, why = _why(own, picked, self.on) if picked is not None else ("geocoding", "")
            text = (
                f"{head} returned {_place(own)}, but the reference heuristics pick "
                f"{_place(picked) if picked is not None else 'no place'} from the geocoding "
                f"answers recorded for it ({why})"
            )
            if (second is not None) != due and (second is not None) == ref.retry_due(
                city, own, self.on
            ):
                retry_explained = True
                text += (
                    f"; so it re-queried {retry}, which the reference does not"
                    if second is not None
                    else f"; so it sent no 市 retry, where the reference re-queries {retry}"
                )
            self.out.append(Departure(heuristic, text))
        if (second is not None) != due and not retry_explained:
            self._retry_departure(head, city, retry, own or picked, second is not None)
        elif (
            second is None
            and "shi_retry" in self.on
            and own is not None
            and ref.is_seat(own)
            and not city.endswith(ref.SHI)
        ):
            self.kept.add(str(own.get("feature_code")))  # a seat level the baseline counts
        if second is not None and not second.ok:
            return
        expected = picked
        if second is not None and due:
            expected = ref.final_pick(picked, ref.pick(second.results, self.on))
        forecast = self._next("forecast")
        if forecast is not None:
            self.at += 1
            target = returned if returned is not None else expected
            diffs = ref.forecast_differences(forecast.params, target) if target is not None else []
            if diffs:
                self.out.append(
                    Departure(
                        "forecast", f"{head}: the forecast query was sent with {', '.join(diffs)}"
                    )
                )
        if pick_departs:
            return  # said above
        if returned is None:
            if expected is not None and (forecast is None or forecast.ok):
                self.out.append(
                    Departure(
                        "geocoding",
                        f"{head} returned no place, but the reference picks {_place(expected)} "
                        "from the geocoding answers recorded for it",
                    )
                )
            return
        if expected is None:
            self.out.append(
                Departure(
                    "geocoding",
                    f"{head} returned {_place(returned)}, but the reference finds no place in "
                    "the geocoding answers recorded for it",
                )
            )
            return
        if _same_place(returned, expected):
            return
        from_retry = second is not None and due and expected is not picked
        if from_retry and not _holds(second, returned):
            heuristic, why = "shi_retry", f"the 市 retry's answer ({retry}) was not used"
        elif not from_retry and _holds(second, returned):
            heuristic, why = (
                "shi_retry",
                "the answer of a 市 retry the reference does not send was used",
            )
        elif not _holds(first, returned) and not _holds(second, returned):
            heuristic, why = "geocoding", "no geocoding answer recorded for the call holds it"
        else:
            heuristic, why = _why(returned, expected, self.on)
        self.out.append(
            Departure(
                heuristic,
                f"{head} returned {_place(returned)}, but the reference heuristics pick "
                f"{_place(expected)} from the geocoding answers recorded for it ({why})",
            )
        )

    def _retry_departure(
        self, head: str, city: str, retry: str, first: Mapping[str, Any] | None, sent: bool
    ) -> None:
        shown = _place(first) if first is not None else "nothing"
        if not sent:
            self.out.append(
                Departure(
                    "shi_retry",
                    f"{head} sent no 市 retry, but the reference re-queries {retry} after "
                    f"picking {shown}"
                    + (" (not an admin seat)" if first is not None else " (nothing found)"),
                )
            )
        elif city.endswith(ref.SHI):
            self.out.append(
                Departure(
                    "shi_retry",
                    f"{head} re-queried {retry}, but the name already ends in {ref.SHI}: the "
                    "reference sends no retry",
                )
            )
        elif "shi_retry" not in self.on:
            self.out.append(
                Departure(
                    "shi_retry",
                    f"{head} re-queried {retry}: this ablated baseline must send no 市 retry",
                )
            )
        else:
            self.out.append(
                Departure(
                    "shi_retry",
                    f"{head} re-queried {retry} after picking {shown}, an admin seat "
                    f"({', '.join(ref.ADMIN_SEATS)}): the reference sends no retry",
                    seat_code=str(first.get("feature_code")) if first is not None else "",
                )
            )


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
    departures, calls, episodes, of_ablated = _departures(
        set_dir, suite, manifest, oneshot, ablated
    )
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
        + ("full and the ablated baselines" if of_ablated else "full baseline")
        + (", every trial" if manifest.trials > 1 else "")
        + (
            f"; {len(departures)} departure(s)"
            if departures
            else ": each sent the reference's geocoding query, its 市 retry exactly when due "
            "and its forecast query, and returned the place it picks"
        )
    )
    evidence += [f"unfaithful: {d.heuristic}: {key}: {d.text}" for key, d, _ in departures[:_SHOWN]]
    if len(departures) > _SHOWN:
        evidence.append(f"unfaithful: … and {len(departures) - _SHOWN} more departure(s)")
    named = {h for _, d, _ in departures for h in HEURISTICS if h in d.heuristic}
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


#: How many departures the evidence lists one by one.
_SHOWN = 24

#: The order departures are summed up in: the heuristics, then what every heuristic reads.
_LABELS = (*HEURISTICS, "geocoding query", "forecast", "geocoding")


def _departures(
    set_dir: Path,
    suite: EvalSuite,
    manifest: Manifest,
    oneshot: Sequence[Configuration],
    ablated: Sequence[Configuration],
) -> tuple[list[tuple[str, Departure, bool]], int, int, int]:
    """Every departure from the reference of the full baseline (all heuristics on) and of each
    ablated baseline (all but the one it ablates), over every recorded trial, as ``(episode
    key, departure, of an ablated baseline)``, the full baseline's first; with the number of
    get_weather calls, of episodes read, and of those the ablated baselines'."""
    audits: list[tuple[str, CallAudit, bool]] = []
    for config in [*oneshot, *ablated]:
        on = tuple(h for h in HEURISTICS if h != config.ablated)
        for q in suite.questions:
            for trial in range(1, max(manifest.trials, 1) + 1):
                path = cassette_path(set_dir, config.name, q.id, trial)
                if path.exists():
                    key = episode_key(config.name, q.id, trial)
                    audits.append((key, audit_calls(path, on), config.ablated is not None))
    kept = frozenset(code for _, a, _ in audits for code in a.seats_kept)
    departures = [
        (key, _attributed(d, kept), weakened) for key, a, weakened in audits for d in a.departures
    ]
    departures.sort(key=lambda kd: (kd[2], _LABELS.index(kd[1].heuristic)))  # stable
    calls = sum(a.calls for _, a, _ in audits)
    return departures, calls, len(audits), sum(1 for *_, weakened in audits if weakened)


def _departure_summary(departures: Sequence[tuple[str, Departure, bool]]) -> str:
    """How many departures, and the first of each heuristic: the full baseline's, then the
    ablated baselines'."""
    sentences = []
    for weakened in (False, True):
        first: dict[str, tuple[str, Departure]] = {}
        counts: dict[str, int] = {}
        for key, d, w in departures:
            if w == weakened:
                first.setdefault(d.heuristic, (key, d))
                counts[d.heuristic] = counts.get(d.heuristic, 0) + 1
        if not first:
            continue
        parts = "; ".join(
            f"{h} ×{counts[h]} (e.g. {key}: {d.text})" for h, (key, d) in first.items()
        )
        n = sum(counts.values())
        sentences.append(
            f"the ablated baselines depart from the reference without their heuristic in {n} "
            f"place(s): {parts}: their flips are not the heuristics' effect"
            if weakened
            else f"the baseline departs from the reference heuristics ({ref.__name__}) in {n} "
            f"place(s): {parts}: it is not the study's baseline, so a comparison against it "
            "proves nothing"
        )
    return "; ".join(sentences)
