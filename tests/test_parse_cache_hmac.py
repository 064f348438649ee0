"""The parse cache's keyed entries (``toolreplay.cassettes.store``, format 4): a disk entry
carries an HMAC-SHA256 over the cassette's sha256 and its payload, with a key only the cache
folder's owner can read. An entry forged with a correct header (the cassette's sha256, and a
payload hash anyone can compute) is ignored and rewritten, never trusted: replay gives the
recorded answer. A key file that is missing is made again; one that cannot be used is replaced,
or the cache lives in memory only, without a word."""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from toolreplay.cassettes import store
from toolreplay.cassettes.cache_key import KEY_FILE
from toolreplay.cassettes.manifest import cassette_path
from toolreplay.cassettes.store import ParseCache, load_cassette

from .conftest import REFERENCE, replay_reference_episode

A = ("loop+atomic", "hottest")
B = ("loop+oneshot", "hottest")
FORGED = "FORGED ANSWER: 99 °C everywhere"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOOLREPLAY_CACHE_DIR", str(folder))
    store._parse_caches.clear()
    store._by_environment.clear()
    return folder


def _new_process() -> None:
    """What a new process starts with: no parse cache in memory (the disk cache stays)."""
    store._parse_caches.clear()
    store._by_environment.clear()


def _folder(cache_dir: Path) -> Path:
    folder = ParseCache(cache_dir).folder
    assert folder is not None
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entry(cache_dir: Path, path: Path) -> Path:
    return _folder(cache_dir) / f"{_digest(path)}.marshal"


def _replay(config_name: str, qid: str) -> tuple[Any, ...]:
    episode = replay_reference_episode(config_name, qid)
    return (repr(episode.transcript), episode.answer, episode.stop_reason)


def _forged_payload(interactions: list[dict[str, Any]]) -> bytes:
    """The interactions with every ``content`` string of the last reply replaced by FORGED."""

    def forge(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: FORGED if k == "content" and isinstance(v, str) else forge(v)
                    for k, v in value.items()}
        if isinstance(value, list):
            return [forge(v) for v in value]
        return value

    last = dict(interactions[-1], response=forge(interactions[-1]["response"]))
    return marshal.dumps([*interactions[:-1], last])


def _key(cache_dir: Path) -> bytes:
    return (_folder(cache_dir) / KEY_FILE).read_bytes()


def test_a_forged_entry_with_a_correct_header_is_ignored_and_rewritten(
    cache_dir: Path,
) -> None:
    recorded = _replay(*A)
    path = cassette_path(REFERENCE, *A)
    entry = _entry(cache_dir, path)
    head = bytes.fromhex(_digest(path))
    payload = _forged_payload(load_cassette(path))
    # the forgery of the issue: the right header, a payload hash anyone can compute; and one
    # keyed with a key of the forger's own
    forgeries = [
        head + hashlib.sha256(payload).digest() + payload,
        head + hmac.new(os.urandom(32), head + payload, "sha256").digest() + payload,
    ]
    for forged in forgeries:
        entry.write_bytes(forged)
        _new_process()
        assert _replay(*A) == recorded
        assert store.parse_cache().parsed == 1  # parsed from the cassette's own bytes...
        assert entry.read_bytes() != forged  # ...and the entry rewritten
        assert ParseCache(cache_dir).get(head.hex()) == load_cassette(path)
    # The check is what refuses it: keyed with the folder's key, the same payload is served
    # (whoever can read the key file can forge; see docs/performance.md).
    entry.write_bytes(head + hmac.new(_key(cache_dir), head + payload, "sha256").digest() + payload)
    _new_process()
    assert _replay(*A)[1] == FORGED


def test_a_truncated_entry_is_ignored_and_rewritten(cache_dir: Path) -> None:
    path = cassette_path(REFERENCE, *A)
    expected = load_cassette(path)
    entry = _entry(cache_dir, path)
    whole = entry.read_bytes()
    for cut in (whole[:-1], whole[: len(whole) // 2], whole[:64], whole[:10], b""):
        entry.write_bytes(cut)
        assert ParseCache(cache_dir).get(_digest(path)) is None
        _new_process()
        assert load_cassette(path) == expected
        assert store.parse_cache().parsed == 1
        assert len(entry.read_bytes()) == len(whole)  # written again, whole
        assert ParseCache(cache_dir).get(_digest(path)) == expected


def test_an_entry_copied_from_another_cassette_is_ignored_even_with_its_header_rewritten(
    cache_dir: Path,
) -> None:
    path_a, path_b = (cassette_path(REFERENCE, c, q) for c, q in (A, B))
    expected_a, expected_b = load_cassette(path_a), load_cassette(path_b)
    assert expected_a != expected_b
    entry_a, entry_b = _entry(cache_dir, path_a), _entry(cache_dir, path_b)
    other = entry_b.read_bytes()
    # B's entry as it is, then with A's sha256 as its header (B's HMAC and payload kept)
    for copied in (other, bytes.fromhex(_digest(path_a)) + other[32:]):
        entry_a.write_bytes(copied)
        assert ParseCache(cache_dir).get(_digest(path_a)) is None
        _new_process()
        assert load_cassette(path_a) == expected_a
        assert store.parse_cache().parsed == 1
        assert ParseCache(cache_dir).get(_digest(path_a)) == expected_a


def test_the_key_is_made_on_first_use_owner_only(cache_dir: Path) -> None:
    path = cassette_path(REFERENCE, *A)
    load_cassette(path)
    key_file = _folder(cache_dir) / KEY_FILE
    info = key_file.lstat()
    assert stat.S_ISREG(info.st_mode) and info.st_size == 32
    if sys.platform != "win32":
        assert stat.S_IMODE(info.st_mode) == 0o600
    assert ParseCache(cache_dir).get(_digest(path)) == load_cassette(path)


def test_a_missing_key_is_made_again_and_old_entries_rewritten(
    cache_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = cassette_path(REFERENCE, *A)
    expected = load_cassette(path)
    key_file = _folder(cache_dir) / KEY_FILE
    old_key = key_file.read_bytes()
    key_file.unlink()
    _new_process()
    assert load_cassette(path) == expected
    assert store.parse_cache().parsed == 1  # the old entry cannot be checked: parsed again
    assert key_file.read_bytes() != old_key
    assert ParseCache(cache_dir).get(_digest(path)) == expected
    assert capfd.readouterr() == ("", "")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and links")
@pytest.mark.parametrize("damage", ["group-readable", "short", "link", "someone else's"])
def test_a_key_file_that_is_not_a_private_key_is_replaced(
    cache_dir: Path, damage: str, tmp_path: Path
) -> None:
    path = cassette_path(REFERENCE, *A)
    expected = load_cassette(path)
    key_file = _folder(cache_dir) / KEY_FILE
    old_key = key_file.read_bytes()
    if damage == "group-readable":
        key_file.chmod(0o644)
    elif damage == "short":
        key_file.write_bytes(old_key[:16])
    elif damage == "link":
        elsewhere = tmp_path / "their-key"
        elsewhere.write_bytes(old_key)
        elsewhere.chmod(0o600)
        key_file.unlink()
        key_file.symlink_to(elsewhere)
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(key_file, 12345, 12345)
    _new_process()
    assert load_cassette(path) == expected
    assert store.parse_cache().parsed == 1  # no entry trusted under a key that is not ours
    info = key_file.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.geteuid() and key_file.read_bytes() != old_key
    if damage == "link":
        assert (tmp_path / "their-key").read_bytes() == old_key  # the link's target untouched


def test_a_key_that_cannot_be_read_or_made_keeps_the_cache_in_memory(
    cache_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path_a, path_b = (cassette_path(REFERENCE, c, q) for c, q in (A, B))
    expected_a = load_cassette(path_a)  # its entry written, under the key made then
    folder = _folder(cache_dir)
    (folder / KEY_FILE).unlink()
    (folder / KEY_FILE).mkdir()  # neither readable as a key nor replaceable by one
    (folder / KEY_FILE / "x").write_text("x", encoding="utf-8")
    entry_b = folder / f"{_digest(path_b)}.marshal"
    _new_process()
    assert load_cassette(path_a) == expected_a  # works: parsed, kept in memory
    assert load_cassette(path_b) == load_cassette(path_b)
    cache = store.parse_cache()
    assert cache.folder is None and cache.parsed == 2
    assert not entry_b.exists()  # nothing written without a key
    assert capfd.readouterr() == ("", "")
