"""Values with nothing to check them against are not checkable, not fabricated
(toolreplay.judging.checkable); hosted tools read from every protocol's reply
(toolreplay.wire.hosted); fractions, and a lower-case f/c after a number, read as one value.

The cassettes are public recordings, kept in tests/data/foreign/:
pydantic-ai's ``test_google_model_web_search_tool`` (Gemini with ``google_search``: the answer
is drawn from grounding metadata the recording holds only as citations) and
``test_openai_responses_reasoning_effort`` (a recipe, no tool offered), dd-trace-py's
``test_single_agent_with_ootb_tools`` (an OpenAI agent with ``web_search_preview``: a
``web_search_call`` item) and ``anthropic_completion_tools_call_with_tool_result`` (a tool
result ``The weather is 73f``, answered ``73°F``).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import httpx
import pytest

from toolreplay.cassettes import load_recorded
from toolreplay.evaluation import suite_from_tests
from toolreplay.judging.assessment import assess
from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.grounding import ground_answer
from toolreplay.judging.values import scan
from toolreplay.results.build import verdict_evidence
from toolreplay.wire.anthropic_messages import message_reply
from toolreplay.wire.episode import Episode, ModelReply, Usage
from toolreplay.wire.hosted import bedrock_hosted, gemini_hosted
from toolreplay.wire.reader import read_wire_episodes
from toolreplay.wire.replies import parse_chat_reply
from toolreplay.wire.responses import reply_from_response

from .test_failures import answered, call, reply, run

FOREIGN = Path(__file__).parent / "data" / "foreign"


def _episode(name: str) -> Episode:
    [record] = read_wire_episodes(load_recorded(FOREIGN / name))
    return record.episode


def _any_question(tmp_path: Path, name: str):  # the question of a test without an eval file
    shutil.copy(FOREIGN / name, tmp_path / f"test_{name.replace('-', '_')}")
    [question] = suite_from_tests([tmp_path / f"test_{name.replace('-', '_')}"]).questions
    return question


# ---- no tool result under an `any` question -------------------------------------------------


def test_a_recipe_answered_with_no_tool_states_values_that_are_not_checkable(tmp_path) -> None:
    """0.5 cm, 3–4 cm, 180°C (350°F): no tool was offered, the question declares no measure;
    nothing holds or contradicts them. Before: five fabricated_value labels."""
    name = "pydantic-ai-responses-recipe-no-tools.yaml"
    episode, question = _episode(name), _any_question(tmp_path, name)
    assert question.measure == "any" and not episode.tool_calls
    judged = assess(episode, question)
    assert judged.passed and judged.failure_modes == ()
    assert "not checkable (0.5 cm" in judged.verdict.explanation
    assert "no tool result was returned in this episode" in judged.verdict.explanation
    record = verdict_evidence(judged.verdict)
    assert [v.text for v in record.values][:3] == ["0.5 cm", "3", "4 cm"]
    assert {v.grounded for v in record.values} == {None}  # null: not checked
    assert record.values[0].reason.startswith("not checkable: no tool result was returned")


def test_without_a_tool_result_any_is_not_checkable_but_a_declared_measure_is_made_up() -> None:
    """The weather study's question declares temperature: a value stated with no tool result
    was made up, as before. An `any` question says nothing of what the answer needs."""
    offered = run("single", [reply("北京今天 30°C。")])  # a tool offered, none called
    assert [f.mode for f in classify(offered, measure="any")] == []
    assert [f.mode for f in classify(offered, measure="temperature")] == [FABRICATED_VALUE]
    assert [f.mode for f in classify(offered)] == [FABRICATED_VALUE]


def test_a_tool_result_that_does_not_hold_the_value_still_makes_it_fabricated() -> None:
    assert [f.mode for f in classify(answered("北京现在 35°C。"), measure="any")] == [
        FABRICATED_VALUE
    ]


# ---- hosted tools ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("pydantic-ai-gemini-web-search.yaml", "google_search"),
        ("ddtrace-agents-web-search-preview.yaml", "web_search"),
    ],
)
def test_values_from_a_hosted_search_are_not_checkable(tmp_path, name: str, tool: str) -> None:
    episode, question = _episode(name), _any_question(tmp_path, name)
    assert episode.hosted_tools == (tool,) and not episode.tool_calls
    judged = assess(episode, question)
    assert judged.passed and judged.failure_modes == ()
    assert "not checkable (" in judged.verdict.explanation
    assert f"the hosted tool {tool} ran on the provider's side" in judged.verdict.explanation
    # a question declaring temperature: no grounded value, but nothing called made up
    strict = assess(episode, dataclasses.replace(question, measure="temperature"))
    assert not strict.passed and strict.failure_modes == ()
    assert "not checkable" in strict.verdict.explanation


def test_beside_a_function_tool_a_hosted_search_spares_only_the_values_it_may_hold() -> None:
    """26.1°C is the get_weather result's (grounded); 35°C is in no recorded result but may be
    the web search's: not checkable. Without the search, 35°C is fabricated."""
    text = "北京现在 26.1°C，下午可能到 35°C。"
    searched = ModelReply(text, (), "stop", Usage(10, 5), hosted_tools=("web_search",))
    episode = run("loop", [reply(None, call()), searched])
    assert episode.hosted_tools == ("web_search",)
    judged = assess(episode, "temperature")
    assert judged.passed and judged.failure_modes == (), judged.verdict.explanation
    g = ground_answer(text, episode.transcript, "temperature", hosted=episode.hosted_tools)
    assert [(c.text, c.grounded, c.checkable) for c in g.checks] == [
        ("26.1°C", True, True), ("35°C", False, False),
    ]  # fmt: skip
    assert "the hosted tool web_search" in g.checks[1].reason
    plain = run("loop", [reply(None, call()), reply(text)])
    assert [f.mode for f in classify(plain, measure="temperature")] == [FABRICATED_VALUE]


def test_anthropic_server_tool_blocks_name_the_hosted_tool() -> None:
    message = {
        "type": "message",
        "stop_reason": "end_turn",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
             "input": {"query": "weather San Francisco"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": [{"type": "web_search_result", "url": "https://example.org",
                          "title": "Weather", "encrypted_content": "xx"}]},
            {"type": "text", "text": "It is 59°F in San Francisco."},
        ],
    }  # fmt: skip
    got = message_reply(message)
    assert got.hosted_tools == ("web_search",) and got.content == "It is 59°F in San Francisco."
    assert "hosted_tools" not in got.to_message()  # never sent back as a message field
    searched = {**message, "content": [{"type": "tool_search_tool_result", "content": {}}]}
    assert message_reply(searched).hosted_tools == ()  # a tool search holds no data


def test_responses_chat_gemini_and_bedrock_replies_name_their_hosted_tools() -> None:
    output = [
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "weather"}},
        {"type": "code_interpreter_call", "id": "ci_1", "status": "completed"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "72°F", "annotations": []}]},
    ]  # fmt: skip
    got = reply_from_response({"status": "completed", "output": output}, "e", 200)
    assert got.hosted_tools == ("web_search", "code_interpreter") and got.content == "72°F"
    body = {
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "It is 72°F.",
            "annotations": [{"type": "url_citation", "url_citation": {"url": "https://x"}}],
        }}],
    }  # fmt: skip
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    assert parse_chat_reply(httpx.Response(200, json=body, request=request)).hosted_tools == (
        "web_search",
    )
    del body["choices"][0]["message"]["annotations"]
    assert parse_chat_reply(httpx.Response(200, json=body, request=request)).hosted_tools == ()
    candidate = {"content": {"parts": [{"text": "72°F"}]},
                 "grounding_metadata": {"web_search_queries": ["weather"]}}  # fmt: skip
    assert gemini_hosted(candidate) == ("google_search",)
    assert gemini_hosted({"content": {"parts": [{"executableCode": {"code": "1"}}]}}) == (
        "code_execution",
    )
    use = {"toolUse": {"type": "server_tool_use", "name": "nova_grounding", "toolUseId": "t"}}
    assert bedrock_hosted([use, {"text": "hi"}]) == ("nova_grounding",)


# ---- reading values: a lower-case f/c, fractions, ranges ------------------------------------


def test_a_tool_result_of_73f_grounds_an_answer_of_73_degrees_fahrenheit() -> None:
    episode = _episode("ddtrace-anthropic-tool-result-73f.yaml")
    assert "73f" in str(episode.transcript[2]["content"])
    judged = assess(episode, "temperature")
    assert judged.passed and judged.failure_modes == (), judged.verdict.explanation
    assert "equals 73 F" in judged.verdict.explanation


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("The weather is 73f", [(73.0, "F")]),
        ("It is 73 f.", [(73.0, "F")]),
        ("about 22c, sunny", [(22.0, "C")]),
        ("22 c", [(22.0, "C")]),
        ("73F", [(73.0, "F")]),
        ("2 c flour", []),  # cups
        ("1 c. sugar", []),
        ("0x7f", []),
        ("#00f", []),
        ("22cm", [(22.0, "cm")]),
    ],
)
def test_a_lower_case_scale_letter_reads_only_where_nothing_else_is_meant(text, read) -> None:
    assert [(v.value, v.unit) for v in scan(text).values] == read


@pytest.mark.parametrize(
    ("result", "answer"),
    [("The weather is 22c", "北京现在 22°C。"), ("temp: 73 f", "It is 73°F (22.8°C) now.")],
)
def test_lower_case_tool_units_ground_answers(result: str, answer: str) -> None:
    assert classify(answered(answer, result=result), measure="temperature") == ()


@pytest.mark.parametrize(
    ("text", "value", "written"),
    [
        ("Roll the dough to about 1/4 inch thickness", 0.25, "1/4 inch"),
        ("a 1 1/2 inch round cutter", 1.5, "1 1/2 inch"),
        ("cut ¾ inch thick", 0.75, "¾ inch"),
        ("1½ inches of rain", 1.5, "1½ inches"),
        ("3/8 inch", 0.375, "3/8 inch"),
        ("2-1/2 inches of snow", 2.5, "2-1/2 inches"),  # the US way of writing 2½
        ("Snow on Dec 3 1/4 inch deep", 0.25, "1/4 inch"),  # 3 is the day, not 3¼
        ("On March 12 3/4 inch fell", 0.75, "3/4 inch"),
        ("On Sept. 5 1/2 inch fell", 0.5, "1/2 inch"),
    ],
)
def test_a_fraction_is_one_value(text: str, value: float, written: str) -> None:
    [v] = scan(text).values
    assert v.value == pytest.approx(value) and v.unit in ("inch", "in")
    assert text[v.start : v.end] == written


def test_a_high_and_low_written_with_a_slash_stay_two_values() -> None:
    for text in ("28/20°C", "75°/60°", "北京 31.1/20.5℃"):
        assert len(scan(text).values) == 2, text


@pytest.mark.parametrize("text", ["3-4 cm", "3–4 °C", "3 to 4 cm", "between 3 and 4 cm"])
def test_a_range_is_read_as_one_range_with_its_unit_at_both_ends(text: str) -> None:
    s = scan(text)
    assert s.ranges == ((0, 1),)
    low, high = s.values
    assert (low.value, high.value) == (3.0, 4.0) and low.unit == high.unit


def test_a_fraction_is_grounded_by_its_decimal_in_a_tool_result() -> None:
    assert classify(answered("预计降水约 1/4 inch。", result="rain: 0.25 inch")) == ()
    wrong = classify(answered("预计降水约 3/4 inch。", result="rain: 0.25 inch"))
    assert [f.mode for f in wrong] == [FABRICATED_VALUE]
