"""The fidelity audit: is the comparison fair? Checks of the baseline, arm parity, completeness,
judge breadth and ablation effect (run_audit in audit.run).
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "AUDIT_JUDGES": "run",
    "CHECK_NAMES": "tables",
    "FACTS_PROBE": "traffic",
    "Audit": "tables",
    "Check": "tables",
    "audit_cache": "traffic",
    "cassette_sha256": "traffic",
    "audit_suite_folder": "suite_folder",
    "clear_audit_caches": "traffic",
    "is_model_request": "traffic",
    "kept_until_audit_ends": "traffic",
    "prepare_audit": "run",
    "read": "traffic",
    "recorded_tool_results": "traffic",
    "tool_results_of": "traffic",
    "run_audit": "run",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
