"""One evaluation pipeline over two episode sources.

:func:`evaluate` (``pipeline``) takes an episode source (``sources``: the protocol) and an
eval file and returns an :class:`Evaluation`: results and the audit. The sources:
:class:`ReplayedSet` (``replayed``: a recorded set replayed through the hosts) and
:class:`SuiteCassettes` (``wire``: a test suite's cassettes read from the wire).
"""

from toolreplay.evaluation.folder import (
    FolderError,
    evaluate_folder,
    holds_test_suite,
    judges_a_test_suite,
    written_for_tests,
)
from toolreplay.evaluation.pipeline import Evaluation, evaluate
from toolreplay.evaluation.replayed import ReplayedSet
from toolreplay.evaluation.sources import (
    AssessedEpisode,
    Collected,
    EpisodeSource,
    Selection,
    SelectionError,
    SourceError,
)
from toolreplay.evaluation.wire import (
    SuiteCassettes,
    cassettes_folder,
    folder_cassettes,
    suite_from_tests,
)

__all__ = [
    "AssessedEpisode",
    "Collected",
    "EpisodeSource",
    "Evaluation",
    "FolderError",
    "ReplayedSet",
    "Selection",
    "SelectionError",
    "SourceError",
    "SuiteCassettes",
    "cassettes_folder",
    "evaluate",
    "evaluate_folder",
    "folder_cassettes",
    "holds_test_suite",
    "judges_a_test_suite",
    "suite_from_tests",
    "written_for_tests",
]
