"""``reports/index.html``: the results of a cassette set as one self-contained HTML page.

The page is rendered with Jinja2 from ``reports/results.json`` (see :mod:`toolreplay.results`)
and holds: a verdict line (what passed, what failed and why, the fidelity score), the 2×2 grid
of passed/total with failure-mode counts (rows: host, columns: toolset), provenance (a stand-in
set is labelled a test double), optionally what changed since an earlier run (see
:mod:`toolreplay.diff`), metrics per configuration with inline SVG bar charts, the tool-call
chain of every episode per question with its stop reason, the failure gallery, the fidelity
audit in plain words, and every transcript in a collapsible ``<details>`` (failure badges, the
evidence marked, never-run tool calls flagged, an anchor per message). Long text is cut with a
"show all"; invisible characters get a visible marker.

Guarantees:

* **Self-contained**: inline CSS and one small inline script (filters, expand/collapse, opening
  a linked transcript, expanding everything for printing; the page reads fully without it);
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from .diff import Run, diff_runs
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
    env = Environment(
        loader=PackageLoader("toolreplay", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["block"] = _block_html
    env.filters["inline"] = _inline_html
    return env


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


def render_report(results: Mapping[str, Any], compare: Run | None = None) -> str:
    """Render the HTML page for ``results`` (the dict ``toolreplay run`` writes to
    ``reports/results.json``; shape in :mod:`toolreplay.results` and this module's docstring).
    ``compare`` (a :class:`toolreplay.diff.Run`) adds a section saying what changed since
    that earlier run.

    Returns the whole page as a ``str``; the same results always give the same string.
    Raises :class:`ReportError` when ``results`` does not match
    :class:`toolreplay.results.Results`."""
    buffer = io.StringIO()
    stream_report(results, buffer.write, compare=compare)
    return buffer.getvalue()


def write_report(results_path: Path, out_path: Path, compare: Run | None = None) -> Path:
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
        stream_report(results, f.write, compare=compare)
    return out


def stream_report(
    results: Mapping[str, Any], write: Callable[[str], object], compare: Run | None = None
) -> None:
    """Render the page for ``results`` like :func:`render_report`, passing it to ``write``
    (e.g. a text file's ``write``) piece by piece instead of building one string. Raises
    :class:`ReportError` (before writing anything) when ``results`` is malformed."""
    check_results(results)
    page = build_page(results, compare=compare)
    for piece in _environment().get_template(TEMPLATE).generate(page=page, **_static()):
        write(piece)


# --------------------------------------------------------------------------- view model
#
# build_page turns results into plain dicts the template only loops over: all formatting,
# ordering and highlighting decisions are made here, where they can be tested.


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of message text; ``mark`` names the failure mode it is evidence of, if any;
    ``invisible`` is True for one invisible character (shown with a visible marker)."""

    text: str
    mark: str | None = None
    invisible: bool = False


#: Characters that take no visible space (line/paragraph separators, zero-width and bidi
#: controls, BOM, NEL, soft hyphen): each is shown as a visible marker (``⟨U+2028 LS⟩``)
#: followed by the character itself, so copied text is unchanged (bidi controls excepted).
INVISIBLE = re.compile(
    "[\u0085\u00ad\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
INVISIBLE_NAMES = {
    "\u0085": "NEL",
    "\u00ad": "SHY",
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\u2028": "LS",
    "\u2029": "PS",
    "\u2060": "WJ",
    "\ufeff": "BOM",
}
#: Text longer than this many characters is shortened to its first ``CLIP_HEAD`` characters
#: with a ``<details>`` that shows the rest; pretty-printed JSON (a forecast is ~2,000) gets
#: ``CLIP_JSON``.
#: Shown by their marker only: kept in the page they would reorder the text around them.
BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
CLIP_AT = 600
CLIP_HEAD = 400
CLIP_JSON = 2500
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
LATIN = re.compile(r"[A-Za-z]")
CJK_RUN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")


def _invisible_label(ch: str) -> str:
    name = INVISIBLE_NAMES.get(ch)
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def _split_invisible(segments: Iterable[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for seg in segments:
        if not INVISIBLE.search(seg.text):
            out.append(seg)
            continue
        at = 0
        for m in INVISIBLE.finditer(seg.text):
            if m.start() > at:
                out.append(Segment(seg.text[at : m.start()], seg.mark))
            out.append(Segment(m.group(), seg.mark, invisible=True))
            at = m.end()
        if at < len(seg.text):
            out.append(Segment(seg.text[at:], seg.mark))
    return out


def _lang(text: str | None) -> str | None:
    """``zh-CN`` for Chinese prose (at least one CJK character for every two Latin letters),
    else None (the page's ``en``)."""
    if not text:
        return None
    cjk = len(CJK.findall(text))
    if not cjk:
        return None
    return "zh-CN" if cjk * 2 >= len(LATIN.findall(text)) else None


def _text(
    value: str | Sequence[Segment], *, limit: int = CLIP_AT, lang: bool = True
) -> dict[str, Any]:
    """Untrusted text for display: ``{"head": [Segment], "rest": [Segment] (empty unless the
    text is longer than ``limit``), "length", "lang"}``. Invisible separators become their own
    segments; long text is cut at ``CLIP_HEAD`` characters (or ``limit * 2 / 3`` when larger),
    at a line end near there when there is one."""
    if isinstance(value, str) and len(value) <= limit and not INVISIBLE.search(value):
        return {  # the common case: short, plain text
            "head": [Segment(value)],
            "rest": [],
            "length": len(value),
            "lang": _lang(value) if lang else None,
        }
    segments = [Segment(value)] if isinstance(value, str) else list(value)
    full = "".join(s.text for s in segments)
    out: dict[str, Any] = {
        "head": segments,
        "rest": [],
        "length": len(full),
        "lang": _lang(full) if lang else None,
    }
    if len(full) > limit:
        cut = max(CLIP_HEAD, limit * 2 // 3)
        newline = full.rfind("\n", cut // 2, cut)
        if newline > 0:
            cut = newline + 1
        head: list[Segment] = []
        rest: list[Segment] = []
        pos = 0
        for seg in segments:
            end = pos + len(seg.text)
            if end <= cut:
                head.append(seg)
            elif pos >= cut:
                rest.append(seg)
            else:
                head.append(Segment(seg.text[: cut - pos], seg.mark))
                rest.append(Segment(seg.text[cut - pos :], seg.mark))
            pos = end
        out["head"], out["rest"] = head, rest
    if any(INVISIBLE.search(s.text) for s in segments):
        out["head"] = _split_invisible(out["head"])
        out["rest"] = _split_invisible(out["rest"])
    return out


def _mixed(text: str) -> Markup:
    """Mostly-English text with Chinese names in it: escaped, each run of Chinese wrapped in
    ``<span lang="zh-CN">`` so it is read and rendered as Chinese."""
    out = []
    at = 0
    for m in CJK_RUN.finditer(text):
        out.append(str(escape(text[at : m.start()])))
        out.append(f'<span lang="zh-CN">{escape(m.group())}</span>')
        at = m.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


def _segments_html(parts: Iterable[Segment]) -> str:
    """Segments as escaped HTML: evidence in ``<mark class="mode-…">``, each invisible
    character as a visible ``<span class="invis">⟨U+2028 LS⟩</span>`` followed by itself
    (bidi controls by their marker only)."""
    out = []
    for seg in parts:
        if seg.invisible:
            label = _invisible_label(seg.text)
            keep = "" if seg.text in BIDI_CONTROLS else seg.text
            inner = (
                f'<span class="invis" title="invisible character {label}">⟨{label}⟩</span>{keep}'
            )
        else:
            inner = str(escape(seg.text))
        if seg.mark:
            inner = f'<mark class="mode-{escape(seg.mark)}">{inner}</mark>'
        out.append(inner)
    return "".join(out)


def _block_html(
    t: Mapping[str, Any], tag: str = "div", cls: str = "", focusable: bool = False
) -> Markup:
    """A text block (from :func:`_text`) as ``<tag class=cls>``; past ``CLIP_AT`` characters the
    rest sits in a ``<details class="more">`` ("show all N characters"). ``focusable`` adds
    ``tabindex="0"`` (for blocks that scroll sideways). A template filter: ``{{ t | block }}``."""
    lang = f' lang="{t["lang"]}"' if t["lang"] else ""
    tab = ' tabindex="0"' if focusable else ""
    if not t["rest"]:
        klass = f' class="{escape(cls)}"' if cls else ""
        return Markup(f"<{tag}{klass}{lang}{tab}>{_segments_html(t['head'])}</{tag}>")
    outer = f"long {escape(cls)}" if cls else "long"
    return Markup(
        f'<div class="{outer}"><{tag} class="head"{lang}{tab}>{_segments_html(t["head"])}'
        f'<span class="clip-mark">…</span></{tag}><details class="more"><summary>show all '
        f'{t["length"]:,} characters</summary><{tag} class="rest"{lang}{tab}>'
        f"{_segments_html(t['rest'])}</{tag}></details></div>"
    )


def _inline_html(t: Mapping[str, Any]) -> Markup:
    """Text inside a line (from :func:`_text`): a ``<span>``; a long one is cut, with a note
    that the whole text is in the transcript. A template filter: ``{{ t | inline }}``."""
    lang = f' lang="{t["lang"]}"' if t["lang"] else ""
    html = f"<span{lang}>{_segments_html(t['head'])}</span>"
    if t["rest"]:
        html += (
            f'<span class="clip-note">… ({t["length"]:,} characters; all in the transcript)</span>'
        )
    return Markup(html)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _number(value: float, fmt: str) -> str:
    """``fmt``-formatted, except that a token count drops a trailing ``.0`` (1891, 4117.2)."""
    text = fmt.format(value)
    if fmt == "{:.1f}" and text.endswith(".0"):
        text = text[:-2]
    return text


def build_page(results: Mapping[str, Any], compare: Run | None = None) -> dict[str, Any]:
    """The template's view of ``results``: ``{"title", "header", "verdict", "grid", "metrics",
    "charts", "questions", "gallery", "fidelity", "transcripts", "trials", "filters",
    "compare"}``
    (plain dicts and lists). ``compare`` is an earlier run to compare with (None: no
    comparison section)."""
    episodes = list(results["episodes"])
    anchors = _anchors(episodes)
    configurations = list(results["configurations"])
    prov = results["provenance"]
    modes = _mode_counts(episodes)
    fidelity = _fidelity(results.get("fidelity"))
    stand_in = prov["provenance"] == "stand-in"
    return {
        "title": f"toolreplay report: {results['cassette_set']} ({prov['provenance']})",
        "header": _header(results),
        "verdict": _verdict(configurations, modes, fidelity, episodes),
        "grid": _grid(configurations, modes),
        "metrics": _metrics(configurations, modes),
        "metric_labels": [label for _, label, _ in METRICS],
        "charts": _charts(configurations, skip=("recorded_wall_time_s",) if stand_in else ()),
        "wall_time_charted": not stand_in,
        "questions": _questions(episodes, configurations, anchors),
        "gallery": _gallery(episodes, anchors),
        "fidelity": fidelity,
        "transcripts": _transcripts(episodes, configurations, anchors),
        "trials": trials_view(results),  # "Consistency over trials" (report_trials.py)
        "filters": _filters(episodes, configurations),
        "compare": None if compare is None else _compare(compare, results, episodes, anchors),
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


def _mode_label(mode: str) -> str:
    return FAILURE_MODES.get(mode, mode.replace("_", " "))


def _mode_counts(episodes: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]] | None:
    """Per configuration, episodes carrying each failure mode (known modes first); None when
    no episode was classified."""
    if not any("failure_modes" in ep for ep in episodes):
        return None
    counts: dict[str, dict[str, int]] = {}
    for ep in episodes:
        per = counts.setdefault(ep["configuration"], {})
        for mode in dict.fromkeys(f["mode"] for f in ep.get("failure_modes", [])):
            per[mode] = per.get(mode, 0) + 1
    return {
        name: {m: per[m] for m in _ordered(sorted(per), FAILURE_MODES)}
        for name, per in counts.items()
    }


def _modes_of(name: str, modes: dict[str, dict[str, int]] | None) -> list[dict[str, Any]] | None:
    if modes is None:
        return None
    return [
        {"mode": m, "label": _mode_label(m), "count": n} for m, n in modes.get(name, {}).items()
    ]


def _verdict(
    configurations: Sequence[Mapping[str, Any]],
    modes: dict[str, dict[str, int]] | None,
    fidelity: Mapping[str, Any] | None,
    episodes: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The first-screen line: which configurations passed, which failed and why (failure
    modes), and the fidelity audit's score."""
    passed = [c for c in configurations if c["total"] and c["passed"] == c["total"]]
    failed = [
        {
            "name": c["name"],
            "passed": c["passed"],
            "total": c["total"],
            "status": _status(c["passed"], c["total"]),
            "modes": _modes_of(c["name"], modes),
        }
        for c in configurations
        if c["passed"] < c["total"]
    ]
    return {
        "passed": [{"name": c["name"], "passed": c["passed"], "total": c["total"]} for c in passed],
        "failed": failed,
        "episodes_passed": sum(1 for ep in episodes if ep["passed"]),
        "episodes": len(episodes),
        "classified": modes is not None,
        "fidelity": None
        if fidelity is None
        else {
            "passed": fidelity["checks_passed"],
            "total": len(fidelity["checks"]),
            "ok": bool(fidelity["checks"]) and fidelity["checks_passed"] == len(fidelity["checks"]),
            "failed": [c["title"] for c in fidelity["checks"] if not c["passed"]],
        },
    }


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


def _stop(configuration: str, reason: str) -> dict[str, str]:
    """A stop reason for display: ``{"reason", "label", "title"}``. The single host always
    stops after its one tool round, which the episode records as ``max_rounds``; that is its
    design, not a cap being hit, and the label says so."""
    host = (_split_name(configuration) or ("", ""))[0]
    if reason == "max_rounds" and host == "single":
        return {
            "reason": reason,
            "label": "stopped after its one tool round",
            "title": "stop reason max_rounds: the single host always stops after round 2 "
            "(one tool round and one answer request), by design; no cap was hit",
        }
    return {"reason": reason, "label": reason, "title": "stop reason"}


def _grid(
    configurations: Sequence[Mapping[str, Any]], modes: dict[str, dict[str, int]] | None = None
) -> dict[str, Any]:
    """Rows are hosts, columns toolsets, cells passed/total and failure-mode counts, like the
    study's table."""
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
                    "modes": _modes_of(cell["name"], modes),
                }
            )
        rows.append({"host": host, "caption": HOSTS.get(host, ""), "cells": row})
    return {
        "columns": [{"toolset": t, "caption": TOOLSETS.get(t, "")} for t in toolsets],
        "rows": rows,
    }


def _metrics(
    configurations: Sequence[Mapping[str, Any]], modes: dict[str, dict[str, int]] | None = None
) -> list[dict[str, Any]]:
    return [
        {
            "name": c["name"],
            "passed": c["passed"],
            "total": c["total"],
            "status": _status(c["passed"], c["total"]),
            "cells": [
                {"label": label, "value": _number(c[key], fmt)} for key, label, fmt in METRICS
            ],
            "stop_reasons": [
                {**_stop(c["name"], k), "count": v} for k, v in c.get("stop_reasons", {}).items()
            ],
            "modes": _modes_of(c["name"], modes),
        }
        for c in configurations
    ]


CHART_BAR_H = 18
CHART_GAP = 6
CHART_BAR_W = 150.0
CHART_VALUE_W = 64


def _charts(
    configurations: Sequence[Mapping[str, Any]], skip: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """One horizontal bar chart per metric (except ``skip``); geometry precomputed for the
    SVG (fixed decimals, so the markup is deterministic)."""
    label_w = max([len(c["name"]) for c in configurations] + [8]) * 7 + 10
    width = label_w + CHART_BAR_W + CHART_VALUE_W
    charts = []
    for key, label, fmt in METRICS:
        if key in skip:
            continue
        values = [float(c[key]) for c in configurations]
        top = max([*values, 0.0])
        bars = []
        for i, (c, v) in enumerate(zip(configurations, values, strict=True)):
            y = i * (CHART_BAR_H + CHART_GAP)
            w = CHART_BAR_W * v / top if top > 0 else 0.0
            bars.append(
                {
                    "name": c["name"],
                    "value": _number(c[key], fmt),
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
            {"name": call["name"], "args": None if args is None else _text(_compact(args))}
        )
    pending = [
        {"name": c["name"], "args": _text(_compact(c.get("arguments")))}
        for c in ep.get("pending_tool_calls", [])
    ]
    return {
        "rounds": [rounds[k] for k in sorted(rounds)],
        "pending": pending,
        "text": " → ".join(c["name"] for c in calls) or "(no tool call)",
    }


def _episode_modes(ep: Mapping[str, Any]) -> str:
    """The episode's failure modes as a space-separated attribute value (for filters)."""
    return " ".join(dict.fromkeys(f["mode"] for f in ep.get("failure_modes", [])))


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
                "question": _text(episodes[idxs[0]]["question"]),
                "rows": [
                    {
                        "configuration": episodes[i]["configuration"],
                        "question_id": qid,
                        "passed": episodes[i]["passed"],
                        "modes": _episode_modes(episodes[i]),
                        "rounds": episodes[i]["rounds"],
                        "tool_calls": episodes[i]["tool_calls"],
                        "stop": _stop(episodes[i]["configuration"], episodes[i]["stop_reason"]),
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


def _pending(ep: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The episode's ``pending_tool_calls`` (requested in the last reply, never run)."""
    return [
        {"name": c["name"], "arguments": _text(_one_line(c.get("arguments")), lang=False)}
        for c in ep.get("pending_tool_calls", [])
    ]


def _message_anchor(anchor: str, index: int | None) -> str:
    return anchor if index is None else f"{anchor}-m{index}"


def _failure(ep: Mapping[str, Any], fm: Mapping[str, Any], anchor: str) -> dict[str, Any]:
    """One gallery card: the question, the final text (the evidence marked in it when it lies
    there), the evidence message otherwise, the tool calls the host never ran, and a link to
    the exact transcript message holding the evidence."""
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
            "text": _text(marked or [Segment(target)]),
        }
    tool_call = evidence.get("tool_call")
    evidence_call = (
        {"name": tool_call["name"], "arguments": _one_line(tool_call.get("arguments"))}
        if tool_call
        else None
    )
    pending = _pending(ep)
    pending_plain = [
        {"name": p["name"], "arguments": _one_line(c.get("arguments"))}
        for p, c in zip(pending, ep.get("pending_tool_calls", []), strict=True)
    ]
    # link to the last message when the evidence names none (the answer is the last reply)
    link_index = index if message is not None else (len(transcript) - 1 if transcript else None)
    return {
        "mode": mode,
        "label": _mode_label(mode),
        "explanation": fm.get("explanation", ""),
        "configuration": ep["configuration"],
        "question_id": ep["question_id"],
        "question": _text(ep["question"]),
        "passed": ep["passed"],
        "anchor": anchor,
        "message_anchor": _message_anchor(anchor, link_index),
        "message_index": link_index,
        "answer": _text(answer_marked or [Segment(answer)]) if answer else None,
        "evidence_message": evidence_message,
        "quoted": _text(quoted) if quoted and not located else None,
        # the evidence's tool call is shown apart only when it is not one of the pending ones
        "tool_call": None
        if evidence_call is None or evidence_call in pending_plain
        else {"name": evidence_call["name"], "arguments": _text(evidence_call["arguments"])},
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
            "question": _text(ep["question"]),
            "answer": _text(ep["answer"]) if ep["answer"] else None,
            "verdict": ep.get("verdict", ""),
            "stop": _stop(ep["configuration"], ep["stop_reason"]),
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
        "groups": [{"mode": m, "label": _mode_label(m), "cards": cards[m]} for m in modes],
        "count": sum(len(v) for v in cards.values()),
        "unclassified": unclassified,
    }


#: Plain-words title and lead sentence per fidelity check (what it asks, before the result).
CHECKS: dict[str, tuple[str, str]] = {
    "baseline_heuristics": (
        "Is the baseline the reference's best version?",
        "The one-shot tool get_weather(city) must keep all three heuristics of the reference "
        "(prefer admin seats, then the largest population, and retry with 市 appended), and "
        "each must be seen acting on a recorded geocoding answer.",
    ),
    "ablation": (
        "What does each heuristic contribute?",
        "The baseline is replayed with one heuristic switched off at a time (an ablation); "
        "the table shows which questions then change verdict.",
    ),
    "judge_breadth": (
        "Is the judge as broad as the questions?",
        "Every question's measure (a temperature, rain, a comparison) must be accepted by the "
        "judge in use; a narrower °C-only judge is run alongside to show what it would miss.",
    ),
    "near_miss": (
        "What would a sloppier comparison have shown?",
        "The faithful table stands next to the one a weakened baseline (no 市 retry) and a "
        "narrow judge (°C only) give: the near miss this audit guards against.",
    ),
    "arm_parity": (
        "Did every configuration get the same conditions?",
        "Model, sampling settings, system prompt, questions, round cap and tool descriptions "
        "are read from the recorded requests and must match across configurations.",
    ),
    "completeness": (
        "Is every episode recorded, current and fully replayed?",
        "Every configuration × question needs a cassette whose every interaction is played, "
        "unchanged since recording, made with today's prompt and tool schemas.",
    ),
}

#: Terms the fidelity section uses, explained once.
GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "heuristics",
        "the three rules get_weather(city) uses to pick a place among the geocoder's "
        "candidates: admin_seat (prefer an administrative seat), population_order (then the "
        "largest population), shi_retry (if no seat is found, ask again with 市, 'city', "
        "appended).",
    ),
    (
        "admin seat, PPLC",
        "GeoNames feature codes for a seat of government: PPLC a capital, PPLA–PPLA4 the seat "
        "of a first- to fourth-order division; PPL is any other populated place.",
    ),
    (
        "ablation",
        "the same baseline replayed with one heuristic switched off, to see what that "
        "heuristic changes.",
    ),
    (
        "judge breadth",
        "whether the judge accepts every kind of measured value the questions ask for; a judge "
        "that only accepts °C fails a correct rain forecast.",
    ),
    (
        "near miss",
        "the table a less careful study would have published: the baseline without its 市 "
        "retry, judged by the °C-only judge.",
    ),
    (
        "arm parity",
        "every configuration (arm) ran under the same model, prompt, settings and questions.",
    ),
)

_IN_ZERO = re.compile(r"changed the place chosen in 0\b")
_IN_N = re.compile(r"changed the place chosen in (\d+)\b")
_PLURAL_S = re.compile(r"\b(\d+) ((?:[a-z]+ )?)([a-z]+)\(s\)")


def _plain(evidence: str) -> str:
    """Audit evidence in plain words: "changed the place chosen in 0" → "never changed the
    place chosen"; "6 episode(s)" → "6 episodes"."""
    text = _IN_ZERO.sub("never changed the place chosen", evidence)
    text = _IN_N.sub(
        lambda m: f"changed the place chosen in {_plural(int(m.group(1)), 'episode')}", text
    )
    text = _PLURAL_S.sub(
        lambda m: (
            m.group(1) + " " + m.group(2) + _plural(int(m.group(1)), m.group(3)).split(" ")[1]
        ),
        text,
    )
    return text


def _score_sign(a: str, b: str) -> int:
    """Sign of ``a - b`` for two ``passed/total`` scores, compared as fractions."""

    def frac(x: str) -> float:
        p, _, t = x.partition("/")
        return int(p) / int(t) if t and int(t) else 0.0

    return (frac(a) > frac(b)) - (frac(a) < frac(b))


def _near_miss(tables: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The faithful and near-miss tables side by side (rows differing marked) and the
    takeaway in words; None unless both tables are present."""
    by_key = {t["key"]: t for t in tables}
    faithful, near = by_key.get("faithful"), by_key.get("near_miss")
    if faithful is None or near is None:
        return None
    near_rows = {r["name"]: r for r in near["rows"]}
    rows = []
    for r in faithful["rows"]:
        n = near_rows.get(r["name"])
        rows.append(
            {
                "name": r["name"],
                "faithful": f"{r['passed']}/{r['total']}",
                "faithful_status": r["status"],
                "near": "–" if n is None else f"{n['passed']}/{n['total']}",
                "near_status": "empty" if n is None else n["status"],
                "differs": n is not None and (n["passed"], n["total"]) != (r["passed"], r["total"]),
            }
        )
    # per toolset: would the near miss have ordered the single and loop hosts differently?
    scores = {r["name"]: r for r in rows}
    claims, named = [], set()
    for toolset in _ordered((p[1] for p in map(_split_name, scores) if p), TOOLSETS):
        s, lp = scores.get(f"single+{toolset}"), scores.get(f"loop+{toolset}")
        if not s or not lp:
            continue
        before = _score_sign(lp["faithful"], s["faithful"])
        after = _score_sign(lp["near"], s["near"])
        if before == after:
            continue
        named |= {s["name"], lp["name"]}
        seems = {
            1: "the loop would have seemed to win",
            -1: "the single host would have seemed to win",
            0: "the two hosts would have seemed level",
        }[after]
        claims.append(
            f"single+{toolset} {s['near']} against loop+{toolset} {lp['near']}, where the "
            f"faithful run gives {s['faithful']} against {lp['faithful']}: {seems} with the "
            f"{toolset} toolset"
        )
    others = [
        f"{r['name']} {r['faithful']} → {r['near']}"
        for r in rows
        if r["differs"] and r["name"] not in named
    ]
    if claims:
        takeaway = (
            "A sloppier baseline and a narrower judge would have scored " + "; ".join(claims) + "."
        )
    else:
        takeaway = "The weakened baseline and narrow judge would not have changed which host wins."
    if others:
        takeaway += " Also changed: " + ", ".join(others) + "."
    return {
        "titles": (faithful["title"], near["title"]),
        "rows": rows,
        "takeaway": takeaway,
    }


def _fidelity(fidelity: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """None when the audit has not run (no ``fidelity`` key); else checks (each with its
    plain-words title and lead, and the table that belongs to it), tables, ablations."""
    if fidelity is None:
        return None
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
    near = _near_miss(tables)
    names = {c["name"] for c in fidelity.get("checks", [])}
    checks = []
    for c in fidelity.get("checks", []):
        title, lead = CHECKS.get(c["name"], (c["name"].replace("_", " "), ""))
        attach = None
        if c["name"] == "ablation" and ablations:
            attach = "ablations"
        elif c["name"] == "near_miss" and near is not None:
            attach = "near_miss"
        checks.append(
            {
                "name": c["name"],
                "title": title,
                "lead": _mixed(lead),
                "passed": c["passed"],
                # the near-miss explanation only restates its table's numbers
                "explanation": "" if attach == "near_miss" else _plain(c.get("explanation", "")),
                # the ablation evidence only restates its table's rows
                "evidence": []
                if attach == "ablations"
                else [_mixed(_plain(e)) for e in c.get("evidence", [])],
                "attach": attach,
            }
        )
    shown = {"faithful", "near_miss"} if "near_miss" in names and near is not None else set()
    return {
        "checks": checks,
        "checks_passed": sum(1 for c in checks if c["passed"]),
        "tables": [t for t in tables if t["key"] not in shown],
        "near_miss": near,
        "ablations": ablations,
        "ablations_shown": "ablation" in names,
        "glossary": [{"term": t, "text": _mixed(x)} for t, x in GLOSSARY],
    }


def _message(
    index: int,
    message: Mapping[str, Any],
    call_names: dict[str, str],
    executed: set[str],
    marks: Mapping[int, list[Mapping[str, Any]]],
    anchor: str,
) -> dict:
    """One transcript message for display: ``{"index", "anchor", "role", "text" (None when
    content is None; else see :func:`_text`), "json", "tool_calls": [{"id", "name",
    "arguments", "json", "run"}], "tool_call_id", "tool_name", "modes"}``. Tool message
    content and tool-call arguments are pretty-printed when they parse as JSON; ``call_names``
    maps tool-call ids seen so far to tool names, so a tool message can name the call it
    answers; a tool call whose id no tool message answers (``executed``) has ``run`` False.
    ``marks`` maps message indexes to the failure modes whose evidence lies there."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    modes = list(marks.get(index, []))
    text = None
    is_json = False
    if content is not None:
        raw, is_json = (
            _pretty(content) if role == "tool" or not isinstance(content, str) else (content, False)
        )
        segments: list[Segment] = [Segment(raw)]
        for fm in modes:
            ev = fm.get("evidence") or {}
            marked = _highlight(raw, ev.get("span"), ev.get("text"), fm["mode"])
            if marked and not is_json:
                segments = marked
                break
        text = _text(segments, limit=CLIP_JSON if is_json else CLIP_AT, lang=not is_json)
    tool_calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name = str(function.get("name", "?"))
        own_id = str(call.get("id"))
        call_names[own_id] = name
        arguments, args_json = _pretty(function.get("arguments"))
        tool_calls.append(
            {
                "id": call.get("id", ""),
                "name": name,
                "arguments": _text(arguments, lang=not args_json),
                "json": args_json,
                "run": own_id in executed,
            }
        )
    call_id = message.get("tool_call_id")
    return {
        "index": index,
        "anchor": _message_anchor(anchor, index),
        "role": role,
        "text": text,
        "json": is_json,
        "tool_calls": tool_calls,
        "tool_call_id": call_id,
        "tool_name": call_names.get(str(call_id)) if call_id is not None else None,
        "refusal": message.get("refusal") if isinstance(message.get("refusal"), str) else None,
        "modes": [{"mode": fm["mode"], "label": _mode_label(fm["mode"])} for fm in modes],
    }


class _Lazy:
    """A sequence whose items are built when iterated (each time), so the template streams
    transcripts without the whole page's view of them being held at once."""

    def __init__(self, items: Sequence[Any], make: Callable[[Any], Any]) -> None:
        self._items, self._make = items, make

    def __iter__(self) -> Iterator[Any]:
        return (self._make(x) for x in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)


def _transcript(ep: Mapping[str, Any], anchor: str) -> dict[str, Any]:
    """One episode's collapsible transcript (see :func:`_message` for each message)."""
    name = ep["configuration"]
    transcript = ep["transcript"]
    call_names: dict[str, str] = {}
    executed = {str(m.get("tool_call_id")) for m in transcript if m.get("role") == "tool"}
    marks: dict[int, list[Mapping[str, Any]]] = {}
    for fm in ep.get("failure_modes", []):
        ev = fm.get("evidence") or {}
        at = ev.get("message_index")
        if not isinstance(at, int) or not 0 <= at < len(transcript):
            at = len(transcript) - 1  # evidence in the answer: the last reply
        marks.setdefault(at, []).append(fm)
    return {
        "anchor": anchor,
        "configuration": name,
        "question_id": ep["question_id"],
        "question": _text(ep["question"]),
        "passed": ep["passed"],
        "verdict": ep.get("verdict", ""),
        "rounds": ep["rounds"],
        "tool_calls": ep["tool_calls"],
        "counts": f"{_plural(ep['rounds'], 'round')} · {_plural(ep['tool_calls'], 'tool call')}",
        "finish_reason": ep.get("finish_reason"),
        "stop": _stop(name, ep["stop_reason"]),
        "modes": [
            {"mode": m, "label": _mode_label(m)}
            for m in dict.fromkeys(f["mode"] for f in ep.get("failure_modes", []))
        ],
        "mode_names": _episode_modes(ep),
        "messages": [
            _message(n, m, call_names, executed, marks, anchor) for n, m in enumerate(transcript)
        ],
    }


def _transcripts(
    episodes: Sequence[Mapping[str, Any]],
    configurations: Sequence[Mapping[str, Any]],
    anchors: Sequence[str],
) -> list[dict[str, Any]]:
    """Episodes grouped by configuration (configurations order, then any others); each
    group's ``episodes`` are built lazily, as the template reaches them."""
    names = _ordered((ep["configuration"] for ep in episodes), [c["name"] for c in configurations])
    groups = []
    for name in names:
        members = [i for i, ep in enumerate(episodes) if ep["configuration"] == name]
        groups.append(
            {
                "configuration": name,
                "episodes": _Lazy(members, lambda i: _transcript(episodes[i], anchors[i])),
            }
        )
    return groups


def _filters(
    episodes: Sequence[Mapping[str, Any]], configurations: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The choices the filter bar offers: configurations, questions, failure modes."""
    questions = {ep["question_id"]: ep["question"] for ep in episodes}
    modes = {f["mode"] for ep in episodes for f in ep.get("failure_modes", [])}
    return {
        "configurations": _ordered(
            (ep["configuration"] for ep in episodes), [c["name"] for c in configurations]
        ),
        "questions": [{"id": k, "question": v} for k, v in questions.items()],
        "modes": [
            {"mode": m, "label": _mode_label(m)} for m in _ordered(sorted(modes), FAILURE_MODES)
        ],
    }


def _compare(
    before: Run,
    results: Mapping[str, Any],
    episodes: Sequence[Mapping[str, Any]],
    anchors: Sequence[str],
) -> dict[str, Any]:
    """What changed since ``before``: comparability, scores, and each changed episode with
    a link to its transcript (and the first differing message) in this page."""
    d = diff_runs(before, Run(label="this report", results=results))
    where = {(ep["configuration"], ep["question_id"]): anchors[i] for i, ep in enumerate(episodes)}
    changes = []
    for c in d.changes:
        anchor = where[(c.configuration, c.question_id)]
        fd = c.first_difference
        changes.append(
            {
                "key": c.key,
                "flipped": c.flipped,
                "passed": c.passed,
                "gained": [_mode_label(m) for m in c.gained],
                "lost": [_mode_label(m) for m in c.lost],
                "rounds": c.rounds,
                "tool_calls": c.tool_calls,
                "stop_reason": c.stop_reason,
                "anchor": anchor,
                "first_difference": None
                if fd is None
                else {
                    "index": fd["index"],
                    "a": _text(fd["a"]),
                    "b": _text(fd["b"]),
                    "anchor": _message_anchor(anchor, fd["index"])
                    if fd["index"] < len(episodes[anchors.index(anchor)]["transcript"])
                    else anchor,
                },
            }
        )
    return {
        "label": before.label,
        "comparable": d.comparable,
        "differing": d.differing,
        "aspects": [
            {"name": x.name, "same": x.same, "a": x.a, "b": x.b, "required": x.required}
            for x in d.aspects
        ],
        "scores": list(d.scores),
        "changes": changes,
        "flips": len(d.flips),
        "only_a": list(d.only_a),
        "only_b": list(d.only_b),
        "identical": d.identical,
    }
