# ruff: noqa: E501  (events are kept whole, as the providers sent them)
"""Episodes from the wire on streamed bodies from providers and shapes nobody on this project
wrote: Ollama's parallel tool calls, Azure OpenAI (a leading chunk with empty ``choices`` and
``prompt_filter_results``, ``content_filter_results`` on every choice, events separated by two
blank lines), Gemini's OpenAI-compatible endpoint (parallel calls all sent at ``index`` 0), a
legacy streamed ``function_call``, ``n`` > 1 choices and arguments sent as an object.

Expected values come from the OpenAI streaming specification and, where the body validates
against the SDK's chunk type, from the openai SDK's own accumulation
(``ChatCompletionStreamState``), not from this project's output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai._models import construct_type
from openai.lib.streaming.chat._completions import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from toolreplay.cassettes.episodes import episodes_from_cassette
from toolreplay.judging.expectations import check_expectations
from toolreplay.wire.reader import read_wire_episodes
from toolreplay.wire.replies import ModelReplyError, parse_chat_reply
from toolreplay.wire.stream import assemble_chat_stream

# fmt: off

#: Ollama (qwen2.5-coder), two parallel calls, each whole in one chunk, ``role`` and
#: ``content: ""`` repeated on every chunk. From g0t4/ask-openai.nvim,
#: lua/ask-openai/backends/ollama/notes/sses.md (the three chunks as recorded; [DONE] as
#: Ollama sends it).
OLLAMA_PARALLEL = [
    'data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b-instruct-q8_0","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_wteop8bt","index":0,"type":"function","function":{"name":"run_command","arguments":"{\\"command\\":\\"ls\\"}"}}]},"finish_reason":null}]}',
    'data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b-instruct-q8_0","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_rk2xye1l","index":1,"type":"function","function":{"name":"run_command","arguments":"{\\"command\\":\\"ls -l\\"}"}}]},"finish_reason":null}]}',
    'data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b-instruct-q8_0","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}',
    "data: [DONE]",
]

#: Azure OpenAI (gpt-5.2-chat), a tool call without parameters: a first chunk with empty
#: ``choices``, ``id: ""``, ``object: ""`` and ``prompt_filter_results``; ``content_filter_results``
#: on each choice; events separated by two blank lines. From a public C# test-data file
#: (namespace Infrastructure.Ai.Tests.Clients.OpenAi, class TestData, HTTP_RESPONSE_2; the
#: search index does not name its repository). The recording ends without ``data: [DONE]``
#: (complete all the same: its one choice has its finish reason); AZURE_TOOL_CALL adds it,
#: AZURE_AS_RECORDED keeps the text as it is.
AZURE_AS_RECORDED = [
    'data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}',
    'data: {"choices":[{"content_filter_results":{},"delta":{"content":null,"refusal":null,"role":"assistant","tool_calls":[{"function":{"arguments":"","name":"getMyIp"},"id":"call_uLWyKTpLtOsRmTudAFNQ2Vwv","index":0,"type":"function"}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1772304653,"id":"chatcmpl-DEJgre24uAUHKoNbjvT3tZcrLP4tr","model":"gpt-5.2-chat-2025-12-11","obfuscation":"beU6bph0","object":"chat.completion.chunk","system_fingerprint":null}',
    'data: {"choices":[{"content_filter_results":{},"delta":{"tool_calls":[{"function":{"arguments":"{}"},"index":0}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1772304653,"id":"chatcmpl-DEJgre24uAUHKoNbjvT3tZcrLP4tr","model":"gpt-5.2-chat-2025-12-11","obfuscation":"Q5SzSiCUyQonOyp","object":"chat.completion.chunk","system_fingerprint":null}',
    'data: {"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"tool_calls","index":0,"logprobs":null}],"created":1772304653,"id":"chatcmpl-DEJgre24uAUHKoNbjvT3tZcrLP4tr","model":"gpt-5.2-chat-2025-12-11","obfuscation":"IHPfk57LB1qbD0j","object":"chat.completion.chunk","system_fingerprint":null}',
]
AZURE_TOOL_CALL = [*AZURE_AS_RECORDED, "data: [DONE]"]

#: Azure's next reply in the same file (HTTP_RESPONSE_3), its first chunks only (the
#: arguments of ``showMyIp`` cut after their start): a stream cut off mid-call.
AZURE_CUT_OFF = [
    AZURE_AS_RECORDED[0],
    'data: {"choices":[{"content_filter_results":{},"delta":{"content":null,"refusal":null,"role":"assistant","tool_calls":[{"function":{"arguments":"","name":"showMyIp"},"id":"call_OW6GhPkVXNfP7dlpCEvCqAVK","index":0,"type":"function"}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1772304656,"id":"chatcmpl-DEJguaV0swncJqLDbjg6R2zaFdxCi","model":"gpt-5.2-chat-2025-12-11","obfuscation":"kj0ZAtv","object":"chat.completion.chunk","system_fingerprint":null}',
    'data: {"choices":[{"content_filter_results":{},"delta":{"tool_calls":[{"function":{"arguments":"{\\""},"index":0}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1772304656,"id":"chatcmpl-DEJguaV0swncJqLDbjg6R2zaFdxCi","model":"gpt-5.2-chat-2025-12-11","obfuscation":"87m7mvqkw7X9ci","object":"chat.completion.chunk","system_fingerprint":null}',
    'data: {"choices":[{"content_filter_results":{},"delta":{"tool_calls":[{"function":{"arguments":"ip"},"index":0}]},"finish_reason":null,"index":0,"logprobs":null}],"created":1772304656,"id":"chatcmpl-DEJguaV0swncJqLDbjg6R2zaFdxCi","model":"gpt-5.2-chat-2025-12-11","obfuscation":"xSlTaW5PXRS5Hng","object":"chat.completion.chunk","system_fingerprint":null}',
]

#: The tool message the program sent back for getMyIp (HTTP_REQUEST_3 of the same file; the
#: serialized result shortened to the fields kept here).
AZURE_TOOL_RESULT = '{"SerializedResult":"{\\"ipVersion\\":4,\\"ipAddress\\":\\"104.186.12.123\\",\\"cityName\\":\\"Houston\\"}","IsError":false}'

#: Gemini through an OpenAI-compatible stream: three parallel calls of one tool, each whole in
#: its own chunk and each at ``index`` 0, as su-kaka/gcli2api pull request #406 shows them
#: (``index=0 {"city":"北京"} / index=0 {"city":"上海"} / index=0 {"city":"广州"}``; the
#: same report for Google's own endpoint: NousResearch/hermes-agent issue #62940). The chunk
#: envelope and the ids are written here (the reports give the deltas only); the same request
#: unstreamed gives three separate calls.
GEMINI_SAME_INDEX = [
    'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1,"model":"gemini-3.5-flash","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_bj","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"北京\\"}"}}]},"finish_reason":null}]}',
    'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1,"model":"gemini-3.5-flash","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_sh","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"上海\\"}"}}]},"finish_reason":null}]}',
    'data: {"id":"chatcmpl-g1","object":"chat.completion.chunk","created":1,"model":"gemini-3.5-flash","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_gz","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"广州\\"}"}}]},"finish_reason":"tool_calls"}]}',
    "data: [DONE]",
]

#: Poolside's stream (poolsideai/pool issue #9): the id of one call changes after its first
#: chunk, later chunks carry no name. Envelope and ids written here from the report.
CHANGING_ID = [
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_first","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}',
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_other","function":{"arguments":"{\\"path\\":"}}]},"finish_reason":null}]}',
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_other","function":{"arguments":"\\"a.txt\\"}"}}]},"finish_reason":"tool_calls"}]}',
    "data: [DONE]",
]

# fmt: on


def _body(events: list[str], sep: str = "\n\n") -> str:
    return sep.join(events) + sep


def _chunk(choices: list[dict[str, Any]]) -> str:
    return "data: " + json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": choices,
        }
    )


def _sdk(events: list[str], validate: bool = True) -> Any:
    """The openai SDK's own accumulation of a stream; ``validate=False`` builds the chunks as
    the SDK's stream reader does (``construct_type``, no validation), for a body whose chunks
    break the chunk type (Azure's first chunk has ``object: ""``)."""
    state = ChatCompletionStreamState()
    for event in events:
        data = event.removeprefix("data: ")
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        state.handle_chunk(
            ChatCompletionChunk.model_validate(chunk)
            if validate
            else construct_type(type_=ChatCompletionChunk, value=chunk)
        )
    return state.get_final_completion()


USER = [
    {"role": "system", "content": "You are a helper."},
    {"role": "user", "content": "what's my ip?"},
]
TOOLS = [{"type": "function", "function": {"name": "getMyIp"}}]


def _exchange(messages: list[Any], body: str, stream: bool = True) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": "https://example.openai.azure.com/openai/deployments/d/chat/completions?api-version=2025-01-01",
            "body": json.dumps({"messages": messages, "tools": TOOLS, "stream": stream}),
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"Content-Type": ["text/event-stream; charset=utf-8"]},
            "body": {"string": body},
        },
    }


def test_ollama_parallel_calls_read_as_the_sdk_accumulates_them() -> None:
    sdk = _sdk(OLLAMA_PARALLEL).choices[0].message
    expected = [(c.id, c.function.name, c.function.arguments) for c in sdk.tool_calls or []]
    assert expected == [
        ("call_wteop8bt", "run_command", '{"command":"ls"}'),
        ("call_rk2xye1l", "run_command", '{"command":"ls -l"}'),
    ]
    [wire] = read_wire_episodes([_exchange(USER, _body(OLLAMA_PARALLEL))])
    [round_] = wire.episode.rounds
    assert [(c.id, c.name, c.arguments) for c in round_.reply.tool_calls] == expected
    assert round_.reply.finish_reason == "tool_calls"
    assert wire.episode.streamed and wire.episode.answer == ""
    assert wire.episode.stop_reason == "max_rounds"  # nothing answered the calls


def test_azure_stream_with_an_empty_choices_chunk_and_filter_results() -> None:
    [wire] = read_wire_episodes([_exchange(USER, _body(AZURE_TOOL_CALL, "\n\n\n"))])
    [round_] = wire.episode.rounds
    [call] = round_.reply.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "call_uLWyKTpLtOsRmTudAFNQ2Vwv",
        "getMyIp",
        "{}",
    )
    assert round_.reply.finish_reason == "tool_calls"
    assert wire.episode.error is None
    assert [c.name for c in wire.episode.pending_tool_calls] == ["getMyIp"]


def test_azure_two_rounds_then_a_stream_cut_off_mid_call() -> None:
    """Round 1's call is answered by the tool message of request 2; request 2's reply ends
    without [DONE] after the chunk that starts the arguments: an error naming that chunk, the
    round before it kept."""
    echoed = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_uLWyKTpLtOsRmTudAFNQ2Vwv",
                "type": "function",
                "function": {"name": "getMyIp", "arguments": "{}"},
            }
        ],
    }
    tool = {
        "role": "tool",
        "content": AZURE_TOOL_RESULT,
        "tool_call_id": "call_uLWyKTpLtOsRmTudAFNQ2Vwv",
    }
    interactions = [
        _exchange(USER, _body(AZURE_TOOL_CALL, "\n\n\n")),
        _exchange([*USER, echoed, tool], _body(AZURE_CUT_OFF, "\n\n\n")),
    ]
    [wire] = read_wire_episodes(interactions)
    episode = wire.episode
    assert [r.index for r in episode.rounds] == [1]
    [result] = episode.rounds[0].results
    assert result.content == AZURE_TOOL_RESULT and result.error is None
    assert episode.stop_reason == "error" and episode.answer == ""
    assert episode.error is not None
    assert "chunk 3: the stream is cut off: it ends without data: [DONE]" in episode.error


def test_azure_as_recorded_without_done_reads_as_with_it() -> None:
    """Its one choice finished (``finish_reason: tool_calls``) before the stream ended: it is
    complete without [DONE], as the SDK's accumulation takes it, and reads as with [DONE]."""
    sdk = _sdk(AZURE_AS_RECORDED, validate=False).choices[0]
    [sdk_call] = sdk.message.tool_calls or []
    [wire] = read_wire_episodes([_exchange(USER, _body(AZURE_AS_RECORDED, "\n\n\n"))])
    [done] = read_wire_episodes([_exchange(USER, _body(AZURE_TOOL_CALL, "\n\n\n"))])
    assert wire.episode == done.episode and wire.episode.error is None
    [call] = wire.episode.rounds[0].reply.tool_calls
    assert (call.id, call.name, call.arguments) == (
        sdk_call.id,
        sdk_call.function.name,
        sdk_call.function.arguments,
    )
    assert wire.episode.rounds[0].reply.finish_reason == sdk.finish_reason == "tool_calls"


def test_parallel_calls_sent_at_one_index_each_with_its_own_id_stay_apart() -> None:
    """The SDK would merge them into one call with arguments '{...}{...}{...}' (not JSON);
    read as the unstreamed reply gives them: three calls."""
    sdk = _sdk(GEMINI_SAME_INDEX).choices[0].message.tool_calls or []
    assert len(sdk) == 1  # the SDK's accumulation merges them
    [choice] = assemble_chat_stream(_body(GEMINI_SAME_INDEX))["choices"]
    calls = [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in choice["message"]["tool_calls"]
    ]
    assert calls == [
        ("call_bj", "get_weather", '{"city":"北京"}'),
        ("call_sh", "get_weather", '{"city":"上海"}'),
        ("call_gz", "get_weather", '{"city":"广州"}'),
    ]
    [wire] = read_wire_episodes([_exchange(USER, _body(GEMINI_SAME_INDEX))])
    assert [json.loads(c.arguments)["city"] for c in wire.episode.rounds[0].reply.tool_calls] == [
        "北京",
        "上海",
        "广州",
    ]


def test_an_id_changing_on_later_chunks_of_one_call_does_not_split_it() -> None:
    [choice] = assemble_chat_stream(_body(CHANGING_ID))["choices"]
    [call] = choice["message"]["tool_calls"]
    assert (call["id"], call["function"]["name"], call["function"]["arguments"]) == (
        "call_first",
        "read",
        '{"path":"a.txt"}',
    )


def test_interleaved_parallel_calls_match_the_sdk() -> None:
    events = [
        _chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "a",
                                "type": "function",
                                "function": {"name": "f", "arguments": ""},
                            }
                        ],
                    },
                }
            ]
        ),
        _chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "b",
                                "type": "function",
                                "function": {"name": "g", "arguments": '{"y":'},
                            }
                        ]
                    },
                }
            ]
        ),
        _chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "function": {"arguments": '{"x":1}'}},
                            {"index": 1, "function": {"arguments": "2}"}},
                        ]
                    },
                }
            ]
        ),
        _chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
        "data: [DONE]",
    ]
    sdk = [
        (c.id, c.function.name, c.function.arguments)
        for c in _sdk(events).choices[0].message.tool_calls or []
    ]
    [choice] = assemble_chat_stream(_body(events))["choices"]
    ours = [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in choice["message"]["tool_calls"]
    ]
    assert ours == sdk == [("a", "f", '{"x":1}'), ("b", "g", '{"y":2}')]


@pytest.mark.parametrize(
    ("delta_calls", "expected"),
    [
        # arguments as an object in one piece (a server sending parsed JSON)
        (
            [
                {
                    "index": 0,
                    "id": "a",
                    "type": "function",
                    "function": {"name": "f", "arguments": {"x": 1, "city": "Zürich"}},
                }
            ],
            ("a", "f", '{"x": 1, "city": "Zürich"}'),
        ),
        # no arguments at all: sent back as the empty object
        (
            [{"index": 0, "id": "a", "type": "function", "function": {"name": "f"}}],
            ("a", "f", "{}"),
        ),
    ],
)
def test_arguments_not_streamed_as_text(
    delta_calls: list[Any], expected: tuple[str, str, str]
) -> None:
    events = [
        _chunk([{"index": 0, "delta": {"role": "assistant", "tool_calls": delta_calls}}]),
        _chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
        "data: [DONE]",
    ]
    [wire] = read_wire_episodes([_exchange(USER, _body(events))])
    [call] = wire.episode.rounds[0].reply.tool_calls
    assert (call.id, call.name, call.arguments) == expected


def test_legacy_streamed_function_call_is_one_tool_call() -> None:
    events = [
        _chunk(
            [
                {
                    "index": 0,
                    "delta": {
                        "role": "assistant",
                        "content": None,
                        "function_call": {"name": "getMyIp", "arguments": ""},
                    },
                }
            ]
        ),
        _chunk([{"index": 0, "delta": {"function_call": {"arguments": '{"v":'}}}]),
        _chunk([{"index": 0, "delta": {"function_call": {"arguments": "4}"}}}]),
        _chunk([{"index": 0, "delta": {}, "finish_reason": "function_call"}]),
        "data: [DONE]",
    ]
    [wire] = read_wire_episodes([_exchange(USER, _body(events))])
    [call] = wire.episode.rounds[0].reply.tool_calls
    assert (call.name, call.arguments) == ("getMyIp", '{"v":4}')
    assert wire.episode.rounds[0].reply.finish_reason == "function_call"


def test_n_choices_read_choice_zero_whatever_order_they_finish() -> None:
    events = [
        _chunk(
            [
                {"index": 1, "delta": {"role": "assistant", "content": "B"}},
                {"index": 0, "delta": {"role": "assistant", "content": "A"}},
            ]
        ),
        _chunk([{"index": 1, "delta": {"content": "b"}, "finish_reason": "length"}]),
        _chunk([{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}]),
        "data: [DONE]",
    ]
    [wire] = read_wire_episodes([_exchange([{"role": "user", "content": "hi"}], _body(events))])
    assert wire.episode.answer == "Aa"
    assert (
        wire.episode.stop_reason == "converged"
    )  # choice 0 stopped; choice 1's length is not ours


def test_final_answer_as_content_parts_unstreamed() -> None:
    body = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "Your IP is "},
                            {"type": "text", "text": "104.186.12.123."},
                        ],
                    },
                }
            ],
        }
    )
    exchange = _exchange([{"role": "user", "content": "ip?"}], body, stream=False)
    exchange["response"]["headers"] = {"Content-Type": ["application/json"]}
    [wire] = read_wire_episodes([exchange])
    assert wire.episode.answer == "Your IP is 104.186.12.123."
    assert wire.episode.stop_reason == "converged" and not wire.episode.streamed


FOREIGN = Path(__file__).parent / "data" / "foreign"


def test_a_streamed_call_in_a_folded_vcrpy_cassette() -> None:
    """openllmetry's cassette: the YAML dumper folded the event stream across lines, one
    argument piece split inside its JSON string (read back as one space)."""
    [episode] = episodes_from_cassette(FOREIGN / "openllmetry-tools-streaming.yaml")
    [round_] = episode.rounds
    [call] = round_.reply.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "call_P9Ayqu3UQNYuTBVAg2sLimh9",
        "get_current_weather",
        '{"location":"San Francisco"}',
    )
    assert round_.reply.finish_reason == "tool_calls" and round_.tools_offered
    assert episode.stop_reason == "max_rounds" and episode.error is None
    assert episode.question == "What's the weather like in San Francisco?"


def test_azure_content_filter_without_a_message_is_filtered_not_an_error() -> None:
    """Azure OpenAI withholds a filtered completion: its choice has finish_reason
    content_filter and no message. The episode stops as filtered, its usage kept; the same
    request again (not a continuation) is a second episode."""
    filtered, answered = episodes_from_cassette(FOREIGN / "openllmetry-azure-content-filter.yaml")
    assert (filtered.stop_reason, filtered.answer, filtered.error) == ("filtered", "", None)
    assert (filtered.usage.prompt_tokens, filtered.usage.completion_tokens) == (15, 19)
    assert filtered.rounds[0].reply.finish_reason == "content_filter"
    assert answered.stop_reason == "converged"
    assert answered.answer.startswith("Why did the developer break up with OpenTelemetry?")


@pytest.mark.parametrize(
    ("choice", "problem"),
    [
        ({"index": 0, "finish_reason": "content_filter", "message": None}, None),
        ({"index": 0, "finish_reason": "stop"}, "choices.0.message: Field required"),
        ({"index": 0, "finish_reason": "stop", "message": None}, "choices.0.message is null"),
    ],
)
def test_a_missing_message_is_only_forgiven_when_a_filter_withheld_it(
    choice: dict[str, Any], problem: str | None
) -> None:
    body = json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]})
    request = httpx.Request("POST", "https://x/v1/chat/completions", content=b"{}")
    response = httpx.Response(200, content=body.encode(), request=request)
    if problem is None:
        reply = parse_chat_reply(response)
        assert (reply.content, reply.tool_calls, reply.finish_reason) == (
            None,
            (),
            "content_filter",
        )
    else:
        with pytest.raises(ModelReplyError, match=problem):
            parse_chat_reply(response)


def test_a_conversation_without_a_user_message_has_an_empty_question() -> None:
    [episode] = episodes_from_cassette(FOREIGN / "openllmetry-tool-history.yaml")
    assert episode.question == ""  # not "null"
    assert episode.answer == "The weather in San Francisco is 70 degrees and sunny."
    assert (episode.stop_reason, len(episode.rounds)) == ("converged", 1)
    assert [m["role"] for m in episode.transcript] == ["assistant", "tool", "assistant"]


def test_a_question_given_as_content_parts_is_their_text() -> None:
    user = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "what's "}, {"type": "text", "text": "my ip?"}],
        }
    ]
    body = json.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "104.186.12.123"},
                }
            ]
        }
    )
    exchange = _exchange(user, body, stream=False)
    exchange["response"]["headers"] = {"Content-Type": ["application/json"]}
    [wire] = read_wire_episodes([exchange])
    assert wire.episode.question == "what's my ip?"


#: The legacy function-calling loop of a liteLLM demo notebook ("Demo Notebook of Function
#: Calling with liteLLM", exported to markdown; the search index does not name its
#: repository): gpt-3.5-turbo-0613's two replies as printed, the second request's messages as
#: the notebook sent them (the function's printed result, "12F", as its content).
LEGACY_USER = [{"role": "user", "content": "What is the weather like in Boston?"}]
LEGACY_FUNCTIONS = [
    {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "The city and state, e.g. San Francisco, CA",
                },
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    }
]
LEGACY_REPLY_1 = {
    "id": "chatcmpl-7mX4RiqdoislVEqfmfVjFSKp3hyIy",
    "object": "chat.completion",
    "created": 1691801223,
    "model": "gpt-3.5-turbo-0613",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "function_call": {
                    "name": "get_current_weather",
                    "arguments": '{\n  "location": "Boston, MA"\n}',
                },
            },
            "finish_reason": "function_call",
        }
    ],
    "usage": {"prompt_tokens": 82, "completion_tokens": 18, "total_tokens": 100},
}
LEGACY_SENT_BACK = [
    {
        "role": "assistant",
        "content": None,
        "function_call": {
            "name": "get_current_weather",
            "arguments": '{ "location": "Boston, MA"}',
        },
    },
    {"role": "function", "name": "get_current_weather", "content": "12F"},
]
LEGACY_REPLY_2 = {
    "id": "chatcmpl-7mXGN62u75WXp1Lgen4iSgNvA7hHT",
    "object": "chat.completion",
    "created": 1691801963,
    "model": "gpt-3.5-turbo-0613",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "The current weather in Boston is 12 degrees Fahrenheit.",
            },
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 109, "completion_tokens": 12, "total_tokens": 121},
}


def _legacy(messages: list[Any], reply: dict[str, Any]) -> dict[str, Any]:
    body = {"model": "gpt-3.5-turbo-0613", "messages": messages, "functions": LEGACY_FUNCTIONS}
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": json.dumps(body),
        },
        "response": {
            "status": {"code": 200},
            "headers": {"Content-Type": ["application/json"]},
            "body": {"string": json.dumps(reply)},
        },
    }


def test_a_legacy_function_call_is_answered_by_its_function_message() -> None:
    [wire] = read_wire_episodes(
        [
            _legacy(LEGACY_USER, LEGACY_REPLY_1),
            _legacy([*LEGACY_USER, *LEGACY_SENT_BACK], LEGACY_REPLY_2),
        ]
    )
    episode = wire.episode
    first, second = episode.rounds
    assert (second.reply.tool_calls, second.results) == ((), ())
    [call] = first.reply.tool_calls
    assert (call.name, json.loads(call.arguments)) == (
        "get_current_weather",
        {"location": "Boston, MA"},
    )
    assert first.reply.finish_reason == "function_call" and first.tools_offered
    [result] = first.results
    assert (result.call, result.content, result.error) == (call, "12F", None)
    assert episode.answer == "The current weather in Boston is 12 degrees Fahrenheit."
    assert (episode.stop_reason, episode.pending_tool_calls) == ("converged", ())
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (191, 30)
    [r] = check_expectations(episode, [{"tool_called": "get_current_weather"}])
    assert r.passed, r.explanation


def test_an_earlier_rounds_function_message_does_not_answer_a_later_call() -> None:
    """Two rounds calling the same function: each call is answered by the function message
    sent after it, not by the first one still in the history."""
    second_call = {
        "role": "assistant",
        "content": None,
        "function_call": {
            "name": "get_current_weather",
            "arguments": '{"location": "Boston, MA", "unit": "celsius"}',
        },
    }
    reply = json.loads(json.dumps(LEGACY_REPLY_1))
    reply["choices"][0]["message"] = second_call
    history = [*LEGACY_USER, *LEGACY_SENT_BACK]
    later = [
        *history,
        second_call,
        {"role": "function", "name": "get_current_weather", "content": "-11C"},
    ]
    [wire] = read_wire_episodes(
        [
            _legacy(LEGACY_USER, LEGACY_REPLY_1),
            _legacy(history, reply),
            _legacy(later, LEGACY_REPLY_2),
        ]
    )
    assert [[x.content for x in r.results] for r in wire.episode.rounds] == [["12F"], ["-11C"], []]
