"""Values of the recording's environment that must not reach a model request as they are.

A tool's error text may carry what only the recording machine had: the port of a server on
loopback (``http://127.0.0.1:36173/v1/forecast: HTTP 503``), a temporary folder. Sent to the
model as it is, the next model request differs at replay (where the loopback URL has no port:
cassettes keep none, see :mod:`toolreplay.cassettes.vcr`) and misses. :func:`normalise_environment`
rewrites such values the same way when recording and when replaying (it is idempotent), so a
set recorded on loopback replays anywhere:

- a loopback URL's port is dropped (``http://127.0.0.1:36173/v1`` → ``http://127.0.0.1/v1``,
  ``localhost`` and ``[::1]`` alike), as in cassette URIs and the manifest;
- a path under the system's temporary folder becomes ``$TMPDIR/...``.
"""

from __future__ import annotations

import re
import tempfile
from functools import lru_cache

_LOOPBACK_PORT = re.compile(
    r"(?P<scheme>\bhttps?://)(?P<userinfo>[^\s/@]*@)?(?P<host>127\.0\.0\.1|localhost|\[::1\]):\d{1,5}\b"
)


@lru_cache(maxsize=1)
def _temporary() -> re.Pattern[str]:
    root = tempfile.gettempdir().rstrip("/\\")
    return re.compile(re.escape(root) + r"(?=[/\\])")


def normalise_environment(text: str) -> str:
    """``text`` with the recording environment's values rewritten (see the module docstring)."""
    if "://" in text:
        text = _LOOPBACK_PORT.sub(lambda m: f"{m['scheme']}{m['userinfo'] or ''}{m['host']}", text)
    return _temporary().sub("$TMPDIR", text)
