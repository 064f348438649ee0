"""The fidelity audit: is the comparison fair? Checks of the baseline, arm parity, completeness,
judge breadth and ablation effect (run_audit in audit.run).
"""

from __future__ import annotations

import importlib
from typing import Any

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "Audit": "tables",
    "Check": "tables",
    "audit_suite_folder": "suite_folder",
    "recorded_tool_results": "traffic",
    "run_audit": "run",
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
