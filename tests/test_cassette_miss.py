"""A change to what the host sends makes replay fail with an explained cassette miss: which
episode, what differs from the closest recorded request in the field's terms, and the command
that re-records it; never the SDK's "Connection error"."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from toolreplay.cassettes.errors import CassetteMiss
from toolreplay.cassettes.manifest import read_manifest
from toolreplay.evals import EvalSuite
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.episode import replay_episode
from toolreplay.study.weather import openmeteo
from toolreplay.study.weather.toolsets import GEOCODE_CITY_SCHEMA

REFERENCE = Path(__file__).resolve().parents[1] / "cassettes" / "reference"


def replay(suite: EvalSuite, configuration: str, question_id: str) -> None:
    replay_episode(
        REFERENCE,
        read_manifest(REFERENCE),
        suite,
        Configuration.parse(configuration),
        suite.question(question_id),
    )


def miss(
    suite: EvalSuite,
    configuration: str = "loop+atomic",
    question: str = "ningde",
    *,
    stale: bool = False,
) -> str:
    """The miss message. A change to the prompt, a tool schema or a setting makes the whole
    set stale, so the command re-records the set (``stale``); otherwise just the episode."""
    with pytest.raises(CassetteMiss) as info:
        replay(suite, configuration, question)
    text = str(info.value)
    assert "Connection error" not in text
    assert f"cassette miss in episode {configuration}/{question}" in text
    command = text.rsplit(": ", 1)[-1]
    if stale:
        assert command == (
            "toolreplay record --model-source stand-in --set reference --trials 5"
        ), command
    else:
        assert command == (
            "toolreplay record --model-source stand-in --set reference "
            f"--only {configuration}/{question}"
        ), command
    return text


def test_unchanged_episode_replays(suite: EvalSuite) -> None:
    replay(suite, "loop+atomic", "ningde")


def test_one_character_of_the_system_prompt(suite: EvalSuite) -> None:
    template = suite.system_prompt_template.replace("天气助手", "天气助理", 1)
    assert template != suite.system_prompt_template
    text = miss(dataclasses.replace(suite, system_prompt_template=template), stale=True)
    assert "request 1; 0 of 7 recorded interactions played" in text
    assert "system prompt content differs at character 7" in text
    assert "天气助理" in text and "天气助手" in text


def test_one_character_of_a_tool_description(
    suite: EvalSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    fn = GEOCODE_CITY_SCHEMA["function"]
    monkeypatch.setitem(fn, "description", fn["description"].replace("经纬度", "经纬庋", 1))
    text = miss(suite, "single+atomic", "beijing", stale=True)
    assert "tool schema `geocode_city` description differs at character 9" in text
    assert "get_weather_by_coords" not in text  # the untouched schema is not blamed


def test_a_tool_parameter(suite: EvalSuite, monkeypatch: pytest.MonkeyPatch) -> None:
    params = GEOCODE_CITY_SCHEMA["function"]["parameters"]
    city = dict(params["properties"]["city"], minLength=2)
    monkeypatch.setitem(params, "properties", {"city": city})
    text = miss(suite, stale=True)
    assert "tool schema `geocode_city` parameters differ (parameter `city`)" in text


def test_a_sampling_parameter(suite: EvalSuite) -> None:
    experiment = dataclasses.replace(suite.experiment, temperature=0.7)
    text = miss(dataclasses.replace(suite, experiment=experiment), stale=True)
    assert "sampling parameter `temperature`: sent 0.7, recorded 0.0" in text


def test_a_value_of_another_json_type_misses_through_a_replay(suite: EvalSuite) -> None:
    """The replay matches bodies as typed JSON: ``false`` is not the recorded ``0.0`` although
    Python's ``False == 0.0``; sent through the openai SDK and the replay transport."""
    experiment = dataclasses.replace(suite.experiment, temperature=False)
    # the set's fingerprint reads the setting as Python does (False == 0): not stale
    text = miss(dataclasses.replace(suite, experiment=experiment))
    assert "sampling parameter `temperature`: sent false, recorded 0.0" in text


def test_tools_withheld_earlier(suite: EvalSuite) -> None:
    experiment = dataclasses.replace(suite.experiment, max_rounds=2)
    text = miss(dataclasses.replace(suite, experiment=experiment), stale=True)
    assert "request 3; 2 of 7 recorded interactions played" in text
    offered = "geocode_city, get_weather_by_coords"
    assert f"tools withheld: the recorded request offered {offered}" in text
    assert "tool_choice" not in text  # follows from the tools withheld, not listed apart


def test_an_open_meteo_query(suite: EvalSuite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openmeteo, "CURRENT_VARIABLES", ("temperature_2m",))
    text = miss(suite, "single+oneshot", "beijing")
    assert "GET /v1/forecast is not in" in text
    assert "query `current`: sent 'temperature_2m', recorded 'temperature_2m," in text


def test_a_changed_tool_result_names_the_tool_message(
    suite: EvalSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay.study.weather import toolsets

    monkeypatch.setitem(toolsets.WMO_CODES_ZH, 3, "多云转阴")  # Beijing's weather code
    text = miss(suite, "loop+oneshot", "beijing")
    assert "message 4 (tool result of get_weather, call_1_1) content differs" in text
    assert "多云转阴" in text


def test_a_miss_never_prints_a_credential_nor_lists_it_as_a_difference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request whose key travels in the query (``?api_key=…``): recording drops it and the
    matcher ignores it, so the explanation neither lists it nor prints its value (nor a key
    set in the environment, in any form)."""
    from types import SimpleNamespace

    from toolreplay.cassettes.miss import ReplayMiss, explain_miss

    key = "sk-" + "SECRETKEY123456789abcdef"  # a made-up key, put together here
    monkeypatch.setenv("WEATHER_API_KEY", "envsecret-0123456789abcdef")
    recorded = SimpleNamespace(method="GET", uri="https://api.example.com/v1/w?q=a", body=None)
    cassette = SimpleNamespace(requests=[recorded], play_counts={0: 0}, _path="c.yaml")
    sent = SimpleNamespace(
        method="GET",
        uri=f"https://api.example.com/v1/w?api_key={key}&q=b&note=envsecret-0123456789abcdef",
        body=None,
    )
    text = str(explain_miss(ReplayMiss("miss", cassette, sent), "e", "toolreplay record"))
    assert "query `q`: sent 'b', recorded 'a'" in text
    assert "api_key" not in text and key not in text
    assert "envsecret-0123456789abcdef" not in text and "query `note`" in text
