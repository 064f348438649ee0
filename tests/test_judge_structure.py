"""The judge reads structure: presentation stripped into plain clauses, units in the orders the
languages write them, and each value attributed to its place by the clause it is in — one test
per kind of input the judge used to misread, each on inputs written for the test."""

from __future__ import annotations

import pytest

from toolreplay.judging.failures import FABRICATED_VALUE, WRONG_PLACE, classify
from toolreplay.judging.grounding import ground_answer
from toolreplay.judging.presentation import plain
from toolreplay.judging.values import find_measured_values, relevant_values
from toolreplay.judging.verdicts import FORMAT_JUDGE, GROUNDED_JUDGE

from .judge_episodes import BEIJING, GUANGZHOU, SHANGHAI, XIAMEN, episode, expect

# ---- presentation ------------------------------------------------------------------------


def test_text_without_markup_is_read_as_written() -> None:
    text = "北京现在 26.1°C，最高 28.6°C。"
    p = plain(text)
    assert p.text is text and p.unchanged and p.span(5, 11) == (5, 11)


@pytest.mark.parametrize(
    "answer, read",
    [
        ("北京现在 **30.9**°C", "北京现在 30.9°C"),  # emphasis between the number and its unit
        ("北京现在 *30.9* ℃", "北京现在 30.9 ℃"),
        ("__31.1__ ℃ and temperature_2m", "31.1 ℃ and temperature_2m"),  # a name keeps its _
        ("- **温度**：27-28℃\n- **湿度**：33%", "温度：27-28℃\n湿度：33%"),  # a list
        ("1. **High:** 31 °C\n2) Low: 21 °C", "High: 31 °C\nLow: 21 °C"),  # a numbered list
        ("### 北京\n> 现在 30.9℃", "北京\n现在 30.9℃"),  # a heading, a quote
        ("🌡️ 30.9℃ ☁️ 阴", " 30.9℃  阴"),  # emoji
        ("[Open-Meteo](https://open-meteo.com/) says `30.9°C`", "Open-Meteo says 30.9°C"),
        ("18~29°C ~~30°C~~", "18~29°C 30°C"),  # a range's ~ stays
    ],
)
def test_presentation_is_stripped(answer: str, read: str) -> None:
    assert plain(answer).text == read


def test_a_table_becomes_a_clause_per_row_with_its_headers() -> None:
    by_row = "| 城市 | 最高气温 |\n|---|---|\n| 上海 | *29* ℃ |\n| 广州 | **33.4 ℃** |"
    assert plain(by_row).text == "上海：最高气温 29 ℃。\n广州：最高气温 33.4 ℃。"
    by_column = "| | 长沙 | 南昌 |\n|---|---|---|\n| 最高气温 | 33.2℃ | — |"
    assert plain(by_column).text == "最高气温：长沙 33.2℃。"


def test_a_value_read_through_markup_keeps_the_span_of_the_answer() -> None:
    answer = "| 城市 | 最高 |\n|---|---|\n| 上海 | *28.6* ℃ |"
    [v] = find_measured_values(answer)
    assert (v.value, v.unit) == (28.6, "℃")
    assert answer[v.start : v.end] == "28.6* ℃"  # the answer as written, markup and all
    [check] = ground_answer(answer, episode(answer, "shanghai").transcript,
                            expect("temperature", 0, SHANGHAI)).checks  # fmt: skip
    assert check.grounded and check.field == "max" and check.text == "28.6* ℃"


def test_the_form_only_judge_reads_through_markup_too() -> None:
    assert FORMAT_JUDGE.judge("北京现在 **30.9**°C", "temperature").passed


# ---- units -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value, unit",
    [
        ("降水概率六成", 6.0, "成"),  # Chinese tenths: 60 %
        ("降水概率三成左右", 3.0, "成"),
        ("降水概率 6 成", 6.0, "成"),
        ("about 0.1 in of rain", 0.1, "in"),  # inches abbreviated
        ("totalling 0.1 in.", 0.1, "in"),
        ("0.10 in expected", 0.1, "in"),
    ],
)
def test_units_in_the_orders_and_abbreviations_people_write(
    text: str, value: float, unit: str
) -> None:
    [v] = find_measured_values(text)
    assert (v.value, v.unit) == (value, unit)


@pytest.mark.parametrize(
    "text",
    ["It's 29 in Shanghai", "25 in the afternoon", "成都 3 成都", "天气一成不变", "八成会下雨"],
)
def test_words_that_only_look_like_units_are_not_units(text: str) -> None:
    assert find_measured_values(text) == ()


@pytest.mark.parametrize(
    "text, read",
    [
        ("北京当前温度(℃)：26", [(26.0, "℃")]),
        ("北京气温（单位：℃）：现在 30.9，最高 31.1。", [(30.9, "℃"), (31.1, "℃")]),
        ("北京：最高气温/℃ 31.1。", [(31.1, "℃")]),  # a table header's unit, repeated per row
        ("Temperature (°F): 88 now, 69 tonight", [(88.0, "°F"), (69.0, "°F")]),
        ("温度（℃）：26，湿度 33%，风速 6.5", [(26.0, "℃"), (33.0, "%")]),  # until another unit
        ("温度（℃）：26。明天 3 天后", [(26.0, "℃")]),  # until the sentence ends
    ],
)
def test_a_unit_written_before_its_numbers_applies_to_them(text: str, read: list) -> None:
    assert [(v.value, v.unit) for v in find_measured_values(text)] == read


def test_a_table_with_the_unit_in_its_header_is_read() -> None:
    answer = "| 城市 | 最高气温/℃ |\n|---|---|\n| 北京 | 31.1 |\n| 上海 | 28.6 |\n| 广州 | 33.4 |"
    q = expect("comparison", 0, BEIJING, SHANGHAI, GUANGZHOU)
    ep = episode(answer + "\n\n广州最热。", "beijing", "shanghai", "guangzhou")
    assert GROUNDED_JUDGE.judge_episode(ep, q).passed


def test_a_probability_as_tenths_is_grounded_against_the_percentage() -> None:
    q = expect("precipitation", 1, SHANGHAI)
    assert GROUNDED_JUDGE.judge_episode(episode("上海明天降水概率六成。", "shanghai"), q).passed
    wrong = episode("上海明天降水概率八成。", "shanghai")
    assert [f.mode for f in classify(wrong, GROUNDED_JUDGE, q)] == [FABRICATED_VALUE]


def test_a_rain_word_after_the_percentage_makes_it_a_probability() -> None:
    answer = "上海明天 60% 会下雨。"
    [v] = find_measured_values(answer)
    assert relevant_values(answer, [v], "precipitation") == (v,)
    assert relevant_values("上海明天湿度 78%。", find_measured_values("上海明天湿度 78%。"),
                           "precipitation") == ()  # fmt: skip


# ---- attribution -------------------------------------------------------------------------


def _places(answer: str, *tools: str, places=(BEIJING, SHANGHAI, GUANGZHOU)) -> list[str]:
    g = ground_answer(answer, episode(answer, *tools).transcript,
                      expect("comparison", 0, *places))  # fmt: skip
    return ["+".join(p.query for p in c.places) for c in g.checks]


def test_a_place_named_after_its_value_is_its_place() -> None:
    answer = "Shanghai's high is 28.6°C, compared with 33.4°C for Guangzhou."
    assert _places(answer, "shanghai", "guangzhou") == ["上海", "广州"]
    assert _places("It's 28.6°C in Shanghai and 31.1°C in Beijing", "shanghai", "beijing") == [
        "上海", "北京"
    ]  # fmt: skip
    # a bracket names the value's place only when it holds the name alone
    assert _places("广州 32.6℃（上海 27.4℃）", "shanghai", "guangzhou") == ["广州", "上海"]


def test_a_list_of_values_pairs_with_the_places_before_it() -> None:
    assert _places("北京、上海、广州分别为 31.1、28.6、33.4℃", "beijing", "shanghai",
                   "guangzhou") == ["北京", "上海", "广州"]  # fmt: skip
    assert _places("Shanghai is cooler than Guangzhou: 28.6°C versus 33.4°C.", "shanghai",
                   "guangzhou") == ["上海", "广州"]  # fmt: skip
    assert _places("上海明显比广州凉快，28.6°C 对 33.4°C。", "shanghai", "guangzhou") == [
        "上海", "广州"
    ]  # fmt: skip
    assert _places("广州最热，北京上海差不多，31.1°C 和 28.6°C。", "beijing", "shanghai",
                   "guangzhou") == ["北京", "上海"]  # fmt: skip


def test_a_table_row_states_its_values_for_its_place() -> None:
    answer = "| 城市 | 最高 |\n|---|---|\n| 北京 | 31.1℃ |\n| 上海 | 28.6℃ |\n| 广州 | 33.4℃ |"
    assert _places(answer, "beijing", "shanghai", "guangzhou") == ["北京", "上海", "广州"]


def test_a_value_said_of_several_places_is_checked_for_each() -> None:
    both = (
        "北京和厦门今天的最高气温不相上下，都是 31°C 左右。",
        "Both Beijing and Xiamen reach 31°C.",
        "Beijing and Xiamen are tied at 31°C.",
        "两城气温相同，均为 31°C。",
    )
    for answer in both:
        assert _places(answer, "beijing", "xiamen", places=(BEIJING, XIAMEN)) == ["北京+厦门"]
    # each place of "both A (v) and B (w)" has its own value
    assert _places("Guangzhou (33.4°C) is hotter than both Beijing (31.1°C) and Shanghai "
                   "(28.6°C).", "beijing", "shanghai", "guangzhou") == [
        "广州", "北京", "上海"
    ]  # fmt: skip
    g = ground_answer("上海和广州都在 29°C 左右。", episode("", "shanghai", "guangzhou").transcript,
                      expect("comparison", 0, SHANGHAI, GUANGZHOU))  # fmt: skip
    [check] = g.checks
    assert not check.grounded and "no tool value of 广州" in check.reason


def test_what_a_place_is_compared_with_is_not_what_the_next_phrase_is_about() -> None:
    assert _places("广州比北京、上海都热：33.4°C，而北京 31.1°C。", "beijing", "shanghai",
                   "guangzhou") == ["广州", "北京"]  # fmt: skip
    # ... unless the phrase begins with a relative word
    assert _places("Shanghai (28.6°C) is cooler than Guangzhou, which tops out at 33.4°C.",
                   "shanghai", "guangzhou") == ["上海", "广州"]  # fmt: skip


def test_a_difference_written_after_its_value_is_grounded_as_a_difference() -> None:
    q = expect("temperature", 0, BEIJING)
    for answer, passed in [("Beijing is 30.9°C, about 0.2°C below today's high of 31.1°C.", True),
                           ("Beijing is 30.9°C, about 3°C below today's high of 31.1°C.", False)]:
        verdict = GROUNDED_JUDGE.judge_episode(episode(answer, "beijing"), q)
        assert verdict.passed is passed, (answer, verdict.explanation)


def test_a_bound_is_grounded_by_a_tool_value_on_its_side() -> None:
    q = expect("temperature", 0, BEIJING)
    for answer, passed in [("北京今天最高 31℃ 以上，现在 30.9℃。", True),
                           ("北京今天最高不到 32℃，现在 30.9℃。", True),
                           ("北京今天最高超过 35℃。", False),
                           ("北京今天气温都在 30℃ 以下。", False)]:  # the high is 31.1
        verdict = GROUNDED_JUDGE.judge_episode(episode(answer, "beijing"), q)
        assert verdict.passed is passed, (answer, verdict.explanation)


# ---- another place than asked --------------------------------------------------------------


def test_an_answer_about_another_place_is_a_wrong_place_not_a_fabrication() -> None:
    q = expect("temperature", 0, SHANGHAI)
    answer = "广州今天晴到多云，当前气温 **32.6℃**，最高 33.4℃。"
    ep = episode(answer, "guangzhou")
    verdict = GROUNDED_JUDGE.judge_episode(ep, q)
    assert not verdict.passed
    assert verdict.explanation.startswith(
        "wrong place: the answer is about 广州 (广东省), the place it names, not 上海 (上海市), "
        "the place asked; 32.6℃ equals 32.6°C at $.current.temperature_2m"
    )
    [label] = classify(ep, GROUNDED_JUDGE, q)
    assert label.mode == WRONG_PLACE
    assert label.evidence.text == "广州" and label.evidence.span == (0, 2)
    # an invented value for the other place is a fabrication
    assert [f.mode for f in classify(episode("广州今天最高 35℃。", "guangzhou"), GROUNDED_JUDGE, q)
            ] == [FABRICATED_VALUE]  # fmt: skip
    # the asked place answered, another mentioned beside it: a pass
    both = episode("上海现在 27.4℃；广州现在 32.6℃。", "shanghai", "guangzhou")
    assert GROUNDED_JUDGE.judge_episode(both, q).passed and classify(both, GROUNDED_JUDGE, q) == ()


def test_the_same_name_in_another_region_stays_a_place_error_without_a_label() -> None:
    """宁德 in 西藏 for a question about 宁德 in 福建: the answer names the place asked."""
    from toolreplay.judging.phrasings import load_corpus

    from .conftest import REPO

    case = next(c for c in load_corpus(REPO / "evals" / "phrasings.yaml").cases
                if c.answer == "宁德现在 8.2°C。")  # fmt: skip
    verdict = GROUNDED_JUDGE.judge_episode(case.episode, case.question)
    assert verdict.explanation == (
        "8.2°C is a tool value for 宁德 (西藏自治区), not for 宁德 (福建省)"
    )
    assert classify(case.episode, GROUNDED_JUDGE, case.question) == ()
