"""Place names in any script (issue 31): a tool place is named by its pinyin (with and without
tones and administrative suffix), a few exonyms and the result's own alternate names; a Latin
tool name by the Chinese characters that spell it; a place no tool result names is a place of
its own, whose values are never the asked place's. Expectations are written from the rules in
docs/judge.md ("Place names in any script") and from outside material (romanisation tables
real projects wrote for weather APIs; DeepSeek's documented tool-call example answer)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolreplay.evals import MeasureDeclaration, UnitDeclaration
from toolreplay.judging.failures import FABRICATED_VALUE, WRONG_PLACE, classify
from toolreplay.judging.grounding import Target, ground_answer
from toolreplay.judging.places import PlaceSpec, find_mentions
from toolreplay.judging.romanisation import (
    chinese_names,
    key,
    names_key_set,
    romanisations,
    sounded,
    syllables,
)
from toolreplay.judging.toolvalues import ToolPlace, tool_values
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage

from .judge_episodes import SHANGHAI, episode, expect

SHANGHAI_TODAY = expect("temperature", 0, SHANGHAI)


def _weather(name: str, region: str, high: float, **more: Any) -> dict[str, Any]:
    """A get_weather result in the fixture server's shape, today's high ``high`` °C."""
    return {
        "place": {"name": name, "country": more.pop("country", "中国"), "admin1": region, **more},
        "daily": [{"date": "2026-09-17", "temperature_2m_max": {"value": high, "unit": "°C"}}],
    }


def _episode(answer: str, *results: dict[str, Any], tool: str = "get_weather") -> Episode:
    calls = tuple(
        ToolCall(f"call_{n}", tool, json.dumps({"n": n})) for n in range(1, len(results) + 1)
    )
    messages: list[Any] = [{"role": "user", "content": "?"}]
    first = ModelReply(None, calls, "tool_calls")
    done = tuple(
        ToolResult(c, r if isinstance(r, str) else json.dumps(r, ensure_ascii=False))
        for c, r in zip(calls, results, strict=True)
    )
    messages += [first.to_message(), *(d.to_message() for d in done)]
    final = ModelReply(answer)
    messages.append(final.to_message())
    rounds = (Round(1, True, first, done), Round(2, True, final))
    return Episode("judge", "q", "?", tuple(messages), rounds, "converged", answer, Usage())


def _modes(ep: Episode, q: Target) -> list[str]:
    return [f.mode for f in classify(ep, GROUNDED_JUDGE, q)]


def _stated(ep: Episode, q: Target) -> list[tuple[str, str]]:
    g = ground_answer(ep.answer, ep.transcript, q)
    return [(c.text, "+".join(p.query for p in c.places)) for c in g.checks]


# ---- the issue's examples ------------------------------------------------------------------

#: The issue's tool results: places named in Chinese only, 上海 29.4 °C, 杭州 33.5 °C.
ISSUE = (_weather("上海", "上海市", 29.4), _weather("杭州", "浙江省", 33.5))


@pytest.mark.parametrize(
    "hangzhou", ["Hangzhou", "杭州", "Hángzhōu", "Hangzhou City", "Hang Zhou", "杭州市"]
)
def test_the_other_place_in_latin_letters_is_the_tool_place(hangzhou: str) -> None:
    answer = f"Shanghai peaks at 29.4°C today. (I also checked {hangzhou}, which hits 33.5°C.)"
    ep = _episode(answer, *ISSUE)
    assert _stated(ep, SHANGHAI_TODAY) == [("29.4°C", "上海"), ("33.5°C", "杭州")]
    verdict = GROUNDED_JUDGE.judge_episode(ep, SHANGHAI_TODAY)
    assert verdict.passed, verdict.explanation
    assert _modes(ep, SHANGHAI_TODAY) == []


def test_a_wrong_value_for_the_other_place_is_fabricated_for_that_place() -> None:
    ep = _episode("Shanghai peaks at 29.4°C today. Hangzhou hits 29.4°C too.", *ISSUE)
    verdict = GROUNDED_JUDGE.judge_episode(ep, SHANGHAI_TODAY)
    assert not verdict.passed
    assert verdict.explanation.startswith("fabricated value: 29.4°C is stated for 杭州")


@pytest.mark.parametrize(
    "guangzhou", ["Guangzhou", "Guǎngzhōu", "Canton", "广州", "Guangzhou City"]
)
def test_naming_the_wrong_place_in_any_script_is_wrong_place(guangzhou: str) -> None:
    """Asked about 上海, the model looked up 广州 only and reports it: wrong_place, not
    fabricated_value, whatever script names it."""
    answer = f"{guangzhou} peaks at 33.4°C today."
    for tools in (("guangzhou",), ("shanghai", "guangzhou")):
        ep = episode(answer, *tools)
        assert _modes(ep, SHANGHAI_TODAY) == [WRONG_PLACE], (answer, tools)
        verdict = GROUNDED_JUDGE.judge_episode(ep, SHANGHAI_TODAY)
        assert verdict.explanation.startswith(f"wrong place: the answer is about {guangzhou}")


def test_chinese_answers_keep_their_verdicts() -> None:
    ep = _episode("上海今天最高 29.4℃；另外杭州 33.5℃。", *ISSUE)
    assert _stated(ep, SHANGHAI_TODAY) == [("29.4℃", "上海"), ("33.5℃", "杭州")]
    assert GROUNDED_JUDGE.judge_episode(ep, SHANGHAI_TODAY).passed
    assert _modes(episode("广州今天最高 33.4℃。", "guangzhou"), SHANGHAI_TODAY) == [WRONG_PLACE]


# ---- unknown places ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Shanghai peaks at 29.4°C today. (I also checked Suzhou, which hits 29.4°C.)",
        "Shanghai peaks at 29.4°C today; Kunming is 29.4°C as well.",
        "上海今天最高 29.4℃。我顺便查了苏州：29.4℃。",
        "上海今天最高 29.4℃，昆山市也是 29.4℃。",
        "Shanghai peaks at 29.4°C today, and Wuhan reaches 29.4°C.",
    ],
)
def test_a_value_of_a_place_no_tool_names_is_not_the_asked_places(answer: str) -> None:
    """The second 29.4 °C equals 上海's tool value but is said of another place: it is stated
    for that place, so it is not grounded (a value no tool result gave for it)."""
    ep = _episode(answer, ISSUE[0])
    stated = _stated(ep, SHANGHAI_TODAY)
    assert stated[0][1] == "上海" and stated[1][1] not in ("上海", ""), stated
    assert _modes(ep, SHANGHAI_TODAY) == [FABRICATED_VALUE]
    verdict = GROUNDED_JUDGE.judge_episode(ep, SHANGHAI_TODAY)
    assert f"is stated for {stated[1][1]}" in verdict.explanation


@pytest.mark.parametrize(
    "answer",
    [
        "Shanghai, China: 29.4°C today.",
        "Here is the weather for Shanghai. Chance of rain is low; the high is 29.4°C.",
        "According to Open-Meteo, Shanghai peaks at 29.4°C today.",
        "Heading out in Shanghai? Reading the forecast: a high of 29.4°C. Bingo.",
        "这座城市（上海）今天最高 29.4℃，全市晴。",
        "上海市区今天最高 29.4℃。",
        "上海今天市区多云，这座大城市最高 29.4℃，全省晴。",
    ],
)
def test_regions_and_common_words_are_no_unknown_place(answer: str) -> None:
    ep = _episode(answer, ISSUE[0])
    assert {p for _, p in _stated(ep, SHANGHAI_TODAY)} == {"上海"}
    assert GROUNDED_JUDGE.judge_episode(ep, SHANGHAI_TODAY).passed


def test_a_province_the_tool_result_names_is_its_region_not_another_place() -> None:
    ep = _episode("杭州（浙江省）今天最高 33.5℃。Hangzhou, Zhejiang: 33.5°C.", ISSUE[1])
    q = expect("temperature", 0, PlaceSpec("杭州", "浙江省"))
    assert {p for _, p in _stated(ep, q)} == {"杭州"}
    assert GROUNDED_JUDGE.judge_episode(ep, q).passed


# ---- the reverse: tools in Latin letters, the answer in Chinese ----------------------------

LATIN = (
    _weather("Shanghai", "Shanghai", 29.4, country="China"),
    _weather("Guangzhou", "Guangdong", 33.4, country="China"),
)


def test_a_chinese_answer_names_places_the_tools_named_in_latin_letters() -> None:
    q = expect("temperature", 0, PlaceSpec("上海", "Shanghai"))  # no Latin alias given
    ep = _episode("上海今天最高 29.4℃，广州 33.4℃。", *LATIN)
    assert _stated(ep, q) == [("29.4℃", "上海"), ("33.4℃", "Guangzhou")]
    assert GROUNDED_JUDGE.judge_episode(ep, q).passed
    wrong = _episode("广州今天最高 33.4℃。", *LATIN)
    assert _modes(wrong, q) == [WRONG_PLACE]


def test_an_exonym_and_a_tool_places_alternate_names_name_it() -> None:
    hk = _weather("Hong Kong", "Hong Kong", 30.1, country="China")
    q = expect("temperature", 0, PlaceSpec("香港", "Hong Kong"))
    assert GROUNDED_JUDGE.judge_episode(_episode("香港今天最高 30.1℃。", hk), q).passed
    # GeoNames (style=FULL) gives alternateNames; 廣州 (traditional) is no pinyin of anything
    gz = _weather(
        "Guangzhou", "Guangdong", 33.4, country="China",
        alternateNames=[{"name": "廣州", "lang": "zh-TW"}, {"name": "Kwangchow", "lang": "en"}],
    )  # fmt: skip
    asked = expect("temperature", 0, PlaceSpec("Shanghai", "Shanghai"))
    for answer in ("廣州今日最高 33.4℃。", "Kwangchow: 33.4°C."):
        assert _modes(_episode(answer, LATIN[0], gz), asked) == [WRONG_PLACE], answer


def test_tool_places_read_their_alternate_names_in_three_shapes() -> None:
    vocab = GROUNDED_JUDGE.resolved_vocabulary()
    shapes = [
        {"name": "广州", "alternateNames": [{"name": "Canton", "lang": "en"}, {"name": "廣州"}]},
        {"name": "广州", "alternatenames": "Canton,廣州"},
        {
            "name": "广州",
            "namedetails": {"name": "广州", "name:en": "Canton", "name:zh-Hant": "廣州"},
        },
    ]
    for place in shapes:
        transcript = _episode("", {"place": place, "current": {"temperature_2m": 30.0}}).transcript
        [tv] = tool_values(transcript, vocab)
        assert tv.place is not None and set(tv.place.alternates) == {"Canton", "廣州"}, place


# ---- a domain that is not the weather ------------------------------------------------------

#: Units on hand per warehouse; the warehouse (a city, in Latin letters) is the entity.
WAREHOUSE_STOCK = MeasureDeclaration(
    "stock",
    (UnitDeclaration("units", ("unit", "件")),),
    words=("on hand", "库存", "stock", "有"),
    fields=("on_hand",),
    entity=("warehouse",),
)


def test_a_stock_question_names_its_warehouse_city_in_either_script() -> None:
    results = ({"warehouse": "Shenzhen", "on_hand": 12}, {"warehouse": "Guangzhou", "on_hand": 40})
    asked = Target("stock", None, (PlaceSpec("深圳", None),), (WAREHOUSE_STOCK,))
    for answer in ("深圳仓库库存 12 件。", "The Shenzhen warehouse has 12 units on hand."):
        ep = _episode(answer, *results, tool="lookup_stock")
        verdict = GROUNDED_JUDGE.judge_episode(ep, asked)
        assert verdict.passed, (answer, verdict.explanation)
    for answer in ("广州仓库库存 40 件。", "The Guangzhou warehouse has 40 units on hand."):
        ep = _episode(answer, *results, tool="lookup_stock")
        assert _modes(ep, asked) == [WRONG_PLACE], answer


# ---- romanisation --------------------------------------------------------------------------

#: Chinese → English names real projects wrote for weather APIs (found with the search tool:
#: CITY_MAPPING / CN_TO_EN / _CITY_MAP tables of OpenWeatherMap and wttr.in tools).
OUTSIDE = {
    "北京": "Beijing", "上海": "Shanghai", "天津": "Tianjin", "重庆": "Chongqing",
    "广州": "Guangzhou", "杭州": "Hangzhou", "成都": "Chengdu", "武汉": "Wuhan",
    "西安": ["Xi'an", "Xian"], "南京": "Nanjing", "沈阳": "Shenyang", "长春": "Changchun",
    "哈尔滨": "Harbin", "石家庄": "Shijiazhuang", "太原": "Taiyuan", "济南": "Jinan",
    "郑州": "Zhengzhou", "长沙": "Changsha", "厦门": "Xiamen", "呼和浩特": "Hohhot",
    "乌鲁木齐": "Urumqi", "拉萨": "Lhasa", "香港": "Hong Kong", "澳门": "Macau",
    "台北": "Taipei", "高雄": "Kaohsiung", "台中": "Taichung", "西藏": "Tibet",
    "内蒙古": "Inner Mongolia", "山西省": "Shanxi", "蚌埠": "Bengbu", "泰安": "Tai'an",
    "延安": "Yan'an", "绍兴": "Shaoxing", "洛阳": "Luoyang", "宿州": "Suzhou",
}  # fmt: skip


@pytest.mark.parametrize("chinese", sorted(OUTSIDE))
def test_romanisations_hold_the_names_real_projects_use(chinese: str) -> None:
    wanted = OUTSIDE[chinese]
    for latin in [wanted] if isinstance(wanted, str) else wanted:
        assert key(latin) in names_key_set([chinese]), (chinese, latin, romanisations(chinese))


def test_pinyin_with_and_without_tones_and_suffix() -> None:
    forms = romanisations("杭州市")
    assert {"Hang'zhou", "Háng'zhōu", "Hang'zhou City", "Hang'zhou Shi"} <= set(forms)
    assert "Xin'jiang" in romanisations("新疆维吾尔自治区")
    # 陕西 is Shaanxi: the toneless Shanxi is 山西's
    assert "shanxi" not in names_key_set(["陕西"]) and "shaanxi" in names_key_set(["陕西省"])
    assert "shanxi" in names_key_set(["山西"])
    assert chinese_names("hong-kong") == ("香港",) and chinese_names("Canton") == ("广州",)
    assert syllables("Tokyo") is None and syllables("Xi'an") == ("xi", "an")


def test_latin_names_match_whatever_their_diacritics_and_breaks() -> None:
    spec = PlaceSpec("西安", None)
    for text in ("Xi'an 20°C", "Xi’an 20°C", "Xian 20°C", "XĪ'ĀN 20°C", "Xi-an 20°C"):
        [m] = find_mentions(text, [spec])
        assert (m.start, m.place) == (0, spec), text
    assert find_mentions("Xianyang 20°C", [spec]) == ()  # whole words only
    lv = PlaceSpec("吕梁", None)
    for text in ("Lüliang", "Lvliang", "Luliang", "Lü'liáng"):
        assert len(find_mentions(text, [lv])) == 1, text


def test_chinese_characters_spell_a_latin_name_only_as_whole_syllables() -> None:
    text = "广州市今天晴，北京多云"
    assert [text[a:b] for a, b in sounded(text, "Guangzhou")] == ["广州市"]
    assert [text[a:b] for a, b in sounded(text, "Beijing City")] == ["北京"]
    assert sounded(text, "Tokyo") == [] and sounded("现在 20°C", "Xian") == []


def test_an_identifier_is_no_romanisation() -> None:
    sku = PlaceSpec("ABC-1", None)
    assert not sku.named(ToolPlace({"name": "ABC-12"}, "name", ""))
    assert sku.named(ToolPlace({"name": "abc-1"}, "name", ""))


# ---- outside material: DeepSeek's documented tool-call example -----------------------------

#: The final answer of DeepSeek's thinking-mode tool-call example (api-docs.deepseek.com,
#: thinking_mode_api_example_tool_call_output, turn 1.3); its get_weather mock returns
#: "Cloudy 7~13°C" as plain text, naming no place.
DEEPSEEK = (
    "Here's the weather forecast for **Hangzhou tomorrow (April 20, 2026)**:\n\n"
    "- 🌤 **Condition:** Cloudy \n- 🌡 **Temperature:** 7°C ~ 13°C (45°F ~ 55°F)\n\n"
    "It'll be on the cooler side, so you might want to bring a light jacket if you're heading "
    "out! Let me know if you need anything else."
)


def test_a_documented_english_answer_names_the_chinese_place_it_is_about() -> None:
    """Asked (in Chinese, with no Latin alias) about 杭州 and 北京, the answer's values are
    stated for 杭州, which it names as Hangzhou; none for 北京."""
    q = expect("temperature", 1, PlaceSpec("杭州", "浙江省"), PlaceSpec("北京", "北京市"))
    ep = _episode(DEEPSEEK, "Cloudy 7~13°C")
    assert {p for _, p in _stated(ep, q)} == {"杭州"}
    # the same answer naming a place nobody looked up states its values for that place
    other = _episode(DEEPSEEK.replace("Hangzhou", "Suzhou"), "Cloudy 7~13°C")
    assert {p for _, p in _stated(other, q)} == {"Suzhou"}


def test_a_comparison_in_english_needs_no_latin_names_in_the_eval_file() -> None:
    """北京、上海、广州哪个最热？ with places declared in Chinese only: the English answer's
    places are found by their pinyin, its conclusion read and checked."""
    q = expect(
        "comparison", 0, PlaceSpec("北京", "北京市"), PlaceSpec("上海", "上海市"),
        PlaceSpec("广州", "广东省"),
    )  # fmt: skip
    right = "Guangzhou is the hottest at 33.4°C; Beijing reaches 31.1°C and Shanghai 28.6°C."
    wrong = "Beijing is the hottest at 31.1°C; Guangzhou reaches 33.4°C and Shanghai 28.6°C."
    tools = ("beijing", "shanghai", "guangzhou")
    verdict = GROUNDED_JUDGE.judge_episode(episode(right, *tools), q)
    assert verdict.passed, verdict.explanation
    verdict = GROUNDED_JUDGE.judge_episode(episode(wrong, *tools), q)
    assert not verdict.passed and "广州 hottest" in verdict.explanation, verdict.explanation


def test_two_chinese_places_of_one_pinyin_stay_two_places() -> None:
    """苏州 (江苏省) and 宿州 (安徽省) are both Suzhou: sound never makes two Chinese names one
    place, so an answer about 宿州 for a question about 苏州 is about the wrong place."""
    q = expect("temperature", 0, PlaceSpec("苏州", "江苏省"))
    suzhou, suzhou_anhui = _weather("苏州", "江苏省", 30.2), _weather("宿州", "安徽省", 27.5)
    assert _modes(_episode("宿州今天最高 27.5℃。", suzhou, suzhou_anhui), q) == [WRONG_PLACE]
    assert GROUNDED_JUDGE.judge_episode(
        _episode("苏州今天最高 30.2℃。", suzhou_anhui, suzhou), q
    ).passed
    assert not PlaceSpec("苏州", "江苏省").named(ToolPlace({"name": "宿州"}, "name", "admin1"))
    assert PlaceSpec("苏州", "江苏省").named(ToolPlace({"name": "Suzhou"}, "name", "admin1"))


#: A real Open-Meteo geocoding result (name=北京&count=1&language=zh; shared/reference/open-meteo/
#: 20_zoti321_geocoding_beijing_zh_count1.json): no alternate names, the region and country in
#: Chinese.
OPEN_METEO_BEIJING = {
    "id": 1816670, "name": "北京", "latitude": 39.9075, "longitude": 116.39723,
    "elevation": 49.0, "feature_code": "PPLC", "country_code": "CN", "admin1_id": 2038349,
    "admin2_id": 11876380, "timezone": "Asia/Shanghai", "population": 18960744,
    "country_id": 1814991, "country": "中国", "admin1": "北京市", "admin2": "北京市",
}  # fmt: skip


def test_a_real_open_meteo_place_is_named_in_english_with_its_region_and_country() -> None:
    result = {"place": OPEN_METEO_BEIJING, "current": {"temperature_2m": 30.9}}
    ep = _episode("Beijing, China: it's 30.9°C right now (Běijīng Shì).", result)
    [tv] = tool_values(ep.transcript, GROUNDED_JUDGE.resolved_vocabulary())
    assert tv.place is not None
    assert (tv.place.regions, tv.place.alternates) == (("北京市", "中国"), ())
    q = expect("temperature", 0, PlaceSpec("北京", "北京市"))
    assert _stated(ep, q) == [("30.9°C", "北京")]
    assert GROUNDED_JUDGE.judge_episode(ep, q).passed


def test_a_pinyin_brand_in_an_entity_domain_is_no_place() -> None:
    """Entities (a warehouse, a SKU) have no region: a pinyin-shaped brand is no unknown
    place there; a city of the gazetteer still is."""
    results = ({"warehouse": "Shenzhen", "on_hand": 12},)
    asked = Target("stock", None, (PlaceSpec("深圳", None),), (WAREHOUSE_STOCK,))
    ok = _episode("Shenzhen: Xiaomi and Huawei phones, 12 units on hand.", *results)
    assert GROUNDED_JUDGE.judge_episode(ok, asked).passed
    other = _episode("Shenzhen ships to Wuhan: 12 units on hand there.", *results)
    assert _modes(other, asked) == [FABRICATED_VALUE]
