"""A comparison's conclusion read from its structure — superlatives of either end,
comparatives, rankings and ties — and checked against the tool results."""

from __future__ import annotations

import pytest

from toolreplay.judging.comparisons import Conclusion, check_conclusion
from toolreplay.judging.grounding import ground_answer
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.results.build import conclusion_record

from .judge_episodes import (
    BEIJING,
    CHANGSHA,
    GUANGZHOU,
    HANGZHOU,
    NANCHANG,
    SHANGHAI,
    XIAMEN,
    episode,
    expect,
)

HOTTEST = expect("comparison", 0, BEIJING, SHANGHAI, GUANGZHOU)  # 31.1, 28.6, 33.4 °C
HARD = expect("comparison", 0, CHANGSHA, NANCHANG, HANGZHOU)  # 33.2, 33.6, 32.1 °C
PAIR = expect("comparison", 0, SHANGHAI, GUANGZHOU)
TIE = expect("comparison", 0, BEIJING, XIAMEN)  # 31.1, 31.0 °C

TOOLS = {
    HOTTEST: ("beijing", "shanghai", "guangzhou"),
    HARD: ("changsha", "nanchang", "hangzhou"),
    PAIR: ("shanghai", "guangzhou"),
    TIE: ("beijing", "xiamen"),
}

VALUES = {
    HOTTEST: "北京 31.1°C，上海 28.6°C，广州 33.4°C。",
    PAIR: "上海 28.6°C，广州 33.4°C。",
    TIE: "北京 31.1°C，厦门 31.0°C。",
    HARD: "长沙 33.2°C，南昌 33.6°C，杭州 32.1°C。",
}


def _judge(question, conclusion: str):
    answer = VALUES[question] + conclusion
    return GROUNDED_JUDGE.judge_episode(episode(answer, *TOOLS[question]), question)


@pytest.mark.slow
@pytest.mark.parametrize(
    "question, conclusion",
    [
        (HOTTEST, "广州今天最热。"),  # a superlative with words between place and word
        (HOTTEST, "最热的是广州。"),  # the place after the word
        (HOTTEST, "The hottest city is Guangzhou."),
        (HOTTEST, "广州 33.4°C，是三地中最热的。"),  # the place its sentence is about
        (HOTTEST, "广州最热：33.4°C。"),  # a value right after the word
        (HOTTEST, "上海最凉快。广州最热。"),  # the other end too
        (HOTTEST, "广州 > 北京 > 上海。"),  # a ranking
        (HOTTEST, "上海 < 北京 < 广州。"),
        (HOTTEST, "从高到低依次为广州、北京、上海。"),
        (HOTTEST, "从低到高：上海、北京、广州。"),
        (HOTTEST, "Guangzhou tops the list, followed by Beijing and Shanghai."),
        (HOTTEST, "广州比北京和上海都热。"),  # comparatives
        (HOTTEST, "北京和上海都没有广州热。"),
        (HOTTEST, "Beijing and Shanghai are both cooler than Guangzhou."),
        (HOTTEST, "Guangzhou is hotter than both Beijing and Shanghai."),
        (HOTTEST, "广州高于北京，北京高于上海。"),
        (HARD, "南昌最热，长沙次之，杭州最凉快。"),
        (HARD, "南昌略高于长沙，是最热的。"),
        (HARD, "Nanchang edges out Changsha as the hottest."),  # not the place it beats
        (PAIR, "上海没有广州热。"),
        (PAIR, "上海比广州冷。"),
        (PAIR, "广州更热。"),
        (PAIR, "Guangzhou is warmer."),
        (PAIR, "广州高出 4.8°C。"),
        (TIE, "北京比厦门热一点。"),
        (TIE, "两地几乎一样热。"),  # hedged: level at one decimal fewer (31 and 31)
        (TIE, "The high is about the same in both."),
    ],
)
def test_a_right_conclusion_passes(question, conclusion: str) -> None:
    verdict = _judge(question, conclusion)
    assert verdict.passed, verdict.explanation
    assert verdict.conclusion is not None and verdict.conclusion.correct


@pytest.mark.parametrize(
    "question, conclusion, why",
    [
        (HOTTEST, "北京最热。", "the answer says 北京 is hottest"),
        (HARD, "Changsha edges out Nanchang as the hottest.", "the answer says 长沙 is hottest"),
        (HOTTEST, "北京最凉快，广州最热。", "the answer says 北京 is coolest, but the tool "
                                         "results make 上海 coolest"),
        (HOTTEST, "北京 > 广州 > 上海。", "the answer puts 北京 above 广州"),
        (HOTTEST, "Shanghai is warmer than Beijing; Guangzhou is the hottest.",
         "the answer puts 上海 above 北京"),
        (HOTTEST, "从低到高：广州、北京、上海。", "the answer puts 上海 above 北京"),
        (HARD, "长沙和南昌不相上下，杭州最凉快。", "the answer says 长沙 and 南昌 are level"),
        (PAIR, "广州没有上海热。", "the answer puts 上海 above 广州"),
        (TIE, "厦门比北京热。", "the answer puts 厦门 above 北京"),
        (TIE, "两地一样热。", "the answer says 北京 and 厦门 are level"),  # 31.1 ≠ 31.0 as written
        (HOTTEST, "", "the answer names no hottest place"),
    ],
)
def test_a_wrong_or_missing_conclusion_fails_and_says_why(question, conclusion, why) -> None:
    verdict = _judge(question, conclusion)
    assert not verdict.passed and verdict.explanation.startswith(why), verdict.explanation


def test_a_tie_is_judged_at_the_precision_written() -> None:
    for answer, passed in [
        ("北京和厦门今天的最高气温不相上下，都是 31°C 左右。", True),  # 31 and 31
        ("北京和厦门一样热，都是 31.1°C。", False),  # 厦门 is 31.0
        ("北京 31°C，厦门 31°C，不相上下。", True),
    ]:
        verdict = GROUNDED_JUDGE.judge_episode(episode(answer, "beijing", "xiamen"), TIE)
        assert verdict.passed is passed, (answer, verdict.explanation)
    verdict = GROUNDED_JUDGE.judge_episode(
        episode("北京和厦门一样热，都是 31°C。", "beijing", "xiamen"), TIE
    )
    assert verdict.explanation.endswith(
        "北京 and 厦门 are equally hottest at the precision written, as the tool results say"
    )


def _shown(conclusion: Conclusion | None) -> dict:
    """The conclusion as results.json holds it."""
    assert conclusion is not None
    return conclusion_record(conclusion).model_dump(exclude_unset=True)


def test_the_claims_read_are_evidence_and_a_superlative_alone_keeps_the_old_shape() -> None:
    answer = VALUES[HOTTEST] + "广州 > 北京 > 上海，广州最热。"
    ep = episode(answer, *TOOLS[HOTTEST])
    g = ground_answer(answer, ep.transcript, HOTTEST)
    data = _shown(check_conclusion(answer, g.pool, HOTTEST, checks=g.checks))
    assert data["claims"] == ["广州 > 北京", "北京 > 上海", "hottest: 广州"]
    alone = VALUES[HOTTEST] + "广州最热。"
    data = _shown(check_conclusion(alone, g.pool, HOTTEST))
    assert set(data) == {"said", "span", "actual", "values", "correct"}
    said = alone[slice(*data["span"])]
    assert (data["said"], data["correct"], said) == ("广州", True, "广州最热")


def test_a_superlative_in_a_question_or_negated_is_no_conclusion() -> None:
    assert not _judge(HOTTEST, "北京、上海、广州哪个最热？").passed
    assert not _judge(HOTTEST, "北京不是最热的。").passed
