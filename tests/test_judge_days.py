"""Day 0 is a day: a question about today is not answered by tomorrow's values, whether the
answer says 明天 or states them as today's, and a value said for 今天 stays today's when the
question asks about tomorrow. (Each test fails if a "no day" check is written ``not day``,
which is also true for day 0.)"""

from __future__ import annotations

from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.verdicts import GROUNDED_JUDGE

from .judge_episodes import BEIJING, SHANGHAI, episode, expect

TODAY = expect("temperature", 0, BEIJING)
TOMORROW_RAIN = expect("precipitation", 1, SHANGHAI)


def test_tomorrows_values_said_to_be_tomorrows_do_not_answer_a_question_about_today() -> None:
    ep = episode("北京明天最高 29.5℃，最低 21.4℃。", "beijing")  # both are tomorrow's values
    verdict = GROUNDED_JUDGE.judge_episode(ep, TODAY)
    assert not verdict.passed
    assert verdict.explanation == (
        "the temperature values stated are for tomorrow; the question asks about today"
    )
    assert [c.match.day for c in verdict.checks if c.match] == [1, 1]
    assert classify(ep, GROUNDED_JUDGE, TODAY) == ()  # grounded, for another day


def test_tomorrows_value_stated_as_todays_is_a_fabricated_value() -> None:
    ep = episode("北京今天最高 29.5°C。", "beijing")  # today's high is 31.1
    verdict = GROUNDED_JUDGE.judge_episode(ep, TODAY)
    assert not verdict.passed
    [check] = verdict.checks
    assert (check.day, check.grounded) == (0, False)
    assert check.reason.startswith("29.5°C is stated for 北京, today, max, but the tool value it "
                                   "equals is 29.5°C at $.daily[1].temperature_2m_max")  # fmt: skip
    assert [f.mode for f in classify(ep, GROUNDED_JUDGE, TODAY)] == [FABRICATED_VALUE]


def test_a_value_said_for_today_stays_todays_for_a_question_about_tomorrow() -> None:
    ep = episode("上海今天不会下雨，降水量 0.0 毫米。", "shanghai")
    verdict = GROUNDED_JUDGE.judge_episode(ep, TOMORROW_RAIN)
    [check] = verdict.checks
    assert (check.day, check.grounded) == (0, True)
    assert verdict.explanation == (
        "the precipitation values stated are for today; the question asks about tomorrow"
    )


def test_todays_values_answer_a_question_about_today() -> None:
    verdict = GROUNDED_JUDGE.judge_episode(episode("北京今天最高 31.1℃。", "beijing"), TODAY)
    assert verdict.passed, verdict.explanation
