"""Integrity of the parse cache: an entry is bound to the bytes it was parsed from, so an
entry copied over another (or any entry that does not belong to the file read) never changes
what an untouched committed set replays; what replay prepares from a cassette is keyed by
its content too."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from toolreplay.cassettes import store
from toolreplay.cassettes.manifest import cassette_path
from toolreplay.cassettes.store import ParseCache, load_cassette

from .conftest import REFERENCE, replay_reference_episode

#: Two cassettes of the reference set with different contents (one question, two toolsets).
A = ("loop+atomic", "hottest")
B = ("loop+oneshot", "hottest")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOOLREPLAY_CACHE_DIR", str(folder))
    return folder


def _new_process() -> None:
    """What a new process starts with: no parse cache in memory (the disk cache stays)."""
    store._parse_caches.clear()


def _entry(cache_dir: Path, path: Path) -> Path:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (entry,) = cache_dir.rglob(f"{digest}.marshal")
    return entry


def _replay(config_name: str, qid: str) -> str:
    episode = replay_reference_episode(config_name, qid)
    return repr((episode.transcript, episode.answer, episode.stop_reason))


def test_an_entry_copied_over_another_is_ignored(cache_dir: Path) -> None:
    path_a, path_b = (cassette_path(REFERENCE, c, q) for c, q in (A, B))
    expected_a, expected_b = load_cassette(path_a), load_cassette(path_b)
    assert expected_a != expected_b
    entry_a, entry_b = _entry(cache_dir, path_a), _entry(cache_dir, path_b)
    shutil.copyfile(entry_b, entry_a)  # a valid entry, under another cassette's name
    digest_a = entry_a.name.removesuffix(".marshal")
    fresh = ParseCache(cache_dir)
    assert fresh.get(digest_a) is None  # bound to B's bytes: never served for A
    _new_process()
    cache = store.parse_cache()
    assert load_cassette(path_a) == expected_a
    assert cache.parsed == 1  # A was parsed again from its own bytes...
    assert ParseCache(cache_dir).get(digest_a) == expected_a  # ...and its entry rewritten


def test_a_swapped_entry_does_not_change_an_untouched_set_replay(cache_dir: Path) -> None:
    before = {key: _replay(*key) for key in (A, B)}
    assert before[A] != before[B]
    path_a, path_b = (cassette_path(REFERENCE, c, q) for c, q in (A, B))
    entry_a, entry_b = _entry(cache_dir, path_a), _entry(cache_dir, path_b)
    data_a = entry_a.read_bytes()
    shutil.copyfile(entry_b, entry_a)  # the two entries swapped
    entry_b.write_bytes(data_a)
    _new_process()
    after = {key: _replay(*key) for key in (A, B)}
    assert after == before
    assert store.parse_cache().parsed == 2  # both parsed from their own bytes


def test_replay_prepares_each_content_once_and_an_edit_is_a_new_content(
    cache_dir: Path, tmp_path: Path
) -> None:
    from toolreplay.cassettes.transport import prepare

    path = tmp_path / "one.yaml"
    shutil.copy(cassette_path(REFERENCE, *A), path)
    first = store.load_prepared(path, None, prepare)
    assert store.load_prepared(path, None, prepare) is first  # made once, shared
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("北京", "南京", 1), encoding="utf-8")  # still a valid cassette
    edited = store.load_prepared(path, None, prepare)
    assert edited is not first and edited != first
    path.write_text(text, encoding="utf-8")
    assert store.load_prepared(path, None, prepare) is first


def test_the_probes_share_what_replay_just_parsed_and_read_an_edited_file_again(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load_cassette_digest`` right after ``load_prepared`` of the same bytes gives the
    interactions replay parsed (one unmarshal for the replay and its probes), the same as a
    load of their own; other bytes (the file edited meanwhile, another cassette) are read and
    parsed again."""
    path = tmp_path / "a.yaml"
    shutil.copyfile(cassette_path(REFERENCE, *A), path)
    other = cassette_path(REFERENCE, *B)
    _new_process()
    gets: list[str] = []
    real_get = ParseCache.get

    def counted(self: ParseCache, digest: str):  # type: ignore[no-untyped-def]
        gets.append(digest)
        return real_get(self, digest)

    monkeypatch.setattr(ParseCache, "get", counted)
    prepared = store.load_prepared(path, None, lambda interactions: len(interactions))
    assert len(gets) == 1
    digest, interactions = store.load_cassette_digest(path)
    assert len(gets) == 1  # not unmarshalled again
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert interactions == load_cassette(path) and prepared == len(interactions)
    assert store.load_cassette_digest(path)[1] is interactions  # a second probe: the same
    store.load_cassette_digest(other)
    assert gets[-1] == hashlib.sha256(other.read_bytes()).hexdigest()
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited_digest, edited = store.load_cassette_digest(path)
    assert edited_digest != digest and edited_digest == gets[-1]
    assert edited == interactions and edited is not interactions
