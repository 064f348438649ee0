"""The failure classifier: each mode on episodes built with ScriptedModel and the hosts, the
serialised evidence shape, and the committed reference set's labels in results and the CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolreplay.hosts import LoopLimits, run_host
from toolreplay.judging.episode_errors import EpisodeError
from toolreplay.judging.failures import (
    EMPTY_ANSWER,
    ERROR,
    FABRICATED_VALUE,
    FAILURE_MODES,
    NO_MEASUREMENT,
    UNFULFILLED_PROMISE,
    FailureMode,
    classify,
    mode_counts,
    tool_values,
)
from toolreplay.judging.intent import find_promise, sentences
from toolreplay.judging.values import find_measured_values
from toolreplay.judging.verdicts import NARROW_JUDGE
from toolreplay.models.scripted import ScriptedModel
from toolreplay.results.build import failure_mode_record
from toolreplay.results.format import Results, results_document
from toolreplay.study.weather.toolsets import GET_WEATHER_SCHEMA
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import Episode, ModelReply, ToolCall, ToolResult, Usage

REPO = Path(__file__).resolve().parents[1]
QUESTION = "北京今天多少度？"

WEATHER: dict[str, Any] = {
    "place": {"name": "北京", "admin1": "北京市", "latitude": 31.2222, "longitude": 116.3972},
    "current": {"time": "2026-09-17T15:30", "temperature_2m": {"value": 26.1, "unit": "°C"}},
    "daily": [
        {
            "date": "2026-09-17",
            "weather_code": 3,
            "temperature_2m_max": {"value": 28.6, "unit": "°C"},
            "precipitation_sum": {"value": 2.6, "unit": "mm"},
            "wind_speed_10m_max": {"value": 8.1, "unit": "km/h"},
        }
    ],
}


@dataclass(frozen=True)
class TextTool:
    """A toolset whose every result is ``text`` as is (plain text, not JSON)."""

    text: str
    schemas: tuple[dict[str, Any], ...] = (GET_WEATHER_SCHEMA,)

    def execute(self, c: ToolCall) -> ToolResult:
        return ToolResult(c, self.text)


def call(city: str = "北京", n: int = 1) -> ToolCall:
    return ToolCall(f"call_{n}", "get_weather", json.dumps({"city": city}, ensure_ascii=False))


def reply(content: str | None, *calls: ToolCall) -> ModelReply:
    return ModelReply(content, calls, "tool_calls" if calls else "stop", Usage(10, 5))


def run(
    host: str,
    script: Sequence[ModelReply],
    result: Any = WEATHER,
    limits: LoopLimits | None = None,
) -> Episode:
    """One episode of ``host`` over a ``get_weather`` tool that returns ``result`` (a dict is
    sent as JSON, a string as is)."""

    toolset: Any = (
        TextTool(result)
        if isinstance(result, str)
        else Toolset("fake", (GET_WEATHER_SCHEMA,), {"get_weather": lambda city: result})
    )
    messages = [{"role": "system", "content": "天气助手"}, {"role": "user", "content": QUESTION}]
    return run_host(host, ScriptedModel(list(script)), toolset, messages, limits)


def answered(text: str, result: Any = WEATHER) -> Episode:
    """The loop host: one get_weather call, then ``text`` as the final answer."""
    return run("loop", [reply(None, call()), reply(text)], result)


def modes(labels: Sequence[FailureMode]) -> list[str]:
    return [f.mode for f in labels]


def quoted(episode: Episode, label: FailureMode) -> str:
    """The text the label's span points at in the transcript."""
    ev = label.evidence
    assert ev.message_index is not None and ev.span is not None
    return str(episode.transcript[ev.message_index]["content"])[ev.span[0] : ev.span[1]]


# ---- empty_answer (form A) ------------------------------------------------------------------


def test_content_none_with_pending_tool_calls_is_an_empty_answer() -> None:
    episode = run("single", [reply(None, call()), reply(None, call("北京市", 2))])
    assert episode.answer == "" and episode.pending_tool_calls
    [label] = classify(episode)
    assert label.mode == EMPTY_ANSWER
    assert label.evidence.message_index == len(episode.transcript) - 1
    assert episode.transcript[label.evidence.message_index]["content"] is None
    assert label.evidence.tool_call == call("北京市", 2)
    assert label.evidence.span is None
    assert "never executed" in label.explanation and "北京市" in label.explanation


def test_empty_string_content_with_no_tool_calls_is_an_empty_answer() -> None:
    episode = run("single", [reply("")])
    [label] = classify(episode)
    assert label.mode == EMPTY_ANSWER
    assert label.evidence.tool_call is None
    assert "neither text nor tool calls" in label.explanation


def test_forced_final_round_that_returns_nothing_is_an_empty_answer() -> None:
    episode = run("loop", [reply(None, call()), reply(None)], limits=LoopLimits(max_rounds=2))
    assert episode.stop_reason == "max_rounds" and not episode.rounds[-1].tools_offered
    assert not episode.pending_tool_calls
    [label] = classify(episode)
    assert label.mode == EMPTY_ANSWER
    assert "withheld" in label.explanation
    assert label.evidence.message_index == len(episode.transcript) - 1


def test_tool_calls_in_a_forced_final_round_are_pending() -> None:
    script = [reply(None, call()), reply("", call("北京市", 2))]
    episode = run("loop", script, limits=LoopLimits(max_rounds=2))
    [label] = classify(episode)
    assert label.mode == EMPTY_ANSWER
    assert label.evidence.tool_call is not None and label.evidence.tool_call.name == "get_weather"


def test_an_episode_that_ended_on_an_api_error_is_an_error_not_an_empty_answer() -> None:
    transcript = ({"role": "system", "content": "x"}, {"role": "user", "content": QUESTION})
    episode = Episode("loop+atomic", "beijing", QUESTION, transcript, (), "error", "", Usage(),
                      error="APIConnectionError: Connection error.")  # fmt: skip
    [label] = classify(episode)
    assert label.mode == ERROR
    assert label.evidence.message_index is None and label.evidence.span is None
    assert label.evidence.text == "APIConnectionError: Connection error."
    assert "no response (APIConnectionError)" in label.explanation
    assert "round 1" in label.explanation


SERVER_500 = (
    "http://127.0.0.1/v1/chat/completions: HTTP 500: InternalServerError: Error code: 500 - "
    "{'error': {'message': '2 validation errors:\\n  content: Input should be a valid string"
    "\\n  role: Field required', 'type': 'internal_server_error', 'param': None, 'code': None}}"
)


class ServerError:
    """A model whose second request fails the way llama-cpp-python's server failed: HTTP 500
    with a validation message in the body."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages: Any, tools: Any) -> ModelReply:
        from toolreplay.wire.replies import ModelReplyError

        self.calls += 1
        if self.calls == 1:
            return reply(None, call())
        raise ModelReplyError(
            "http://127.0.0.1/v1/chat/completions",
            500,
            "InternalServerError: Error code: 500 - {'error': {'message': '2 validation "
            "errors:\\n  content: Input should be a valid string\\n  role: Field required', "
            "'type': 'internal_server_error', 'param': None, 'code': None}}",
        )


def test_a_server_error_is_its_own_mode_with_status_and_message() -> None:
    toolset = Toolset("fake", (GET_WEATHER_SCHEMA,), {"get_weather": lambda city: WEATHER})
    messages = [{"role": "system", "content": "天气助手"}, {"role": "user", "content": QUESTION}]
    for host in ("single", "loop"):
        episode = run_host(host, ServerError(), toolset, messages)  # type: ignore[arg-type]
        assert episode.stop_reason == "error" and episode.error == SERVER_500
        [label] = classify(episode, measure="temperature")
        assert label.mode == ERROR  # never empty_answer, whatever the answer ("") says
        assert "round 2" in label.explanation
        assert "HTTP 500 from http://127.0.0.1/v1/chat/completions" in label.explanation
        assert label.evidence.text == (
            "2 validation errors:\n  content: Input should be a valid string\n"
            "  role: Field required"
        )
        # the last transcript message is the tool's answer, which the label does not point at
        assert episode.transcript[-1]["role"] == "tool"
        assert label.evidence.message_index is None
    error = EpisodeError.parse(SERVER_500)
    assert (error.status, error.endpoint) == (500, "http://127.0.0.1/v1/chat/completions")
    assert error.message.startswith("2 validation errors:\n") and error.text == SERVER_500
    html = EpisodeError.parse(
        "http://h/v1/chat/completions: HTTP 502: the body is HTML, not a JSON chat completion"
    )
    assert html.status == 502 and html.message.startswith("the body is HTML")
    assert EpisodeError.parse(None).status is None


# ---- unfulfilled_promise (form B) -----------------------------------------------------------


def test_promise_with_a_pending_tool_call_points_at_sentence_and_call() -> None:
    text = "刚才的候选地点在西藏，显然不对。我将重新查询，明确指定「北京市」。"
    episode = run("single", [reply(None, call()), reply(text, call("北京市", 2))])
    [label] = classify(episode)
    assert label.mode == UNFULFILLED_PROMISE
    assert label.evidence.text == "我将重新查询，明确指定「北京市」。"
    assert quoted(episode, label) == label.evidence.text
    assert label.evidence.tool_call == call("北京市", 2)
    assert "max_rounds" in label.explanation


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("好的。我将重新查询北京的天气。", "我将重新查询北京的天气。"),
        ("数据不全，让我再查一下。", "数据不全，让我再查一下。"),
        ("已找到北京的坐标。接下来我将查询今天的天气预报。", "接下来我将查询今天的天气预报。"),
        ("Sorry. I'll look that up.", "I'll look that up."),
        ("That place is wrong, let me check again!", "That place is wrong, let me check again!"),
    ],
)
def test_promise_without_a_measured_value(text: str, sentence: str) -> None:
    episode = answered(text)
    [label] = classify(episode)
    assert label.mode == UNFULFILLED_PROMISE
    assert label.evidence.text == sentence
    assert quoted(episode, label) == sentence
    assert label.evidence.tool_call is None  # the loop converged: nothing pending


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("好的。我查到结果的时候，会马上告诉您。", "我查到结果的时候，会马上告诉您。"),
        ("等我查到的时候，我会告诉您。", "等我查到的时候，我会告诉您。"),
    ],
)
def test_a_promise_timed_by_my_own_lookup_is_a_promise_not_an_offer(
    text: str, sentence: str
) -> None:
    """A temporal clause whose subject is the assistant ("when I have found it, I will tell
    you") times the promise; only a temporal clause about someone else is a condition."""
    episode = answered(text)
    [label] = classify(episode)
    assert label.mode == UNFULFILLED_PROMISE
    assert label.evidence.text == sentence


@pytest.mark.parametrize(
    "text",
    ["北京现在 26°C。让我再查一下明天的。", "It is 26°C now; let me check tomorrow's forecast."],
)
def test_promise_beside_a_measured_value_is_no_failure(text: str) -> None:
    assert classify(answered(text)) == ()


def test_promise_with_coordinates_only_is_still_a_promise() -> None:
    text = "已找到北京（北京市）的坐标（31.2222, 116.3972），接下来我将查询今天的天气预报。"
    assert find_measured_values(text) == ()
    [label] = classify(answered(text))
    assert label.mode == UNFULFILLED_PROMISE
    assert label.evidence.span == (0, len(text))


@pytest.mark.parametrize(
    "text",
    [
        "抱歉，我还没有拿到北京的天气数据，现在无法给出具体数值。",
        "您可以稍后再查询。",
        "我将无法查询。",
        "我们现在查到的数据显示北京阴。",
        "我先前查询了北京，结果为空。",
        "如果需要，我可以帮您查询明天的天气。",
        "Let me know if you need anything else.",
        "I will not check again.",
    ],
)
def test_no_promise(text: str) -> None:
    assert find_promise(text) is None
    assert modes(classify(answered(text))) == [NO_MEASUREMENT]


def test_sentences_keep_decimals_together() -> None:
    text = "坐标（31.2222, 121.4581）。Done. Next!"
    expected = ["坐标（31.2222, 121.4581）。", "Done.", "Next!"]
    assert [text[s:e] for s, e in sentences(text)] == expected


# ---- fabricated_value -----------------------------------------------------------------------


def test_value_copied_from_a_tool_result_is_grounded_and_one_present_nowhere_is_not() -> None:
    assert classify(answered("北京现在 26.1°C。")) == ()
    episode = answered("北京现在 31°C。")  # the tool result holds latitude 31.2222: not a °C
    [label] = classify(episode)
    assert label.mode == FABRICATED_VALUE
    assert label.evidence.text == "31°C"
    assert quoted(episode, label) == "31°C"
    assert "the nearest temperature is 28.6°C at $.daily[0].temperature_2m_max" in label.explanation


@pytest.mark.parametrize("unit", ["℃", "°C", "度", " 摄氏度"])
def test_temperature_units_and_rounding(unit: str) -> None:
    assert classify(answered(f"北京现在 26{unit}，最高 28.6{unit}。")) == ()
    assert modes(classify(answered(f"北京现在 31{unit}。"))) == [FABRICATED_VALUE]


def test_rounding_follows_the_precision_written() -> None:
    assert classify(answered("最高约 29°C。")) == ()  # 28.6 rounds to 29
    assert modes(classify(answered("最高 28.0°C。"))) == [FABRICATED_VALUE]  # 28.6 ≠ 28.0


@pytest.mark.parametrize("unit", ["mm", " 毫米", "毫米"])
def test_precipitation_units(unit: str) -> None:
    assert classify(answered(f"预计降水量约 2.6{unit}。")) == ()
    assert modes(classify(answered(f"预计降水量约 5{unit}。"))) == [FABRICATED_VALUE]


def test_wind_speed_converted_between_units() -> None:
    assert classify(answered("风速约 2.3 m/s。")) == ()  # 8.1 km/h = 2.25 m/s
    assert modes(classify(answered("风速约 5 m/s。"))) == [FABRICATED_VALUE]


def test_an_answer_has_one_fabricated_value_label_naming_each_value_in_order() -> None:
    """One label per answer, as for every other mode: its explanation names each value no tool
    result holds, in order; its evidence is the first."""
    episode = answered("北京 26°C，上海 40°C，广州 50度。")
    [label] = classify(episode)
    assert label.mode == FABRICATED_VALUE
    assert quoted(episode, label) == "40°C"
    assert label.explanation.startswith("the answer states 2 values no tool result holds")
    assert label.explanation.index("40°C (") < label.explanation.index("50度 (")


def test_a_value_written_again_and_a_range_are_named_once() -> None:
    """A hosted-search answer of the kind that gave 63 labels for 3 episodes: a value written
    twice is named once (×2), a range's two ends once, as the range."""
    episode = answered("北京今天 40°C，风速 6 mph，阵风 6 mph，明天 3–4 °C。")
    [label] = classify(episode)
    assert "6 mph ×2 (" in label.explanation
    assert "3–4 °C (no tool value lies within 3–4 °C" in label.explanation
    assert "the answer states 4 values" in label.explanation


def test_plain_text_tool_result_grounds_values() -> None:
    assert classify(answered("现在 26°C。", result="北京：气温 26.1°C，湿度 71%")) == ()
    labels = classify(answered("现在 33°C。", result="北京：气温 26.1°C"))
    assert modes(labels) == [FABRICATED_VALUE]


def test_values_with_no_tool_result_at_all_are_fabricated() -> None:
    episode = run("single", [reply("北京今天 30°C。")])
    [label] = classify(episode)
    assert label.mode == FABRICATED_VALUE
    assert "no tool result was returned" in label.explanation


def test_values_beside_tool_results_without_a_measurement_say_so() -> None:
    """A tool came back (an error here) holding no measured value: the explanation says the
    results hold none, not that no result was returned."""
    labels = classify(answered("北京今天 30°C。", result={"error": "unknown city"}))
    assert modes(labels) == [FABRICATED_VALUE]
    assert "the tool results hold no measured value" in labels[0].explanation
    assert "no tool result was returned" not in labels[0].explanation


def test_tool_values_skip_coordinates_codes_and_dates() -> None:
    episode = answered("北京现在 26.1°C。")
    found = {(v.value, v.unit) for v in tool_values(episode.transcript)}
    assert found == {(26.1, "°C"), (28.6, "°C"), (2.6, "mm"), (8.1, "km/h")}


# ---- no_measurement, dates and coordinates --------------------------------------------------


def test_answer_without_measurement_or_promise() -> None:
    episode = answered("北京今天阴。")
    [label] = classify(episode)
    assert label.mode == NO_MEASUREMENT
    assert label.evidence.text == "北京今天阴。" and quoted(episode, label) == "北京今天阴。"


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-17 北京阴。",
        "9月17日北京阴。",
        "北京位于北纬39.9度、东经116.4度，今天阴。",
        "北京的坐标是（39.9075, 116.3972），今天阴。",
    ],
)
def test_numbers_in_dates_and_coordinates_are_not_measurements(text: str) -> None:
    assert find_measured_values(text) == ()
    assert modes(classify(answered(text))) == [NO_MEASUREMENT]


def test_dates_beside_a_grounded_value_add_no_label() -> None:
    assert classify(answered("2026-09-17（9月17日）北京最高 28.6°C。")) == ()


def test_the_judge_decides_what_is_a_measurement() -> None:
    episode = answered("北京现在 26度。")
    assert classify(episode) == ()
    assert modes(classify(episode, NARROW_JUDGE)) == [NO_MEASUREMENT]


# ---- serialised shape and counts ------------------------------------------------------------


def test_serialised_shape() -> None:
    episode = run("single", [reply(None, call()), reply("让我再查一下。", call("北京市", 2))])
    [label] = classify(episode)
    data = json.loads(failure_mode_record(label).model_dump_json())
    assert data == {
        "mode": "unfulfilled_promise",
        "explanation": label.explanation,
        "evidence": {
            "message_index": 4,
            "span": [0, 7],
            "text": "让我再查一下。",
            "tool_call": {"name": "get_weather", "arguments": {"city": "北京市"}},
        },
    }
    empty = failure_mode_record(classify(run("single", [reply("")]))[0]).evidence
    assert empty is not None
    assert empty.model_dump() == {"message_index": 2, "span": None, "text": None, "tool_call": None}


def test_mode_counts_count_episodes_in_mode_order() -> None:
    counts = mode_counts([["fabricated_value", "fabricated_value"], ["empty_answer"], []])
    assert list(counts.items()) == [("empty_answer", 1), ("fabricated_value", 1)]
    assert set(FAILURE_MODES) >= set(counts)


# ---- the committed reference set ------------------------------------------------------------

SINGLE_ATOMIC = {
    "beijing": [EMPTY_ANSWER],
    "hottest": [EMPTY_ANSWER],
    "ningde": [UNFULFILLED_PROMISE],
    "shanghai-rain": [UNFULFILLED_PROMISE],
}


@pytest.mark.slow
def test_reference_single_atomic_shows_both_forms(
    reference_episodes: dict[tuple[str, str], Episode],
) -> None:
    got = {
        q: modes(classify(e)) for (c, q), e in reference_episodes.items() if c == "single+atomic"
    }
    assert got == SINGLE_ATOMIC
    ningde = classify(reference_episodes[("single+atomic", "ningde")])[0]
    assert ningde.evidence.text is not None and "我将重新查询" in ningde.evidence.text
    assert ningde.evidence.tool_call is not None
    assert ningde.evidence.tool_call.parsed_arguments() == {"city": "宁德市"}
    rain = reference_episodes[("single+atomic", "shanghai-rain")]
    assert "31.2222" in rain.answer and find_measured_values(rain.answer) == ()
    hottest = classify(reference_episodes[("single+atomic", "hottest")])[0]
    assert "3 tool calls" in hottest.explanation


def test_reference_loops_and_single_oneshot_carry_no_label(
    reference_episodes: dict[tuple[str, str], Episode],
) -> None:
    clean = {k: classify(e) for k, e in reference_episodes.items() if k[0] != "single+atomic"}
    assert len(clean) == 12
    assert all(labels == () for labels in clean.values()), clean


def test_results_carry_failure_modes(reference_results: Results) -> None:
    by_name = {c.name: c.failure_modes for c in reference_results.configurations}
    assert by_name == {
        "single+oneshot": {},
        "loop+oneshot": {},
        "single+atomic": {"empty_answer": 2, "unfulfilled_promise": 2},
        "loop+atomic": {},
    }
    for record in results_document(reference_results)["episodes"]:
        got = [f["mode"] for f in record["failure_modes"]]
        single_atomic = record["configuration"] == "single+atomic"
        assert got == (SINGLE_ATOMIC[record["question_id"]] if single_atomic else [])
        assert all(set(f) == {"mode", "explanation", "evidence"} for f in record["failure_modes"])


@pytest.mark.slow
def test_run_prints_failure_mode_counts(committed_run: tuple[Any, Path]) -> None:
    result, tmp_path = committed_run
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "single+atomic" in line)
    assert "empty_answer 2" in row
    assert "unfulfilled_promise 2" in result.output
    written = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    counts = {c["name"]: c["failure_modes"] for c in written["configurations"]}
    assert counts["single+atomic"] == {"empty_answer": 2, "unfulfilled_promise": 2}


def test_a_value_of_another_measure_does_not_hide_a_promise() -> None:
    ep = answered("北京今天风速 8.1 km/h，具体气温我将重新查询。")
    labels = classify(ep, measure="temperature")
    assert modes(labels) == ["unfulfilled_promise"]
    assert "of temperature" in labels[0].explanation
    assert modes(classify(ep)) == []  # without a measure, the wind speed answers


def test_coordinates_written_in_degrees_are_not_temperatures() -> None:
    ep = answered("宁德市的纬度为 26.66 度，经度为 119.52 度，接下来我将查询天气。")
    assert modes(classify(ep, measure="temperature")) == ["unfulfilled_promise"]


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("好的。马上为您查询。", "马上为您查询。"),
        ("北京有两个同名地点。现在为您查询天气。", "现在为您查询天气。"),
        ("Sure. We'll check it.", "We'll check it."),
        ("That city is ambiguous! I'd like to check again.", "I'd like to check again."),
        ("明白。我這就幫您查詢。稍後見。", "我這就幫您查詢。"),
    ],
)
def test_more_promise_phrasings(text: str, sentence: str) -> None:
    span = find_promise(text)
    assert span is not None and text[span[0] : span[1]] == sentence
    episode = answered(text)
    [label] = classify(episode)
    assert label.evidence.span == span and quoted(episode, label) == sentence


@pytest.mark.parametrize("text", ["您可以现在查询官网。", "请马上查询官网。"])
def test_advice_to_the_user_is_not_a_promise(text: str) -> None:
    assert find_promise(text) is None


# ---- structure first, then a grammar over intent --------------------------------------------


@pytest.mark.parametrize(
    "text", ["Retrying now.", "let me try again", "让我再试一次。", "好的。", "刚才的地点不对。"]
)
def test_a_pending_tool_call_beside_text_is_a_promise_not_no_measurement(text: str) -> None:
    episode = run("single", [reply(None, call()), reply(text, call("北京市", 2))])
    [label] = classify(episode)
    assert label.mode == UNFULFILLED_PROMISE
    assert label.evidence.tool_call == call("北京市", 2)
    assert "never executed" in label.explanation and 'get_weather({"city": "北京市"})' in (
        label.explanation
    )


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("Retrying now.", "Retrying now."),
        ("The first place was wrong. I'm checking again now.", "I'm checking again now."),
        ("好的！我来查一下。", "我来查一下。"),
        ("地点不对。重新查询中。", "重新查询中。"),
        ("请稍等，马上为您重新获取。", "请稍等，马上为您重新获取。"),
        ("讓我們再查詢一次。", "讓我們再查詢一次。"),
        ("結果不對。我們將重新查詢。", "我們將重新查詢。"),
        ("I found the city. Next, I'll fetch the forecast.", "Next, I'll fetch the forecast."),
        ("没找到北京，我再用「北京市」查一次。", "没找到北京，我再用「北京市」查一次。"),
        (
            "I can't find it right now, I'll try again later.",
            "I can't find it right now, I'll try again later.",
        ),
        ("No data. Will check again.", "Will check again."),
        ("Hmm. Let me re-check the coordinates.", "Let me re-check the coordinates."),
        ("坐标已找到。我将调用天气工具获取明天的预报。", "我将调用天气工具获取明天的预报。"),
    ],
)
def test_promises_in_the_grammar(text: str, sentence: str) -> None:
    span = find_promise(text)
    assert span is not None and text[span[0] : span[1]] == sentence
    episode = answered(text)
    [label] = classify(episode, measure="temperature")
    assert label.mode == UNFULFILLED_PROMISE
    assert label.evidence.span == span and quoted(episode, label) == sentence


@pytest.mark.parametrize(
    "text",
    [
        "You can ask me to check again.",
        "你可以让我再查一次。",
        "如需最新数据，我可以再帮您查询。",
        "If you want, I'll check again tomorrow.",
        "Should I check again?",
        "要我再查一次吗？",
        "Nothing was found for that city.",
        "没有找到这个地点。",
        "未能查询到结果。",
        "查不到北京的天气。",
        "I already checked twice.",
        "我已经查询过了。",
        "Please check the city name and try again.",
        "請再試一次。",
        "Try again later.",
        "我无法获取数据，请稍后再试。",
        "Let me know which city you mean.",
        "Would you like me to check again?",
        "我刚才查询了北京。",
    ],
)
def test_offers_conditionals_questions_and_failures_are_not_promises(text: str) -> None:
    assert find_promise(text) is None
    assert modes(classify(answered(text), measure="temperature")) == [NO_MEASUREMENT]


@pytest.mark.parametrize(
    ("text", "grounded"),
    [
        ("北京现在华氏79度。", True),  # 26.1 °C = 79 °F: a unit named before the number counts
        ("北京现在 79 Fahrenheit。", True),
        ("北京现在 27 度。", False),  # 26.1 °C rounds to 26, not 27
        ("北京今天最高 28.6°C。", True),
        ("北京现在 28.6°C。", False),  # today's max is not the current temperature
        ("北京明天最高 28.6°C。", False),  # nor tomorrow's max
        ("北京今天最高 26.1°C。", False),  # and the current temperature is not today's max
    ],
)
def test_grounding_matches_unit_field_and_day(text: str, grounded: bool) -> None:
    labels = modes(classify(answered(text), measure="temperature"))
    assert labels == ([] if grounded else [FABRICATED_VALUE])


def test_none_question_without_value_carries_no_label() -> None:
    ep = answered("抱歉，没有找到这个地点。")
    assert classify(ep, measure="none") == ()
    assert modes(classify(ep, measure="temperature")) == ["no_measurement"]


# ---- intent: waiting and coming back, the progressive, offers conditional on the user --------


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("One moment while I look that up.", "One moment while I look that up."),
        ("好的。我这就去查，稍后给您结果。", "我这就去查，稍后给您结果。"),
        ("Let me check and get back to you.", "Let me check and get back to you."),
        ("Bear with me while I check.", "Bear with me while I check."),
        ("Give me a second to pull up the forecast.", "Give me a second to pull up the forecast."),
        ("I'll be right back with the numbers.", "I'll be right back with the numbers."),
        ("稍后我会把结果告诉您。", "稍后我会把结果告诉您。"),
        ("数据不全。我查一下再回复您。", "我查一下再回复您。"),
        ("我去查一下，马上回来。", "我去查一下，马上回来。"),
    ],
)
def test_waiting_and_coming_back_are_promises(text: str, sentence: str) -> None:
    span = find_promise(text)
    assert span is not None and text[span[0] : span[1]] == sentence
    episode = answered(text)
    [label] = classify(episode, measure="temperature")
    assert label.mode == UNFULFILLED_PROMISE and quoted(episode, label) == sentence


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("I'm looking that up now.", "I'm looking that up now."),
        ("Looking that up for you now.", "Looking that up for you now."),
        ("Sure! Fetching the data for Beijing...", "Fetching the data for Beijing..."),
        ("正在为您查询。", "正在为您查询。"),
        ("收到。我在查北京的天气。", "我在查北京的天气。"),
        ("**Checking the forecast for Beijing...**", "**Checking the forecast for Beijing...**"),
    ],
)
def test_present_progressive_announcements_are_promises(text: str, sentence: str) -> None:
    span = find_promise(text)
    assert span is not None and text[span[0] : span[1]] == sentence


@pytest.mark.parametrize(
    "text",
    [
        "等您需要时，我可以再帮您查一次。",
        "等你需要的时候，我再帮你查询。",
        "到时我再帮您查。",
        "到时候您告诉我，我再查。",
        "您方便的时候，我再帮您查。",
        "下次您问的时候，我会再查一次。",
        "请告诉我具体城市，我马上为您查询。",
        "您可以告诉我具体的城市，我再帮您查询。",
        "If you like, I can check again.",
        "If you like, I'll check again.",
        "When you're ready, I'll check again.",
        "Once you tell me the city, I'll look it up.",
        "Just ask and I'll look it up.",
        "Tell me which city and I'll check.",
        "Next time you ask, I'll check the latest data.",
        "I recommend checking a local weather service.",
        "Searching for 北京 returned no results.",
    ],
)
def test_offers_conditional_on_the_user_are_not_promises(text: str) -> None:
    assert find_promise(text) is None
    assert modes(classify(answered(text), measure="temperature")) == [NO_MEASUREMENT]


@pytest.mark.parametrize(
    "text",
    [
        "I'll check if it will rain tomorrow in Shanghai.",  # "if" after the verb: whether
        "Let me see if I can find the forecast for Ningde.",
        "我查一下上海明天有没有雨。",  # 有没有 is what is checked, not a negation
    ],
)
def test_an_embedded_question_is_what_is_to_be_checked(text: str) -> None:
    assert find_promise(text) == (0, len(text))


# Phrasings in the styles of public model transcripts and assistant recordings (tool-calling
# demos, customer-service replies, voice-agent hold phrases), rewritten onto the study's
# questions; none was written against this grammar.
@pytest.mark.parametrize(
    ("text", "promise"),
    [
        ("I'll help you check the current weather in Beijing right away.", True),
        ("Let me check the current weather in Beijing for you.", True),
        ("Just a moment while I look that up for you...", True),
        ("Give me a moment while I find the forecast!", True),
        ("请稍等，我将为您完成查询。", True),
        ("请稍等，我正在为你查询天气...", True),
        ("好的，我马上去为您核实。", True),
        ("我帮您看一下天气，稍等我一下。", True),
        ("Getting weather information...", True),
        ("I'll check the forecast for Beijing, starting with today's temperature.", True),
        ("Let me start by getting the coordinates of Beijing.", True),
        ("🔍 正在查询北京的天气……", True),
        ("我需要先获取北京的地理坐标，然后再查询天气。", True),
        ("I'll get back to you shortly with the temperature.", True),
        ("请提供城市名称，我帮您查询。", False),
        ("If you'd like, I can check the forecast for tomorrow as well.", False),
        ("I can also look up the forecast for the weekend if you want.", False),
        ("Let me know which city you mean and I'll look it up.", False),
        ("When you're ready to travel, just ask and I'll check the forecast again.", False),
        ("I'm unable to retrieve the weather right now. Please try again later.", False),
        ("我暂时无法获取天气信息，建议您查看当地天气预报。", False),
        ("想了解其他城市的天气，随时告诉我。", False),
    ],
)
def test_phrasings_from_outside(text: str, promise: bool) -> None:
    assert (find_promise(text) is not None) is promise
    expected = UNFULFILLED_PROMISE if promise else NO_MEASUREMENT
    assert modes(classify(answered(text), measure="temperature")) == [expected]


@pytest.mark.parametrize(
    ("text", "promise"),
    [
        # crewAI's Bedrock parallel-tools cassette (TestBedrockNativeToolCalling): a report
        (
            "The three parallel searches were executed simultaneously across all tools, "
            "querying the latest release notes for OpenAI, Anthropic, and Gemini models "
            "respectively.",
            False,
        ),
        ("I checked the forecast, finding 12°C in Beijing.", False),
        # after a failure, or with a re- verb, the -ing clause is the next attempt
        ("Searching for 北京 returned nothing, trying 北京市.", True),
        ("The lookup was done, re-checking with 北京市.", True),
        ("Searching the forecast now.", True),
    ],
)
def test_an_ing_clause_after_a_finite_past_goes_on_in_that_past(text: str, promise: bool) -> None:
    assert (find_promise(text) is not None) is promise
