from __future__ import annotations

import pytest

from toolreplay.evals import EvalFileError, load_eval
from toolreplay.study.weather.hints import hints_of


def test_weather_eval_has_the_four_study_questions(suite):
    assert [q.id for q in suite.questions] == ["ningde", "beijing", "hottest", "shanghai-rain"]
    assert suite.question("shanghai-rain").measure == "precipitation"
    assert suite.question("shanghai-rain").day_index == 1
    assert [p.region for p in suite.question("hottest").places] == ["北京市", "上海市", "广东省"]
    assert "2026-01-01" in suite.system_prompt("2026-01-01")
    assert suite.experiment.ablations == ("admin_seat", "population_order", "shi_retry")


def test_unknown_question_id_lists_known_ids(suite):
    with pytest.raises(KeyError, match="known: ningde, beijing"):
        suite.question("nope")


HEAD = "version: 1\nname: x\nsystem_prompt: s\nquestions:\n"
Q = " - {{id: {id}, text: {text}, measure: {measure}, places: [{{query: q, region: r}}]}}\n"


def _many(tmp_path, n, *, repeat=()):
    path = tmp_path / "many.yaml"
    ids = [f"q{i}" for i in range(n)] + list(repeat)
    path.write_text(
        HEAD
        + "".join(Q.format(id=i, text=f"t{k}", measure="temperature") for k, i in enumerate(ids)),
        encoding="utf-8",
    )
    return path


def test_a_large_eval_file_answers_lookups_by_id_and_text_and_pickles(tmp_path):
    import pickle

    suite = load_eval(_many(tmp_path, 3000))
    assert suite.question("q2999") is suite.questions[-1]
    assert suite.question_for_text("t1500") is suite.questions[1500]
    assert suite.question_for_text("absent") is None
    assert suite.measures["q7"] == "temperature" and suite.by_id["q7"] is suite.questions[7]
    shipped = pickle.loads(pickle.dumps(suite))  # as a worker gets it
    assert shipped == suite and shipped.question("q2999") == suite.questions[-1]
    with pytest.raises(KeyError) as missing:
        suite.question("nope")
    # the known ids are named up to a point, then counted: not 3,000 of them in one line
    assert "known: q0, q1, q2" in str(missing.value) and "… 2980 more" in str(missing.value)


def test_repeated_question_ids_are_named_once_each_in_a_large_file(tmp_path):
    with pytest.raises(EvalFileError, match="duplicate question ids: q10, q2000"):
        load_eval(_many(tmp_path, 2500, repeat=("q2000", "q10", "q2000")))


@pytest.mark.parametrize(
    "text, needle",
    [
        ("version: 1\nname: x\n", "system_prompt"),
        (
            HEAD + Q.format(id="a", text="t", measure="humidity"),
            "measure",
        ),
        (
            HEAD
            + Q.format(id="a", text="t", measure="temperature")
            + Q.format(id="a", text="u", measure="temperature"),
            "duplicate question ids: a",
        ),
        (": : :", "not valid YAML"),
    ],
)
def test_bad_eval_files_name_the_problem(tmp_path, text, needle):
    path = tmp_path / "e.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvalFileError, match=needle):
        load_eval(path)


def test_missing_eval_file(tmp_path):
    with pytest.raises(EvalFileError, match="not found"):
        load_eval(tmp_path / "none.yaml")


@pytest.mark.parametrize(
    "experiment, needle",
    [
        ("{hosts: [single, single]}", "listed more than once: single"),
        ("{hosts: []}", "experiment.hosts"),
        ("{sampling: {temperature: .nan}}", "experiment.sampling.temperature"),
        ("{max_rounds: 1}", "experiment.max_rounds"),
        ("{repeat_window: 0}", "experiment.repeat_window"),
    ],
)
def test_bad_experiment_settings_are_named(tmp_path, experiment, needle):
    path = tmp_path / "e.yaml"
    path.write_text(
        HEAD.replace("questions:\n", f"experiment: {experiment}\nquestions:\n")
        + Q.format(id="a", text="t", measure="temperature"),
        encoding="utf-8",
    )
    with pytest.raises(EvalFileError, match=needle):
        load_eval(path)


def test_repeat_window_comes_from_the_eval_file(tmp_path, suite):
    assert suite.experiment.repeat_window == 2  # evals/weather.yaml sets it
    path = tmp_path / "e.yaml"
    path.write_text(
        HEAD.replace("questions:\n", "experiment: {repeat_window: 4}\nquestions:\n")
        + Q.format(id="a", text="t", measure="temperature"),
        encoding="utf-8",
    )
    assert load_eval(path).experiment.repeat_window == 4


@pytest.mark.parametrize(
    "question, needle",
    [
        (" - {id: a, text: t, measure: temperature}\n", "needs at least one place"),
        (
            " - {id: a, text: t, measure: wind, places: [{query: q, region: null}]}\n",
            "unknown place",
        ),
        (
            " - {id: a, text: t, measure: wind, places: [{query: q, region: r}],"
            " standin: {variation: {split_parallel: 1.5}}}\n",
            "split_parallel",
        ),
    ],
)
def test_places_and_variation_are_checked(tmp_path, question, needle):
    path = tmp_path / "e.yaml"
    path.write_text(HEAD + question, encoding="utf-8")
    with pytest.raises(EvalFileError, match=needle):
        load_eval(path)


def test_variation_retries_and_none_measure_load(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(
        HEAD
        + " - {id: a, text: t, measure: none}\n"
        + " - {id: b, text: u, measure: wind, places: [{query: 通州, region: r},"
        " {query: x, region: r}, {query: y, region: r}],"
        " standin: {variation: {narrate: 0.5, wrong_pick: 0.25},"
        " retries: {通州: [通州区], x: []}}}\n",
        encoding="utf-8",
    )
    suite = load_eval(path)
    assert suite.question("a").places == ()
    b = suite.question("b")
    hints = hints_of(b)  # the weather study's block, parsed by the study
    assert [hints.queries(p.query) for p in b.places] == [("通州", "通州区"), ("x",), ("y", "y市")]
    v = hints.variation
    assert (v.narrate, v.wrong_pick, v.rephrase) == (0.5, 0.25, 0.0)
    assert dict(b.hints) == {"narrates_followups": False}  # what a set's fingerprint keeps


def test_the_engines_eval_schema_holds_no_weather() -> None:
    """The eval package's code (docstrings aside) names nothing of the weather study: no
    stand-in hints or variations, no 市 retry, no day words, no Open-Meteo field. Those are the
    study's block of a question and its vocabulary's."""
    import ast
    from pathlib import Path

    import toolreplay.evals as package

    forbidden = ("standin", "narrat", "variation", "retries", "市", "tomorrow", "admin1", "meteo")
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        names = [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
                 if isinstance(n, ast.Name | ast.Attribute)]  # fmt: skip
        texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                 and isinstance(n.value, str) and id(n) not in docstrings]  # fmt: skip
        words = [*names, *texts]
        assert words, path.name
        found = sorted({w for w in words for f in forbidden if f in w.lower()})
        assert found == [], f"{path.name}: {found}"
