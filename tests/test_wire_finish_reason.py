"""A reply that names no finish reason is never read as a normal stop.

Before, every reader filled an absent ``finish_reason`` (Chat Completions), ``stop_reason``
(Anthropic), ``finishReason`` (Gemini), ``stopReason`` (Bedrock) or ``status`` (Responses)
with ``stop``, so an episode ending on such a reply read ``converged``: a reply an
OpenAI-compatible server cut off without saying so counted as the model's own answer. Now the
reply's finish reason is ``unknown`` and the episode's stop reason ``unknown`` where it would
be ``converged``. The readers' inputs are real cassettes of pydantic-ai's tests with the
finish reason of the last reply taken out.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.hosts import run_loop, run_single
from toolreplay.judging.failures import classify
from toolreplay.models.scripted import ScriptedModel
from toolreplay.report.summary import stop_view
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import NO_FINISH_REASON, STOP_REASONS, ModelReply, Usage
from toolreplay.wire.reader import read_wire_episodes

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"


def _load(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))
    return list(data["interactions"])


def _reply_of(interaction: dict[str, Any]) -> dict[str, Any]:
    """The parsed reply body of an interaction, in either serializer's place."""
    response = interaction["response"]
    if "parsed_body" in response:
        return response["parsed_body"]
    body = response["body"]
    if isinstance(body, dict) and "parsed_body" in body:
        return body["parsed_body"]
    raise AssertionError("no parsed reply body")


def _drop_chat(reply: dict[str, Any]) -> None:
    reply["choices"][0]["finish_reason"] = None


def _drop_anthropic(reply: dict[str, Any]) -> None:
    reply["stop_reason"] = None


def _drop_gemini(reply: dict[str, Any]) -> None:
    del reply["candidates"][0]["finishReason"]


def _drop_bedrock(reply: dict[str, Any]) -> None:
    del reply["stopReason"]


def _drop_responses(reply: dict[str, Any]) -> None:
    del reply["status"]


#: cassette → how its last reply loses its finish reason
CASES = {
    "pydantic-ai-openai-tool-call.yaml": _drop_chat,
    "pydantic-ai-anthropic-tool-call.yaml": _drop_anthropic,
    "pydantic-ai-gemini-generate.yaml": _drop_gemini,
    "pydantic-ai-bedrock-retry.yaml": _drop_bedrock,
    "pydantic-ai-responses-chain.yaml": _drop_responses,
}


def _last_without_finish(name: str) -> list[dict[str, Any]]:
    interactions = copy.deepcopy(_load(name))
    last = interactions[-1]
    response = last["response"]
    if "parsed_body" not in response and isinstance(response.get("body"), dict) and (
        "string" in response["body"]
    ):  # a vcrpy body as text: parse, change, store back
        import json

        reply = json.loads(response["body"]["string"])
        CASES[name](reply)
        response["body"]["string"] = json.dumps(reply)
    else:
        CASES[name](_reply_of(last))
    return interactions


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_last_reply_without_finish_reason_is_no_convergence(name):
    (before,) = [w for w in read_wire_episodes(_load(name))][-1:]
    assert before.episode.stop_reason == "converged"
    (after,) = read_wire_episodes(_last_without_finish(name))[-1:]
    episode = after.episode
    assert episode.rounds[-1].reply.finish_reason == NO_FINISH_REASON
    assert episode.stop_reason == "unknown"
    # the rest of the episode reads as before
    assert episode.answer == before.episode.answer and episode.error is None
    assert episode.tool_chain == before.episode.tool_chain


def _stream_without_finish(interactions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(interactions)
    body = out[-1]["response"]["body"]
    assert body["string"].count('"finish_reason":"stop"') == 1
    body["string"] = body["string"].replace('"finish_reason":"stop"', '"finish_reason":null')
    return out


def test_a_stream_ending_in_done_without_a_finish_reason_is_unknown():
    """Some OpenAI-compatible servers end a stream with ``data: [DONE]`` and never send a
    finish reason: the reply is read, its stop is not told."""
    recorded = _load("pydantic-ai-openai-stream.yaml")
    (wire,) = read_wire_episodes(_stream_without_finish(recorded))
    assert wire.episode.answer == "The capital of the UK is London."
    assert wire.episode.rounds[-1].reply.finish_reason == NO_FINISH_REASON
    assert wire.episode.stop_reason == "unknown"


def test_a_stream_cut_before_its_last_chunk_was_already_an_error():
    """Already handled before this change (evidence): a stream that ends without
    ``[DONE]`` and before any finish reason is a reply cut off, the episode ``error``."""
    recorded = copy.deepcopy(_load("pydantic-ai-openai-stream.yaml"))
    body = recorded[-1]["response"]["body"]
    events = [e for e in body["string"].split("\n\n") if e.strip()]
    kept = [e for e in events if '"finish_reason":"stop"' not in e and "[DONE]" not in e]
    body["string"] = "\n\n".join(kept) + "\n\n"
    (wire,) = read_wire_episodes(recorded)
    assert wire.episode.stop_reason == "error"
    assert "cut off" in (wire.episode.error or "")


def test_the_transcript_and_failure_modes_say_unknown():
    assert "unknown" in STOP_REASONS
    view = stop_view("my_tests", "unknown")
    assert view["reason"] == "unknown" and "no finish reason" in view["title"]
    interactions = _last_without_finish("pydantic-ai-openai-tool-call.yaml")
    reply = _reply_of(interactions[-1])
    reply["choices"][0]["message"]["content"] = None  # an empty reply, its end not named
    (wire,) = read_wire_episodes(interactions)
    assert wire.episode.stop_reason == "unknown"
    (mode,) = classify(wire.episode)
    assert mode.mode == "empty_answer"
    assert "named no finish reason" in mode.explanation and "cut off" in mode.explanation


SCHEMA = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}


def test_the_hosts_do_not_call_an_unnamed_stop_converged():
    toolset = Toolset("echo", (SCHEMA,), {"echo": lambda: {"ok": True}})
    messages = [{"role": "user", "content": "q"}]
    unnamed = ModelReply("An answer.", (), NO_FINISH_REASON, Usage(1, 1))
    named = ModelReply("An answer.", (), "stop", Usage(1, 1))
    for run in (run_loop, run_single):
        assert run(ScriptedModel([unnamed]), toolset, messages).stop_reason == "unknown"
        assert run(ScriptedModel([named]), toolset, messages).stop_reason == "converged"


@pytest.mark.parametrize("finish", [None, "", "absent"])
def test_an_in_process_reply_without_finish_reason_reads_unknown_as_over_http(finish):
    from toolreplay.models.inprocess import reply_from_completion

    choice: dict = {"index": 0, "message": {"role": "assistant", "content": "Sunny."}}
    if finish != "absent":
        choice["finish_reason"] = finish
    assert reply_from_completion({"choices": [choice]}).finish_reason == "unknown"
    choice["finish_reason"] = "length"
    assert reply_from_completion({"choices": [choice]}).finish_reason == "length"
