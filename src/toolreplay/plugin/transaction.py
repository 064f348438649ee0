"""Recording under pytest is a transaction: a test's new cassette replaces the old one only
when the test's recording completed (needs pytest-recording; see :mod:`.recording`).

pytest-recording's ``--record-mode=rewrite`` deletes a test's cassette before the test runs,
so a recording that fails (no key, the endpoint down, an error in the test) or is killed used
to lose the cassette. For the tests that opt in (:func:`~.config.uses_toolreplay`), in any
record mode but ``none``:

1. before the ``vcr`` fixture is set up, the cassette (``<dir>/<name>.yaml``) gets a second
   name, ``.<name>.yaml.toolreplay-old`` (a hard link: no copy, no window without it);
2. once pytest-recording has deleted it (rewrite), the cassette is put back under its own
   name at once, and vcrpy records into ``.<name>.yaml.toolreplay-new`` instead;
3. after the test's teardown, when setup, call and teardown all passed and the new cassette
   was written, it replaces the old one (:func:`os.replace`, atomic); otherwise the new one is
   removed, the old one stays, and a warning says which cassette was kept and why.

A run killed between 1 and 3 leaves hidden ``.toolreplay-old`` / ``-new`` files and the
cassette itself; the next setup of that test puts the old one back if it is missing and
removes the leftovers. Two tests that would record into one cassette in a session (a shared
``default_cassette_name`` or ``vcr_cassette_dir`` + name), under pytest-xdist too, are refused:
the second fails naming both tests and the cassette.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import uuid
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from toolreplay.plugin.config import uses_toolreplay

#: Suffixes of the hidden files beside a cassette while it is re-recorded.
OLD, NEW = ".toolreplay-old", ".toolreplay-new"


@dataclass
class _Recording:
    """One test's cassettes under recording: the real paths and whether each was staged."""

    paths: list[Path]
    staged: set[Path] = field(default_factory=set)
    ok: bool = True
    why: str = ""


_STATE = pytest.StashKey[_Recording]()
_RUN_ID = pytest.StashKey[str]()


def _hidden(path: Path, suffix: str) -> Path:
    return path.with_name(f".{path.name}{suffix}")


def _recover(path: Path) -> str | None:
    """Put back ``path`` from a killed recording's leftovers; a note when something was."""
    old, new = _hidden(path, OLD), _hidden(path, NEW)
    note = None
    if old.exists():
        if not path.exists():
            os.replace(old, path)
            note = f"restored {path}, which a killed recording had left out"
        else:
            old.unlink()
    new.unlink(missing_ok=True)
    return note


def _cassette_paths(request: pytest.FixtureRequest) -> list[Path]:
    """Where pytest-recording keeps this test's cassette, as its default path transformer
    names it (``.yaml``, or ``.json`` for vcrpy's JSON serializer)."""
    folder = Path(request.getfixturevalue("vcr_cassette_dir"))
    name = request.getfixturevalue("default_cassette_name")
    return [folder / (name if name.endswith(s) else name + s) for s in (".yaml", ".json")]


def _run_id(config: pytest.Config) -> str:
    """The session's id, shared by pytest-xdist's workers (its ``testrunuid``)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "testrunuid" in workerinput:
        return str(workerinput["testrunuid"])
    if _RUN_ID not in config.stash:
        config.stash[_RUN_ID] = uuid.uuid4().hex
    return config.stash[_RUN_ID]


def _claim(config: pytest.Config, path: Path, nodeid: str) -> str | None:
    """Claim ``path`` for ``nodeid`` in this session; the other test's id when another
    test claimed it first. A claim is a file written whole under a name of its own, then
    hard-linked to the claim's name (``link`` fails when that name exists): atomic across
    workers, and a claim is never seen before its test id is in it."""
    folder = Path(tempfile.gettempdir()) / f"toolreplay-claims-{_run_id(config)}"
    folder.mkdir(exist_ok=True)
    claim = folder / hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    fd, written = tempfile.mkstemp(dir=folder, prefix=".claim-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(nodeid)
        os.link(written, claim)
    except FileExistsError:
        other = claim.read_text(encoding="utf-8")
        return other if other != nodeid else None
    finally:
        os.unlink(written)
    return None


def before_vcr(request: pytest.FixtureRequest) -> None:
    """Step 1, called as the ``vcr`` fixture is set up: recover a killed recording's
    leftovers (in every record mode); when recording, refuse a cassette another test recorded
    this session and give the existing cassette its second name."""
    item = request.node
    if not uses_toolreplay(item):
        return
    paths = _cassette_paths(request)
    for path in paths:  # in every record mode: a replay after a killed recording too
        if note := _recover(path):
            item.warn(pytest.PytestWarning(f"toolreplay: {note}"))
    if request.getfixturevalue("record_mode") == "none":
        return
    other = _claim(item.config, paths[0], item.nodeid)
    if other is not None:
        pytest.fail(
            f"{item.nodeid} would record into {paths[0]}, which {other} recorded in this "
            "session: two tests writing one cassette overwrite each other. Give each test its "
            "own cassette (drop the shared default_cassette_name / vcr_cassette_name "
            "override); nothing was recorded",
            pytrace=False,
        )
    for path in paths:
        if path.is_file():
            os.link(path, _hidden(path, OLD))
    item.stash[_STATE] = _Recording(paths)


def configure(item: pytest.Item, vcr: Any) -> None:
    """Step 2, from ``pytest_recording_configure``: a cassette pytest-recording deleted is
    back under its name at once, and this recording goes to its ``-new`` file."""
    state = item.stash.get(_STATE, None)
    if state is None:
        return
    for path in state.paths:
        old = _hidden(path, OLD)
        if old.exists() and not path.exists():  # rewrite deleted it: put it back
            os.link(old, path)
            state.staged.add(path)
    if not state.staged:
        return
    _hidden(next(iter(state.staged)), NEW).unlink(missing_ok=True)
    transform, library = vcr.path_transformer, Path(vcr.cassette_library_dir or ".")

    def to_new(name: str) -> str:  # vcrpy joins the library folder after this transformer
        path = Path(transform(name))
        full = path if path.is_absolute() else library / path
        return str(_hidden(full, NEW)) if full in state.staged else str(path)

    vcr.path_transformer = to_new


def report(item: pytest.Item, rep: pytest.TestReport) -> None:
    """Note a phase that did not pass: the recording is then not committed."""
    state = item.stash.get(_STATE, None)
    if state is not None and not rep.passed and state.ok:
        state.ok = False
        state.why = f"its {rep.when} {rep.outcome}"


def after_teardown(item: pytest.Item) -> None:
    """Step 3: commit the new cassette, or keep the old one and say so."""
    state = item.stash.get(_STATE, None)
    if state is None:
        return
    del item.stash[_STATE]
    for path in state.paths:
        old, new = _hidden(path, OLD), _hidden(path, NEW)
        if path in state.staged:
            if state.ok and new.is_file():
                os.replace(new, path)
            else:
                new.unlink(missing_ok=True)
                why = state.why or "nothing was recorded"
                item.warn(
                    pytest.PytestWarning(
                        f"toolreplay: kept the previous cassette {path}: the recording did "
                        f"not complete ({why}); re-record with the test passing to replace it"
                    )
                )
        old.unlink(missing_ok=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    except BaseException as exc:  # a teardown error (or the save refused): not committed
        state = item.stash.get(_STATE, None)
        if state is not None and state.ok:
            state.ok, state.why = False, f"its teardown failed: {type(exc).__name__}"
        raise
    finally:
        after_teardown(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    rep = yield
    report(item, rep)
    return rep
