"""A file of toolreplay's own formats that lacks a required field (a results file, a set's
manifest, a shard file) is named with the field in plain words and what to do, not a schema
validator's phrase ("'provenance' is a required property", "Field required") (issue 34)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import REPO

runner = CliRunner()

RESULTS = REPO / "reports" / "results.json"


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "400"})
    return result.exit_code, " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


def _plain(said: str) -> None:
    assert "required property" not in said and "Field required" not in said


def test_results_without_a_required_field_say_which_and_to_write_them_again(
    tmp_path: Path,
) -> None:
    doc = json.loads(RESULTS.read_text(encoding="utf-8"))
    del doc["provenance"]
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    for args in (["report", "--results", str(bad), "--out", str(tmp_path / "i.html")],
                 ["diff", str(bad), str(RESULTS)]):  # fmt: skip
        code, said = _cli(*args)
        assert code == 2, said
        assert f"{bad}: not a toolreplay results file" in said
        assert "the required field 'provenance' is missing at $" in said
        assert "write it again with `toolreplay run`" in said
        _plain(said)


def test_a_manifest_without_a_required_field_says_how_to_restore_it(tmp_path: Path) -> None:
    shutil.copytree(REPO / "cassettes" / "hard", tmp_path / "hard")
    manifest = tmp_path / "hard" / "manifest.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    del doc["provenance"]
    manifest.write_text(json.dumps(doc), encoding="utf-8")
    code, said = _cli("run", "--cassettes", str(tmp_path), "--set", "hard",
                      "--eval", str(REPO / "evals" / "weather-hard.yaml"),
                      "--out", str(tmp_path / "out"))  # fmt: skip
    assert code == 1
    assert f"{manifest}: the required field provenance is missing" in said
    assert f"git checkout -- {manifest}" in said and "--set hard --force" in said
    _plain(said)


def test_a_shard_file_without_a_required_field_says_which_files_to_give(tmp_path: Path) -> None:
    bad = tmp_path / "shard-1-of-2.json"
    bad.write_text('{"format": 1}', encoding="utf-8")
    code, said = _cli("merge", str(bad))
    assert code != 0
    assert "the required field shard is missing" in said
    assert "toolreplay run --shard I/N" in said
    _plain(said)


def test_an_eval_file_without_a_required_field_says_which_and_where_fields_are_shown(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "eval.yaml"
    bad.write_text("version: 1\nname: x\nsystem_prompt: s\nqestions: []\n", encoding="utf-8")
    code, said = _cli("run", "--eval", str(bad), "--out", str(tmp_path / "out"))
    assert code == 1
    assert f"{bad}: does not match the eval schema: questions: required but missing" in said
    assert "qestions: not a field here (misspelt?)" in said
    assert "docs/expectations.md" in said
    assert "Extra inputs" not in said
    _plain(said)
