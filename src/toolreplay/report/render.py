"""``reports/index.html``: the results of a cassette set as one self-contained HTML page.

The page is rendered with Jinja2 from ``reports/results.json`` (see :mod:`toolreplay.results`)
and holds: a verdict line (what passed, what failed and why, the fidelity score; with several
trials, passes over trials beside trial 1's), a one-line provenance banner, a bar with the
contents and the filters (sticky on wide screens), the grid of passed/total with failure-mode
counts (rows: host, columns: toolset), optionally what changed since an earlier run (see
:mod:`toolreplay.diff`; each changed episode's two transcripts side by side), the failure
gallery grouped by failure mode × configuration (a few cards each, the rest listed), the episode
table (one row per episode and trial: the page's spine, sortable and searchable with the
script), the question × configuration matrix (verdict, tool-call chain, answer), metrics with
inline SVG bar charts, consistency over trials (several trials only), what answered at each
endpoint, the fidelity audit in plain words, and every transcript in a collapsible ``<details>``
(failure badges, the evidence marked, the judge's values linked to the tool message and JSON
field they cite and those fields listed first, never-run tool calls flagged, an anchor per
message, and the model API error an episode ended on). Long text is cut with a "show all";
invisible characters get a visible marker. Every trial results keep whole has its transcript
(headed by its configuration, question and trial, the test and cassette it came from and the
command that replays it; a failed one links to the previous and next failure). A run of more
than :data:`~toolreplay.report.table.LARGE_RUN` transcripts gets them on a page of their own, and
one of more than :data:`TABLE_ROWS` table rows its episode table and question matrix, on every
path that writes the report to a file (:func:`report_pages`): the report page stays under 2 MB
at any size (about 0.4 MB at 2,500 episodes).

Guarantees:

* **Self-contained**: inline CSS and one small inline script (sorting, search and filters with
  their state in the URL fragment, expand/collapse, opening a linked transcript, expanding
  everything for printing; the page reads fully without it); no CDN, no external fonts or
  images. A Content-Security-Policy ``<meta>`` allows only those two inline blocks (by hash),
  so even text that slipped through escaping could not run or load.
* **Escaped**: the Jinja2 environment autoescapes everything; model output, tool output and
  cassette content only ever reach the page as escaped text. No JSON is embedded in a script.
* **Deterministic**: the page is a function of the results only (no clock, no random ids, input
  order kept), so re-rendering the same results gives byte-identical output.

The results are read as the typed :class:`~toolreplay.results.format.Results` (every entry
point also takes a mapping shaped like results.json and validates it into one first,
:func:`~toolreplay.results.format.as_results`). Optional fields, rendered when present and
reported as *not run* when absent (never as a pass):

* ``episode.failure_modes`` (:class:`~toolreplay.results.format.FailureModeRecord` each:
  ``mode`` ``error`` | ``empty_answer`` | ``unfulfilled_promise`` | ``fabricated_value`` |
  ``no_measurement`` | ..., ``explanation``, ``evidence`` with ``message_index``, ``span``
  ``[start, end]``, ``text`` and ``tool_call``). ``message_index`` indexes the episode's
  ``transcript``; ``span`` is character offsets into that message's content (into the answer
  when ``message_index`` is None). The evidence of an ``error`` label lies in
  ``episode.error`` (status, endpoint, message, text), shown after the transcript's last
  message.
* ``results.provenance.endpoints``: what answered at the model and each tool endpoint
  (absent: the banner says it is not recorded).
* ``results.trials``, ``configuration.questions``, ``results.trial_outcomes``: passes and
  failure modes over trials for the verdict line and the grid.
* ``results.mutation`` (``toolreplay run --mutate``): the eval file's mutation score, its
  tables per configuration and per check, and the surviving mutants linked to their
  transcripts, in a "Mutation score" section (left out when absent).
* ``results.fidelity``: its ``checks``, ``tables`` and ``ablations``
  (:mod:`toolreplay.report.fidelity`).
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from markupsafe import Markup

from toolreplay.diff import Run
from toolreplay.outputs import atomic_writer, write_in_chunks
from toolreplay.report.charts import charts_view as more_charts
from toolreplay.report.compare import compare_view
from toolreplay.report.downloads import csv_path, episodes_csv, relative_href
from toolreplay.report.fidelity import fidelity_view
from toolreplay.report.labels import METRICS
from toolreplay.report.mutation import mutation_view
from toolreplay.report.origins import kept_trials
from toolreplay.report.pages import (
    GENERATOR,
    episodes_path,
    remove_stale,
    stale_pages,
    transcripts_path,
)
from toolreplay.report.reasons import unmet_counts
from toolreplay.report.scorecard import scorecard_view
from toolreplay.report.summary import (
    charts_view,
    episode_anchors,
    grid_view,
    header_view,
    metrics_view,
    mode_counts_view,
    over_trials_view,
    trial_count_of,
    verdict_view,
    without_empty,
)
from toolreplay.report.table import LARGE_RUN, episode_rows, gallery, matrix
from toolreplay.report.templating import page_environment
from toolreplay.report.text import text_view
from toolreplay.report.transcripts import (
    filters_view,
    shared_system,
    transcripts_view,
)
from toolreplay.report.trials import trials_view
from toolreplay.results.format import (
    Results,
    ResultsError,
    as_results,
    check_results,
    load_results,
)

__all__ = [
    "GENERATOR",
    "TABLE_ROWS",
    "ReportError",
    "build_page",
    "check_results",
    "episodes_path",
    "load_results",
    "remove_stale",
    "render_report",
    "render_transcripts",
    "report_pages",
    "splits_table",
    "splits_transcripts",
    "stale_pages",
    "stream_episodes",
    "stream_report",
    "stream_transcripts",
    "table_rows",
    "transcript_count",
    "transcripts_path",
    "write_report",
]


TEMPLATE = "report.html.j2"


STYLE_TEMPLATE = "report.css.j2"


SCRIPT_TEMPLATE = "report.js.j2"


TRANSCRIPTS_TEMPLATE = "transcripts_page.html.j2"


EPISODES_TEMPLATE = "episodes_page.html.j2"


#: Rows of the episode table (every episode, and every later trial's row) beyond which the table
#: and the question matrix go on a page of their own (:func:`report_pages`): the table is most
#: of a large page's bytes (about 570 a row), and the report page stays under 2 MB at any size.
TABLE_ROWS = 1000


#: Results files are validated by :mod:`toolreplay.results` (pydantic models, one definition);
#: a malformed one raises :class:`ReportError`, the same class as
#: :class:`toolreplay.results.format.ResultsError`.
ReportError = ResultsError


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@cache
def _static() -> dict[str, Any]:
    """The inline stylesheet and script (trusted, static) and the CSP that admits only them."""
    env = page_environment()
    style = env.get_template(STYLE_TEMPLATE).render()
    script = env.get_template(SCRIPT_TEMPLATE).render()
    csp = (
        "default-src 'none'; "
        f"style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    # Markup: these are our own template files, not data; they must reach the page verbatim.
    return {"style": Markup(style), "script": Markup(script), "csp": csp}


def render_report(
    results: Results | Mapping[str, Any],
    compare: Run | None = None,
    transcripts_href: str | None = None,
    downloads: Mapping[str, str] | None = None,
) -> str:
    """Render the HTML page for ``results``: :class:`~toolreplay.results.format.Results` (what
    ``toolreplay run`` writes to ``reports/results.json``; shape in :mod:`toolreplay.results`
    and this module's docstring), or the same document as a mapping (validated into one).
    ``compare`` (a :class:`toolreplay.diff.Run`) adds a section saying what changed since
    that earlier run. ``transcripts_href`` (a file name, e.g. ``index-transcripts.html``):
    the transcripts are on that page (:func:`render_transcripts`) and every link to one goes
    there; None keeps them in this page. ``downloads``: the links the page offers, as
    :func:`stream_report`'s.

    Returns the whole page as a ``str``; the same results always give the same string.
    Raises :class:`ReportError` when ``results`` does not match
    :class:`toolreplay.results.format.Results`."""
    buffer = io.StringIO()
    stream_report(results, buffer.write, compare, transcripts_href, downloads)
    return buffer.getvalue()


def render_transcripts(results: Results | Mapping[str, Any], back: str = "index.html") -> str:
    """The transcripts of ``results`` as a page of their own, linking ``back`` to the report
    (see :func:`render_report`'s ``transcripts_href``). Raises :class:`ReportError` like it."""
    buffer = io.StringIO()
    stream_transcripts(results, buffer.write, back)
    return buffer.getvalue()


def table_rows(results: Results | Mapping[str, Any]) -> int:
    """How many rows the report's episode table has: every episode (trial 1) and every later
    trial of one that ``trial_outcomes`` hold."""
    results = as_results(results)
    keys = {(e.configuration, e.question_id) for e in results.episodes}
    later = [o for o in results.trial_outcomes or [] if o.trial > 1]
    return len(results.episodes) + sum((o.configuration, o.question_id) in keys for o in later)


def splits_table(results: Results | Mapping[str, Any]) -> bool:
    """Whether the episode table and the question matrix go on a page of their own: more than
    :data:`TABLE_ROWS` rows (:func:`table_rows`); decided like :func:`splits_transcripts`."""
    return table_rows(results) > TABLE_ROWS


def transcript_count(results: Results | Mapping[str, Any]) -> int:
    """How many transcripts the report holds: every episode's (trial 1) and every later
    trial's that results keep (``trial_episodes``)."""
    results = as_results(results)
    return len(results.episodes) + len(results.trial_episodes or [])


def splits_transcripts(results: Results | Mapping[str, Any]) -> bool:
    """Whether the transcripts go on a page of their own: more than
    :data:`~toolreplay.report.table.LARGE_RUN` of them (:func:`transcript_count`). Every path
    that writes a report to a file decides by this (:func:`report_pages`)."""
    return transcript_count(results) > LARGE_RUN


def report_pages(
    results: Results | Mapping[str, Any],
    page_name: str,
    compare: Run | None = None,
    results_href: str | None = None,
) -> dict[str, Callable[[IO[str]], object]]:
    """The report's files, file name → function writing its text to a file: ``page_name``
    (e.g. ``index.html``); the episode table as CSV beside it
    (:func:`~toolreplay.report.downloads.csv_path`, ``index-episodes.csv``), which the page
    links; and, when :func:`splits_transcripts`, its transcripts page
    (:func:`transcripts_path`), every link to a transcript going there. ``results_href``: the
    results file as a link from the page (relative; None: the page offers no link to it). The
    one place the split is decided: :func:`write_report`, ``toolreplay run``/``merge``
    (through :func:`toolreplay.outputs.publish`) and ``toolreplay report`` all write these.
    Raises :class:`ReportError` for malformed ``results``."""
    results = as_results(results)
    pages: dict[str, Callable[[IO[str]], object]] = {}
    built: list[dict[str, Any]] = []

    def shared() -> dict[str, Any]:  # the pages' common view, built for the first page
        if not built:
            built.append(build_page(results))
        return built[0]

    side = transcripts_path(Path(page_name)).name if splits_transcripts(results) else None
    if side is not None:  # its own part of the view: another process may write it meanwhile
        pages[side] = lambda f: stream_transcripts(
            results, f.write, page_name, transcripts_page_view(results)
        )
    rows = episodes_path(Path(page_name)).name if splits_table(results) else None
    if rows is not None:
        pages[rows] = lambda f: stream_episodes(
            results, f.write, page_name, side, downloads, shared()
        )
    table = csv_path(Path(page_name)).name
    pages[table] = lambda f: f.write(episodes_csv(results))
    downloads = {"csv": quote(table)}
    if results_href is not None:
        downloads["results"] = results_href
    pages[page_name] = lambda f: stream_report(
        results,
        f.write,
        compare=compare,
        transcripts_href=side,
        downloads=downloads,
        table_href=None if rows is None else quote(rows),
        shared=shared() if compare is None else None,
    )
    return pages


def write_report(results_path: Path, out_path: Path, compare: Run | None = None) -> Path:
    """Render ``results_path`` (a results.json) into ``out_path`` (UTF-8, ``\n`` line ends),
    creating its folder; the page is streamed to the file, never held whole in memory. The
    files are :func:`report_pages`': more than :data:`~toolreplay.report.table.LARGE_RUN`
    transcripts go on a second page beside it, so the report itself stays small and quick to
    open; the episode table goes beside it as CSV, and the page links to it and to
    ``results_path`` when that sits in the page's folder or below it. Returns ``out_path``.
    Raises :class:`ReportError` naming the results file when it is missing or malformed. Each
    file is written next to its path and moved into place when complete
    (:func:`toolreplay.outputs.atomic_writer`), so a failure or a concurrent writer never
    leaves a half-written page."""
    results = load_results(results_path)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    href = relative_href(Path(results_path), out)
    pages = report_pages(results, out.name, compare, href)
    stale = stale_pages(out, pages)
    for name, write in pages.items():
        with atomic_writer(out.with_name(name)) as f:  # a temporary file, then os.replace
            write(f)
    remove_stale(stale)
    return out


def _view(
    results: Results, table: bool, compare: Run | None, shared: Mapping[str, Any] | None
) -> dict[str, Any]:
    """:func:`build_page`, or a copy of ``shared`` (that view, built once for a report's
    pages) without what ``table`` False leaves out."""
    if shared is None or compare is not None:
        return build_page(results, compare=compare, table=table)
    page = dict(shared)
    if not table:
        page["episodes"], page["matrix"] = [], None
    return page


def stream_report(
    results: Results | Mapping[str, Any],
    write: Callable[[str], object],
    compare: Run | None = None,
    transcripts_href: str | None = None,
    downloads: Mapping[str, str] | None = None,
    table_href: str | None = None,
    shared: Mapping[str, Any] | None = None,
) -> None:
    """Render the page for ``results`` like :func:`render_report`, passing it to ``write``
    (e.g. a text file's ``write``) piece by piece instead of building one string.
    ``downloads``: relative links the page offers, ``{"results", "csv"}`` (either may be
    absent; :func:`report_pages`). ``table_href``: the episode table and question matrix are
    on that page (:func:`stream_episodes`) and this one links there; None keeps them here.
    Raises :class:`ReportError` (before writing anything) when ``results`` is malformed.
    ``shared``: the report's :func:`build_page` view, built once for its pages
    (:func:`report_pages`)."""
    results = as_results(results)
    page = _view(results, table_href is None, compare, shared)
    page["tx"] = transcripts_href or ""
    page["downloads"] = dict(downloads or {})
    page["table"], page["table_rows"] = table_href or "", table_rows(results)
    template = page_environment().get_template(TEMPLATE)
    write_in_chunks(template.generate(page=page, **_static()), write)


def stream_transcripts(
    results: Results | Mapping[str, Any],
    write: Callable[[str], object],
    back: str = "index.html",
    shared: Mapping[str, Any] | None = None,
) -> None:
    """:func:`render_transcripts`, passed to ``write`` piece by piece (``shared`` as
    :func:`stream_report`'s)."""
    page = _view(as_results(results), False, None, shared)
    page["tx"], page["back"] = "", back
    template = page_environment().get_template(TRANSCRIPTS_TEMPLATE)
    write_in_chunks(template.generate(page=page, **_static()), write)


def stream_episodes(
    results: Results | Mapping[str, Any],
    write: Callable[[str], object],
    back: str = "index.html",
    transcripts_href: str | None = None,
    downloads: Mapping[str, str] | None = None,
    shared: Mapping[str, Any] | None = None,
) -> None:
    """The episode table and question matrix of ``results`` as a page of their own, with the
    filter bar, linking ``back`` to the report (:func:`stream_report`'s ``table_href``), passed
    to ``write`` piece by piece. ``transcripts_href``, ``downloads`` and ``shared`` as
    :func:`stream_report`'s. Raises :class:`ReportError` like it."""
    page = _view(as_results(results), True, None, shared)
    page["tx"], page["back"] = transcripts_href or "", back
    page["downloads"] = dict(downloads or {})
    template = page_environment().get_template(EPISODES_TEMPLATE)
    write_in_chunks(template.generate(page=page, **_static()), write)


def transcripts_page_view(results: Results) -> dict[str, Any]:
    """What the transcripts page reads of :func:`build_page`'s view, the same values, built
    without the rest (the table, the charts, the audit...): ``title``, ``header``, ``lean``,
    ``system``, ``transcripts``, ``trial_transcripts`` (the template refuses any other)."""
    episodes = list(results.episodes)
    anchors = episode_anchors(episodes)
    kept = kept_trials(episodes, anchors, results.trial_episodes or [])
    return _transcripts_part(results, episodes, anchors, kept)


def _transcripts_part(results: Results, episodes: Any, anchors: Any, kept: Any) -> dict[str, Any]:
    lean = splits_transcripts(results)
    system = shared_system([*episodes, *(t.record for t in kept.values())]) if lean else None
    return {
        "title": f"toolreplay report: {results.cassette_set} ({results.provenance.provenance})",
        "header": header_view(results),
        "transcripts": transcripts_view(
            episodes, results.configurations, anchors, lean, system, results=results, kept=kept
        ),
        "trial_transcripts": bool(kept),
        "lean": lean,
        "system": None if system is None else text_view(system),
    }


def build_page(
    results: Results | Mapping[str, Any], compare: Run | None = None, *, table: bool = True
) -> dict[str, Any]:
    """The template's view of ``results`` (a mapping is validated into
    :class:`~toolreplay.results.format.Results` first; :class:`ReportError` when it does not
    validate): ``{"title", "header", "verdict", "scorecard" (the first screen,
    :mod:`toolreplay.report.scorecard`), "grid", "metrics", "charts", "charts_more"
    (:mod:`toolreplay.report.charts`), "episodes" (the episode table), "matrix" (questions ×
    configurations), "gallery", "fidelity", "transcripts" (every trial's), "transcript_count",
    "trial_transcripts" (whether later trials have theirs), "trials", "filters", "compare",
    "mutation" (:mod:`toolreplay.report.mutation`, None without results' ``mutation``), "large",
    "empty" (configurations without an episode, named, not in the tables), "lean", "system",
    "tx"}`` (plain dicts and lists; expectations as their models). ``compare``: an earlier run
    to compare with (None: no comparison section). A run of more than
    :data:`~toolreplay.report.table.LARGE_RUN` episodes is ``large`` (a compact matrix); one of
    more than that many transcripts is ``lean`` (:func:`splits_transcripts`: lean transcripts,
    the set's shared system prompt shown once, and on a page of their own when written to a
    file). ``table`` False leaves the episode table and the matrix out (``episodes`` empty,
    ``matrix`` None); ``table`` is the file name of the page holding them (the caller's)."""
    results, empty = without_empty(as_results(results))  # empty: named, not a 0/0 row
    episodes = list(results.episodes)
    anchors = episode_anchors(episodes)
    kept = kept_trials(episodes, anchors, results.trial_episodes or [])
    configurations = list(results.configurations)
    prov = results.provenance
    modes = mode_counts_view(episodes)
    fidelity = fidelity_view(results.fidelity)
    stand_in = prov.provenance == "stand-in"
    trials = over_trials_view(results)
    large = len(episodes) > LARGE_RUN
    trials_view_ = trials_view(results)
    verdict = verdict_view(
        configurations,
        modes,
        fidelity,
        episodes,
        trials,
        trial_count_of(results),
        unmet_counts(episodes),
    )
    return {
        **_transcripts_part(results, episodes, anchors, kept),  # title, header, transcripts...
        "verdict": verdict,
        "scorecard": scorecard_view(
            verdict, None if results.selection is None else results.selection.eval_file
        ),
        "grid": grid_view(configurations, modes, trials),
        "metrics": metrics_view(configurations, modes),
        "metric_labels": [label for _, label, _ in METRICS],
        "charts": charts_view(configurations, skip=("recorded_wall_time_s",) if stand_in else ()),
        "charts_more": more_charts(results),
        "wall_time_charted": not stand_in,
        "episodes": episode_rows(
            results,
            episodes,
            anchors,
            {k: (t.record, t.anchor) for k, t in kept.items()},
            compact=large,
        )
        if table
        else [],
        "matrix": matrix(episodes, configurations, anchors, detail=not large) if table else None,
        "gallery": gallery(episodes, configurations, anchors),
        "fidelity": fidelity,
        "transcript_count": len(episodes) + len(kept),
        # "Consistency over trials" (trials.py); left out for a one-trial set
        "trials": trials_view_ if trials_view_ and trials_view_["trials"] > 1 else None,
        "filters": filters_view(episodes, configurations),
        "compare": None if compare is None else compare_view(compare, results, episodes, anchors),
        # "Mutation score" (mutation.py); only when results carry one (run --mutate)
        "mutation": mutation_view(results, episodes, anchors, kept),
        "large": large,
        "empty": empty,  # configurations no episode was read for
        "tx": "",  # the transcripts page's file name when they are not in this page
        "table": "",  # the episodes page's file name when the table is not in this page
    }
