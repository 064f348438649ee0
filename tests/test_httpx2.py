"""httpx2 clients replay as httpx's do. httpx2 is httpx's API under another import name (its
classes are not httpx's); the SDKs moved to it: anthropic 2.x refuses an ``httpx.Client``,
openai 3.x is built on it (and still takes an httpx client), google-genai takes either.

- The replay transport (``Player.httpx2_http``, ``Player.httpx2_async_http``) serves a tape
  to httpx2 clients with httpx's matching, responses and miss; without httpx2 the httpx
  clients still replay and asking for an httpx2 one says what to install.
- The engine (the openai SDK through ``OpenAIChatModel``) replays committed episodes over an
  httpx2 client, streamed ones too; a stream broken mid-way is a ModelReplyError whichever
  library raised.
- The anthropic SDK replays a real Messages exchange, and google-genai a real
  generateContent exchange, over httpx2 clients: pydantic-ai's recordings of the two APIs,
  ``tests/models/cassettes/test_anthropic/test_anthropic_model_instructions.yaml`` and
  ``tests/models/cassettes/test_google/test_google_timeout.yaml`` of pydantic/pydantic-ai
  (MIT), kept verbatim in ``tests/data/foreign/pydantic-ai-anthropic-messages.yaml`` and
  ``pydantic-ai-gemini-generate.yaml``; the expected values are the providers' own replies.
- The pytest plugin (vcrpy, which patches httpx2 since 8.2) records and replays a user's test
  whose SDK client is an httpx2 one, sync or async, and names a miss with what differs.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolreplay.cassettes import transport
from toolreplay.cassettes.convert import convert_file
from toolreplay.cassettes.errors import CassetteMiss
from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.miss import ReplayMiss, explain_miss, find_miss
from toolreplay.cassettes.store import load_cassette
from toolreplay.cassettes.transport import Player, Tape, player_for
from toolreplay.evals import EvalSuite, load_eval
from toolreplay.models.base import ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.episode import replay_episode
from toolreplay.wire.replies import ModelReplyError
from toolreplay.wire.stream import event_chunks

from . import stream_bodies as sb
from .conftest import REFERENCE, REPO

try:  # as conftest.py does for httpcore: imported before any in-process pytester run
    import httpcore2  # noqa: F401
except ImportError:
    pass

FOREIGN = Path(__file__).parent / "data" / "foreign"
STREAM_SET = REPO / "cassettes" / "reference-stream"


@pytest.fixture
def httpx2() -> Any:
    return pytest.importorskip("httpx2")


def _openai_takes_httpx2(httpx2: Any) -> None:
    """Skip unless the installed openai SDK takes an httpx2 client (3.x; 2.47 and later
    with httpx2 installed); 1.x and earlier 2.x refuse it with TypeError."""
    from openai import OpenAI

    try:
        OpenAI(api_key="-", http_client=httpx2.Client())
    except TypeError:
        pytest.skip("this openai SDK takes no httpx2 client")


def _interaction(uri: str, sent: Any, status: int, reason: str, ctype: str, body: Any) -> dict:
    """One interaction in the stored form (``parsed_body`` for JSON, ``string`` otherwise)."""
    method = "GET" if sent is None else "POST"
    stored = {"parsed_body": body} if ctype == "application/json" else {"string": body}
    request = {"method": method, "uri": uri, "headers": {}}
    if sent is not None:
        request["parsed_body"] = sent
    return {
        "request": request,
        "response": {
            "status": {"code": status, "message": reason},
            "headers": {"content-type": [ctype], "x-trace": ["a", "b"]},
            "body": stored,
        },
    }


def _tape(tmp_path: Path) -> Tape:
    return Tape(
        tmp_path / "c.yaml",
        [
            _interaction(
                "http://h/v1/jobs?page=2", {"job": "j1"}, 201, "Created", "application/json",
                {"id": "j1", "name": "Zürich"},
            ),
            _interaction("http://h/v1/notes", None, 404, "Not Found", "text/plain", "none here"),
        ],
    )  # fmt: skip


def _seen(response: Any) -> tuple:
    """What a client sees of a response: status, reason, headers, body."""
    return (
        response.status_code,
        response.reason_phrase,
        response.headers.get_list("x-trace"),
        response.headers["content-type"],
        response.content,
    )


# ---- the replay transport ------------------------------------------------------------------


def test_httpx2_clients_are_the_players_own(httpx2: Any) -> None:
    async def run() -> Player:
        async with Player() as player:
            assert isinstance(player.httpx2_http, httpx2.Client)
            assert isinstance(player.httpx2_async_http, httpx2.AsyncClient)
            assert player.httpx2_http is player.httpx2_http
            assert player.httpx2_async_http is player.httpx2_async_http
            assert player_for(player.httpx2_http) is player
            assert player_for(player.httpx2_async_http) is player
            assert not player.httpx2_http.trust_env and not player.httpx2_async_http.trust_env
            return player

    player = asyncio.run(run())
    assert player.httpx2_http.is_closed and player.httpx2_async_http.is_closed


def test_an_httpx2_client_sees_what_an_httpx_client_sees(httpx2: Any, tmp_path: Path) -> None:
    with Player() as player:
        with player.use(_tape(tmp_path)) as tape:
            created = player.httpx2_http.post("http://h/v1/jobs?page=2", json={"job": "j1"})
            missing = player.httpx2_http.get("http://h/v1/notes")
            assert tape.play_counts == [1, 1]
        assert isinstance(created, httpx2.Response)
        assert _seen(created) == (
            201, "Created", ["a", "b"], "application/json",
            json.dumps({"id": "j1", "name": "Zürich"}, ensure_ascii=False).encode(),
        )  # fmt: skip
        assert created.json() == {"id": "j1", "name": "Zürich"}
        assert _seen(missing)[:2] == (404, "Not Found") and missing.text == "none here"
        with player.use(_tape(tmp_path)):
            by_httpx = [
                player.http.post("http://h/v1/jobs?page=2", json={"job": "j1"}),
                player.http.get("http://h/v1/notes"),
            ]
        assert [_seen(r) for r in by_httpx] == [_seen(created), _seen(missing)]


def test_an_async_httpx2_client_gets_an_event_stream_one_event_a_chunk(
    httpx2: Any, tmp_path: Path
) -> None:
    body = sb.body(sb.OPENAI_TOOL_CALL)
    interaction = _interaction(
        "http://h/v1/chat/completions", {"stream": True}, 200, "OK", "text/event-stream",
        body.decode(),
    )  # fmt: skip

    async def run(player: Player) -> list[bytes]:
        client = player.httpx2_async_http
        request = client.build_request(
            "POST", "http://h/v1/chat/completions", json={"stream": True}
        )
        response = await client.send(request, stream=True)
        chunks = [chunk async for chunk in response.aiter_raw()]
        await response.aclose()
        return chunks

    with Player() as player, player.use(Tape(tmp_path / "s.yaml", [interaction])):
        chunks = asyncio.run(run(player))
    assert chunks == event_chunks(body) and len(chunks) == len(sb.OPENAI_TOOL_CALL)


@pytest.mark.parametrize("flavour", ["httpx2_http", "httpx2_async_http"])
def test_a_miss_from_an_httpx2_client_names_the_request(
    httpx2: Any, tmp_path: Path, flavour: str
) -> None:
    async def send(client: Any) -> Any:
        return await client.post("http://h/v1/jobs?page=2", json={"job": "j2"})

    with Player() as player, player.use(_tape(tmp_path)), pytest.raises(ReplayMiss) as info:
        client = getattr(player, flavour)
        if flavour.endswith("async_http"):
            asyncio.run(send(client))
        else:
            client.post("http://h/v1/jobs?page=2", json={"job": "j2"})
    assert str(info.value) == f"POST /v1/jobs is not recorded in {tmp_path / 'c.yaml'}"
    text = str(explain_miss(info.value, "jobs", "rerecord it"))
    assert "cassette miss in episode jobs: POST /v1/jobs is not in" in text
    assert "field `job`: sent 'j2', recorded 'j1'" in text


def test_without_httpx2_httpx_replays_and_an_httpx2_client_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)  # import httpx2 fails, as uninstalled
    monkeypatch.setattr(transport, "_httpx2_flavour", None)
    with Player() as player:
        with player.use(_tape(tmp_path)):
            assert player.http.get("http://h/v1/notes").text == "none here"
        with pytest.raises(ImportError, match=r"needs httpx2.*pip install httpx2"):
            _ = player.httpx2_http


def test_the_engine_does_not_import_httpx2() -> None:
    code = (
        "import sys; from toolreplay.cassettes.transport import Player\n"
        "from toolreplay.models.openai_chat import OpenAIChatModel\n"
        "with Player() as p: p.http\n"
        "print('httpx2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- the engine: the openai SDK over an httpx2 client -------------------------------------


def _replay(set_dir: Path, suite: EvalSuite, question: str, client: str) -> Any:
    """One committed episode replayed over ``client``, a player's client named by property."""
    with Player() as player:
        return replay_episode(
            set_dir, read_manifest(set_dir), suite, Configuration.parse("loop+atomic"),
            suite.question(question), http=getattr(player, client), session=player.session,
        )  # fmt: skip


def test_a_committed_episode_replays_over_httpx2_as_over_httpx(
    httpx2: Any, suite: EvalSuite
) -> None:
    _openai_takes_httpx2(httpx2)
    over_httpx2 = _replay(REFERENCE, suite, "ningde", "httpx2_http")
    assert over_httpx2 == _replay(REFERENCE, suite, "ningde", "http")
    assert over_httpx2.stop_reason == "converged" and len(over_httpx2.rounds) >= 2
    changed = replace(suite, experiment=replace(suite.experiment, temperature=0.7))
    with pytest.raises(CassetteMiss) as info:
        _replay(REFERENCE, changed, "ningde", "httpx2_http")
    text = str(info.value)
    assert "cassette miss in episode loop+atomic/ningde: POST /v1/chat/completions" in text
    assert "sampling parameter `temperature`: sent 0.7, recorded 0.0" in text


def test_a_streamed_episode_replays_over_httpx2(httpx2: Any) -> None:
    _openai_takes_httpx2(httpx2)
    suite = load_eval(REPO / "evals" / "weather-stream.yaml")
    question = suite.questions[0].id
    episode = _replay(STREAM_SET, suite, question, "httpx2_http")
    assert episode == _replay(STREAM_SET, suite, question, "http")
    assert episode.stop_reason == "converged" and len(episode.rounds) == 4


class _Broken:
    """An event stream that breaks after its first two events, as a dropped connection does:
    the library's own ``RemoteProtocolError``."""

    def __init__(self, httpx2: Any) -> None:
        self.httpx2 = httpx2

    def __iter__(self) -> Iterator[bytes]:
        yield from event_chunks(sb.body(sb.OPENAI_TOOL_CALL))[:2]
        raise self.httpx2.RemoteProtocolError("peer closed connection")

    def close(self) -> None:
        pass


def test_a_stream_broken_mid_way_over_httpx2_is_a_model_reply_error(httpx2: Any) -> None:
    _openai_takes_httpx2(httpx2)

    class Stream(_Broken, httpx2.SyncByteStream):
        pass

    def handler(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, stream=Stream(httpx2))

    settings = ModelSettings(base_url="https://api.example.test/v1", model="m", stream=True)
    with httpx2.Client(transport=httpx2.MockTransport(handler)) as http:
        model = OpenAIChatModel(settings, http)
        with pytest.raises(ModelReplyError) as info:
            model.complete([{"role": "user", "content": "capital?"}], None)
    assert "broke off mid-stream (RemoteProtocolError: peer closed connection)" in str(info.value)


def test_no_response_over_httpx2_is_a_connection_error(httpx2: Any) -> None:
    _openai_takes_httpx2(httpx2)
    from openai import APIConnectionError

    def handler(request: Any) -> Any:
        raise httpx2.ConnectError("connection refused", request=request)

    settings = ModelSettings(base_url="https://api.example.test/v1", model="m")
    with httpx2.Client(transport=httpx2.MockTransport(handler)) as http:
        model = OpenAIChatModel(settings, http)
        with pytest.raises(APIConnectionError):
            model.complete([{"role": "user", "content": "capital?"}], None)


# ---- other SDKs over httpx2: real recorded exchanges ---------------------------------------


def _foreign(name: str, tmp_path: Path) -> Tape:
    """A pydantic-ai cassette of ``tests/data/foreign`` in play, converted to toolreplay's."""
    target = tmp_path / name
    convert_file(FOREIGN / name, target)
    return Tape(target, load_cassette(target))


#: The request pydantic-ai sent (the cassette's), as the anthropic SDK's keywords; pydantic-ai
#: called the beta endpoint, which the SDK's ``messages.create`` no longer marks ``?beta=true``.
MESSAGES = {
    "model": "claude-3-opus-latest",
    "max_tokens": 4096,
    "stream": False,
    "system": "You are a helpful assistant.\n\n",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}
    ],
}


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_anthropic_replays_a_messages_exchange_over_httpx2(
    httpx2: Any, tmp_path: Path, asynchronous: bool
) -> None:
    anthropic = pytest.importorskip("anthropic")
    kwargs = {**MESSAGES, "extra_query": {"beta": "true"}}

    def send(player: Player, **kwargs: Any) -> Any:
        if not asynchronous:
            client = anthropic.Anthropic(api_key="-", http_client=player.httpx2_http, max_retries=0)
            return client.messages.create(**kwargs)
        aclient = anthropic.AsyncAnthropic(
            api_key="-", http_client=player.httpx2_async_http, max_retries=0
        )
        return asyncio.run(aclient.messages.create(**kwargs))

    with Player() as player:
        with player.use(_foreign("pydantic-ai-anthropic-messages.yaml", tmp_path)) as tape:
            message = send(player, **kwargs)
            assert tape.unplayed() == []
        assert message.id == "msg_01Fg1JVgvCYUHWsxrj9GkpEv"
        assert message.content[0].text == "The capital of France is Paris."
        assert message.stop_reason == "end_turn"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (20, 10)
        # without the recorded query: the SDK's connection error carries the miss
        with player.use(_foreign("pydantic-ai-anthropic-messages.yaml", tmp_path)):
            with pytest.raises(anthropic.APIConnectionError) as info:
                send(player, **MESSAGES)
    miss = find_miss(info.value)
    assert isinstance(miss, ReplayMiss)
    text = str(explain_miss(miss, "messages", "rerecord it"))
    assert "POST /v1/messages is not in" in text
    assert "query `beta`: sent None, recorded 'true'" in text


def test_anthropic_refuses_an_httpx_client(httpx2: Any) -> None:
    """Why the docs hand anthropic an httpx2 client: its SDK refuses httpx's."""
    anthropic = pytest.importorskip("anthropic")
    with Player() as player, pytest.raises(TypeError, match="httpx2"):
        anthropic.Anthropic(api_key="-", http_client=player.http)


@pytest.mark.parametrize(
    "option, client",
    [
        ("httpx_client", "httpx2_http"),
        ("httpx_async_client", "httpx2_async_http"),
        ("httpx_client", "http"),
        ("httpx_async_client", "async_http"),
    ],
)
def test_google_genai_replays_a_generate_content_exchange(
    httpx2: Any, tmp_path: Path, option: str, client: str
) -> None:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    with Player() as player:
        # the recording's API version; pydantic-ai's request sent an empty generationConfig
        options = types.HttpOptions(api_version="v1beta", **{option: getattr(player, client)})
        sdk = genai.Client(api_key="-", http_options=options)
        ask = {"model": "gemini-1.5-flash", "contents": "Hello!"}
        config = types.GenerateContentConfig()
        with player.use(_foreign("pydantic-ai-gemini-generate.yaml", tmp_path)) as tape:
            if option == "httpx_client":
                reply = sdk.models.generate_content(**ask, config=config)
            else:
                reply = asyncio.run(sdk.aio.models.generate_content(**ask, config=config))
            assert tape.unplayed() == []
    assert reply.text == "Hello there! How can I help you today?\n"
    assert reply.usage_metadata is not None
    assert reply.usage_metadata.prompt_token_count == 2
    assert reply.usage_metadata.candidates_token_count == 11


# ---- the pytest plugin: a user's tests on httpx2 clients ------------------------------------

USER_TESTS = """\
import asyncio

import httpx2
import openai
import pytest

QUESTION = "What is the capital of France?"


@pytest.fixture(autouse=True)
def model_server(toolreplay_chat_server, record_mode):
    if record_mode != "none":
        toolreplay_chat_server([{"content": "Paris."}], model="capitals")


@pytest.mark.vcr
def test_sync(model_server, toolreplay_model_settings):
    s = toolreplay_model_settings
    with httpx2.Client(trust_env=False) as http:
        client = openai.OpenAI(base_url=s.base_url, api_key=s.api_key or "-",
                               http_client=http, max_retries=0)
        reply = client.chat.completions.create(
            model=s.model, messages=[{"role": "user", "content": QUESTION}])
    assert reply.choices[0].message.content == "Paris."


@pytest.mark.vcr
def test_async(model_server, toolreplay_model_settings):
    s = toolreplay_model_settings

    async def ask():
        async with httpx2.AsyncClient(trust_env=False) as http:
            client = openai.AsyncOpenAI(base_url=s.base_url, api_key=s.api_key or "-",
                                        http_client=http, max_retries=0)
            return await client.chat.completions.create(
                model=s.model, messages=[{"role": "user", "content": QUESTION}])

    assert asyncio.run(ask()).choices[0].message.content == "Paris."
"""


@pytest.mark.slow
def test_the_plugin_records_replays_and_explains_misses_of_httpx2_clients(
    httpx2: Any, pytester: pytest.Pytester, loopback: None
) -> None:
    _openai_takes_httpx2(httpx2)
    pytester.makepyfile(test_user=USER_TESTS)
    pytester.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    args = ("-p", "no:cacheprovider")
    pytester.runpytest("--record-mode=rewrite", *args).assert_outcomes(passed=2)
    for name in ("test_sync", "test_async"):
        cassette = load_cassette(pytester.path / "cassettes" / "test_user" / f"{name}.yaml")
        request = cassette[0]["request"]
        assert request["uri"] == "http://127.0.0.1/v1/chat/completions"  # the port dropped
        assert request["parsed_body"]["model"] == "capitals"
    replay = ("--record-mode=none", "--block-network", *args)
    pytester.runpytest(*replay).assert_outcomes(passed=2)
    test_file = pytester.path / "test_user.py"
    test_file.write_text(USER_TESTS.replace("capital of France", "capital of Spain"))
    result = pytester.runpytest(*replay)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    for name in ("test_sync", "test_async"):
        assert (
            f"CassetteMiss: cassette miss in episode test_user.py::{name}: "
            "POST /v1/chat/completions is not in"
        ) in out
        assert f"re-record the cassette: pytest test_user.py::{name} --record-mode=rewrite" in out
    failures = out.split("short test summary info")[0]  # the summary may repeat it, width-dependent
    assert failures.count("message 1 (user) content differs at character 23") == 2
    assert "Connection error" not in out


ANTHROPIC_TESTS = """\
import anthropic
import httpx2
import pytest


def ask(**kwargs):
    with httpx2.Client(trust_env=False) as http:
        client = anthropic.Anthropic(api_key="-", http_client=http, max_retries=0)
        return client.messages.create(**kwargs)


@pytest.mark.vcr("test_messages.yaml")
def test_messages():
    message = ask(**MESSAGES, extra_query={"beta": "true"})
    assert message.content[0].text == "The capital of France is Paris."


@pytest.mark.vcr("test_messages.yaml")
def test_messages_without_the_query():
    ask(**MESSAGES)
"""


@pytest.mark.slow
def test_the_plugin_replays_anthropic_over_httpx2_and_names_its_miss(
    httpx2: Any, pytester: pytest.Pytester
) -> None:
    pytest.importorskip("anthropic")
    cassettes = pytester.path / "cassettes" / "test_claude"
    cassettes.mkdir(parents=True)
    convert_file(FOREIGN / "pydantic-ai-anthropic-messages.yaml", cassettes / "test_messages.yaml")
    pytester.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    pytester.makepyfile(test_claude=f"MESSAGES = {MESSAGES!r}\n\n{ANTHROPIC_TESTS}")
    result = pytester.runpytest(
        "--record-mode=none", "--block-network", "-p", "no:cacheprovider", "-rA"
    )
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "PASSED test_claude.py::test_messages\n" in out
    assert (
        "cassette miss in episode test_claude.py::test_messages_without_the_query: "
        "POST /v1/messages is not in"
    ) in out
    assert "query `beta`: sent None, recorded 'true'" in out
    assert "Connection error" not in out
