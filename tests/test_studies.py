"""The engine runs any study: a study is found by name (registered in-process or declared as an
entry point), its toolsets run under the engine's configurations and hosts, and eval files are
checked against it. A small stock-lookup study stands in for a team's own."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import requests

from toolreplay.evals import EvalFileError, load_eval
from toolreplay.models.scripted import ScriptedModel
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.episode import run_episode
from toolreplay.studies import (
    Study,
    StudyError,
    load_study,
    register_study,
    study_names,
    unregister_study,
)
from toolreplay.tools.functions import toolset_from_functions
from toolreplay.wire.episode import ModelReply, ToolCall

SRC = Path(__file__).resolve().parents[1] / "src" / "toolreplay"
STOCK = {"ABC-1": 12, "XYZ-2": 0}


def _lookup(client: dict[str, int], heuristics: tuple[str, ...] | None) -> Any:
    def stock_level(sku: str) -> dict[str, Any]:
        """Units on hand for a SKU."""
        return {"sku": sku, "on_hand": {"value": client[sku], "unit": "units"}}

    return toolset_from_functions("lookup", [stock_level])


STOCK_STUDY = Study(
    name="stock-test",
    toolsets=("lookup",),
    make_toolset=lambda name, client, heuristics: _lookup(client, heuristics),
    tool_schemas=lambda: {"lookup": _lookup(STOCK, None).schemas},
    tool_client=lambda session, urls: STOCK,
    tool_urls={"inventory_url": "https://inventory.example/api"},
)


@pytest.fixture
def stock_study() -> Iterator[Study]:
    yield register_study(STOCK_STUDY)
    unregister_study(STOCK_STUDY.name)


def test_the_only_installed_study_is_the_default() -> None:
    assert load_study() is load_study("weather")


def test_the_weather_study_is_installed_as_an_entry_point() -> None:
    assert "weather" in study_names()
    study = load_study("weather")
    assert study.toolsets == ("oneshot", "atomic") and study.baseline_toolset == "oneshot"
    assert study.heuristics == ("admin_seat", "population_order", "shi_retry")


def test_an_unknown_study_names_the_installed_ones() -> None:
    with pytest.raises(StudyError, match=r"unknown study 'nope'; installed: .*weather"):
        load_study("nope")


def test_several_studies_and_none_named_is_an_error(stock_study: Study) -> None:
    with pytest.raises(StudyError, match="name the study in the eval file"):
        load_study()
    assert load_study("stock-test") is stock_study


def test_a_registered_study_runs_an_episode_through_the_engine(stock_study: Study) -> None:
    config = Configuration("loop", "lookup", study="stock-test")
    assert config.name == "loop+lookup" and config.heuristics is None
    model = ScriptedModel(
        [
            ModelReply(None, (ToolCall("c1", "stock_level", '{"sku": "ABC-1"}'),)),
            ModelReply("ABC-1: 12 units on hand.", ()),
        ]
    )
    suite = load_eval(_eval_file(stock_study))
    episode = run_episode(
        suite, config, suite.questions[0], model=model, tool_client=STOCK, today="2026-12-01"
    )
    assert episode.stop_reason == "converged" and episode.answer == "ABC-1: 12 units on hand."
    tool_message = next(m for m in episode.transcript if m["role"] == "tool")
    assert '"value": 12' in tool_message["content"]


def test_a_study_without_a_stand_in_says_so(stock_study: Study) -> None:
    """The engine reaches a stand-in model only through the study: none, a clear error."""
    from toolreplay import StandinModel

    with pytest.raises(ValueError, match="the stock-test study has no stand-in model"):
        StandinModel(load_eval(_eval_file(stock_study)))


def test_eval_files_are_checked_against_their_study(stock_study: Study, tmp_path: Path) -> None:
    path = _eval_file(stock_study, tmp_path, toolsets="[lookup, oneshot]")
    with pytest.raises(EvalFileError, match=r"unknown toolset 'oneshot' \(the stock-test study"):
        load_eval(path)
    with pytest.raises(ValueError, match="unknown toolset 'oneshot'; known: lookup"):
        Configuration("loop", "oneshot", study="stock-test")
    with pytest.raises(ValueError, match="cannot ablate"):
        Configuration("loop", "lookup", "shi_retry", study="stock-test")


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stock_agent"


@pytest.fixture
def stock_example(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """examples/stock_agent/stock_study.py, imported from its folder and registered; its
    modules are forgotten afterwards (another example has a ``servers`` module too)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for name in ("stock_study", "servers"):  # not another example's
        sys.modules.pop(name, None)
    import stock_study

    yield register_study(stock_study.STUDY)
    unregister_study(stock_study.STUDY.name)
    for name in ("stock_study", "servers"):
        sys.modules.pop(name, None)


def test_the_stock_example_is_a_real_study(stock_example: Study, tmp_path: Path) -> None:
    """A second study in a few dozen lines: its eval file is checked against it, the engine
    runs its toolset under the loop host, its stand-in model (reached through the Study) answers
    over its fixture server, and the judge reads the answer with its vocabulary."""
    from toolreplay import StandinModel
    from toolreplay.judging.verdicts import GROUNDED_JUDGE
    from toolreplay.studies import load_study

    path = tmp_path / "stock.yaml"
    path.write_text(
        "version: 1\nname: stock\nstudy: stock\nsystem_prompt: You check the inventory.\n"
        "experiment: {hosts: [loop]}\n"
        "questions:\n"
        "  - {id: levels, text: How many ABC-1 and XYZ-2 are on hand?, measure: stock,\n"
        "     entities: [ABC-1, XYZ-2]}\n",
        encoding="utf-8",
    )
    suite = load_eval(path)
    assert suite.experiment.toolsets == ("inventory",)  # the study's, by default
    question = suite.questions[0]
    assert question.day is None and question.extension is None  # no weather in its schema
    study = load_study("stock")
    assert study.fixture_server is not None
    config = Configuration("loop", "inventory", study="stock")
    with study.fixture_server() as (urls, today), requests.Session() as session:
        episode = run_episode(
            suite, config, question, model=StandinModel(suite),
            tool_client=study.tool_client(session, urls), today=today,
        )  # fmt: skip
    assert episode.answer == "ABC-1: 12 units on hand; XYZ-2: 0 units on hand."
    assert [c.name for r in episode.rounds for c in r.reply.tool_calls] == ["check_stock"] * 2
    vocabulary = study.vocabulary_object()
    verdict = replace(GROUNDED_JUDGE, vocabulary=vocabulary).judge_episode(episode, question)
    assert verdict.passed, verdict.reason
    # a day is a word of a study's vocabulary: this study has none
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("measure: stock,", "measure: stock, day: today,"), "utf-8")
    with pytest.raises(EvalFileError, match=r"questions\.0\.day: unknown day 'today'.*none"):
        load_eval(path)


def test_a_study_owns_its_block_of_a_question(stock_study: Study, tmp_path: Path) -> None:
    """The weather study's ``standin:`` block is the weather study's: the engine's schema
    refuses it for a study that owns no block, and the weather study reports its own errors
    under the question's field."""
    path = _eval_file(stock_study, tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + "    standin: {narrates_followups: true}\n")
    with pytest.raises(EvalFileError, match=r"questions\.0\.standin: not a field here"):
        load_eval(path)
    weather = tmp_path / "weather.yaml"
    text = (Path(__file__).resolve().parents[1] / "evals" / "weather.yaml").read_text("utf-8")
    text = text.replace("version: 1\n", "version: 1\nstudy: weather\n", 1)
    weather.write_text(text.replace("{narrate: 0.7, rephrase", "{narrate: 1.5, rephrase", 1))
    with pytest.raises(EvalFileError, match=r"questions\.0\.standin\.variation\.narrate: "):
        load_eval(weather)


def _eval_file(study: Study, folder: Path | None = None, toolsets: str = "[lookup]") -> Path:
    folder = folder or Path(__import__("tempfile").mkdtemp())
    path = folder / "stock.yaml"
    path.write_text(
        f"version: 1\nname: stock\nstudy: {study.name}\nsystem_prompt: Today is {{today}}.\n"
        f"experiment:\n  hosts: [loop]\n  toolsets: {toolsets}\n"
        "questions:\n  - id: abc\n    text: How many ABC-1 are on hand?\n"
        "    measure: none\n    places: []\n",
        encoding="utf-8",
    )
    return path


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


@pytest.mark.slow
def test_the_engine_never_imports_the_study() -> None:
    """What the import contract says, checked on the source too (function-level imports and
    TYPE_CHECKING blocks included): no module outside ``study/`` does, the CLI included (it
    reaches a study's tool endpoints and snapshot tests through the ``Study``), the top level
    exports no study's names, the engine's doubles are generic."""
    allowed = {"study"}
    engine = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] not in allowed]
    assert len(engine) > 50
    offenders = [
        f"{path.relative_to(SRC)}: {name}"
        for path in engine
        for name in _imports(path)
        if name == "toolreplay.study" or name.startswith("toolreplay.study.")
    ]
    assert offenders == []
