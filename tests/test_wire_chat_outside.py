# ruff: noqa: E501  (events are kept whole, as the providers sent them)
"""Chat Completions shapes other programs recorded and the readers once misread, read from
cassettes of other projects (``tests/data/foreign/``):

- a **custom tool call** (``{"type": "custom", "custom": {"name", "input"}}``): OpenAI's
  gpt-5 in dd-trace-py's ``chat_completion_custom_tool_call.yaml``; sent back in the
  history, and streamed;
- a stream **without ``data: [DONE]``** whose choices all finished: the HuggingFace router
  in chatlas's ``test_huggingface_tools.yaml``;
- **content as a JSON object** (a structured reply): Cloudflare Workers AI in chatlas's
  ``test_cloudflare_data_extraction.yaml``;
- **arguments streamed as ``""``** for a tool without parameters: Databricks in chatlas's
  ``test_databricks_tool_variations.yaml``;
- **choices out of order** (``n: 2``, ``index`` 1 listed before ``index`` 0): not recorded
  by a program but written from OpenAI's reference (``choices[].index``), in
  ``spec-chat-n2-choices-reversed.yaml``.

Expected values come from the openai SDK's own types (``ChatCompletion``, the message param
types) and its stream accumulation (``ChatCompletionStreamState``, the chunks built as its
stream reader builds them), and from the bodies themselves, not from this project's output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from openai._models import construct_type
from openai.lib.streaming.chat._completions import ChatCompletionStreamState
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageCustomToolCall,
    ChatCompletionMessageParam,
)
from pydantic import TypeAdapter

from toolreplay.cassettes.episodes import episodes_from_cassette
from toolreplay.judging.expectations import check_expectations
from toolreplay.wire.reader import read_wire_episodes
from toolreplay.wire.replies import ModelReplyError, parse_chat_reply
from toolreplay.wire.stream import StreamError, assemble_chat_stream, split_events

FOREIGN = Path(__file__).parent / "data" / "foreign"
CUSTOM = FOREIGN / "dd-trace-py-chat-custom-tool-call.yaml"
NO_DONE = FOREIGN / "chatlas-huggingface-no-done.yaml"
CONTENT_OBJECT = FOREIGN / "chatlas-cloudflare-content-object.yaml"
EMPTY_ARGUMENTS = FOREIGN / "chatlas-databricks-empty-arguments.yaml"
REVERSED = FOREIGN / "spec-chat-n2-choices-reversed.yaml"


def _interactions(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"])


def _sdk_stream(body: str) -> Any:
    """The openai SDK's accumulation of a streamed body: its chunks built as the SDK's stream
    reader builds them (``construct_type``), its snapshot of the completion so far (what
    ``get_final_completion`` is made from) when the events end."""
    state = ChatCompletionStreamState()
    for event in split_events(body):
        if event.data.strip() == "[DONE]":
            break
        state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=json.loads(event.data)))
    return state.current_completion_snapshot


def _exchange(messages: list[Any], body: str | dict[str, Any], stream: bool) -> dict[str, Any]:
    text = body if isinstance(body, str) else json.dumps(body)
    ctype = "text/event-stream" if stream else "application/json"
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": json.dumps({"messages": messages, "model": "m", "stream": stream}),
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"Content-Type": [ctype]},
            "body": {"string": text},
        },
    }


def _chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> str:
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return "data: " + json.dumps({**chunk, "choices": [choice]})


def _stream(*events: str) -> str:
    return "".join(f"{e}\n\n" for e in events)


# ---------------------------------------------------------------- custom tool calls


def test_a_custom_tool_call_is_a_tool_call_its_input_the_arguments() -> None:
    [interaction] = _interactions(CUSTOM)
    sdk = ChatCompletion.model_validate_json(interaction["response"]["body"]["string"])
    [sdk_call] = sdk.choices[0].message.tool_calls or []
    assert isinstance(sdk_call, ChatCompletionMessageCustomToolCall)
    [episode] = episodes_from_cassette(CUSTOM)
    [round_] = episode.rounds
    [call] = round_.reply.tool_calls
    assert (
        (call.id, call.name, call.arguments)
        == (
            sdk_call.id,
            sdk_call.custom.name,
            sdk_call.custom.input,
        )
        == ("call_QpgJRI5C9DcjExMNU6lrJPcu", "math_exp", "4 + 4")
    )
    assert round_.reply.finish_reason == sdk.choices[0].finish_reason == "tool_calls"
    # the call is left unanswered: the run ended there, not on an answer
    assert (episode.stop_reason, episode.answer, episode.error) == ("max_rounds", "", None)
    assert [c.name for c in episode.pending_tool_calls] == ["math_exp"]


def test_a_custom_tool_call_sent_back_is_answered_by_its_tool_message() -> None:
    """The next request as the SDK's message param types shape it: the assistant message with
    its custom tool call, and the tool message answering it by ``tool_call_id``."""
    [first] = _interactions(CUSTOM)
    messages = json.loads(first["request"]["body"])["messages"]
    reply = json.loads(first["response"]["body"]["string"])["choices"][0]["message"]
    [sent] = reply["tool_calls"]
    echoed = {"role": "assistant", "content": None, "tool_calls": [sent]}
    tool = {"role": "tool", "tool_call_id": sent["id"], "content": "8"}
    adapter: TypeAdapter[Any] = TypeAdapter(ChatCompletionMessageParam)
    for message in (echoed, tool):
        adapter.validate_python(message)  # the shapes the SDK sends
    answer = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "4 + 4 = 8"},
            }
        ],
    }
    second = _exchange([*messages, echoed, tool], answer, stream=False)
    second["request"]["body"] = json.dumps(
        {**json.loads(second["request"]["body"]), "tools": [{"type": "custom"}]}
    )
    [wire] = read_wire_episodes([first, second])
    episode = wire.episode
    assert [r.index for r in episode.rounds] == [1, 2]
    [call] = episode.rounds[0].reply.tool_calls
    [result] = episode.rounds[0].results
    assert (result.call, result.content, result.error) == (call, "8", None)
    assert (episode.stop_reason, episode.answer) == ("converged", "4 + 4 = 8")
    # the conversation in Chat Completions form: the custom call as a function call whose
    # arguments are its input, as sent
    assistant = episode.transcript[len(messages)]
    assert assistant["tool_calls"] == [
        {
            "id": sent["id"],
            "type": "function",
            "function": {"name": sent["custom"]["name"], "arguments": sent["custom"]["input"]},
        }
    ]
    assert episode.transcript[len(messages) + 1] == tool


#: A custom tool call streamed in the shape openai/openai-python issue #2530 reports (the chunk
#: type has no ``custom`` member: openai/openai-openapi issue #576): ``type: custom`` and
#: ``custom.name`` on the first delta, ``custom.input`` in pieces.
CUSTOM_STREAM = [
    _chunk(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "custom",
                    "custom": {"name": "math_exp", "input": ""},
                }
            ],
        }
    ),
    _chunk({"tool_calls": [{"index": 0, "custom": {"input": "4 + "}}]}),
    _chunk({"tool_calls": [{"index": 0, "custom": {"input": "4"}}]}),
    _chunk({}, "tool_calls"),
    "data: [DONE]",
]

#: Function-call deltas of a gateway that echoes an empty ``custom: {}`` on each (the
#: earendil-works/pi issue #8504 report): still a function call.
EMPTY_CUSTOM_ECHOED = [
    _chunk(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_date", "arguments": ""},
                    "custom": {},
                }
            ],
        }
    ),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"tz":"UTC"}'}, "custom": {}}]}),
    _chunk({}, "tool_calls"),
    "data: [DONE]",
]


@pytest.mark.parametrize("events", [CUSTOM_STREAM, EMPTY_CUSTOM_ECHOED], ids=["custom", "echo"])
def test_streamed_custom_tool_calls_assemble_as_the_sdk_accumulates_them(
    events: list[str],
) -> None:
    body = _stream(*events)
    [sdk_call] = _sdk_stream(body).choices[0].message.tool_calls
    sdk_custom = getattr(sdk_call, "custom", None) or {}
    if sdk_call.type == "custom":
        sdk = (sdk_call.id, "custom", sdk_custom["name"], sdk_custom["input"])
    else:
        sdk = (sdk_call.id, "function", sdk_call.function.name, sdk_call.function.arguments)
    [assembled] = assemble_chat_stream(body)["choices"][0]["message"]["tool_calls"]
    part = assembled[assembled["type"]]
    value = part["input"] if assembled["type"] == "custom" else part["arguments"]
    assert (assembled["id"], assembled["type"], part["name"], value) == sdk
    [wire] = read_wire_episodes([_exchange([{"role": "user", "content": "4+4?"}], body, True)])
    [call] = wire.episode.rounds[0].reply.tool_calls
    assert (call.id, call.name, call.arguments) == (sdk[0], sdk[2], sdk[3])


def test_a_custom_tool_call_of_an_unknown_type_or_without_its_part_is_no_call() -> None:
    body = json.loads(_interactions(CUSTOM)[0]["response"]["body"]["string"])
    [call] = body["choices"][0]["message"]["tool_calls"]
    for odd in ({**call, "type": "mcp"}, {"id": call["id"], "type": "custom"}):
        body["choices"][0]["message"]["tool_calls"] = [odd]
        [wire] = read_wire_episodes([_exchange([{"role": "user", "content": "x"}], body, False)])
        assert wire.episode.rounds[0].reply.tool_calls == ()


# ----------------------------------------------------- a stream without data: [DONE]


def test_a_stream_whose_choices_finished_needs_no_done() -> None:
    [interaction] = _interactions(NO_DONE)
    body = interaction["response"]["body"]["string"]
    assert "[DONE]" not in body
    sdk = _sdk_stream(body)
    [episode] = episodes_from_cassette(NO_DONE)
    assert episode.error is None and episode.streamed
    [round_] = episode.rounds
    assert round_.reply.content == sdk.choices[0].message.content == "It is 'get_date'."
    assert round_.reply.finish_reason == sdk.choices[0].finish_reason == "stop"
    usage = (round_.reply.usage.prompt_tokens, round_.reply.usage.completion_tokens)
    assert usage == (sdk.usage.prompt_tokens, sdk.usage.completion_tokens) == (515, 7)
    assert (episode.stop_reason, episode.answer) == ("converged", "It is 'get_date'.")
    # the same events with [DONE] read the same
    [done] = read_wire_episodes([{**interaction, "response": {
        **interaction["response"], "body": {"string": body + "data: [DONE]\n\n"}}}])  # fmt: skip
    assert done.episode == episode


@pytest.mark.parametrize(
    ("events", "words"),
    [
        # the HuggingFace stream without its last chunk: no finish reason yet
        ("hf", "cut off: it ends without data: [DONE] and before a finish reason"),
        # two choices, one finished
        (
            [
                _chunk({"role": "assistant", "content": "A"}, "stop"),
                _chunk({"role": "assistant", "content": "B"}, index=1),
            ],
            "before a finish reason",
        ),
        # a usage chunk alone
        (
            [
                'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}'
            ],
            "cut off: it ends without data: [DONE] and holds no choice",
        ),
    ],
    ids=["no-finish", "one-of-two", "no-choice"],
)
def test_a_stream_with_a_choice_left_open_and_no_done_is_cut_off(events: Any, words: str) -> None:
    if events == "hf":
        body = _interactions(NO_DONE)[0]["response"]["body"]["string"]
        events = [e.text for e in split_events(body)][:-1]
    with pytest.raises(StreamError) as caught:
        assemble_chat_stream(_stream(*events))
    assert words in str(caught.value)
    assert caught.value.chunk == len(events) - 1


# ------------------------------------------------- a field sent as another JSON value


def test_content_sent_as_an_object_is_its_json_text() -> None:
    """Cloudflare's structured replies: each a round, none a fault."""
    sent = [
        json.loads(i["response"]["body"]["string"])["choices"][0]["message"]["content"]
        for i in _interactions(CONTENT_OBJECT)[:3]
    ]
    assert all(isinstance(c, dict) for c in sent)
    [episode] = episodes_from_cassette(CONTENT_OBJECT)
    assert episode.faults == () and episode.error is None
    assert [r.index for r in episode.rounds] == [1, 2, 3, 4]
    texts = [r.reply.content for r in episode.rounds[:3]]
    assert texts == [json.dumps(c, ensure_ascii=False) for c in sent]
    assert [json.loads(t or "") for t in texts] == sent
    assert episode.answer.startswith("The name of the person is Emily Wilson.")


def _reply(message: dict[str, Any], finish: Any = "stop") -> Any:
    import httpx

    body = {"id": "x", "object": "chat.completion", "created": 1, "model": "m"}
    body["choices"] = [{"index": 0, "finish_reason": finish, "message": message}]
    request = httpx.Request("POST", "https://api.example/v1/chat/completions")
    return parse_chat_reply(httpx.Response(200, json=body, request=request))


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ([{"name": "Ada", "age": 36}], '[{"name": "Ada", "age": 36}]'),  # an array reply
        ([1, 2], "[1, 2]"),
        (42, "42"),
        (True, "true"),
        ({"city": "Zürich"}, '{"city": "Zürich"}'),
        # content parts stay parts: their text joined, an image part skipped
        (
            [
                {"type": "text", "text": "a "},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                "b",
            ],
            "a b",
        ),
    ],
)
def test_content_that_is_not_text_or_parts_is_its_json_text(content: Any, text: str) -> None:
    reply = _reply({"role": "assistant", "content": content})
    assert reply.content == text


def test_string_fields_sent_as_other_values_are_their_json_text() -> None:
    """``refusal``, a tool call's ``id`` and ``function.name`` and ``finish_reason``: typed as
    strings; another JSON value there is its JSON text, not a refused reply."""
    call = {"id": 7, "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    reply = _reply({"role": "assistant", "refusal": {"reason": "no"}, "tool_calls": [call]}, 1)
    [tool_call] = reply.tool_calls
    assert (tool_call.id, tool_call.name, tool_call.arguments) == ("7", "f", '{"a": 1}')
    assert (reply.refusal, reply.finish_reason) == ('{"reason": "no"}', "1")
    with pytest.raises(ModelReplyError, match="not a message object"):
        _reply("not a message")  # type: ignore[arg-type]


def test_streamed_content_sent_as_an_object_is_its_json_text() -> None:
    body = _stream(_chunk({"role": "assistant", "content": {"title": "T"}}, "stop"), "data: [DONE]")
    [choice] = assemble_chat_stream(body)["choices"]
    assert json.loads(choice["message"]["content"]) == {"title": "T"}


# ------------------------------------------------------------ arguments streamed as ""


def test_arguments_streamed_empty_read_as_the_empty_object_the_program_sent_back() -> None:
    first, second = _interactions(EMPTY_ARGUMENTS)
    body = first["response"]["body"]["string"]
    [sdk_call] = _sdk_stream(body).choices[0].message.tool_calls
    assert sdk_call.function.arguments == ""  # the SDK joins the "" pieces
    sent_back = json.loads(second["request"]["body"])["messages"][2]["tool_calls"]
    assert [c["function"]["arguments"] for c in sent_back] == ["{}"]
    [wire] = read_wire_episodes([first, second])
    episode = wire.episode
    [call] = episode.rounds[0].reply.tool_calls
    assert (call.id, call.name) == (sdk_call.id, sdk_call.function.name)
    assert call.arguments == sent_back[0]["function"]["arguments"] == "{}"
    assert episode.rounds[0].results[0].content == "2024-01-01"
    assert episode.answer == "It is 2024-01-01."
    [check] = check_expectations(episode, [{"tool_arguments": {"tool": "get_date", "equals": {}}}])
    assert check.passed, check.explanation  # not "its arguments are not JSON: ''"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [("", "{}"), ("  ", "{}"), ("{}", "{}"), ("not json", "not json"), ('{"a":1}', '{"a":1}')],
)
def test_empty_arguments_are_the_empty_object_other_text_is_kept(
    arguments: str, expected: str
) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    [tool_call] = _reply({"role": "assistant", "tool_calls": [call]}, "tool_calls").tool_calls
    assert tool_call.arguments == expected


def test_a_custom_tool_calls_empty_input_is_kept_as_sent() -> None:
    """Free text, not JSON: an empty input is an input, not a missing one."""
    call = {"id": "c1", "type": "custom", "custom": {"name": "shell", "input": ""}}
    [tool_call] = _reply({"role": "assistant", "tool_calls": [call]}, "tool_calls").tool_calls
    assert (tool_call.name, tool_call.arguments) == ("shell", "")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"type": "function_call", "call_id": "c1", "name": "f", "arguments": ""}, "{}"),
        ({"type": "function_call", "call_id": "c1", "name": "f"}, "{}"),
        ({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "x"}, "x"),
        ({"type": "custom_tool_call", "call_id": "c1", "name": "f", "input": ""}, ""),
    ],
)
def test_the_responses_reader_keeps_the_same_arguments_rule(
    item: dict[str, Any], expected: str
) -> None:
    from toolreplay.wire.responses import tool_call

    assert tool_call(item).arguments == expected


def test_the_choice_read_is_choice_0_by_its_index_not_its_place() -> None:
    body = json.loads(
        yaml.safe_load(REVERSED.read_text())["interactions"][0]["response"]["body"]["string"]
    )
    assert [(c["index"], c["message"]["content"]) for c in body["choices"]] == [
        (1, "Second"),
        (0, "First"),
    ]
    (episode,) = episodes_from_cassette(REVERSED)
    (only,) = episode.rounds
    assert (only.reply.content, only.reply.finish_reason) == ("First", "stop")
    assert episode.stop_reason == "converged"
