"""The part of the pytest plugin that needs pytest-recording (see :mod:`.pytest_plugin`).

Everything here acts only on the tests that opt in (:func:`~.config.uses_toolreplay`); every
other ``@pytest.mark.vcr`` test runs as pytest-recording runs it without toolreplay."""

from __future__ import annotations

import os
import shlex
from collections.abc import Generator, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.format import JsonBodySerializer, json_body_matcher
from toolreplay.cassettes.miss import explain_miss, find_miss
from toolreplay.cassettes.vcr import AtomicPersister, one_request_at_a_time, unpatch_always
from toolreplay.plugin import transaction
from toolreplay.plugin.config import default_vcr_config, uses_toolreplay

_FAILED = pytest.StashKey[bool]()
#: The test running now: pytest-recording's hook builds its VCR without naming the test.
_RUNNING = pytest.StashKey[pytest.Item]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    item.config.stash[_RUNNING] = item
    try:
        return (yield)
    finally:
        del item.config.stash[_RUNNING]


def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    """Make toolreplay's serializer, matcher and filters the defaults of this test's VCR, when
    the test opts in; another test's VCR is left as pytest-recording built it."""
    item = config.stash.get(_RUNNING, None)
    if item is None or not uses_toolreplay(item):
        return
    transaction.configure(item, vcr)  # a rewrite records beside the cassette it replaces
    unpatch_always(vcr)  # a refused save (a secret in the cassette) leaves nothing patched
    vcr.register_serializer("yaml", JsonBodySerializer)
    vcr.register_matcher("json_body", json_body_matcher)
    # cassettes are read through toolreplay's checked loader (one-line errors naming the file
    # and the interaction, another serializer's shape named as such) and written atomically
    vcr.register_persister(_CheckedPersister(list(getattr(vcr.persister, "extra_paths", []))))
    for key, value in default_vcr_config().items():
        setattr(vcr, key, value)


class _CheckedPersister:
    """pytest-recording's persister (the test's cassette, plus the extra cassettes named in
    ``@pytest.mark.vcr("extra.yaml")``, saving only the first) with every file read through
    toolreplay's checked loader and written atomically
    (:class:`~toolreplay.cassettes.vcr.AtomicPersister`)."""

    def __init__(self, extra_paths: list[str]) -> None:
        self.extra_paths = extra_paths

    def load_cassette(self, cassette_path: str, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError

        requests: list[Any] = []
        responses: list[Any] = []
        for path in dict.fromkeys([str(cassette_path), *self.extra_paths]):
            try:
                more = AtomicPersister.load_cassette(path, serializer)
            except CassetteNotFoundError:
                continue
            requests += more[0]
            responses += more[1]
        if not requests:
            raise CassetteNotFoundError()
        return requests, responses

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: Any, serializer: Any) -> None:
        AtomicPersister.save_cassette(cassette_path, cassette_dict, serializer)


def _rerecord(item: pytest.Item) -> str:
    return f"pytest {shlex.quote(item.nodeid)} --record-mode=rewrite"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    __tracebackhide__ = True
    try:
        return (yield)
    except Exception as exc:
        miss = find_miss(exc)
        if miss is None or not uses_toolreplay(item):
            raise
        missing = _missing_cassette(miss, item)
        if missing is not None:
            raise missing from None
        advice = f"If the change is intended, re-record the cassette: {_rerecord(item)}"
        raise explain_miss(miss, item.nodeid, _rerecord(item), advice=advice) from None


def _missing_cassette(miss: Any, item: pytest.Item) -> CassetteError | None:
    """A miss on a cassette file that does not exist (or holds no interaction), named as such:
    vcrpy plays a missing cassette as an empty one."""
    cassette: Any = getattr(miss, "cassette", None)
    path = getattr(cassette, "_path", None)
    if path is None or len(getattr(cassette, "requests", ())):
        return None
    req = miss.failed_request
    what = "holds no recorded interaction" if os.path.exists(path) else "does not exist"
    mode = getattr(cassette.record_mode, "value", cassette.record_mode)
    return CassetteError(
        f"cassette missing: {path} {what}, and record mode {mode} records nothing; "
        f"{item.nodeid} sent {req.method} {urlsplit(req.uri).path}. "
        f"Record the cassette: {_rerecord(item)}"
    )


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    """A cassette that does not load (malformed, another serializer's shape) fails the test
    with the loader's one-line error instead of a traceback through vcrpy. Before the ``vcr``
    fixture, a recording's transaction starts (:func:`.transaction.before_vcr`)."""
    if fixturedef.argname == "vcr":
        transaction.before_vcr(request)
    try:
        return (yield)
    except CassetteError as exc:
        if fixturedef.argname != "vcr" or not uses_toolreplay(request.node):
            raise
        message = str(exc)
    pytest.fail(message, pytrace=False)  # outside the except: no "during handling" chain


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture(autouse=True)
def _toolreplay_all_played(request: pytest.FixtureRequest, vcr: Any) -> Iterator[None]:
    """With record mode ``none``, fail a test that left recorded interactions unplayed.

    While the test runs, ``requests`` sends take turns under the cassette and a recording keeps
    each tool round in call order (:func:`~toolreplay.cassettes.vcr.one_request_at_a_time`):
    vcrpy is not thread-safe, and parallel tool calls would otherwise slip past it.
    Only for the tests that opt in (:func:`~toolreplay.plugin.config.uses_toolreplay`)."""
    if vcr is None or not uses_toolreplay(request.node):
        yield
        return
    with one_request_at_a_time(vcr):
        yield
    cassette = vcr
    mode = getattr(cassette.record_mode, "value", cassette.record_mode)
    if mode == "none" and any(cassette.play_counts.values()):
        from toolreplay.plugin.report import remember

        remember(request.node, cassette)  # for --toolreplay-report
    if cassette is None or request.node.get_closest_marker("allow_unplayed"):
        return
    if request.node.stash.get(_FAILED, False):
        return  # the test failed already; its own error says more
    mode = getattr(cassette.record_mode, "value", cassette.record_mode)
    if mode != "none" or cassette.all_played:
        return
    left = [
        f"interaction {i + 1}: {r.method} {urlsplit(r.uri).path}"
        for i, r in enumerate(cassette.requests)
        if not cassette.play_counts[i]
    ]
    pytest.fail(
        f"{request.node.nodeid} left {len(left)} recorded interaction(s) of "
        f"{cassette._path} unplayed ({'; '.join(left)}): the code made fewer requests than "
        f"were recorded. Re-record if intended: {_rerecord(request.node)}",
        pytrace=False,
    )


@pytest.fixture
def toolreplay_model_settings(record_mode: str, request: pytest.FixtureRequest) -> Any:
    """The model settings ``chat_model`` uses (see :mod:`toolreplay.plugin.settings`): in
    record mode ``none``, the base URL and model of the test's cassette (no environment
    needed); when recording, the environment's, with the key paired with its endpoint."""
    from toolreplay.plugin.settings import recorded_settings, recording_settings
    from toolreplay.redaction import register, register_url

    if record_mode == "none":
        return recorded_settings(request.getfixturevalue("vcr"))
    try:
        settings = recording_settings()
    except ValueError as exc:
        message = str(exc)
    else:
        # What a recording sends that is secret: a cassette holding it is refused before it
        # is written (the serializer's check), whatever the key's variable is called.
        register(settings.api_key)
        register_url(settings.base_url)
        return settings
    if "toolreplay_chat_server" in request.fixturenames:
        message += (
            ". This test uses toolreplay_chat_server, but toolreplay_model_settings was set up "
            "before the scripted server was started: start it in a fixture that is set up "
            "first (list that fixture before toolreplay_model_settings in the arguments of "
            "the fixture that builds your client), not in the test itself"
        )
    pytest.fail(message, pytrace=False)


@pytest.fixture
def chat_model(toolreplay_model_settings: Any) -> Iterator[Any]:
    """The model client of the settings' protocol (:func:`toolreplay.models.endpoint.
    chat_model`: an :class:`~toolreplay.models.openai_chat.OpenAIChatModel` for Chat
    Completions) over an ``httpx.Client`` without the environment's proxy settings: openai
    1.x, 2.x and 3.x all take httpx's client (3.x and 2.47 or later take httpx2's too), and
    the Anthropic client bridges it to the httpx2 client its SDK needs."""
    import httpx

    from toolreplay.models.endpoint import chat_model as model_for

    with httpx.Client(trust_env=False) as http:
        yield model_for(toolreplay_model_settings, http)


@pytest.fixture
def http_session() -> Iterator[Any]:
    import requests

    with requests.Session() as session:
        session.trust_env = False
        yield session


@pytest.fixture
def toolreplay_chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start a scripted model on loopback for recording
    (:func:`toolreplay.doubles.scripted.scripted_chat_server`: Chat Completions, the Responses
    API, Anthropic Messages and Gemini on one port): call it with a script (a list of
    assistant messages, or a function of the request body) and, optionally, the model name;
    it sets ``TOOLREPLAY_BASE_URL`` and ``TOOLREPLAY_MODEL`` for the test and returns the
    running :class:`~toolreplay.doubles.scripted.ScriptedChatServer` (``base_url``,
    ``root_url``, ``requests``, ``paths``). Stopped when the test ends."""
    from contextlib import ExitStack

    from toolreplay.doubles.scripted import SCRIPTED_MODEL, Script, scripted_chat_server

    with ExitStack() as stack:

        def start(script: Script, model: str = SCRIPTED_MODEL) -> Any:
            server = stack.enter_context(scripted_chat_server(script))
            monkeypatch.setenv("TOOLREPLAY_BASE_URL", server.base_url)
            monkeypatch.setenv("TOOLREPLAY_MODEL", model)
            return server

        yield start
