"""HTTP interactions as a wire reader sees them: each recorded request and reply of a cassette
as an :class:`Exchange`, whatever serializer stored it, and the episode-with-provenance a
reader returns (:class:`WireRecord`: the episode, and the exchanges it was read from).

Interaction shapes read: toolreplay's stored form (``parsed_body`` under the request, and
under ``response.body``), vcrpy's (``body`` as text, ``response.body.string``) and
pydantic-ai's (``parsed_body`` directly under ``response``); a body given as bytes is read
as UTF-8, after undoing a ``gzip``/``deflate`` ``content-encoding`` it was recorded with.

Nothing here knows a protocol beyond :attr:`Exchange.is_chat_completion`; the readers of
each protocol sit beside this module (:mod:`toolreplay.wire.chat_completions`). Loading a
cassette file is :mod:`toolreplay.cassettes`' part: a reader takes the interactions (a list
of dicts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from toolreplay.wire.episode import Episode


class WireEpisodeError(ValueError):
    """A cassette from which no episode can be read: no chat-completions request in it, or an
    interaction of a shape none of the readers know. The message names the interaction
    (1-based) and what was wrong."""


@dataclass(frozen=True)
class Exchange:
    """One HTTP interaction as read from a cassette: ``number`` (1-based, in cassette order),
    ``method``, ``uri``, ``status`` (HTTP code), the request body (parsed JSON when it is JSON,
    else text), the response's ``content_type`` and body bytes."""

    number: int
    method: str
    uri: str
    status: int
    request_body: Any
    content_type: str
    response_body: bytes = field(repr=False)

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    @property
    def is_chat_completion(self) -> bool:
        """A Chat Completions request: ``POST .../chat/completions`` with ``messages``."""
        return (
            self.method.upper() == "POST"
            and self.path.rstrip("/").endswith("/chat/completions")
            and isinstance(self.request_body, dict)
            and isinstance(self.request_body.get("messages"), list)
        )

    def response_json(self) -> Any:
        """The response body parsed as JSON, None when it is not JSON."""
        try:
            return json.loads(self.response_body)
        except ValueError:
            return None


@dataclass(frozen=True)
class WireRound:
    """One model exchange of an episode read from the wire: the :class:`Exchange` holding the
    request and reply, and ``traffic``: the other interactions (tool traffic) recorded after
    it and before the next model request."""

    exchange: Exchange
    traffic: tuple[Exchange, ...] = ()


@dataclass(frozen=True)
class WireRecord:
    """An episode and the wire it was read from: ``episode`` (rounds, transcript, answer,
    usage, stop reason; its ``streamed`` and ``faults`` say whether its requests asked for
    streamed replies and which replies could not be read but were recovered from) and
    ``rounds`` (one :class:`WireRound` per model request: the exchange and the tools' traffic
    after it)."""

    episode: Episode
    rounds: tuple[WireRound, ...]

    @property
    def tool_traffic(self) -> tuple[Exchange, ...]:
        """Every non-model interaction of the episode, in order."""
        return tuple(x for r in self.rounds for x in r.traffic)


def _text(body: Any) -> str | None:
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace")
    return body if isinstance(body, str) else None


def _request_body(request: Mapping[str, Any]) -> Any:
    if "parsed_body" in request:
        return request["parsed_body"]
    body = request.get("body")
    if isinstance(body, Mapping) and "string" in body:  # some serializers nest it
        body = body["string"]
    text = _text(body)
    if text is None:
        return body
    try:
        return json.loads(text)
    except ValueError:
        return text


def _response_bytes(response: Mapping[str, Any]) -> bytes:
    if "parsed_body" in response:  # pydantic-ai's serializer
        return json.dumps(response["parsed_body"], ensure_ascii=False).encode("utf-8")
    body = response.get("body")
    if isinstance(body, Mapping):
        if "parsed_body" in body:
            return json.dumps(body["parsed_body"], ensure_ascii=False).encode("utf-8")
        body = body.get("string")
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body) if isinstance(body, (bytes, bytearray)) else b""


def _decoded(body: bytes, encoding: str) -> bytes:
    """A body recorded still compressed (vcrpy without ``decode_compressed_response``):
    ``gzip`` and ``deflate`` are undone; anything else, or a body that does not decompress,
    is kept as recorded."""
    import zlib

    encoding = encoding.strip().lower()
    if not body or encoding not in ("gzip", "x-gzip", "deflate"):
        return body
    try:
        return zlib.decompress(body, 47)  # 32 + 15: gzip or zlib header, detected
    except zlib.error:
        try:
            return zlib.decompress(body, -15)  # raw deflate
        except zlib.error:
            return body


def _header(headers: Any, name: str) -> str:
    if not isinstance(headers, Mapping):
        return ""
    for key, value in headers.items():
        if str(key).lower() == name:
            if isinstance(value, list):
                return str(value[0]) if value else ""
            return str(value)
    return ""


def read_exchanges(interactions: Sequence[Mapping[str, Any]]) -> list[Exchange]:
    """The interactions of a cassette (any shape the module docstring lists) as
    :class:`Exchange` items, in order. :class:`WireEpisodeError` names an interaction without
    a request method and URI or without a response status."""
    exchanges = []
    for number, item in enumerate(interactions, 1):
        try:
            request, response = item["request"], item["response"]
            method, uri = str(request["method"]), str(request["uri"])
            status = response["status"]
            code = int(status["code"] if isinstance(status, Mapping) else status)
        except (KeyError, TypeError, ValueError) as exc:
            raise WireEpisodeError(
                f"interaction {number}: not a recorded HTTP exchange ({type(exc).__name__}: "
                f"{exc}); expected request.method, request.uri and response.status.code"
            ) from None
        exchanges.append(
            Exchange(
                number=number,
                method=method,
                uri=uri,
                status=code,
                request_body=_request_body(request),
                content_type=_header(response.get("headers"), "content-type"),
                response_body=_decoded(
                    _response_bytes(response),
                    _header(response.get("headers"), "content-encoding"),
                ),
            )
        )
    return exchanges


__all__ = ["Exchange", "WireEpisodeError", "WireRecord", "WireRound", "read_exchanges"]
