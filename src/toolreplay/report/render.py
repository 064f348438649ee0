"""``reports/index.html``: the results of a cassette set as one self-contained HTML page.

The page is rendered with Jinja2 from ``reports/results.json`` (see :mod:`toolreplay.results`)
and holds: a verdict line (what passed, what failed and why, the fidelity score; with several
trials, passes over trials beside trial 1's), the 2×2 grid of passed/total with failure-mode
counts (rows: host, columns: toolset; trial 1, the study's run, and with several trials the
passes over trials), provenance (a stand-in set is labelled a test double; what answered at the
model and at each tool endpoint: live, the fixture server or the stand-in), optionally what
changed since an earlier run (see :mod:`toolreplay.diff`), metrics per configuration with inline
SVG bar charts, the tool-call chain of every episode per question with its stop reason, the
failure gallery, the fidelity audit in plain words, and every transcript in a collapsible
``<details>`` (failure badges, the evidence marked, never-run tool calls flagged, an anchor per
message, and the model API error an episode ended on, after its last message). Long text is cut
with a "show all"; invisible characters get a visible marker.

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

* ``episodes[i]["failure_modes"]``: ``[{"mode": "error" | "empty_answer" |
  "unfulfilled_promise" | "fabricated_value" | "no_measurement" | ..., "explanation": str,
  "evidence": {"message_index": int | None, "span": [start, end] | None, "text": str | None,
  "tool_call": {"name": str, "arguments": Any} | None}}]``. ``message_index`` indexes the
  episode's ``transcript``; ``span`` is character offsets into that message's content (into the
  answer when ``message_index`` is None). The evidence of an ``error`` label lies in
  ``episodes[i]["error"]`` (``{"status", "endpoint", "message", "text"}``), shown after the
  transcript's last message.
* ``results["provenance"]["endpoints"]``: what answered at the model and each tool endpoint
  (absent: the banner says it is not recorded).
* ``results["trials"]``, ``configurations[i]["questions"]``, ``results["trial_outcomes"]``:
  passes and failure modes over trials for the verdict line and the grid.
* ``results["fidelity"]``: ``{"checks": [{"name", "passed": bool, "explanation", "evidence":
  [str]}], "tables": {key: {"title", "rows": [{"name", "passed": int, "total": int}]}},
  "ablations": [{"heuristic", "configuration", "passed", "total", "flips": [{"question_id",
  "from": bool, "to": bool}]}]}``.
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from toolreplay.diff import Run
from toolreplay.files import atomic_writer
from toolreplay.report.episodes import _gallery, _questions
from toolreplay.report.fidelity import _fidelity
from toolreplay.report.labels import METRICS
from toolreplay.report.summary import (
    _anchors,
    _charts,
    _grid,
    _header,
    _metrics,
    _mode_counts,
    _over_trials,
    _trial_count,
    _verdict,
)
from toolreplay.report.text import _block_html, _inline_html
from toolreplay.report.transcripts import _compare, _filters, _transcripts
from toolreplay.report.trials import trials_view
from toolreplay.results.format import ResultsError, check_results, load_results

__all__ = [
    "ReportError",
    "build_page",
    "check_results",
    "load_results",
    "render_report",
    "stream_report",
    "write_report",
]


TEMPLATE = "report.html.j2"


STYLE_TEMPLATE = "report.css.j2"


SCRIPT_TEMPLATE = "report.js.j2"


#: Results files are validated by :mod:`toolreplay.results` (pydantic models, one definition);
#: a malformed one raises :class:`ReportError`, the same class as
#: :class:`toolreplay.results.format.ResultsError`.
ReportError = ResultsError


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("toolreplay.report", "templates"),
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
    :class:`toolreplay.results.format.Results`."""
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
    trials = _over_trials(results)
    return {
        "title": f"toolreplay report: {results['cassette_set']} ({prov['provenance']})",
        "header": _header(results),
        "verdict": _verdict(
            configurations, modes, fidelity, episodes, trials, _trial_count(results)
        ),
        "grid": _grid(configurations, modes, trials),
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
