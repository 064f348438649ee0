"""The cassette format: safe YAML (no aliases, unique keys), the readable JSON-body serializer,
typed JSON equality and the credential filter for URIs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from toolreplay.inputs import load_yaml
from toolreplay.redaction import secret_query_pair

if TYPE_CHECKING:  # vcrpy is imported when recording (or a test's cassette) needs it
    pass


KEPT_HEADERS = {"content-type"}


LOOPBACK = {"127.0.0.1", "localhost", "::1"}


MATCH_ON = ("method", "path", "query", "json_body")




def parse_json_body(body: Any) -> Any:
    """``body`` (bytes or text) parsed as JSON; None when it is empty, not UTF-8, not text or
    not JSON."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(body, str) or not body.strip():
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


# libyaml's emitter when available (~4x faster; the same bytes for every committed cassette);
# the representers, and so the choice of styles, are PyYAML's either way.
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # A literal block keeps multi-line text readable, but YAML reads NEL and the Unicode line
    # and paragraph separators as line breaks there; such strings keep the quoted style.
    plain_lines = not any(ch in data for ch in "\x85\u2028\u2029\r")
    style = ("|" if "\n" in data else None) if plain_lines else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def _storable_json(body: Any) -> tuple[bool, Any]:
    """``(True, value)`` when ``body`` is a JSON document whose value survives the trip
    through YAML and back to JSON unchanged: strict JSON (no NaN/Infinity, no duplicate keys),
    finite numbers, text without lone surrogates, not ``null``. Anything else is stored as
    text or bytes, byte for byte."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return False, None
    if not isinstance(body, str) or not body.strip():
        return False, None
    try:
        value = json.loads(body, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError):
        return False, None
    if value is None or json_problem(value, text=True) is not None:
        return False, None
    return True, value


class JsonBodySerializer:
    """vcrpy serializer: YAML with JSON bodies stored parsed under ``parsed_body``.

    What is stored replays: a body that :func:`_storable_json` accepts is stored parsed and
    replays as the same JSON value (same types, same key order; the bytes are those of
    ``json.dumps``); every other body (any text, any bytes: bytes that are not UTF-8 as
    ``!!binary``) is stored and replayed byte for byte. Text with line breaks is a YAML literal
    block, so a streamed reply (``text/event-stream``) reads one event per line with the blank
    line between events kept; replay serves it one event at a time
    (:func:`toolreplay.wire.stream.event_chunks`)."""

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        from toolreplay.redaction import refuse_secrets

        # Before anything is written: a key echoed anywhere (a binary body included) is refused.
        refuse_secrets(cassette_dict, "the cassette")
        for interaction in cassette_dict["interactions"]:
            request = interaction["request"]
            ok, parsed = _storable_json(request.get("body"))
            if ok:
                del request["body"]
                request["parsed_body"] = parsed
            body = interaction["response"].get("body", {})
            ok, parsed = _storable_json(body.get("string"))
            if ok:
                interaction["response"]["body"] = {"parsed_body": parsed}
        return yaml.dump(
            cassette_dict, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
        )

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data: dict[str, Any] = load_yaml(text)
        for interaction in data.get("interactions", []):
            unparse_bodies(interaction)
        return data


def unparse_bodies(interaction: dict[str, Any]) -> dict[str, Any]:
    """Stored form → vcrpy form: ``parsed_body`` turned back into a JSON string, in place."""
    request = interaction["request"]
    if "parsed_body" in request:
        request["body"] = json.dumps(request.pop("parsed_body"), ensure_ascii=False)
    body = interaction["response"].get("body", {})
    if "parsed_body" in body:
        interaction["response"]["body"] = {
            "string": json.dumps(body["parsed_body"], ensure_ascii=False)
        }
    return interaction


_NOT_JSON = object()


def _embedded_json(text: str) -> Any:
    """The JSON object or array ``text`` holds, else ``_NOT_JSON``."""
    if not text.lstrip().startswith(("{", "[")):
        return _NOT_JSON
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two parsed JSON values with their types: booleans, numbers, strings and
    null are never equal across types (``True`` ≠ ``1``, ``0`` ≠ ``False``, ``"1"`` ≠ ``1``);
    JSON has one number type, so ``1 == 1.0``. Objects compare by keys and values (order
    aside), arrays element by element. Python's ``==`` would call ``True == 1`` equal.

    Two strings that differ but both hold a JSON object or array (a tool call's
    ``function.arguments``, a tool message's content) compare as the JSON they hold: a
    framework that re-serialises the arguments a model sent (``{"sku":"A"}`` for
    ``{"sku": "A"}``) sends the same request."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                return False
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if not (x == y or (x != x and y != y)):  # NaN matches NaN (lenient JSON)
                return False
        elif isinstance(x, str) and isinstance(y, str):
            if x != y:
                embedded = _embedded_json(x), _embedded_json(y)
                if embedded[0] is _NOT_JSON or embedded[1] is _NOT_JSON:
                    return False
                stack.append(embedded)
        elif x is None or y is None:
            if not (x is None and y is None):
                return False
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        else:
            return False
    return True


def json_body_matcher(r1: Any, r2: Any) -> None:
    """vcrpy matcher ``json_body``: the two requests' bodies are equal as JSON
    (:func:`json_equal`), or byte for byte when neither is JSON; :class:`AssertionError`
    otherwise."""
    b1, b2 = parse_json_body(r1.body), parse_json_body(r2.body)
    if b1 is None and b2 is None:
        if (r1.body or b"") != (r2.body or b""):
            raise AssertionError("bodies differ")
        return
    if not json_equal(b1, b2):
        raise AssertionError("JSON bodies differ")


def strip_secret_query(url: str) -> str:
    """``url`` without the query parameters that carry credentials
    (:func:`toolreplay.redaction.secret_query`; order and the rest of the query kept as
    sent)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = [
        pair
        for pair in parts.query.split("&")
        if not secret_query_pair(pair)
    ]
    return urlunsplit(parts._replace(query="&".join(kept)))


def json_problem(value: Any, where: str = "", *, text: bool = False) -> str | None:
    """Where ``value`` stops being JSON (a YAML date, a non-string key, NaN...), or None.
    With ``text``, strings (keys too) must also be encodable as UTF-8 (no lone surrogates)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if text and not _utf8_ok(item):
                return f"{at or 'value'}: a lone surrogate"
            continue
        if item is None or isinstance(item, (bool, int)):
            continue
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return f"{at or 'value'}: {item} is not a JSON number"
            continue
        if isinstance(item, list):
            stack.extend((v, f"{at}.{i}" if at else str(i)) for i, v in enumerate(item))
        elif isinstance(item, dict):
            for k, v in item.items():
                if not isinstance(k, str):
                    return f"{at or 'value'}: key {k!r} is not a string"
                if text and not _utf8_ok(k):
                    return f"{at or 'value'}: a key with a lone surrogate"
                stack.append((v, f"{at}.{k}" if at else k))
        else:
            return f"{at or 'value'}: a YAML {type(item).__name__}, not a JSON value"
    return None


def _utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


