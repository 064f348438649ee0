"""HTTP interactions as a wire reader sees them: each recorded request and reply of a cassette
as an :class:`Exchange`, whatever serializer stored it, and the episode-with-provenance a
reader returns (:class:`WireRecord`: the episode, and the exchanges it was read from).

Interaction shapes read: toolreplay's stored form (``parsed_body`` under the request, and
under ``response.body``), vcrpy's (``body`` as text, ``response.body.string``), vcrpy's
older httpx form (``status_code``, ``headers`` and ``content`` under ``response``, as
vcrpy's httpx stub still replays it) and pydantic-ai's (``parsed_body`` directly under
``response``). A reply body is read as UTF-8 after undoing the ``content-encoding`` it was
recorded with, when it was recorded still encoded
(:func:`toolreplay.wire.content_encoding.decode_body`: gzip, deflate, br, zstd; a body
stored already decoded under the header is kept; one that can be neither is kept as
recorded and its :attr:`Exchange.body_fault` says why).

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

from toolreplay.wire.content_encoding import decode_body
from toolreplay.wire.episode import Episode


class WireEpisodeError(ValueError):
    """A cassette from which no episode can be read: no chat-completions request in it, or an
    interaction of a shape none of the readers know. The message names the interaction
    (1-based) and what was wrong."""


@dataclass(frozen=True)
class Exchange:
    """One HTTP interaction as read from a cassette: ``number`` (1-based, in cassette order),
    ``method``, ``uri``, ``status`` (HTTP code), the request body (parsed JSON when it is JSON,
    else text), the response's ``content_type`` and body bytes (its ``content-encoding``
    undone); ``body_fault``: ``""``, or why the body could not be decoded (an encoding
    unknown, or whose module is not installed, on a body that is not text: it is then kept
    as recorded)."""

    number: int
    method: str
    uri: str
    status: int
    request_body: Any
    content_type: str
    response_body: bytes = field(repr=False)
    body_fault: str = ""

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
    body = response["content"] if "status_code" in response else response.get("body")
    if isinstance(body, Mapping):
        if "parsed_body" in body:
            return json.dumps(body["parsed_body"], ensure_ascii=False).encode("utf-8")
        body = body.get("string")
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body) if isinstance(body, (bytes, bytearray)) else b""


def header_text(value: Any) -> str:
    """A recorded header name or value as text: bytes (botocore's, stored as ``!!binary``)
    decoded as UTF-8, else as Latin-1 (HTTP's historical header charset); anything else as
    ``str`` gives it."""
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return bytes(value).decode("latin-1")
    return str(value)


def _header(headers: Any, name: str, every: bool = False) -> str:
    """The value of header ``name`` (lower case): the first one recorded, or (``every``)
    all of them joined by commas, as HTTP folds a header given twice; names and values
    recorded as bytes are read as text (:func:`header_text`)."""
    if not isinstance(headers, Mapping):
        return ""
    for key, value in headers.items():
        if header_text(key).lower() == name:
            if isinstance(value, list):
                values = [header_text(v) for v in value]
                return ", ".join(values) if every else (values[0] if values else "")
            return header_text(value)
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
            if "status_code" in response:  # vcrpy's older httpx form
                status = response["status_code"]
            else:
                status = response["status"]
            code = int(status["code"] if isinstance(status, Mapping) else status)
            raw = _response_bytes(response)
        except (KeyError, TypeError, ValueError) as exc:
            raise WireEpisodeError(
                f"interaction {number}: not a recorded HTTP exchange ({type(exc).__name__}: "
                f"{exc}); expected request.method, request.uri and response.status.code "
                "(or vcrpy's older httpx form: response.status_code and response.content)"
            ) from None
        headers = response.get("headers")
        body, fault = decode_body(raw, _header(headers, "content-encoding", every=True))
        exchanges.append(
            Exchange(
                number=number,
                method=method,
                uri=uri,
                status=code,
                request_body=_request_body(request),
                content_type=_header(headers, "content-type"),
                response_body=body,
                body_fault=fault,
            )
        )
    return exchanges


__all__ = [
    "Exchange",
    "WireEpisodeError",
    "WireRecord",
    "WireRound",
    "header_text",
    "read_exchanges",
]
