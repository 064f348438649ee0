"""The loopback server the doubles run on (``toolreplay.doubles.loopback.serve``)."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from toolreplay.doubles.loopback import serve


def test_a_client_that_hangs_up_before_its_reply_prints_nothing(capfd):
    """A client gone before its reply is written (a timeout under test, a test that ended) is
    no fault of the double: no traceback reaches the console of whatever runs next."""

    def app(method, path, query, body):
        time.sleep(0.3)  # the client is gone by now
        return 200, {"x": "y" * 2_000_000}  # larger than any socket buffer: the write fails

    with serve(app) as base:
        url = urlsplit(base)
        with socket.create_connection((url.hostname, url.port)) as s:
            s.sendall(b"GET /v1/forecast HTTP/1.1\r\nHost: x\r\n\r\n")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        time.sleep(0.8)
    assert "Traceback" not in capfd.readouterr().err
