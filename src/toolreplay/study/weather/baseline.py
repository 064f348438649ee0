"""The weather study's baseline audit: what the recorded geocoding traffic shows of the three
reference heuristics (which place each query returned, which heuristic acted, whether the
place chosen is the one the heuristics pick).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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
from toolreplay.study.weather.toolsets import Heuristics, choose_place, is_admin_seat

HEURISTICS = Heuristics.names()


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


def unfaithful_choices(path: Path, heuristics: Heuristics) -> list[str]:
    """``get_weather`` results whose returned place is not the one the reference heuristics
    pick from the geocoding answers recorded for that call (the query, and the 市 retry's query
    right after it), in words; empty when the tool returned what the reference would."""
    searches = _searches(path)
    used: set[int] = set()
    out = []
    for name, args, result in recorded_tool_results(path):
        returned = _returned_place(result)
        if name != "get_weather" or returned is None or not isinstance(args, Mapping):
            continue
        city = str(args.get("city", ""))
        n = next((k for k, s in enumerate(searches) if s[0] == city and k not in used), None)
        if n is None:
            continue
        used.add(n)
        expected = choose_place(searches[n][1], heuristics)
        retry = searches[n + 1] if n + 1 < len(searches) else None
        if (
            heuristics.shi_retry
            and (expected is None or not is_admin_seat(expected))
            and not city.endswith("市")
            and retry is not None
            and retry[0] == city + "市"
            and retry[2] == searches[n][2] + 1
        ):
            used.add(n + 1)
            expected = choose_place(retry[1], heuristics) or expected
        if expected is not None and not _same_place(expected, returned):
            out.append(
                f"get_weather({city}) returned {_place(returned)}, but the reference heuristics "
                f"pick {_place(expected)} from the geocoding answers recorded for it"
            )
    return out


def _searches(path: Path) -> list[tuple[str, list[dict[str, Any]], int]]:
    """``(name, results, position)`` of every geocoding request recorded in a cassette, in
    order; ``position`` is the interaction's index, so two searches with nothing recorded
    between them (the same tool call) can be told from two tool calls."""
    out = []
    for position, i in enumerate(_read(path)):
        uri = i["request"]["uri"]
        if urlsplit(uri).path.endswith("/search"):
            name = parse_qs(urlsplit(uri).query).get("name", [""])[0]
            body = i["response"]["body"].get("parsed_body") or {}
            out.append((name, body.get("results", []), position))
    return out


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
    full = Heuristics()
    searches = _searches(path)
    for n, (name, results, position) in enumerate(searches):
        seats = [c for c in results if is_admin_seat(c)]
        others = [c for c in results if not is_admin_seat(c)]
        pick = choose_place(results, full)
        if seats and others:
            decided = choose_place(results, full.without("admin_seat")) != pick
            found["admin_seat"].append(
                (
                    f"{name}: preferred {_place(seats[0])} over "
                    + ", ".join(_place(c) for c in others),
                    decided,
                )
            )
        if len(results) >= 2:
            decided = choose_place(results, full.without("population_order")) != pick
            pops = ", ".join(f"{c.get('population', 0):,}" for c in results)
            found["population_order"].append(
                (f"{name}: compared {len(results)} candidates by population ({pops})", decided)
            )
        nxt = searches[n + 1] if n + 1 < len(searches) else None
        # The tool's own retry: the very next recorded interaction re-queries X市. A model that
        # calls get_weather("X市") itself shows a model request in between.
        if not seats and nxt is not None and nxt[0] == name + "市" and nxt[2] == position + 1:
            first = _place(results[0]) if results else "no candidate"
            decided = any(is_admin_seat(c) for c in nxt[1])
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
    ablated baseline's recorded tool results for the same call. Fails when a heuristic is
    off, never acted, or the full baseline returned a place the reference heuristics would not
    pick from its own recorded geocoding answers (e.g. a retry whose result is discarded)."""
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
    heuristics = Heuristics(**{h: h in configured and h in recorded for h in HEURISTICS})
    unfaithful = [
        f"{episode_key(config.name, q.id)}: {line}"
        for config in oneshot
        for q in suite.questions
        if (path := cassette_path(set_dir, config.name, q.id)).exists()
        for line in unfaithful_choices(path, heuristics)
    ]
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
    evidence += [f"unfaithful: {u}" for u in unfaithful]
    if missing:
        return Check(
            "baseline_heuristics",
            False,
            f"the oneshot baseline runs without {', '.join(missing)}: it is weaker than the "
            "reference, so any win against it is inflated",
            tuple(evidence),
        )
    if idle:
        return Check(
            "baseline_heuristics",
            False,
            f"{', '.join(idle)} never acted in the recorded episodes: add a question whose "
            "geocoding answer gives it something to do",
            tuple(evidence),
        )
    if unfaithful:
        return Check(
            "baseline_heuristics",
            False,
            f"the baseline returned a place the reference heuristics would not choose in "
            f"{len(unfaithful)} tool call(s) (e.g. {unfaithful[0]}): a heuristic runs but its "
            "result is not used, so the baseline is weaker than the reference",
            tuple(evidence),
        )
    return Check(
        "baseline_heuristics",
        True,
        "all three reference heuristics are on, each acted on a recorded geocoding answer, and "
        "every place returned is the one they pick; "
        + (
            f"only {', '.join(deciding)} changed the place chosen"
            if deciding and len(deciding) < len(HEURISTICS)
            else "each changed the place chosen somewhere"
            if deciding
            else "none changed the place chosen"
        ),
        tuple(evidence),
    )
