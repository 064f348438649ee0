"""docs/expectations.md's "A question's places": the example loads as the page says, its
answers are judged as the page says, the refusals it quotes are the loader's, and every field
of a place (``PlaceModel``) is documented on the page."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolreplay.evals import EvalFileError, load_eval
from toolreplay.evals.schema import PlaceModel
from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "expectations.md").read_text(encoding="utf-8")
SECTION = PAGE.split("## A question's places", 1)[1].split("\n## ", 1)[0]
EXAMPLE = SECTION.split("```yaml\n", 1)[1].split("```", 1)[0]
#: The weather eval file's top (system prompt, experiment), the page's questions after it.
HEAD = (ROOT / "evals" / "weather.yaml").read_text(encoding="utf-8").split("\nquestions:")[0]


def _eval(tmp_path: Path, questions: str) -> Path:
    path = tmp_path / "weather.yaml"
    path.write_text(HEAD + "\n" + questions, encoding="utf-8")
    return path


def _weather(name: str, region: str, high: float) -> dict[str, Any]:
    return {
        "place": {"name": name, "country": "中国", "admin1": region},
        "daily": [{"date": "2026-09-17", "temperature_2m_max": {"value": high, "unit": "°C"}}],
    }


def _episode(question: str, answer: str, result: dict[str, Any]) -> Episode:
    call = ToolCall("call_1", "get_weather", json.dumps({"city": "宁德"}, ensure_ascii=False))
    first = ModelReply(None, (call,), "tool_calls")
    done = (ToolResult(call, json.dumps(result, ensure_ascii=False)),)
    final = ModelReply(answer)
    messages = (
        {"role": "user", "content": question},
        first.to_message(),
        done[0].to_message(),
        final.to_message(),
    )
    rounds = (Round(1, True, first, done), Round(2, True, final))
    return Episode("c", "ningde", question, messages, rounds, "converged", answer, Usage())


def test_the_places_example_loads_as_the_page_says(tmp_path: Path) -> None:
    suite = load_eval(_eval(tmp_path, EXAMPLE))
    ningde = suite.question("ningde")
    assert [(p.query, p.region, p.names) for p in ningde.places] == [
        ("宁德", "福建省", ("Ningde",))
    ]
    unknown = suite.question("unknown-place")
    assert unknown.measure == "none"
    assert [(p.query, p.region) for p in unknown.places] == [("霍格沃茨", None)]


@pytest.mark.parametrize(
    ("answer", "place", "region", "modes"),
    [
        ("宁德今天最高 24°C。", "宁德", "福建省", []),
        ("Ningde: 24°C today.", "宁德", "福建省", []),
        ("宁德今天最高 24°C。", "宁德市", "福建省", []),
        ("Ningde: 24°C today.", "Ningde", "福建省", []),
        ("宁德今天最高 24°C。", "宁德", "西藏自治区", None),
        ("福州今天 24°C。", "宁德", "福建省", [FABRICATED_VALUE]),
    ],
)
def test_the_pages_answers_are_judged_as_it_says(
    tmp_path: Path, answer: str, place: str, region: str, modes: list[str] | None
) -> None:
    q = load_eval(_eval(tmp_path, EXAMPLE)).question("ningde")
    ep = _episode(q.text, answer, _weather(place, region, 24))
    verdict = GROUNDED_JUDGE.judge_episode(ep, q)
    assert verdict.passed is (modes == []), verdict
    if modes is not None:  # the page names no failure mode for the other region's place
        assert [f.mode for f in classify(ep, GROUNDED_JUDGE, q)] == modes
    if region == "西藏自治区":  # the explanation the page quotes
        assert "24°C is a tool value for 宁德 (西藏自治区), not for 宁德 (福建省)" in str(verdict)
    if answer.startswith("福州"):
        assert "24°C is stated for 福州, today, but the tool value it equals is" in str(verdict)


def _quoted_refusals() -> list[str]:
    """The problems the page's refusals name (their indented lines), in order."""
    blocks = SECTION.split("\n```\nevals/")[1:]
    return [
        line.strip()
        for block in blocks
        for line in block.split("```", 1)[0].splitlines()
        if line.startswith("  ")
    ]


def test_the_refusals_the_page_quotes_are_the_loaders(tmp_path: Path) -> None:
    no_place, unknown_measured = _quoted_refusals()
    without = re.sub(r"    places:\n      - \{query: 宁德.*\n", "", EXAMPLE, count=1)
    with pytest.raises(EvalFileError) as exc:
        load_eval(_eval(tmp_path, without))
    assert no_place in str(exc.value)
    measured = EXAMPLE.replace("    measure: none\n", "    measure: precipitation\n")
    with pytest.raises(EvalFileError) as exc:
        load_eval(_eval(tmp_path, measured))
    assert unknown_measured in str(exc.value)


def test_a_place_without_region_is_refused_as_the_page_says_it_is_required(
    tmp_path: Path,
) -> None:
    no_region = EXAMPLE.replace("{query: 宁德, region: 福建省, names: [Ningde]}", "{query: 宁德}")
    with pytest.raises(EvalFileError, match="region"):
        load_eval(_eval(tmp_path, no_region))


def test_every_field_of_a_place_is_in_the_pages_table() -> None:
    table = {m.group(1) for m in re.finditer(r"^\| `(\w+)` \|", SECTION, re.MULTILINE)}
    assert set(PlaceModel.model_fields) == table
    assert "`places:`" in SECTION and "`entities:`" in SECTION
