"""Reasoning fields and tool calls without arguments, through the real openai SDK over
``httpx.MockTransport``: kept in the reply, sent back in the assistant message under the name
the provider used (only when it sent one), shown collapsed in the report.

The reply bodies are real ones, from pydantic-ai's recorded cassettes (each test names its
file, under https://github.com/pydantic/pydantic-ai/tree/main/tests/models/cassettes/);
long values are shortened, ids and texts are kept.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from bs4 import BeautifulSoup

from toolreplay.hosts import run_loop, run_single
from toolreplay.models.base import ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.report.render import render_report
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import Episode, ModelReply, ToolCall, reasoning_text
from toolreplay.wire.replies import parse_chat_reply

BASE_URL = "http://model.test/v1"
REPO = Path(__file__).resolve().parents[1]

# test_deepseek/test_deepseek_deferred_capability_with_thinking.yaml, first response
# (deepseek-reasoner answering through deepseek-v4-flash)
DEEPSEEK_REASONING = (
    "The user wants to play a dice game. I need to roll a die and compare it to the user's "
    "guess of 4. But the DICE_ROLL capability is deferred - I need to load it first using the "
    "`load_capability` tool.\n\nLet me load the capability first."
)
DEEPSEEK_TOOL_CALL = {
    "choices": [{
        "finish_reason": "tool_calls", "index": 0, "logprobs": None,
        "message": {
            "content": "Let me load the dice rolling capability!",
            "reasoning_content": DEEPSEEK_REASONING,
            "role": "assistant",
            "tool_calls": [{
                "function": {"arguments": '{"id": "DICE_ROLL"}', "name": "load_capability"},
                "id": "call_00_sXqYgMESDht75NCLLZtt9804", "index": 0, "type": "function",
            }],
        },
    }],
    "created": 1781082253,
    "id": "0841b0a3-0321-47fa-a8a5-f08e5a4b3cb3",
    "model": "deepseek-v4-flash",
    "object": "chat.completion",
    "system_fingerprint": "fp_8b330d02d0_prod0820_fp8_kvcache_20260402",
    "usage": {"completion_tokens": 116, "completion_tokens_details": {"reasoning_tokens": 60},
              "prompt_cache_hit_tokens": 512, "prompt_cache_miss_tokens": 51,
              "prompt_tokens": 563, "prompt_tokens_details": {"cached_tokens": 512},
              "total_tokens": 679},
}  # fmt: skip
# the same file, third response (the final answer)
DEEPSEEK_ANSWER = {
    "choices": [{
        "finish_reason": "stop", "index": 0, "logprobs": None,
        "message": {
            "content": "\U0001f389 **Congratulations, Anne!** You're a winner! \U0001f389\n\nThe "
                       "die rolled exactly **4** -- matching your guess perfectly! Lucky you! "
                       "\U0001f3b2",
            "reasoning_content": "The player's name is Anne, and the die rolled a 4. The user "
                                 "guessed 4, so they win!",
            "role": "assistant",
        },
    }],
    "created": 1781082258, "id": "7f1f7abf-dc61-4260-9d2a-d1dd7f475127",
    "model": "deepseek-v4-flash", "object": "chat.completion",
}  # fmt: skip
# DeepSeek's answer when an assistant message of thinking mode comes back without it
DEEPSEEK_REFUSAL = {
    "error": {
        "message": "The reasoning_content in the thinking mode must be passed back to the API.",
        "type": "invalid_request_error", "param": None, "code": "invalid_request_error",
    }
}  # fmt: skip

# test_groq/test_groq_native_with_tools_falls_back_gpt_oss.yaml, second response
GROQ_REASONING = (
    "The user says there's a validation error expecting JSON. Probably the system expects a "
    "function call to final_result with JSON output. We need to respond using the "
    "final_result function, providing city and country. The question: \"What is the capital "
    "of France?\" The answer: city = \"Paris\", country = \"France\". Use the function "
    "final_result."
)
GROQ_TOOL_CALL = {
    "choices": [{
        "finish_reason": "tool_calls", "index": 0, "logprobs": None,
        "message": {
            "reasoning": GROQ_REASONING,
            "role": "assistant",
            "tool_calls": [{
                "function": {"arguments": '{"city":"Paris","country":"France"}',
                             "name": "final_result"},
                "id": "fc_3b660a12-1bb6-48d9-b318-07f6d4a64bfb", "type": "function",
            }],
        },
    }],
    "created": 1771291560, "id": "chatcmpl-10de341a-7f97-4601-8254-96158e69442a",
    "model": "openai/gpt-oss-120b", "object": "chat.completion", "service_tier": "on_demand",
    "system_fingerprint": "fp_0708ac49a5",
    "usage": {"completion_tokens": 104, "completion_tokens_details": {"reasoning_tokens": 70},
              "prompt_tokens": 245, "total_tokens": 349},
    "usage_breakdown": None,
    "x_groq": {"id": "req_01khmk8j0fe66v2tfv1qz1rgx1", "seed": 503100258},
}  # fmt: skip

# test_openrouter/test_openrouter_thinking_true_enables_reasoning_on_optional_route.yaml
OPENROUTER_TEXT = (
    'The user wants me to reply with exactly one word: "ok".\n\n    *   Instruction: "Reply '
    'with the single word: ok"\n    *   Target output: "ok"\nThe request is simple and '
    "unambiguous. I should comply exactly as requested."
)
OPENROUTER_DETAILS_ANSWER = {
    "choices": [{
        "finish_reason": "stop", "index": 0, "logprobs": None,
        "message": {
            "content": "ok",
            "reasoning": OPENROUTER_TEXT,
            "reasoning_details": [{"format": "unknown", "index": 0, "text": OPENROUTER_TEXT,
                                   "type": "reasoning.text"}],
            "refusal": None,
            "role": "assistant",
        },
        "native_finish_reason": "stop",
    }],
    "created": 1779474931, "id": "gen-1779474931-w20BCAngQY7SOa9Zs5L4",
    "model": "google/gemma-4-26b-a4b-it-20260403", "object": "chat.completion",
    "provider": "Cloudflare", "system_fingerprint": None,
    "usage": {"completion_tokens": 60, "prompt_tokens": 23, "total_tokens": 83},
}  # fmt: skip

# test_openrouter/test_openrouter_preserve_reasoning_block.yaml, first response: the two
# reasoning_details items (a summary and an encrypted block, its data shortened) ...
OPENROUTER_DETAILS = [
    {"format": "openai-responses-v1", "index": 0, "type": "reasoning.summary",
     "summary": "**Greeting warmly**\n\nThe user just said \"Hello!\" and hasn't given more "
                "instructions. I want to respond in a friendly way, keeping it concise."},
    {"data": "gAAAAABpgLmIevBdEjwSgfwNCSDor4xxeo4l4nA7Tw_0rbQU6mkoNJ6Uev1wnYGtuIN4tTScoQ",
     "format": "openai-responses-v1", "id": "rs_0057196777a5a08c016980b98417e88194bc1390b670e8c4ba",
     "index": 0, "type": "reasoning.encrypted"},
]  # fmt: skip

# test_openrouter/test_openrouter_tool_calling.yaml: a tool call with "reasoning": null
OPENROUTER_NULL_REASONING = {
    "choices": [{
        "finish_reason": "tool_calls", "index": 0, "logprobs": None,
        "message": {
            "content": "", "reasoning": None, "refusal": None, "role": "assistant",
            "tool_calls": [{
                "function": {"arguments": '{"numerator": 123, "denominator": 456, '
                                          '"on_inf": "infinity"}', "name": "divide"},
                "id": "3sniiMddS", "index": 0, "type": "function",
            }],
        },
        "native_finish_reason": "tool_calls",
    }],
    "created": 1762047030, "id": "gen-1762047030-dJUcJW4ildNGqK4UV6iJ",
    "model": "mistralai/mistral-small", "object": "chat.completion", "provider": "Mistral",
    "usage": {"completion_tokens": 43, "prompt_tokens": 134, "total_tokens": 177},
}  # fmt: skip


def schema(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


TOOLSET = Toolset(
    "reasoning",
    (
        schema("load_capability", {"id": {"type": "string"}}),
        schema("final_result", {"city": {"type": "string"}, "country": {"type": "string"}}),
        schema("divide", {"numerator": {"type": "number"}, "denominator": {"type": "number"},
                          "on_inf": {"type": "string"}}),
        schema("get_time", {}),
    ),
    {
        "load_capability": lambda id: {},
        "final_result": lambda city, country: {"city": city, "country": country},
        "divide": lambda numerator, denominator, on_inf: numerator / denominator,
        "get_time": lambda: {"time": "12:00"},
    },
)  # fmt: skip
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "My guess is 4"}]


def answer(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
    }  # fmt: skip


def run(replies: list[Any], host=run_loop, check=None) -> tuple[Episode, list[dict]]:
    """One episode served ``replies`` in order (a dict is a 200 JSON body); ``check(body)``
    may return a ``(status, body)`` that refuses a request, as a provider would. Returns the
    episode and every request body sent."""
    sent: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append(body)
        refused = check(body) if check else None
        if refused is not None:
            return httpx.Response(refused[0], json=refused[1])
        return httpx.Response(200, json=replies[len(sent) - 1])

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        model = OpenAIChatModel(ModelSettings(BASE_URL, "deepseek-reasoner", None), http)
        episode = host(model, TOOLSET, MESSAGES)
    return episode, sent


def deepseek_thinking_mode(body: dict) -> tuple[int, dict] | None:
    """DeepSeek's rule for thinking mode with tools: an assistant message that made tool
    calls comes back with its ``reasoning_content``, or the request is refused (HTTP 400)."""
    for msg in body["messages"]:
        if msg["role"] == "assistant" and msg.get("tool_calls") and "reasoning_content" not in msg:
            return 400, DEEPSEEK_REFUSAL
    return None


def test_deepseek_refuses_a_tool_call_turn_sent_back_without_its_reasoning():
    """The double is faithful: the assistant message as it was sent before reasoning fields
    were kept gets DeepSeek's refusal."""
    without = dict(DEEPSEEK_TOOL_CALL["choices"][0]["message"])
    del without["reasoning_content"]
    refused = deepseek_thinking_mode({"messages": [without]})
    assert refused is not None and "must be passed back" in refused[1]["error"]["message"]


@pytest.mark.parametrize("host", [run_loop, run_single], ids=["loop", "single"])
def test_deepseek_reasoning_round_trip(host):
    episode, sent = run([DEEPSEEK_TOOL_CALL, DEEPSEEK_ANSWER], host, deepseek_thinking_mode)
    assert episode.stop_reason == "converged", episode.error
    assert len(sent) == 2
    assistant = sent[1]["messages"][2]
    assert assistant == {
        "role": "assistant",
        "content": "Let me load the dice rolling capability!",
        "reasoning_content": DEEPSEEK_REASONING,
        "tool_calls": [
            {
                "id": "call_00_sXqYgMESDht75NCLLZtt9804",
                "type": "function",
                "function": {"name": "load_capability", "arguments": '{"id": "DICE_ROLL"}'},
            }
        ],
    }
    first, final = (r.reply for r in episode.rounds)
    assert first.reasoning == {"reasoning_content": DEEPSEEK_REASONING}
    assert first.reasoning_text == DEEPSEEK_REASONING
    assert episode.answer.startswith("\U0001f389 **Congratulations, Anne!**")
    reasoning = DEEPSEEK_ANSWER["choices"][0]["message"]["reasoning_content"]
    assert final.reasoning == {"reasoning_content": reasoning}
    assert episode.transcript[2] == assistant  # the transcript holds what was sent
    assert episode.transcript[-1]["reasoning_content"] == reasoning


def test_groq_reasoning_is_sent_back_as_reasoning():
    episode, sent = run([GROQ_TOOL_CALL, answer("Paris, France")])
    assert episode.stop_reason == "converged", episode.error
    assistant = sent[1]["messages"][2]
    assert assistant["reasoning"] == GROQ_REASONING
    assert "reasoning_content" not in assistant and "reasoning_details" not in assistant
    assert list(assistant) == ["role", "content", "reasoning", "tool_calls"]
    assert assistant["content"] is None
    assert episode.rounds[0].results[0].content == '{"city": "Paris", "country": "France"}'


def test_openrouter_reasoning_details_are_sent_back_as_sent():
    """A tool-call reply carrying ``reasoning_details`` (the items of
    test_openrouter_preserve_reasoning_block.yaml); the final reply is the real one of
    test_openrouter_thinking_true_enables_reasoning_on_optional_route.yaml."""
    call = copy.deepcopy(OPENROUTER_NULL_REASONING)
    message = call["choices"][0]["message"]
    message["reasoning"] = OPENROUTER_DETAILS[0]["summary"]
    message["reasoning_details"] = OPENROUTER_DETAILS
    episode, sent = run([call, OPENROUTER_DETAILS_ANSWER])
    assert episode.stop_reason == "converged", episode.error
    assistant = sent[1]["messages"][2]
    assert assistant["reasoning"] == OPENROUTER_DETAILS[0]["summary"]
    assert assistant["reasoning_details"] == OPENROUTER_DETAILS  # each item as sent
    assert "refusal" not in assistant  # null: not sent back
    final = episode.transcript[-1]
    assert final == {
        "role": "assistant",
        "content": "ok",
        "reasoning": OPENROUTER_TEXT,
        "reasoning_details": OPENROUTER_DETAILS_ANSWER["choices"][0]["message"][
            "reasoning_details"
        ],
    }
    assert episode.answer == "ok"


def test_reasoning_details_read_as_text():
    assert reasoning_text({"reasoning_details": OPENROUTER_DETAILS}) == (
        OPENROUTER_DETAILS[0]["summary"] + "\n\n(encrypted reasoning, not readable)"
    )
    assert reasoning_text({"reasoning_details": [{"type": "reasoning.text", "text": "t"}]}) == "t"
    assert reasoning_text({"reasoning": None, "reasoning_details": []}) is None
    assert reasoning_text({"role": "assistant", "content": "x"}) is None


def test_null_reasoning_is_not_sent_back():
    """OpenRouter's ``"reasoning": null`` (a model that does not reason): the assistant
    message is the one sent without reasoning fields."""
    episode, sent = run([OPENROUTER_NULL_REASONING, answer("0.27")])
    assert episode.stop_reason == "converged", episode.error
    assistant = sent[1]["messages"][2]
    assert list(assistant) == ["role", "content", "tool_calls"]
    assert episode.rounds[0].reply.reasoning == {}


@pytest.mark.parametrize(
    "function", [{"name": "get_time"}, {"name": "get_time", "arguments": None}],
    ids=["missing", "null"],
)  # fmt: skip
def test_tool_call_without_arguments_is_sent_back_as_an_empty_object(function):
    """OpenRouter leaves ``function.arguments`` out for a tool without parameters: the call
    runs with no arguments and is sent back with ``"{}"``, which is JSON (``""`` is not)."""
    reply = copy.deepcopy(OPENROUTER_NULL_REASONING)
    reply["choices"][0]["message"]["tool_calls"][0]["function"] = function
    episode, sent = run([reply, answer("It is noon.")])
    assert episode.stop_reason == "converged", episode.error
    assistant, tool = sent[1]["messages"][2:4]
    assert assistant["tool_calls"][0]["function"] == {"name": "get_time", "arguments": "{}"}
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {}
    assert tool == {"role": "tool", "tool_call_id": "3sniiMddS", "content": '{"time": "12:00"}'}


def test_reply_without_reasoning_gives_the_message_it_always_gave():
    reply = ModelReply(None, (ToolCall("c", "f", "{}"),), "tool_calls")
    assert reply.reasoning == {} and reply.reasoning_text is None
    assert list(reply.to_message()) == ["role", "content", "tool_calls"]
    parsed = parse_chat_reply(
        httpx.Response(
            200,
            json=answer("hi"),
            request=httpx.Request("POST", f"{BASE_URL}/chat/completions"),
        )
    )
    assert parsed.to_message() == {"role": "assistant", "content": "hi"}


# --------------------------------------------------------------------------- the report


@pytest.mark.slow
def test_report_shows_reasoning_collapsed_only_where_there_is_some():
    results = json.loads((REPO / "reports" / "results.json").read_text(encoding="utf-8"))
    plain = BeautifulSoup(render_report(results), "html5lib")
    assert plain.select("details.reasoning") == []
    results = copy.deepcopy(results)
    ep = results["episodes"][0]
    at = next(i for i, m in enumerate(ep["transcript"]) if m["role"] == "assistant")
    ep["transcript"][at]["reasoning_content"] = DEEPSEEK_REASONING
    page = BeautifulSoup(render_report(results), "html5lib")
    blocks = page.select("details.reasoning")
    assert len(blocks) == 1
    block = blocks[0]
    assert not block.has_attr("open")  # collapsed
    assert "reasoning_content" in block.summary.get_text()
    assert block.select_one("pre").get_text() == DEEPSEEK_REASONING
    message = block.find_parent("div", class_="msg")
    assert message is not None and "role-assistant" in message["class"]
