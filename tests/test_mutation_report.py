"""``toolreplay run --mutate`` writes the eval file's mutation score into ``results.json`` (an
optional ``mutation`` section, schema-valid, the figures :class:`MutationRun` computes) and the
report's "Mutation score" section (the score in words, per configuration and per check, the
survivors linked to their transcripts); deterministic; results without the section still load
and render without it; a weak eval file shows a low score."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from toolreplay.cli.common import load_suite
from toolreplay.cli.main import app
from toolreplay.evaluation import SuiteCassettes, cassettes_folder
from toolreplay.mutation import mutation_record
from toolreplay.mutation.run import MutationRun, mutate
from toolreplay.report.render import render_report
from toolreplay.results import read_results
from toolreplay.results.format import results_json_schema, results_json_text

REPO = Path(__file__).resolve().parents[1]
STOCK_EVAL = REPO / "examples" / "stock_agent" / "eval.yaml"
STOCK_RESULTS = REPO / "examples" / "stock_agent" / "report" / "results.json"
WEAK_EVAL = REPO / "tests" / "data" / "mutation" / "stock_weak.yaml"
runner = CliRunner()


def _mutate(eval_path: Path) -> MutationRun:
    suite = load_suite(eval_path)
    return mutate(SuiteCassettes(cassettes_folder(suite, None)), suite)


def _run(eval_path: Path, out: Path, *more: str) -> Any:
    result = runner.invoke(app, ["run", "--eval", str(eval_path), "--out", str(out), *more])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def stock_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stock-mutate")
    _run(STOCK_EVAL, out, "--mutate")
    return out


@pytest.fixture(scope="module")
def stock_doc(stock_out: Path) -> dict[str, Any]:
    return json.loads((stock_out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def stock_page(stock_out: Path) -> BeautifulSoup:
    return BeautifulSoup((stock_out / "index.html").read_text(encoding="utf-8"), "html.parser")


def test_results_carry_the_section_valid_against_the_schema(stock_doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(results_json_schema()).validate(stock_doc)
    committed = json.loads((REPO / "schemas" / "results.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(committed).validate(stock_doc)
    assert list(stock_doc)[-1] == "mutation"  # after every field an older reader knows
    m = stock_doc["mutation"]
    assert m["total"] == {"score": 0.7571, "killed": 53, "survived": 17, "equivalent": 0}
    bad = copy.deepcopy(stock_doc)
    bad["mutation"]["total"]["killed"] = "53"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(results_json_schema()).validate(bad)


def test_the_figures_are_the_mutation_runs(stock_doc: dict[str, Any]) -> None:
    run = _mutate(STOCK_EVAL)
    full = run.to_dict()
    m = stock_doc["mutation"]
    for key in ("seed", "budget", "mutated", "skipped", "total", "by_configuration",
                "by_question", "by_group", "by_operator", "by_check"):  # fmt: skip
        assert m[key] == full[key], key
    assert len(m["survivors"]) == len(run.survivors) == 17  # survivors listed, kills counted
    assert [(s["configuration"], s["question_id"], s["trial"], s["operator"], s["change"])
            for s in m["survivors"]] == [
        (o.configuration, o.question_id, o.trial, o.operator, o.change) for o in run.survivors
    ]  # fmt: skip
    assert m == mutation_record(run).model_dump(mode="json")
    assert "mutants" not in m and "killed_by" not in m["survivors"][0]


def test_the_file_reads_back_and_dumps_to_the_same_bytes(stock_out: Path) -> None:
    path = stock_out / "results.json"
    results = read_results(path)
    assert results.mutation is not None and results.mutation.total.killed == 53
    assert results_json_text(results) == path.read_text(encoding="utf-8")


def test_the_report_shows_the_score_tables_and_survivors(stock_page: BeautifulSoup) -> None:
    section = stock_page.select_one("section#mutation")
    assert section is not None
    text = section.get_text(" ", strip=True)
    assert "Mutation score 76%" in text and "caught 53 of 70 plausible regressions" in text
    assert "would pass unnoticed" in text  # the plain-words meaning
    rows = {
        tr.th.get_text(" ", strip=True): [td.get_text(" ", strip=True) for td in tr("td")]
        for tr in section.select("table.mut-table tbody tr")
    }
    assert rows["test_agent"][:3] == ["76%", "53", "17"]  # per configuration
    assert rows["stop_reason"][:3] == ["0%", "0", "70"]  # per check: catches nothing
    assert rows["grounded"][0] == "79%"
    changes = [td.get_text(strip=True) for td in section.select("td.mut-change")]
    assert len(changes) == 17
    assert "answer: 'ABC-1' → 'ZZZ-9'" in changes
    ids = {tag["id"] for tag in stock_page.select("[id]")}
    links = [a["href"] for a in section.select("table.mut-survivors a")]
    assert len(links) == 17 and all(h[1:] in ids for h in links)  # each to its transcript
    assert any(h.endswith("-t3") for h in links)  # a later trial: its own transcript
    nav = [a["href"] for a in stock_page.select("nav.toc a")]
    assert "#mutation" in nav
    badge = stock_page.select_one(".sc-badges a[href='#mutation']")
    assert badge is not None and badge.get_text(strip=True) == "mutation score 76%"


def test_the_run_is_byte_identical_on_rerun(stock_out: Path, tmp_path: Path) -> None:
    _run(STOCK_EVAL, tmp_path, "--mutate")
    for name in ("results.json", "index.html", "index-episodes.csv"):
        assert (tmp_path / name).read_bytes() == (stock_out / name).read_bytes(), name


def test_results_without_the_section_render_without_it(stock_doc: dict[str, Any]) -> None:
    older = {k: v for k, v in stock_doc.items() if k != "mutation"}
    page = BeautifulSoup(render_report(older), "html.parser")
    assert page.select_one("#mutation") is None
    assert "#mutation" not in [a["href"] for a in page.select("a")]
    committed = json.loads(STOCK_RESULTS.read_text(encoding="utf-8"))
    committed.pop("mutation", None)
    assert "Mutation score" not in render_report(committed)


def test_a_weak_eval_file_shows_a_low_score(tmp_path: Path) -> None:
    _run(WEAK_EVAL, tmp_path, "--mutate")
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    score = doc["mutation"]["total"]["score"]
    assert score < 0.25
    page = BeautifulSoup((tmp_path / "index.html").read_text(encoding="utf-8"), "html.parser")
    headline = page.select_one("#mutation .mut-headline").get_text(" ", strip=True)
    assert headline.startswith(f"Mutation score {100 * score:.0f}%:")
    assert len(page.select("#mutation td.mut-change")) == doc["mutation"]["total"]["survived"]


def test_diff_compares_the_two_runs_mutation_scores(stock_out: Path, tmp_path: Path) -> None:
    _run(WEAK_EVAL, tmp_path, "--mutate")
    result = runner.invoke(
        app, ["diff", str(stock_out / "results.json"), str(tmp_path / "results.json")]
    )
    weak = json.loads((tmp_path / "results.json").read_text("utf-8"))["mutation"]["total"]
    scored = weak["killed"] + weak["survived"]
    line = f"{100 * weak['score']:.0f}% ({weak['killed']} of {scored} killed)"
    assert f"mutation score: A 76% (53 of 70 killed) → B {line}" in result.output
    older = tmp_path / "older.json"
    doc = json.loads((stock_out / "results.json").read_text("utf-8"))
    del doc["mutation"]
    older.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    mixed = runner.invoke(app, ["diff", str(older), str(stock_out / "results.json")])
    assert mixed.exit_code == 0, mixed.output
    assert "mutation score: A not scored (run --mutate) → B 76%" in mixed.output
    plain = runner.invoke(app, ["diff", str(older), str(older)])
    assert "mutation score" not in plain.output


def test_hostile_text_in_the_section_stays_text(stock_doc: dict[str, Any]) -> None:
    hostile = "</td><img src=x onerror=alert(1)><b>bold</b>"
    doc = copy.deepcopy(stock_doc)
    for s in doc["mutation"]["survivors"]:
        s["change"] += hostile
        s["operator"] += hostile
    doc["mutation"]["by_check"][hostile] = doc["mutation"]["by_check"]["verdict"]
    page = render_report(doc)
    assert "<img" not in page and "<b>bold" not in page
    soup = BeautifulSoup(page, "html.parser")
    changes = [td.get_text() for td in soup.select("#mutation td.mut-change")]
    assert len(changes) == 17 and all(c.endswith(hostile) for c in changes)


def test_a_long_change_is_shown_whole(stock_doc: dict[str, Any]) -> None:
    doc = copy.deepcopy(stock_doc)
    long = "answer: '" + "x" * 2000 + "' → ''"
    doc["mutation"]["survivors"][0]["change"] = long
    soup = BeautifulSoup(render_report(doc), "html.parser")
    assert soup.select("#mutation td.mut-change")[0].get_text() == long
