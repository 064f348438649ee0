"""The audit's reference for the oneshot baseline (``study/weather/reference.py``): written from
the study's description, sharing no code with the toolsets it audits, and the quiet weakenings
of the baseline it must catch once re-recorded with the stand-in."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolreplay.audit.run import run_audit
from toolreplay.cassettes.manifest import read_manifest
from toolreplay.evals import EvalSuite, load_eval
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.study.weather import reference as ref
from toolreplay.study.weather.baseline import check_baseline
from toolreplay.study.weather.fixture_server import load_fixtures

from .conftest import EVAL_FILE, HARD_EVAL_FILE, REFERENCE, REPO
from .weakened import weakened_oneshot

FIX = load_fixtures()
WEATHER = REPO / "src" / "toolreplay" / "study" / "weather"


# ---- the reference is a specification, not the implementation ------------------------------


def _imports(path: Path) -> set[str]:
    """Every module a file imports (function-level imports included), and the names it takes
    from them (``module:name``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out.add(base)
            out |= {f"{base}:{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("module", ["reference.py", "baseline.py"])
def test_the_audit_shares_no_code_with_the_toolsets_it_audits(module):
    imports = _imports(WEATHER / module)
    implementation = ("toolsets", "openmeteo")
    assert not [i for i in imports if any(m in i for m in implementation)], imports
    for name in ("choose_place", "is_admin_seat", "Heuristics", "ADMIN_SEAT_CODES"):
        assert not [i for i in imports if i.endswith(f":{name}")], name


def test_the_reference_imports_nothing_of_the_project():
    """Readable on its own as the specification."""
    assert not [i for i in _imports(WEATHER / "reference.py") if "toolreplay" in i]


def _where(c: Any) -> tuple[str, str] | None:
    return None if c is None else (c["name"], c["admin1"])


def _answer(name: str) -> list[dict[str, Any]]:
    entry = FIX["search"].get(name)
    return list(entry["results"]) if entry else []


# What the reference picks from each fixture answer, derived by hand from the candidates'
# feature codes and populations (see the fixture file) — not by running any code:
# (query, the pick with every heuristic on, is the 市 retry due, the place returned at the end)
HAND_TABLE = [
    # one PPL village in 西藏, no seat: the pick is it, and the retry is due; 宁德市 is a PPLA2
    ("宁德", ("宁德", "西藏自治区"), True, ("宁德市", "福建省")),
    ("宁德市", ("宁德市", "福建省"), False, ("宁德市", "福建省")),  # ends in 市: never retried
    # the capital (PPLC) over two PPL villages
    ("北京", ("北京", "北京市"), False, ("北京", "北京市")),
    ("上海", ("上海", "上海市"), False, ("上海", "上海市")),  # PPLA over a PPL village
    ("广州", ("广州", "广东省"), False, ("广州", "广东省")),
    # one PPL village in 湖南: retry; 丽江市 is a PPLA2 in 云南
    ("丽江", ("丽江", "湖南"), True, ("丽江市", "云南")),
    # 通州 (北京市, PPL, 163,326) ranks first, 通州 (江苏省, PPLA3, 95,647): the seat wins
    ("通州", ("通州", "江苏省"), False, ("通州", "江苏省")),
    ("通州区", ("通州", "江苏省"), False, ("通州", "江苏省")),
    # two seats: 长沙 (广东省 PPLA3, 688,242) first, 长沙 (湖南省 PPLA, 3,093,980): population
    ("长沙", ("长沙", "湖南省"), False, ("长沙", "湖南省")),
    ("南昌", ("南昌", "江西省"), False, ("南昌", "江西省")),
    ("杭州", ("杭州", "浙江"), False, ("杭州", "浙江")),
    ("哈尔滨", ("哈尔滨", "黑龙江省"), False, ("哈尔滨", "黑龙江省")),
    ("厦门", ("厦门", "福建省"), False, ("厦门", "福建省")),  # a PPLA2 is a seat: no retry
    ("拉萨", ("拉萨", "西藏自治区"), False, ("拉萨", "西藏自治区")),
    # three PPL (重庆, 山西, 江西) around the capital (PPLC, third): the seat wins
    ("Beijing", ("北京", "北京市"), False, ("北京", "北京市")),
    # nothing found, nor for 霍格沃茨市: the retry is due and the call finds no place
    ("霍格沃茨", None, True, None),
    ("南昌县", None, True, None),
]


@pytest.mark.parametrize(("query", "picked", "due", "returned"), HAND_TABLE)
def test_the_reference_picks_what_the_hand_derived_table_says(query, picked, due, returned):
    first = ref.pick(_answer(query))
    assert _where(first) == picked
    assert ref.retry_due(query, first) is due
    final = ref.final_pick(first, ref.pick(_answer(ref.retry_name(query)))) if due else first
    assert _where(final) == returned


def test_the_hand_table_covers_every_fixture_answer():
    assert {q for q, *_ in HAND_TABLE} >= {n for n in FIX["search"] if not n.endswith("市")}


def test_the_ablated_references_pick_without_exactly_their_heuristic():
    without = {h: tuple(x for x in ref.HEURISTICS if x != h) for h in ref.HEURISTICS}
    # without the seat preference, the larger 北京 通州 (PPL) wins, and it is no seat: retry
    assert _where(ref.pick(_answer("通州区"), without["admin_seat"])) == ("通州", "北京市")
    assert ref.retry_due("通州区", ref.pick(_answer("通州区"), without["admin_seat"]),
                         without["admin_seat"])  # fmt: skip
    # without population order, the first-ranked seat: 广东's 长沙
    assert _where(ref.pick(_answer("长沙"), without["population_order"])) == ("长沙", "广东省")
    # the capital is still the first seat in Open-Meteo's order
    assert _where(ref.pick(_answer("Beijing"), without["population_order"])) == ("北京", "北京市")
    # without the retry, bare 宁德 stays in 西藏
    assert not ref.retry_due("宁德", ref.pick(_answer("宁德")), without["shi_retry"])
    # with neither choosing heuristic, Open-Meteo's first candidate
    assert _where(ref.pick(_answer("Beijing"), ("shi_retry",))) == ("北京", "重庆市")


def test_ties_missing_populations_and_candidates_without_coordinates():
    a = {"name": "a", "admin1": "x", "latitude": 1.0, "longitude": 1.0, "feature_code": "PPL"}
    b = {**a, "name": "b", "population": 5}
    c = {**a, "name": "c", "population": 5}
    nowhere = {"name": "n", "admin1": "x", "feature_code": "PPLC", "population": 10**8}
    assert ref.pick([a, b, c])["name"] == "b"  # a tie keeps Open-Meteo's order
    assert ref.pick([nowhere, a])["name"] == "a"  # no coordinates: cannot be forecast
    assert ref.pick([nowhere]) is None
    assert ref.pick([{**a, "population": None}, b])["name"] == "b"  # missing counts as 0


def test_the_reference_and_the_toolsets_agree_on_every_fixture_answer():
    """Two implementations written apart agree on the data the sets are recorded from."""
    from toolreplay.study.weather.toolsets import Heuristics, choose_place, is_admin_seat

    answers = [list(e["results"]) for e in FIX["search"].values()]
    answers += [list(reversed(a)) for a in answers if len(a) > 1]
    for answer, on in itertools.product(
        answers, itertools.chain.from_iterable(
            itertools.combinations(ref.HEURISTICS, n) for n in range(4))
    ):  # fmt: skip
        h = Heuristics(**{n: n in on for n in Heuristics.names()})
        assert ref.pick(answer, on) == choose_place(answer, h), (answer, on)
        for c in answer:
            assert ref.is_seat(c) == is_admin_seat(c)


def test_query_parameters_are_compared_with_the_reference():
    same = {"name": ["北京"], "count": ["10"], "language": ["zh"], "format": ["json"]}
    assert ref.geocoding_differences(same, "北京") == []
    assert ref.geocoding_differences({k: v for k, v in same.items() if k != "format"}, "北京") == []
    assert ref.geocoding_differences({**same, "count": ["1"]}, "北京") == [
        "count=1 (reference: count=10)"
    ]
    assert ref.geocoding_differences({**same, "language": ["en"], "country": ["CN"]}, "北京") == [
        "language=en (reference: language=zh)",
        "country=CN (the reference sends no country)",
    ]
    place = {"latitude": 39.9075, "longitude": 116.39723}
    forecast = {
        "latitude": ["39.9075"],
        "longitude": ["116.39723"],
        "current": ["temperature_2m,relative_humidity_2m,weather_code,wind_speed_10m"],
        "daily": [
            "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,"
            "wind_speed_10m_max"
        ],
        "timezone": ["auto"],
        "forecast_days": ["3"],
    }
    assert ref.forecast_differences(forecast, place) == []
    assert ref.forecast_differences({**forecast, "temperature_unit": ["celsius"]}, place) == []
    daily = forecast["daily"][0].replace(",precipitation_sum", "")
    assert ref.forecast_differences(
        {**forecast, "daily": [daily], "temperature_unit": ["fahrenheit"], "latitude": ["30.0"]},
        place,
    ) == [
        "latitude=30.0 (reference: 39.9075, the place's)",
        "daily without precipitation_sum (reference: precipitation_sum,temperature_2m_max,"
        "temperature_2m_min,weather_code,wind_speed_10m_max)",
        "temperature_unit=fahrenheit (reference: temperature_unit=celsius)",
    ]
    assert ref.forecast_differences({**forecast, "timezone": ["GMT"]}, place) == [
        "timezone=GMT (reference: timezone=auto)"
    ]


# ---- the faithful baseline passes on both eval files ---------------------------------------


def _baseline_check(set_dir: Path, suite: EvalSuite):
    from toolreplay.runs.configuration import ablation_configurations, study_configurations

    oneshot = [c for c in study_configurations(suite) if c.toolset == "oneshot"]
    return check_baseline(
        set_dir, suite, read_manifest(set_dir), oneshot, ablation_configurations(suite)
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("eval_file", "set_dir", "calls"),
    [(EVAL_FILE, REFERENCE, 241), (HARD_EVAL_FILE, REPO / "cassettes" / "hard", 125)],
)
def test_the_faithful_baseline_passes_on_both_eval_files(eval_file, set_dir, calls):
    check = _baseline_check(set_dir, load_eval(eval_file))
    assert check.passed, check.explanation
    line = next(e for e in check.evidence if e.startswith("reference ("))
    assert f"{calls} get_weather call(s)" in line
    assert "its 市 retry exactly when due and its forecast query" in line
    assert not [e for e in check.evidence if e.startswith("unfaithful:")]


# ---- weakenings, re-recorded with the stand-in ---------------------------------------------


class _Tweaked:
    """An Open-Meteo client that sends other parameters than it is asked to: ``count`` for the
    first query or the 市 retry; the forecast without a daily variable or with ``extra``
    parameters."""

    def __init__(
        self,
        real: Any,
        *,
        first_count: int = 10,
        retry_count: int = 10,
        drop_daily: str = "",
        extra: dict[str, str] | None = None,
    ) -> None:
        self.real = real
        self.first_count, self.retry_count, self.drop_daily = first_count, retry_count, drop_daily
        self.extra = extra or {}

    def search(self, name: str, *, count: int = 10, language: str = "zh") -> list[dict]:
        n = self.retry_count if name.endswith("市") else self.first_count
        return self.real.search(name, count=n, language=language)

    def forecast(self, latitude: float, longitude: float, *, forecast_days: int = 3) -> dict:
        from toolreplay.study.weather.openmeteo import CURRENT_VARIABLES, DAILY_VARIABLES

        daily = [v for v in DAILY_VARIABLES if v != self.drop_daily]
        return self.real._get(
            self.real.forecast_url,
            {
                "latitude": latitude,
                "longitude": longitude,
                "current": ",".join(CURRENT_VARIABLES),
                "daily": ",".join(daily),
                "timezone": "auto",
                "forecast_days": forecast_days,
                **self.extra,
            },
        )


def _retry_only_when_nothing_found(real: Callable) -> Callable:
    """get_weather whose 市 retry fires only when geocoding finds nothing at all (not when it
    finds no admin seat)."""
    return weakened_oneshot(real, retry_due=lambda chosen, heuristics: chosen is None)


def _population_reversed(candidates, heuristics):
    """choose_place with the population order reversed (smallest first)."""
    from toolreplay.study.weather import toolsets

    pool = list(candidates)
    if not pool:
        return None
    if heuristics.population_order:
        pool.sort(key=lambda c: c.get("population") or 0)  # the weakening: no minus sign
    if heuristics.admin_seat:
        seats = [c for c in pool if toolsets.is_admin_seat(c)]
        if seats:
            return seats[0]
    return pool[0]


def _record(
    tmp_path: Path, eval_file: Path, questions: Sequence[str], monkeypatch: pytest.MonkeyPatch,
    weaken: Callable[[pytest.MonkeyPatch], None] | None,
):  # fmt: skip
    """Record single+oneshot on ``questions`` of ``eval_file`` with the stand-in, the baseline
    weakened by ``weaken``, and audit that set with the same code, as a project whose baseline
    was weakened would (so the recording replays and only the reference can tell; the other
    configurations are simply absent): ``(audit, the baseline check)``."""
    from toolreplay.runs.configuration import study_configurations
    from toolreplay.runs.record import record_stand_in

    full = load_eval(eval_file)
    suite = replace(full, questions=tuple(q for q in full.questions if q.id in questions))
    configs = [c for c in study_configurations(suite) if c.name == "single+oneshot"]
    with monkeypatch.context() as m:
        if weaken is not None:
            weaken(m)
        record_stand_in(tmp_path / "set", suite, configs)
        result = run_audit(tmp_path / "set", suite, FULL_JUDGE)  # replayed with the same code
    return result, result.check("baseline_heuristics")


def _departures(check) -> list[str]:
    return [e.removeprefix("unfaithful: ") for e in check.evidence if e.startswith("unfaithful:")]


@pytest.mark.slow
def test_the_faithful_baseline_rerecorded_departs_nowhere(tmp_path, loopback, monkeypatch):
    """The control: the same recording path, no weakening, no departure."""
    questions = ["changsha", "xiamen", "lijiang-rain", "ningde-rain"]
    _, check = _record(tmp_path, HARD_EVAL_FILE, questions, monkeypatch, None)
    assert _departures(check) == []
    assert "departs" not in check.explanation
    assert "4 get_weather call(s) in 4 recorded episode(s)" in "\n".join(check.evidence)


@pytest.mark.slow
def test_population_order_reversed_fails_the_audit_naming_it(tmp_path, loopback, monkeypatch):
    """weather-hard: 长沙 has two seats, the larger in 湖南; reversed, the baseline goes to 广东
    (single+oneshot 11/13 → 9/13 when the whole set is re-recorded)."""
    from toolreplay.study.weather import toolsets

    result, check = _record(
        tmp_path, HARD_EVAL_FILE, ["changsha", "hottest-three"], monkeypatch,
        lambda m: m.setattr(toolsets, "choose_place", _population_reversed),
    )  # fmt: skip
    assert not result.passed and not check.passed
    assert "departs from the reference heuristics" in check.explanation
    assert "population_order ×2" in check.explanation
    wrong = (
        "get_weather(长沙) returned 长沙 (广东省 PPLA3), but the reference heuristics pick 长沙 "
        "(湖南省 PPLA) from the geocoding answers recorded for it (population 688,242 returned, "
        "3,093,980 picked: the larger population wins)"
    )
    assert wrong in check.explanation
    assert _departures(check) == [
        f"population_order: single+oneshot/changsha: {wrong}",
        f"population_order: single+oneshot/hottest-three: {wrong}",
    ]


@pytest.mark.slow
def test_a_seat_level_dropped_from_the_list_fails_the_audit_naming_it(
    tmp_path, loopback, monkeypatch
):
    """weather-hard: 厦门's only candidate is a PPLA2. A baseline whose seat list lacks PPLA2
    picks the same place (no pass rate moves: the weakening is latent) but sends a 市 retry the
    reference does not send. 长沙 (PPLA, no retry) shows the other seat levels kept."""
    from toolreplay.study.weather import toolsets

    result, check = _record(
        tmp_path, HARD_EVAL_FILE, ["xiamen", "changsha"], monkeypatch,
        lambda m: m.setattr(toolsets, "ADMIN_SEAT_CODES", ("PPLC", "PPLA", "PPLA3", "PPLA4")),
    )  # fmt: skip
    assert not result.passed and not check.passed
    assert _departures(check) == [
        "admin_seat: single+oneshot/xiamen: get_weather(厦门) re-queried 厦门市 after picking 厦门 "
        "(福建省 PPLA2), an admin seat (PPLC, PPLA, PPLA2, PPLA3, PPLA4): the reference sends no "
        "retry; the baseline does not count PPLA2 as an admin seat (no recorded call picked a "
        "PPLA2 without re-querying)"
    ]
    assert "admin_seat ×1" in check.explanation
    assert rows_passed(result, "single+oneshot") == (2, 2)  # latent in the pass rate


def rows_passed(result, name: str) -> tuple[int, int]:
    row = next(r for r in result.tables["faithful"].rows if r.name == name)
    return row.passed, row.total


@pytest.mark.slow
@pytest.mark.parametrize(
    ("eval_file", "questions", "city", "village"),
    [
        (HARD_EVAL_FILE, ["lijiang-rain", "xiamen"], "丽江", "丽江 (湖南 PPL)"),
        (EVAL_FILE, ["ningde", "beijing"], "宁德", "宁德 (西藏自治区 PPL)"),
    ],
    ids=["weather-hard", "weather"],
)
def test_a_retry_sent_only_when_nothing_is_found_fails_the_audit_naming_it(
    tmp_path, loopback, monkeypatch, eval_file, questions, city, village
):
    """The 市 retry fires only when geocoding finds nothing at all: bare 丽江 / 宁德 find a
    village, so no retry is sent. The audit names shi_retry and blames the baseline, not the
    eval file (on weather.yaml the retry then never acts at all)."""
    from toolreplay.study.weather import toolsets

    result, check = _record(
        tmp_path, eval_file, questions, monkeypatch,
        lambda m: m.setattr(
            toolsets, "oneshot_toolset", _retry_only_when_nothing_found(toolsets.oneshot_toolset)
        ),
    )  # fmt: skip
    assert not result.passed and not check.passed
    assert _departures(check) == [
        f"shi_retry: single+oneshot/{questions[0]}: get_weather({city}) sent no 市 retry, but "
        f"the reference re-queries {city}市 after picking {village} (not an admin seat)"
    ]
    assert "shi_retry ×1" in check.explanation
    idle = re.search(r"([\w, ]+) never acted", check.explanation)
    assert idle is None or "shi_retry" not in idle.group(1)  # the baseline's fault, not the file's
    assert rows_passed(result, "single+oneshot") == (1, 2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("eval_file", "questions", "tweak", "expected"),
    [
        (
            HARD_EVAL_FILE,
            ["changsha"],
            {"first_count": 1},
            "geocoding query: single+oneshot/changsha: get_weather(长沙): the geocoding query "
            "was sent with count=1 (reference: count=10); admin_seat and population_order "
            "choose among the candidates it asks for, and shi_retry reads its pick",
        ),
        (
            EVAL_FILE,
            ["ningde"],
            {"retry_count": 1},
            "shi_retry: single+oneshot/ningde: get_weather(宁德): the 市 retry 宁德市 was sent "
            "with count=1 (reference: count=10)",
        ),
        (
            EVAL_FILE,
            ["beijing"],
            {"drop_daily": "wind_speed_10m_max"},
            "forecast: single+oneshot/beijing: get_weather(北京): the forecast query was sent "
            "with daily without wind_speed_10m_max (reference: precipitation_sum,"
            "temperature_2m_max,temperature_2m_min,weather_code,wind_speed_10m_max)",
        ),
        (
            EVAL_FILE,
            ["beijing"],
            {"extra": {"temperature_unit": "fahrenheit"}},
            "forecast: single+oneshot/beijing: get_weather(北京): the forecast query was sent "
            "with temperature_unit=fahrenheit (reference: temperature_unit=celsius)",
        ),
    ],
    ids=["first-query-count", "retry-count", "forecast-fields", "forecast-units"],
)
def test_a_query_sent_with_other_parameters_fails_the_audit_naming_it(
    tmp_path, loopback, monkeypatch, eval_file, questions, tweak, expected
):
    """The place returned can be the reference's pick on what was recorded (with count=1 the
    recorded answer holds one candidate), so only the recorded request URIs show it."""
    from toolreplay.study.weather import toolsets

    real = toolsets.oneshot_toolset

    def weaken(m: pytest.MonkeyPatch) -> None:
        m.setattr(
            toolsets,
            "oneshot_toolset",
            lambda client, heuristics=None: real(_Tweaked(client, **tweak), heuristics),
        )

    result, check = _record(tmp_path, eval_file, questions, monkeypatch, weaken)
    assert not result.passed and not check.passed
    assert _departures(check) == [expected]
    assert "departs from the reference heuristics" in check.explanation
