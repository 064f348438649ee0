"""Episodes read from the wire (cassettes alone) equal the episodes the hosts produced."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.cassettes.manifest import cassette_path
from toolreplay.cassettes.store import load_cassette
from toolreplay.wire.episode import Episode
from toolreplay.wire.interactions import WireEpisodeError
from toolreplay.wire.reader import (
    episode_from_interactions,
    episodes_from_interactions,
    read_wire_episodes,
)

from .conftest import REFERENCE


def _comparable(episode: Episode) -> Episode:
    return replace(episode, configuration="", question_id="", wall_time_s=0.0)


def test_every_reference_episode_reads_the_same_from_the_wire(reference_episodes):
    assert len(reference_episodes) == 16
    for (config, question), hosted in reference_episodes.items():
        wired = episode_from_cassette(cassette_path(REFERENCE, config, question))
        assert _comparable(wired) == _comparable(hosted), (config, question)
        assert wired.rounds == hosted.rounds
        assert wired.stop_reason == hosted.stop_reason
        assert wired.tool_chain == hosted.tool_chain
        assert wired.answer == hosted.answer


def test_tool_traffic_is_attached_to_the_round_it_followed():
    path = cassette_path(REFERENCE, "loop+atomic", "hottest")
    (wire,) = read_wire_episodes(load_cassette(path))
    assert [len(r.traffic) for r in wire.rounds] == [3, 3, 0]
    assert {x.path for x in wire.tool_traffic} == {"/v1/search", "/v1/forecast"}
    assert not wire.episode.streamed


def test_no_model_request_is_a_clear_error():
    interactions = [
        {
            "request": {"method": "GET", "uri": "http://x/v1/search?name=a", "body": None},
            "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "{}"}},
        }
    ]
    with pytest.raises(WireEpisodeError, match="no model request of a protocol read here"):
        episodes_from_interactions(interactions)


FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"


def test_a_streamed_pydantic_ai_run_reads_as_an_episode():
    (wire,) = read_wire_episodes(_yaml(FOREIGN / "pydantic-ai-openai-stream.yaml"))
    episode = wire.episode
    assert wire.episode.streamed and not wire.episode.faults
    assert [len(r.results) for r in episode.rounds] == [1, 0]
    (call,) = episode.tool_calls
    assert (call.id, call.name, call.parsed_arguments()) == (
        "call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"},
    )  # fmt: skip
    assert episode.rounds[0].results[0].content == "London"
    assert episode.answer == "The capital of the UK is London."
    assert episode.stop_reason == "converged" and episode.error is None
    assert episode.usage.to_dict() == {
        "prompt_tokens": 53 + 78, "completion_tokens": 15 + 9, "total_tokens": 155,
    }  # fmt: skip
    assert [r.reply.finish_reason for r in episode.rounds] == ["tool_calls", "stop"]
    assert episode.question == "What is the capital of the UK? Use the tool, then answer."
    assert [m["role"] for m in episode.transcript] == ["user", "assistant", "tool", "assistant"]


def test_the_same_run_unstreamed_reads_the_same_way():
    episode = episode_from_cassette(FOREIGN / "pydantic-ai-openai-tool-call.yaml")
    assert [c.name for c in episode.tool_calls] == ["get_temperature"]
    assert episode.rounds[0].results[0].content == "20.0"
    assert episode.answer == "The temperature in Tokyo is currently 20.0 degrees Celsius."
    assert (len(episode.rounds), episode.stop_reason) == (2, "converged")
    assert episode.usage.prompt_tokens == 50 + 75


def test_a_reply_the_framework_recovered_from_is_a_fault_not_the_outcome():
    # Groq ended reply 1 with `event: error` (tool_use_failed); pydantic-ai sent a retry.
    (wire,) = read_wire_episodes(_yaml(FOREIGN / "pydantic-ai-groq-error-event.yaml"))
    (fault,) = wire.episode.faults
    assert fault.startswith("request 1 (interaction 1): ") and "error event" in fault
    episode = wire.episode
    assert [r.index for r in episode.rounds] == [2, 3] and episode.error is None
    (call,) = episode.tool_calls
    assert (call.name, call.parsed_arguments()) == ("get_something_by_name", {"name": "example"})
    assert episode.rounds[0].results[0].content == "Something with name: example"
    assert episode.answer == "The tool returned the expected result for the valid call."
    assert episode.rounds[0].reply.reasoning["reasoning"].startswith("We need")


def test_a_cut_off_last_reply_is_the_episodes_error():
    """The last reply ends before its finish reason, without [DONE] (its last three events,
    the finishing chunk, the usage chunk and [DONE], dropped)."""
    interactions = _yaml(FOREIGN / "pydantic-ai-openai-stream.yaml")
    body = interactions[1]["response"]["body"]
    events = body["string"].split("\n\n")
    assert events[-2] == "data: [DONE]" and '"finish_reason":"stop"' in events[-4]
    body["string"] = "\n\n".join(events[:-4]) + "\n\n"
    episode = episodes_from_interactions(interactions)[0]
    assert episode.stop_reason == "error" and episode.answer == ""
    assert "cut off" in (episode.error or "") and len(episode.rounds) == 1


def test_unrelated_conversations_are_separate_episodes():
    first = _yaml(FOREIGN / "pydantic-ai-openai-tool-call.yaml")
    second = _yaml(FOREIGN / "pydantic-ai-openai-stream.yaml")
    episodes = episodes_from_interactions(first + second)
    assert [e.answer for e in episodes] == [
        "The temperature in Tokyo is currently 20.0 degrees Celsius.",
        "The capital of the UK is London.",
    ]
    with pytest.raises(WireEpisodeError, match="2 episodes"):
        episode_from_interactions(first + second)


def test_the_streamed_reference_set_reads_like_the_hosts_episodes(reference_episodes):
    stream_set = REFERENCE.parent / "reference-stream"
    for (config, question), hosted in reference_episodes.items():
        (wire,) = read_wire_episodes(load_cassette(cassette_path(stream_set, config, question)))
        assert wire.episode.streamed
        assert _comparable(wire.episode) == _comparable(hosted), (config, question)


def _yaml(path: Path) -> list[dict]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(data["interactions"])


def test_a_vcrpy_cassette_with_compressed_bodies_reads_the_same():
    import gzip

    interactions = _yaml(FOREIGN / "pydantic-ai-openai-tool-call.yaml")
    plain = episode_from_interactions(interactions)
    for item in interactions:  # as vcrpy stores them without decode_compressed_response
        request, response = item["request"], item["response"]
        request["body"] = json.dumps(request.pop("parsed_body"))
        raw = json.dumps(response.pop("parsed_body")).encode()
        response["body"] = {"string": gzip.compress(raw)}
        response["headers"]["content-encoding"] = ["gzip"]
    assert episode_from_interactions(interactions) == plain


@pytest.mark.slow
@pytest.mark.parametrize(
    ("eval_name", "set_name"),
    [("weather-hard.yaml", "hard"), ("llama-gemma3-270m.yaml", "llama-gemma3-270m")],
)
def test_every_committed_set_reads_the_same_from_the_wire(eval_name, set_name):
    """The hard set (tool errors for unknown places) and the llama set (HTTP 500 replies,
    worded as the model client words them) too."""
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import study_configurations
    from toolreplay.runs.replay import replay_set

    root = REFERENCE.parent.parent
    suite = load_eval(root / "evals" / eval_name)
    set_dir = REFERENCE.parent / set_name
    hosted = replay_set(set_dir, suite, study_configurations(suite))
    assert any(e.stop_reason == "error" for e in hosted) == (set_name != "hard")
    assert any(r.error for e in hosted for rnd in e.rounds for r in rnd.results) == (
        set_name == "hard"
    )
    for episode in hosted:
        path = cassette_path(set_dir, episode.configuration, episode.question_id)
        assert _comparable(episode_from_cassette(path)) == _comparable(episode), path


def test_an_llm_tool_chain_from_a_plain_vcrpy_cassette():
    # simonw/llm: request bodies as text, replies gzip-compressed as !!binary.
    episode = episode_from_cassette(FOREIGN / "llm-tool-chain.yaml")
    assert [(c.name, c.parsed_arguments()) for c in episode.tool_calls] == [
        ("lookup_population", {"country": "Crumpet"}),
        ("can_have_dragons", {"population": 123124}),
    ]
    assert [r.content for rnd in episode.rounds for r in rnd.results] == ["123124", "true"]
    assert (episode.answer, episode.stop_reason, len(episode.rounds)) == ("YES", "converged", 3)


def test_a_provider_repeating_id_and_name_on_every_chunk_is_not_doubled():
    # Kimi K2 on Novita (through OpenRouter), recorded by simonw/llm: every tool-call chunk
    # repeats "id": "0" and the name; the openai SDK's accumulation would make "00" and
    # "llm_versionllm_version" of them.
    (wire,) = read_wire_episodes(_yaml(FOREIGN / "llm-tools-streaming.yaml"))
    assert wire.episode.streamed
    (call,) = wire.episode.tool_calls
    assert (call.id, call.name, call.arguments) == ("0", "llm_version", "{}")
    assert wire.episode.rounds[0].results[0].content == "0.fixed-version"
    assert wire.episode.answer == "The current version of *llm* is **0.fixed-version**."
    assert wire.episode.usage.prompt_tokens == 164


@pytest.mark.parametrize(
    ("uri", "body", "expected"),
    [
        ("http://127.0.0.1:5/v1/chat/completions", {"model": "m"}, ("http://127.0.0.1:5/v1", "m")),
        ("https://api.openai.com/v1/responses", {"model": "g"}, ("https://api.openai.com/v1", "g")),
        (
            "https://api.anthropic.com/v1/messages?beta=true",
            {"model": "claude"},
            ("https://api.anthropic.com", "claude"),
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
            ":streamGenerateContent?alt=sse",
            {"contents": []},
            ("https://generativelanguage.googleapis.com/v1beta", "gemini-2.5-flash"),
        ),
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0"
            "/converse",
            {"messages": []},
            ("https://bedrock-runtime.us-east-1.amazonaws.com", "us.amazon.nova-micro-v1:0"),
        ),
    ],
)
def test_model_endpoint_is_the_base_url_a_client_is_given_and_the_model(
    uri: str, body: dict[str, object], expected: tuple[str, str]
) -> None:
    from toolreplay.wire.interactions import Exchange
    from toolreplay.wire.reader import model_endpoint

    assert model_endpoint(Exchange(1, "POST", uri, 200, body, "", b"")) == expected
