"""Cassettes a test suite's folder holds where they are not read (deeper than
``FOLDER/<module>/``, as pytest-recording's ``tests/cassettes/<module>/`` is below ``tests/``;
compressed ``*.yaml.gz``, as some suites keep them) are said: a clear error when nothing else
is there (which folder to give, or how to decompress), a note when something is, so no test
drops out of a run silently. Nothing is written either way when the run is refused."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import REPO

STOCK = REPO / "examples" / "stock_agent" / "cassettes"


def _run(folder: Path, out: Path):
    result = CliRunner().invoke(app, ["run", "--cassettes", str(folder), "--out", str(out)])
    return result, " ".join(result.output.split())


def _copy(target: Path) -> Path:
    shutil.copytree(STOCK, target)
    (target / "manifest.json").unlink()
    return target


def test_a_tests_folder_names_its_cassettes_folder(tmp_path: Path) -> None:
    _copy(tmp_path / "tests" / "cassettes")
    result, text = _run(tmp_path / "tests", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "12 YAML files lie deeper" in text
    home = tmp_path / "tests" / "cassettes"
    assert f"give the folder whose subfolders are the test modules, {home}" in text
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "tests" / "cassettes" / "manifest.json").exists()


def test_compressed_cassettes_are_named_not_mistaken_for_a_missing_eval_file(
    tmp_path: Path,
) -> None:
    module = tmp_path / "gz" / "test_agent"
    module.mkdir(parents=True)
    for cassette in (STOCK / "test_agent").glob("test_price*.yaml"):
        (module / f"{cassette.name}.gz").write_bytes(gzip.compress(cassette.read_bytes()))
    result, text = _run(tmp_path / "gz", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "3 cassettes are compressed" in text and "gunzip -k FILE" in text
    assert "eval file not found" not in text
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in module.iterdir()) == [
        "test_price[1].yaml.gz", "test_price[2].yaml.gz", "test_price[3].yaml.gz",
    ]  # fmt: skip


def test_cassettes_not_read_beside_read_ones_are_noted(tmp_path: Path) -> None:
    folder = _copy(tmp_path / "cassettes")
    old = folder / "test_agent" / "old"
    old.mkdir()
    shutil.copy(folder / "test_agent" / "test_price[1].yaml", old / "test_price[1].yaml")
    gz = folder / "test_agent" / "test_extra.yaml.gz"
    gz.write_bytes(gzip.compress((folder / "test_agent" / "test_price[2].yaml").read_bytes()))
    result, text = _run(folder, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert f"1 YAML file(s) below {folder}/<module>/ not read as cassettes" in text
    assert f"(e.g. {old}/test_price[1].yaml)" in text
    assert f"1 compressed cassette(s) not read (e.g. {gz})" in text


def test_a_suite_that_tests_several_providers_names_each_model_and_host(tmp_path: Path) -> None:
    """One folder of cassettes from three wire protocols' providers (the examples' Anthropic,
    Gemini and Chat Completions agents): the manifest and the table name every model and host,
    not the first request's alone (their hosts likewise, here all loopback)."""
    folder = tmp_path / "cassettes"
    for example in ("anthropic_agent", "gemini_agent", "stock_agent"):
        for module in (REPO / "examples" / example / "cassettes").iterdir():
            if module.is_dir():
                shutil.copytree(module, folder / module.name)
    result, text = _run(folder, tmp_path / "out")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    models = {
        json.loads((REPO / "examples" / e / "cassettes" / "manifest.json").read_text())["model"]
        for e in ("anthropic_agent", "gemini_agent", "stock_agent")
    }
    assert len(models) == 3 and set(manifest["model"].split(", ")) == models, manifest["model"]
    assert manifest["model"] in text, result.output


def test_the_loopback_note_is_not_said_of_several_hosts() -> None:
    """A suite recorded against a provider and a local server names both hosts; the report's
    "on loopback" note, read from the first model URL, would otherwise be said of both."""
    from toolreplay.report.summary import header_view
    from toolreplay.results.format import as_results

    page = REPO / "examples" / "stock_agent" / "report" / "results.json"
    results = json.loads(page.read_text(encoding="utf-8"))
    assert header_view(as_results(results))["model_on_loopback"] is True
    results["provenance"]["endpoint_host"] = "127.0.0.1, api.openai.com"
    assert header_view(as_results(results))["model_on_loopback"] is False
