"""The answer-phrasing table (evals/phrasings.yaml): every case's verdict under the grounded
judge and its failure labels, with the input as data; and the evidence a verdict carries."""

from __future__ import annotations

import pytest

from toolreplay.judging.failures import classify
from toolreplay.judging.phrasings import load_corpus
from toolreplay.judging.verdicts import FORMAT_JUDGE, GROUNDED_JUDGE, NARROW_JUDGE
from toolreplay.results.build import verdict_evidence

from .conftest import REPO

CORPUS = load_corpus(REPO / "evals" / "phrasings.yaml")


def test_the_table_is_broad() -> None:
    assert len(CORPUS.cases) >= 40
    answers = [c.answer for c in CORPUS.cases]
    assert any(all(ord(ch) < 128 for ch in a) for a in answers if a)  # English phrasings
    covered = {tag for c in CORPUS.passing for tag in c.covers}
    for unit in ("°C", "℃", "C", "度", "摄氏度", "华氏", "°F", "Fahrenheit", "chinese numerals",
                 "零下", "minus", "mm", "毫米", "inch", "%", "range", "list"):  # fmt: skip
        assert unit in covered, unit


@pytest.mark.parametrize("case", CORPUS.cases, ids=[c.id for c in CORPUS.cases])
def test_judge_verdict(case) -> None:
    verdict = GROUNDED_JUDGE.judge_episode(case.episode, case.question)
    assert verdict.passed is (case.judge == "pass"), verdict.explanation


@pytest.mark.parametrize("case", CORPUS.cases, ids=[c.id for c in CORPUS.cases])
def test_classifier_labels(case) -> None:
    labels = classify(case.episode, GROUNDED_JUDGE, case.question)
    assert tuple(f.mode for f in labels) == case.labels, [f.explanation for f in labels]
    for label in labels:  # every label keeps its evidence
        ev = label.evidence
        assert ev.message_index == len(case.episode.transcript) - 1
        if ev.span is not None:
            assert case.answer[ev.span[0] : ev.span[1]] == ev.text


def test_the_format_only_judge_passes_every_correct_phrasing() -> None:
    """The corpus itself is sound: what fails the grounded judge among the `pass` cases would
    be a grounding fault, not a unit the reader misses."""
    rejected = [c.answer for c in CORPUS.passing if not FORMAT_JUDGE.judge_episode(
        c.episode, c.question).passed]  # fmt: skip
    assert rejected == []


def test_form_only_judges_give_the_false_passes_the_grounded_judge_refuses() -> None:
    false_passes = [
        c for c in CORPUS.cases
        if c.judge == "fail" and FORMAT_JUDGE.judge_episode(c.episode, c.question).passed
    ]  # fmt: skip
    whys = {c.why for c in false_passes}
    assert {"a temperature no tool returned", "no data but a typical value", "wrong conclusion",
            "today's max stated as tomorrow's"} <= whys  # fmt: skip
    narrow_rejects = [c for c in CORPUS.passing if not NARROW_JUDGE.judge_episode(
        c.episode, c.question).passed]  # fmt: skip
    assert len(narrow_rejects) > 20  # the °C-only judge is far too narrow


def _case(answer: str):
    return next(c for c in CORPUS.cases if c.answer == answer)


def test_a_passing_verdict_names_the_tool_message_and_field() -> None:
    case = _case("北京现在 79℉。")
    verdict = GROUNDED_JUDGE.judge_episode(case.episode, case.question)
    [value] = verdict_evidence(verdict).model_dump(exclude_unset=True)["values"]
    assert value == {
        "span": [5, 8], "text": "79℉", "kind": "temperature", "stated_day": "today",
        "stated_field": "current", "stated_place": "北京", "grounded": True,
        "tool_message_index": 3, "tool_field": "$.current.temperature_2m",
        "tool_value": "26.1°C", "tool_place": "北京 (北京市)",
        "reason": "equals 26.1°C at $.current.temperature_2m of tool message 3 "
                  "(北京 (北京市), today)",
    }  # fmt: skip
    assert verdict.passed and verdict.judge == "grounded"


def test_a_failing_verdict_says_why_nothing_matched() -> None:
    case = _case("北京现在 35°C。")
    verdict = GROUNDED_JUDGE.judge_episode(case.episode, case.question)
    assert verdict.explanation == (
        "fabricated value: no tool result holds 35°C; the nearest temperature is 28.6°C at "
        "$.daily[0].temperature_2m_max of tool message 3 (北京 (北京市), today)"
    )
    [value] = verdict_evidence(verdict).values
    assert value.grounded is False and value.tool_message_index is None


def test_a_wrong_conclusion_shows_the_values_compared() -> None:
    case = _case("今天最高气温：北京 28.6°C，上海 29.0°C，广州 33.4°C。北京最热。")
    verdict = GROUNDED_JUDGE.judge_episode(case.episode, case.question)
    assert verdict.conclusion is not None
    assert (verdict.conclusion.said, verdict.conclusion.actual) == ("北京", "广州")
    assert "the answer says 北京 is hottest, but the tool results make 广州 hottest" in (
        verdict.explanation
    )


def test_a_misattributed_value_names_the_field_it_came_from() -> None:
    case = _case("北京现在 28.6°C。")
    [label] = classify(case.episode, GROUNDED_JUDGE, case.question)
    assert "stated for 北京, today, current" in label.explanation
    assert "$.daily[0].temperature_2m_max" in label.explanation


def test_results_never_pass_an_episode_with_a_fabricated_value() -> None:
    from toolreplay.judging.verdicts import FORMAT_JUDGE as form_only
    from toolreplay.results.build import episode_record

    case = _case("北京现在 35°C。")
    grounded = episode_record(case.episode, GROUNDED_JUDGE, case.question)
    assert grounded.passed is False
    assert grounded.verdict_evidence is not None
    assert grounded.verdict_evidence.values[0].grounded is False
    # even a judge that only checks the form cannot pass it past the fabricated_value label
    record = episode_record(case.episode, form_only, case.question)
    assert record.modes == ["fabricated_value"]
    assert record.passed is False


def test_the_corpus_file_says_how_its_episodes_call_the_tool() -> None:
    """The episode shape is the corpus file's (the engine knows no tool of its own)."""
    case = next(c for c in CORPUS.cases if c.episode.rounds)
    call = case.episode.rounds[0].reply.tool_calls[0]
    assert call.name == "get_weather" and '"city"' in call.arguments
    assert case.episode.transcript[0] == {"role": "system", "content": "你是一个天气助手。"}
