"""A scripted OpenAI-compatible model on loopback, for recording a team's own agent offline.

:func:`scripted_chat_server` serves ``POST /v1/chat/completions`` (and
``/chat/completions``) on ``127.0.0.1`` from a *script*: either a list of assistant messages
served in order, or a function of the request body returning the next assistant message. A
message is a Chat Completions assistant message dict::

    {"role": "assistant", "content": "ABC-1: 12 units on hand."}
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "check_stock", "arguments": '{"sku": "ABC-1"}'}}]}

(``role`` and a tool call's ``type`` may be left out; a missing tool call ``id`` becomes
``call_<round>_<index>``). The function may also return a whole reply body (a dict with
``choices``), served as it is. Every reply is deterministic: ``id`` ``chatcmpl-scripted-N``,
``created`` 0, ``model`` the request's, ``finish_reason`` ``tool_calls`` or ``stop``, and a
usage estimate (characters / 4) so that budgets can be exercised.

A request with ``"stream": true`` is answered as the OpenAI API streams
(``text/event-stream``, :func:`toolreplay.doubles.sse.completion_events`, as the stand-in
streams): the content in pieces, each tool call's ``id`` and name on its first chunk and its
arguments in pieces by ``index``, the finish reason, the usage chunk when
``stream_options.include_usage`` is set, then ``data: [DONE]``.

A test double like the stand-in model: it records what it was asked (:attr:`ScriptedChatServer.
requests`, the parsed bodies) and never calls a real model. Nothing here runs in replay.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from toolreplay.doubles.sse import completion_events

#: A script: assistant messages in order, or ``body -> assistant message (or reply body)``.
Script = Sequence[dict[str, Any]] | Callable[[dict[str, Any]], dict[str, Any]]

#: The model name a script answers as when the request names none.
SCRIPTED_MODEL = "scripted-model"


class ScriptExhausted(RuntimeError):
    """A list script was asked for more replies than it holds (answered with HTTP 500 naming
    the request, so the recording fails visibly instead of hanging)."""


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _message(raw: dict[str, Any], round_: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": raw.get("content")}
    calls = []
    for i, call in enumerate(raw.get("tool_calls") or []):
        function = dict(call.get("function") or {})
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": call.get("id") or f"call_{round_}_{i}",
                "type": "function",
                "function": {"name": function.get("name", ""), "arguments": arguments},
            }
        )
    if calls:
        message["tool_calls"] = calls
    for key, value in raw.items():  # reasoning fields, refusal...: served as given
        if key not in message and key not in ("role", "tool_calls"):
            message[key] = value
    return message


def reply_body(request: dict[str, Any], message: dict[str, Any], round_: int) -> dict[str, Any]:
    """The non-streamed Chat Completions reply carrying ``message`` (see the module
    docstring for the fixed fields)."""
    prompt = _tokens(json.dumps(request.get("messages", []), ensure_ascii=False))
    completion = _tokens(json.dumps(message, ensure_ascii=False))
    return {
        "id": f"chatcmpl-scripted-{round_}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model") or SCRIPTED_MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


@dataclass
class ScriptedChatServer:
    """A running scripted model: ``base_url`` (``http://127.0.0.1:PORT/v1``, what an OpenAI
    client takes) and the request bodies it has received, in order."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


def _handler(script: Script, server: ScriptedChatServer) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()
    queue = None if callable(script) else list(script)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not path.endswith("/chat/completions"):
                error = {"error": {"message": f"no POST {path}", "type": "not_found"}}
                self._send(404, json.dumps(error).encode(), "application/json")
                return
            try:
                request = json.loads(raw)
                with lock:
                    server.requests.append(request)
                    round_ = len(server.requests)
                    if queue is None:
                        answer = script(request)  # type: ignore[operator]
                    elif queue:
                        answer = queue.pop(0)
                    else:
                        raise ScriptExhausted(
                            f"the script holds no reply for request {round_} "
                            f"({len(request.get('messages', []))} messages)"
                        )
                if "choices" in answer:
                    body = answer
                else:
                    body = reply_body(request, _message(answer, round_), round_)
            except Exception as exc:  # a bug in a script must be visible, not a hang
                error = {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "script"}}
                self._send(500, json.dumps(error).encode(), "application/json")
                return
            if request.get("stream"):
                include = bool((request.get("stream_options") or {}).get("include_usage"))
                events = "".join(f"data: {e}\n\n" for e in completion_events(body, include))
                self._send(200, events.encode("utf-8"), "text/event-stream")
            else:
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self._send(200, data, "application/json")

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    return Handler


@contextmanager
def scripted_chat_server(script: Script) -> Iterator[ScriptedChatServer]:
    """Serve ``script`` (see the module docstring) on a free loopback port until the block
    exits; yields the :class:`ScriptedChatServer`."""
    state = ScriptedChatServer("")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script, state))
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
