"""The HTTP envelope of recorded interactions: a reply body's ``Content-Encoding`` undone or
told apart from a body stored already decoded, vcrpy's older httpx form, and the YAML tags
aiohttp recordings hold (multidict's ``istr`` header names).

Expected values come from the specifications (RFC 9110 §8.4: codings listed in the order
applied; RFC 1952: a gzip file may hold several members), from httpx's own decoding of the
same bytes, from vcrpy's own replay of its older httpx form
(``vcr.stubs.httpx_stubs._deserialize_response``) and from the openai SDK's parsing of the
recorded bodies, not from this project's output. Cassettes from other projects
(``tests/data/foreign/``): Arize-ai/openinference ``1fe497f1d9f4`` (Apache-2.0) and
DataDog/dd-trace-py ``3bb9ecda2283`` (BSD-3-Clause or Apache-2.0); each file names its path.
"""

from __future__ import annotations

import gzip
import json
import sys
import types
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from toolreplay.cassettes.episodes import episodes_from_cassette
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.store import load_cassette
from toolreplay.inputs import checked_loader, load_yaml
from toolreplay.wire.content_encoding import decode_body
from toolreplay.wire.interactions import WireEpisodeError, read_exchanges

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
PORTKEY = FOREIGN / "openinference-portkey-httpx-old-format.yaml"
TOOL_CALL = FOREIGN / "ddtrace-openai-httpx-old-format-tool-call.yaml"
RESPONSES = FOREIGN / "ddtrace-openai-httpx-old-format-responses.yaml"
ISTR_APPLY = FOREIGN / "ddtrace-anthropic-aiohttp-istr.yaml"
ISTR_NEW = FOREIGN / "ddtrace-openai-aiohttp-istr-new.yaml"
GEMINI_PLAIN = FOREIGN / "openinference-langchain-gemini-gzip-header-plain.yaml"
BROTLI = FOREIGN / "openinference-agno-brotli.yaml"

#: Every Content-Encoding value the reader is asked to undo, alone and chained.
HEADERS = [
    "gzip",
    "x-gzip",
    "deflate",
    "br",
    "zstd",
    "identity",
    "compress",
    "GZIP",
    "gzip, deflate",
    "deflate, gzip",
    "gzip, br",
]

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _yaml(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"])


# --- Content-Encoding ---------------------------------------------------------------------


def test_a_plain_json_body_under_a_gzip_header_is_kept_whole() -> None:
    """Raw deflate 'decodes' ``{\\n  `` to one byte and stops: the rest of the body is left
    over, so the decoding is not taken."""
    body = b'{\n  "id": "chatcmpl-1"}'
    assert zlib.decompressobj(-zlib.MAX_WBITS).decompress(body) != body  # the trap
    for header in ("gzip", "deflate"):
        assert decode_body(body, header) == (body, "")
    assert decode_body(b'[{\n  "a": 1}]', "deflate") == (b'[{\n  "a": 1}]', "")


@settings(max_examples=300, deadline=None)
@given(
    value=_json,
    indent=st.sampled_from([None, 0, 1, 2]),
    ascii_only=st.booleans(),
    header=st.sampled_from(HEADERS),
)
def test_a_json_body_is_never_mangled_under_any_header(
    value: Any, indent: int | None, ascii_only: bool, header: str
) -> None:
    body = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode("utf-8")
    assert decode_body(body, header) == (body, "")


@settings(max_examples=150, deadline=None)
@given(events=st.lists(_json, min_size=1, max_size=4), header=st.sampled_from(HEADERS))
def test_an_event_stream_body_is_never_mangled(events: list[Any], header: str) -> None:
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode("utf-8")
    assert decode_body(body, header) == (body, "")


@settings(max_examples=200, deadline=None)
@given(payload=st.binary(max_size=600) | _json.map(lambda v: json.dumps(v).encode()))
def test_compressed_bodies_decode_as_httpx_decodes_them(payload: bytes) -> None:
    assert decode_body(gzip.compress(payload), "x-gzip") == (payload, "")  # httpx: no x-gzip
    for header, body in [
        ("gzip", gzip.compress(payload)),
        ("deflate", zlib.compress(payload)),  # zlib-wrapped, as RFC 9110 says
        ("deflate", _raw_deflate(payload)),  # raw, as some servers send it
        ("deflate, gzip", gzip.compress(zlib.compress(payload))),  # applied in that order
    ]:
        by_httpx = httpx.Response(200, headers={"content-encoding": header}, content=body)
        assert decode_body(body, header) == (payload, "") == (by_httpx.content, "")


def test_gzip_members_one_after_another_decode_whole() -> None:
    body = gzip.compress(b'{"a": ') + gzip.compress(b"1}")
    assert gzip.decompress(body) == b'{"a": 1}'  # RFC 1952: a file of two members
    assert decode_body(body, "gzip") == (b'{"a": 1}', "")


@settings(max_examples=100, deadline=None)
@given(payload=_json.map(lambda v: json.dumps(v).encode()), trailing=st.binary(max_size=40))
def test_bytes_after_a_whole_gzip_member_are_ignored_as_httpx_ignores_them(
    payload: bytes, trailing: bytes
) -> None:
    """A server (or a proxy) that pads a gzip body: the member decodes, what follows is
    left, as httpx (which the SDK replays through) and zlib do; a second member still adds."""
    body = gzip.compress(payload) + trailing
    by_httpx = httpx.Response(200, headers={"content-encoding": "gzip"}, content=body)
    if trailing.startswith(b"\x1f\x8b"):
        return  # the start of another member: decoded as one (or refused when broken)
    assert decode_body(body, "gzip") == (payload, "") == (by_httpx.content, "")


def test_a_binary_body_that_does_not_decode_is_kept_with_a_fault() -> None:
    cut = gzip.compress(b'{"id": "x", "choices": []}' * 20)[:40]
    body, fault = decode_body(cut, "gzip")
    assert body == cut
    assert fault.startswith("the body is not read: it is not text and does not decode")
    assert "Content-Encoding gzip" in fault


def test_an_unknown_encoding_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    body = gzip.compress(b"{}")
    plain, fault = decode_body(body, "compress")
    assert plain == body
    assert "Content-Encoding 'compress'" in fault
    assert "gzip, deflate, br, zstd" in fault


@pytest.mark.parametrize(
    ("header", "modules", "install"),
    [
        ("br", ("brotli", "brotlicffi"), "pip install brotli"),
        ("zstd", ("zstandard", "compression.zstd"), "pip install zstandard"),
    ],
)
def test_an_encoding_whose_module_is_missing_names_what_to_install(
    monkeypatch: pytest.MonkeyPatch, header: str, modules: tuple[str, ...], install: str
) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    body = bytes(range(256))
    assert decode_body(body, header) == (
        body,
        f"the body is not read: it is compressed with Content-Encoding {header}, which needs "
        f"the {modules[0]}{' (or brotlicffi)' if header == 'br' else ''} module ({install})",
    )
    assert decode_body(b'{"a": 1}', header) == (b'{"a": 1}', "")  # stored decoded


def test_brotli_is_decoded_by_the_module_when_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    class BrotliError(Exception):
        pass

    compressed = b"\x8b\x03\x80{}\x03"

    def decompress(data: bytes) -> bytes:
        if data != compressed:
            raise BrotliError("corrupt input")
        return b"{}"

    fake = types.SimpleNamespace(decompress=decompress, error=BrotliError)
    monkeypatch.setitem(sys.modules, "brotli", fake)
    assert decode_body(compressed, "br") == (b"{}", "")
    _, fault = decode_body(b"\x8b\x03\x80\x00\x01", "br")
    assert "does not decode as Content-Encoding br (corrupt input)" in fault


def test_the_brotli_reply_names_the_encoding_not_a_json_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """openinference's agno cassette: a Responses API reply stored as brotli bytes."""
    monkeypatch.setitem(sys.modules, "brotli", None)
    monkeypatch.setitem(sys.modules, "brotlicffi", None)
    [episode] = episodes_from_cassette(BROTLI)
    assert episode.stop_reason == "error"
    assert episode.error == (
        "https://api.openai.com/v1/responses: HTTP 200: the body is not read: it is "
        "compressed with Content-Encoding br, which needs the brotli (or brotlicffi) module "
        "(pip install brotli)"
    )


def test_an_error_status_with_an_unread_body_keeps_the_status_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "brotli", None)
    monkeypatch.setitem(sys.modules, "brotlicffi", None)
    [item] = _yaml(BROTLI)
    item["response"]["status"] = {"code": 500, "message": "Internal Server Error"}
    from toolreplay.wire.replies import exchange_status_error

    fault = exchange_status_error(read_exchanges([item])[0])
    assert fault is not None and fault.status == 500
    assert fault.problem.startswith("InternalServerError: the body is not read: ")


def test_a_gemini_reply_stored_decoded_under_gzip_reads_as_recorded() -> None:
    """openinference's langchain cassette: the streamGenerateContent reply (a JSON array) was
    stored as text with ``Content-Encoding: gzip`` kept."""
    [item] = _yaml(GEMINI_PLAIN)
    recorded = item["response"]["body"]["string"]
    [exchange] = read_exchanges([item])
    assert exchange.response_body == recorded.encode("utf-8")
    assert exchange.body_fault == ""
    assert exchange.response_json() == json.loads(recorded)


# --- vcrpy's older httpx form -------------------------------------------------------------


@pytest.mark.parametrize("path", [PORTKEY, TOOL_CALL, RESPONSES])
def test_the_older_httpx_form_reads_as_vcrpy_replays_it(path: Path) -> None:
    from vcr.stubs.httpx_stubs import _deserialize_response

    interactions = _yaml(path)
    assert all("status_code" in i["response"] for i in interactions)
    for item, exchange in zip(interactions, read_exchanges(interactions), strict=True):
        replayed = _deserialize_response(item["response"], httpx)
        assert exchange.status == replayed.status_code
        assert exchange.response_body == replayed.read()
        assert exchange.body_fault == ""
        assert exchange.method == item["request"]["method"]
        assert exchange.request_body == json.loads(item["request"]["body"])


def test_the_older_httpx_form_chat_replies_match_the_sdk() -> None:
    from openai.types.chat import ChatCompletion

    for path, calls in [(PORTKEY, 0), (TOOL_CALL, 1)]:
        [item] = _yaml(path)
        sdk = ChatCompletion.model_validate_json(item["response"]["content"])
        [episode] = episodes_from_cassette(path)
        reply = episode.rounds[0].reply
        message = sdk.choices[0].message
        assert (reply.content or None) == message.content
        assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
            (c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
        ]
        assert len(reply.tool_calls) == calls
        assert sdk.usage is not None
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
            sdk.usage.prompt_tokens,
            sdk.usage.completion_tokens,
        )


def test_the_older_httpx_form_responses_reply_matches_the_body() -> None:
    """The reply's text is its message items' ``output_text`` parts (the API reference's
    Response object; the installed SDK's model wants usage fields this 2025 body lacks)."""
    [item] = _yaml(RESPONSES)
    body = json.loads(item["response"]["content"])
    text = "".join(
        part["text"]
        for out in body["output"]
        if out["type"] == "message"
        for part in out["content"]
        if part["type"] == "output_text"
    )
    [episode] = episodes_from_cassette(RESPONSES)
    reply = episode.rounds[-1].reply
    assert text.startswith("The 2020 World Series was played at **Globe Life Field**")
    assert reply.content == text
    assert reply.usage.prompt_tokens == body["usage"]["input_tokens"]


def test_a_response_of_neither_form_names_both() -> None:
    [item] = _yaml(PORTKEY)
    del item["response"]["status_code"]
    with pytest.raises(WireEpisodeError, match=r"status_code and response\.content"):
        read_exchanges([item])


# --- multidict's istr in aiohttp recordings -----------------------------------------------


@pytest.mark.parametrize("path", [ISTR_APPLY, ISTR_NEW])
def test_istr_header_names_load_as_plain_strings(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "!!python/object/" in text
    for loader in (checked_loader(), checked_loader(yaml.SafeLoader)):
        data = yaml.load(text, Loader=loader)
        for item in data["interactions"]:
            assert all(type(k) is str for k in item["request"]["headers"])
    [item] = load_cassette(path)
    assert "Content-Type" in item["request"]["headers"]
    assert "multidict" not in sys.modules  # read, never imported or built


def test_istr_cassettes_read_into_episodes() -> None:
    from openai.types.chat import ChatCompletion

    [item] = _yaml_unsafe_free(ISTR_NEW)
    sdk = ChatCompletion.model_validate_json(item["response"]["body"]["string"])
    [episode] = episodes_from_cassette(ISTR_NEW)
    assert episode.answer == sdk.choices[0].message.content
    [failed] = episodes_from_cassette(ISTR_APPLY)
    assert failed.stop_reason == "error"
    assert failed.error is not None
    assert failed.error.startswith(
        "https://api.anthropic.com/v1/messages: HTTP 401: AuthenticationError: Error code: 401"
    )


def _yaml_unsafe_free(path: Path) -> list[dict[str, Any]]:
    return list(load_yaml(path.read_text(encoding="utf-8"))["interactions"])


def test_istr_cassettes_use_the_parse_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay.cassettes import store

    monkeypatch.setenv("TOOLREPLAY_CACHE_DIR", str(tmp_path / "cache"))
    store._parse_caches.clear()
    first = load_cassette(ISTR_APPLY)
    assert store.parse_cache().parsed == 1
    store._parse_caches.clear()  # a new process: the disk entry serves it
    assert load_cassette(ISTR_APPLY) == first
    assert store.parse_cache().parsed == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: !!python/object/apply:os.system [ls]\n",
            "could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        (
            "? !!python/object/new:builtins.str [x]\n: 1\n",
            "could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/new:builtins.str'",
        ),
        (
            "a: !!python/name:multidict._multidict.istr\n",
            "could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/name:multidict._multidict.istr'",
        ),
        (
            "a: !!python/object:multidict._multidict.istr {}\n",
            "could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:multidict._multidict.istr'",
        ),
        ("a: !!python/object/apply:multidict._multidict.istr [a, b]\n", "multidict's istr"),
        ("a: !!python/object/apply:multidict._multidict.istr [[a]]\n", "multidict's istr"),
        (
            "a: !!python/object/new:multidict._multidict.istr {args: [a], state: {x: 1}}\n",
            "multidict's istr",
        ),
    ],
)
def test_other_python_tags_stay_refused(tmp_path: Path, text: str, message: str) -> None:
    for loader in (checked_loader(), checked_loader(yaml.SafeLoader)):
        with pytest.raises(yaml.YAMLError, match=r"constructor|istr") as caught:
            yaml.load(text, Loader=loader)
        assert message in str(caught.value)
    path = tmp_path / "c.yaml"
    path.write_text(f"interactions: []\nversion: 1\nx:\n  {text.replace(chr(10), chr(10) + '  ')}")
    with pytest.raises(CassetteError, match="not valid YAML: .*" + message[:20]):
        load_cassette(path)
    assert "tag:yaml.org,2002:python/object/apply:multidict._multidict.istr" not in (
        yaml.SafeLoader.yaml_constructors
    )  # PyYAML's own loaders are left as they were


def test_a_key_given_twice_as_istr_is_refused() -> None:
    text = (
        "? !!python/object/apply:multidict._multidict.istr [Accept]\n: [a]\n"
        "? !!python/object/new:multidict._multidict.istr [Accept]\n: [b]\n"
    )
    with pytest.raises(yaml.YAMLError, match=r"duplicate key 'Accept' at line 3.*first at line 1"):
        load_yaml(text)
