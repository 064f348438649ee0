"""The wire source: the cassettes a test suite recorded (the pytest plugin), read from the
wire whatever framework sent them (:mod:`toolreplay.runs.suite_folder`), never replayed
through the study's hosts.

Each test module is a configuration, each question of the eval file takes the episodes of
the tests it names (or whose first user message is its text), repeated tests are its trials.
Without an eval file, :func:`suite_from_tests` makes one: each conversation of a test id a
question (its purely numeric parametrisation parts, ``test_x[3]`` as
``@pytest.mark.parametrize("trial", range(5))`` writes it, number repeats of ``test_x``:
trials, not other questions; a test that runs two different conversations gives two
questions, the same conversation run twice two trials).

The audit (:func:`toolreplay.audit.suite_folder.audit_suite_folder`) applies the checks such a
set allows; the study's are not applicable. The set's ``manifest.json`` (provenance ``pytest``)
is read, or written inside the folder when missing and ``write_manifest`` is set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolreplay.audit.suite_folder import audit_suite_folder
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import manifest_path
from toolreplay.evals import ANY_MEASURE, EvalSuite, ExperimentSpec, Question
from toolreplay.evaluation.sources import (
    AssessedEpisode,
    Collected,
    Selection,
    SelectionError,
    SourceError,
)
from toolreplay.judging.assessment import assess
from toolreplay.judging.verdicts import Judge
from toolreplay.runs.configuration import Progress
from toolreplay.runs.suite_folder import (
    SuiteFolderError,
    build_manifest,
    discover,
    ensure_manifest,
    key,
    read_suite_folder,
    unread_cassettes,
)


def test_question(stem: str) -> str:
    """The question a recorded test answers, from its cassette's name (the test id): the id
    less a purely numeric parametrisation part of at most four digits that stands alone (no
    numeric part beside it), which numbers repeats (``test_x[3]`` → ``test_x``;
    ``test_x[paris-2]`` and ``test_x[2-paris]`` → ``test_x[paris]``, as
    ``@pytest.mark.parametrize("trial", range(3))`` beside another parameter writes them;
    ``test_x[paris]`` and ``test_x[v1.2]`` unchanged). A run of numeric parts is part of a
    name, not a repeat: ``test_x[claude-haiku-4-5-20251001]`` and ``test_x[o1-2024-12-17]``
    are kept whole; a last part after an eight-digit date stamp is a repeat
    (``test_x[claude-haiku-4-5-20251001-2]``)."""
    name, bracket, params = stem.partition("[")
    if not bracket or not params.endswith("]"):
        return stem
    parts = params[:-1].split("-")

    def numeric(i: int) -> bool:
        return 0 <= i < len(parts) and parts[i].isdigit()

    def repeat(i: int) -> bool:
        if not numeric(i) or len(parts[i]) > 4 or numeric(i + 1):
            return False
        # alone, or last after a date stamp (claude-haiku-4-5-20251001-0: trial 0)
        return not numeric(i - 1) or (i == len(parts) - 1 and len(parts[i - 1]) == 8)

    kept = [p for i, p in enumerate(parts) if p and not repeat(i)]
    return f"{name}[{'-'.join(kept)}]" if kept else name


test_question.__test__ = False  # type: ignore[attr-defined]  # not a test for pytest


def _question_id(name: str) -> str:
    """A test id as a question id: as written (case, brackets and any script kept, so two
    tests never share a question), a ``/`` made ``∕`` so an episode key stays
    ``CONFIGURATION/QUESTION``."""
    return name.strip().replace("/", "∕") or "test"


def suite_from_tests(
    cassettes: Iterable[Path],
    expectations: Mapping[str, Sequence[Any]] | None = None,
    name: str = "pytest-session",
) -> EvalSuite:
    """An eval file for test-recorded cassettes without one: one question per conversation of each
    test id (see :func:`test_question`): as many as the most different conversations (first user
    messages) any one cassette of the test holds, the first named as the test (``test_x``), the
    next ``test_x~2``, ``test_x~3``..., the n-th one's text the n-th conversation of the first
    cassette holding n (the test id when no cassette of the test can be read). Two different
    conversations of one cassette are never trials of one question; the cassettes of one test id
    (its repeats, and the same test in other configurations) are trials of the same questions by
    position even when their prompts differ (a timestamp, a template per arm):
    :func:`toolreplay.runs.suite_folder.conversation_questions` maps each conversation by text,
    else to the first question not yet taken in its cassette; nothing to measure (so an answer
    passes unless a failure mode fails it: an empty answer, an unfulfilled promise, a fabricated
    value...), its expectations from ``expectations`` (keyed by test function name or by
    question, in the eval file's ``expect:`` forms, e.g. a test's
    ``@pytest.mark.toolreplay_expect`` marker). :class:`SourceError` for a cassette that cannot
    be read."""
    from toolreplay.cassettes import load_recorded
    from toolreplay.evals import parse_expectations
    from toolreplay.wire.reader import read_wire_episodes

    by_question: dict[str, list[Path]] = {}
    for path in cassettes:
        by_question.setdefault(test_question(path.stem), []).append(path)
    questions = []
    for question, paths in by_question.items():
        texts: list[str] = []  # the n-th conversation of the first cassette holding n
        for path in paths:
            try:
                wire = read_wire_episodes(load_recorded(path))
            except (CassetteError, ValueError):
                wire = []
            mine = list(dict.fromkeys(w.episode.question for w in wire))
            texts.extend(mine[len(texts) :])
        function = question.split("[", 1)[0]
        expect = (expectations or {}).get(question) or (expectations or {}).get(function) or ()
        for n, text in enumerate(texts or [question], start=1):
            questions.append(
                Question(
                    id=_question_id(question) + (f"~{n}" if n > 1 else ""),
                    text=text,
                    measure=ANY_MEASURE,
                    places=(),
                    day_index=0,  # a value of a day series is read for its first day
                    expect=parse_expectations(list(expect), f"{function} expect"),
                    tests=tuple(sorted({p.stem for p in paths})),
                )
            )
    spec = ExperimentSpec(("loop",), (), 6, 20000, 0.0, ())
    return EvalSuite(name, "", tuple(questions), spec, name)


def cassettes_folder(suite: EvalSuite, override: Path | None = None) -> Path:
    """The folder to read: ``override`` (``--cassettes``), else the eval file's
    ``cassettes:`` relative to the eval file; :class:`SourceError` when neither is given."""
    if override is not None:
        return override
    if suite.cassettes is None:
        raise SourceError(
            f"{suite.path}: name the folder of recorded cassettes with --cassettes PATH "
            "(or cassettes: PATH in the eval file)"
        )
    return Path(suite.path).parent / suite.cassettes


@dataclass(frozen=True)
class SuiteCassettes:
    """The test-recorded cassettes under ``folder`` (all of them, or only ``cassettes``:
    ``(configuration, path)`` pairs under it); the manifest written when missing if
    ``write_manifest`` (never outside ``folder``); ``arms`` the configurations whose
    requests must agree (arm parity; default: the eval file's ``arms:``); ``test_ids`` the
    pytest node id that replayed each cassette, by its path relative to ``folder`` (a test
    session's report; otherwise each episode's test is named from its cassette,
    :func:`test_id_of`)."""

    folder: Path
    cassettes: Sequence[tuple[str, Path]] | None = None
    write_manifest: bool = True
    arms: Sequence[str] | None = None
    test_ids: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "folder", Path(self.folder))  # a str path is a path

    def collect(
        self,
        whole: EvalSuite,
        selection: Selection,
        judge: Judge,
        progress: Progress | None = None,
    ) -> Collected:
        """Read, select, assess and audit (module docstring). :class:`SelectionError` for an
        unknown name, :class:`SourceError` for a folder without cassettes or a malformed
        manifest."""
        try:
            found = read_suite_folder(self.folder, whole, self.cassettes)
        except (SuiteFolderError, CassetteError) as exc:
            raise SourceError(str(exc)) from None
        if bad := [q for q in selection.questions if q not in whole.by_id]:
            raise SelectionError(
                f"--questions: unknown {', '.join(bad)}; {whole.path} has {whole.known_ids()}"
            )
        if bad := [c for c in selection.configurations if c not in found.configurations]:
            raise SelectionError(
                f"--configurations: unknown {', '.join(bad)}; {self.folder} holds "
                f"{', '.join(found.configurations)}"
            )
        notes = _unread_notes(self.folder)
        try:
            if not (self.write_manifest or manifest_path(self.folder).exists()):
                raise FileNotFoundError  # not asked to write one
            manifest, written = ensure_manifest(found, whole)
            audited_manifest = manifest
            if written:
                notes.append(f"wrote {manifest_path(self.folder)} (provenance pytest)")
        except OSError:  # none, and none written (not asked to, or a read-only folder)
            manifest, audited_manifest = build_manifest(found, whole), None
        except CassetteError as exc:
            if self.write_manifest:  # `toolreplay run`: the folder's manifest must be sound
                raise SourceError(str(exc)) from None
            # a test session's report: judged without it; completeness says why
            manifest, audited_manifest = build_manifest(found, whole), None
            found = replace(found, errors=(*found.errors, f"manifest.json: {exc}"))
        suite = whole
        if selection.questions:
            asked = set(selection.questions)
            suite = replace(whole, questions=tuple(q for q in whole.questions if q.id in asked))
        names = [c for c in found.configurations if c in (selection.configurations or [c])]
        qids = {q.id for q in suite.questions}
        chosen = tuple(
            e for e in found.episodes if e.configuration in names and e.question_id in qids
        )
        assessed = tuple(
            AssessedEpisode(e, assess(e, suite.by_id.get(e.question_id), judge)) for e in chosen
        )
        arms = self.arms if self.arms is not None else whole.arms
        if unknown := [a for a in arms if a not in found.configurations]:
            raise SourceError(
                f"arms: {', '.join(unknown)} is not a test module of {self.folder} (it holds "
                f"{', '.join(found.configurations)})"
            )

        def selected(line: str) -> bool:  # "CASSETTE: what", CASSETTE under its module
            rel = line.split(":", 1)[0]
            module = rel.split("/", 1)[0] if "/" in rel else self.folder.name
            return rel == "manifest.json" or module in names

        narrowed = replace(
            found,
            episodes=chosen,
            configurations=tuple(names),
            errors=tuple(e for e in found.errors if selected(e)),
            unmatched=tuple(u for u in found.unmatched if selected(u)),
        )
        passed = {key(a.episode): a.assessment.passed for a in assessed}
        audit = audit_suite_folder(narrowed, suite, judge, audited_manifest, passed, arms)
        return Collected(
            manifest=manifest,
            suite=suite,
            configurations=tuple(names),
            all_configurations=len(found.configurations),
            episodes=assessed,
            trials=found.trials,
            audit=audit,
            notes=tuple(notes),
            unread=narrowed.errors,
            folder=self.folder,
            test_ids=self.test_ids,
        )


def _unread_notes(folder: Path) -> list[str]:
    """A note for each kind of cassette-like file under ``folder`` that was not read
    (:func:`~toolreplay.runs.suite_folder.unread_cassettes`), so no test drops out silently."""
    deeper, compressed = unread_cassettes(folder)
    notes = []
    if deeper:
        notes.append(
            f"{len(deeper)} YAML file(s) below {folder}/<module>/ not read as cassettes (e.g. "
            f"{deeper[0]}): a test module's cassettes are read from its own folder only"
        )
    if compressed:
        notes.append(
            f"{len(compressed)} compressed cassette(s) not read (e.g. {compressed[0]}): "
            "decompress copies of them (gunzip -k FILE) to have them judged"
        )
    return notes


def folder_cassettes(folder: Path) -> list[Path]:
    """Every cassette of a test suite's folder (:func:`toolreplay.runs.suite_folder.discover`);
    :class:`SourceError` when it holds none."""
    try:
        return [p for _, p in discover(folder)]
    except SuiteFolderError as exc:
        raise SourceError(str(exc)) from None


def test_id_of(folder: Path, cassette: str, test_ids: Mapping[str, str] | None = None) -> str:
    """The test that recorded ``cassette`` (its path relative to the test suite's ``folder``):
    the node id ``test_ids`` gives it; else, pytest-recording's layout read back
    (``<tests>/cassettes/<module>/<test>.yaml`` for the test module ``<tests>/<module>.py``), a
    node id ``<module path>::<test>`` when that module file exists (its path relative to the
    working folder when under it), ``<module>.py::<test>`` when it does not, the test's name
    alone for a cassette at the folder's top (its module unknown). A class's test
    (``TestX.test_y``) is written ``TestX::test_y``."""
    if test_ids and cassette in test_ids:
        return test_ids[cassette]
    rel = Path(cassette)
    name, bracket, params = rel.stem.partition("[")
    test = name.replace(".", "::") + bracket + params
    if len(rel.parts) < 2:
        return test
    module = Path(folder).parent / Path(*rel.parts[:-2]) / f"{rel.parts[-2]}.py"
    if not module.is_file():
        return f"{rel.parts[-2]}.py::{test}"
    return f"{shown_path(module)}::{test}"


test_id_of.__test__ = False  # type: ignore[attr-defined]  # not a test for pytest


def shown_path(
    path: Path, folder: Path | None = None, resolved_dirs: dict[str, Path] | None = None
) -> str:
    """``path`` as results show it: relative to the working folder when under it, else
    ``<folder's name>/<path relative to folder>`` (or its name alone), so results do not
    depend on where a temporary folder lies. ``resolved_dirs``: a dict a caller showing many
    paths at once passes to each call, where the folders' resolved paths are kept (the
    working folder, ``folder``, each path's folder: one resolution each, not one per path;
    a path that is itself a link is still resolved whole)."""

    def resolve(p: Path) -> Path:
        if resolved_dirs is None:
            return p.resolve()
        key = str(p)
        found = resolved_dirs.get(key)
        if found is None:
            found = resolved_dirs[key] = p.resolve()
        return found

    path = Path(path)
    if resolved_dirs is None or path.is_symlink() or path.name in ("", ".", ".."):
        resolved = path.resolve()
    else:
        resolved = resolve(path.parent) / path.name
    try:
        return resolved.relative_to(resolve(Path.cwd())).as_posix()
    except ValueError:
        pass
    if folder is not None:
        try:
            return f"{Path(folder).name}/{resolved.relative_to(resolve(Path(folder))).as_posix()}"
        except ValueError:
            pass
    return resolved.name
