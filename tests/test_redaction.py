"""Secrets: one redaction step under everything written or printed; a recording that would
write a secret is refused before any file is written (issue 22's cases: a key echoed in a body
that is not UTF-8, userinfo in the base URL, a 401 body echoing the key on the console, the
pytest plugin's recordings)."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay import redaction
from toolreplay.cli.main import app
from toolreplay.models.base import ModelSettings
from toolreplay.outputs import atomic_write_bytes, atomic_write_text
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.record import record_live
from toolreplay.runs.target import RecordingError

from .conftest import EVAL_FILE

# recordings through the CLI, the recorder and the plugin against servers on loopback: the
# inner loop `pytest -m "not slow"` leaves them to CI
pytestmark = pytest.mark.slow

KEY = "-".join(["sk", "live", "9f8e7d6c5b4a39281706f5e4"])  # built: no key-like literal


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@contextmanager
def _server(status: int, body: bytes, content_type: str, plain: bytes = b"") -> Iterator[str]:
    """A model endpoint on loopback answering every request with ``status`` and ``body``
    (``plain`` instead when the query asks ``?plain=1``)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = plain if self.path.endswith("plain=1") else body
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


# ---- the step itself ------------------------------------------------------------------------


def test_redaction_covers_registered_keys_userinfo_query_and_environment(monkeypatch):
    monkeypatch.setenv("SOMEONES_API_KEY", "env-secret-0123456789")
    redaction.register(KEY)
    redaction.register_url("http://alice:pa55word-long@example.test/v1?api_key=qs-secret-value&x=1")
    text = f"{KEY} alice:pa55word-long@example.test qs-secret-value env-secret-0123456789 x=1"
    redacted = redaction.redact_text(text)
    for secret in (KEY, "pa55word-long", "qs-secret-value", "env-secret-0123456789"):
        assert secret not in redacted
    assert redacted.count(redaction.REDACTED) == 4 and redacted.endswith("x=1")
    assert redaction.redact_text("short k stays") == "short k stays"  # too short to be a key


def test_find_secret_decodes_binary_bodies_first():
    redaction.register(KEY)
    latin1 = b"\xff\xfe invalid key " + KEY.encode() + b" \xe9"
    utf16 = f"invalid key {KEY}".encode("utf-16")
    gzipped = gzip.compress(f"key {KEY}".encode())
    for body in (latin1, utf16, gzipped):
        where = redaction.find_secret({"interactions": [{"response": {"body": {"string": body}}}]})
        assert where == "interactions.0.response.body.string"
    assert redaction.find_secret({"body": b"\xff\xfe nothing here"}) is None


def test_every_file_written_passes_the_step(tmp_path):
    redaction.register(KEY)
    atomic_write_text(tmp_path / "results.json", json.dumps({"answer": f"echo {KEY}"}))
    atomic_write_bytes(tmp_path / "page.html", f"<p>{KEY}</p>".encode())
    assert KEY.encode() not in _all_bytes(tmp_path)
    assert json.loads((tmp_path / "results.json").read_text())["answer"] == "echo [redacted]"


def test_the_plugin_serializer_refuses_a_cassette_holding_a_key(monkeypatch):
    """The pytest plugin records with the same serializer: the key in the environment (any
    ``*_API_KEY``) is never written, even in a body stored as !!binary."""
    from toolreplay.cassettes.format import JsonBodySerializer

    monkeypatch.setenv("MY_PROVIDER_API_KEY", "plugin-key-0123456789")
    cassette = {
        "interactions": [
            {
                "request": {"uri": "https://x.test/v1/chat/completions", "body": b"{}"},
                "response": {"body": {"string": b"\xff echo plugin-key-0123456789"}},
            }
        ],
        "version": 1,
    }
    with pytest.raises(redaction.SecretFound, match="Refused before writing"):
        JsonBodySerializer.serialize(cassette)


# ---- recording ------------------------------------------------------------------------------


def test_a_key_echoed_in_a_body_that_is_not_utf8_is_refused_before_writing(
    suite, tmp_path, loopback
):
    import httpx
    import requests.adapters

    patched = (httpx.Client._send_single_request, requests.adapters.HTTPAdapter.send)
    body = b"\xff\xfeinvalid api key: " + KEY.encode() + b"\xe9\xff"
    with (
        _server(401, body, "application/octet-stream") as url,
        pytest.raises(RecordingError, match="appears in the cassette") as caught,
    ):
        record_live(
            tmp_path / "live",
            suite,
            [Configuration("single", "oneshot")],
            ModelSettings(base_url=url, model="m", api_key=KEY),
            tools_fixture=True,
            keep_errors=True,  # the error episode would be kept: its cassette holds the key
        )
    assert KEY not in str(caught.value)
    assert not (tmp_path / "live").exists()  # nothing written, not even the folder
    assert not any(p.name.startswith(".recording-") for p in tmp_path.iterdir())
    # the refused save left nothing patched: later requests are not sent into a dead cassette
    assert (httpx.Client._send_single_request, requests.adapters.HTTPAdapter.send) == patched


def test_userinfo_of_the_base_url_is_never_written(suite, tmp_path, loopback):
    from toolreplay.study.weather.standin import standin_server

    with standin_server(suite) as model_url:
        url = model_url.replace("http://", "http://alice:userinfo-secret-42@")
        record_live(
            tmp_path / "live",
            suite,
            [Configuration("single", "oneshot")],
            ModelSettings(base_url=url, model="toolreplay-standin", api_key=KEY),
            tools_fixture=True,
        )
    written = _all_bytes(tmp_path / "live")
    assert b"userinfo-secret-42" not in written and b"alice" not in written
    assert KEY.encode() not in written


def test_a_401_body_echoing_the_key_is_not_printed(tmp_path, monkeypatch, loopback):
    monkeypatch.setenv("PROBE_KEY", KEY)
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}).encode()
    with _server(401, body, "application/json") as url:
        result = CliRunner().invoke(
            app,
            ["record", "--model-source", "live", "--eval", str(EVAL_FILE), "--set", "x",
             "--cassettes", str(tmp_path), "--base-url", url,
             "--api-key-env", "PROBE_KEY", "--model", "m", "--tools", "fixture",
             "--no-ablations"],
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Refused before writing" in result.output  # the cassette would have held it
    assert KEY not in result.output
    assert not (tmp_path / "x").exists()


def test_console_output_survives_an_ascii_stream():
    import io

    raw = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    stream = redaction.SafeStream(raw)
    stream.write("北京今天多少度？\n")
    raw.flush()
    assert raw.buffer.getvalue() == b"\\u5317\\u4eac\\u4eca\\u5929\\u591a\\u5c11\\u5ea6\\uff1f\n"


PLUGIN_TESTS = """
import os
import urllib.request

import pytest


@pytest.mark.toolreplay
@pytest.mark.vcr
def test_echo():
    urllib.request.urlopen(os.environ["ECHO_URL"]).read()


@pytest.mark.toolreplay
@pytest.mark.vcr
def test_after():
    urllib.request.urlopen(os.environ["ECHO_URL"] + "?plain=1").read()
"""


def test_the_plugin_refuses_a_recording_that_would_write_the_key(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, loopback: None
) -> None:
    """A team's own suite recording through the plugin: the key in the environment, echoed
    in a body that is not UTF-8, is refused before the cassette is written; the next test
    records normally (nothing was left patched)."""
    key = "plugin-" + "0f1e2d3c4b5a69788796"
    monkeypatch.setenv("MY_SERVICE_API_KEY", key)
    body = b"\xff\xfe echo " + key.encode() + b" \xe9"
    pytester.makepyfile(test_echo=PLUGIN_TESTS)
    with _server(200, body, "application/octet-stream", plain=b"fine") as url:
        monkeypatch.setenv("ECHO_URL", url)
        result = pytester.runpytest("--record-mode=once", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    assert "appears in the cassette" in result.stdout.str()
    cassettes = pytester.path / "cassettes" / "test_echo"
    assert not (cassettes / "test_echo.yaml").exists()
    assert (cassettes / "test_after.yaml").exists()
    written = b"".join(p.read_bytes() for p in cassettes.rglob("*") if p.is_file())
    assert key.encode() not in written
