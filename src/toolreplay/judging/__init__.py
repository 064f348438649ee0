"""Judging: reading values in answers (values), tool values (toolvalues), grounding, verdicts,
failure modes and the phrasing corpus.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "AssessedEpisode": "assessment",
    "Assessment": "assessment",
    "CORPUS_NAME": "phrasings",
    "Comparison": "vocabulary",
    "ExpectationResult": "expectations",
    "FAILING_MODES": "assessment",
    "FAILURE_MODES": "failures",
    "FORMAT_JUDGE": "verdicts",
    "FULL_JUDGE": "verdicts",
    "FailureMode": "failures",
    "FieldWord": "vocabulary",
    "Judge": "verdicts",
    "NARROW_JUDGE": "verdicts",
    "PhrasingsError": "phrasings",
    "Target": "grounding",
    "Verdict": "verdicts",
    "Vocabulary": "vocabulary",
    "assess": "assessment",
    "passed_by": "assessment",
    "sharing": "shared",
    "classify": "failures",
    "declared_vocabulary": "measures",
    "load_corpus": "phrasings",
    "mode_counts": "failures",
    "words": "vocabulary",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
