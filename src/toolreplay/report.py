"""``reports/index.html``: the results of a cassette set as one self-contained HTML page.

The page is rendered with Jinja2 from ``reports/results.json`` (see :mod:`toolreplay.results`)
and holds: provenance (a stand-in set is labelled a test double), the 2×2 grid of passed/total
(rows: host, columns: toolset), metrics per configuration with inline SVG bar charts, the
tool-call chain of every episode per question with its stop reason, the failure gallery, the
fidelity audit and every transcript in a collapsible ``<details>``.

Guarantees:

* **Self-contained**: inline CSS and one small inline script (expands transcripts for printing);
  no CDN, no external fonts or images. A Content-Security-Policy ``<meta>`` allows only those two
  inline blocks (by hash), so even text that slipped through escaping could not run or load.
* **Escaped**: the Jinja2 environment autoescapes everything; model output, tool output and
  cassette content only ever reach the page as escaped text. No JSON is embedded in a script.
* **Deterministic**: the page is a function of the results only (no clock, no random ids, input
  order kept), so re-rendering the same results gives byte-identical output.

Optional result fields, rendered when present and reported as *not run* when absent (never as
a pass):

* ``episodes[i]["failure_modes"]``: ``[{"mode": "empty_answer" | "unfulfilled_promise" |
  "fabricated_value" | "no_measurement" | ..., "explanation": str, "evidence": {"message_index":
  int | None, "span": [start, end] | None, "text": str | None, "tool_call": {"name": str,
  "arguments": Any} | None}}]``. ``message_index`` indexes the episode's ``transcript``;
  ``span`` is character offsets into that message's content (into the answer when
  ``message_index`` is None).
* ``results["fidelity"]``: ``{"checks": [{"name", "passed": bool, "explanation", "evidence":
  [str]}], "tables": {key: {"title", "rows": [{"name", "passed": int, "total": int}]}},
  "ablations": [{"heuristic", "configuration", "passed", "total", "flips": [{"question_id",
  "from": bool, "to": bool}]}]}``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from .files import atomic_writer
from .report_trials import trials_view
from .results import ResultsError, check_results, load_results

__all__ = [
    "ReportError",
    "build_page",
    "check_results",
    "load_results",
    "pretty_json",
    "render_report",
    "stream_report",
    "write_report",
]

TEMPLATE = "report.html.j2"
STYLE_TEMPLATE = "report.css.j2"
SCRIPT_TEMPLATE = "report.js.j2"

#: Failure modes in the order the gallery shows them; unknown modes follow, sorted by name.
FAILURE_MODES: dict[str, str] = {
    "empty_answer": "Empty answer",
    "unfulfilled_promise": "Unfulfilled promise",
    "fabricated_value": "Fabricated value",
    "no_measurement": "No measurement",
    "refusal": "Refusal",
}
#: Grid rows and columns in the study's order; hosts/toolsets not listed here follow.
HOSTS: dict[str, str] = {"single": "one tool round (if)", "loop": "until no tool call (while)"}
TOOLSETS: dict[str, str] = {
    "oneshot": "get_weather(city)",
    "atomic": "geocode_city → get_weather_by_coords",
}
#: Metrics charted per configuration: (results key, label, number format).
METRICS: tuple[tuple[str, str, str], ...] = (
    ("avg_rounds", "avg rounds", "{:.2f}"),
    ("avg_tool_calls", "avg tool calls", "{:.2f}"),
    ("recorded_wall_time_s", "recorded wall time (s, sum)", "{:.3f}"),
    ("avg_tokens", "avg tokens per episode", "{:.1f}"),
)

#: Results files are validated by :mod:`toolreplay.results` (pydantic models, one definition);
#: a malformed one raises :class:`ReportError`, the same class as
#: :class:`toolreplay.results.ResultsError`.
ReportError = ResultsError


# --------------------------------------------------------------------------- rendering


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("toolreplay", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@cache
def _static() -> dict[str, Any]:
    """The inline stylesheet and script (trusted, static) and the CSP that admits only them."""
    env = _environment()
    style = env.get_template(STYLE_TEMPLATE).render()
    script = env.get_template(SCRIPT_TEMPLATE).render()
    csp = (
        "default-src 'none'; "
        f"style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    # Markup: these are our own template files, not data; they must reach the page verbatim.
    return {"style": Markup(style), "script": Markup(script), "csp": csp}


def render_report(results: Mapping[str, Any]) -> str:
    """Render the HTML page for ``results`` (the dict ``toolreplay run`` writes to
    ``reports/results.json``; shape in :mod:`toolreplay.results` and this module's docstring).

    Returns the whole page as a ``str``; the same results always give the same string.
    Raises :class:`ReportError` when ``results`` does not match
    :class:`toolreplay.results.Results`."""
    buffer = io.StringIO()
    stream_report(results, buffer.write)
    return buffer.getvalue()


def write_report(results_path: Path, out_path: Path) -> Path:
    """Render ``results_path`` (a results.json) into ``out_path`` (UTF-8, ``\\n`` line ends),
    creating its folder; the page is streamed to the file, never held whole in memory.
    Returns ``out_path``. Raises :class:`ReportError` naming the results file when it is
    missing or malformed. The page is written next to ``out_path`` and moved into place
    when complete (:func:`toolreplay.files.atomic_writer`), so a failure or a concurrent writer
    never leaves a half-written page."""
    results = load_results(results_path)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(out) as f:  # unique temporary file, fsynced, then os.replace
        stream_report(results, f.write)
    return out


def stream_report(results: Mapping[str, Any], write: Callable[[str], object]) -> None:
    """Render the page for ``results`` like :func:`render_report`, passing it to ``write``
    (e.g. a text file's ``write``) piece by piece instead of building one string. Raises
    :class:`ReportError` (before writing anything) when ``results`` is malformed."""
    check_results(results)
    page = build_page(results)
    for piece in _environment().get_template(TEMPLATE).generate(page=page, **_static()):
        write(piece)


# --------------------------------------------------------------------------- view model
#
# build_page turns results into plain dicts the template only loops over: all formatting,
# ordering and highlighting decisions are made here, where they can be tested.


@dataclass(frozen=True)
class Segment:
    """A piece of message text; ``mark`` names the failure mode it is evidence of, if any."""

    text: str
    mark: str | None = None


def build_page(results: Mapping[str, Any]) -> dict[str, Any]:
    """The template's view of ``results``: ``{"title", "header", "grid", "metrics", "charts",
    "questions", "gallery", "fidelity", "transcripts", "trials"}`` (plain dicts and lists)."""
    episodes = list(results["episodes"])
    anchors = _anchors(episodes)
    configurations = list(results["configurations"])
    prov = results["provenance"]
    return {
        "title": f"toolreplay report: {results['cassette_set']} ({prov['provenance']})",
        "header": _header(results),
        "grid": _grid(configurations),
        "metrics": _metrics(configurations),
        "charts": _charts(configurations),
        "questions": _questions(episodes, configurations, anchors),
        "gallery": _gallery(episodes, anchors),
        "fidelity": _fidelity(results.get("fidelity")),
        "transcripts": _transcripts(episodes, configurations, anchors),
        "trials": trials_view(results),  # "Consistency over trials" (report_trials.py)
    }


def _header(results: Mapping[str, Any]) -> dict[str, Any]:
    prov = results["provenance"]
    return {
        "cassette_set": results["cassette_set"],
        "provenance": prov["provenance"],
        "stand_in": prov["provenance"] == "stand-in",
        "live": prov["provenance"] == "live",
        "model": prov["model"],
        "endpoint_host": prov["endpoint_host"],
        "recorded_on": prov.get("recorded_on") or "unknown",
        "today": prov.get("today") or "unknown",
        "judge": results.get("judge", "unknown"),
        "packages": [{"name": k, "version": v} for k, v in prov.get("packages", {}).items()],
        "episodes": len(results["episodes"]),
        "configurations": len(results["configurations"]),
    }


def _anchors(episodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """A stable, unique HTML id per episode: ``ep-<n>-<configuration>-<question id>``."""
    out = []
    for n, ep in enumerate(episodes, 1):
        slug = re.sub(r"[^a-z0-9]+", "-", f"{ep['configuration']}-{ep['question_id']}".lower())
        out.append(f"ep-{n}-{slug.strip('-')}")
    return out


def _status(passed: int, total: int) -> str:
    """``all`` / ``none`` / ``partial`` (``empty`` when there is nothing to pass)."""
    if total == 0:
        return "empty"
    if passed == total:
        return "all"
    return "none" if passed == 0 else "partial"


def _split_name(name: str) -> tuple[str, str] | None:
    """``single+atomic`` → ``("single", "atomic")``; None for other names (e.g. ablations)."""
    match = re.fullmatch(r"([^+\s]+)\+([^+\-\s]+)", name)
    return (match.group(1), match.group(2)) if match else None


def _ordered(seen: Iterable[str], known: Iterable[str]) -> list[str]:
    seen = list(dict.fromkeys(seen))
    return [k for k in known if k in seen] + [s for s in seen if s not in known]


def _grid(configurations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Rows are hosts, columns toolsets, cells passed/total, like the study's table."""
    cells: dict[tuple[str, str], Mapping[str, Any]] = {}
    for c in configurations:
        parts = _split_name(c["name"])
        if parts:
            cells.setdefault(parts, c)
    hosts = _ordered((h for h, _ in cells), HOSTS)
    toolsets = _ordered((t for _, t in cells), TOOLSETS)
    rows = []
    for host in hosts:
        row = []
        for toolset in toolsets:
            cell = cells.get((host, toolset))
            row.append(
                None
                if cell is None
                else {
                    "name": cell["name"],
                    "passed": cell["passed"],
                    "total": cell["total"],
                    "status": _status(cell["passed"], cell["total"]),
                }
            )
        rows.append({"host": host, "caption": HOSTS.get(host, ""), "cells": row})
    return {
        "columns": [{"toolset": t, "caption": TOOLSETS.get(t, "")} for t in toolsets],
        "rows": rows,
    }


def _metrics(configurations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": c["name"],
            "passed": c["passed"],
            "total": c["total"],
            "status": _status(c["passed"], c["total"]),
            "cells": [fmt.format(c[key]) for key, _, fmt in METRICS],
            "stop_reasons": [
                {"reason": k, "count": v} for k, v in c.get("stop_reasons", {}).items()
            ],
        }
        for c in configurations
    ]


CHART_BAR_H = 18
CHART_GAP = 6
CHART_BAR_W = 150.0
CHART_VALUE_W = 64


def _charts(configurations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One horizontal bar chart per metric; geometry precomputed for the SVG (fixed decimals,
    so the markup is deterministic)."""
    label_w = max([len(c["name"]) for c in configurations] + [8]) * 7 + 10
    width = label_w + CHART_BAR_W + CHART_VALUE_W
    charts = []
    for key, label, fmt in METRICS:
        values = [float(c[key]) for c in configurations]
        top = max([*values, 0.0])
        bars = []
        for i, (c, v) in enumerate(zip(configurations, values, strict=True)):
            y = i * (CHART_BAR_H + CHART_GAP)
            w = CHART_BAR_W * v / top if top > 0 else 0.0
            bars.append(
                {
                    "name": c["name"],
                    "value": fmt.format(c[key]),
                    "y": y,
                    "text_y": f"{y + CHART_BAR_H * 0.72:.1f}",
                    "w": f"{w:.1f}",
                    "value_x": f"{label_w + w + 4:.1f}",
                    "host": (_split_name(c["name"]) or ("other", ""))[0],
                }
            )
        charts.append(
            {
                "key": key,
                "label": label,
                "width": f"{width:.0f}",
                "height": max(len(bars) * (CHART_BAR_H + CHART_GAP) - CHART_GAP, 1),
                "label_x": label_w - 6,
                "bar_x": label_w,
                "bar_h": CHART_BAR_H,
                "bars": bars,
            }
        )
    return charts


def _compact(value: Any) -> str:
    """Tool-call arguments on one line: ``宁德`` or ``39.9075, 116.3972``."""
    if isinstance(value, Mapping):
        return ", ".join(_compact(v) for v in value.values())
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _chain(ep: Mapping[str, Any]) -> dict[str, Any]:
    """The episode's tool calls grouped by round (``→`` between rounds, parallel calls side by
    side), then the pending tool calls the host never ran."""
    calls = ep.get("calls")
    if calls is None:  # older results: names only, one call per step
        calls = [{"round": i, "name": n} for i, n in enumerate(ep["tool_chain"], 1)]
    rounds: dict[int, list[dict[str, Any]]] = {}
    for call in calls:
        args = call.get("arguments")
        rounds.setdefault(call["round"], []).append(
            {"name": call["name"], "args": None if args is None else _compact(args)}
        )
    pending = [
        {"name": c["name"], "args": _compact(c.get("arguments"))}
        for c in ep.get("pending_tool_calls", [])
    ]
    return {
        "rounds": [rounds[k] for k in sorted(rounds)],
        "pending": pending,
        "text": " → ".join(c["name"] for c in calls) or "(no tool call)",
    }


def _questions(
    episodes: Sequence[Mapping[str, Any]],
    configurations: Sequence[Mapping[str, Any]],
    anchors: Sequence[str],
) -> list[dict[str, Any]]:
    """Per question (first-seen order), one row per configuration (configurations order)."""
    order = {c["name"]: i for i, c in enumerate(configurations)}
    by_question: dict[str, list[int]] = {}
    for i, ep in enumerate(episodes):
        by_question.setdefault(ep["question_id"], []).append(i)
    out = []
    for qid, idxs in by_question.items():
        idxs = sorted(idxs, key=lambda i: (order.get(episodes[i]["configuration"], len(order)), i))
        out.append(
            {
                "id": qid,
                "question": episodes[idxs[0]]["question"],
                "rows": [
                    {
                        "configuration": episodes[i]["configuration"],
                        "passed": episodes[i]["passed"],
                        "rounds": episodes[i]["rounds"],
                        "tool_calls": episodes[i]["tool_calls"],
                        "stop_reason": episodes[i]["stop_reason"],
                        "chain": _chain(episodes[i]),
                        "anchor": anchors[i],
                    }
                    for i in idxs
                ],
            }
        )
    return out


def _text_of(message: Mapping[str, Any] | None) -> str | None:
    if message is None:
        return None
    content = message.get("content")
    return content if isinstance(content, str) else None


def _highlight(text: str, span: Any, quoted: str | None, mode: str) -> list[Segment] | None:
    """``text`` split so the evidence is its own marked segment: by ``span`` when it fits the
    text, else at the first occurrence of ``quoted``; None when neither locates it."""
    start = end = None
    if (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(x, int) for x in span)
        and 0 <= span[0] < span[1] <= len(text)
    ):
        start, end = span
    elif quoted:
        at = text.find(quoted)
        if at >= 0:
            start, end = at, at + len(quoted)
    if start is None or end is None:
        return None
    parts = [Segment(text[:start]), Segment(text[start:end], mode), Segment(text[end:])]
    return [p for p in parts if p.text]


PRETTY_WIDTH = 80


def pretty_json(value: Any, indent: int = 0, start: int | None = None) -> str:
    """``value`` as JSON indented by 2, except that an object or array whose one-line form fits
    within :data:`PRETTY_WIDTH` columns stays on one line: a forecast's
    ``{"value": 28.3, "unit": "°C"}`` reads as one line instead of four. ``indent`` is the
    block's indentation, ``start`` the column the value starts at (default ``indent``)."""
    flat = json.dumps(value, ensure_ascii=False)
    column = indent if start is None else start
    if not isinstance(value, (dict, list)) or not value or column + len(flat) < PRETTY_WIDTH:
        return flat
    inner = indent + 2
    pad = " " * inner
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            name = json.dumps(str(key), ensure_ascii=False) + ": "
            items.append(pad + name + pretty_json(item, inner, inner + len(name)))
        open_, close = "{", "}"
    else:
        items = [pad + pretty_json(item, inner) for item in value]
        open_, close = "[", "]"
    return open_ + "\n" + ",\n".join(items) + "\n" + " " * indent + close


def _pretty(value: Any) -> tuple[str, bool]:
    """``(text, is_json)``: JSON text pretty-printed (:func:`pretty_json`) when it parses, other
    strings as they are, other values pretty-printed."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value, False
    return pretty_json(value), True


def _one_line(value: Any) -> str:
    """Tool-call arguments as one line of JSON (a JSON string's text parsed first)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


def _pending(ep: Mapping[str, Any]) -> list[dict[str, str]]:
    """The episode's ``pending_tool_calls`` (requested in the last reply, never run)."""
    return [
        {"name": c["name"], "arguments": _one_line(c.get("arguments"))}
        for c in ep.get("pending_tool_calls", [])
    ]


def _failure(ep: Mapping[str, Any], fm: Mapping[str, Any], anchor: str) -> dict[str, Any]:
    """One gallery card: the question, the final text (the evidence marked in it when it lies
    there), the evidence message otherwise, the tool calls the host never ran."""
    mode = fm["mode"]
    evidence = fm.get("evidence") or {}
    transcript = ep["transcript"]
    index = evidence.get("message_index")
    message = transcript[index] if isinstance(index, int) and 0 <= index < len(transcript) else None
    answer = ep["answer"]
    span, quoted = evidence.get("span"), evidence.get("text")

    answer_marked = None
    evidence_message = None
    located = False
    target = _text_of(message)
    if message is None or target == answer:
        answer_marked = _highlight(answer, span, quoted, mode) if answer else None
        located = answer_marked is not None
    elif target is not None:
        marked = _highlight(target, span, quoted, mode)
        located = marked is not None
        evidence_message = {
            "index": index,
            "role": message.get("role", "?"),
            "segments": marked or [Segment(target)],
        }
    tool_call = evidence.get("tool_call")
    evidence_call = (
        {"name": tool_call["name"], "arguments": _one_line(tool_call.get("arguments"))}
        if tool_call
        else None
    )
    pending = _pending(ep)
    return {
        "mode": mode,
        "label": FAILURE_MODES.get(mode, mode.replace("_", " ")),
        "explanation": fm.get("explanation", ""),
        "configuration": ep["configuration"],
        "question_id": ep["question_id"],
        "question": ep["question"],
        "passed": ep["passed"],
        "anchor": anchor,
        "answer": answer,
        "answer_segments": answer_marked or ([Segment(answer)] if answer else []),
        "message_index": index if isinstance(index, int) else None,
        "evidence_message": evidence_message,
        "quoted": quoted if quoted and not located else None,
        # the evidence's tool call is shown apart only when it is not one of the pending ones
        "tool_call": None if evidence_call in pending else evidence_call,
        "pending": pending,
    }


def _gallery(episodes: Sequence[Mapping[str, Any]], anchors: Sequence[str]) -> dict[str, Any]:
    """Failure cards grouped by mode (known modes first), each group in episode order.

    ``classified`` counts episodes carrying ``failure_modes``; when it is 0 the classifier has
    not run and ``unclassified`` lists the episodes the judge failed, without a mode."""
    classified = [i for i, ep in enumerate(episodes) if "failure_modes" in ep]
    cards: dict[str, list[dict[str, Any]]] = {}
    for i in classified:
        for fm in episodes[i]["failure_modes"]:
            cards.setdefault(fm["mode"], []).append(_failure(episodes[i], fm, anchors[i]))
    modes = _ordered(sorted(cards), FAILURE_MODES)
    unclassified = [
        {
            "configuration": ep["configuration"],
            "question_id": ep["question_id"],
            "question": ep["question"],
            "answer": ep["answer"],
            "verdict": ep.get("verdict", ""),
            "stop_reason": ep["stop_reason"],
            "anchor": anchors[i],
            "pending": _pending(ep),
        }
        for i, ep in enumerate(episodes)
        if "failure_modes" not in ep and not ep["passed"]
    ]
    return {
        "ran": bool(classified),
        "classified": len(classified),
        "total": len(episodes),
        "groups": [
            {"mode": m, "label": FAILURE_MODES.get(m, m.replace("_", " ")), "cards": cards[m]}
            for m in modes
        ],
        "count": sum(len(v) for v in cards.values()),
        "unclassified": unclassified,
    }


def _fidelity(fidelity: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """None when the audit has not run (no ``fidelity`` key); else checks, tables, ablations."""
    if fidelity is None:
        return None
    checks = [
        {
            "name": c["name"],
            "passed": c["passed"],
            "explanation": c.get("explanation", ""),
            "evidence": list(c.get("evidence", [])),
        }
        for c in fidelity.get("checks", [])
    ]
    tables = [
        {
            "key": key,
            "title": t.get("title", key),
            "rows": [{**r, "status": _status(r["passed"], r["total"])} for r in t.get("rows", [])],
        }
        for key, t in fidelity.get("tables", {}).items()
    ]
    ablations = [
        {
            "heuristic": a["heuristic"],
            "configuration": a["configuration"],
            "passed": a["passed"],
            "total": a["total"],
            "status": _status(a["passed"], a["total"]),
            "flips": list(a.get("flips", [])),
        }
        for a in fidelity.get("ablations", [])
    ]
    return {
        "checks": checks,
        "checks_passed": sum(1 for c in checks if c["passed"]),
        "tables": tables,
        "ablations": ablations,
    }


def _message(index: int, message: Mapping[str, Any], call_names: dict[str, str]) -> dict:
    """One transcript message for display: ``{"index", "role", "text" (None when content is
    None), "json" (text is pretty-printed JSON), "tool_calls": [{"id", "name", "arguments",
    "json"}], "tool_call_id", "tool_name"}``. Tool message content and tool-call arguments are
    pretty-printed when they parse as JSON; ``call_names`` maps tool-call ids seen so far to
    tool names, so a tool message can name the call it answers."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    text, is_json = None, False
    if content is not None:
        text, is_json = (
            _pretty(content) if role == "tool" or not isinstance(content, str) else (content, False)
        )
    tool_calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name = str(function.get("name", "?"))
        call_names[str(call.get("id"))] = name
        arguments, args_json = _pretty(function.get("arguments"))
        tool_calls.append(
            {"id": call.get("id", ""), "name": name, "arguments": arguments, "json": args_json}
        )
    call_id = message.get("tool_call_id")
    return {
        "index": index,
        "role": role,
        "text": text,
        "json": is_json,
        "tool_calls": tool_calls,
        "tool_call_id": call_id,
        "tool_name": call_names.get(str(call_id)) if call_id is not None else None,
        "refusal": message.get("refusal") if isinstance(message.get("refusal"), str) else None,
    }


def _transcripts(
    episodes: Sequence[Mapping[str, Any]],
    configurations: Sequence[Mapping[str, Any]],
    anchors: Sequence[str],
) -> list[dict[str, Any]]:
    """Episodes grouped by configuration (configurations order, then any others)."""
    names = _ordered((ep["configuration"] for ep in episodes), [c["name"] for c in configurations])
    groups = []
    for name in names:
        items = []
        for i, ep in enumerate(episodes):
            if ep["configuration"] != name:
                continue
            call_names: dict[str, str] = {}
            items.append(
                {
                    "anchor": anchors[i],
                    "question_id": ep["question_id"],
                    "question": ep["question"],
                    "passed": ep["passed"],
                    "verdict": ep.get("verdict", ""),
                    "rounds": ep["rounds"],
                    "tool_calls": ep["tool_calls"],
                    "stop_reason": ep["stop_reason"],
                    "finish_reason": ep.get("finish_reason"),
                    "messages": [
                        _message(n, m, call_names) for n, m in enumerate(ep["transcript"])
                    ],
                }
            )
        groups.append({"configuration": name, "episodes": items})
    return groups
