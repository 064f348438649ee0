"""Mutation testing of an eval file: perturb recorded episodes offline (``catalogue``), rejudge
them with the same judge and expectations, and score what the eval file catches (``run``).
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Context": "catalogue",
    "Mutant": "catalogue",
    "MutantOutcome": "run",
    "MutationRun": "run",
    "OPERATORS": "catalogue",
    "Score": "run",
    "compare_line": "record",
    "mutants": "catalogue",
    "mutate": "run",
    "mutate_collected": "run",
    "mutation_record": "record",
    "percent": "run",
    "print_run": "console",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
