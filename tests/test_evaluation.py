"""One evaluation pipeline over two episode sources (``toolreplay.evaluation``): a recorded set
replayed through the hosts and a test suite's cassettes read from the wire go through the same
``evaluate``; each episode is assessed once and every consumer reads that assessment (one pass
rule); a test suite's audit is scoped to what the eval file declares and to the selection."""

from __future__ import annotations

import dataclasses
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.evals import Question
from toolreplay.evaluation import (
    ReplayedSet,
    Selection,
    SelectionError,
    SuiteCassettes,
    evaluate,
    suite_from_tests,
)
from toolreplay.evaluation.wire import test_question
from toolreplay.judging.assessment import FAILING_MODES, assess

from .stock_domain import episode

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "stock_agent"
FOREIGN = Path(__file__).parent / "data" / "foreign"


def _question(measure: str = "none") -> Question:
    return Question(
        id="q", text="How many ABC-1?", measure=measure, places=(), day_index=0,
    )  # fmt: skip


# ---- assessed once, one pass rule ----------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "passed", "modes"),
    [
        ("ABC-1: 12 units on hand.", True, []),
        ("Let me check the stock and get back to you shortly.", False, ["unfulfilled_promise"]),
        ("I'll look that up now.", False, ["unfulfilled_promise"]),
    ],
)
def test_a_failure_mode_fails_an_episode_whatever_its_verdict(
    answer: str, passed: bool, modes: list[str]
) -> None:
    """A question that measures nothing (a test without an eval file) passes any answer by
    its verdict; a promise or an empty answer still fails it."""
    assessment = assess(episode([], answer), _question())
    assert assessment.verdict.passed
    assert (assessment.passed, assessment.modes) == (passed, modes)


def test_an_empty_answer_fails_by_verdict_and_label() -> None:
    assessment = assess(episode([], ""), _question())
    assert (assessment.verdict.passed, assessment.passed) == (False, False)
    assert assessment.modes == ["empty_answer"]


def test_the_failing_modes_are_failure_modes() -> None:
    from toolreplay.judging.failures import FAILURE_MODES

    assert set(FAILING_MODES) <= set(FAILURE_MODES)
    assert "no_measurement" not in FAILING_MODES  # the verdict's own reason


def test_results_trials_and_audit_read_one_assessment_per_episode(monkeypatch) -> None:
    """Each trial-1 episode of the reference set is assessed once for the run: the results,
    the pass^k outcomes and the audit's faithful table read that assessment (the audit judges
    its own extra episodes, ablations and the narrow judge's, separately), assessed where the
    episode was replayed (tests/test_judge_once.py: with workers too)."""
    import toolreplay.judging.assessment as replayed  # a replay worker's assess, looked up there
    from toolreplay.evals import load_eval

    calls: list[tuple[str, str]] = []
    real = replayed.assess

    def counting(ep: Any, question: Any, judge: Any) -> Any:
        calls.append((ep.configuration, ep.question_id))
        return real(ep, question, judge)

    monkeypatch.setattr(replayed, "assess", counting)
    suite = load_eval(REPO / "evals" / "weather.yaml")
    source = ReplayedSet(REPO / "cassettes" / "reference", trials=1, audit=False)
    evaluation = evaluate(source, suite)
    assert len(calls) == len(set(calls)) == 16
    passed = {(e.configuration, e.question_id): e.passed
              for e in evaluation.results.episodes}  # fmt: skip
    outcomes = {(o.configuration, o.question_id): o.passed
                for o in evaluation.results.trial_outcomes or ()}  # fmt: skip
    assert passed == outcomes
    assert [c.passed for c in evaluation.results.configurations] == [4, 4, 0, 4]


def test_an_unknown_selection_is_a_selection_error() -> None:
    from toolreplay.evals import load_eval

    suite = load_eval(REPO / "evals" / "weather.yaml")
    reference = ReplayedSet(REPO / "cassettes" / "reference")
    with pytest.raises(SelectionError, match=r"^--questions: unknown nope"):
        evaluate(reference, suite, Selection(questions=("nope",)))


# ---- a test suite without an eval file -----------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "question"),
    [
        ("test_x", "test_x"),
        ("test_x[3]", "test_x"),
        ("test_x[12]", "test_x"),
        ("test_x[paris]", "test_x[paris]"),
        ("test_x[paris-2]", "test_x[paris]"),
        ("test_x[2-paris]", "test_x[paris]"),
        ("test_x[paris-2-rome]", "test_x[paris-rome]"),
        ("test_x[v1.2]", "test_x[v1.2]"),
        # a run of numbers is a name (a model's), not a repeat (Mirascope's, ldp's test ids)
        ("test_x[claude-haiku-4-5-20251001]", "test_x[claude-haiku-4-5-20251001]"),
        ("test_x[claude-3-7-sonnet-20250219]", "test_x[claude-3-7-sonnet-20250219]"),
        ("test_x[claude-sonnet-4-0]", "test_x[claude-sonnet-4-0]"),
        ("test_x[text-embedding-3-large-32-256]", "test_x[text-embedding-large-32-256]"),
        ("test_x[model-20251001]", "test_x[model-20251001]"),
        ("test_x[o1-2024-12-17-3]", "test_x[o1-2024-12-17-3]"),
        ("test_x[claude-haiku-4-5-20251001-2]", "test_x[claude-haiku-4-5-20251001]"),
    ],
)
def test_each_test_id_is_a_question_and_numbered_repeats_its_trials(
    stem: str, question: str
) -> None:
    assert test_question(stem) == question


def test_a_suite_from_tests_maps_every_cassette(tmp_path: Path) -> None:
    folder = EXAMPLE / "cassettes" / "test_agent"
    suite = suite_from_tests(sorted(folder.glob("*.yaml")), {"test_price": [{"max_rounds": 1}]})
    ids = [q.id for q in suite.questions]
    assert ids == ["test_price", "test_stock_and_price", "test_stock_levels", "test_unknown_sku"]
    price = suite.question("test_price")
    assert price.tests == ("test_price[1]", "test_price[2]", "test_price[3]")
    assert price.text == "What does ABC-1 cost?"
    assert [e.kind for e in price.expect] == ["max_rounds"]


def test_without_an_eval_file_an_answer_stating_values_passes(tmp_path: Path) -> None:
    """A test's question declares no measure (``any``): crewAI's Anthropic streaming test
    (crewAIInc/crewAI lib/crewai/tests/cassettes/llms/TestAnthropicToolCallStreaming.
    test_anthropic_streaming_emits_tool_call_events.yaml) answers "72°F" from its tool's
    "72°F"; it passes, where a ``none`` question (nothing to measure) fails it."""
    from toolreplay.cassettes import load_recorded
    from toolreplay.evals import ANY_MEASURE
    from toolreplay.wire.reader import read_wire_episodes

    cassette = tmp_path / "test_stream.yaml"
    shutil.copy(FOREIGN / "crewai-anthropic-stream-72f.yaml", cassette)
    [question] = suite_from_tests([cassette]).questions
    assert question.measure == ANY_MEASURE
    [record] = read_wire_episodes(load_recorded(cassette))
    assert "72°F" in record.episode.answer
    judged = assess(record.episode, question)
    assert judged.verdict.passed and judged.failure_modes == (), judged.verdict.explanation
    strict = assess(record.episode, dataclasses.replace(question, measure="none"))
    assert not strict.verdict.passed and "nothing to measure" in strict.verdict.explanation
    fabricated = dataclasses.replace(
        record.episode, answer=record.episode.answer.replace("72°F", "91°F")
    )
    assert [m.mode for m in assess(fabricated, question).failure_modes] == ["fabricated_value"]


@pytest.mark.slow
def test_run_on_a_test_suite_folder_needs_no_eval_file(tmp_path: Path, monkeypatch) -> None:
    """``toolreplay run --cassettes DIR`` in a folder without ``evals/weather.yaml``: each
    test a question, its numbered repeats the trials."""
    shutil.copytree(EXAMPLE / "cassettes", tmp_path / "cassettes")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "--cassettes", "cassettes", "--out", "out"])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [e["question_id"] for e in results["episodes"]] == [
        "test_price", "test_stock_and_price", "test_stock_levels", "test_unknown_sku",
    ]  # fmt: skip
    assert results["trials"] == 3
    assert not (tmp_path / "evals").exists()


@pytest.mark.slow
def test_a_manifest_a_run_wrote_never_makes_a_later_report_refuse_the_folder(
    tmp_path: Path, monkeypatch
) -> None:
    """``toolreplay run`` writes the folder's manifest (keyed by the questions of the eval it
    ran with); a later session reporting with another eval file, after a test was recorded
    into the folder and another removed, reads the folder: the completeness check names what
    changed, the run is not refused."""
    folder = tmp_path / "cassettes"
    shutil.copytree(EXAMPLE / "cassettes", folder)
    (folder / "manifest.json").unlink()
    monkeypatch.chdir(tmp_path)
    first = CliRunner().invoke(app, ["run", "--cassettes", "cassettes", "--out", "out"])
    assert first.exit_code == 0, first.output
    assert (folder / "manifest.json").is_file()
    module = folder / "test_agent"
    shutil.copy(module / "test_price[1].yaml", module / "test_price[4].yaml")
    (module / "test_unknown_sku[3].yaml").unlink()
    from toolreplay.evals import load_eval

    suite = load_eval(EXAMPLE / "eval.yaml")
    cassettes = [("test_agent", p) for p in sorted(module.glob("*.yaml"))]
    evaluation = evaluate(SuiteCassettes(folder, cassettes, write_manifest=False), suite)
    completeness = evaluation.audit.check("completeness")
    evidence = " ".join(completeness.evidence)
    assert "test_price[4].yaml: not in the manifest" in evidence
    assert "test_unknown_sku[3].yaml: in the manifest, no longer in the folder" in evidence
    assert "stock-levels (test_agent/test_stock_levels[1].yaml" not in evidence  # unchanged
    # and the CLI still reads a test module's folder that holds its own manifest
    second = CliRunner().invoke(app, ["run", "--cassettes", "cassettes/test_agent", "--out", "o2"])
    third = CliRunner().invoke(app, ["run", "--cassettes", "cassettes", "--out", "o3"])
    assert "eval file not found" not in second.output + third.output


_PROMISE_TESTS = """
import httpx
import openai
import pytest


def script(body):
    text = body["messages"][-1]["content"]
    if text.startswith("promise"):
        return {"content": "Let me check the stock and get back to you shortly."}
    return {"content": "ABC-1: 12 units on hand."}


@pytest.fixture
def model(record_mode, toolreplay_chat_server):
    if record_mode != "none":
        toolreplay_chat_server(script, model="promise-demo")


@pytest.fixture
def client(model, toolreplay_model_settings):
    s = toolreplay_model_settings
    http = httpx.Client(trust_env=False)
    return openai.OpenAI(base_url=s.base_url, api_key=s.api_key or "-", http_client=http), s.model


@pytest.mark.vcr
@pytest.mark.parametrize("kind", ["promise", "answer"])
@pytest.mark.parametrize("trial", [1, 2])
def test_ask(client, kind, trial):
    c, name = client
    r = c.chat.completions.create(
        model=name, messages=[{"role": "user", "content": f"{kind}: how many ABC-1?"}]
    )
    assert r.choices[0].message.content
"""


@pytest.mark.slow
def test_pytest_report_without_eval_fails_an_unfulfilled_promise(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """``pytest --toolreplay-report`` without an eval file: each test id a question (its
    parametrisation included), its numbered repeats the trials, and an episode whose answer is
    a promise is not counted as passed."""
    pytester.makepyfile(test_promise=textwrap.dedent(_PROMISE_TESTS))
    pytester.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    recorded = pytester.runpytest("--record-mode=rewrite", "-p", "no:cacheprovider")
    recorded.assert_outcomes(passed=4)
    out = tmp_path / "report"
    replayed = pytester.runpytest(
        "--record-mode=none", "--block-network", "-p", "no:cacheprovider",
        "--toolreplay-report", str(out),
    )  # fmt: skip
    replayed.assert_outcomes(passed=4)
    replayed.stdout.fnmatch_lines(["toolreplay: 1 of 2 episodes passed in trial 1*"])
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    by_q = {e["question_id"]: e for e in results["episodes"]}
    assert set(by_q) == {"test_ask[promise]", "test_ask[answer]"}
    assert by_q["test_ask[answer]"]["passed"] is True
    promise = by_q["test_ask[promise]"]
    assert promise["passed"] is False
    assert [f["mode"] for f in promise["failure_modes"]] == ["unfulfilled_promise"]
    assert results["trials"] == 2


# ---- a test suite's audit: scoped to the eval file and the selection ----------------------


def _two_modules(tmp_path: Path, *, edit_schema: bool) -> Path:
    """The example's cassettes as two test modules (two frameworks, say); with
    ``edit_schema``, the second sends another description of check_stock's ``sku``."""
    folder = tmp_path / "cassettes"
    shutil.copytree(EXAMPLE / "cassettes", folder)
    (folder / "manifest.json").unlink()
    shutil.copytree(folder / "test_agent", folder / "test_agent_v2")
    if edit_schema:
        for cassette in (folder / "test_agent_v2").iterdir():
            text = cassette.read_text(encoding="utf-8")
            assert "The stock-keeping unit" in text or "sku" in text
            cassette.write_text(text.replace("check_stock", "check_stock_v2"), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_mixed_suite_without_declared_arms_passes_its_audit(tmp_path: Path) -> None:
    """Two modules that send different tools (two agents, not two arms of one comparison):
    arm parity is not applicable, and the audit passes."""
    from toolreplay.evals import load_eval

    folder = _two_modules(tmp_path, edit_schema=True)
    suite = load_eval(EXAMPLE / "eval.yaml")
    evaluation = evaluate(SuiteCassettes(folder), suite)
    parity = evaluation.audit.check("arm_parity")
    assert not parity.applicable and "none declared an arm" in parity.explanation
    assert evaluation.audit.passed


@pytest.mark.slow
def test_declared_arms_that_differ_show_the_difference_never_cut(tmp_path: Path) -> None:
    from toolreplay.evals import load_eval

    folder = _two_modules(tmp_path, edit_schema=True)
    suite = load_eval(EXAMPLE / "eval.yaml")
    source = SuiteCassettes(folder, arms=("test_agent", "test_agent_v2"))
    evaluation = evaluate(source, suite)
    parity = evaluation.audit.check("arm_parity")
    assert parity.applicable and not parity.passed
    assert parity.explanation.startswith("the configurations differ in tool schemas")
    lines = [line for line in parity.evidence if line.startswith("test_agent_v2:")]
    assert "test_agent_v2: tool check_stock not sent (test_agent sends it)" in lines
    assert "test_agent_v2: sends tool check_stock_v2, which test_agent does not" in lines
    for line in parity.evidence:  # whole JSON values: every quote and bracket closed
        assert line.count('"') % 2 == 0, line
    same = evaluate(SuiteCassettes(_two_modules(tmp_path / "b", edit_schema=False),
                                   arms=("test_agent", "test_agent_v2")), suite)  # fmt: skip
    assert same.audit.check("arm_parity").passed


@pytest.mark.slow
def test_the_selection_narrows_a_test_suites_audit(tmp_path: Path) -> None:
    """``--configurations``/``--questions`` narrow the audit as they narrow the run: a module
    missing a question is not held against a selection that leaves it out."""
    from toolreplay.evals import load_eval

    folder = _two_modules(tmp_path, edit_schema=False)
    for cassette in (folder / "test_agent_v2").glob("test_price*.yaml"):
        cassette.unlink()
    suite = load_eval(EXAMPLE / "eval.yaml")
    arms = ("test_agent", "test_agent_v2")
    whole = evaluate(SuiteCassettes(folder, arms=arms), suite)
    assert not whole.audit.check("completeness").passed
    assert "no episode for test_agent_v2/price" in whole.audit.check("completeness").evidence
    narrowed = evaluate(
        SuiteCassettes(folder, arms=arms), suite, Selection(questions=("stock-levels",))
    )
    assert narrowed.audit.check("completeness").passed
    one = evaluate(SuiteCassettes(folder, arms=arms), suite, Selection(("test_agent",)))
    assert one.audit.check("completeness").passed
    assert not one.audit.check("arm_parity").applicable


@pytest.mark.slow
def test_arms_are_declared_in_the_eval_file(tmp_path: Path) -> None:
    """``arms:`` in the eval file names the modules arm parity compares; one arm, or an arm
    named twice, is refused in one line."""
    from toolreplay.evals import EvalFileError, load_eval

    folder = _two_modules(tmp_path, edit_schema=True)
    text = (EXAMPLE / "eval.yaml").read_text(encoding="utf-8")
    declared = tmp_path / "eval.yaml"
    declared.write_text(
        text.replace(
            "cassettes: cassettes", "cassettes: cassettes\narms: [test_agent, test_agent_v2]", 1
        ),
        encoding="utf-8",
    )
    suite = load_eval(declared)
    assert suite.arms == ("test_agent", "test_agent_v2")
    parity = evaluate(SuiteCassettes(folder), suite).audit.check("arm_parity")
    assert parity.applicable and not parity.passed
    for bad, said in (("[test_agent]", "one arm compares nothing"),
                      ("[a, a]", "an arm named twice: a")):  # fmt: skip
        declared.write_text(text.replace("cassettes: cassettes", f"arms: {bad}", 1), "utf-8")
        with pytest.raises(EvalFileError, match=said):
            load_eval(declared)


# ---- faults a user met, each a test -------------------------------------------------------


def _run_cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.mark.slow
def test_an_explicit_cassettes_folder_is_read_even_when_named_like_the_default(
    tmp_path: Path, monkeypatch
) -> None:
    """``--cassettes cassettes`` given with an eval file naming its own folder: the folder
    given is read, not the eval file's."""
    shutil.copytree(EXAMPLE / "cassettes", tmp_path / "cassettes")
    for cassette in (tmp_path / "cassettes" / "test_agent").glob("test_price*.yaml"):
        cassette.unlink()
    monkeypatch.chdir(tmp_path)
    result = _run_cli("run", "--eval", str(EXAMPLE / "eval.yaml"), "--cassettes", "cassettes",
                      "--out", "out")  # fmt: skip
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert "price" not in {e["question_id"] for e in results["episodes"]}, result.output
    assert "no episode for price" in " ".join(
        next(c for c in results["fidelity"]["checks"] if c["name"] == "completeness")["evidence"]
    )


def test_test_ids_that_differ_only_in_case_or_script_are_two_questions(tmp_path: Path) -> None:
    source = EXAMPLE / "cassettes" / "test_agent"
    for name, copied in (("test_Q[Paris].yaml", "test_price[1].yaml"),
                         ("test_q[paris].yaml", "test_stock_levels[1].yaml"),
                         ("test_ü[x].yaml", "test_price[2].yaml"),
                         ("test_é[x].yaml", "test_price[3].yaml")):  # fmt: skip
        shutil.copy(source / copied, tmp_path / name)
    suite = suite_from_tests(sorted(tmp_path.glob("*.yaml")))
    assert sorted(q.id for q in suite.questions) == sorted(
        ["test_Q[Paris]", "test_q[paris]", "test_ü[x]", "test_é[x]"]
    )


@pytest.mark.slow
def test_diff_of_two_test_suite_folders_needs_no_eval_file(tmp_path: Path, monkeypatch) -> None:
    for name in ("a", "b"):
        shutil.copytree(EXAMPLE / "cassettes", tmp_path / name)
    monkeypatch.chdir(tmp_path)  # no evals/ here
    result = _run_cli("diff", "a", "b")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_an_arm_that_is_no_test_module_is_refused(tmp_path: Path) -> None:
    from toolreplay.evaluation import SourceError

    folder = _two_modules(tmp_path, edit_schema=False)
    from toolreplay.evals import load_eval

    suite = load_eval(EXAMPLE / "eval.yaml")
    with pytest.raises(SourceError, match="arms: test_nope is not a test module of"):
        evaluate(SuiteCassettes(folder, arms=("test_agent", "test_nope")), suite)


@pytest.mark.slow
def test_a_selection_narrows_the_unreadable_cassettes_too(tmp_path: Path) -> None:
    from toolreplay.evals import load_eval

    folder = _two_modules(tmp_path, edit_schema=False)
    (folder / "test_agent_v2" / "test_broken.yaml").write_text("not: [a cassette", "utf-8")
    suite = load_eval(EXAMPLE / "eval.yaml")
    whole = evaluate(SuiteCassettes(folder), suite)
    assert "not read: test_agent_v2/test_broken.yaml" in " ".join(
        whole.audit.check("completeness").evidence
    )
    one = evaluate(SuiteCassettes(folder), suite, Selection(("test_agent",)))
    assert one.audit.check("completeness").passed


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("missing", "does not exist: give --cassettes the folder holding the cassettes"),
        ("file", "is not a folder"),
        ("set", "is a cassette set itself; give the folder holding it: --cassettes"),
    ],
)
def test_a_cassettes_option_that_is_not_a_cassettes_folder_is_one_line(
    tmp_path: Path, where: str, said: str
) -> None:
    paths = {
        "missing": tmp_path / "nope",
        "file": EXAMPLE / "cassettes" / "test_agent" / "test_price[1].yaml",
        "set": REPO / "cassettes" / "reference",
    }
    result = _run_cli("run", "--cassettes", str(paths[where]), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_test_session_report_survives_a_broken_manifest(tmp_path: Path) -> None:
    """``pytest --toolreplay-report`` (a source that writes no manifest) judges the episodes
    of a folder whose manifest is unreadable, and completeness says so; ``run`` refuses it."""
    from toolreplay.evals import load_eval
    from toolreplay.evaluation import SourceError

    folder = tmp_path / "cassettes"
    shutil.copytree(EXAMPLE / "cassettes", folder)
    (folder / "manifest.json").write_text("{not json", encoding="utf-8")
    suite = load_eval(EXAMPLE / "eval.yaml")
    session = evaluate(SuiteCassettes(folder, write_manifest=False), suite)
    assert len(session.results.episodes) == 4
    completeness = session.audit.check("completeness")
    assert not completeness.passed
    assert "not read: manifest.json" in " ".join(completeness.evidence)
    with pytest.raises(SourceError, match="manifest"):
        evaluate(SuiteCassettes(folder), suite)


def test_stand_in_recording_refuses_live_only_tool_options(tmp_path: Path) -> None:
    for extra in (["--tool-url", "geocoding_url=http://x"], ["--tools", "fixture"]):
        result = _run_cli("record", "--model-source", "stand-in", *extra,
                          "--cassettes", str(tmp_path), "--set", "s")  # fmt: skip
        assert result.exit_code == 2
        assert "apply to --model-source live only" in " ".join(result.output.split())
    assert not any(tmp_path.iterdir())


_GEOCODING_ONLY = '''
import pytest
import requests


@pytest.mark.vcr
def test_lookup():
    r = requests.get(
        "http://127.0.0.1/v1/search?name=%E5%8C%97%E4%BA%AC&count=10&language=zh&format=json"
    )
    assert r.status_code == 200
'''


@pytest.mark.slow
def test_a_session_whose_cassettes_no_reader_understands_fails_loudly(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """``pytest --toolreplay-report`` on a session whose replayed cassettes hold no model
    exchange a reader understands: each named with the reason, no report, pytest exits
    non-zero (it used to print "0 of 0 episodes passed" and exit 0)."""
    import yaml

    recorded = yaml.safe_load(
        (REPO / "cassettes/reference/single+oneshot/beijing/trial-1.yaml").read_text("utf-8")
    )
    geocoding = [i for i in recorded["interactions"] if i["request"]["method"] == "GET"][:1]
    folder = pytester.path / "cassettes" / "test_lookup"
    folder.mkdir(parents=True)
    (folder / "test_lookup.yaml").write_text(
        yaml.safe_dump({"version": 1, "interactions": geocoding}, allow_unicode=True), "utf-8"
    )
    pytester.makepyfile(test_lookup=_GEOCODING_ONLY)
    pytester.makeini("[pytest]\ntoolreplay_cassettes = true\n")
    out = tmp_path / "report"
    result = pytester.runpytest(
        "--record-mode=none", "-p", "no:cacheprovider", "--toolreplay-report", str(out)
    )
    result.stdout.fnmatch_lines(
        [
            "*toolreplay: report not written: toolreplay: not read: test_lookup/test_lookup.yaml*",
            "*none of the 1 replayed cassette(s) could be read into an episode*",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not out.exists()


def test_a_mixed_set_is_not_labelled_streamed(tmp_path: Path) -> None:
    """The manifest of a test suite's folder says ``stream`` only when every episode's
    replies were streamed (a set where 1 of 4 streamed is not "streamed replies")."""
    from dataclasses import replace as copy

    from toolreplay.evals import load_eval
    from toolreplay.runs.suite_folder import build_manifest, read_suite_folder

    suite = load_eval(EXAMPLE / "eval.yaml")
    found = read_suite_folder(EXAMPLE / "cassettes", suite)
    assert not any(e.streamed for e in found.episodes)
    assert build_manifest(found, suite).settings == {}
    one = copy(found, episodes=(copy(found.episodes[0], streamed=True), *found.episodes[1:]))
    assert build_manifest(one, suite).settings == {}
    every = copy(found, episodes=tuple(copy(e, streamed=True) for e in found.episodes))
    assert build_manifest(every, suite).settings == {"stream": True}


def test_a_promise_to_a_question_that_measures_nothing_reads_plainly() -> None:
    [label] = assess(episode([], "Let me check and get back to you."), _question()).failure_modes
    assert label.mode == "unfulfilled_promise"
    assert "of none" not in label.explanation
    assert "holds no measured value, but the host has stopped" in label.explanation


def test_the_library_takes_paths_as_text(tmp_path: Path) -> None:
    """``SuiteCassettes`` and ``ReplayedSet`` take a folder as ``str`` too; the eval suite of
    a test suite's cassettes without an eval file is public (``toolreplay.suite_from_tests``)."""
    import toolreplay

    folder = str(EXAMPLE / "cassettes")
    suite = toolreplay.suite_from_tests(sorted(Path(folder).rglob("*.yaml")))
    evaluation = toolreplay.evaluate(toolreplay.SuiteCassettes(folder, write_manifest=False), suite)
    assert len(evaluation.results.episodes) == 4
    assert ReplayedSet(str(REPO / "cassettes" / "reference")).set_dir.is_dir()


def test_shown_path_with_kept_folders_is_shown_path(tmp_path: Path, monkeypatch) -> None:
    """A caller showing many paths keeps the folders' resolutions (``resolved_dirs``): the
    same text for each path as without, a path through a linked folder or that is itself a
    link included."""
    from toolreplay.evaluation.wire import shown_path

    real = tmp_path / "real"
    (real / "loop+atomic").mkdir(parents=True)
    (real / "loop+atomic" / "a.yaml").write_text("x", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("y", encoding="utf-8")
    (real / "loop+atomic" / "link.yaml").symlink_to(elsewhere)
    linked = tmp_path / "linked"
    linked.symlink_to(real, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    paths = [
        real / "loop+atomic" / "a.yaml",
        linked / "loop+atomic" / "a.yaml",
        real / "loop+atomic" / "link.yaml",
        real / "loop+atomic" / ".." / "loop+atomic" / "a.yaml",
    ]
    for cwd in (tmp_path, work):
        monkeypatch.chdir(cwd)
        for folder in (None, real, linked):
            kept: dict[str, Path] = {}
            for path in paths:
                assert shown_path(path, folder, kept) == shown_path(path, folder), (path, folder)
    assert shown_path(paths[2], real, {}) == "elsewhere.yaml"


@pytest.mark.parametrize("damage", ["{}", "truncated"])
def test_a_damaged_manifest_in_a_test_folder_says_so_not_that_the_folder_is_a_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """``--cassettes DIR`` whose manifest.json was damaged: its reading's message (and what
    to do: delete it for a folder tests recorded), never advice that leads back to it."""
    shutil.copytree(EXAMPLE / "cassettes", tmp_path / "cassettes")
    manifest = tmp_path / "cassettes" / "manifest.json"
    manifest.write_text("{}" if damage == "{}" else manifest.read_text("utf-8")[:200], "utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "--cassettes", "cassettes", "--out", "out"])
    assert result.exit_code == 1, result.output
    assert "is a cassette set itself" not in result.output
    assert "manifest.json" in result.output and "delete it" in result.output
    assert not (tmp_path / "out").exists()


def test_a_folder_without_any_cassette_is_named_not_taken_for_a_missing_eval_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty" / "module").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "--cassettes", "empty", "--out", "out"])
    assert result.exit_code == 1, result.output
    assert "no cassettes in empty" in result.output and "eval file" not in result.output
    assert not (tmp_path / "out").exists()
