"""Measures declared in an eval file are judged like the study's own (one mechanism: they are
added to the judge's vocabulary), and expectations from the eval file reach results.json and the
report; bad declarations are one-line errors naming the file and the question."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from toolreplay.evals import EvalFileError, load_eval, parse_measures
from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.measures import declared_vocabulary, measure_vocabulary
from toolreplay.judging.values import find_measured_values
from toolreplay.judging.verdicts import GROUNDED_JUDGE, narrow_judge
from toolreplay.judging.vocabulary import default_vocabulary
from toolreplay.report.render import render_report
from toolreplay.results.build import episode_record
from toolreplay.results.format import check_results

from .stock_domain import (
    ABC,
    CORRECT,
    INVENTED,
    PRICE,
    STOCK,
    call,
    episode,
    stock_episode,
)

ROOT = Path(__file__).resolve().parents[1]

EVAL = """\
version: 1
name: stock
system_prompt: Today is {today}.
measures:
  - name: stock
    units: [{name: units, spellings: [unit, pcs, 件]}]
    words: [on hand, in stock]
    fields: [on_hand]
expect:
  - max_rounds: 4
questions:
  - id: two-skus
    text: How many ABC-1 and XYZ-2 are on hand?
    measure: stock
    expect:
      - tool_called: lookup_sku
      - tool_sequence: {tools: [lookup_sku, lookup_sku], mode: any_order}
      - strict_grounding: [stock]
"""


def _eval(tmp_path: Path, text: str = EVAL) -> Path:
    path = tmp_path / "stock.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_eval_file_declares_measures_and_expectations(tmp_path: Path) -> None:
    suite = load_eval(_eval(tmp_path))
    q = suite.question("two-skus")
    assert [d.name for d in suite.declared_measures] == ["stock"]
    assert q.declared_measures == suite.declared_measures
    assert [e.kind for e in q.expect] == [
        "max_rounds", "tool_called", "tool_sequence", "strict_grounding",
    ]  # fmt: skip
    assert q.places == ()  # a declared measure needs no place


def test_the_correct_stock_answer_passes_and_an_invented_one_is_fabricated(
    tmp_path: Path,
) -> None:
    q = load_eval(_eval(tmp_path)).question("two-skus")
    good = GROUNDED_JUDGE.judge_episode(stock_episode(CORRECT), q)
    assert good.passed, good.explanation
    assert classify(stock_episode(CORRECT), GROUNDED_JUDGE, q) == ()
    bad = stock_episode(INVENTED)
    verdict = GROUNDED_JUDGE.judge_episode(bad, q)
    assert not verdict.passed
    assert verdict.explanation.startswith("fabricated value: no tool result holds 99 units")
    labels = classify(bad, GROUNDED_JUDGE, q)
    assert [f.mode for f in labels] == [FABRICATED_VALUE]
    assert labels[0].evidence.text == "99 units"


def test_expectations_reach_results_and_the_report(tmp_path: Path) -> None:
    q = load_eval(_eval(tmp_path)).question("two-skus")
    good = episode_record(stock_episode(CORRECT), GROUNDED_JUDGE, q).model_dump(
        mode="json", exclude_unset=True
    )
    assert good["passed"]
    assert [x["passed"] for x in good["expectations"]] == [True] * 4
    assert list(good)[-3:] == ["failure_modes", "expectations", "transcript"]
    slow = episode(
        [((ABC,), ({"sku": "ABC-1", "on_hand": 12},), None)] * 4, "ABC-1: 12 units on hand."
    )
    record = episode_record(slow, GROUNDED_JUDGE, q).model_dump(mode="json", exclude_unset=True)
    assert not record["passed"]  # the answer is grounded; the episode took 5 rounds
    assert record["verdict"].startswith("states 12 units")
    failed = [x for x in record["expectations"] if not x["passed"]]
    assert [(x["kind"], x["explanation"]) for x in failed] == [
        ("max_rounds", "5 rounds, more than 4; round 5 is over the limit"),
        ("tool_sequence", "made lookup_sku → lookup_sku → lookup_sku → lookup_sku, not the "
         "expected calls in some order: not expected lookup_sku, lookup_sku"),
    ]  # fmt: skip
    committed = json.loads((ROOT / "reports" / "results.json").read_text(encoding="utf-8"))
    doc = copy.deepcopy(committed)
    doc["episodes"] = [record, good]
    check_results(doc)
    schema = json.loads((ROOT / "schemas" / "results.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    html = render_report(doc)
    # the unmet ones head the failing episode's transcript as failure reasons, the met ones
    # follow as passing checks; the passing episode lists its expectations as before
    assert "<strong>passing checks</strong> 2/4 expectations met" in html
    assert "<strong>expectations</strong> 4/4 met" in html
    assert "not met: at most 4 rounds — 5 rounds, more than 4; round 5 is over the limit" in html
    assert 'href="#' in html and '-m9" class="msg-link">#9</a>' in html


def test_no_expectations_no_key() -> None:
    record = episode_record(stock_episode(CORRECT), GROUNDED_JUDGE, "temperature")
    assert "expectations" not in record.model_fields_set


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            ("      - tool_called: lookup_sku\n", "      - tool_caled: lookup_sku\n"),
            "questions.two-skus.expect.0: unknown expectation kind 'tool_caled'",
        ),
        (
            ("      - strict_grounding: [stock]\n", "      - strict_grounding: [stok]\n"),
            "questions.two-skus.expect.2.strict_grounding: unknown measure 'stok' (known: "
            "temperature, precipitation, comparison, wind, stock)",
        ),
        (
            ("  - max_rounds: 4\n", "  - max_rounds: four\n"),
            "expect.0.max_rounds: limit: Input should be a valid integer",
        ),
        (
            ("    units: [{name: units", "    units: [{nam: units"),
            "measures.0: units.0.name: Field required",
        ),
        (
            ("    measure: stock\n", "    measure: stocks\n"),
            "questions.0.measure: unknown measure 'stocks'",
        ),
    ],
)
def test_bad_declarations_name_the_file_and_the_question(
    tmp_path: Path, patch: tuple[str, str], message: str
) -> None:
    old, new = patch
    assert old in EVAL
    with pytest.raises(EvalFileError) as info:
        load_eval(_eval(tmp_path, EVAL.replace(old, new)))
    text = str(info.value)
    assert str(tmp_path / "stock.yaml") in text and message in text, text


def test_a_declared_vocabulary_is_one_object_and_leaves_the_study_as_it_is() -> None:
    weather = default_vocabulary()
    v = declared_vocabulary(weather, (STOCK,))
    assert v is declared_vocabulary(weather, (STOCK,))
    assert declared_vocabulary(weather, ()) is weather
    assert [m.name for m in v.measures][-1] == "stock" and weather.measure("stock") is None
    assert [u.name for u in v.units[:1]] == ["units"] and v.units[1:] == weather.units
    # the narrow judge keeps its units and reads the declared ones too
    narrow = narrow_judge(weather).for_question(load_eval_question_stub())
    assert [u.name for u in narrow.resolved_units()] == ["°C", "units"]


def load_eval_question_stub() -> Any:
    from toolreplay.judging.grounding import Target

    return Target("stock", None, (), (STOCK,))


@pytest.mark.parametrize(
    ("answer", "values"),
    [
        ("The price is €12.50 today.", [(12.5, "EUR")]),
        ("It costs EUR 12.50, or 1250 cents.", [(12.5, "EUR"), (1250.0, "cents")]),
        ("Price: 12.50 euros (was 14 €)", [(12.5, "EUR"), (14.0, "EUR")]),
        ("12 units on hand, 3 件 in transit, 2026-09-17", [(12.0, "units"), (3.0, "units")]),
    ],
)
def test_declared_units_are_read_after_and_before_numbers(
    answer: str, values: list[tuple[float, str]]
) -> None:
    vocab = measure_vocabulary((STOCK, PRICE))
    read = find_measured_values(answer, vocabulary=vocab)
    assert [(v.value, v.unit) for v in read] == values


def test_a_price_in_cents_grounds_a_price_in_euros() -> None:
    get = call("p1", "get_price", sku="ABC-1")
    result = {"sku": "ABC-1", "price": {"amount": 12.5, "currency": "EUR"}}
    q = load_eval_question_stub().__class__("price", None, (), (PRICE,))
    for answer, passed in [("ABC-1 costs €12.50.", True), ("ABC-1 costs 1250 cents.", True),
                           ("ABC-1 costs €14.", False)]:  # fmt: skip
        ep = episode([((get,), (result,), None)], answer, question="What does ABC-1 cost?")
        verdict = GROUNDED_JUDGE.judge_episode(ep, q)
        assert verdict.passed is passed, (answer, verdict.explanation)


def test_the_weather_studys_measures_are_declarations_of_the_same_mechanism() -> None:
    from toolreplay.evals import MeasureDeclaration
    from toolreplay.study.weather import vocabulary as weather

    assert weather.WEATHER is declared_vocabulary(weather.WEATHER_WORDS, weather.MEASURES)
    assert weather.WEATHER_WORDS.units == () and weather.WEATHER_WORDS.measures == ()
    assert all(isinstance(d, MeasureDeclaration) for d in weather.MEASURES)
    assert [m.name for m in weather.WEATHER.measures] == [d.name for d in weather.MEASURES]
    # an eval file's declaration (YAML) gives the same kind of units the study's does
    [wind] = parse_measures(
        [{"name": "gusts", "units": [{"name": "km/h"}, {"name": "m/s", "scale": 3.6}]}]
    )
    extended = declared_vocabulary(weather.WEATHER, (wind,))
    assert [(u.kind, u.scale) for u in extended.units[:2]] == [("gusts", 1.0), ("gusts", 3.6)]
    assert extended.units[2:] == weather.WEATHER.units


def test_the_docs_example_eval_file_loads_and_judges(tmp_path: Path) -> None:
    """The example of docs/expectations.md is a valid eval file, and judges as the page says."""
    page = (ROOT / "docs" / "expectations.md").read_text(encoding="utf-8")
    example = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    q = load_eval(_eval(tmp_path, example)).question("two-skus")
    assert [p.query for p in q.places] == ["ABC-1", "XYZ-2"]
    record = episode_record(stock_episode(CORRECT), GROUNDED_JUDGE, q)
    assert record.passed, [x for x in record.expectations or () if not x.passed]
    assert len(record.expectations or ()) == 11
    bad = episode_record(stock_episode(INVENTED), GROUNDED_JUDGE, q)
    failed = [x.kind for x in bad.expectations or () if not x.passed]
    assert not bad.passed and failed == ["grounded", "strict_grounding"]
    assert bad.modes == [FABRICATED_VALUE]


def test_pass_hat_k_counts_a_trial_that_misses_an_expectation_as_failed(tmp_path: Path) -> None:
    from toolreplay.judging.assessment import assess
    from toolreplay.results.trials import trial_outcome

    q = load_eval(_eval(tmp_path)).question("two-skus")
    correct = stock_episode(CORRECT)
    assert trial_outcome(1, correct, assess(correct, q, GROUNDED_JUDGE)).passed
    slow = episode(
        [((ABC,), ({"sku": "ABC-1", "on_hand": 12},), None)] * 4, "ABC-1: 12 units on hand."
    )
    outcome = trial_outcome(2, slow, assess(slow, q, GROUNDED_JUDGE))
    assert GROUNDED_JUDGE.judge_episode(slow, q).passed and not outcome.passed
