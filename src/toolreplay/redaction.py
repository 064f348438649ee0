"""One redaction step for everything toolreplay writes or prints.

What is secret: every value :func:`register` / :func:`register_url` was given (the live key a
recording sends, the password of a base URL's userinfo ``http://user:pass@host/v1``, the
values of credential query parameters such as ``?api_key=...``), and the values of
environment variables named like a credential (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_PASSWORD``) and the userinfo of ``OPENAI_BASE_URL`` / ``TOOLREPLAY_BASE_URL``, read at
each use. Values shorter than :data:`MIN_SECRET` characters are not searched for (a test key
such as ``k`` would match ordinary text); a userinfo is searched for as ``user:pass@`` whatever
its length.

Where the step sits:

- every file toolreplay writes goes through :func:`redact_text` / :func:`redact_bytes`
  (:mod:`toolreplay.outputs`' atomic writers: results, report, manifest, cassettes, shards);
- a cassette about to be written (by ``toolreplay record`` or the pytest plugin) is scanned
  first by :func:`refuse_secrets`, bodies of any encoding included (bytes are searched as
  UTF-8, UTF-16 and gzip-decoded), and refused with :class:`SecretFound` before any byte of it
  is written: a recording never silently keeps a key, redacted or not;
- every secret is searched for in its encoded forms too (:func:`text_forms`: base64 standard
  and URL-safe at any offset, hexadecimal, percent-encoded), where a server may echo it;
- standard output and standard error of the command line are :class:`SafeStream` s
  (:func:`install_streams`): every line printed, messages of exceptions included, is
  redacted, and characters the stream's encoding cannot show are escaped instead of failing.
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import IO, Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

#: Shorter values are not searched for (they would match ordinary text).
MIN_SECRET = 8

#: What a secret is replaced with.
REDACTED = "[redacted]"

#: Environment variable names whose values are secrets.
SECRET_ENV = re.compile(r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)

#: Environment variables holding base URLs whose userinfo is a secret.
URL_ENV = ("OPENAI_BASE_URL", "TOOLREPLAY_BASE_URL")

#: What the name of a query parameter whose value is a credential ends with, once lower-cased
#: and without ``-`` and ``_`` (:func:`secret_query`): ``key`` (``api_key``, ``apiKey``,
#: ``x-api-key``, ``subscription-key``), ``token`` (``access_token``,
#: ``X-Amz-Security-Token``), ``secret``, passwords, ``signature``/``sig``, ``auth``,
#: ``credential(s)``, ``jwt``, ``bearer``. A name with brackets (``filter[key]``) is data.
SECRET_QUERY = re.compile(
    r"(?:key|token|secret|passw(?:or)?d|passphrase|pwd|signature|sig|auth|authorization"
    r"|credentials?|jwt|bearer)$"
)

#: Names (normalised as above) that are a credential on some APIs and data on others:
#: OpenWeatherMap's ``appid`` is its key, Steam's ``appid=440`` the game asked about; a
#: session id. One of them is a credential when its value looks like a key
#: (:data:`KEY_LIKE`), and kept (matched, recorded) otherwise.
AMBIGUOUS_QUERY = frozenset({"appid", "sessionid", "sessid"})

#: A value that looks like a key: 16 or more letters, digits and ``-_.~+/=``, both letters
#: and digits among them (``f3b1…`` of 32 hex digits, not ``440`` nor ``english``).
KEY_LIKE = re.compile(r"(?=[^\d]*\d)(?=[^a-z]*[a-z])[a-z0-9\-_.~+/=]{16,}", re.IGNORECASE)


def secret_query(name: str, value: str = "") -> bool:
    """Whether the query parameter ``name=value`` (percent-decoded) carries a credential:
    its name ends as :data:`SECRET_QUERY` says, or is one of :data:`AMBIGUOUS_QUERY` with a
    :data:`KEY_LIKE` value. ``("api-key", …)``, ``("X-Amz-Signature", …)``,
    ``("appid", "f3b1c2d4e5f60718293a4b5c6d7e8f90")`` are; ``("q", …)``, ``("appid",
    "440")``, ``("filter[key]", "name")`` are not. The one rule for what is dropped before a
    cassette is written (and so before a request is matched), when a URL is shown, and when a
    secret is looked for."""
    normal = re.sub(r"[-_]", "", name.lower())
    if SECRET_QUERY.search(normal):
        return True
    return normal in AMBIGUOUS_QUERY and KEY_LIKE.fullmatch(value) is not None


def secret_query_pair(pair: str) -> bool:
    """:func:`secret_query` of one ``name=value`` of a query string as sent (percent-encoded,
    ``+`` for spaces)."""
    name, _, value = pair.partition("=")
    return secret_query(unquote_plus(name), unquote_plus(value))


_registered: set[str] = set()


class SecretFound(ValueError):
    """Something about to be written holds a secret; the message says where (never what)."""


def register(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (ignored when shorter than :data:`MIN_SECRET`)."""
    if value and len(value) >= MIN_SECRET:
        _registered.add(value)


def url_secrets(url: str | None) -> list[str]:
    """The secrets a URL carries: its userinfo (as ``user:pass@`` and, when long enough, the
    password alone) and the values of its credential query parameters."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    netloc = parts.netloc
    if "@" in netloc:
        userinfo = netloc.rpartition("@")[0]
        found.append(userinfo + "@")
        password = userinfo.partition(":")[2]
        for value in {password, unquote(password)}:
            if len(value) >= MIN_SECRET:
                found.append(value)
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if secret_query(name, value) and len(value) >= MIN_SECRET:
            found.append(value)
    return found


def register_url(url: str | None) -> None:
    """Treat the secrets of ``url`` (:func:`url_secrets`) as secrets from now on."""
    _registered.update(url_secrets(url))


def strip_url_credentials(url: str) -> str:
    """``url`` without userinfo and with the values of credential query parameters dropped
    (the parameters themselves too): safe to print or write."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = "&".join(
        pair
        for pair in parts.query.split("&")
        if pair and not secret_query_pair(pair)
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def known_secrets() -> list[str]:
    """Every secret known now, longest first (so a longer one is replaced whole)."""
    found = set(_registered)
    for name, value in os.environ.items():
        if SECRET_ENV.search(name) and len(value) >= MIN_SECRET:
            found.add(value)
    for name in URL_ENV:
        found.update(url_secrets(os.environ.get(name)))
    return sorted(found, key=lambda s: (-len(s), s))


def _base64_cores(data: bytes) -> Iterator[str]:
    """The characters of ``data``'s base64 encodings (standard and URL-safe) that depend on
    ``data`` alone, for each of the three alignments it can start at inside a longer encoded
    string: a secret encoded at any offset of a larger value contains one of them."""
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        first = -(-8 * offset // 6)  # the first character whose six bits are all the secret's
        last = (8 * (offset + len(data))) // 6  # one past the last such character
        core = encoded[first:last]
        yield core
        yield core.translate(_URLSAFE)


_URLSAFE = str.maketrans("+/", "-_")


@lru_cache(maxsize=256)
def text_forms(secret: str) -> tuple[str, ...]:
    """The forms ``secret`` is searched for in text, longest first: itself, its base64
    encodings (standard and URL-safe, at any offset: :func:`_base64_cores`), its UTF-8 bytes
    in hexadecimal (lower and upper case) and percent-encoded (``quote`` and ``quote_plus``,
    when they differ from the secret). Each is at least as long as the secret's base64 core
    (10 characters for the shortest secret searched)."""
    data = secret.encode("utf-8")
    forms = {secret, data.hex(), data.hex().upper(), quote(secret), quote(secret, safe="")}
    forms.add(quote_plus(secret))
    forms.update(_base64_cores(data))
    return tuple(sorted(forms, key=lambda f: (-len(f), f)))


def redact_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret, in any of its :func:`text_forms`, replaced by
    :data:`REDACTED`."""
    for secret in known_secrets() if secrets is None else secrets:
        for form in text_forms(secret):
            if form in text:
                text = text.replace(form, REDACTED)
    return text


@lru_cache(maxsize=256)
def _forms(secret: str) -> tuple[bytes, ...]:
    """The byte forms of ``secret``: each of its :func:`text_forms` as UTF-8, and the secret
    itself as UTF-16 (both byte orders)."""
    forms = [form.encode("utf-8") for form in text_forms(secret)]
    forms += [secret.encode("utf-16-le"), secret.encode("utf-16-be")]
    return tuple(forms)


def redact_bytes(data: bytes, secrets: Iterable[str] | None = None) -> bytes:
    """``data`` with every secret (any of its :func:`_forms`: plain, base64, hex or
    percent-encoded as UTF-8, or plain UTF-16) replaced by :data:`REDACTED`."""
    for secret in known_secrets() if secrets is None else secrets:
        for form in _forms(secret):
            if form in data:
                data = data.replace(form, REDACTED.encode("ascii"))
    return data


def _decoded(data: bytes) -> bytes:
    """``data`` and, when it is gzip or zlib compressed, its decompressed bytes too."""
    if data[:2] == b"\x1f\x8b":
        try:
            return data + gzip.decompress(data)[: 64 * 1024 * 1024]
        except (OSError, EOFError, zlib.error):
            return data
    if data[:1] == b"\x78":
        try:
            return data + zlib.decompress(data)[: 64 * 1024 * 1024]
        except zlib.error:
            return data
    return data


def find_secret(value: Any, secrets: Iterable[str] | None = None) -> str | None:
    """Where in ``value`` (nested dicts, lists, strings, bytes) a secret appears, as a path
    such as ``interactions.2.response.body.string``; None when nowhere."""
    wanted = list(known_secrets() if secrets is None else secrets)
    if not wanted:
        return None
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if any(form in item for s in wanted for form in text_forms(s)):
                return at or "value"
        elif isinstance(item, (bytes, bytearray)):
            data = _decoded(bytes(item))
            if any(form in data for s in wanted for form in _forms(s)):
                return at or "value"
        elif isinstance(item, dict):
            for k, v in item.items():
                stack.append((v, f"{at}.{k}" if at else str(k)))
                stack.append((k, f"{at}.{k} (key)" if at else f"{k} (key)"))
        elif isinstance(item, (list, tuple)):
            stack.extend((v, f"{at}.{i}" if at else str(i)) for i, v in enumerate(item))
    return None


def refuse_secrets(value: Any, what: str) -> None:
    """:class:`SecretFound` when ``value`` (about to be written as ``what``, e.g. a cassette's
    path) holds a secret; the message names the place, never the secret."""
    where = find_secret(value)
    if where is not None:
        raise SecretFound(
            f"a secret (the API key or a credential) appears in {what} at {where} (the "
            "endpoint echoed it?); Refused before writing it: nothing was written"
        )


class SafeStream:
    """A text stream that redacts secrets and escapes what its encoding cannot show
    (``PYTHONIOENCODING=ascii``, ``LANG=C``) instead of raising; everything else is the
    wrapped stream's."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        safe = redact_text(text)
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        try:
            safe.encode(encoding)
        except UnicodeEncodeError:
            safe = safe.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:
            pass
        self._stream.write(safe)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install_streams() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` :class:`SafeStream` s (once)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, SafeStream):
            setattr(sys, name, SafeStream(stream))
