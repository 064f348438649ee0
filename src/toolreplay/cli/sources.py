"""What ``--eval``, ``--cassettes`` and ``--set`` name, read the same way by every command
that reads episodes (run, mutate, audit): a recorded set to replay, or a test suite's cassette
folder (judged with its eval file, or without one: one question per test id).
"""

from pathlib import Path
from typing import TYPE_CHECKING

from toolreplay.cli.common import FOLDER_TODO, fail, load_suite
from toolreplay.defaults import DEFAULT_CASSETTES, DEFAULT_EVAL

if TYPE_CHECKING:
    from toolreplay.evals import EvalSuite


def episodes_input(
    eval_path: Path | None, cassettes_given: Path | None, set_name: str
) -> tuple["EvalSuite", Path | None, Path]:
    """What ``--eval``, ``--cassettes`` and ``--set`` name, the same for every command that
    reads episodes (run, mutate, audit): ``(suite, folder, cassettes)``. ``folder`` is a test
    suite's cassette folder when the episodes are read from the wire (an eval file with
    ``cassettes:`` or ``tests:``, or ``--cassettes DIR`` holding cassettes a team's tests
    recorded: without ``--eval`` its suite is one question per test id,
    :func:`toolreplay.evaluation.suite_from_tests`), else None (the recorded set
    ``cassettes/set_name`` is replayed). Exit 2 for a ``--cassettes`` that is not a folder, a
    set itself, or a test suite's folder that is missing; 1 for a folder with no cassette at
    all or an eval file that does not load."""
    from toolreplay.evaluation import SourceError, cassettes_folder

    cassettes = cassettes_given if cassettes_given is not None else DEFAULT_CASSETTES
    if cassettes_given is not None:
        check_cassettes_folder(cassettes_given, set_name)
    by_tests = recorded_by_tests(cassettes, set_name)
    if by_tests and eval_path is None:  # a test suite's folder judged without an eval file
        whole = suite_of_folder(cassettes)
    elif cassettes_given is not None and eval_path is None and holds_nothing(cassettes, set_name):
        raise fail(
            f"no cassettes in {cassettes}: neither cassettes your tests recorded (*.yaml in it "
            f"or its subfolders) nor a recorded set ({cassettes}/{set_name}/manifest.json)"
        )
    else:
        whole = load_suite(eval_path or DEFAULT_EVAL)
    if not (whole.reads_cassettes or by_tests):
        return whole, None, cassettes
    named = whole.cassettes is not None and cassettes_given is None
    try:
        folder = cassettes_folder(whole, None if named else cassettes)
    except SourceError as exc:
        raise fail(str(exc), 2) from None
    if not folder.is_dir():  # before any output folder is made: nothing written
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise fail(f"cassette folder {folder} {what}; {FOLDER_TODO}", 2)
    return whole, folder, cassettes


def suite_of_folder(folder: Path) -> "EvalSuite":
    """One question per test id of a test suite's folder (no eval file given)."""
    from toolreplay.evaluation import SourceError, suite_from_tests
    from toolreplay.evaluation.wire import folder_cassettes

    try:
        return suite_from_tests(folder_cassettes(folder), name=folder.name)
    except SourceError as exc:
        raise fail(str(exc), 2) from None


def written_for_tests(manifest: Path) -> bool:
    from toolreplay.evaluation.folder import written_for_tests as for_tests

    return for_tests(manifest)


def check_cassettes_folder(folder: Path, set_name: str) -> None:
    """``--cassettes`` as given: exit 2 when it is not a folder, or when it is a cassette set
    itself (its parent holds the sets: ``--cassettes PARENT --set NAME``)."""
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise fail(
            f"cassette folder {folder} {what}: give --cassettes the folder holding the cassettes",
            2,
        )
    own = folder / "manifest.json"
    if own.is_file() and not written_for_tests(own) and not (folder / set_name).exists():
        from toolreplay.cassettes import CassetteError
        from toolreplay.cassettes.manifest import read_manifest

        try:  # a damaged manifest says what is wrong with it, not that the folder is a set
            read_manifest(folder, check=False)
        except CassetteError as exc:
            raise fail(str(exc)) from None
        raise fail(
            f"--cassettes {folder}: is a cassette set itself; give the folder holding it: "
            f"--cassettes {folder.parent} --set {folder.name}",
            2,
        )


#: What a test suite's cassette may be called, compressed ones included (read or not, they
#: make ``--cassettes DIR`` a test suite's folder, so what is wrong with them is said).
CASSETTE_LIKE = (".yaml", ".yml", ".yaml.gz", ".yml.gz")


def holds_nothing(cassettes: Path, set_name: str) -> bool:
    """Whether ``--cassettes DIR`` holds neither a test's cassette nor any recorded set (no
    ``DIR/SET`` and no ``DIR/*/manifest.json``): nothing a run could read."""
    if (cassettes / set_name).exists() or any(cassettes.glob("*/manifest.json")):
        return False
    return not any(any(cassettes.rglob(f"*{suffix}")) for suffix in CASSETTE_LIKE)


def recorded_by_tests(cassettes: Path, set_name: str) -> bool:
    """Whether ``--cassettes DIR`` is a folder of cassettes a test suite recorded, for an eval
    file that does not name it with ``cassettes:``: YAML files (compressed too), and no set of
    ``toolreplay record`` (``DIR/SET``, or a ``DIR/*/manifest.json`` of another provenance
    than ``pytest``: the manifest a run writes into a test module's folder does not make its
    parent a set of sets) in it."""
    if (cassettes / set_name).exists() or not cassettes.is_dir():
        return False
    if any(not written_for_tests(m) for m in cassettes.glob("*/manifest.json")):
        return False
    return any(any(cassettes.rglob(f"*{suffix}")) for suffix in CASSETTE_LIKE)
