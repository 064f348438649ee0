"""A scripted model's request as a conversation in Chat Completions form, whatever protocol
the client spoke: what a script function (:mod:`toolreplay.doubles.scripted`) reads when it
decides on the conversation rather than on the raw body.

:func:`conversation` hands the body, as an :class:`~toolreplay.wire.interactions.Exchange`
to the path it was posted to, to the wire reader of that protocol
(:func:`toolreplay.wire.reader.protocol_of`, then the reader's ``request``) and returns the
messages it reads: ``system``, ``user``, ``assistant`` with ``tool_calls``, ``tool`` with
``tool_call_id`` (:mod:`toolreplay.wire.protocol`'s conventions, as every episode is kept).
Called from a script while the scripted server answers, it knows the request's path and the
Responses API replies the server gave before (so a ``previous_response_id`` is resolved);
called elsewhere, it takes the path given, or tells the protocol from the body's shape
(:func:`protocol_path`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from toolreplay.wire.episode import Message
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.reader import protocol_of


class ConversationError(ValueError):
    """A request no wire reader reads as a model request: the message names its path."""


@dataclass
class ServedRequest:
    """The request a scripted server is answering: its ``path`` and the conversations its
    Responses API replies ended so far (by response id), for ``previous_response_id``."""

    path: str
    history: dict[str, tuple[Message, ...]] = field(default_factory=dict)


_SERVING = threading.local()


@contextmanager
def serving(request: ServedRequest) -> Iterator[None]:
    """While the block runs (the script's call, in the server's handler thread),
    :func:`conversation` reads the body as a request to ``request.path``."""
    previous = getattr(_SERVING, "request", None)
    _SERVING.request = request
    try:
        yield
    finally:
        _SERVING.request = previous


#: A block type of Anthropic Messages that a Chat Completions conversation never holds.
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def _anthropic_shaped(body: dict[str, Any]) -> bool:
    if "system" in body or "anthropic_version" in body:
        return True
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in content
        ):
            return True
    return False


def protocol_path(body: dict[str, Any]) -> str:
    """The path a request of ``body``'s shape is posted to: Gemini's
    ``/v1beta/models/MODEL:generateContent`` for ``contents``, the Responses API's
    ``/v1/responses`` for ``input``, Anthropic's ``/v1/messages`` for ``messages`` with a
    top-level ``system`` or an Anthropic content block (``tool_use``, ``tool_result``,
    ``thinking``), else ``/v1/chat/completions``. A first Anthropic request that holds none
    of them reads the same in both forms."""
    if "contents" in body:
        return f"/v1beta/models/{body.get('model') or 'model'}:generateContent"
    if "input" in body:
        return "/v1/responses"
    if _anthropic_shaped(body):
        return "/v1/messages"
    return "/v1/chat/completions"


def exchange_of(body: dict[str, Any], path: str) -> Exchange:
    """``body`` posted to ``path`` on loopback, as a wire reader takes it (no reply yet)."""
    uri = f"http://127.0.0.1{path}"
    return Exchange(0, "POST", uri, 200, body, "", b"")


def conversation(body: dict[str, Any], path: str | None = None) -> list[Message]:
    """The conversation of request ``body`` in Chat Completions form (see the module
    docstring). ``path``: where it was posted (the server's request's path when called from
    a script, else told from the body's shape). :class:`ConversationError` when no wire
    reader reads it as a model request (a protocol whose reader is not written yet, a body
    of no protocol)."""
    serving_now: ServedRequest | None = getattr(_SERVING, "request", None)
    if path is None:
        path = serving_now.path if serving_now is not None else protocol_path(body)
    exchange = exchange_of(body, path)
    protocol = protocol_of(exchange)
    if protocol is None:
        raise ConversationError(
            f"no wire reader reads a POST {path} with this body as a model request "
            f"(body keys: {', '.join(sorted(body)) or 'none'})"
        )
    history = serving_now.history if serving_now is not None else {}
    return list(protocol.request(exchange, history).messages)


__all__ = [
    "ConversationError",
    "ServedRequest",
    "conversation",
    "exchange_of",
    "protocol_path",
    "serving",
]
