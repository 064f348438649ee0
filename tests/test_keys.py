"""Keys go only to the endpoint they belong to, and never reach anything written."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import toolreplay.runs.record as record_mod
from toolreplay.cassettes.format import strip_secret_query
from toolreplay.cassettes.vcr import make_vcr
from toolreplay.cli.main import app
from toolreplay.models.base import DEFAULT_BASE_URL, ModelSettings
from toolreplay.models.endpoint import OPENAI_API_URL, EndpointError, resolve_endpoint
from toolreplay.redaction import strip_url_credentials, url_secrets

from .conftest import EVAL_FILE

KEY = "-".join(["sk", "pairing", "0123456789abcdefghij"])  # built: no key-like literal
OTHER = "-".join(["sk", "other", "9876543210zyxwvu"])
ENV_NAMES = (
    "DASHSCOPE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLREPLAY_BASE_URL",
    "TOOLREPLAY_MODEL", "MY_KEY",
)  # fmt: skip


@pytest.mark.parametrize(
    ("env", "flags", "url", "variable"),
    [
        ({"DASHSCOPE_API_KEY": KEY}, {}, DEFAULT_BASE_URL, "DASHSCOPE_API_KEY"),
        ({"OPENAI_API_KEY": KEY}, {"model": "m"}, OPENAI_API_URL, "OPENAI_API_KEY"),
        (
            {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
            {"model": "m"},
            "http://127.0.0.1:9/v1",
            "OPENAI_API_KEY",
        ),
        (
            {"OPENAI_API_KEY": KEY, "DASHSCOPE_API_KEY": OTHER},
            {"base_url": "https://api.openai.com/v1", "model": "m"},
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
        ),
        (
            {"OPENAI_API_KEY": OTHER, "DASHSCOPE_API_KEY": KEY},
            {"base_url": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"},
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
        ),
        (
            {"MY_KEY": KEY, "OPENAI_API_KEY": OTHER},
            {"base_url": "https://llm.example/v1", "api_key_env": "MY_KEY", "model": "m"},
            "https://llm.example/v1",
            "MY_KEY",
        ),
        (
            {"OPENAI_API_KEY": KEY, "DASHSCOPE_API_KEY": OTHER},
            {"api_key_env": "OPENAI_API_KEY", "model": "m"},
            OPENAI_API_URL,
            "OPENAI_API_KEY",
        ),
    ],
)
def test_each_key_goes_with_its_endpoint(env, flags, url, variable):
    endpoint = resolve_endpoint(env=env, **flags)
    assert (endpoint.base_url, endpoint.key_variable, endpoint.api_key) == (url, variable, KEY)
    assert KEY not in endpoint.describe() and KEY not in repr(endpoint)
    assert KEY not in repr(endpoint.settings)


@pytest.mark.parametrize(
    ("env", "flags", "message"),
    [
        ({}, {}, "needs an API key"),
        ({"OPENAI_API_KEY": KEY}, {}, "name the model"),  # qwen-plus is DashScope's
        ({"OPENAI_API_KEY": KEY, "DASHSCOPE_API_KEY": OTHER}, {}, "both"),
        (
            {"OPENAI_API_KEY": KEY},
            {"base_url": DEFAULT_BASE_URL},
            "needs $DASHSCOPE_API_KEY, which is not set. $OPENAI_API_KEY is set but belongs",
        ),
        (
            {"OPENAI_API_KEY": KEY, "TOOLREPLAY_BASE_URL": DEFAULT_BASE_URL},
            {},
            "$TOOLREPLAY_BASE_URL) needs $DASHSCOPE_API_KEY",
        ),
        (
            {"DASHSCOPE_API_KEY": KEY},
            {"base_url": "https://llm.example/v1", "model": "m"},
            "no key variable belongs to https://llm.example/v1",
        ),
        ({"MY_KEY": KEY}, {"api_key_env": "MY_KEY", "model": "m"}, "names no endpoint"),
        ({}, {"api_key_env": "MY_KEY", "base_url": "https://x.example"}, "$MY_KEY is not set"),
    ],
)
def test_unjustified_pairings_are_refused(env, flags, message):
    with pytest.raises(EndpointError) as info:
        resolve_endpoint(env=env, **flags)
    assert message in str(info.value)
    assert KEY not in str(info.value) and OTHER not in str(info.value)


def chat_reply(content: str) -> dict:
    return {
        "id": "r",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


def mock_client(monkeypatch: pytest.MonkeyPatch, handler) -> None:
    """The recorder's ``httpx.Client`` sends through ``handler`` (vcrpy still records)."""

    class Client(httpx.Client):
        def __init__(self, *args, **kwargs):
            # clients that bring their own transport (replay's) keep it
            super().__init__(*args, **{"transport": httpx.MockTransport(handler), **kwargs})

    monkeypatch.setattr(record_mod.httpx, "Client", Client)


@pytest.fixture
def transport(monkeypatch: pytest.MonkeyPatch) -> list[httpx.Request]:
    """Every httpx client the recorder makes sends through a mock transport (no network);
    returns the requests it saw. The model answers at once, so Open-Meteo is never called."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=chat_reply("北京今天 20°C。"))

    mock_client(monkeypatch, handler)
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    return seen


def record(tmp_path: Path, *args: str):
    return CliRunner().invoke(
        app,
        ["record", "--model-source", "live", "--eval", str(EVAL_FILE),
         "--cassettes", str(tmp_path / "c"), "--no-ablations", *args],
    )  # fmt: skip


def written_files(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.rglob("*") if p.is_file()]


@pytest.mark.slow
def test_only_openai_key_never_reaches_dashscope(tmp_path, transport, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result = record(tmp_path, "--set", "live-gpt", "--model", "gpt-test")
    assert result.exit_code == 0, result.output
    assert transport, "the recording sent nothing"
    assert {r.url.host for r in transport} == {"api.openai.com"}
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in transport)
    first = result.output.splitlines()[0]
    assert "api.openai.com" in first and "gpt-test" in first and "$OPENAI_API_KEY" in first
    assert KEY not in result.output
    # nothing written holds the key: cassettes, manifest, then results and report
    out = tmp_path / "reports"
    run = CliRunner().invoke(
        app,
        ["run", "--eval", str(EVAL_FILE), "--cassettes", str(tmp_path / "c"), "--set",
         "live-gpt", "--out", str(out)],
    )  # fmt: skip
    assert (out / "results.json").exists() and (out / "index.html").exists(), run.output
    files = written_files(tmp_path / "c", out)
    assert len(files) > 16
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert KEY not in text and "authorization" not in text.lower(), path
    manifest = json.loads((tmp_path / "c" / "live-gpt" / "manifest.json").read_text())
    assert manifest["endpoint_host"] == "api.openai.com" and manifest["provenance"] == "live"


def test_openai_key_is_not_sent_to_a_dashscope_url(tmp_path, transport, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result = record(tmp_path, "--set", "x", "--base-url", DEFAULT_BASE_URL)
    assert result.exit_code == 1
    assert "needs $DASHSCOPE_API_KEY" in result.output and KEY not in result.output
    assert not transport and not (tmp_path / "c").exists()


@pytest.mark.slow
def test_openai_base_url_is_honoured(tmp_path, transport, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://gateway.example/openai/v1")
    result = record(tmp_path, "--set", "gw", "--model", "m")
    assert result.exit_code == 0, result.output
    assert {str(r.url) for r in transport} == {"https://gateway.example/openai/v1/chat/completions"}
    assert "from $OPENAI_BASE_URL" in result.output


def test_an_echoed_key_discards_the_recording(suite, tmp_path, monkeypatch):
    """An endpoint that puts the key in a response body: nothing is kept."""
    from toolreplay.runs.configuration import Configuration

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=chat_reply(f"your key is {KEY}"))

    mock_client(monkeypatch, handler)
    with pytest.raises(record_mod.RecordingError, match=r"API key or a credential\) appears in"):
        record_mod.record_live(
            tmp_path / "s", suite, [Configuration("loop", "oneshot")],
            ModelSettings(base_url="https://api.openai.com/v1", model="m", api_key=KEY),
        )  # fmt: skip
    assert not (tmp_path / "s").exists()


def test_credential_headers_and_query_parameters_never_reach_a_cassette(tmp_path):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"set-cookie": f"session={KEY}", "content-type": "application/json"},
            json={"ok": True},
        )

    path = tmp_path / "c.yaml"
    url = f"https://api.example/v1/search?name=x&apikey={KEY}&access_token={KEY}&Key={KEY}&count=1"
    with make_vcr("all").use_cassette(str(path)):
        with httpx.Client(transport=httpx.MockTransport(handler)) as http:
            http.get(
                url,
                headers={
                    "authorization": f"Bearer {KEY}",
                    "api-key": KEY,
                    "x-api-key": KEY,
                    "cookie": f"session={KEY}",
                },
            )
    text = path.read_text(encoding="utf-8")
    assert KEY not in text
    assert "uri: https://api.example/v1/search?name=x&count=1" in text
    assert strip_secret_query("https://h/p?sig=1&q=2&client_secret=3") == "https://h/p?q=2"


def test_a_loopback_server_gets_no_key_unless_named():
    env = {"OPENAI_API_KEY": KEY, "DASHSCOPE_API_KEY": OTHER, "MY_KEY": KEY}
    endpoint = resolve_endpoint("http://127.0.0.1:8080/v1", "m", env=env)
    assert endpoint.key_variable is None and endpoint.api_key is None
    assert "no key sent" in endpoint.describe()
    named = resolve_endpoint("http://127.0.0.1:8080/v1", "m", env={**env,
                             "TOOLREPLAY_API_KEY_ENV": "MY_KEY"})  # fmt: skip
    assert (named.key_variable, named.api_key) == ("MY_KEY", KEY)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/v1?api_key=qs-secret-0123456",
        "https://api.example.com/v1?x=1",
        "http://127.0.0.1:9/v1#frag-secret-0123456",
        "http://127.0.0.1:9/v1?",
        "ftp://127.0.0.1/v1",
        "http:///v1",
    ],
)
def test_a_base_url_that_could_never_replay_is_refused_up_front(url, tmp_path):
    with pytest.raises(EndpointError, match="base URL") as caught:
        resolve_endpoint(url, "m", env={"K": "k" * 20}, api_key_env="K")
    assert "secret" not in str(caught.value)
    result = CliRunner().invoke(
        app,
        ["record", "--model-source", "live", "--eval", str(EVAL_FILE), "--set", "x",
         "--cassettes", str(tmp_path), "--base-url", url, "--model", "m", "--no-ablations"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "base URL" in result.output and "secret-0123456" not in result.output
    assert not list(tmp_path.iterdir())  # refused before anything was recorded or written


def test_a_base_url_without_query_is_kept():
    endpoint = resolve_endpoint("http://127.0.0.1:9/compatible-mode/v1/", "m", env={})
    assert endpoint.settings.base_url == "http://127.0.0.1:9/compatible-mode/v1/"


@pytest.mark.parametrize(
    "name",
    [
        "appid",  # OpenWeatherMap: a key-shaped value
        "app_key",  # Edamam, Nutritionix
        "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",  # AWS presigned URLs
        "Signature",  # S3 query-string authentication
        "subscription-key", "api-key", "apiKey", "key",  # Azure, Gemini
        "access_token", "private_token", "jwt", "sessionid", "client_secret", "password",
    ],
)  # fmt: skip
def test_credential_query_parameters_of_public_apis_are_dropped(name):
    url = f"https://api.example/data/2.5/weather?q=Boston&{name}={KEY}&units=metric"
    assert strip_secret_query(url) == "https://api.example/data/2.5/weather?q=Boston&units=metric"
    assert KEY in url_secrets(url) and KEY not in strip_url_credentials(url)


@pytest.mark.parametrize(
    "query",
    [
        "q=abcdefghijkl", "name=Ningde", "latitude=26.66", "count=1", "format=json",
        "units=metric", "lang=zh", "page=2", "client_id=abcdefghijkl",
        "appid=440", "appid=570",  # Steam's Web API: the game asked about, its key is `key`
        "session_id=english", "filter[key]=name", "key_id=7", "monkey_id=12",
    ],
)  # fmt: skip
def test_ordinary_query_parameters_are_kept(query):
    url = f"https://api.example/v1/search?{query}"
    assert strip_secret_query(url) == url and url_secrets(url) == []


def test_requests_that_differ_by_a_data_parameter_are_not_matched_to_each_other():
    """Steam's ``appid`` names the game: two recorded requests that differ only by it replay
    their own replies (a dropped parameter would hand the first reply to either)."""
    from toolreplay.cassettes.tape import Tape

    base = "https://api.example/ISteamUserStats/GetNumberOfCurrentPlayers/v1/"

    def recorded(query: str, text: str) -> dict:
        return {
            "request": {"method": "GET", "uri": f"{base}?{query}", "body": None, "headers": {}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                         "body": {"string": text}},
        }  # fmt: skip

    tape = Tape("x", [recorded("appid=440", "TF2"), recorded("appid=570", "Dota")])
    assert tape.play("GET", f"{base}?appid=570", None).content == b"Dota"
    assert tape.play("GET", f"{base}?appid=440", None).content == b"TF2"
