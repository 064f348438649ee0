"""What the recorder writes, replay reads: property tests over the serializer and the
request matcher (hypothesis)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from vcr.matchers import method, path, query, requests_match
from vcr.request import Request
from vcr.serialize import serialize

from toolreplay.cassettes.format import JsonBodySerializer, json_body_matcher, json_equal
from toolreplay.cassettes.store import load_cassette
from toolreplay.cassettes.vcr import AtomicPersister, make_vcr

MATCHERS = [method, path, query, json_body_matcher]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@st.composite
def bodies(draw: Any) -> bytes | str | None:
    """Any body a server or client could send: bytes, text, or JSON in several spellings."""
    kind = draw(st.sampled_from(["bytes", "text", "json", "json-pretty", "json-ascii", "none"]))
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    if kind == "text":
        return draw(st.text(max_size=64))
    if kind == "none":
        return None
    value = draw(json_values)
    if kind == "json-pretty":
        return json.dumps(value, indent=2)
    return json.dumps(value, ensure_ascii=kind == "json-ascii", separators=(",", ":"))


def as_bytes(body: bytes | str | None) -> bytes:
    if body is None:
        return b""
    return body if isinstance(body, bytes) else body.encode("utf-8")


def same_body(replayed: bytes, original: bytes, stored_parsed: bool) -> None:
    """Bodies stored parsed replay as the same JSON value (types and key order: the
    canonical dumps agree); everything else byte for byte."""
    if stored_parsed:
        canon = json.dumps(json.loads(original), sort_keys=False)
        assert json.dumps(json.loads(replayed), sort_keys=False) == canon
    else:
        assert replayed == original


header_text = st.text(max_size=16)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    status=st.integers(min_value=100, max_value=599),
    reason=st.text(max_size=20),
    headers=st.dictionaries(header_text, st.lists(header_text, min_size=1, max_size=2), max_size=3),
    request_body=bodies(),
    response_body=bodies(),
)
def test_record_then_replay_is_identity(
    tmp_path_factory, status, reason, headers, request_body, response_body
):
    """Through vcrpy's own serialize step, our serializer, the file, the validating loader
    and the replay persister: status, headers and bodies come back as recorded, and the
    replayed request matches the recorded one."""
    folder: Path = tmp_path_factory.mktemp("rt")
    request = Request("POST", "http://api.test/v1/x?a=1", request_body, {"content-type": "j"})
    response = {
        "status": {"code": status, "message": reason},
        "headers": {k: list(v) for k, v in headers.items()},
        "body": {"string": as_bytes(response_body)},
    }
    text = serialize({"requests": [request], "responses": [response]}, JsonBodySerializer)
    cassette = folder / "c.yaml"
    cassette.write_text(text, encoding="utf-8")
    [stored] = load_cassette(cassette)  # the validator accepts what the serializer wrote
    [replayed_request], [replayed] = AtomicPersister.load_cassette(cassette, JsonBodySerializer)
    assert replayed["status"] == {"code": status, "message": reason}
    assert replayed["headers"] == headers
    same_body(
        replayed["body"]["string"] or b"",
        as_bytes(response_body),
        "parsed_body" in stored["response"]["body"],
    )
    same_body(
        as_bytes(replayed_request.body),
        as_bytes(request_body),
        "parsed_body" in stored["request"],
    )
    assert requests_match(request, replayed_request, MATCHERS)


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xfe binary",
        b'{"a": NaN}',
        b'{"a": 1e400}',
        b'{"a": 1, "a": 2}',
        b'"\\ud800"',
        b"null",
        "a\x85b\u2028c\r\nd".encode(),
        "\ufeff{}".encode(),
        b"   ",
    ],
)
def test_awkward_bodies_replay_byte_for_byte_through_http(tmp_path, body):
    """Recorded from a real httpx exchange (mock transport) and replayed: the client reads
    the recorded bytes."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    path = tmp_path / "c.yaml"
    with make_vcr("all").use_cassette(str(path)):
        with httpx.Client(transport=httpx.MockTransport(handler)) as http:
            assert http.post("http://api.test/v1/x", content=body).content == body
    load_cassette(path)
    with make_vcr("none").use_cassette(str(path)):
        with httpx.Client(transport=httpx.MockTransport(handler)) as http:
            assert http.post("http://api.test/v1/x", content=body).content == body


# ---- typed matching -------------------------------------------------------------------------


def leaf_paths(value: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(value, list):
        for i, v in enumerate(value):
            out += leaf_paths(v, (*at, i))
    elif isinstance(value, dict):
        for k, v in value.items():
            out += leaf_paths(v, (*at, k))
    return out


def replaced(value: Any, at: tuple, new: Any) -> Any:
    if not at:
        return new
    copy = json.loads(json.dumps(value))
    node = copy
    for key in at[:-1]:
        node = node[key]
    node[at[-1]] = new
    return copy


def body_request(value: Any) -> Request:
    return Request("POST", "http://h/v1/chat/completions", json.dumps(value).encode(), {})


def matches(a: Any, b: Any) -> bool:
    try:
        json_body_matcher(body_request(a), body_request(b))
    except AssertionError:
        return False
    return True


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=st.data(), value=json_values)
def test_any_other_value_in_a_request_body_is_a_miss(data, value):
    at = data.draw(st.sampled_from(leaf_paths(value)))
    old = json.loads(json.dumps(value))
    for key in at:
        old = old[key]
    new = data.draw(json_values)
    same_number = (
        isinstance(old, (int, float)) and isinstance(new, (int, float))
        and not isinstance(old, bool) and not isinstance(new, bool) and old == new
    )  # fmt: skip
    assume(not same_number and not json_equal(old, new))
    assert not matches(value, replaced(value, at, new))
    assert matches(value, json.loads(json.dumps(value)))


@pytest.mark.parametrize(
    ("a", "b"),
    [(True, 1), (False, 0), (1, "1"), (None, False), (0, None), ("", None), ([], {}),
     (1.0, True), ({"temperature": 0}, {"temperature": False})],
)  # fmt: skip
def test_values_of_different_types_never_match(a, b):
    assert not matches({"x": a}, {"x": b}) and not matches([a], [b])


def test_one_json_number_type():
    assert matches({"temperature": 0}, {"temperature": 0.0})
    assert matches({"n": 1}, {"n": 1.0}) and not matches({"n": 1}, {"n": 1.5})
    assert math.isclose(0.1 + 0.2, 0.3) and not matches({"n": 0.1 + 0.2}, {"n": 0.3})


def test_a_type_change_is_explained_in_a_miss():
    from toolreplay.cassettes.miss import _describe_body_difference

    assert _describe_body_difference({"temperature": False}, {"temperature": 0}) == [
        "sampling parameter `temperature`: sent false, recorded 0"
    ]
    assert _describe_body_difference({"temperature": 0}, {"temperature": 0.0}) == []


def test_json_held_in_a_string_compares_as_json():
    """A framework that re-serialises the arguments a model sent (pydantic-ai does, from
    some version on) sends the same request: ``{"sku":"A"}`` matches ``{"sku": "A"}``; a
    different value, or a string that is not JSON, still differs."""
    call = {"function": {"name": "check_stock", "arguments": '{"sku": "ABC-1"}'}}
    same = {"function": {"name": "check_stock", "arguments": '{"sku":"ABC-1"}'}}
    other = {"function": {"name": "check_stock", "arguments": '{"sku":"ABC-2"}'}}
    assert matches(call, same) and json_equal(call, same)
    assert not matches(call, other) and not json_equal(call, other)
    assert not json_equal({"x": "[1, 2]"}, {"x": "[1,2,3]"})
    assert not json_equal({"x": "{not json"}, {"x": "{not  json"})
    assert not json_equal({"x": '{"a": true}'}, {"x": '{"a": 1}'})  # types still count
