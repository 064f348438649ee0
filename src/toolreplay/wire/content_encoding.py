"""Undoing the ``Content-Encoding`` a recorded reply body was stored with.

vcrpy without ``decode_compressed_response`` keeps a body as the server compressed it (bytes
under ``!!binary``) together with the ``Content-Encoding`` header; with it, or in vcrpy's
older httpx format, or by a test's own filter, the body is often stored already decoded while
the header is kept. :func:`decode_body` tells the two apart, for each coding the header lists
(last applied first undone, as httpx does):

- ``identity`` (or no header): the body as recorded;
- ``gzip``/``x-gzip`` (gzip members, or a zlib stream, told by their header), ``deflate``
  (a zlib stream, else raw deflate, as httpx tries them), ``br`` (when the ``brotli`` or
  ``brotlicffi`` module is importable) and ``zstd`` (when ``zstandard`` is, or Python's own
  ``compression.zstd``): a decoding is taken only when it consumed the whole body and
  reached the stream's end (after a whole gzip member, bytes that follow are ignored, as
  httpx ignores them) (a prefix of plain text can be a short, complete deflate
  stream: ``{\\n  "id"`` inflates to one byte and leaves the rest unread);
- otherwise (the decoding failed or left bytes over, the coding is unknown, or its module is
  not installed) the body is taken as already decoded when it is plausibly text (UTF-8
  without control characters other than tab, newline, carriage return and form feed: JSON,
  an event stream, HTML), and is else kept as recorded with a fault that names the coding
  and, where one would read it, what to install.

Nothing here raises: the fault is returned, and a protocol reader reports it for the reply
(:func:`toolreplay.wire.replies.exchange_status_error`).
"""

from __future__ import annotations

import importlib
import json
import re
import zlib
from collections.abc import Callable
from typing import Any

#: C0 control characters that text, JSON and event streams never hold raw (JSON escapes
#: them all; tab, newline, carriage return and form feed are whitespace).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")

#: The modules a coding needs, in the order tried, and what to install for it.
_MODULES: dict[str, tuple[tuple[str, ...], str]] = {
    "br": (("brotli", "brotlicffi"), "the brotli (or brotlicffi) module (pip install brotli)"),
    "zstd": (("zstandard", "compression.zstd"), "the zstandard module (pip install zstandard)"),
}


class _Undecodable(Exception):
    """A body the coding does not decode whole (the text says why)."""


def plausibly_text(body: bytes) -> bool:
    """Whether ``body`` is plausibly already-decoded text: UTF-8 without control characters
    other than tab, newline, carriage return and form feed (compressed data almost never
    is: a gzip member starts ``1f 8b``)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _CONTROL.search(text) is None


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _zlib_stream(
    body: bytes, wbits: int, members: bool = False, trailing_ok: bool = False
) -> bytes:
    """``body`` inflated with ``wbits``; whole streams only (``members``: several gzip
    members one after another, as ``gzip`` allows; ``trailing_ok``: bytes after the last
    member are ignored, as zlib's and httpx's gzip decoding ignore them)."""
    out = []
    rest = body
    while True:
        inflater = zlib.decompressobj(wbits)
        try:
            out.append(inflater.decompress(rest))
            out.append(inflater.flush())
        except zlib.error as exc:
            raise _Undecodable(str(exc)) from None
        if not inflater.eof:
            raise _Undecodable("the compressed stream is cut short")
        rest = inflater.unused_data
        if not rest:
            return b"".join(out)
        if not (members and rest.startswith(b"\x1f\x8b")):
            if trailing_ok:
                return b"".join(out)
            raise _Undecodable(f"{len(rest)} bytes follow the end of the compressed stream")


def _gzip(body: bytes) -> bytes:
    # gzip or zlib header; after a whole gzip member (its magic bytes, header and CRC
    # checked: no plain text passes for one), trailing bytes are ignored as httpx ignores them
    gzip_member = body.startswith(b"\x1f\x8b")
    return _zlib_stream(body, 32 + zlib.MAX_WBITS, members=True, trailing_ok=gzip_member)


def _deflate(body: bytes) -> bytes:
    try:
        return _zlib_stream(body, zlib.MAX_WBITS)  # zlib-wrapped, as the RFC says
    except _Undecodable:
        return _zlib_stream(body, -zlib.MAX_WBITS)  # raw deflate, as some servers send


def _module(coding: str) -> Any:
    """The first importable module of those :data:`_MODULES` names for ``coding``, else
    None."""
    for name in _MODULES[coding][0]:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _brotli(body: bytes) -> bytes:
    brotli = _module("br")
    try:  # both modules' decompress refuse a stream cut short
        return bytes(brotli.decompress(body))
    except Exception as exc:  # brotli.error, brotlicffi.error: the modules' own classes
        raise _Undecodable(str(exc) or type(exc).__name__) from None


def _zstd(body: bytes) -> bytes:
    zstd = _module("zstd")
    make = (
        zstd.ZstdDecompressor().decompressobj
        if hasattr(zstd, "ZstdError")  # zstandard
        else zstd.ZstdDecompressor  # compression.zstd
    )
    out = []
    rest = body
    while True:
        decompressor = make()
        try:
            out.append(decompressor.decompress(rest))
        except Exception as exc:  # ZstdError: the module's own class
            raise _Undecodable(str(exc) or type(exc).__name__) from None
        if not decompressor.eof:
            raise _Undecodable("the zstd stream is cut short")
        rest = decompressor.unused_data
        if not rest:
            return b"".join(out)


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": _gzip,
    "x-gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}


def _decode_one(body: bytes, coding: str) -> tuple[bytes, str]:
    """``body`` with ``coding`` undone (see the module docstring) and a fault, ``""`` when
    there is none."""
    if coding in ("", "identity") or not body:
        return body, ""
    if coding not in _DECODERS:
        read = ", ".join(c for c in _DECODERS if c != "x-gzip")
        problem = (
            f"it is encoded with Content-Encoding {coding!r}, which the reader does not "
            f"decode (it decodes {read})"
        )
    elif coding in _MODULES and _module(coding) is None:
        problem = (
            f"it is compressed with Content-Encoding {coding}, which needs {_MODULES[coding][1]}"
        )
    else:
        try:
            decoded = _DECODERS[coding](body)
        except _Undecodable as exc:
            problem = f"it is not text and does not decode as Content-Encoding {coding} ({exc})"
        else:
            # A short plain body can be a whole stream by chance: JSON stays as it is.
            if not plausibly_text(body) or (plausibly_text(decoded) and not _is_json(body)):
                return decoded, ""
            return body, ""
    if plausibly_text(body):  # stored already decoded, the header kept
        return body, ""
    return body, f"the body is not read: {problem}"


def decode_body(body: bytes, encoding: str) -> tuple[bytes, str]:
    """``body`` with the codings of the ``Content-Encoding`` value ``encoding`` undone (a
    comma-separated list, applied in order, so undone last first), and a fault: ``""``, or
    one sentence saying which coding could not be undone and why (unknown, its module not
    installed, or a body that does not decode and is not text); the body is then the one
    left before that coding."""
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
    for coding in reversed(codings):
        body, fault = _decode_one(body, coding)
        if fault:
            return body, fault
    return body, ""


__all__ = ["decode_body", "plausibly_text"]
