"""The HTML report: view models per section (summary, episodes, fidelity, transcripts, trials),
text to HTML (text) and the renderer (render) with its templates.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "ReportError": "render",
    "expectation_lines": "console",
    "interval_lines": "console",
    "rates_lines": "console",
    "relative_href": "downloads",
    "remove_stale": "pages",
    "report_pages": "render",
    "splits_table": "render",
    "splits_transcripts": "render",
    "stale_pages": "pages",
    "stream_report": "render",
    "summary_table": "console",
    "trials_table": "console",
    "transcripts_path": "render",
    "episodes_path": "pages",
    "write_report": "render",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
