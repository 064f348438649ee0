"""The baseline's heuristics against the reference on generated geocoding answers: an audit
that needs no lucky question (the ``baseline_properties`` check).

The ``baseline_heuristics`` check (:mod:`toolreplay.study.weather.baseline`) holds the
*recorded* get_weather calls against the reference, so it sees a heuristic only where an eval
question's geocoding answer gives it something to decide. This check runs the baseline's own
``get_weather`` (built by :attr:`STUDY.make_toolset <toolreplay.studies.Study.make_toolset>`,
as a recording builds it, over an in-memory Open-Meteo: a ``requests`` transport adapter, no
network) on generated cases (:mod:`toolreplay.study.weather.cases`), and holds every call
against the reference (:mod:`toolreplay.study.weather.reference`) with the code that holds
the recorded calls (:func:`toolreplay.study.weather.calls.audit_call`): the geocoding query,
the 市 retry exactly when due, the place returned, the forecast query. It does so with every
heuristic on and without each in turn (the ablated baselines).

The cases come from :class:`random.Random` seeded with :data:`~toolreplay.study.weather.cases.
SEED`, not from hypothesis: its generation and shrinking change between its releases (its own
``derandomize`` promises the same examples only until Hypothesis is updated), and this check's
text goes into ``results.json``, which must be byte-identical wherever the committed set is
re-run, the CI's lowest allowed versions included; nor does a product path want a test
library's runner, example database and health checks. The tests also run the faithful baseline
under hypothesis (``tests/test_audit_properties.py``).

On a departure, the first failing case of each heuristic is shrunk (:func:`shrink`): greedily,
one simplification at a time (drop an answer or a candidate, a plainer feature code, a smaller
population, coordinates back, a plainer city), kept only while the case still departs *naming
the same heuristic*, until none applies. ``python -m toolreplay.study.weather.properties``
prints every case of the seed (``--seed N``, ``--cases N``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import requests

from toolreplay.audit.tables import Check
from toolreplay.study.weather import reference as ref
from toolreplay.study.weather.calls import (
    Departure,
    OpenMeteoRequest,
    attributed_departure,
    audit_call,
    returned_place,
)
from toolreplay.study.weather.cases import (
    CASES,
    CODES,
    PLAIN_CITY,
    PLAIN_SHI_CITY,
    POPULATIONS,
    SEED,
    Candidate,
    Case,
    OpenMeteoAnswers,
    generate,
)

#: Builds the baseline toolset (a :class:`~toolreplay.tools.toolset.Toolset` offering
#: ``get_weather``) over a ``requests`` session, with the heuristics named switched on.
BaselineFactory = Callable[[requests.Session, tuple[str, ...]], Any]


@dataclass(frozen=True)
class Run:
    """The baseline's get_weather on one case: the requests it sent, the place it returned
    (None: an error result) and the reference's verdict on them."""

    case: Case
    requests: tuple[OpenMeteoRequest, ...]
    returned: Mapping[str, Any] | None
    departures: tuple[Departure, ...]
    seats_kept: frozenset[str]
    on: tuple[str, ...]
    baseline: BaselineFactory


def oneshot_baseline(session: requests.Session, on: tuple[str, ...]) -> Any:
    """The study's oneshot toolset over ``session`` at the live endpoints, as
    :func:`toolreplay.study.weather.study.make_toolset` builds it for a recording."""
    from toolreplay.study.weather import toolsets
    from toolreplay.study.weather.openmeteo import OpenMeteoClient

    heuristics = toolsets.Heuristics(**{n: n in on for n in toolsets.Heuristics.names()})
    return toolsets.make_toolset("oneshot", OpenMeteoClient(session), heuristics)


def run_case(
    case: Case, on: tuple[str, ...] = ref.HEURISTICS, baseline: BaselineFactory = oneshot_baseline
) -> Run:
    """Run the baseline's ``get_weather(case.city)`` (built by ``baseline`` with the
    heuristics ``on``) over an in-memory Open-Meteo answering from ``case``, and hold the call
    against the reference with the same heuristics on."""
    from toolreplay.wire.episode import ToolCall

    adapter = OpenMeteoAnswers(case)
    with requests.Session() as session:
        session.trust_env = False  # no proxy or netrc from the environment: in memory only
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        toolset = baseline(session, on)
        call = ToolCall("generated", "get_weather", json.dumps({"city": case.city}))
        result = toolset.execute(call)
    try:
        returned = returned_place(json.loads(result.content))
    except ValueError:
        returned = None
    verdict = audit_call(case.city, adapter.log, returned, on, "generated")
    departures = verdict.departures
    if case.retry and any(d.heuristic == "shi_retry" for d in departures):
        departures = _first_pick_seen(case, on, baseline, departures)
    return Run(case, tuple(adapter.log), returned, departures, verdict.seats_kept, on, baseline)


def _first_pick_seen(
    case: Case, on: tuple[str, ...], baseline: BaselineFactory, departures: tuple[Departure, ...]
) -> tuple[Departure, ...]:
    """A 市 retry the reference does not send hides the baseline's first pick when its answer
    replaced it. Run the case again with the retry finding nothing (the first pick then
    stands): when that pick is not the reference's, the retry departures are that pick's
    fault and named by it."""
    probe = run_case(Case(case.city, case.first, None), on, baseline)
    picks = [d for d in probe.departures if d.heuristic in ("admin_seat", "population_order")]
    if not picks:
        return departures
    first = picks[0]
    retry = ref.retry_name(case.city)
    return tuple(
        replace(
            d,
            heuristic=first.heuristic,
            text=f"{d.text}; the first pick is at fault: with {retry} finding nothing, "
            f"{first.text}",
            picked_code=first.picked_code,
            seat_code="",
        )
        if d.heuristic == "shi_retry"
        else d
        for d in departures
    )


def _named(run: Run, kept: frozenset[str]) -> list[Departure]:
    """The run's departures, attributed over every generated call of the full baseline
    (``kept``: the seat codes it returned without a 市 retry): a 市 retry after a seat, or a
    pick that is not the reference's where the reference picks a seat, whose level the
    baseline never kept, is the seat list's fault (``admin_seat``)."""
    out = []
    for d in run.departures:
        code = d.picked_code
        if code and code not in kept and d.heuristic in ref.HEURISTICS:
            d = replace(
                d,
                heuristic="admin_seat",
                text=f"{d.text}; the baseline does not count {code} as an admin seat (no "
                f"generated call picked a {code} without re-querying)",
            )
        out.append(attributed_departure(d, kept, "generated"))
    return out


# ---- shrinking -------------------------------------------------------------------------------


def _size(case: Case) -> tuple[int, ...]:
    answers = [a for a in (case.first, case.retry) if a is not None]
    cands = [c for a in answers for c in a]
    return (
        len(cands),
        len(answers),
        sum(CODES.index(c.code) for c in cands),
        sum(POPULATIONS.index(c.population) for c in cands),
        sum(not c.located for c in cands),
        0 if case.city in (PLAIN_CITY, PLAIN_SHI_CITY) else len(case.city) + 1,
    )


def _simpler_answers(found: tuple[Candidate, ...] | None) -> Iterator[tuple[Candidate, ...] | None]:
    if found is None:
        return
    yield None
    for i in range(len(found)):
        yield found[:i] + found[i + 1 :]
    for i, c in enumerate(found):
        simpler = [replace(c, code=code) for code in CODES[: CODES.index(c.code)]]
        simpler += [
            replace(c, population=pop)
            for pop in POPULATIONS[1 : POPULATIONS.index(c.population)]
        ]
        if not c.located:
            simpler.append(replace(c, located=True))
        for candidate in simpler:
            yield (*found[:i], candidate, *found[i + 1 :])


def _simpler(case: Case) -> Iterator[Case]:
    """Simplifications of ``case``, the boldest first: a plainer answer, then a plainer city,
    then a plainer answer under the other plain city (甲 for 甲市 and back: a case may need
    its 市 changed to lose a candidate)."""
    for retry in _simpler_answers(case.retry):
        yield replace(case, retry=retry)
    for first in _simpler_answers(case.first):
        yield replace(case, first=first)
    yield replace(case, city=PLAIN_SHI_CITY if case.city.endswith(ref.SHI) else PLAIN_CITY)
    yield replace(case, city=PLAIN_CITY)
    if case.city in (PLAIN_CITY, PLAIN_SHI_CITY):
        other = PLAIN_CITY if case.city == PLAIN_SHI_CITY else PLAIN_SHI_CITY
        for retry in _simpler_answers(case.retry):
            yield replace(case, city=other, retry=retry)
        for first in _simpler_answers(case.first):
            yield replace(case, city=other, first=first)


def shrink(
    case: Case,
    heuristic: str,
    on: tuple[str, ...],
    kept: frozenset[str],
    baseline: BaselineFactory = oneshot_baseline,
) -> tuple[Run, int]:
    """The smallest case :func:`_simpler` reaches from ``case`` on which the baseline still
    departs naming ``heuristic`` (``kept``: the seat codes the generated calls kept without a
    retry), and how many simplifications it took. ``case`` must depart so."""
    best = run_case(case, on, baseline)
    steps = 0
    improved = True
    while improved:
        improved = False
        for simpler in _simpler(best.case):
            if _size(simpler) >= _size(best.case):
                continue
            run = run_case(simpler, on, baseline)
            if any(d.heuristic == heuristic for d in _named(run, kept)):
                best, steps, improved = run, steps + 1, True
                break
    return best, steps


# ---- the search ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counterexample:
    """The smallest case found on which a variant of the baseline departs naming
    ``heuristic``: the case, the departure's words, in how many cases it departed so, which
    generated case (1-based) first showed it and the simplifications it took."""

    heuristic: str
    case: Case
    text: str
    count: int
    first: int
    steps: int

    def __str__(self) -> str:
        return (
            f"{self.heuristic} in {self.count} case(s); smallest counterexample (case "
            f"{self.first} shrunk in {self.steps} step(s)): {self.case}: {self.text}"
        )


def counterexamples(runs: Sequence[Run], kept: frozenset[str]) -> list[Counterexample]:
    """For each heuristic the ``runs`` of one variant depart naming (in :data:`LABELS` order),
    the smallest counterexample (``kept``: see :func:`_named`)."""
    first: dict[str, int] = {}
    counts: dict[str, int] = {}
    for k, r in enumerate(runs):
        for label in dict.fromkeys(d.heuristic for d in _named(r, kept)):
            first.setdefault(label, k)
            counts[label] = counts.get(label, 0) + 1
    out = []
    for label in sorted(first, key=_order):
        start = runs[first[label]]
        smallest, steps = shrink(start.case, label, start.on, kept, start.baseline)
        text = next(d.text for d in _named(smallest, kept) if d.heuristic == label)
        out.append(
            Counterexample(label, smallest.case, text, counts[label], first[label] + 1, steps)
        )
    return out


#: The order departures are named in: the heuristics, then what every heuristic reads.
LABELS = (*ref.HEURISTICS, "geocoding query", "forecast", "geocoding")


def _order(label: str) -> int:
    return LABELS.index(label) if label in LABELS else len(LABELS)


def coverage(cases: Sequence[Case]) -> list[str]:
    """What the cases give each heuristic to decide, in words (from the reference alone)."""
    tally = {
        "admin_seat decides the pick": 0,
        "population_order decides the pick": 0,
        "a population tie among the best candidates decides the pick": 0,
        "the 市 retry is due": 0,
        "the 市 retry changes the place": 0,
        "the name ends in 市": 0,
        "nothing found for the name": 0,
        "a PPLA2–PPLA4 seat is picked": 0,
        "a candidate without coordinates": 0,
        "a name outside CJK and ASCII": 0,
    }
    for case in cases:
        first = case.answer(case.city) or []
        pick = ref.pick(first)
        for h in ("admin_seat", "population_order"):
            without = tuple(x for x in ref.HEURISTICS if x != h)
            tally[f"{h} decides the pick"] += ref.pick(first, without) != pick
        keys = [
            (not ref.is_seat(c), -ref.population(c)) for c in first if ref.has_coordinates(c)
        ]
        tally["a population tie among the best candidates decides the pick"] += (
            len(keys) > 1 and keys.count(min(keys)) > 1
        )
        due = ref.retry_due(case.city, pick)
        tally["the 市 retry is due"] += due
        if due:
            final = ref.final_pick(pick, ref.pick(case.answer(ref.retry_name(case.city)) or []))
            tally["the 市 retry changes the place"] += final is not pick
        tally["the name ends in 市"] += case.city.endswith(ref.SHI)
        tally["nothing found for the name"] += not first
        tally["a PPLA2–PPLA4 seat is picked"] += (
            pick is not None and pick.get("feature_code") in ("PPLA2", "PPLA3", "PPLA4")
        )
        tally["a candidate without coordinates"] += any(
            not c.located for a in (case.first, case.retry) if a for c in a
        )
        tally["a name outside CJK and ASCII"] += any(
            ord(ch) > 127 and not ("\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af")
            for ch in case.city
        )
    return [f"{what}: {n} case(s)" for what, n in tally.items()]


def _variant(on: tuple[str, ...]) -> str:
    off = [h for h in ref.HEURISTICS if h not in on]
    return "the baseline" + (f" without {', '.join(off)}" if off else "")


def check_properties(
    seed: int = SEED, n: int = CASES, baseline: BaselineFactory = oneshot_baseline
) -> Check:
    """The ``baseline_properties`` check: the baseline's get_weather, with every heuristic on
    and without each in turn, run on the ``n`` generated cases of ``seed`` and held against
    the reference. Fails naming each heuristic (or ``geocoding query``, ``forecast``,
    ``geocoding``) some variant departs on, with its smallest counterexample: the full
    baseline's where it departs, else the first ablated variant's."""
    cases = generate(seed, n)
    evidence = [
        f"{n} generated cases (random.Random({seed})), each run through the study's oneshot "
        "get_weather over an in-memory Open-Meteo; printed by: python -m "
        f"toolreplay.study.weather.properties --seed {seed} --cases {n}",
        "what the cases give the heuristics to decide (read with the reference): "
        + "; ".join(coverage(cases)),
        f"e.g. case 1: {cases[0]}",
    ]
    variants = [
        ref.HEURISTICS,
        *(tuple(x for x in ref.HEURISTICS if x != h) for h in ref.HEURISTICS),
    ]
    runs = {on: [run_case(case, on, baseline) for case in cases] for on in variants}
    kept = frozenset(code for r in runs[ref.HEURISTICS] for code in r.seats_kept)
    # Named in the explanation: the full baseline's departures; when it has none, the first
    # ablated variant's of each heuristic (an ablated variant departing after the full one
    # often shows the same fault through another heuristic: the evidence lists them all).
    found: dict[str, tuple[str, Counterexample]] = {}
    for on in variants:
        examples = counterexamples(runs[on], kept)
        if not examples:
            evidence.append(
                f"{_variant(on)}: on all {n} cases it sent the reference's geocoding query, "
                "its 市 retry exactly when due and its forecast query, and returned the place "
                "it picks"
            )
        for example in examples:
            evidence.append(f"unfaithful: {_variant(on)}: {example}")
            if on != ref.HEURISTICS and "the baseline" in (v for v, _ in found.values()):
                continue
            found.setdefault(example.heuristic, (_variant(on), example))
    calls = n * len(variants)
    if found:
        named = "; ".join(
            f"{label} ({variant}, {example.count} of {n} cases): smallest counterexample "
            f"{example.case}: {example.text}"
            for label, (variant, example) in sorted(found.items(), key=lambda kv: _order(kv[0]))
        )
        return Check(
            NAME,
            False,
            f"on generated geocoding answers (seed {seed}) the baseline departs from the "
            f"reference heuristics ({ref.__name__}) naming {', '.join(sorted(found, key=_order))}: "
            f"{named}",
            tuple(evidence),
        )
    return Check(
        NAME,
        True,
        f"on {n} generated geocoding answers (seed {seed}: population orders and ties, seat "
        "levels, nothing found, names with 市 and in other scripts) the baseline, with every "
        "heuristic and without each in turn, makes the reference's calls in all "
        f"{calls} get_weather calls",
        tuple(evidence),
    )


#: The check's name in the audit.
NAME = "baseline_properties"


def main(argv: Sequence[str] | None = None) -> int:
    """Print every generated case of a seed, numbered (``--seed``, ``--cases``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m toolreplay.study.weather.properties")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--cases", type=int, default=CASES)
    args = parser.parse_args(argv)
    for k, case in enumerate(generate(args.seed, args.cases), 1):
        print(f"{k}: {case}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
