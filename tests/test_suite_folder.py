"""A test suite's folder (examples/stock_agent, a pydantic-ai agent, recorded by the pytest plugin)
plus an eval file runs through ``toolreplay run`` like a recorded set: episodes read from the
cassettes, judged with the eval file's expectations, pass^k over repeated tests, results and a
report (the committed ones, byte for byte); a missing manifest is written inside the folder
only; the audit's study checks are not applicable, never a pass; ``diff`` compares two runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

# end to end (pytest run in-process, the CLI on copied sets, a browser): the inner loop
# `pytest -m "not slow"` leaves them to CI
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "stock_agent"
REPORT = EXAMPLE / "report"


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("stock-report")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # results name the eval file relative to the working folder
        result = _run(
            "run", "--eval", "examples/stock_agent/eval.yaml",
            "--cassettes", "examples/stock_agent/cassettes", "--out", str(out),
            "--mutate",  # the committed report carries the mutation score (regenerate-reports)
        )  # fmt: skip
    return result, out


def test_the_committed_report_regenerates_byte_for_byte(fresh: tuple[Any, Path]) -> None:
    result, out = fresh
    assert result.exit_code == 0, result.output
    for name in ("results.json", "index.html"):
        assert (out / name).read_bytes() == (REPORT / name).read_bytes(), name


def test_episodes_are_judged_with_the_eval_files_expectations(fresh: tuple[Any, Path]) -> None:
    results = json.loads((fresh[1] / "results.json").read_text(encoding="utf-8"))
    assert results["provenance"]["provenance"] == "pytest"
    assert [c["name"] for c in results["configurations"]] == ["test_agent"]
    by_q = {e["question_id"]: e for e in results["episodes"]}
    assert {q: e["passed"] for q, e in by_q.items()} == {
        "stock-levels": True,
        "price": True,
        "stock-and-price": False,
        "unknown-sku": False,
    }
    failed = {
        (q, x["kind"]): x["explanation"]
        for q, e in by_q.items()
        for x in e["expectations"]
        if not x["passed"]
    }
    assert failed == {
        ("stock-and-price", "max_rounds"): "3 rounds, more than 2; round 3 is over the limit",
        ("unknown-sku", "answer_not_contains"): "the answer contains '99'",
        ("unknown-sku", "strict_grounding"): failed[("unknown-sku", "strict_grounding")],
    }
    assert "no tool result holds 99 units" in failed[("unknown-sku", "strict_grounding")]
    assert [f["mode"] for f in by_q["unknown-sku"]["failure_modes"]] == ["fabricated_value"]


def test_repeated_tests_are_trials(fresh: tuple[Any, Path]) -> None:
    results = json.loads((fresh[1] / "results.json").read_text(encoding="utf-8"))
    assert results["trials"] == 3
    config = results["configurations"][0]
    # stock-levels passes in trials 1 and 2 (trial 3 skips XYZ-2); price always; the others never
    assert config["pass_hat_k"] == {"1": 0.4167, "2": 0.3333, "3": 0.25}
    levels = next(q for q in config["questions"] if q["question_id"] == "stock-levels")
    assert (levels["trials"], levels["passes"]) == (3, 2)
    outcome = next(
        o
        for o in results["trial_outcomes"]
        if o["question_id"] == "stock-levels" and o["trial"] == 3
    )
    assert outcome["passed"] is False


def test_the_audit_reports_study_checks_as_not_applicable(fresh: tuple[Any, Path]) -> None:
    result, out = fresh
    checks = {
        c["name"]: c
        for c in json.loads((out / "results.json").read_text(encoding="utf-8"))["fidelity"][
            "checks"
        ]
    }
    for name in ("baseline_heuristics", "baseline_properties", "ablation", "near_miss",
                 "arm_parity"):  # fmt: skip
        assert checks[name]["passed"] is False and checks[name]["not_applicable"] is True
        assert checks[name]["explanation"].startswith("not applicable: ")
    assert checks["judge_breadth"]["passed"] is True
    assert checks["completeness"]["passed"] is True
    summary = "fidelity: the 2 applicable checks passed; not applicable: baseline_heuristics"
    assert summary in result.output
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count('data-passed="not-applicable"') == 5
    assert "2 of 7 checks passed; 5 not applicable to this set." in page


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """The example's cassettes, without their manifest, and its eval file beside them."""
    target = tmp_path / "stock"
    shutil.copytree(EXAMPLE / "cassettes", target / "cassettes")
    (target / "cassettes" / "manifest.json").unlink()
    shutil.copy(EXAMPLE / "eval.yaml", target / "eval.yaml")
    return target


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_a_missing_manifest_is_written_inside_the_folder_only(copied: Path, tmp_path: Path) -> None:
    before = _files(tmp_path)
    out = tmp_path / "out"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {copied / 'cassettes' / 'manifest.json'} (provenance pytest)" in " ".join(
        result.output.split()
    )
    added = {f for f in _files(tmp_path) - before if f != "out/.toolreplay.lock"}
    assert added == {
        "stock/cassettes/manifest.json",
        "out/results.json",
        "out/index.html",
        "out/index-episodes.csv",
    }
    manifest = json.loads((copied / "cassettes" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["provenance"] == "pytest" and manifest["model"] == "stock-demo"
    assert manifest["trials"] == 3
    assert manifest["episodes"]["test_agent/stock-levels/trial-3"]["cassette"] == (
        "test_agent/test_stock_levels[3].yaml"
    )
    # the second run reads it and writes nothing new in the folder
    again = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(out))
    assert again.exit_code == 0 and "manifest.json" not in again.output.split("wrote")[0]


def test_an_edited_cassette_fails_completeness_and_flips_in_diff(
    copied: Path, tmp_path: Path
) -> None:
    first = tmp_path / "first"
    assert _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(first)).exit_code == 0
    cassette = copied / "cassettes" / "test_agent" / "test_price[1].yaml"
    text = cassette.read_text(encoding="utf-8")
    cassette.write_text(text.replace("ABC-1 costs €19.90.", "ABC-1 costs €18.90."), "utf-8")
    second = tmp_path / "second"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(second))
    assert result.exit_code == 1
    assert "fidelity audit failed" in result.output
    checks = json.loads((second / "results.json").read_text(encoding="utf-8"))["fidelity"]
    completeness = next(c for c in checks["checks"] if c["name"] == "completeness")
    assert completeness["passed"] is False
    assert "1 episode(s) changed since the manifest was written" in completeness["explanation"]
    assert any(
        "test_agent/price (test_agent/test_price[1].yaml)" in e for e in completeness["evidence"]
    )
    diff = _run("diff", str(first / "results.json"), str(second / "results.json"))
    assert diff.exit_code == 1, diff.output
    assert "FLIP test_agent/price: pass → fail" in diff.output


def test_a_folder_without_cassettes_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    shutil.copy(EXAMPLE / "eval.yaml", tmp_path / "eval.yaml")
    result = _run(
        "run", "--eval", str(tmp_path / "eval.yaml"), "--cassettes", str(tmp_path / "empty"),
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert result.exit_code == 1
    assert f"no cassette (*.yaml) in {tmp_path / 'empty'}" in " ".join(result.output.split())
    assert not (tmp_path / "empty" / "manifest.json").exists()


def test_the_example_replays_offline_without_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pydantic_ai")
    for name in ("TOOLREPLAY_BASE_URL", "TOOLREPLAY_MODEL", "TOOLREPLAY_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    result = pytester.runpytest(
        str(EXAMPLE), "--record-mode=none", "--block-network", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=12)


STREAMED = REPO / "examples" / "streamed_loop"


def test_the_streamed_example_replays_offline_and_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A raw openai SDK loop that streams every reply: its cassettes hold the event streams;
    the episodes read from them equal the loop's own conversation (its tests check that),
    and the committed report regenerates byte for byte, marked streamed."""
    for name in ("TOOLREPLAY_BASE_URL", "TOOLREPLAY_MODEL", "TOOLREPLAY_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    result = pytester.runpytest(
        str(STREAMED), "--record-mode=none", "--block-network", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=6)
    monkeypatch.chdir(REPO)
    run = _run("run", "--eval", "examples/streamed_loop/eval.yaml", "--out", str(tmp_path))
    assert run.exit_code == 0, run.output
    for name in ("results.json", "index.html"):
        assert (tmp_path / name).read_bytes() == (STREAMED / "report" / name).read_bytes()
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["provenance"]["streamed"] is True
    assert results["configurations"][0]["pass_hat_k"] == {"1": 0.3333, "2": 0.3333}
    modes = {e["question_id"]: [f["mode"] for f in e["failure_modes"]] for e in results["episodes"]}
    assert modes["item-count"] == ["fabricated_value"]


def test_pytest_writes_a_report_of_the_replayed_episodes(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """``pytest --toolreplay-report DIR``: without an eval file, one question per test, its
    expectations from ``@pytest.mark.toolreplay_expect``, repeats as trials; with
    ``--toolreplay-eval``, the eval file's judging, the same episodes ``toolreplay run``
    reports. Nothing is written beside the cassettes."""
    pytest.importorskip("pydantic_ai")
    before = _files(EXAMPLE)
    out = tmp_path / "session"
    result = pytester.runpytest(
        str(EXAMPLE), "--record-mode=none", "--block-network", "-p", "no:cacheprovider",
        "--toolreplay-report", str(out),
    )  # fmt: skip
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(
        ["toolreplay: 4 of 4 episodes passed in trial 1; 11 of 12 over every trial; wrote *"]
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    levels = next(e for e in results["episodes"] if e["question_id"] == "test_stock_levels")
    assert [x["kind"] for x in levels["expectations"]] == ["tool_called", "answer_contains"]
    per_q = {q["question_id"]: q for q in results["configurations"][0]["questions"]}
    assert (per_q["test_stock_levels"]["trials"], per_q["test_stock_levels"]["passes"]) == (3, 2)
    assert (out / "index.html").is_file()

    judged = tmp_path / "judged"
    result = pytester.runpytest(
        str(EXAMPLE), "--record-mode=none", "-p", "no:cacheprovider",
        "--toolreplay-report", str(judged), "--toolreplay-eval", str(EXAMPLE / "eval.yaml"),
    )  # fmt: skip
    result.assert_outcomes(passed=12)
    mine = json.loads((judged / "results.json").read_text(encoding="utf-8"))
    committed = json.loads((REPORT / "results.json").read_text(encoding="utf-8"))
    # where an episode came from is named from each run's working folder (the session's node
    # ids, toolreplay run's paths): the same episodes otherwise
    origin = ("test_id", "cassette")
    assert mine["episodes"][0]["test_id"].endswith("test_agent.py::test_stock_levels[1]")
    cassette = mine["episodes"][0]["cassette"]
    assert cassette.endswith("cassettes/test_agent/test_stock_levels[1].yaml")
    assert [{k: v for k, v in e.items() if k not in origin} for e in mine["episodes"]] == [
        {k: v for k, v in e.items() if k not in origin} for e in committed["episodes"]
    ]
    assert mine["configurations"] == committed["configurations"]
    assert _files(EXAMPLE) == before


def test_two_test_modules_are_two_configurations_checked_for_parity(
    copied: Path, tmp_path: Path
) -> None:
    """Each test module's folder is a configuration; arm parity compares what the declared
    arms sent."""
    cassettes = copied / "cassettes"
    shutil.copytree(cassettes / "test_agent", cassettes / "test_agent_v2")
    eval_file = copied / "eval.yaml"  # the two modules are arms of one comparison
    text = eval_file.read_text(encoding="utf-8")
    arms = "cassettes: cassettes\narms: [test_agent, test_agent_v2]"
    eval_file.write_text(text.replace("cassettes: cassettes", arms, 1), encoding="utf-8")
    same = tmp_path / "same"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(same))
    assert result.exit_code == 0, result.output
    results = json.loads((same / "results.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in results["configurations"]] == ["test_agent", "test_agent_v2"]
    parity = next(c for c in results["fidelity"]["checks"] if c["name"] == "arm_parity")
    assert parity["passed"] is True
    for cassette in (cassettes / "test_agent_v2").iterdir():
        text = cassette.read_text(encoding="utf-8")
        cassette.write_text(text.replace("model: stock-demo", "model: stock-demo-2"), "utf-8")
    (cassettes / "manifest.json").unlink()
    other = tmp_path / "other"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(other))
    assert result.exit_code == 1
    results = json.loads((other / "results.json").read_text(encoding="utf-8"))
    parity = next(c for c in results["fidelity"]["checks"] if c["name"] == "arm_parity")
    assert parity["passed"] is False
    assert parity["explanation"].startswith("the configurations differ in model")


def test_the_streamed_example_rerecords_to_the_same_interactions(
    pytester: pytest.Pytester, loopback: None
) -> None:
    """Re-recorded, the streamed example's cassettes hold the same interactions in the same
    order (the request's keys are in the order the installed openai SDK sends them, which
    differs between 2.x and 3.x: compared as data, not bytes)."""
    copy = pytester.path / "streamed_loop"
    shutil.copytree(STREAMED, copy, ignore=shutil.ignore_patterns("__pycache__", "report"))
    (copy / "cassettes" / "manifest.json").unlink()
    for cassette in (copy / "cassettes" / "test_orders").iterdir():
        cassette.write_text("not a cassette", encoding="utf-8")  # rewrite must not read these
    result = pytester.runpytest(str(copy), "--record-mode=rewrite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    for committed in (STREAMED / "cassettes" / "test_orders").iterdir():
        fresh = copy / "cassettes" / "test_orders" / committed.name
        assert _interactions(fresh) == _interactions(committed), committed.name


def test_a_truncated_cassette_is_not_said_to_match_the_manifest(
    copied: Path, tmp_path: Path
) -> None:
    """A cassette cut short after the manifest was written yields no episode; completeness
    names it as changed, and never says every cassette matches."""
    first = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(tmp_path / "a"))
    assert first.exit_code == 0, first.output
    cassette = copied / "cassettes" / "test_agent" / "test_price[1].yaml"
    cassette.write_bytes(cassette.read_bytes()[:3000])
    out = tmp_path / "b"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(out))
    assert result.exit_code == 1, result.output
    checks = json.loads((out / "results.json").read_text(encoding="utf-8"))["fidelity"]
    completeness = next(c for c in checks["checks"] if c["name"] == "completeness")
    assert completeness["passed"] is False
    evidence = "\n".join(completeness["evidence"])
    assert "sha256 matches" not in evidence
    assert "test_agent/test_price[1].yaml: changed since the manifest was written" in evidence


def test_run_audit_on_a_folder_without_manifest_does_not_crash(copied: Path) -> None:
    from toolreplay.audit.run import run_audit
    from toolreplay.evals import load_eval
    from toolreplay.judging.verdicts import FULL_JUDGE

    before = _files(copied)
    audit = run_audit(copied / "cassettes", load_eval(copied / "eval.yaml"), FULL_JUDGE)
    assert _files(copied) == before  # the audit reads; it writes no manifest
    states = {c.name: (c.applicable, c.passed) for c in audit.checks}
    assert states == {
        "baseline_heuristics": (False, False),
        "baseline_properties": (False, False),
        "ablation": (False, False),
        "judge_breadth": (True, True),
        "near_miss": (False, False),
        "arm_parity": (False, False),
        "completeness": (True, True),
    }
    completeness = audit.check("completeness")
    assert any(
        "manifest.json missing: cassette edits cannot be told" in e for e in completeness.evidence
    )
    assert audit.passed  # no applicable check failed; the others are not counted as passes
    assert sum(1 for c in audit.checks if c.applicable and c.passed) == 2
    run = _run("audit", "--eval", str(copied / "eval.yaml"))
    assert run.exit_code == 0, run.output
    assert "N/A  baseline_heuristics: not applicable" in run.output


def _interactions(path: Path, *, usage: bool = True) -> list[str]:
    import yaml

    def canonical(value: Any) -> Any:  # JSON held in a string (tool-call arguments) as data
        if isinstance(value, dict):
            return {k: canonical(v) for k, v in value.items() if usage or k != "usage"}
        if isinstance(value, list):
            return [canonical(v) for v in value]
        if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
            try:
                return canonical(json.loads(value))
            except ValueError:
                return value
        return value

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        json.dumps(canonical(i), sort_keys=True, ensure_ascii=False) for i in data["interactions"]
    ]


def test_the_pydantic_ai_example_rerecords_under_vcrpy(
    pytester: pytest.Pytester, loopback: None
) -> None:
    """pydantic-ai's async client (httpx.AsyncClient) records under vcrpy through the plugin,
    against the scripted model and the inventory API on loopback; the fresh cassettes hold
    the committed interactions (the two parallel lookups' HTTP requests may come in either
    order: pydantic-ai runs them concurrently) and replay with the network blocked."""
    pytest.importorskip("pydantic_ai")
    copy = pytester.path / "stock_agent"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__", "report"))
    result = pytester.runpytest(str(copy), "--record-mode=rewrite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=12)
    for committed in (EXAMPLE / "cassettes" / "test_agent").iterdir():
        fresh = copy / "cassettes" / "test_agent" / committed.name
        # pydantic-ai versions serialise the arguments they send back differently, and the
        # scripted model counts prompt tokens by size: compared as data, usage aside
        assert sorted(_interactions(fresh, usage=False)) == sorted(
            _interactions(committed, usage=False)
        ), committed.name
    result = pytester.runpytest(
        str(copy), "--record-mode=none", "--block-network", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=12)


def test_a_selection_narrows_the_results(tmp_path: Path) -> None:
    out = tmp_path / "sel"
    result = _run(
        "run", "--eval", "examples/stock_agent/eval.yaml", "--questions", "price,unknown-sku",
        "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [e["question_id"] for e in results["episodes"]] == ["price", "unknown-sku"]
    assert results["selection"]["all_questions"] is False
    bad = _run("run", "--eval", "examples/stock_agent/eval.yaml", "--questions", "nope",
               "--out", str(out))  # fmt: skip
    assert bad.exit_code == 2
    assert "--questions: unknown nope" in bad.output


def test_diff_compares_two_plugin_recorded_folders(copied: Path, tmp_path: Path) -> None:
    """``toolreplay diff A B --eval EVAL`` on two folders of cassettes: their episodes read and
    judged, nothing written in them."""
    other = tmp_path / "other"
    shutil.copytree(copied / "cassettes", other)
    cassette = other / "test_agent" / "test_price[1].yaml"
    text = cassette.read_text(encoding="utf-8")
    cassette.write_text(text.replace("ABC-1 costs €19.90.", "ABC-1 costs €18.90."), "utf-8")
    before = _files(copied) | {f"other/{f}" for f in _files(other)}
    result = _run(
        "diff", str(copied / "cassettes"), str(other), "--eval", str(copied / "eval.yaml")
    )
    assert result.exit_code == 1, result.output
    assert "FLIP test_agent/price: pass → fail" in result.output
    assert _files(copied) | {f"other/{f}" for f in _files(other)} == before


def test_a_folder_that_cannot_be_written_is_judged_without_a_manifest(
    copied: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolreplay.runs.suite_folder as suite_folder

    def refuse(folder: Path, manifest: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(suite_folder, "write_manifest", refuse)
    out = tmp_path / "out"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert not (copied / "cassettes" / "manifest.json").exists()
    assert "provenance pytest" not in result.output.split("fidelity")[0]
    checks = json.loads((out / "results.json").read_text(encoding="utf-8"))["fidelity"]["checks"]
    completeness = next(c for c in checks if c["name"] == "completeness")
    assert any("manifest.json missing" in e for e in completeness["evidence"])


def test_the_audit_table_counts_each_module_over_its_own_questions(
    copied: Path, tmp_path: Path
) -> None:
    """Two test modules that ask different questions: the audit's table of the episodes read
    agrees with the scorecard (of 2, not of 4 with 2 'missing')."""
    cassettes = copied / "cassettes"
    other = cassettes / "test_other"
    other.mkdir()
    for cassette in (cassettes / "test_agent").glob("test_price*"):
        cassette.rename(other / cassette.name)
    for cassette in (cassettes / "test_agent").glob("test_unknown_sku*"):
        cassette.rename(other / cassette.name)
    out = tmp_path / "out"
    result = _run("run", "--eval", str(copied / "eval.yaml"), "--out", str(out))
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    scorecard = {c["name"]: (c["passed"], c["total"]) for c in results["configurations"]}
    assert [total for _, total in scorecard.values()] == [2, 2], result.output
    rows = results["fidelity"]["tables"]["faithful"]["rows"]
    table = {r["name"]: (r["passed"], r["total"]) for r in rows}
    assert table == scorecard and all(r["missing"] == 0 for r in rows)
