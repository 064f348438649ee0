"""Results: the results.json format (pydantic models, schema, load and check), building it from
episodes (build), and metrics (pass@k, pass^k).
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "Ablation": "format",
    "AuditTable": "format",
    "CallRecord": "format",
    "Check": "format",
    "ConfigurationSummary": "format",
    "Endpoint": "format",
    "EpisodeError": "format",
    "EpisodeResult": "format",
    "FailureModeRecord": "format",
    "Fidelity": "format",
    "Flip": "format",
    "LEVEL": "intervals",
    "GroundedValue": "format",
    "LaterTrials": "build",
    "MutationRecord": "mutation",
    "MutationScoreRecord": "mutation",
    "Origin": "build",
    "Provenance": "format",
    "RESAMPLES": "intervals",
    "Results": "format",
    "ResultsError": "format",
    "SEED": "intervals",
    "Selection": "format",
    "SpreadRecord": "format",
    "SurvivorRecord": "mutation",
    "compare_line": "mutation",
    "percent": "mutation",
    "TableRow": "format",
    "TrialOutcome": "format",
    "TrialOutcomes": "build",
    "as_results": "format",
    "binomial_two_sided_p": "intervals",
    "build_results": "build",
    "check_results": "format",
    "failure_mode_record": "build",
    "load_results": "format",
    "read_results": "validate",
    "results_json_schema": "format",
    "results_document": "format",
    "results_json_text": "format",
    "write_indented": "json_text",
    "trial_outcome": "trials",
    "write_results": "build",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
