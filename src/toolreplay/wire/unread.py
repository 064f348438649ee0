"""Why a cassette's interactions hold no model request: :func:`no_episode_error`.

A request is read as a model request by its method, path *and* body
(:func:`toolreplay.wire.reader.protocol_of`), so a request sent to a protocol's endpoint
whose body was not recorded (a serializer that drops bodies, a cassette filtered of them), is
empty, is not JSON or is not that protocol's request is not read. Saying only "no model
request of a protocol read here" would then mislead: the path *is* a protocol's. The error
names such requests by their path's protocol and says what is wrong with the body; for
interactions with no such request it names the protocols read and the POST requests seen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from toolreplay.wire.anthropic_messages import ANTHROPIC_MESSAGES
from toolreplay.wire.bedrock_converse import BEDROCK_CONVERSE
from toolreplay.wire.chat_completions import CHAT_COMPLETIONS
from toolreplay.wire.gemini import GEMINI
from toolreplay.wire.interactions import Exchange, WireEpisodeError, read_exchanges
from toolreplay.wire.protocol import WireProtocol
from toolreplay.wire.responses import RESPONSES

#: Each protocol's request paths (matched against the URL's path, percent-decoded) and the
#: body field its request cannot do without. Anthropic Messages is also sent to Vertex AI
#: (``…/publishers/anthropic/models/M:rawPredict``) and Bedrock (``…/model/anthropic.M/invoke``).
ENDPOINT_PATHS: tuple[tuple[WireProtocol, re.Pattern[str], str], ...] = (
    (CHAT_COMPLETIONS, re.compile(r"/chat/completions/?$"), "messages"),
    (RESPONSES, re.compile(r"/responses/?$"), "input"),
    (
        ANTHROPIC_MESSAGES,
        re.compile(
            r"(/v1/messages|/publishers/anthropic/models/[^/]+:(stream)?rawPredict"
            r"|/model/[^/]*anthropic[^/]*/invoke(-with-response-stream)?)/?$",
            re.IGNORECASE,
        ),
        "messages",
    ),
    (GEMINI, re.compile(r"/models/[^/]+:(stream)?generateContent/?$", re.IGNORECASE), "contents"),
    (BEDROCK_CONVERSE, re.compile(r"/model/[^/]+/(converse|converse-stream)/?$"), "messages"),
)

#: Requests named in the error, at most.
NAMED = 3


def endpoint_protocol(exchange: Exchange) -> tuple[WireProtocol, str] | None:
    """The protocol whose endpoint ``exchange`` was sent to (a POST to its path), and the body
    field that protocol's request needs; None for any other request. The body is not looked
    at: this is what the request was meant to be, not what was recorded of it."""
    if exchange.method.upper() != "POST":
        return None
    path = unquote(exchange.path)
    return next(
        ((protocol, field) for protocol, pattern, field in ENDPOINT_PATHS if pattern.search(path)),
        None,
    )


def body_fault(body: Any, field: str) -> str:
    """What is wrong with a model request's recorded ``body`` (its protocol needing
    ``field``), in words: no body, an empty one, text that is not JSON, JSON that is not an
    object, an object without ``field`` or whose ``field`` is not what the protocol sends."""
    if body is None or (isinstance(body, (str, bytes)) and not body.strip()):
        return "has no request body (was the cassette recorded without request bodies?)"
    if isinstance(body, (str, bytes)):
        return f"has a request body that is not JSON ({len(body)} characters)"
    if not isinstance(body, Mapping):
        return f"has a JSON request body that is not an object (a {type(body).__name__})"
    if not body:
        return "has an empty JSON object as its request body"
    if field not in body:
        keys = ", ".join(sorted(str(k) for k in body)[:5])
        more = ", ..." if len(body) > 5 else ""
        return (
            f"has a request body without {field!r} (its fields: {keys}{more}), so it is "
            "no such request, or not one this reader knows"
        )
    return f"has a request body whose {field!r} is not what the protocol sends"


def no_episode_error(interactions: Sequence[Mapping[str, Any]]) -> WireEpisodeError:
    """The error for interactions that hold no model request. Requests sent to a protocol's
    endpoint (:func:`endpoint_protocol`) are named with what is wrong with their body
    (:func:`body_fault`); else the error names the protocols read and the POST requests
    seen (the likely model requests). At most :data:`NAMED` requests are named."""
    exchanges = read_exchanges(list(interactions))
    unread = [(x, found) for x in exchanges if (found := endpoint_protocol(x)) is not None]
    if unread:
        said = "; ".join(
            f"interaction {x.number}: POST {x.path} was sent to a path of {p.name} but "
            + body_fault(x.request_body, field)
            for x, (p, field) in unread[:NAMED]
        )
        more = f" and {len(unread) - NAMED} more" if len(unread) > NAMED else ""
        return WireEpisodeError(f"no model request could be read: {said}{more}")
    names = ", ".join(p.name for p, _, _ in ENDPOINT_PATHS)
    posts = [x for x in exchanges if x.method.upper() == "POST"]
    seen = "; ".join(f"interaction {x.number}: POST {x.path}" for x in posts[:NAMED])
    more = f" and {len(posts) - NAMED} more" if len(posts) > NAMED else ""
    told = f" (requests seen: {seen}{more})" if posts else " (no POST request in it)"
    return WireEpisodeError(f"no model request of a protocol read here ({names}){told}")


__all__ = ["ENDPOINT_PATHS", "NAMED", "body_fault", "endpoint_protocol", "no_episode_error"]
