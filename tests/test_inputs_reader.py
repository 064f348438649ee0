"""The one checked reader (toolreplay.inputs.read_checked): every refusal is one InputFileError
naming the file, whatever it is asked to parse; each kind of input maps it to its own error."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from toolreplay.inputs import InputFileError, load_yaml, parse_checked, read_checked
from toolreplay.judging.phrasings import PhrasingsError, load_corpus

from .conftest import EVAL_FILE


def test_text_json_and_yaml(tmp_path):
    path = tmp_path / "x"
    path.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert read_checked(path, what="thing", limit=100) == '{"a": [1, 2]}'
    assert read_checked(path, what="thing", limit=100, parse="json") == {"a": [1, 2]}
    assert read_checked(path, what="thing", limit=100, parse="yaml") == {"a": [1, 2]}
    assert parse_checked(path, b"a: 1", what="thing", parse="yaml") == {"a": 1}


@pytest.mark.parametrize(
    ("content", "parse", "message"),
    [
        (None, "text", "{path}: thing not found"),
        (b"x" * 101, "text", "{path}: thing larger than 100 bytes; refusing to read it"),
        (b"ok\n\xff", "text", "{path}: thing is not UTF-8 text: byte 0xff at line 2, column 1"),
        (b"{", "json", "{path}: not valid JSON: Expecting property name"),
        (b"a: [", "yaml", "{path}: not valid YAML: "),
        (b"[" * 300 + b"]" * 300, "yaml", "{path}: not valid YAML: collections nest deeper"),
        (b"a: &x 1\nb: *x\n", "yaml", "{path}: not valid YAML: YAML alias to the node"),
    ],
)
def test_every_refusal_is_one_error_naming_the_file(tmp_path, content, parse, message):
    path = tmp_path / "x"
    if content is not None:
        path.write_bytes(content)
    limit = 100 if content == b"x" * 101 else 10_000
    with pytest.raises(InputFileError) as info:
        read_checked(path, what="thing", limit=limit, parse=parse)
    assert str(info.value).startswith(message.format(path=path))
    assert info.value.missing is (content is None)
    if parse != "yaml":  # PyYAML's own syntax messages span lines; they follow as they are
        assert "\n" not in str(info.value)


def test_aliases_are_allowed_only_when_asked(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: &x [1]\nb: *x\n", encoding="utf-8")
    assert read_checked(path, what="eval file", limit=100, parse="yaml", aliases=True) == {
        "a": [1],
        "b": [1],
    }
    with pytest.raises(Exception, match="anchors or aliases"):
        load_yaml("a: &x 1\nb: *x\n")


def test_json_nesting_is_said_in_the_words_asked(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("[" * 10 + "]" * 10, encoding="utf-8")
    with pytest.raises(InputFileError, match=r"x.json: results file nests deeper than 5 levels"):
        read_checked(path, what="results file", limit=100, parse="json", depth=5)
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InputFileError, match=r"x.json: nested beyond reason; not a manifest$"):
        read_checked(path, what="manifest", limit=200_000, parse="json")


def test_a_folder_and_a_fifo_are_refused_unopened(tmp_path):
    with pytest.raises(InputFileError, match="is a folder; expected the thing itself"):
        read_checked(tmp_path, what="thing", limit=100)
    if sys.platform == "win32":  # pragma: no cover
        return
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="is a FIFO; the thing must be a regular file"):
        read_checked(fifo, what="thing", limit=100)


def test_the_phrasing_corpus_is_read_through_it(tmp_path):
    with pytest.raises(PhrasingsError, match="phrasing corpus not found: "):
        load_corpus(tmp_path / "missing.yaml")
    with pytest.raises(PhrasingsError, match="is a folder; expected the phrasing corpus itself"):
        load_corpus(tmp_path)
    bad = tmp_path / "phrasings.yaml"
    bad.write_bytes(b"questions: \xff\n")
    with pytest.raises(PhrasingsError, match="phrasing corpus is not UTF-8 text: byte 0xff"):
        load_corpus(bad)
    bad.write_text("questions: " + "[" * 300 + "]" * 300, encoding="utf-8")
    with pytest.raises(PhrasingsError, match="not valid YAML: collections nest deeper"):
        load_corpus(bad)
    load_corpus(EVAL_FILE.parent / "phrasings.yaml")  # the committed corpus still loads


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs")
def test_a_cassette_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cassettes.store import load_cassette

    fifo = tmp_path / "episode.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            load_cassette(fifo)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # blocked opening the FIFO: let it go, then fail
        with open(fifo, "wb"):
            pass
        worker.join(10)
        pytest.fail("load_cassette waited on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], CassetteError)
    assert str(outcome[0]) == f"{fifo}: is a FIFO; the cassette must be a regular file"


def test_a_file_larger_than_its_size_said_is_read_whole(tmp_path, monkeypatch):
    path = tmp_path / "x"
    path.write_bytes(b"0123456789")
    real = os.fstat

    def shrunk(fd):  # as if the file grew between fstat and read
        info = real(fd)
        return os.stat_result((*info[:6], 4, *info[7:]))

    monkeypatch.setattr(os, "fstat", shrunk)
    assert read_checked(path, what="thing", limit=100) == "0123456789"
    with pytest.raises(InputFileError, match="larger than 8 bytes"):
        read_checked(path, what="thing", limit=8)


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs")
def test_a_parse_cache_entry_that_is_a_fifo_is_ignored_not_waited_on(tmp_path):
    from toolreplay.cassettes.store import ParseCache

    cache = ParseCache(tmp_path)
    assert cache.folder is not None
    cache.folder.mkdir(parents=True)
    digest = "ab" * 32
    fifo = cache.folder / f"{digest}.marshal"
    os.mkfifo(fifo)
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(cache.get(digest)), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(fifo, "wb"):
            pass
        worker.join(10)
        pytest.fail("the parse cache waited on a FIFO")
    assert found == [None]
