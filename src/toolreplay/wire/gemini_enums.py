"""Gemini's enums sent as integers, named.

The REST APIs write an enum as its name (``"finishReason": "STOP"``) unless the request asks
for numbers: ``$alt=json;enum-encoding=int`` (langchain-google-vertexai's REST transport, any
generated client asking so) gives ``"finishReason": 1``. The numbers are those of the proto
definitions, and the two APIs number past a point differently:

- **Vertex AI** (``aiplatform.googleapis.com``; a path with ``/projects/…/locations/…`` or
  ``/publishers/…``): ``Candidate.FinishReason`` of googleapis/googleapis
  ``google/cloud/aiplatform/v1/content.proto`` (v1beta1 the same), 0–10;
  ``GenerateContentResponse.PromptFeedback.BlockedReason`` of
  ``google/cloud/aiplatform/v1/prediction_service.proto``, 0–6 (``JAILBREAK`` = 6 in v1).
- **the Gemini API** (``generativelanguage.googleapis.com``; a path ``/v1…/models/…`` or
  ``/v1…/tunedModels/…``): ``Candidate.FinishReason`` and
  ``GenerateContentResponse.PromptFeedback.BlockReason`` of
  ``google/ai/generativelanguage/v1beta/generative_service.proto`` (v1 the same), 0–17 and
  0–5.

An integer is named by the table of the API the request URL names; when the URL names
neither, only by a value both tables name alike (finish reasons 0–5, block reasons 0–4). An
integer no table names raises :class:`EnumError`, which names it: it is never guessed.
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

#: Which API a request went to: ``"vertex"``, ``"gemini"`` or None (the URL names neither).
Api = Literal["vertex", "gemini"] | None

#: ``Candidate.FinishReason`` (google/cloud/aiplatform/v1/content.proto).
VERTEX_FINISH_REASONS: dict[int, str] = {
    0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY",
    4: "RECITATION", 5: "OTHER", 6: "BLOCKLIST", 7: "PROHIBITED_CONTENT", 8: "SPII",
    9: "MALFORMED_FUNCTION_CALL", 10: "MODEL_ARMOR",
}  # fmt: skip

#: ``Candidate.FinishReason`` (google/ai/generativelanguage/v1beta/generative_service.proto).
GEMINI_FINISH_REASONS: dict[int, str] = {
    0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY",
    4: "RECITATION", 5: "OTHER", 6: "LANGUAGE", 7: "BLOCKLIST", 8: "PROHIBITED_CONTENT",
    9: "SPII", 10: "MALFORMED_FUNCTION_CALL", 11: "IMAGE_SAFETY", 12: "UNEXPECTED_TOOL_CALL",
    13: "TOO_MANY_TOOL_CALLS", 14: "IMAGE_PROHIBITED_CONTENT", 15: "IMAGE_OTHER",
    16: "NO_IMAGE", 17: "IMAGE_RECITATION",
}  # fmt: skip

#: ``PromptFeedback.BlockedReason`` (google/cloud/aiplatform/v1/prediction_service.proto).
VERTEX_BLOCK_REASONS: dict[int, str] = {
    0: "BLOCKED_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER", 3: "BLOCKLIST",
    4: "PROHIBITED_CONTENT", 5: "MODEL_ARMOR", 6: "JAILBREAK",
}  # fmt: skip

#: ``PromptFeedback.BlockReason`` (google/ai/generativelanguage/v1beta/generative_service.proto).
GEMINI_BLOCK_REASONS: dict[int, str] = {
    0: "BLOCK_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER", 3: "BLOCKLIST",
    4: "PROHIBITED_CONTENT", 5: "IMAGE_SAFETY",
}  # fmt: skip

#: Per enum read (by its JSON field name): its Vertex AI and Gemini API tables.
TABLES: dict[str, tuple[dict[int, str], dict[int, str]]] = {
    "finishReason": (VERTEX_FINISH_REASONS, GEMINI_FINISH_REASONS),
    "blockReason": (VERTEX_BLOCK_REASONS, GEMINI_BLOCK_REASONS),
}

_API_NAMES = {"vertex": "Vertex AI", "gemini": "the Gemini API"}
_VERTEX_PATH = re.compile(r"/projects/[^/]+/locations/|/publishers/")
_GEMINI_PATH = re.compile(r"^/v1[a-z0-9]*/(?:models|tunedModels)/")


class EnumError(ValueError):
    """An enum sent as an integer that the API's proto definition does not name (or, when
    the URL names no API, that the two APIs name differently); the message names the field,
    the integer and the APIs' names for it."""


def api_of(uri: str) -> Api:
    """The API a request URL names (module docstring): by its host, else by its path."""
    parts = urlsplit(uri)
    host, path = (parts.hostname or "").lower(), unquote(parts.path)
    if host.endswith("aiplatform.googleapis.com"):
        return "vertex"
    if host.endswith("generativelanguage.googleapis.com"):
        return "gemini"
    if _VERTEX_PATH.search(path):
        return "vertex"
    if _GEMINI_PATH.search(path):
        return "gemini"
    return None


def enum_name(field: str, value: Any, api: Api) -> str | None:
    """``value`` of the enum ``field`` (a key of :data:`TABLES`) as its name: a string as
    sent, an integer by the API's table; None for None or any other type. Raises
    :class:`EnumError` for an integer the table does not name."""
    if isinstance(value, str):
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    vertex, gemini = TABLES[field]
    if api is not None:
        table = vertex if api == "vertex" else gemini
        if value in table:
            return table[value]
        known = f"0–{max(table)}"
        raise EnumError(
            f"{field} {value} is no value of {_API_NAMES[api]}'s enum (it names {known})"
        )
    if value in vertex and vertex[value] == gemini.get(value):
        return vertex[value]
    names = ", ".join(
        f"{table[value]} on {_API_NAMES[name]}"
        for name, table in (("vertex", vertex), ("gemini", gemini))
        if value in table
    )
    raise EnumError(
        f"{field} {value} is {names or 'no value of either API'}, and the URL names neither "
        "Vertex AI nor the Gemini API"
    )


__all__ = [
    "GEMINI_BLOCK_REASONS",
    "GEMINI_FINISH_REASONS",
    "TABLES",
    "VERTEX_BLOCK_REASONS",
    "VERTEX_FINISH_REASONS",
    "Api",
    "EnumError",
    "api_of",
    "enum_name",
]
