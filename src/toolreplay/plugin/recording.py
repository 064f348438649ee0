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
from toolreplay.cassettes.format import JsonBodySerializer, _json_body_matcher
from toolreplay.cassettes.miss import explain_miss, find_miss
from toolreplay.cassettes.vcr import one_request_at_a_time, unpatch_always
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
    unpatch_always(vcr)  # a refused save (a secret in the cassette) leaves nothing patched
    vcr.register_serializer("yaml", JsonBodySerializer)
    vcr.register_matcher("json_body", _json_body_matcher)
    for key, value in default_vcr_config().items():
        setattr(vcr, key, value)


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
def toolreplay_model_settings(record_mode: str) -> Any:
    from toolreplay.models.endpoint import model_settings
    from toolreplay.secrets import register, register_url

    settings = model_settings(read_key=record_mode != "none")
    # What a recording sends that is secret: a cassette holding it is refused before it is
    # written (the serializer's check), whatever the key's variable is called.
    register(settings.api_key)
    register_url(settings.base_url)
    return settings


@pytest.fixture
def chat_model(toolreplay_model_settings: Any) -> Iterator[Any]:
    import httpx

    from toolreplay.models.openai_chat import OpenAIChatModel

    with httpx.Client(trust_env=False) as http:
        yield OpenAIChatModel(toolreplay_model_settings, http)


@pytest.fixture
def http_session() -> Iterator[Any]:
    import requests

    with requests.Session() as session:
        session.trust_env = False
        yield session
