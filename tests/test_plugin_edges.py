"""The plugin's edges: cassettes read through the checked loader (one-line errors naming the
file and the interaction; pydantic-ai's shape named as such, with ``toolreplay convert``),
``chat_model`` replaying with the cassette's own base URL and model (no environment), the
recording settings' errors in the plugin's terms, and the scripted loopback model users record
against (``toolreplay_chat_server``), streamed or not."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from toolreplay.cassettes.convert import convert_text
from toolreplay.doubles.scripted import scripted_chat_server
from toolreplay.plugin.settings import recording_settings, under_pytest

AGENT_TESTS = """\
import os

import pytest

from toolreplay import LoopLimits, run_loop, toolset_from_functions


def check_stock(sku: str) -> dict:
    \"\"\"Units on hand of one SKU.\"\"\"
    return {"sku": sku, "on_hand": {"ABC-1": 12}.get(sku, 0)}


SCRIPT = [
    {"tool_calls": [{"id": "call_1", "function": {"name": "check_stock",
                                                    "arguments": '{"sku": "ABC-1"}'}}]},
    {"content": "ABC-1: 12 units on hand."},
]


@pytest.fixture(autouse=True)
def model_server(toolreplay_chat_server, record_mode):
    if record_mode != "none":
        toolreplay_chat_server(SCRIPT, model="stock-demo")


@pytest.mark.vcr
def test_stock(chat_model):
    tools = toolset_from_functions("stock", [check_stock])
    episode = run_loop(chat_model, tools, [{"role": "user", "content": "ABC-1?"}],
                       LoopLimits(max_rounds=3))
    assert episode.answer == "ABC-1: 12 units on hand."
    assert chat_model.settings.model == "stock-demo"
"""

CASSETTE = Path("cassettes") / "test_agent" / "test_stock.yaml"


@pytest.fixture
def agent(pytester: pytest.Pytester, loopback: None) -> pytest.Pytester:
    """A user's suite whose one test is recorded against the scripted loopback model."""
    pytester.makepyfile(test_agent=AGENT_TESTS)
    pytester.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    result = pytester.runpytest("--record-mode=rewrite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    return pytester


def _replay(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest("--record-mode=none", "--block-network", "-p", "no:cacheprovider", *args)


def _unset_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOOLREPLAY_BASE_URL", "TOOLREPLAY_MODEL", "TOOLREPLAY_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)


def test_replay_needs_no_environment(
    agent: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = yaml.safe_load((agent.path / CASSETTE).read_text(encoding="utf-8"))
    first = recorded["interactions"][0]["request"]
    assert first["uri"] == "http://127.0.0.1/v1/chat/completions"  # the loopback port dropped
    assert first["parsed_body"]["model"] == "stock-demo"
    _unset_model_env(monkeypatch)
    _replay(agent).assert_outcomes(passed=1)
    # whatever the CI machine's environment says, the cassette's endpoint and model are used
    monkeypatch.setenv("TOOLREPLAY_BASE_URL", "https://api.example.invalid/v1")
    monkeypatch.setenv("TOOLREPLAY_MODEL", "another-model")
    _replay(agent).assert_outcomes(passed=1)


def test_recording_settings_errors_name_variables_not_flags(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"TOOLREPLAY_BASE_URL": "http://127.0.0.1:9/v1"}
    with pytest.raises(ValueError) as caught:
        recording_settings(env)
    message = str(caught.value)
    assert "TOOLREPLAY_MODEL=NAME" in message and "--model" not in message
    assert "toolreplay_model_settings" in message
    with pytest.raises(ValueError) as caught:
        recording_settings({"TOOLREPLAY_BASE_URL": "https://llm.example.com/v1"})
    assert "TOOLREPLAY_API_KEY_ENV=NAME" in str(caught.value)
    assert "--" not in under_pytest(str(caught.value))
    with pytest.raises(ValueError) as caught:
        recording_settings({})
    assert "toolreplay_chat_server" in str(caught.value)
    assert "toolreplay record" not in str(caught.value)
    # the named key goes to the loopback endpoint with TOOLREPLAY_API_KEY_ENV
    settings = recording_settings(
        {
            "TOOLREPLAY_BASE_URL": "http://127.0.0.1:9/v1",
            "TOOLREPLAY_MODEL": "m",
            "TOOLREPLAY_API_KEY_ENV": "LOCAL_KEY",
            "LOCAL_KEY": "local-secret",
        }
    )
    assert settings.api_key == "local-secret" and settings.model == "m"

    # and under pytest the test fails at setup with that one line
    pytester.makepyfile(
        test_rec="import pytest\n\n@pytest.mark.vcr\ndef test_x(chat_model):\n    pass\n"
    )
    _unset_model_env(monkeypatch)
    monkeypatch.setenv("TOOLREPLAY_BASE_URL", "http://127.0.0.1:9/v1")
    result = pytester.runpytest("--record-mode=rewrite", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "cannot record: name the model for http://127.0.0.1:9/v1 with TOOLREPLAY_MODEL" in out
    assert "Traceback" not in out


def _as_pydantic_ai(text: str) -> str:
    """A toolreplay cassette rewritten in pydantic-ai's test serializer's shape: the reply
    under ``response.parsed_body``, headers it keeps (a cookie among them)."""
    data = yaml.safe_load(text)
    for interaction in data["interactions"]:
        request, response = interaction["request"], interaction["response"]
        request["headers"] = {**request["headers"], "cookie": ["__cf_bm=abc"], "host": ["x"]}
        body = response.pop("body")
        response["parsed_body"] = body["parsed_body"]
        response["headers"] = {**response["headers"], "openai-processing-ms": ["554"]}
    return yaml.safe_dump(data, allow_unicode=True)


def test_a_pydantic_ai_cassette_is_named_with_its_converter(agent: pytest.Pytester) -> None:
    cassette = agent.path / CASSETTE
    ours = cassette.read_text(encoding="utf-8")
    cassette.write_text(_as_pydantic_ai(ours), encoding="utf-8")
    result = _replay(agent)
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    line = next(x for x in out.splitlines() if "pydantic-ai's cassette shape" in x)
    assert f"{cassette}: interaction 1: response.parsed_body" in line
    assert line.endswith(f"convert the file: toolreplay convert {cassette}")
    assert "KeyError" not in out and "Traceback" not in out and "During handling" not in out

    # `toolreplay convert` gives back what toolreplay recorded, value for value (the cookie and
    # the other headers dropped; pydantic-ai's sorted keys stay sorted), and it replays again
    from typer.testing import CliRunner

    from toolreplay.cli.main import app

    run = CliRunner().invoke(app, ["convert", str(cassette)])
    assert run.exit_code == 0, run.output
    assert f"wrote {cassette} (2 interactions)" in run.output
    converted = cassette.read_text(encoding="utf-8")
    assert yaml.safe_load(converted) == yaml.safe_load(ours)
    assert "cookie" not in converted and "openai-processing-ms" not in converted
    _replay(agent).assert_outcomes(passed=1)


def test_a_cassette_missing_a_field_is_one_line(agent: pytest.Pytester) -> None:
    cassette = agent.path / CASSETTE
    data = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    del data["interactions"][1]["response"]["status"]
    cassette.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = _replay(agent)
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert f"{cassette}: interaction 2: response.status: Field required" in out
    assert "KeyError" not in out and "Traceback" not in out


def test_convert_refuses_what_is_not_a_cassette(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolreplay.cli.main import app

    bad = tmp_path / "bad.yaml"
    bad.write_text("just: text\n", encoding="utf-8")
    run = CliRunner().invoke(app, ["convert", str(bad), "--out", str(tmp_path / "out")])
    assert run.exit_code == 1
    assert "not a cassette (no 'interactions' list)" in run.output
    assert not (tmp_path / "out").exists()  # nothing written
    with pytest.raises(Exception, match="interaction 1: request needs method and uri"):
        convert_text("interactions:\n- request: {}\n  response: {status: {code: 200}}\n")


def test_the_scripted_server_streams_like_the_sdk_expects(loopback: None) -> None:
    import httpx
    import openai

    script = [
        {
            "content": "Checking.",
            "tool_calls": [
                {"function": {"name": "check_stock", "arguments": '{"sku": "ABC-1"}'}},
                {"function": {"name": "check_stock", "arguments": '{"sku": "XYZ-2"}'}},
            ],
        },
        {"content": "ABC-1: 12 units on hand; XYZ-2: 0 units on hand."},
    ]
    with scripted_chat_server(script) as server, httpx.Client(trust_env=False) as http:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", http_client=http)
        stream = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "stock?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        plain = client.chat.completions.create(model="m", messages=[])
    calls: dict[int, dict[str, str]] = {}
    text = ""
    for chunk in chunks:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for d in choice.delta.tool_calls or []:
                call = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                call["id"] += d.id or ""
                call["name"] += (d.function and d.function.name) or ""
                call["arguments"] += (d.function and d.function.arguments) or ""
    assert text == "Checking."
    assert calls == {
        0: {"id": "call_1_0", "name": "check_stock", "arguments": '{"sku": "ABC-1"}'},
        1: {"id": "call_1_1", "name": "check_stock", "arguments": '{"sku": "XYZ-2"}'},
    }
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert plain.choices[0].message.content == script[1]["content"]
    assert [len(r["messages"]) for r in server.requests] == [1, 0]
    assert server.requests[0]["stream"] is True


def test_an_exhausted_script_is_a_visible_error(loopback: None) -> None:
    import httpx

    with scripted_chat_server([]) as server:
        reply = httpx.post(f"{server.base_url}/chat/completions", json={"messages": []})
    assert reply.status_code == 500
    assert "ScriptExhausted: the script holds no reply for request 1" in reply.text


def test_real_pydantic_ai_cassettes_are_named_and_converted(tmp_path: Path) -> None:
    """pydantic-ai's own recorded cassettes (tests/data/foreign): a JSON reply under
    ``response.parsed_body`` is named with the converter, and the converted file loads and
    holds the same episode; a streamed one (its reply under ``body.string``) loads as it is."""
    from typer.testing import CliRunner

    from toolreplay.cassettes.episodes import episodes_from_cassette
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cassettes.store import load_cassette
    from toolreplay.cli.main import app

    foreign = Path(__file__).parent / "data" / "foreign"
    load_cassette(foreign / "pydantic-ai-openai-stream.yaml")  # already toolreplay's shape
    name = "pydantic-ai-openai-tool-call.yaml"
    source = foreign / name
    with pytest.raises(CassetteError, match="pydantic-ai's cassette shape") as caught:
        load_cassette(source)
    assert str(caught.value).endswith(f"convert the file: toolreplay convert {source}")
    run = CliRunner().invoke(app, ["convert", str(source), "--out", str(tmp_path)])
    assert run.exit_code == 0, run.output
    converted = tmp_path / name
    load_cassette(converted)  # toolreplay's shape now
    text = converted.read_text(encoding="utf-8")
    assert "authorization" not in text.lower() and "cookie" not in text.lower()
    assert episodes_from_cassette(converted) == episodes_from_cassette(source)


def test_a_folder_of_pydantic_ai_cassettes_is_read_as_the_library_reads_them(
    tmp_path: Path,
) -> None:
    """``toolreplay run --cassettes`` reads a test suite's cassettes in pydantic-ai's shape
    (``response.parsed_body``) as :func:`episodes_from_cassette` does, with no conversion: the
    same answers and rounds, none named "not read"; only replaying them needs
    ``toolreplay convert``."""
    import json

    from typer.testing import CliRunner

    from toolreplay.cassettes.episodes import episodes_from_cassette
    from toolreplay.cli.main import app

    foreign = Path(__file__).parent / "data" / "foreign"
    names = ("pydantic-ai-openai-tool-call.yaml", "pydantic-ai-anthropic-tool-call.yaml")
    folder = tmp_path / "cassettes" / "test_models"
    folder.mkdir(parents=True)
    expected = {}
    for name in names:
        source = foreign / name
        assert "parsed_body" in yaml.safe_load(source.read_text(encoding="utf-8"))[
            "interactions"
        ][0]["response"], name  # pydantic-ai's shape, not toolreplay's
        test = "test_" + name.removesuffix(".yaml").replace("-", "_")
        (folder / f"{test}.yaml").write_bytes(source.read_bytes())
        [episode] = episodes_from_cassette(source)
        expected[test] = (episode.question, episode.answer, len(episode.rounds))
    run = CliRunner().invoke(
        app, ["run", "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / "out")]
    )
    assert "not read" not in run.output, run.output
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    read = {
        e["question_id"]: (e["question"], e["answer"], e["rounds"]) for e in results["episodes"]
    }  # the question as the user asked it, not the test's name
    assert read == expected
