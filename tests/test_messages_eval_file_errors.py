"""A malformed eval file given to ``toolreplay run --eval`` is one message naming the file, the
place (key path, question id, or line and column) and what is expected or what was found:
no traceback, exit 1 (a bad eval file is a failed input, not a usage error: docs/cli.md), and
nothing written. Reviewed: PyYAML's ``in "<unicode string>"``, a model class name
(``instance of PlaceModel``) and question indexes without the question's id used to show."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import EVAL_FILE

BASE = EVAL_FILE.read_text(encoding="utf-8")
BEIJING = "  - id: beijing\n    text: 北京今天多少度？\n    measure: temperature\n"


def _edit(old: str, new: str) -> str:
    assert BASE.count(old) >= 1, old
    return BASE.replace(old, new, 1)


CASES = {
    "yaml-syntax": (
        _edit("  hosts: [single, loop]", "  hosts: [single, loop"),
        ["not valid YAML: line 14, column 11: did not find expected ',' or ']'",
         "(while parsing a flow sequence at line 13, column 10)"],
    ),
    "tab": ("version: 1\n\tname: x\n", ["not valid YAML: line 2, column 1: found a tab"]),
    "empty": ("", ["the top level is empty; an eval file is a mapping with the keys"]),
    "a-list": ("- a\n- b\n", ["the top level is a list; an eval file is a mapping"]),
    "wrong-type": (
        _edit("max_rounds: 6", "max_rounds: six"),
        ["experiment.max_rounds: Input should be a valid integer", "(found 'six')"],
    ),
    "wrong-type-in-question": (
        _edit("    text: 北京今天多少度？", "    text: 5"),
        ["questions.1.text: Input should be a valid string (found 5); in question 'beijing'"],
    ),
    "a-place-not-a-mapping": (
        _edit(BEIJING + "    day: today\n    places:\n      - {query: 北京, region: 北京市, "
              "names: [Beijing]}", BEIJING + "    day: today\n    places:\n      - 北京"),
        ["questions.1.places.0: Input should be a valid dictionary (found '北京'); in "
         "question 'beijing'"],
    ),
    "unknown-top-key": (_edit("name: weather", "name: weather\ncolour: blue"),
                        ["colour: not a field here (misspelt?)"]),
    "unknown-question-key": (
        _edit("    text: 北京今天多少度？", "    text: 北京今天多少度？\n    txet: x"),
        ["questions.1.txet: not a field here (misspelt?); in question 'beijing'"],
    ),
    "missing-id": (
        _edit("  - id: beijing\n    text", "  - text"),
        ["questions.1.id: required but missing; in the 2nd question ('北京今天多少度？')"],
    ),
    "unknown-measure": (
        _edit(BEIJING, BEIJING.replace("temperature", "humidity")),
        ["questions.1.measure: unknown measure 'humidity' (the weather study has: "
         "temperature,", "; in question 'beijing'"],
    ),
    "duplicate-id": (_edit("  - id: hottest", "  - id: beijing"),
                     ["questions: duplicate question ids: beijing"]),
    "questions-not-a-list": (re.sub(r"questions:.*", "questions: 3\n", BASE, flags=re.S),
                             ["questions: Input should be a valid list (found 3)"]),
    "unknown-expectation": (
        _edit("    text: 北京今天多少度？", "    text: 北京今天多少度？\n    expect:\n"
              "      - {tool_usd: x}"),
        ["questions.beijing.expect.0: unknown expectation kind 'tool_usd' (known: tool_called"],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("text", "said"), CASES.values(), ids=CASES.keys())
def test_a_bad_eval_file_is_named_placed_and_explained(tmp_path, text, said) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["run", "--eval", str(bad), "--out", str(out)], env={"COLUMNS": "400"}
    )
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    text_out = result.output
    assert text_out.startswith(f"error: {bad}: "), text_out
    for words in said:
        assert words in text_out, text_out
    for noise in ('"<unicode string>"', "instance of", "Model"):
        assert noise not in text_out
    assert not out.exists()
