"""Each recorded get_weather call held against the independent reference
(:mod:`toolreplay.study.weather.reference`): the queries it sent, the 市 retry exactly when due,
the forecast query and the place it returned; every departure named by heuristic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolreplay.study.weather import reference as ref
from toolreplay.study.weather.traffic import (
    BaselineTraffic,
    OpenMeteoRequest,
    RequestsProbe,
    recorded_requests,
    sent_by_sha256,
    sent_traffic,
    tool_results,
)


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
    #: for a place returned that is not the reference's pick: the pick's feature code, when
    #: it is an admin seat (a seat level missing from the baseline's list shows so)
    picked_code: str = ""


@dataclass(frozen=True)
class CallAudit:
    """The reference's verdict on one recorded episode: its departures, how many
    ``get_weather`` calls were checked, and the seat codes after which the baseline rightly
    sent no 市 retry (to tell a seat level missing from its list from a retry that fires too
    often)."""

    departures: tuple[Departure, ...]
    calls: int
    seats_kept: frozenset[str]


def _seat_code(place: Mapping[str, Any] | None) -> str:
    """The place's feature code when it is an admin seat, else empty."""
    return str(place.get("feature_code")) if place is not None and ref.is_seat(place) else ""


def _holds(request: OpenMeteoRequest | None, place: Mapping[str, Any] | None) -> bool:
    return (
        request is not None
        and place is not None
        and any(same_place(place, c) for c in request.results)
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
    if seat_differs and ref.is_seat(returned):
        return "admin_seat", "this ablated baseline must not prefer admin seats" + (
            " (or it breaks a population tie against Open-Meteo's order)"
            if pops[0] == pops[1]
            else ""
        )
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
    so each call's requests follow the previous call's. What the replay worker that replayed
    the cassette made of it (:class:`CallsProbe`) is taken instead when it has ``on``."""
    sent = sent_traffic(path)
    if sent is not None and on in sent.audits:
        audit: CallAudit = sent.audits[on]
        return audit
    return audit_traffic(recorded_requests(path), tool_results(path), on)


def audit_traffic(
    requests: list[OpenMeteoRequest],
    results: Sequence[tuple[str, Any, Any]],
    on: tuple[str, ...] = ref.HEURISTICS,
) -> CallAudit:
    """:func:`audit_calls` of one cassette's Open-Meteo ``requests`` and executed tool calls
    (``results``: ``(name, arguments, result)``)."""
    calls = [
        (str(args["city"]), returned_place(result))
        for name, args, result in results
        if name == "get_weather"
        and isinstance(args, Mapping)
        and isinstance(args.get("city"), str)
        and args["city"]
    ]
    walk = _Walk(requests, on)
    for k, (city, returned) in enumerate(calls):
        walk.call(city, returned, calls[k + 1][0] if k + 1 < len(calls) else None)
    return _finish(walk, len(calls))


def audit_call(
    city: str,
    requests: Sequence[OpenMeteoRequest],
    returned: Mapping[str, Any] | None,
    on: tuple[str, ...] = ref.HEURISTICS,
    answers: str = "recorded",
) -> CallAudit:
    """One ``get_weather(city)`` call that sent ``requests`` (in order) and returned the place
    ``returned`` (None: an error result), held against the reference with the heuristics
    ``on`` as :func:`audit_calls` holds a recorded one (the generated-answer check,
    :mod:`toolreplay.study.weather.properties`, runs the baseline on answers it makes up;
    ``answers`` says how the texts call them: ``generated``)."""
    walk = _Walk(list(requests), on, answers)
    walk.call(city, returned, None)
    return _finish(walk, 1)


def _finish(walk: _Walk, calls: int) -> CallAudit:
    """The walk's departures, with the requests no call accounts for as one more."""
    requests = walk.requests
    rest = requests[walk.at :]
    if rest:
        shown = ", ".join(f"{r.kind} {r.name}" if r.kind == "search" else r.kind for r in rest[:3])
        walk.out.append(
            Departure(
                "geocoding",
                f"{len(rest)} {'recorded' if walk.answers == 'recorded' else 'sent'} "
                "Open-Meteo request(s) that no reference get_weather call "
                f"sends ({shown}{', ...' if len(rest) > 3 else ''})",
            )
        )
    return CallAudit(tuple(walk.out), calls, frozenset(walk.kept))


class _Walk:
    """Reads one episode's Open-Meteo requests call by call (see :func:`audit_calls`)."""

    def __init__(
        self, requests: list[OpenMeteoRequest], on: tuple[str, ...], answers: str = "recorded"
    ) -> None:
        self.requests, self.on, self.answers = requests, on, answers
        self.at = 0
        self.out: list[Departure] = []
        self.kept: set[str] = set()

    def _next(self, kind: str, name: str | None = None) -> OpenMeteoRequest | None:
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
                        f"{head} returned {place_label(returned)}, but no geocoding query for "
                        f"{city} was {self.answers} for it",
                    )
                )
            return  # the tool refused the call before any request (e.g. bad arguments)
        self.at += 1
        first_diffs = ref.geocoding_differences(first.params, city)
        if diffs := first_diffs:
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
            diffs = ref.geocoding_differences(second.params, retry)
            if diffs and diffs != first_diffs:  # the same as the first query's: said above
                self.out.append(
                    Departure(
                        "shi_retry",
                        f"{head}: the 市 retry {retry} was sent with {', '.join(diffs)}",
                    )
                )
        # The tool's own first pick, where the place it returned shows it.
        own = returned if _holds(first, returned) and not _holds(second, returned) else None
        pick_departs = own is not None and (picked is None or not same_place(own, picked))
        retry_explained = False
        if own is not None and pick_departs:
            heuristic, why = _why(own, picked, self.on) if picked is not None else ("geocoding", "")
            text = (
                f"{head} returned {place_label(own)}, but the reference heuristics pick "
                f"{place_label(picked) if picked is not None else 'no place'} from the geocoding "
                f"answers {self.answers} for it ({why})"
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
            self.out.append(Departure(heuristic, text, picked_code=_seat_code(picked)))
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
                lost = second is not None and due and expected is not picked
                self.out.append(
                    Departure(
                        "shi_retry" if lost else "geocoding",
                        f"{head} returned no place, but the reference picks "
                        f"{place_label(expected)} from the geocoding answers {self.answers} "
                        "for it"
                        + (f" (the 市 retry's answer ({retry}) was not used)" if lost else ""),
                    )
                )
            return
        if expected is None:
            self.out.append(
                Departure(
                    "geocoding",
                    f"{head} returned {place_label(returned)}, but the reference finds no place in "
                    f"the geocoding answers {self.answers} for it",
                )
            )
            return
        if same_place(returned, expected):
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
            heuristic, why = (
                "geocoding",
                f"no geocoding answer {self.answers} for the call holds it",
            )
        else:
            heuristic, why = _why(returned, expected, self.on)
        self.out.append(
            Departure(
                heuristic,
                f"{head} returned {place_label(returned)}, but the reference heuristics pick "
                f"{place_label(expected)} from the geocoding answers {self.answers} for it ({why})",
                picked_code=_seat_code(expected),
            )
        )

    def _retry_departure(
        self, head: str, city: str, retry: str, first: Mapping[str, Any] | None, sent: bool
    ) -> None:
        shown = place_label(first) if first is not None else "nothing"
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


def attributed_departure(
    departure: Departure, seats_kept: frozenset[str], calls: str = "recorded"
) -> Departure:
    """A 市 retry sent after a seat: when no ``calls`` (``recorded``, ``generated``) call kept
    that seat level without a retry, the baseline's seat list lacks it (``admin_seat``);
    otherwise its retry fires too often (``shi_retry``)."""
    if not departure.seat_code:
        return departure
    code = departure.seat_code
    if code not in seats_kept:
        return replace(
            departure,
            heuristic="admin_seat",
            text=f"{departure.text}; the baseline does not count {code} as an admin seat (no "
            f"{calls} call picked a {code} without re-querying)",
        )
    return replace(
        departure,
        text=f"{departure.text}; the retry fires after an admin seat ({code} counts as a seat "
        f"in other {calls} calls)",
    )


def returned_place(result: Any) -> Mapping[str, Any] | None:
    place = result.get("place") if isinstance(result, Mapping) else None
    return place if isinstance(place, Mapping) else None


def same_place(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    keys = ("name", "admin1", "latitude", "longitude")
    return (a is None) == (b is None) and (
        a is None or b is None or all(a.get(k) == b.get(k) for k in keys)
    )


def place_label(c: Mapping[str, Any]) -> str:
    return f"{c.get('name')} ({c.get('admin1', '?')} {c.get('feature_code', '?')})"

class CallsProbe(RequestsProbe):
    """:class:`~toolreplay.study.weather.traffic.RequestsProbe` that also holds the calls of
    each cassette it reads against the reference, there, in the replay worker: with the
    heuristics its configuration keeps (all but the one an ablated configuration removes),
    as the baseline check asks (:func:`audit_calls`), so the check's walk over every
    baseline cassette leaves the run's serial tail."""

    def read(self, path: Path, job: Any) -> BaselineTraffic | None:
        found = super().read(path, job)
        if found is None:
            return None
        ablated = getattr(job.configuration, "ablated", None)
        on = tuple(h for h in ref.HEURISTICS if h != ablated)
        try:
            audit = audit_traffic(found.requests, found.tool_results, on)
        except Exception:  # the check makes it again and says what is wrong
            return found
        return replace(found, audits={on: audit})

    def keep(self, found: BaselineTraffic) -> None:
        """Kept by the sha256 of the bytes, with the audits already kept for the same bytes
        (a trial or an ablated configuration recorded the same cassette)."""
        kept = sent_by_sha256(found.sha256)
        if kept is not None:
            found = replace(found, audits={**kept.audits, **found.audits})
        super().keep(found)

