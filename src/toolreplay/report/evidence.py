"""Evidence linked to where it lies: the judge's grounded values pointed at the exact tool
message and JSON field, and tool results pretty-printed with the character span of every field,
so a cited field can be marked in place and shown first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.results.format import EpisodeResult, GroundedValue

#: A step of a JSONPath as the judge writes it: ``$.current.temperature_2m``,
#: ``$.daily[0].precipitation_sum``.
PATH_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def _flat(value: Any, path: str, base: int, spans: dict[str, tuple[int, int]]) -> str:
    """``value`` as one-line JSON (``json.dumps`` with ``ensure_ascii=False``), recording in
    ``spans`` the span of every nested value (absolute offsets from ``base``)."""
    if isinstance(value, dict) and value:
        out = "{"
        for n, (key, item) in enumerate(value.items()):
            if n:
                out += ", "
            out += json.dumps(str(key), ensure_ascii=False) + ": "
            out += _flat(item, f"{path}.{key}", base + len(out), spans)
        out += "}"
    elif isinstance(value, list) and value:
        out = "["
        for n, item in enumerate(value):
            if n:
                out += ", "
            out += _flat(item, f"{path}[{n}]", base + len(out), spans)
        out += "]"
    else:
        out = json.dumps(value, ensure_ascii=False)
    spans[path] = (base, base + len(out))
    return out


def pretty_spans(
    value: Any, width: int = 80, indent: int = 0, start: int | None = None
) -> tuple[str, dict[str, tuple[int, int]]]:
    """``value`` as JSON indented by 2, an object or array kept on one line when it fits within
    ``width`` columns (see :func:`toolreplay.report.episodes.pretty_json`), with the character
    span of every value in the text keyed by its JSONPath (``$``, ``$.current``,
    ``$.daily[0].temperature_2m_max``)."""
    spans: dict[str, tuple[int, int]] = {}
    text = _pretty(value, "$", indent, indent if start is None else start, width, 0, spans)
    return text, spans


def _pretty(
    value: Any,
    path: str,
    indent: int,
    column: int,
    width: int,
    base: int,
    spans: dict[str, tuple[int, int]],
) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)) or not value or column + len(flat) < width:
        return _flat(value, path, base, spans)
    inner = indent + 2
    pad = " " * inner
    out = "{\n" if isinstance(value, dict) else "[\n"
    items: list[tuple[str, str, Any]] = (
        [
            (json.dumps(str(k), ensure_ascii=False) + ": ", f"{path}.{k}", v)
            for k, v in value.items()
        ]
        if isinstance(value, dict)
        else [("", f"{path}[{n}]", v) for n, v in enumerate(value)]
    )
    for n, (name, sub, item) in enumerate(items):
        if n:
            out += ",\n"
        out += pad + name
        out += _pretty(item, sub, inner, inner + len(name), width, base + len(out), spans)
    out += "\n" + " " * indent + ("}" if isinstance(value, dict) else "]")
    spans[path] = (base, base + len(out))
    return out


def resolve(value: Any, path: str) -> tuple[bool, Any]:
    """``(found, value at path)`` for a JSONPath of keys and indexes (``$.a.b[0].c``)."""
    if not path.startswith("$"):
        return False, None
    at = value
    rest = path[1:]
    pos = 0
    for m in PATH_STEP.finditer(rest):
        if m.start() != pos:
            return False, None
        pos = m.end()
        key, index = m.group(1), m.group(2)
        if key is not None and isinstance(at, dict) and key in at:
            at = at[key]
        elif index is not None and isinstance(at, list) and int(index) < len(at):
            at = at[int(index)]
        else:
            return False, None
    return (pos == len(rest)), at


def judge_citations(ep: EpisodeResult) -> dict[int, list[GroundedValue]]:
    """The judge's evidence (``verdict_evidence.values``) per tool message index: the values
    that cite a field (``tool_field``, a JSONPath) of that tool message. Values without a tool
    message are left out (they are in :func:`judge_values`)."""
    out: dict[int, list[GroundedValue]] = {}
    for v in _values(ep):
        if v.tool_message_index is not None and v.tool_field is not None:
            out.setdefault(v.tool_message_index, []).append(v)
    return out


def _values(ep: EpisodeResult) -> list[GroundedValue]:
    return [] if ep.verdict_evidence is None else ep.verdict_evidence.values


def judge_values(ep: EpisodeResult, anchor: str, messages: int) -> list[dict[str, Any]]:
    """The judge's values for the transcript's judge line: ``{"text", "grounded", "field",
    "index", "href" (the tool message's anchor, or None), "reason"}``."""
    out = []
    for v in _values(ep):
        index = v.tool_message_index
        linked = index is not None and 0 <= index < messages
        out.append(
            {
                "text": v.text,
                "grounded": bool(v.grounded),
                "field": v.tool_field,
                "value": v.tool_value,
                "index": index if linked else None,
                "href": f"{anchor}-m{index}" if linked else None,
                "reason": v.reason or "",
            }
        )
    return out


def cited_fields(
    value: Any, citations: Sequence[GroundedValue], spans: Mapping[str, tuple[int, int]]
) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """For a tool result (parsed JSON) and the judge's citations of it: the fields that matter,
    first (``{"field", "value" (one-line JSON), "stated" [the answer's values citing it]}``,
    in citation order, each field once), and the spans to mark in the pretty text."""
    fields: dict[str, dict[str, Any]] = {}
    marks: list[tuple[int, int]] = []
    for c in citations:
        field = str(c.tool_field)
        found, at = resolve(value, field)
        if not found:
            continue
        if field not in fields:
            fields[field] = {
                "field": field,
                "value": json.dumps(at, ensure_ascii=False),
                "stated": [],
            }
            if field in spans:
                marks.append(spans[field])
        stated = c.text
        if stated and stated not in fields[field]["stated"]:
            fields[field]["stated"].append(stated)
    return list(fields.values()), sorted(set(marks))
