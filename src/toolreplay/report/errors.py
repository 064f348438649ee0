"""Model API errors grouped by cause, for the failure gallery (``templates/_gallery.html.j2``).

Episodes that ended on a model API error (``EpisodeResult.error``, failure mode ``error``) are
grouped by their **cause**: the HTTP status, the endpoint and the server's own message
normalised (:func:`normalised_message`: the request's own values a validation error echoes
back, ids, and numbers that vary from request to request taken out). Eight episodes refused by
the same server for the same reason are then one line (status, endpoint, the server's message
cut at :data:`MESSAGE_CHARS` characters), a count, the episodes as links, and the full dump
folded once, instead of eight identical cards.

A message that lists pydantic validation errors (a FastAPI/llama-cpp-python server's 422 or
500: one ``{'type', 'loc', 'msg', 'input'}`` per line, or JSON ``{"detail": [...]}``) is also
read for the error that applies (:func:`validation_cause`): of the branches of a union the
request was checked against, those whose discriminator (``role``, ``type``) did not match are
set aside, and what is left says in one line what the server rejected (``messages[2].content:
Input should be a valid string (got None)``). Deterministic: a function of the episodes only.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from toolreplay.report.text import text_view
from toolreplay.results.format import EpisodeError, EpisodeResult

__all__ = [
    "MESSAGE_CHARS",
    "error_causes",
    "normalised_message",
    "validation_cause",
]

#: Characters of the server's message shown on a cause's line (the whole dump is folded).
MESSAGE_CHARS = 200


#: Characters of a dump shown whole in its fold (a longer one is cut with "show all").
DUMP_CHARS = 20_000


#: Ids that differ from request to request: UUIDs, long hex strings, prefixed ids
#: (``call_…``, ``req_…``, ``chatcmpl-…``, ``org-…``, ``toolu_…``) and any long token mixing
#: letters and digits (``req_011CZAau32QzxDkriovTaFCB``).
IDS = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|\b(?:call|req|chatcmpl|cmpl|msg|toolu|org|run|resp|file|user|proj)[-_][A-Za-z0-9_-]+"
    r"|\b[0-9a-fA-F]{12,}\b"
    r"|\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}\b"
)


#: Durations, whatever their unit (a retry delay: ``try again in 174ms`` / ``in 3.89s``).
DURATIONS = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?|m|min|minutes?|h|hours?)\b")


#: Numbers (token counts, limits, list indexes, line numbers).
NUMBERS = re.compile(r"\d+(?:\.\d+)?")


#: Where a validation error echoes the request's own value back: ``'input': …`` (pydantic's
#: repr) or ``"input": …`` (JSON).
INPUT_KEY = re.compile(r"""(['"])input\1\s*:\s*""")


_CLOSE = {"{": "}", "[": "]", "(": ")"}


def _value_end(text: str, at: int) -> int:
    """Where the Python/JSON literal starting at ``text[at]`` ends (its end index): a quoted
    string, a bracketed value (brackets inside quotes ignored), or a bare word up to the next
    ``,`` ``}`` ``]`` ``)`` or line end."""
    if at >= len(text):
        return at
    first = text[at]
    if first in "'\"":
        i = at + 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == first:
                return i + 1
            i += 1
        return len(text)
    if first in _CLOSE:
        depth, i, quote = 0, at, ""
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch in _CLOSE:
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return len(text)
    m = re.compile(r"[^,})\]\n]*").match(text, at)
    return m.end() if m else at


def _drop_inputs(text: str) -> str:
    out, at = [], 0
    for m in INPUT_KEY.finditer(text):
        if m.start() < at:
            continue  # an "input" inside a value already dropped
        out.append(text[at : m.end()] + "…")
        at = _value_end(text, m.end())
    out.append(text[at:])
    return "".join(out)


def normalised_message(message: str) -> str:
    """``message`` with what varies between requests for the same cause taken out: the values
    a validation error echoes back (``'input': …`` → ``'input': …``), ids (:data:`IDS` →
    ``<id>``), durations (:data:`DURATIONS` → ``<duration>``), numbers (→ ``#``), and runs of
    white space (→ one space)."""
    text = _drop_inputs(message)
    text = IDS.sub("<id>", text)
    text = DURATIONS.sub("<duration>", text)
    text = NUMBERS.sub("#", text)
    return " ".join(text.split())


def _validation_errors(message: str) -> list[dict[str, Any]]:
    """The validation errors ``message`` lists: pydantic's repr, one dict per line, or a JSON
    body ``{"detail": [...]}`` (FastAPI); [] when it lists none."""
    found: list[dict[str, Any]] = []
    try:
        body = json.loads(message)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), list):
        found = [d for d in body["detail"] if isinstance(d, dict)]
    else:
        for line in message.splitlines():
            line = line.strip()
            if not (line.startswith("{") and "'loc'" in line and "'msg'" in line):
                continue
            try:
                value = ast.literal_eval(line)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict):
                found.append(value)
    return [d for d in found if isinstance(d.get("loc"), (list, tuple)) and "msg" in d]


def _is_branch(part: Any) -> bool:
    """A union member's name in a location (``ChatCompletionRequestAssistantMessage``)."""
    return isinstance(part, str) and part[:1].isupper() and part.isidentifier()


def _path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if part == "body" and not out:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _is_branch(part):
            out += f".{part}" if out else str(part)
    return out or "(the request)"


def _got(value: Any) -> str:
    if value is None or isinstance(value, (bool, int, float)):
        return f" (got {json.dumps(value)})"
    if isinstance(value, str) and len(value) <= 40:
        return f" (got {json.dumps(value, ensure_ascii=False)})"
    return ""


def validation_cause(message: str) -> str | None:
    """The validation error that applies, in one line, when ``message`` lists validation
    errors: ``messages[2].content: Input should be a valid string (got null)``; several joined
    with ``; ``, then the union branch it was checked as when others were set aside (``,
    checked as ChatCompletionRequestAssistantMessage``); None when the message lists none.
    Union branches whose discriminator (a ``literal_error`` on ``role`` or ``type``) rejected
    the value are left out, with the errors under them (they say the value is not that kind,
    not what is wrong with it). The value given is shown as JSON (``null``) when short."""
    errors = _validation_errors(message)
    if not errors:
        return None
    rejected = set()
    for e in errors:
        loc = tuple(e["loc"])
        if e.get("type") == "literal_error" and loc and loc[-1] in ("role", "type"):
            if len(loc) >= 2 and _is_branch(loc[-2]):
                rejected.add(loc[:-1])
    kept = [
        e for e in errors if not any(tuple(e["loc"])[: len(b)] == b for b in rejected)
    ] or errors
    lines = dict.fromkeys(f"{_path(e['loc'])}: {e['msg']}{_got(e.get('input'))}" for e in kept)
    branches = {p for e in kept for p in e["loc"] if _is_branch(p)}
    checked = f", checked as {branches.pop()}" if len(branches) == 1 and rejected else ""
    return "; ".join(lines) + checked


def _one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _status(error: EpisodeError) -> str:
    return "no response" if error.status is None else f"HTTP {error.status}"


def error_causes(episodes: Sequence[EpisodeResult], anchors: Sequence[str]) -> list[dict[str, Any]]:
    """The episodes that ended on a model API error (``error`` set and failure mode
    ``error``), grouped by cause (status, endpoint, :func:`normalised_message`), the most
    frequent first (then in results order): ``[{"status" (``HTTP 500`` or ``no response``),
    "endpoint" (or None), "message" (the server's message on one line, at most
    :data:`MESSAGE_CHARS` characters; a text view), "cause" (:func:`validation_cause` as a
    text view, or None), "count", "configurations" ([{"name", "count"}]), "episodes"
    ([{"anchor", "configuration", "question_id", "question"}], results order), "dump" (the
    first episode's whole message, a text view cut only past :data:`DUMP_CHARS`),
    "dump_chars" (its length), "same_dump" (every episode's message is exactly that one)}]``.
    ``anchors`` are the episodes' anchors, in the same order."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, ep in enumerate(episodes):
        error = ep.error
        if error is None or "error" not in ep.modes:
            continue
        message = error.message or error.text or ""
        key = (error.status, error.endpoint, normalised_message(message))
        groups.setdefault(key, []).append(i)
    ordered = sorted(groups.values(), key=lambda members: (-len(members), members[0]))
    out = []
    for members in ordered:
        first = episodes[members[0]]
        error = first.error
        assert error is not None
        message = error.message or error.text or ""
        cause = validation_cause(message)
        names: dict[str, int] = {}
        for i in members:
            names[episodes[i].configuration] = names.get(episodes[i].configuration, 0) + 1
        out.append(
            {
                "status": _status(error),
                "endpoint": error.endpoint,
                "message": text_view(_one_line(message), lang=False),
                "cause": None if cause is None else text_view(cause, lang=False),
                "count": len(members),
                "configurations": [{"name": k, "count": v} for k, v in names.items()],
                "episodes": [
                    {
                        "anchor": anchors[i],
                        "configuration": episodes[i].configuration,
                        "question_id": episodes[i].question_id,
                        "question": text_view(episodes[i].question),
                    }
                    for i in members
                ],
                "dump": text_view(message, limit=DUMP_CHARS, lang=False),
                "dump_chars": len(message),
                "same_dump": all(
                    (episodes[i].error.message or episodes[i].error.text or "") == message  # type: ignore[union-attr]
                    for i in members
                ),
            }
        )
    return out
