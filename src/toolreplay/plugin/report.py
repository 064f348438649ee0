"""``pytest --toolreplay-report DIR``: results.json and index.html for the episodes a session
replayed.

Every test that opts in (:func:`~toolreplay.plugin.config.uses_toolreplay`) and replays its
cassette (record mode ``none``) is remembered; when the session ends, the episodes are read
from those cassettes (:mod:`toolreplay.cassettes.episodes`, whatever framework sent them) and
judged by the same pipeline as ``toolreplay run`` (:func:`toolreplay.evaluation.evaluate`
over :class:`~toolreplay.evaluation.SuiteCassettes`):

- with ``--toolreplay-eval PATH``, by that eval file's questions, measures and expectations;
- without, one question per test id (:func:`toolreplay.evaluation.suite_from_tests`: its
  text the episode's first user message, nothing to measure, so only a failure mode or an
  unmet expectation fails it; a numeric parametrisation, ``test_x[3]``, is a repeat: a
  trial), its expectations given by the marker
  ``@pytest.mark.toolreplay_expect({"tool_called": "lookup"}, {"max_rounds": 3}, ...)``
  (the eval file's ``expect:`` forms).

Only DIR is written (no manifest is written beside the cassettes). Under pytest-xdist's
``-n`` each worker sends the tests it replayed to the controller, which writes the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: The marker giving a test's expectations when no eval file is given.
EXPECT_MARKER = "toolreplay_expect"

_REPLAYED = pytest.StashKey[list["Replayed"]]()


@dataclass(frozen=True)
class Replayed:
    """A test that replayed a cassette: its node id, function name, cassette, expectations
    and place in the session's collected tests."""

    nodeid: str
    function: str
    cassette: str
    expect: tuple[Any, ...] = field(default=())
    order: int = 0


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolreplay")
    group.addoption(
        "--toolreplay-report",
        metavar="DIR",
        default=None,
        help="toolreplay: write DIR/results.json and DIR/index.html for the episodes this "
        "session replayed (read from their cassettes, judged, pass^k over repeated tests).",
    )
    group.addoption(
        "--toolreplay-eval",
        metavar="PATH",
        default=None,
        help="toolreplay: judge the --toolreplay-report episodes with this eval file's "
        "questions and expectations (default: one question per test, expectations from "
        f"@pytest.mark.{EXPECT_MARKER}).",
    )


def configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{EXPECT_MARKER}(*expectations): what this test's episode should do and say, in the "
        'eval file\'s expect: forms ({"tool_called": "lookup"}), for --toolreplay-report.',
    )
    config.stash[_REPLAYED] = []
    out = config.getoption("--toolreplay-report", None)
    if out is not None and not hasattr(config, "workerinput"):
        from toolreplay.outputs import (
            OutputPathError,
            check_name_lengths,
            check_output_file,
            check_outside_cassettes,
        )

        folder = Path(out)
        try:  # before any test runs: a folder that cannot hold the report is refused up front
            if folder.exists() and not folder.is_dir():
                raise OutputPathError(
                    f"{folder}: is not a folder (the report is results.json and index.html "
                    "written into the folder named); give a folder, e.g. reports/agent"
                )
            if blocker := next((p for p in folder.parents if p.exists() and not p.is_dir()), None):
                raise OutputPathError(
                    f"{folder}: {blocker} is not a folder, so nothing can be written under it; "
                    "give a folder, e.g. reports/agent"
                )
            check_name_lengths(folder, "--toolreplay-report")
            for name in ("results.json", "index.html"):
                check_output_file(folder / name, name)
            check_outside_cassettes(folder)
        except OutputPathError as exc:
            raise pytest.UsageError(f"--toolreplay-report {exc}") from None


def remember(item: pytest.Item, cassette: Any) -> None:
    """Called after a test that opted in replayed ``cassette`` (vcrpy's)."""
    if item.config.getoption("--toolreplay-report", None) is None:
        return
    path = getattr(cassette, "_path", None)
    if path is None or not Path(path).is_file():
        return
    expect: list[Any] = []
    for mark in item.iter_markers(EXPECT_MARKER):
        expect += list(mark.args)
    function = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
    items = item.session.items
    order = items.index(item) if item in items else len(items)
    item.config.stash[_REPLAYED].append(
        Replayed(item.nodeid, function, str(Path(path).resolve()), tuple(expect), order)
    )


#: The key of xdist's ``workeroutput`` carrying a worker's replayed tests to the controller.
_WORKER_KEY = "toolreplay_replayed"


def send_to_controller(config: pytest.Config) -> None:
    """In a pytest-xdist worker: hand the tests it replayed to the controller."""
    output = getattr(config, "workeroutput", None)
    if output is not None and config.getoption("--toolreplay-report", None) is not None:
        output[_WORKER_KEY] = [
            [r.nodeid, r.function, r.cassette, list(r.expect), r.order]
            for r in config.stash.get(_REPLAYED, [])
        ]


def receive_from_worker(config: pytest.Config, workeroutput: dict[str, Any]) -> None:
    """In the pytest-xdist controller: gather a finished worker's replayed tests."""
    for nodeid, function, cassette, expect, order in workeroutput.get(_WORKER_KEY, []):
        config.stash[_REPLAYED].append(Replayed(nodeid, function, cassette, tuple(expect), order))


def _common_folder(paths: list[Path]) -> Path:
    import os

    common = Path(os.path.commonpath([str(p.parent) for p in paths]))
    # the cassettes of one module sit in one folder: report its parent, the module a
    # configuration, as toolreplay run reads a plugin-recorded folder
    return common.parent if all(p.parent == common for p in paths) else common


def write_session_report(config: pytest.Config) -> str | None:
    """Write the report when ``--toolreplay-report`` was given; a line for the terminal."""
    out = config.getoption("--toolreplay-report", None)
    if out is None or hasattr(config, "workerinput"):
        return None
    # in the order pytest lists the tests, whichever worker replayed them
    gathered: list[Replayed] = config.stash.get(_REPLAYED, [])
    replayed = sorted(gathered, key=lambda r: (r.order, r.nodeid))
    if not replayed:
        mode = config.getoption("--record-mode", None) or "none"
        why = "" if mode == "none" else f" (record mode {mode}: report a replay, without it)"
        return f"toolreplay: no replayed cassette in this session{why}; {out} not written"
    from toolreplay.evals import load_eval
    from toolreplay.evaluation import SuiteCassettes, evaluate, suite_from_tests
    from toolreplay.report.render import write_report
    from toolreplay.results.build import write_results

    # in the order the session ran them (a test's repeats are its trials, in that order),
    # not sorted by name: test_x[10] comes after test_x[2]
    paths = list(dict.fromkeys(Path(r.cassette) for r in replayed))
    folder = _common_folder(paths)
    eval_path = config.getoption("--toolreplay-eval", None)
    if eval_path:
        suite = load_eval(eval_path)
    else:  # one question per test id, repeats its trials, the markers' expectations
        marked = {r.function: list(r.expect) for r in replayed if r.expect}
        suite = suite_from_tests(paths, marked)
    cassettes = [(p.parent.name, p) for p in paths]
    test_ids: dict[str, str] = {}
    for r in replayed:  # the node id that replayed each cassette (the first, if several)
        test_ids.setdefault(Path(r.cassette).relative_to(folder).as_posix(), r.nodeid)
    source = SuiteCassettes(folder, cassettes, write_manifest=False, test_ids=test_ids)
    evaluation = evaluate(source, suite)
    results = evaluation.results
    unread = [f"toolreplay: not read: {u}" for u in evaluation.collected.unread]
    if not results.episodes:  # nothing to report: say why, write nothing, fail the session
        unread.append(
            f"toolreplay: none of the {len(paths)} replayed cassette(s) could be read into an "
            "episode"
        )
        raise UnreadCassettes("\n".join(unread))
    target = Path(out)
    from toolreplay.outputs import check_outside_cassettes

    check_outside_cassettes(target, (folder,))  # not inside the cassettes it read
    write_results(target / "results.json", results)
    page = write_report(target / "results.json", target / "index.html")
    passed = sum(1 for e in results.episodes if e.passed)
    line = f"toolreplay: {passed} of {len(results.episodes)} episodes passed in trial 1"
    trials = results.trial_outcomes or []
    if len(trials) > len(results.episodes):  # repeated tests: every trial, as the report
        line += f"; {sum(1 for t in trials if t.passed)} of {len(trials)} over every trial"
    return "\n".join([*unread, f"{line}; wrote {target / 'results.json'} and {page}"])


class UnreadCassettes(ValueError):
    """Nothing the session replayed could be read into an episode; the lines say why."""
