"""A tiny JSON-over-HTTP server on loopback, shared by the doubles (a study's stand-in model
and fixture server, an example's API). Built on the standard library's ``ThreadingHTTPServer``.

:func:`serve` runs ``app(method, path, query, body) -> (status, json_body)`` on
``127.0.0.1`` (a free port) in a background thread and yields its base URL. A payload that
is an :class:`EventStream` is sent as ``text/event-stream``, one write per event.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

JsonApp = Callable[[str, str, dict[str, str], bytes], tuple[int, Any]]


class EventStream(list[str]):
    """A reply sent as server-sent events: each item one event's ``data`` (``data: ITEM``
    and a blank line)."""


def _handler(app: JsonApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two writes; with Nagle's algorithm the second
        # waits for the client's delayed ACK (~40 ms a reply on Linux loopback).
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                status, payload = app(self.command, parts.path, query, body)
            except Exception as exc:  # a bug in a double must be visible, not a hang
                status, payload = 500, {"error": True, "reason": f"{type(exc).__name__}: {exc}"}
            if isinstance(payload, EventStream):
                events = [f"data: {item}\n\n".encode() for item in payload]
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Content-Length", str(sum(map(len, events))))
                self.end_headers()
                for event in events:  # one write per event: the stream's chunks
                    self.wfile.write(event)
                    self.wfile.flush()
                return
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _serve
        do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    return Handler


class LoopbackServer(ThreadingHTTPServer):
    """A client that hung up before its reply was written (a timeout it was testing, a test
    that ended) is no fault of the double: not printed. Anything else is, as usual."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # broken pipe, reset by peer
            return
        super().handle_error(request, client_address)


@contextmanager
def serve(app: JsonApp) -> Iterator[str]:
    """Serve ``app`` on ``http://127.0.0.1:<free port>`` until the block exits."""
    server = LoopbackServer(("127.0.0.1", 0), _handler(app))
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        _stop(server)
        thread.join(timeout=5)


def _stop(server: LoopbackServer) -> None:
    """Shut ``server`` down at once rather than after its next poll: its loop is woken by a
    connection while ``shutdown`` waits (a recording with 200 trials stops 200 stand-ins, in
    under a second, so a signal's promised 2 s hold)."""
    import socket

    stopper = threading.Thread(target=server.shutdown, daemon=True)
    stopper.start()
    address = ("127.0.0.1", int(server.server_address[1]))
    while stopper.is_alive():
        with contextlib.suppress(OSError), socket.create_connection(address, timeout=0.1):
            pass
        stopper.join(0.005)
    server.server_close()
