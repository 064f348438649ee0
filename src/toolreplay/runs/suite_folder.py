"""A test suite's folder: the cassettes the pytest plugin recorded, read as a set.

The episodes are read from the cassettes alone (:mod:`toolreplay.cassettes.episodes`: the Chat
Completions requests and replies in order, whatever framework sent them), not run by the
study's hosts. Layout, as pytest-recording writes it::

    FOLDER/<test module>/<test name>.yaml      configuration = the test module (its folder)
    FOLDER/<test name>.yaml                    configuration = FOLDER's own name

Each cassette may hold several episodes (a test that runs its agent more than once). Its
**conversations** are its episodes told apart by their question (first user message): the
same conversation recorded again is a repeat, another one is another question. Every
conversation is mapped to a question of the eval file (:func:`conversation_questions`): a
question's ``tests:`` (test names: ``test_stock`` for every parametrisation,
``test_stock[2]``, ``test_stock[*]``, or shell patterns, see :func:`names_test`) take the
conversations of the cassettes they name, by their ``text`` when it is the conversation's
question, else one conversation each in order; any other conversation goes to the question
whose ``text`` is its question. **Trials** are the episodes of one configuration × question
in cassette order (natural order, so ``test_x[2]`` before ``test_x[10]``), then episode
order: parametrised repeats of a test (``@pytest.mark.parametrize("trial", range(5))``) and
a conversation run again in one test are its trials, and pass^k is read from them; two
conversations of one test are never trials of one question. Episodes no question takes are
listed (:attr:`SuiteFolder.unmatched`), never judged.

The set's ``manifest.json`` (provenance ``pytest``) is written when missing, inside FOLDER
only (:func:`ensure_manifest`): the model and endpoint read from the first request, every
episode's cassette, its sha256, rounds and tokens, so the audit can tell a cassette edited or
re-recorded since.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import (
    EpisodeRecord,
    Manifest,
    episode_key,
    manifest_path,
    read_manifest,
    redact_url,
    write_manifest,
)
from toolreplay.evals import EvalSuite, Question
from toolreplay.wire.episode import Episode
from toolreplay.wire.interactions import WireEpisodeError, WireRecord
from toolreplay.wire.reader import model_endpoint, read_wire_episodes
from toolreplay.wire.unread import no_episode_error

#: The provenance of a set recorded by the pytest plugin (its manifest written afterwards).
PYTEST: Literal["pytest"] = "pytest"

_SUFFIXES = (".yaml", ".yml")
#: Compressed cassettes (a suite's own persister: langchain's ``*.yaml.gz``), not read.
_COMPRESSED = (".yaml.gz", ".yml.gz")


class SuiteFolderError(ValueError):
    """The folder holds no cassette, or is not a folder; one line naming it."""


@dataclass(frozen=True)
class SuiteFolder:
    """Everything read from a folder: ``episodes`` (matched, in configuration, question,
    trial order; each :class:`~toolreplay.wire.episode.Episode` with its ``configuration``,
    ``question_id``, ``trial`` and ``cassette`` set), ``configurations`` (in folder
    order), ``unmatched`` (``"CASSETTE episode N: first user message"`` for episodes no
    question takes) and ``errors`` (``"CASSETTE: what"`` for cassettes that could not be
    read)."""

    folder: Path
    episodes: tuple[Episode, ...]
    configurations: tuple[str, ...]
    unmatched: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def trials(self) -> int:
        """The most trials any configuration × question has (at least 1)."""
        return max((e.trial for e in self.episodes), default=1)

    def trial_one(self) -> list[Episode]:
        return [e for e in self.episodes if e.trial == 1]


def key(episode: Episode) -> str:
    """The episode's key in the manifest: ``CONFIG/QUESTION`` (``/trial-<i>`` after the
    first trial)."""
    return episode_key(episode.configuration, episode.question_id, episode.trial)


def _natural(text: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def discover(folder: Path) -> list[tuple[str, Path]]:
    """``(configuration, cassette)`` for every cassette of the folder (see the module
    docstring), configurations in name order, cassettes in natural order."""
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise SuiteFolderError(f"cassette folder {folder} {what}")
    if odd := _not_regular(folder):
        raise SuiteFolderError(
            f"cassette folder {folder}: {'; '.join(odd)}. A cassette is a regular file; "
            "remove or replace these (nothing was read)"
        )
    found: list[tuple[str, Path]] = []
    own = sorted(
        (p for p in folder.iterdir() if p.is_file() and p.suffix in _SUFFIXES),
        key=lambda p: _natural(p.stem),
    )
    found += [(folder.name, p) for p in own]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = sorted(
            (p for p in sub.iterdir() if p.is_file() and p.suffix in _SUFFIXES),
            key=lambda p: _natural(p.stem),
        )
        found += [(sub.name, p) for p in files]
    if not found:
        deeper, compressed = unread_cassettes(folder)
        todo = "record the tests first (pytest --record-mode=rewrite)"
        if deeper:
            homes = sorted({str(p.parent.parent) for p in deeper}, key=_natural)
            more = f" (and {len(homes) - 3} more)" if len(homes) > 3 else ""
            count = "1 YAML file lies" if len(deeper) == 1 else f"{len(deeper)} YAML files lie"
            todo = (
                f"{count} deeper (e.g. {deeper[0]}): give the folder whose subfolders are "
                f"the test modules, {', '.join(homes[:3])}{more}"
            )
        elif compressed:
            count = "1 cassette is" if len(compressed) == 1 else f"{len(compressed)} cassettes are"
            todo = (
                f"{count} compressed (e.g. {compressed[0]}), which toolreplay does "
                "not read: decompress copies of them (gunzip -k FILE) and give their folder"
            )
        raise SuiteFolderError(
            f"no cassette (*.yaml) in {folder} or in its subfolders ({folder}/<module>/): {todo}"
        )
    return found


def unread_cassettes(folder: Path) -> tuple[list[Path], list[Path]]:
    """What :func:`discover` does not read under ``folder`` that looks like a cassette:
    ``(deeper, compressed)``, the ``*.yaml``/``*.yml`` files below ``folder/<module>/``
    (``folder/cassettes/test_m/x.yaml``, ``folder/test_m/sub/x.yaml``) and the compressed
    ``*.yaml.gz``/``*.yml.gz`` ones at any depth, each list in path order (hidden folders
    skipped). For a clear error when nothing else is there, and a note when something is."""
    import os

    deeper: list[Path] = []
    compressed: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        depth = len(Path(root).relative_to(folder).parts)
        for name in sorted(files):
            if name.endswith(_COMPRESSED):
                compressed.append(Path(root) / name)
            elif depth >= 2 and name.endswith(_SUFFIXES):
                deeper.append(Path(root) / name)
    return deeper, compressed


def _not_regular(folder: Path) -> list[str]:
    """Each entry named like a cassette (in ``folder`` or a subfolder) that is not a regular
    file, or a link to one: a FIFO, a device, a link to ``/dev/zero`` or to nothing."""
    import os

    from toolreplay.inputs import file_kind

    odd = []
    places = [folder, *(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))]
    for place in places:
        for p in sorted(place.iterdir()):
            if p.suffix not in _SUFFIXES or p.is_file():
                continue
            try:
                kind = file_kind(os.stat(p).st_mode)
            except OSError:
                kind = "a link to nothing"
            if kind != "a folder":
                odd.append(f"{p.relative_to(folder)} is {kind}")
    return odd


def names_test(pattern: str, stem: str) -> bool:
    """Whether a ``tests:`` entry names the test whose cassette is ``stem``: a shell pattern
    (``test_x[[]*]``), the same with its brackets as written (``test_x[*]``, ``test_x[2]``), or
    a test function's name, which names all its parametrisations (``test_x``)."""
    if fnmatch.fnmatchcase(stem, pattern) or stem.split("[", 1)[0] == pattern:
        return True
    literal = re.sub(r"[\[\]]", lambda m: f"[{m.group()}]", pattern)
    return fnmatch.fnmatchcase(stem, literal)


def conversation_questions(
    suite: EvalSuite, stem: str, conversations: Sequence[str]
) -> dict[str, Question | None]:
    """The question each conversation of the cassette ``stem`` answers, by its question text
    (``conversations``: the episodes' questions, in order, each once): among the questions
    whose ``tests:`` name the test (:func:`names_test`), the one whose ``text`` is the
    conversation's, else the first not taken by text or by an earlier conversation; else the
    suite's question of that text (:meth:`EvalSuite.question_for_text`); None when none.
    A question naming the test takes one conversation of it, never two: two different
    conversations are two questions, not trials of one."""
    named = [q for q in suite.questions if any(names_test(p, stem) for p in q.tests)]
    by_text = {t: next((q for q in named if q.text == t), None) for t in conversations}
    free = [q for q in named if q not in by_text.values()]
    out: dict[str, Question | None] = {}
    for text in conversations:
        question = by_text[text]
        if question is None and free:
            question = free.pop(0)
        out[text] = question or suite.question_for_text(text)
    return out


def read_suite_folder(
    folder: Path, suite: EvalSuite, cassettes: Sequence[tuple[str, Path]] | None = None
) -> SuiteFolder:
    """Read every episode of the folder (or only ``cassettes``: ``(configuration, path)``
    under it) and map it to a question (module docstring). A cassette that cannot be read is
    listed in :attr:`SuiteFolder.errors`, not raised."""
    found = discover(folder) if cassettes is None else list(cassettes)
    configurations = list(dict.fromkeys(c for c, _ in found))
    per_key: dict[tuple[str, str], list[Episode]] = {}
    unmatched: list[str] = []
    errors: list[str] = []
    for configuration, path in found:
        rel = path.relative_to(folder).as_posix()
        try:
            interactions = _interactions(path)
            wire: list[WireRecord] = read_wire_episodes(interactions, configuration)
            if not wire:
                raise no_episode_error(interactions)
        except (CassetteError, WireEpisodeError) as exc:
            errors.append(f"{rel}: {str(exc).removeprefix(f'{path}: ')}")
            continue
        texts = list(dict.fromkeys(w.episode.question for w in wire))
        questions = conversation_questions(suite, path.stem, texts)
        for index, w in enumerate(wire, start=1):
            question = questions[w.episode.question]
            if question is None:
                unmatched.append(f"{rel} episode {index}: {w.episode.question[:80]!r}")
                continue
            key = (configuration, question.id)
            mine = per_key.setdefault(key, [])
            mine.append(
                replace(w.episode, question_id=question.id, trial=len(mine) + 1, cassette=rel)
            )
    ordered = [
        e for c in configurations for q in suite.questions for e in per_key.get((c, q.id), [])
    ]
    return SuiteFolder(
        folder, tuple(ordered), tuple(configurations), tuple(unmatched), tuple(errors)
    )


def _interactions(path: Path) -> list[dict[str, object]]:
    """The cassette's interactions, loaded and checked in toolreplay's shape, or in another
    serializer's (vcrpy's, pydantic-ai's) as the wire readers read it
    (:func:`toolreplay.cassettes.episodes.load_recorded`)."""
    from toolreplay.cassettes import load_recorded

    return load_recorded(path)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_manifest(found: SuiteFolder, suite: EvalSuite) -> Manifest:
    """The manifest of a plugin-recorded set (provenance ``pytest``): the model and endpoint
    its episodes' first model requests name (any protocol; several, as ``"a, b, c and 2
    more"`` and ``"h1, h2"``, for a suite that tests several providers), each episode's record
    keyed ``CONFIG/QUESTION`` (``/trial-<i>`` after the first), the eval file it was first
    judged with; ``recorded_on`` is the day the manifest is written (a cassette does not say
    when it was recorded)."""
    models: dict[str, None] = {}
    urls: dict[str, str] = {}  # redacted base URL → its host, in the order first seen
    for cassette in dict.fromkeys(e.cassette for e in found.episodes):
        for w in read_wire_episodes(_interactions(found.folder / cassette)):
            base_url, model = model_endpoint(w.rounds[0].exchange)
            if model:
                models.setdefault(model)
            if base_url:
                url, host = redact_url(base_url)
                urls.setdefault(url, host)
    url = next(iter(urls), "")
    hosts = list(dict.fromkeys(urls.values()))
    from importlib.metadata import version

    return Manifest(
        cassette_set=found.folder.name,
        trials=found.trials,
        provenance=PYTEST,
        model=_several(list(models)) or "unknown",
        model_base_url=url,
        endpoint_host=", ".join(hosts),
        recorded_on=datetime.now(UTC).date().isoformat(),
        today="",
        eval_file=Path(suite.path).as_posix(),
        packages={"toolreplay": version("toolreplay")},
        system_prompt_sha256="",
        tool_schemas_sha256={},
        # "streamed replies" only when every episode streamed (a mixed set is not labelled so)
        settings={"stream": True}
        if found.episodes and all(e.streamed for e in found.episodes)
        else {},
        episodes={
            key(e): EpisodeRecord(
                cassette=e.cassette,
                cassette_sha256=_sha256(found.folder / e.cassette),
                wall_time_s=0.0,
                prompt_tokens=e.usage.prompt_tokens,
                completion_tokens=e.usage.completion_tokens,
                rounds=len(e.rounds),
            )
            for e in found.episodes
        },
    )


def _several(names: list[str], shown: int = 3) -> str:
    """``"a"``, ``"a, b, c"``, ``"a, b, c and 2 more"`` (at most ``shown`` named); ``""``."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def ensure_manifest(found: SuiteFolder, suite: EvalSuite) -> tuple[Manifest, bool]:
    """The folder's manifest, and whether it was written now: read when ``manifest.json``
    exists (without the set-integrity check: cassettes recorded, re-recorded or removed since
    are for :func:`changed_cassettes` to name), else built (:func:`build_manifest`) and
    written inside the folder (nowhere else). :class:`~toolreplay.cassettes.errors.
    CassetteError` for a malformed manifest."""
    if manifest_path(found.folder).exists():
        return read_manifest(found.folder, check=False), False
    manifest = build_manifest(found, suite)
    write_manifest(found.folder, manifest)
    return manifest.model_copy(update={"cassette_set": found.folder.name}), True


def changed_cassettes(found: SuiteFolder, manifest: Manifest) -> list[str]:
    """What differs from the manifest, compared cassette by cassette (whatever eval file
    wrote it, so another eval file's question ids never make a cassette look new): episodes
    whose cassette's sha256 differs (edited or re-recorded since), cassettes the manifest does
    not know (recorded since), as ``"KEY (CASSETTE)"``, cassettes no episode was read from
    whose sha256 differs (``"CASSETTE: changed since the manifest was written; no episode
    read"``: a truncated file is not a match) and cassettes the manifest lists that are gone
    (``"CASSETTE: in the manifest, no longer in the folder"``)."""
    recorded = {r.cassette: r.cassette_sha256 for r in manifest.episodes.values()}
    out = []
    seen: dict[str, str] = {}
    for e in found.episodes:
        if e.cassette not in seen:
            seen[e.cassette] = _sha256(found.folder / e.cassette)
        if e.cassette not in recorded:
            out.append(f"{key(e)} ({e.cassette}: not in the manifest)")
        elif recorded[e.cassette] != seen[e.cassette]:
            out.append(f"{key(e)} ({e.cassette})")
    present = {c for _, p in discover(found.folder) for c in [_rel(found.folder, p)]}
    out += [
        f"{c}: changed since the manifest was written; no episode read"
        for c in sorted(present - set(seen))
        if c in recorded and recorded[c] != _sha256(found.folder / c)
    ]
    out += [
        f"{c}: in the manifest, no longer in the folder"
        for c in sorted(recorded)
        if c not in present
    ]
    return out


def _rel(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()
