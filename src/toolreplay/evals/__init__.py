"""Eval files (``evals/*.yaml``): one package, one definition of the format.

- :mod:`.suite`: the file as data (``EvalSuite``, ``Question``, ``Place``, ``ExperimentSpec``);
- :mod:`.expectations`: what an episode should do and say (``expect:``; "expectation" means
  these kinds only), with their YAML boundary;
- :mod:`.measures`: measures and units an eval file (or a study) declares (``measures:``);
- :mod:`.schema`: the pydantic boundary models of the rest of the file;
- :mod:`.boundary`: what those share (strict base model, one-line errors);
- :mod:`.load`: :func:`load_eval`, reading and validating a file against its study.

Everything other packages use is imported from here (``from toolreplay.evals import
load_eval, EvalSuite, Question, EvalFileError``).
"""

from toolreplay.evals.boundary import DeclarationError, EvalFileError
from toolreplay.evals.expectations import (
    EXPECTATION_KINDS,
    SEQUENCE_MODES,
    AnswerContains,
    AnswerMatches,
    AnswerNotContains,
    EpisodeExpectation,
    Grounded,
    MaxRounds,
    MaxToolCalls,
    StopReason,
    StrictGrounding,
    ToolArguments,
    ToolCalled,
    ToolNotCalled,
    ToolSequence,
    parse_expectation,
    parse_expectations,
)
from toolreplay.evals.load import EVAL_FILE_LIMIT, load_eval
from toolreplay.evals.measures import (
    MeasureDeclaration,
    UnitDeclaration,
    field_pattern,
    parse_measures,
)
from toolreplay.evals.schema import PlaceModel
from toolreplay.evals.suite import (
    ANY_MEASURE,
    DEFAULT_PROTOCOL,
    DEFAULT_REPEAT_WINDOW,
    NO_MEASURE,
    PROTOCOLS,
    EvalSuite,
    ExperimentSpec,
    Measure,
    Place,
    Question,
)

__all__ = [
    "ANY_MEASURE", "DEFAULT_PROTOCOL", "DEFAULT_REPEAT_WINDOW", "EVAL_FILE_LIMIT",
    "EXPECTATION_KINDS", "NO_MEASURE", "PROTOCOLS", "SEQUENCE_MODES", "AnswerContains",
    "AnswerMatches", "AnswerNotContains", "DeclarationError", "EpisodeExpectation",
    "EvalFileError", "EvalSuite", "ExperimentSpec", "Grounded", "MaxRounds", "MaxToolCalls",
    "Measure", "MeasureDeclaration", "Place", "PlaceModel", "Question", "StopReason",
    "StrictGrounding", "ToolArguments", "ToolCalled", "ToolNotCalled", "ToolSequence",
    "UnitDeclaration", "field_pattern", "load_eval", "parse_expectation", "parse_expectations",
    "parse_measures",
]  # fmt: skip
