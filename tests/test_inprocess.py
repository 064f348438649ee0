"""In-process models and tools from plain callables: the stand-in policy as a ChatModel gives
the recorded episodes without any model server; a Python function becomes a tool whose schema
comes from its type hints."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
import requests
from pydantic import Field

from toolreplay.evals import EvalSuite
from toolreplay.hosts import run_loop
from toolreplay.models.inprocess import ScriptedModel, StandinModel, reply_from_completion
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.episode import run_episode
from toolreplay.study.weather.openmeteo import OpenMeteoClient
from toolreplay.tools.functions import tool, tool_schema, toolset_from_functions
from toolreplay.wire.episode import ModelReply, ToolCall


@pytest.mark.parametrize("configuration", ["loop+atomic", "single+atomic", "loop+oneshot"])
def test_standin_model_in_process_matches_the_recorded_episode(
    suite: EvalSuite, reference_episodes: dict, loopback: None, configuration: str
) -> None:
    from toolreplay.study.weather.fixture_server import load_fixtures, open_meteo_fixture_server

    config = Configuration.parse(configuration)
    with open_meteo_fixture_server() as base, requests.Session() as session:
        session.trust_env = False
        client = OpenMeteoClient(session, f"{base}/v1/search", f"{base}/v1/forecast")
        for question in suite.questions:
            model = StandinModel(suite)
            episode = run_episode(
                suite,
                config,
                question,
                model=model,
                tool_client=client,
                today=str(load_fixtures()["today"]),
            )
            recorded = reference_episodes[(configuration, question.id)]
            assert episode.transcript == recorded.transcript, question.id
            assert episode.stop_reason == recorded.stop_reason
            assert model.requests[0]["model"] == "toolreplay-standin"


def test_reply_from_completion_shapes() -> None:
    reply = reply_from_completion(
        {
            "choices": [
                {
                    "message": {
                        "content": None,
                        "tool_calls": [
                            {"id": "c1", "function": {"name": "f", "arguments": {"x": 1}}}
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assert reply == ModelReply(None, (ToolCall("c1", "f", '{"x": 1}'),), "tool_calls")
    with pytest.raises(ValueError, match="no choices"):
        reply_from_completion({"choices": []})


def convert(
    value: Annotated[float, Field(description="the quantity")],
    from_unit: str,
    to_unit: str = "km",
) -> dict[str, Any]:
    """Convert a length between units.

    Longer text that is not part of the description."""
    factors = {"km": 1000.0, "mi": 1609.344, "m": 1.0}
    if from_unit not in factors:
        raise ValueError(f"unknown unit {from_unit!r}")
    return {"value": round(value * factors[from_unit] / factors[to_unit], 3), "unit": to_unit}


def test_schema_from_type_hints() -> None:
    schema = tool_schema(convert)
    assert schema == {
        "type": "function",
        "function": {
            "name": "convert",
            "description": "Convert a length between units.",
            "parameters": {
                "type": "object",
                "properties": {
                    "value": {"type": "number", "description": "the quantity"},
                    "from_unit": {"type": "string"},
                    "to_unit": {"type": "string", "default": "km"},
                },
                "required": ["value", "from_unit"],
                "additionalProperties": False,
            },
        },
    }


def test_schema_given_and_bad_signatures() -> None:
    params = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    t = tool(lambda q: q, name="echo", description="Echo.", parameters=params)
    assert t.schema["function"] == {"name": "echo", "description": "Echo.", "parameters": params}

    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(TypeError, match="needs a type annotation"):
        tool_schema(untyped)
    with pytest.raises(ValueError, match="duplicate tool names"):
        toolset_from_functions("x", [convert, convert])


def test_a_toolset_from_functions_runs_in_the_loop() -> None:
    toolset = toolset_from_functions("units", [convert])
    model = ScriptedModel(
        [
            ModelReply(None, (ToolCall("c1", "convert", '{"value": 3, "from_unit": "mi"}'),)),
            ModelReply(None, (ToolCall("c2", "convert", '{"value": 3, "from_unit": "yd"}'),)),
            ModelReply(None, (ToolCall("c3", "convert", '{"value": "3"}'),)),
            lambda messages, tools: ModelReply(f"{len(messages)} messages"),
        ]
    )
    episode = run_loop(model, toolset, [{"role": "user", "content": "3 miles in km?"}])
    tool_messages = [json.loads(m["content"]) for m in episode.transcript if m["role"] == "tool"]
    assert tool_messages[0] == {"value": 4.828, "unit": "km"}
    assert tool_messages[1] == {"error": "ValueError: unknown unit 'yd'"}
    assert "invalid arguments" in tool_messages[2]["error"]
    assert episode.answer == "7 messages" and episode.stop_reason == "converged"
    assert model.requests[0][1] == [tool_schema(convert)]


def test_a_bug_in_a_tool_reaches_the_model_as_a_tool_message() -> None:
    def broken(x: int) -> int:
        """Broken."""
        raise RuntimeError("bug")

    toolset = toolset_from_functions("b", [broken])
    model = ScriptedModel(
        [ModelReply(None, (ToolCall("c1", "broken", '{"x": 1}'),)), ModelReply("sorry")]
    )
    episode = run_loop(model, toolset, [{"role": "user", "content": "?"}])
    [tool] = [m for m in episode.transcript if m["role"] == "tool"]
    assert tool["tool_call_id"] == "c1" and "RuntimeError: bug" in tool["content"]
    assert episode.stop_reason == "converged" and episode.answer == "sorry"
