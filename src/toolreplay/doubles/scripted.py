"""A scripted model on loopback that speaks the major model APIs, for recording a team's own
agent offline.

:func:`scripted_chat_server` serves a *script* on ``127.0.0.1``: either a list of assistant
messages served in order, one per request, or a function of the request body (the parsed
JSON, as the client sent it) returning the next assistant message. A message is a Chat
Completions assistant message dict, whatever protocol the client speaks::

    {"role": "assistant", "content": "ABC-1: 12 units on hand."}
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "check_stock", "arguments": '{"sku": "ABC-1"}'}}]}

(``role`` and a tool call's ``type`` may be left out; a missing tool call ``id`` becomes
``call_<round>_<index>``). The paths answered, on one port (:attr:`ScriptedChatServer.root_url`
``http://127.0.0.1:PORT``; :attr:`~ScriptedChatServer.base_url` is ``root_url + "/v1"``, what
an OpenAI client takes; the anthropic SDK and google-genai take ``root_url``):

==================================================  ===========================================
``POST …/chat/completions``                         OpenAI Chat Completions
``POST …/responses``                                OpenAI Responses API
``POST …/messages`` (``/v1/messages``)              Anthropic Messages
``POST …/models/MODEL:generateContent``             Gemini (``/v1beta/models/…``)
``POST …/models/MODEL:streamGenerateContent``       Gemini, streamed: server-sent events with
                                                    ``?alt=sse``, else a JSON array of chunks
==================================================  ===========================================

The reply is built in the protocol asked (:mod:`toolreplay.doubles.replies`: fixed ids such as
``chatcmpl-scripted-N``, ``resp_scripted_N``, ``msg_scripted_N``; ``created`` 0; a usage
estimate of characters / 4 so that budgets can be exercised), and streamed as that API
streams (:mod:`toolreplay.doubles.sse`) when the request asks ``"stream": true`` (Chat
Completions: the usage chunk when ``stream_options.include_usage`` is set, then
``data: [DONE]``) or posts to ``:streamGenerateContent``. ``N`` counts the requests the
server received, whatever their protocol. The function may also return a whole reply body of
the protocol asked (a dict with ``choices``, ``output``, ``type: message`` and ``content``, or
``candidates``), served as it is (and streamed from it); a body of another protocol is an
error. A script that decides on the conversation rather than the raw body reads it in Chat
Completions form with :func:`toolreplay.doubles.chat_form.conversation`.

Any other path is answered 404 with a JSON error naming it; a script that fails (a list
exhausted, a function raising, a reply the protocol cannot carry) is answered 500 with a JSON
error naming the fault, so that the recording fails visibly instead of hanging.

A test double like the stand-in model: it records what it was asked
(:attr:`ScriptedChatServer.requests`, the parsed bodies, and
:attr:`~ScriptedChatServer.paths`) and never calls a real model. Nothing here runs in replay.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolreplay.doubles.chat_form import ServedRequest, exchange_of, serving
from toolreplay.doubles.loopback import LoopbackServer
from toolreplay.doubles.replies import (
    PROTOCOL_NAMES,
    SCRIPTED_MODEL,
    ScriptReplyError,
    anthropic_reply,
    assistant_message,
    body_protocol,
    chat_reply,
    gemini_reply,
    responses_reply,
)
from toolreplay.doubles.sse import (
    anthropic_events,
    completion_events,
    gemini_chunks,
    named_event,
    responses_events,
)
from toolreplay.wire.episode import Message
from toolreplay.wire.reader import protocol_of
from toolreplay.wire.replies import ModelReplyError

#: A script: assistant messages in order, or ``body -> assistant message (or reply body)``.
Script = Sequence[dict[str, Any]] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptExhausted(RuntimeError):
    """A list script was asked for more replies than it holds (answered with HTTP 500 naming
    the request, so the recording fails visibly instead of hanging)."""


@dataclass(frozen=True)
class Route:
    """What a request path asks: the ``protocol`` (``chat``, ``responses``, ``anthropic``,
    ``gemini``); for Gemini, the ``model`` the path names, whether the method streams
    (``streamGenerateContent``) and whether as server-sent events (``alt=sse``)."""

    protocol: str
    model: str = ""
    gemini_stream: bool = False
    gemini_sse: bool = False


_GEMINI_PATH = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)


def route_of(path: str, query: dict[str, str]) -> Route | None:
    """The route of ``POST path?query`` (see :class:`Route`), None for a path not answered."""
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return Route("chat")
    if path.endswith("/responses"):
        return Route("responses")
    if path.endswith("/messages"):
        return Route("anthropic")
    if found := _GEMINI_PATH.search(path):
        streamed = found["method"] == "streamGenerateContent"
        return Route("gemini", found["model"], streamed, streamed and query.get("alt") == "sse")
    return None


@dataclass
class ScriptedChatServer:
    """A running scripted model: ``root_url`` (``http://127.0.0.1:PORT``, what the anthropic
    SDK and google-genai take), ``base_url`` (``root_url`` + ``/v1``, what an OpenAI client
    takes), the request bodies it has received in order (``requests``) and the path each was
    posted to (``paths``)."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    root_url: str = ""
    paths: list[str] = field(default_factory=list)
    #: The conversations its Responses API replies ended, by response id (what a later
    #: request's ``previous_response_id`` continues; filled when a wire reader reads them).
    history: dict[str, tuple[Message, ...]] = field(default_factory=dict)


def reply_body(route: Route, request: dict[str, Any], answer: dict[str, Any], round_: int) -> Any:
    """The reply body of ``answer`` (an assistant message or a whole body) for a request of
    ``route``; :class:`~toolreplay.doubles.replies.ScriptReplyError` for a whole body of
    another protocol or a message the protocol cannot carry."""
    given = body_protocol(answer)
    if given is not None:
        if given != route.protocol:
            raise ScriptReplyError(
                f"reply {round_} is a whole {PROTOCOL_NAMES[given]} body, but the request "
                f"is a {PROTOCOL_NAMES[route.protocol]} one"
            )
        return answer
    message = assistant_message(answer, round_)
    if route.protocol == "chat":
        return chat_reply(request, message, round_)
    if route.protocol == "responses":
        return responses_reply(request, message, round_)
    if route.protocol == "anthropic":
        return anthropic_reply(request, message, round_)
    named = frozenset(i for i, c in enumerate(answer.get("tool_calls") or []) if c.get("id"))
    return gemini_reply(request, message, round_, route.model, named)


def encode(route: Route, request: dict[str, Any], body: Any) -> tuple[bytes, str]:
    """The bytes and content type answering ``request`` with ``body``: streamed as the
    protocol streams when the request asks, else JSON."""
    if route.protocol == "gemini" and route.gemini_stream:
        chunks = gemini_chunks(body)
        if route.gemini_sse:
            events = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\r\n\r\n" for c in chunks)
            return events.encode("utf-8"), "text/event-stream"
        return json.dumps(chunks, ensure_ascii=False).encode("utf-8"), "application/json"
    if request.get("stream") is True and route.protocol != "gemini":
        if route.protocol == "chat":
            include = bool((request.get("stream_options") or {}).get("include_usage"))
            text = "".join(f"data: {e}\n\n" for e in completion_events(body, include))
        elif route.protocol == "responses":
            text = "".join(named_event(n, d) for n, d in responses_events(body))
        else:
            text = "".join(named_event(n, d) for n, d in anthropic_events(body))
        return text.encode("utf-8"), "text/event-stream"
    return json.dumps(body, ensure_ascii=False).encode("utf-8"), "application/json"


def _remember(
    server: ScriptedChatServer, path: str, request: dict[str, Any], data: bytes, content_type: str
) -> None:
    """Keep the conversation a reply ended, by the id a later request may name it by (a
    Responses API ``previous_response_id``), when a wire reader reads the request and the
    reply (``data``, as sent)."""
    exchange = exchange_of(request, path)
    protocol = protocol_of(exchange)
    if protocol is None:
        return
    replied = replace(exchange, content_type=content_type, response_body=data)
    try:
        reply = protocol.reply(replied)
    except ModelReplyError:
        return
    if (reply_id := protocol.reply_id(replied)) is not None:
        messages = protocol.request(exchange, server.history).messages
        server.history[reply_id] = (*messages, reply.to_message())


def _held(request: dict[str, Any]) -> int:
    """How many messages (input items, contents) the request's conversation holds: a
    Responses API ``input`` given as one string is one."""
    for key in ("messages", "input", "contents"):
        value = request.get(key)
        if isinstance(value, list):
            return len(value)
        if isinstance(value, str):
            return 1
    return 0


def _handler(script: Script, server: ScriptedChatServer) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()
    queue = None if callable(script) else list(script)

    def next_answer(request: dict[str, Any], path: str) -> tuple[dict[str, Any], int]:
        with lock:
            server.requests.append(request)
            server.paths.append(path)
            round_ = len(server.requests)
            if queue is None:
                with serving(ServedRequest(path, server.history)):
                    answer = script(request)  # type: ignore[operator]
            elif queue:
                answer = queue.pop(0)
            else:
                raise ScriptExhausted(
                    f"the script holds no reply for request {round_} (POST {path}, "
                    f"{_held(request)} messages)"
                )
        if not isinstance(answer, dict):
            raise ScriptReplyError(f"reply {round_} is a {type(answer).__name__}, not a dict")
        return answer, round_

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str) -> None:
            error = {"error": {"message": message, "type": kind}}
            self._send(status, json.dumps(error).encode(), "application/json")

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            route = route_of(parts.path, query)
            if route is None:
                self._error(404, f"no POST {parts.path}", "not_found")
                return
            try:
                request = json.loads(raw)
                if not isinstance(request, dict):
                    raise ScriptReplyError("the request body is not a JSON object")
                answer, round_ = next_answer(request, parts.path)
                body = reply_body(route, request, answer, round_)
                data, content_type = encode(route, request, body)
                if route.protocol == "responses":
                    with lock:
                        _remember(server, parts.path, request, data, content_type)
            except Exception as exc:  # a bug in a script must be visible, not a hang
                self._error(500, f"{type(exc).__name__}: {exc}", "script")
                return
            self._send(200, data, content_type)

        def do_GET(self) -> None:
            self._error(404, f"no GET {urlsplit(self.path).path}", "not_found")

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    return Handler


@contextmanager
def scripted_chat_server(script: Script) -> Iterator[ScriptedChatServer]:
    """Serve ``script`` (see the module docstring) on a free loopback port until the block
    exits; yields the :class:`ScriptedChatServer`."""
    state = ScriptedChatServer("")
    httpd = LoopbackServer(("127.0.0.1", 0), _handler(script, state))
    state.root_url = f"http://127.0.0.1:{httpd.server_address[1]}"
    state.base_url = f"{state.root_url}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


__all__ = [
    "SCRIPTED_MODEL",
    "Route",
    "Script",
    "ScriptExhausted",
    "ScriptedChatServer",
    "encode",
    "reply_body",
    "route_of",
    "scripted_chat_server",
]
