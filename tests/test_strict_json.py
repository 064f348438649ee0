"""JSON inputs read strictly (``toolreplay.strict_json.load_json``, through
``toolreplay.inputs.parse_checked``): a key given twice in one object is refused with one line
naming the file, the line of the second occurrence and the key, for every JSON input the tool
reads (results files in ``report``, ``report --compare``, ``diff`` and ``load_results``;
manifests; shard files in ``merge``), with the exit status a malformed file of that kind gets.
The same key in different objects is fine; keys compare as decoded (escapes)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cli.main import app
from toolreplay.inputs import InputFileError, read_checked
from toolreplay.results.format import ResultsError, load_results
from toolreplay.strict_json import DuplicateJsonKeyError, load_json, repeated_key

from .conftest import EVAL_FILE, REFERENCE, REPO

COMMITTED = REPO / "reports" / "results.json"
runner = CliRunner()


def _one_line(output: str) -> str:
    return " ".join(output.split())


def _refused(text: str) -> DuplicateJsonKeyError:
    with pytest.raises(DuplicateJsonKeyError) as caught:
        load_json(text)
    return caught.value


# ---- the mechanism -------------------------------------------------------------------------


def test_a_repeated_key_is_refused_naming_both_lines() -> None:
    err = _refused('{\n  "a": 1,\n  "b": 2,\n  "a": 3\n}\n')
    assert (err.key, err.line, err.first_line) == ("a", 4, 2)
    assert str(err).startswith('duplicate key "a" (first on line 2)')
    assert "remove one of them" in str(err)


def test_the_same_key_in_different_objects_is_fine() -> None:
    text = '{"a": {"a": 1, "b": {"a": 2}}, "b": [{"a": 1}, {"a": 2}], "c": {"b": "a"}}'
    assert load_json(text) == json.loads(text)
    assert repeated_key(text) is None
    assert load_json(COMMITTED.read_text(encoding="utf-8")) == json.loads(
        COMMITTED.read_text(encoding="utf-8")
    )


def test_a_nested_repeat_is_found_in_its_own_object() -> None:
    text = '{"x": 1,\n "inner": {"x": 2,\n  "deeper": [{"y": 1}, {"y": 2,\n "y": 3}]},\n "z": 0}'
    err = _refused(text)
    assert (err.key, err.line, err.first_line) == ("y", 4, 3)


def test_the_repeat_read_first_is_named_not_the_object_closed_first() -> None:
    # the outer object's repeat comes first in the text; the inner one closes first
    text = '{"a": 1,\n"a": {"b": 1,\n"b": 2}}'
    err = _refused(text)
    assert (err.key, err.line) == ("a", 2)


def test_keys_compare_as_decoded_and_strings_hide_nothing() -> None:
    err = _refused('{"a": 1,\n"\\u0061": 2}')
    assert (err.key, err.line) == ("a", 2)
    err = _refused('{"q\\"{": 1, "v": "\\"a\\": 1, {[", "w": "a:",\n "q\\"{": 2}')
    assert (err.key, err.line, err.first_line) == ('q"{', 2, 1)
    # a value equal to a key, followed by ":" inside a later string, is no key
    text = '{"k": "a", "s": "a: b", "a": 1}'
    assert load_json(text) == json.loads(text)


def test_not_json_is_jsons_own_error() -> None:
    with pytest.raises(ValueError, match="Expecting") as caught:
        load_json('{"a": 1,')
    assert not isinstance(caught.value, DuplicateJsonKeyError)


_KEYS = st.text(alphabet='ab"\\é{:', max_size=2)  # few keys: repeats are common
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(alphabet='ab"\\{}[]:,\n é', max_size=4)
)
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(st.tuples(_KEYS, inner), max_size=4).map(lambda pairs: ("object", pairs)),
    ),
    max_leaves=12,
)


def _emit(tree: Any, rnd: random.Random) -> tuple[str, tuple[str, int, int] | None]:
    """JSON text for ``tree`` (objects as ("object", pairs), keys possibly repeated), with
    random spacing, line breaks and escapes, and the first repeat in reading order: (key,
    its line, the first's line)."""
    parts: list[str] = []
    found: list[tuple[str, int, int]] = []

    def line() -> int:
        return "".join(parts).count("\n") + 1

    def space() -> None:
        parts.append(rnd.choice(["", " ", "\n", "\n  "]))

    def string(s: str) -> None:
        text = json.dumps(s, ensure_ascii=rnd.random() < 0.5)
        parts.append(text.replace("a", "\\u0061") if rnd.random() < 0.3 else text)

    def value(node: Any) -> None:
        space()
        if isinstance(node, tuple):
            parts.append("{")
            seen: dict[str, int] = {}
            for i, (key, item) in enumerate(node[1]):
                parts.append("," if i else "")
                space()
                if key in seen and not found:
                    found.append((key, line(), seen[key]))
                seen.setdefault(key, line())
                string(key)
                space()
                parts.append(":")
                value(item)
            space()
            parts.append("}")
        elif isinstance(node, list):
            parts.append("[")
            for i, item in enumerate(node):
                parts.append("," if i else "")
                value(item)
            space()
            parts.append("]")
        elif isinstance(node, str):
            string(node)
        else:
            parts.append(json.dumps(node))
        space()

    value(tree)
    return "".join(parts), (found[0] if found else None)


@settings(max_examples=300, deadline=None)
@given(_TREES, st.integers(0, 2**32))
def test_load_json_refuses_exactly_the_repeats_and_names_the_first(tree: Any, seed: int) -> None:
    text, first = _emit(tree, random.Random(seed))
    if first is None:
        assert load_json(text) == json.loads(text)
        return
    err = _refused(text)
    assert (err.key, err.line, err.first_line) == first


def test_parse_checked_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "thing.json"
    path.write_text('{\n  "a": 1,\n  "a": 2\n}\n', encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        read_checked(path, what="thing", limit=1000, parse="json")
    assert str(caught.value).startswith(f'{path}:3: duplicate key "a" (first on line 2)')
    assert "\n" not in str(caught.value)


# ---- every JSON input --------------------------------------------------------------------


def _results_with_a_repeat(tmp_path: Path) -> tuple[Path, int]:
    """The committed results with a configuration's ``passed`` given twice (the second
    saying more passed); the line of the second."""
    lines = COMMITTED.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith('"passed":'))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f'{indent}"passed": 9999,\n')
    path = tmp_path / "results.json"
    path.write_text("".join(lines), encoding="utf-8")
    return path, at + 2


def test_results_with_a_repeated_key_are_refused_by_report_diff_and_compare(
    tmp_path: Path,
) -> None:
    bad, line = _results_with_a_repeat(tmp_path)
    said = f'{bad}:{line}: duplicate key "passed" (first on line {line - 1})'
    malformed = tmp_path / "malformed.json"
    malformed.write_text('{"format": 1,', encoding="utf-8")
    for path, expected in ((bad, said), (malformed, "not valid JSON")):
        for args in (
            ["report", "--results", str(path), "--out", str(tmp_path / "a.html")],
            ["report", "--results", str(COMMITTED), "--out", str(tmp_path / "b.html"),
             "--compare", str(path)],
            ["diff", str(COMMITTED), str(path)],
            ["diff", str(path), str(COMMITTED)],
        ):  # fmt: skip
            result = runner.invoke(app, args)
            assert result.exit_code == 2, (args, result.output)  # as a malformed file
            assert expected in _one_line(result.output), (args, result.output)
    assert not (tmp_path / "a.html").exists()
    with pytest.raises(ResultsError, match=f":{line}: duplicate key"):
        load_results(bad)


def test_a_manifest_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    shutil.copytree(REFERENCE, folder / "reference")
    manifest = folder / "reference" / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('  "trials": 5,\n', '  "trials": 5,\n  "trials": 1,\n'),
                        encoding="utf-8")  # fmt: skip
    line = text[: text.index('"trials": 5')].count("\n") + 2
    with pytest.raises(CassetteError) as caught:
        read_manifest(folder / "reference")
    assert str(caught.value).startswith(f'{manifest}:{line}: duplicate key "trials"')
    run = ["run", "--eval", str(EVAL_FILE), "--cassettes", str(folder), "--set", "reference",
           "--out", str(tmp_path / "out")]  # fmt: skip
    result = runner.invoke(app, run)
    manifest.write_text("{", encoding="utf-8")
    malformed = runner.invoke(app, run)
    assert "not valid JSON" in _one_line(malformed.output)
    assert result.exit_code == malformed.exit_code != 0, result.output
    assert f'{manifest}:{line}: duplicate key "trials"' in _one_line(result.output)
    assert not (tmp_path / "out").exists()


def test_a_shard_file_with_a_repeated_key_is_refused_by_merge(tmp_path: Path) -> None:
    shard = tmp_path / "shard-1-of-1.json"
    doc = {
        "format": 1, "shard": [1, 1], "eval_file": str(EVAL_FILE), "eval_sha256": "0" * 64,
        "cassettes": str(REPO / "cassettes"), "cassette_set": "reference",
        "manifest_sha256": "0" * 64, "configurations": None, "questions": None,
        "jobs": [{"key": "loop+atomic/hottest/1", "episode": None,
                  "error": {"type": "CassetteError", "message": "x"}}],
    }  # fmt: skip
    text = json.dumps(doc, indent=2)
    shard.write_text(text.replace('"type": "CassetteError",',
                                  '"type": "CassetteError",\n"type": "CassetteMiss",'),
                     encoding="utf-8")  # fmt: skip
    line = text[: text.index('"type"')].count("\n") + 2
    malformed = tmp_path / "shard-1-of-2.json"
    malformed.write_text("{not json", encoding="utf-8")
    refused = runner.invoke(app, ["merge", str(shard), "--out", str(tmp_path / "out")])
    broken = runner.invoke(app, ["merge", str(malformed), "--out", str(tmp_path / "out")])
    assert refused.exit_code == broken.exit_code == 1, refused.output
    assert f'{shard}:{line}: duplicate key "type"' in _one_line(refused.output)
    assert "not a shard file" in _one_line(broken.output)
    assert not (tmp_path / "out").exists()
