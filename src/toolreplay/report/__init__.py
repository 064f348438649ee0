"""The HTML report: view models per section (summary, episodes, fidelity, transcripts, trials),
text to HTML (text) and the renderer (render) with its templates.
"""

from __future__ import annotations

import importlib
from typing import Any

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "ReportError": "render",
    "rates_lines": "console",
    "stream_report": "render",
    "summary_table": "console",
    "trials_table": "console",
    "write_report": "render",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
