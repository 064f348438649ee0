"""What an episode that ended on a model API error says: HTTP status, endpoint, and the
server's own message read from the error text the OpenAI SDK embeds
(:class:`EpisodeError`)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

# How the hosts record a model API error (``str`` of
# :class:`toolreplay.wire.replies.ModelReplyError`): ``<endpoint>: HTTP <status>: <problem>``,
# or ``<endpoint>: <problem>`` when no response arrived; an SDK error without a response is
# ``<ExceptionName>: <message>``.
_HTTP_ERROR = re.compile(
    r"(?P<endpoint>[a-z][a-z0-9+.-]*://\S+?): (?:HTTP (?P<status>\d{3}): )?(?P<problem>.*)\Z",
    re.DOTALL,
)


# The OpenAI SDK's status errors end with the response body: ``Error code: 500 - {...}``.
_BODY = re.compile(r"Error code: \d{3} - (?P<body>[\[{].*[\]}])\s*\Z", re.DOTALL)


def _server_message(problem: str) -> str | None:
    """The message the server put in its error body (``{"error": {"message": ...}}``,
    ``{"message": ...}``, ``{"detail": ...}``), read from the SDK's text, or None."""
    found = _BODY.search(problem)
    if found is None or len(found["body"]) > 200_000:
        return None
    body: Any = None
    for parse in (json.loads, ast.literal_eval):  # JSON, or the SDK's Python repr of it
        try:
            body = parse(found["body"])
            break
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    for _ in range(3):
        if isinstance(body, dict):
            inner = body.get("error", body.get("message", body.get("detail")))
            if isinstance(inner, str):
                return inner
            body = inner
    return None


@dataclass(frozen=True)
class EpisodeError:
    """The model API error an episode ended on, read from :attr:`Episode.error`:
    ``status`` (the HTTP status; None when no response arrived), ``endpoint`` (the request
    URL, when known), ``message`` (the server's own message when its error body holds one,
    else the error text without endpoint and status) and ``text`` (the error as recorded)."""

    status: int | None
    endpoint: str | None
    message: str
    text: str

    @classmethod
    def parse(cls, text: str | None) -> EpisodeError:
        """Read an episode's ``error`` text (None: an ``error`` stop with no text)."""
        if not text:
            return cls(None, None, "no error text was recorded", "")
        found = _HTTP_ERROR.match(text)
        if found is None:
            return cls(None, None, text, text)
        status = int(found["status"]) if found["status"] else None
        problem = found["problem"]
        return cls(status, found["endpoint"], _server_message(problem) or problem, text)

    def summary(self) -> str:
        """The error in a few words: ``HTTP 500 from http://…/chat/completions``, ``HTTP 200
        from …, not a chat completion``, ``no response from …`` or ``no response
        (APIConnectionError)``."""
        where = f" from {self.endpoint}" if self.endpoint else ""
        if self.status is not None:
            return f"HTTP {self.status}{where}" + (", not a chat completion" * (self.status < 400))
        if self.endpoint:
            return f"no response{where}"
        kind = self.text.split(":", 1)[0].strip()
        return f"no response ({kind})" if kind.isidentifier() else "no response"


