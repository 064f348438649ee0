"""The pytest plugin is opt-in: a plain pytest-recording suite (vcrpy's own yaml cassettes,
response headers such as ``ETag``, an interaction left unplayed) gives the same results with
toolreplay installed as with ``-p no:toolreplay``, and records the same bytes; a test marked
``@pytest.mark.toolreplay``, one using the plugin's model fixtures, or a suite with the ini
option ``toolreplay_cassettes = true`` gets toolreplay's cassettes (readable serializer,
header filter, unplayed check, a missing cassette named as missing)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

#: A cassette in plain vcrpy's yaml format, as pytest-recording writes it without toolreplay.
PLAIN_CASSETTE = """\
interactions:
- request:
    body: null
    headers:
      User-Agent:
      - Python-urllib/3
    method: GET
    uri: http://api.example.invalid/item
  response:
    body:
      string: '{"id": 1}'
    headers:
      Content-Type:
      - application/json
      ETag:
      - '"v1"'
    status:
      code: 200
      message: OK
version: 1
"""

PLAIN_TESTS = """\
import os
import urllib.request

import pytest

URL = "http://api.example.invalid/item"


# (no `with` on the reply: vcrpy's replayed response swallows an exception raised in it)

@pytest.mark.vcr
def test_etag_is_replayed():
    reply = urllib.request.urlopen(URL)
    assert reply.read() == b'{"id": 1}'
    assert reply.headers["ETag"] == '"v1"'


@pytest.mark.vcr
def test_one_of_two_interactions_played():
    reply = urllib.request.urlopen(URL)
    assert reply.status == 200


@pytest.mark.vcr
def test_records():
    url = os.environ.get("OPT_IN_SERVER_URL")
    if url is None:
        pytest.skip("no server to record from")
    reply = urllib.request.urlopen(url)
    assert reply.read() == b'{"id": 2}'
    assert reply.headers["ETag"] == '"v2"'
"""

NOT_OPTED_IN = {"passed": 2, "skipped": 1}


@pytest.fixture
def plain_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytest-recording suite that knows nothing of toolreplay: two hand-written cassettes
    in vcrpy's own format (one interaction twice in the second), and a test that records."""
    pytester.makepyfile(test_plain=PLAIN_TESTS)
    cassettes = pytester.mkdir("cassettes") / "test_plain"
    cassettes.mkdir()
    (cassettes / "test_etag_is_replayed.yaml").write_text(PLAIN_CASSETTE, encoding="utf-8")
    head, interactions = PLAIN_CASSETTE.split("interactions:\n", 1)
    body, _version = interactions.rsplit("version: 1\n", 1)
    twice = f"{head}interactions:\n{body}{body}version: 1\n"
    (cassettes / "test_one_of_two_interactions_played.yaml").write_text(twice, encoding="utf-8")
    return pytester


def _run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest("--record-mode=none", "-p", "no:cacheprovider", *args)


def _mark_module(suite: pytest.Pytester, marker: str = "pytest.mark.toolreplay") -> None:
    path = suite.path / "test_plain.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(f"{text}\npytestmark = {marker}\n", encoding="utf-8")


def _assert_toolreplay_behaviour(result: pytest.RunResult) -> None:
    """The ETag is filtered out of the plain cassette on replay, and the interaction left
    unplayed fails its test: toolreplay's header policy and unplayed check."""
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1)
    out = result.stdout.str()
    assert "FAILED test_plain.py::test_etag_is_replayed - assert None == '\"v1\"'" in out
    assert "left 1 recorded interaction(s)" in out
    assert "test_one_of_two_interactions_played.yaml unplayed" in out


@pytest.mark.slow
def test_a_plain_suite_runs_as_without_toolreplay(plain_suite: pytest.Pytester) -> None:
    with_it = _run(plain_suite)
    without = _run(plain_suite, "-p", "no:toolreplay")
    with_it.assert_outcomes(**NOT_OPTED_IN)
    without.assert_outcomes(**NOT_OPTED_IN)
    assert with_it.parseoutcomes() == without.parseoutcomes()


@pytest.mark.slow
def test_the_marker_opts_a_module_in(plain_suite: pytest.Pytester) -> None:
    _mark_module(plain_suite)
    _assert_toolreplay_behaviour(_run(plain_suite, "-rfE"))


def test_the_marker_opts_one_test_in(plain_suite: pytest.Pytester) -> None:
    path = plain_suite.path / "test_plain.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "@pytest.mark.vcr\ndef test_etag",
            "@pytest.mark.toolreplay\n@pytest.mark.vcr\ndef test_etag",
        ),
        encoding="utf-8",
    )
    result = _run(plain_suite, "-rfE")
    result.assert_outcomes(passed=1, failed=1, skipped=1)  # the unmarked test is not checked
    assert "left 1 recorded interaction" not in result.stdout.str()


def test_the_ini_option_opts_the_suite_in(plain_suite: pytest.Pytester) -> None:
    plain_suite.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    _assert_toolreplay_behaviour(_run(plain_suite, "-rfE"))


def test_the_marker_opts_out_under_the_ini_option(plain_suite: pytest.Pytester) -> None:
    plain_suite.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    _mark_module(plain_suite, "pytest.mark.toolreplay(False)")
    _run(plain_suite).assert_outcomes(**NOT_OPTED_IN)


@pytest.mark.slow
def test_a_model_fixture_opts_a_test_in(plain_suite: pytest.Pytester) -> None:
    path = plain_suite.path / "test_plain.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("def test_etag_is_replayed():", "def test_etag_is_replayed(chat_model):"),
        encoding="utf-8",
    )
    result = _run(plain_suite)
    result.assert_outcomes(passed=1, failed=1, skipped=1)


@pytest.mark.slow
def test_the_marker_and_the_option_are_registered(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfigure()
    markers = config.getini("markers")
    assert any(m.startswith("toolreplay: ") and "toolreplay(False)" in m for m in markers)
    assert any(m.startswith("allow_unplayed: ") for m in markers)
    assert config.getini("toolreplay_cassettes") is False
    help_text = pytester.runpytest("--help").stdout.str()
    assert "toolreplay_cassettes (bool)" in help_text


class _Handler(BaseHTTPRequestHandler):
    server_version = "Fixture/1"
    sys_version = ""

    def do_GET(self) -> None:
        body = b'{"id": 2}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("ETag", '"v2"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def date_time_string(self, timestamp: float | None = None) -> str:
        return "Thu, 01 Jan 2026 00:00:00 GMT"  # the same bytes in every recording

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server_url(loopback: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/item"
    monkeypatch.setenv("OPT_IN_SERVER_URL", url)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def _record(suite: pytest.Pytester, *args: str) -> str:
    cassette = suite.path / "cassettes" / "test_plain" / "test_records.yaml"
    cassette.unlink(missing_ok=True)
    result = suite.runpytest(
        "--record-mode=once", "-p", "no:cacheprovider", "-k", "test_records", *args
    )
    result.assert_outcomes(passed=1)
    return cassette.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_plain_recording_is_vcrpys_own(plain_suite: pytest.Pytester, server_url: str) -> None:
    recorded = _record(plain_suite)
    assert recorded == _record(plain_suite, "-p", "no:toolreplay")
    assert "ETag:" in recorded and "string: '{\"id\": 2}'" in recorded
    assert server_url in recorded  # the port is kept, as vcrpy keeps it


@pytest.mark.slow
def test_a_marked_recording_is_toolreplays(plain_suite: pytest.Pytester, server_url: str) -> None:
    _mark_module(plain_suite)
    recorded = _record(plain_suite)
    assert recorded.startswith("version: 1\ninteractions:\n")
    assert "parsed_body:\n        id: 2" in recorded  # the JSON body stored parsed
    assert "etag" not in recorded.lower()  # only content-type headers kept
    assert "uri: http://127.0.0.1/item" in recorded  # the loopback port dropped


def test_a_missing_cassette_is_named_as_missing(plain_suite: pytest.Pytester) -> None:
    _mark_module(plain_suite)
    missing = plain_suite.path / "cassettes" / "test_plain" / "test_etag_is_replayed.yaml"
    missing.unlink()
    result = _run(plain_suite, "-k", "etag")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert f"cassette missing: {missing} does not exist" in out
    assert "record mode none records nothing" in out
    assert "sent GET /item" in out
    assert "test_etag_is_replayed --record-mode=rewrite" in out
    assert "0 of 0 recorded interactions played" not in out


@pytest.mark.slow
def test_a_plain_missing_cassette_fails_as_without_toolreplay(
    plain_suite: pytest.Pytester,
) -> None:
    missing = plain_suite.path / "cassettes" / "test_plain" / "test_etag_is_replayed.yaml"
    missing.unlink()
    outs = []
    for args in ((), ("-p", "no:toolreplay")):
        result = _run(plain_suite, "-k", "etag", *args)
        result.assert_outcomes(failed=1)
        outs.append(result.stdout.str())
    for out in outs:
        assert "CannotOverwriteExistingCassetteException" in out
        assert "cassette missing" not in out
