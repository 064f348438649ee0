"""The judge's vocabulary: the engine reads a non-weather domain from data alone, the weather
study's vocabulary is the default and is loaded lazily, and no judging module imports a study."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.grounding import ground_answer
from toolreplay.judging.phrasings import PhrasingsError, load_corpus
from toolreplay.judging.toolvalues import tool_values
from toolreplay.judging.values import _grammar, find_measured_values
from toolreplay.judging.verdicts import (
    FORMAT_JUDGE,
    GROUNDED_JUDGE,
    FormatJudge,
    GroundedJudge,
    narrow_judge,
)
from toolreplay.judging.vocabulary import (
    Measure,
    Unit,
    Vocabulary,
    VocabularyError,
    default_vocabulary,
    study_vocabulary,
)
from toolreplay.studies import Study, load_study
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage

SRC = Path(__file__).resolve().parents[1] / "src"

#: A stock-lookup domain: counts of items on hand, read from a SKU look-up tool.
STOCK = Vocabulary(
    name="stock",
    units=(Unit("units", r"units?\b|件", "count"), Unit("pcs", r"pcs\b", "count")),
    measures=(Measure("stock", frozenset({"count"})),),
    key_units=(("on_hand", "units"),),
    ignored_keys=frozenset({"sku", "warehouse_id"}),
    narrow_name="pcs-only",
    narrow_units=("pcs",),
)

STOCK_JUDGE = GroundedJudge("grounded", vocabulary=STOCK)


def _episode(answer: str, result: dict[str, Any]) -> Episode:
    """One look-up of SKU ABC-1 returning ``result``, then ``answer``."""
    call = ToolCall("call_1", "lookup_sku", json.dumps({"sku": "ABC-1"}))
    first = ModelReply(None, (call,), "tool_calls")
    done = (ToolResult(call, json.dumps(result)),)
    final = ModelReply(answer)
    transcript = (
        {"role": "user", "content": "How many ABC-1 are on hand?"},
        first.to_message(),
        *(d.to_message() for d in done),
        final.to_message(),
    )
    rounds = (Round(1, True, first, done), Round(2, True, final))
    return Episode("stock", "abc-1", "How many ABC-1 are on hand?", transcript, rounds,
                   "converged", answer, Usage())  # fmt: skip


ON_HAND = {"sku": "ABC-1", "on_hand": {"value": 12, "unit": "units"}}


@pytest.mark.parametrize("result", [ON_HAND, {"sku": "ABC-1", "on_hand": 12, "warehouse_id": 7}])
def test_a_stock_answer_is_grounded_with_the_stock_vocabulary(result: dict[str, Any]) -> None:
    episode = _episode("ABC-1: 12 units on hand", result)
    verdict = STOCK_JUDGE.judge_episode(episode, "stock")
    assert verdict.passed, verdict.explanation
    [check] = verdict.checks
    assert check.match is not None and check.match.path == "$.on_hand"
    assert (check.value.value, check.value.kind) == (12.0, "count")
    assert verdict.explanation == (
        "states 12 units, which equals 12 units at $.on_hand of tool message 2"
    )
    assert classify(episode, STOCK_JUDGE, "stock") == ()


def test_an_invented_stock_count_fails_as_fabricated() -> None:
    episode = _episode("ABC-1: 15 units on hand", ON_HAND)
    verdict = STOCK_JUDGE.judge_episode(episode, "stock")
    assert not verdict.passed
    assert verdict.explanation == (
        "fabricated value: no tool result holds 15 units; the nearest count is 12 units at "
        "$.on_hand of tool message 2"
    )
    assert [f.mode for f in classify(episode, STOCK_JUDGE, "stock")] == [FABRICATED_VALUE]


def test_the_stock_vocabulary_reads_no_weather() -> None:
    """What the judge reads is the vocabulary's: °C means nothing to the stock domain, and
    a measure it does not declare cannot be answered."""
    assert find_measured_values("北京今天 30.9°C，降水 2.6 毫米", vocabulary=STOCK) == ()
    read = find_measured_values("3 件, 4 pcs", vocabulary=STOCK)
    assert [(v.text, v.kind) for v in read] == [("3 units", "count"), ("4 pcs", "count")]
    weather = {"current": {"temperature_2m": {"value": 26.1, "unit": "°C"}}, "on_hand": 5}
    pool = tool_values(_episode("", weather).transcript, STOCK)
    assert [(tv.text, tv.day) for tv in pool] == [("5 units", None)]  # no day words, no °C
    assert not STOCK_JUDGE.accepts("temperature")
    verdict = STOCK_JUDGE.judge_episode(_episode("26.1°C", weather), "temperature")
    assert verdict.explanation == "the grounded judge accepts no unit for temperature"
    assert not ground_answer("12 units", (), "stock", vocabulary=STOCK).checks[0].grounded


def test_judges_are_given_a_vocabulary_or_use_the_default_studys() -> None:
    weather = default_vocabulary()
    assert weather is study_vocabulary(load_study())
    assert weather.name == "weather" and weather.narrow_name == "celsius-only"
    assert GROUNDED_JUDGE.resolved_vocabulary() is weather
    assert FormatJudge("form", vocabulary=STOCK).judge("ABC-1: 12 units", "stock").passed
    assert not FORMAT_JUDGE.judge("ABC-1: 12 units", "temperature").passed
    narrow = narrow_judge(STOCK)
    assert narrow is narrow_judge(STOCK)  # one per vocabulary
    assert (narrow.name, [u.name for u in narrow.resolved_units()]) == ("pcs-only", ["pcs"])
    assert narrow.judge("4 pcs", "stock").passed and not narrow.judge("4 units", "stock").passed
    from toolreplay.judging import verdicts

    assert verdicts.NARROW_JUDGE is narrow_judge(weather)
    assert set(verdicts.JUDGES) == {"grounded", "format-only", "celsius-only"}


def test_what_is_compiled_from_a_vocabulary_is_compiled_once() -> None:
    assert _grammar(STOCK) is _grammar(STOCK)
    assert _grammar(STOCK) is not _grammar(default_vocabulary())


def _study(vocabulary: Any) -> Study:
    return Study("bare", (), lambda *a: None, dict, lambda *a: None, {}, vocabulary=vocabulary)


def test_a_study_gives_its_vocabulary_as_object_or_module_attr() -> None:
    assert study_vocabulary(_study(STOCK)) is STOCK
    assert study_vocabulary(_study(f"{__name__}:STOCK")) is STOCK
    with pytest.raises(VocabularyError, match="declares no judge vocabulary"):
        study_vocabulary(_study(None))
    with pytest.raises(VocabularyError, match="cannot import the vocabulary"):
        study_vocabulary(_study("toolreplay.nowhere:VOCAB"))
    with pytest.raises(VocabularyError, match="is a dict, not a Vocabulary"):
        study_vocabulary(_study({}))


def test_a_phrasing_corpus_declares_measures_of_its_vocabulary() -> None:
    corpus = SRC.parent / "evals" / "phrasings.yaml"
    assert load_corpus(corpus).cases  # the weather study's measures
    with pytest.raises(PhrasingsError, match="'temperature' is not a measure of the stock"):
        load_corpus(corpus, STOCK)


@pytest.mark.slow
def test_the_weather_vocabulary_is_loaded_on_first_use_only() -> None:
    code = (
        "import sys\n"
        "import toolreplay.study.weather.study\n"
        "from toolreplay.judging import failures, verdicts\n"
        "loaded = lambda: 'toolreplay.study.weather.vocabulary' in sys.modules\n"
        "before = loaded()\n"
        "verdicts.GROUNDED_JUDGE.judge('北京今天 30.9°C。', 'temperature')\n"
        "print(before, loaded())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def _imported_modules(tree: ast.AST) -> list[str]:
    """Every module an ``import`` names, at any depth (function-level imports included), and
    every constant string given to ``import_module``/``__import__``."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                names.append(str(first.value))
    return names


def test_no_judging_module_imports_a_study() -> None:
    modules = sorted((SRC / "toolreplay" / "judging").glob("*.py"))
    assert len(modules) >= 8
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            assert not (isinstance(node, ast.ImportFrom) and node.level), f"{path.name}: relative"
        study = [
            n for n in _imported_modules(tree)
            if n == "toolreplay.study" or n.startswith("toolreplay.study.")
        ]  # fmt: skip
        assert study == [], f"{path.name} imports {study}"


def test_place_suffixes_come_from_the_vocabulary_not_the_engine() -> None:
    """宁德 and 宁德市 are one place because the weather vocabulary says 市 is a place suffix;
    a vocabulary without suffixes reads names as they are, and no judging module spells 市."""
    from toolreplay.judging.places import PlaceSpec
    from toolreplay.judging.toolvalues import ToolPlace

    city = ToolPlace({"name": "宁德市", "admin1": "福建省"}, "name", "admin1")
    weather = study_vocabulary(load_study("weather"))
    assert weather.place_suffixes == ("市",) and weather.day_names == ("today", "tomorrow")
    spelt = PlaceSpec("宁德", "福建省", suffixes=weather.place_suffixes)
    assert spelt.matches(city) and spelt.names()[:2] == ("宁德市", "宁德")
    plain = PlaceSpec("宁德", "福建省")
    # its Chinese name as written, then its romanisations (issue 31), never 宁德市
    assert plain.names()[0] == "宁德" and "宁德市" not in plain.names()
    assert plain.named(ToolPlace({"name": "宁德"}, "name", "admin1"))
    for path in (SRC / "toolreplay" / "judging").glob("*.py"):
        if path.name == "romanisation.py":
            continue  # how Chinese place names are romanised (杭州市: Hangzhou City) is language
        tree = ast.parse(path.read_text(encoding="utf-8"))
        suffixes = [
            n for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ("市", "市$")
        ]
        assert suffixes == [], path.name


def test_a_value_and_a_word_unit_are_written_apart_a_symbol_against_it() -> None:
    """The judge's texts write ``40 units``, ``2.25 EUR``, ``2 days`` apart, and keep a
    symbol unit against its number (``30.9°C``, ``60%``)."""
    from toolreplay.judging.values import value_text

    assert value_text(40, "units") == "40 units"
    assert value_text(2.25, "EUR") == "2.25 EUR"
    assert value_text(2, "days") == "2 days"
    assert value_text(30.9, "°C") == "30.9°C"
    assert value_text(60, "%") == "60%"
