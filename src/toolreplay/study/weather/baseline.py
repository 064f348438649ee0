"""The weather study's baseline audit: the recorded Open-Meteo traffic of the oneshot baseline
held against the reference (:mod:`toolreplay.study.weather.reference`, a specification written
from the study's description that shares no code with the toolsets it audits): which query each
call sent and with which parameters, whether it sent the 市 retry exactly when due, which place
it returned and whether that is the reference's pick, and which heuristic acted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolreplay.audit.tables import Check
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
from toolreplay.study.weather.calls import (
    CallAudit,
    Departure,
    attributed_departure,
    audit_calls,
    place_label,
    recorded_requests,
    returned_place,
    same_place,
    tool_results,
)

HEURISTICS = ref.HEURISTICS


def _signature(name: str, args: Any) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"


def place_changes(full: Path, ablated: Path) -> list[str]:
    """Tool calls made in both recorded episodes whose *returned* place differs, in words
    (``get_weather({"city": "宁德"}) returned 宁德市 (福建省 PPLA2) with it, 宁德 (西藏自治区
    PPL) without``)."""
    theirs: dict[str, Any] = {}
    for name, args, result in tool_results(ablated):
        theirs.setdefault(_signature(name, args), result)
    out = []
    for name, args, result in tool_results(full):
        sig = _signature(name, args)
        if sig not in theirs:
            continue
        a, b = returned_place(result), returned_place(theirs[sig])
        if (a is not None or b is not None) and not same_place(a, b):
            shown_a = place_label(a) if a else "no place"
            shown_b = place_label(b) if b else "no place"
            out.append(f"{sig} returned {shown_a} with it, {shown_b} without")
    return out


def _searches(path: Path) -> list[tuple[str, list[dict[str, Any]], int]]:
    """``(name, results, position)`` of every geocoding request recorded in a cassette, in
    order; ``position`` is the interaction's index, so two searches with nothing recorded
    between them (the same tool call) can be told from two tool calls."""
    return [(r.name, r.results, r.position) for r in recorded_requests(path) if r.kind == "search"]


def _without(heuristic: str) -> tuple[str, ...]:
    return tuple(h for h in HEURISTICS if h != heuristic)


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
                    f"{name}: preferred {place_label(seats[0])} over "
                    + ", ".join(place_label(c) for c in others),
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
            first = place_label(results[0]) if results else "no candidate"
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
    uses: dict[str, Mapping[str, list[tuple[str, bool]]]] = {}
    departures, calls, episodes, of_ablated = _departures(
        set_dir, suite, manifest, oneshot, ablated, uses
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
    uses: dict[str, Mapping[str, list[tuple[str, bool]]]],
) -> tuple[list[tuple[str, Departure, bool]], int, int, int]:
    """Every departure from the reference of the full baseline (all heuristics on) and of each
    ablated baseline (all but the one it ablates), over every recorded trial, as ``(episode
    key, departure, of an ablated baseline)``, the full baseline's first; with the number of
    get_weather calls, of episodes read, and of those the ablated baselines'. Fills ``uses``
    with the :func:`exercised_heuristics` of the full baseline's first trials, by episode key,
    as it reads each (so each cassette is read once)."""
    audits: list[tuple[str, CallAudit, bool]] = []
    for config in [*oneshot, *ablated]:
        on = tuple(h for h in HEURISTICS if h != config.ablated)
        for q in suite.questions:
            for trial in range(1, max(manifest.trials, 1) + 1):
                path = cassette_path(set_dir, config.name, q.id, trial)
                if path.exists():
                    key = episode_key(config.name, q.id, trial)
                    audits.append((key, audit_calls(path, on), config.ablated is not None))
                    if trial == 1 and config in oneshot:
                        uses[episode_key(config.name, q.id)] = exercised_heuristics(path)
    kept = frozenset(code for _, a, _ in audits for code in a.seats_kept)
    departures = [
        (key, attributed_departure(d, kept), weakened)
        for key, a, weakened in audits
        for d in a.departures
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
