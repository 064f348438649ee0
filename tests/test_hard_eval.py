"""The harder eval file: what it covers, and fixture data behind every place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolreplay.evals import load_eval
from toolreplay.study.weather.fixture_server import load_fixtures
from toolreplay.study.weather.hints import hints_of

HARD = Path(__file__).resolve().parents[1] / "evals" / "weather-hard.yaml"


def test_hard_eval_covers_what_it_promises():
    suite = load_eval(HARD)
    qs = {q.id: q for q in suite.questions}
    assert len(qs) >= 12
    measures = {q.measure for q in qs.values()}
    assert {"temperature", "precipitation", "comparison", "wind", "none"} <= measures
    assert any(q.text.isascii() for q in qs.values())  # an English question
    assert any(not q.places for q in qs.values())  # one that needs no tool
    assert any(p.region is None for q in qs.values() for p in q.places)  # an unknown place
    assert any(len(q.places) == 3 and q.measure == "comparison" for q in qs.values())
    assert any(q.day == "tomorrow" for q in qs.values()) and any(
        q.day == "today" for q in qs.values()
    )


def test_every_place_has_fixture_data():
    """Each place's region is reachable by one of the names the model may ask, and every
    candidate in that region (and the first one outside it) has a forecast cell."""
    data = load_fixtures()
    cells = data["forecast"]

    def cell(lat: float, lon: float) -> dict | None:
        return next(
            (
                c
                for c in cells
                if abs(c["latitude"] - lat) <= 0.5 and abs(c["longitude"] - lon) <= 0.5
            ),
            None,
        )

    for q in load_eval(HARD).questions:
        queries = hints_of(q).queries
        for place in q.places:
            answers = [data["search"].get(n, {}).get("results", []) for n in queries(place.query)]
            candidates = [c for a in answers for c in a]
            if place.region is None:
                assert candidates == [], place
                continue
            fits = [c for c in candidates if c.get("admin1") == place.region]
            assert fits, (q.id, place)
            for c in fits:
                assert cell(c["latitude"], c["longitude"]) is not None, (q.id, c)
    for entry in data["search"].values():
        assert entry["source"].strip()
    for c in cells:
        assert c["source"].strip()
        assert c.get("synthetic", False) is (c["name"] != "北京"), c["name"]


@pytest.mark.slow
def test_audit_on_the_hard_set_flips_every_heuristic(hard_run):
    """`toolreplay run/audit --eval evals/weather-hard.yaml --set hard`: the ablation check
    lists a flip for admin_seat, population_order and shi_retry."""
    result, out = hard_run
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    flipped: dict[str, list] = {}
    for a in results["fidelity"]["ablations"]:
        flipped.setdefault(a["heuristic"], []).extend(a["flips"])
    for heuristic in ("admin_seat", "population_order", "shi_retry"):
        assert flipped[heuristic], heuristic
    by_question = {
        (a["heuristic"], f["question_id"]) for a in results["fidelity"]["ablations"]
        for f in a["flips"]
    }  # fmt: skip
    assert ("admin_seat", "tongzhou-jiangsu-wind") in by_question
    assert ("population_order", "changsha") in by_question
    assert ("shi_retry", "lijiang-rain") in by_question
