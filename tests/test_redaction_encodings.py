"""Secrets in any encoding (issue 34): a key a server echoes base64-encoded (standard or
URL-safe, at any offset of a longer value), in hexadecimal or percent-encoded is found,
refused before a cassette is written and redacted from every file and both streams."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from toolreplay import redaction
from toolreplay.cli.main import app

from .conftest import EVAL_FILE
from .test_redaction import KEY, _all_bytes, _server

ENCODERS = {
    "base64": lambda b: base64.b64encode(b).decode(),
    "base64url": lambda b: base64.urlsafe_b64encode(b).decode(),
    "base64url-unpadded": lambda b: base64.urlsafe_b64encode(b).decode().rstrip("="),
    "hex": lambda b: b.hex(),
    "HEX": lambda b: b.hex().upper(),
}


def _encoded_forms(secret: str) -> dict[str, str]:
    """``secret`` encoded as a server might echo it, written from the encodings' definitions
    (not from :func:`redaction.text_forms`), each inside a longer encoded value."""
    forms = {}
    for name, encode in ENCODERS.items():
        for prefix in (b"", b"u", b"us", b"user:"):
            forms[f"{name}+{len(prefix)}"] = encode(prefix + secret.encode() + b":tail")
    forms["percent"] = "q=" + quote(secret, safe="")
    forms["percent-path"] = "/v1/" + quote(secret)
    return forms


@pytest.mark.parametrize("form", sorted(_encoded_forms(KEY)))
def test_every_encoded_form_is_found_and_redacted(form):
    encoded = _encoded_forms(KEY)[form]
    assert redaction.find_secret({"body": f"echo: {encoded}!"}, [KEY]) == "body"
    assert redaction.find_secret([encoded.encode("utf-8")], [KEY]) == "0"
    assert redaction.REDACTED in redaction.redact_text(encoded, [KEY])
    assert redaction.REDACTED.encode() in redaction.redact_bytes(encoded.encode(), [KEY])


@settings(max_examples=200, deadline=None)
@given(
    secret=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=8),
    before=st.binary(max_size=7),
    after=st.binary(max_size=7),
    urlsafe=st.booleans(),
)
def test_base64_at_any_offset_is_found(secret, before, after, urlsafe):
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(before + secret.encode("utf-8") + after).decode()
    assert redaction.find_secret(blob, [secret]) is not None
    assert redaction.redact_text(blob, [secret]) != blob


def test_ordinary_text_and_the_committed_cassettes_hold_no_form_of_a_key():
    root = Path(__file__).resolve().parents[1]
    data = _all_bytes(root / "cassettes" / "reference")
    assert data and redaction.find_secret(data, [KEY]) is None
    assert redaction.redact_bytes(data, [KEY]) == data


def _answer(content: str) -> bytes:
    return json.dumps(
        {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop",
                      "message": {"role": "assistant", "content": content}}]}
    ).encode()  # fmt: skip


def _record(url: str, folder: Path, *extra: str):
    return CliRunner().invoke(
        app,
        ["record", "--model-source", "live", "--eval", str(EVAL_FILE), "--set", "x",
         "--cassettes", str(folder), "--base-url", url, "--api-key-env", "PROBE_KEY",
         "--model", "m", "--tools", "fixture", "--no-ablations", *extra],
    )  # fmt: skip


def _leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    encodings = {n: f.encode() for n, f in _encoded_forms(KEY).items()}
    encodings["plain"] = KEY.encode()
    cores = [base64.b64encode(KEY.encode()).decode()[:10].encode(), KEY.encode().hex().encode()]
    return [n for n, f in encodings.items() if f in data] + [c.decode() for c in cores if c in data]


@pytest.mark.slow
@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.parametrize("keep_errors", [False, True])
def test_a_key_echoed_base64_encoded_is_neither_written_nor_printed(
    tmp_path, monkeypatch, loopback, status, keep_errors
):
    monkeypatch.setenv("PROBE_KEY", KEY)
    token = base64.b64encode(b"session:" + KEY.encode()).decode()
    body = (
        _answer(f"Your session token is {token}")
        if status == 200
        else json.dumps({"error": {"message": f"upstream rejected token {token}"}}).encode()
    )
    with _server(status, body, "application/json") as url:
        result = _record(url, tmp_path, *(["--keep-errors"] if keep_errors else []))
    assert result.exit_code == 1, result.output
    assert not _leaks(result.output), result.output
    written = _all_bytes(tmp_path)
    assert not _leaks(written)
    if status == 200 or keep_errors:  # the cassette would have held it: refused, nothing kept
        assert "Refused before writing" in result.output
        assert not (tmp_path / "x").exists()
