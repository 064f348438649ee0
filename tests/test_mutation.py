"""``toolreplay mutate``: the catalogue makes the mutants it says (in memory, the cassettes
untouched), each rejudged by the one assessment path; a weak eval file (only ``stop_reason``)
scores low and the stock agent's own eval file high; the result is deterministic for a seed and
``--budget`` caps the mutants of an episode."""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.common import load_suite
from toolreplay.cli.main import app
from toolreplay.evaluation import SuiteCassettes, cassettes_folder
from toolreplay.judging.assessment import assess
from toolreplay.mutation.catalogue import GROUP_OF, Context, _prefix, cited, mutants
from toolreplay.mutation.run import EQUIVALENT, KILLED, MutationRun, Score, mutate
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult

REPO = Path(__file__).resolve().parents[1]
STOCK_EVAL = REPO / "examples" / "stock_agent" / "eval.yaml"
WEAK_EVAL = REPO / "tests" / "data" / "mutation" / "stock_weak.yaml"
runner = CliRunner()


def _run(eval_path: Path, **kw: object) -> MutationRun:
    suite = load_suite(eval_path)
    return mutate(SuiteCassettes(cassettes_folder(suite, None)), suite, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def strong() -> MutationRun:
    return _run(STOCK_EVAL)


@pytest.fixture(scope="module")
def weak() -> MutationRun:
    return _run(WEAK_EVAL)


def _episode() -> Episode:
    """Two parallel check_stock calls, then the answer."""
    a = ToolCall("c1", "check_stock", '{"sku": "ABC-1"}')
    b = ToolCall("c2", "check_stock", '{"sku": "XYZ-2"}')
    ra = ToolResult(a, '{"sku": "ABC-1", "on_hand": 12, "checked": "2026-09-17", "bin": 734}')
    rb = ToolResult(b, '{"sku": "XYZ-2", "on_hand": 3}')
    answer = "ABC-1: 12 units on hand; XYZ-2: 3 units on hand."
    rounds = (
        Round(0, True, ModelReply(None, (a, b), "tool_calls"), (ra, rb)),
        Round(1, True, ModelReply(answer)),
    )
    prefix = ({"role": "user", "content": "How many ABC-1 and XYZ-2 are on hand?"},)
    transcript = (
        *prefix, rounds[0].reply.to_message(), ra.to_message(), rb.to_message(),
        rounds[1].reply.to_message(),
    )  # fmt: skip
    return Episode("c", "q", prefix[0]["content"], transcript, rounds, "converged", answer,
                   rounds[0].reply.usage)  # fmt: skip


CONTEXT = Context(("ABC-1", "XYZ-2"), ("QRS-7",))


def test_the_catalogue_makes_every_operator_and_keeps_the_transcript_consistent() -> None:
    episode = _episode()
    made = mutants(episode, CONTEXT, random.Random(0).choice)
    ops = [m.operator for m in made]
    assert set(ops) == set(GROUP_OF), set(GROUP_OF) - set(ops)
    for m in made:
        assert m.episode != episode, m.change
        # the transcript is the prefix and the rounds' messages: the judge reads one episode
        assert _prefix(m.episode) is not None, m.change
        if m.group != "answer":
            assert m.episode.answer == episode.answer, m.change
    by_op = {m.operator: m for m in made}
    assert by_op["answer_empty"].episode.answer == ""
    assert by_op["answer_empty"].episode.transcript[-1]["content"] == ""
    assert by_op["answer_unit_changed"].episode.answer.count("kg") == 1
    assert "QRS-7" in by_op["answer_place"].episode.answer
    assert by_op["day_shifted"].change.endswith("(2026-09-17 → 2026-09-18)")
    assert "2026-09-18" in by_op["day_shifted"].episode.rounds[0].results[0].content
    assert len(by_op["call_dropped"].episode.tool_calls) == 1
    assert len(by_op["call_repeated"].episode.tool_calls) == 3
    assert [c.id for c in by_op["calls_reordered"].episode.tool_calls] == ["c2", "c1"]
    assert by_op["result_error"].episode.rounds[0].results[0].error is not None or (
        by_op["result_error"].episode.rounds[0].results[1].error is not None
    )
    # the dropped result's call stays in the model's reply
    dropped = by_op["result_dropped"].episode
    assert len(dropped.rounds[0].reply.tool_calls) == 2 and len(dropped.tool_calls) == 1


def test_a_value_the_answer_never_cites_is_equivalent_one_it_cites_is_not() -> None:
    assert cited(12, "ABC-1: 12 units") and cited(28.34, "气温 28.3°C")
    assert not cited(1, "ABC-1: 12 units")  # the 1 of a name is no number
    assert not cited(734, "ABC-1: 12 units")
    made = mutants(_episode(), CONTEXT, random.Random(0).choice)
    values = [m for m in made if m.operator.startswith("value_")]
    assert {m.equivalent for m in values} == {True, False}
    for m in values:
        assert m.equivalent == (": 734 →" in m.change), m.change


def test_no_change_is_equivalent_for_an_answer_that_states_no_number() -> None:
    """A conclusion-only answer ("XYZ-2 has fewer on hand.") may rest on any value of the tool
    results, so none of its value mutants is called equivalent (each is scored)."""
    recorded = _episode()
    answer = "XYZ-2 has fewer on hand."
    last = replace(recorded.rounds[-1], reply=ModelReply(answer))
    rounds = (*recorded.rounds[:-1], last)
    transcript = (*recorded.transcript[:-1], last.reply.to_message())
    episode = replace(recorded, rounds=rounds, transcript=transcript, answer=answer)
    made = mutants(episode, CONTEXT, random.Random(0).choice)
    values = [m for m in made if m.operator.startswith("value_")]
    assert values and not any(m.equivalent for m in values)


def test_the_cassettes_are_never_written(tmp_path: Path) -> None:
    folder = STOCK_EVAL.parent / "cassettes"
    before = {
        p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }
    _run(STOCK_EVAL, budget=3)
    after = {
        p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }
    assert before == after


def test_the_weak_eval_file_scores_low_and_the_strong_one_high(
    strong: MutationRun, weak: MutationRun
) -> None:
    s, w = strong.total.score, weak.total.score
    assert s is not None and w is not None
    assert s >= 0.7, s
    assert w <= 0.25, w
    # the weak file's kills are the failure modes only (an empty answer, a promise)
    assert {k for o in weak.outcomes for k in o.killed_by} <= {"failure_mode", "verdict"}
    assert weak.by_check()["stop_reason"] == Score(0, weak.total.scored)
    assert weak.by("group")["tool_result"].killed == 0
    # the strong file's grounded check catches every changed price
    assert strong.by_check()["grounded"].killed > 0
    assert strong.by("operator")["value_plus_one"].score == 1.0


def test_every_mutant_is_judged_by_the_one_assessment_path(strong: MutationRun) -> None:
    collected = strong.collected
    assert collected is not None
    passing = [a for a in collected.episodes if a.assessment.passed]
    assert strong.mutated == len(passing) and strong.skipped == len(collected.episodes) - len(
        passing
    )
    episode = passing[0].episode
    question = collected.suite.by_id[episode.question_id]
    for m in mutants(episode, Context(("ABC-1", "XYZ-2"), ("QRS-7",)), random.Random(1).choice):
        if m.operator == "answer_empty":
            assert not assess(m.episode, question).passed
    killed = [o for o in strong.outcomes if o.status == KILLED]
    assert all(o.killed_by for o in killed)
    assert not any(o.killed_by for o in strong.outcomes if o.status != KILLED)
    assert all(
        o.status != EQUIVALENT for o in strong.outcomes if not o.operator.startswith("value_")
    )


def test_deterministic_for_a_seed_and_the_budget_caps_each_episode(strong: MutationRun) -> None:
    again = _run(STOCK_EVAL)
    assert again.outcomes == strong.outcomes
    capped = _run(STOCK_EVAL, budget=4, seed=3)
    assert capped.outcomes == _run(STOCK_EVAL, budget=4, seed=3).outcomes
    per_episode: dict[tuple[str, str, int], int] = {}
    for o in capped.outcomes:
        key = (o.configuration, o.question_id, o.trial)
        per_episode[key] = per_episode.get(key, 0) + 1
    assert set(per_episode.values()) == {4}
    assert len({o.operator for o in capped.outcomes}) > 4  # spread over the operators
    with pytest.raises(ValueError, match="at least 1"):
        _run(STOCK_EVAL, budget=0)


def test_the_command_prints_the_scores_and_the_survivors() -> None:
    result = runner.invoke(app, ["mutate", "--eval", str(STOCK_EVAL), "--show", "0"])
    assert result.exit_code == 0, result.output
    assert "mutation score 76%: 53 of 70 mutants killed" in result.output
    for title in ("score per configuration", "score per question", "score per operator",
                  "caught by (check)", "surviving mutants (17)"):  # fmt: skip
        assert title in result.output
    assert "answer_place" in result.output and "'ZZZ-9'" in result.output  # a survivor, folded
    second = runner.invoke(app, ["mutate", "--eval", str(STOCK_EVAL), "--show", "0"])
    assert second.output == result.output
    low = runner.invoke(app, ["mutate", "--eval", str(WEAK_EVAL), "--fail-under", "50"])
    assert low.exit_code == 1
    assert "below --fail-under 50%" in low.output
    bad = runner.invoke(app, ["mutate", "--eval", str(STOCK_EVAL), "--budget", "0"])
    assert bad.exit_code == 2


def test_the_reference_set_prints_a_score_and_its_survivors() -> None:
    result = runner.invoke(
        app, ["mutate", "--questions", "beijing", "--configurations", "single+oneshot",
              "--cassettes", str(REPO / "cassettes")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "mutation score" in result.output and "surviving mutants" in result.output
    assert "day_shifted" in result.output  # the judge reads the day by position, not date


def test_a_configuration_whose_episodes_all_fail_is_listed_without_a_score() -> None:
    from toolreplay.mutation.run import MutantOutcome

    one = MutantOutcome("a", "q", 1, "", "answer_empty", "answer", "answer → ''", KILLED,
                        ("failure_mode",), ("verdict", "failure_mode"))  # fmt: skip
    run = MutationRun((one,), 1, 2, 0, None, configurations=("a", "b"), questions=("q",))
    assert run.by("configuration") == {"a": Score(1, 0, 0), "b": Score()}
    assert run.by("configuration")["b"].score is None
    assert list(run.by("operator")) == ["answer_empty"]
    assert run.by_check() == {"verdict": Score(0, 1), "failure_mode": Score(1, 0)}


def test_json_holds_the_scores_and_every_mutant(tmp_path: Path, strong: MutationRun) -> None:
    import json

    path = tmp_path / "mutation.json"
    result = runner.invoke(app, ["mutate", "--eval", str(STOCK_EVAL), "--json", str(path)])
    assert result.exit_code == 0, result.output
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["total"] == {"score": 0.7571, "killed": 53, "survived": 17, "equivalent": 0}
    assert len(data["mutants"]) == len(strong.outcomes)
    assert data == json.loads(json.dumps(strong.to_dict()))
    assert data["by_check"]["stop_reason"]["killed"] == 0
    survivor = next(m for m in data["mutants"] if m["status"] == "survived")
    assert survivor["change"] and survivor["cassette"].endswith(".yaml")
    bad = runner.invoke(app, ["mutate", "--eval", str(STOCK_EVAL), "--json", str(tmp_path)])
    assert bad.exit_code == 2


def test_the_outcomes_are_the_same_whatever_the_number_of_workers(strong: MutationRun) -> None:
    assert _run(STOCK_EVAL, workers=2).outcomes == strong.outcomes
    with pytest.raises(ValueError, match="workers must be at least 1"):
        _run(STOCK_EVAL, workers=0)


def test_run_mutate_prints_the_score_and_adds_only_the_mutation_section(tmp_path: Path) -> None:
    import json

    plain = runner.invoke(app, ["run", "--eval", str(STOCK_EVAL), "--out", str(tmp_path / "a")])
    mutated = runner.invoke(
        app, ["run", "--eval", str(STOCK_EVAL), "--out", str(tmp_path / "b"), "--mutate"]
    )
    assert plain.exit_code == mutated.exit_code, mutated.output
    assert "mutation score" not in plain.output
    assert "mutation score 76%: 53 of 70 mutants killed" in mutated.output
    assert "surviving mutants (17)" in mutated.output
    a, b = (json.loads((tmp_path / x / "results.json").read_text("utf-8")) for x in "ab")
    assert "mutation" not in a and b.pop("mutation")["total"]["killed"] == 53
    assert a == b  # the rest of results.json is unchanged


def test_a_transcript_with_fields_of_its_own_keeps_them_in_the_mutants() -> None:
    """A framework's tool message may carry ``name``, its reply the arguments as it spelled
    them: unchanged messages stay as recorded, a changed tool message keeps its fields."""
    from dataclasses import replace

    episode = _episode()
    t = [dict(m) for m in episode.transcript]
    t[1]["tool_calls"] = [
        {
            **c,
            "function": {**c["function"], "arguments": c["function"]["arguments"].replace(" ", "")},
        }
        for c in t[1]["tool_calls"]
    ]
    for m in t[2:4]:
        m["name"] = "check_stock"
    episode = replace(episode, transcript=tuple(t))
    made = {m.operator: m for m in mutants(episode, CONTEXT, random.Random(0).choice)}
    assert "result_error" in made and "calls_reordered" in made
    errored = made["result_error"].episode.transcript
    assert all(m.get("name") == "check_stock" for m in errored if m["role"] == "tool")
    assert errored[1] is t[1]  # the reply unchanged: as recorded
    changed = [m for m, o in zip(errored, t, strict=True) if m is not o]
    assert len(changed) == 1 and "error" in changed[0]["content"]


def test_run_mutate_takes_the_budget_and_seed_of_mutate(tmp_path: Path) -> None:
    """``run --mutate --budget 3 --seed 1`` writes the mutation section ``mutate --budget 3
    --seed 1`` scores; ``--budget`` or ``--seed`` without ``--mutate`` is a usage error."""
    import json

    from toolreplay.mutation.record import SCORE_KEYS

    path = tmp_path / "mutation.json"
    alone = runner.invoke(app, ["mutate", "--eval", str(STOCK_EVAL), "--budget", "3",
                                "--seed", "1", "--json", str(path)])  # fmt: skip
    assert alone.exit_code == 0, alone.output
    run = runner.invoke(app, ["run", "--eval", str(STOCK_EVAL), "--out", str(tmp_path / "r"),
                              "--mutate", "--budget", "3", "--seed", "1"])  # fmt: skip
    assert run.exit_code == 0, run.output
    scored = json.loads(path.read_text("utf-8"))
    section = json.loads((tmp_path / "r" / "results.json").read_text("utf-8"))["mutation"]
    assert section["seed"] == 1 and section["budget"] == 3
    assert {k: section[k] for k in SCORE_KEYS} == {k: scored[k] for k in SCORE_KEYS}
    assert [(s["operator"], s["change"]) for s in section["survivors"]] == [
        (m["operator"], m["change"]) for m in scored["mutants"] if m["status"] == "survived"
    ]
    default = json.loads((REPO / "examples" / "stock_agent" / "report" / "results.json")
                         .read_text("utf-8"))["mutation"]  # fmt: skip
    assert section["total"] != default["total"]  # the options were not ignored
    for option in ("--budget", "--seed"):
        bad = runner.invoke(app, ["run", "--eval", str(STOCK_EVAL), "--out",
                                  str(tmp_path / "x"), option, "3"])  # fmt: skip
        assert bad.exit_code == 2
        assert option in bad.output and "--mutate" in bad.output
        assert not (tmp_path / "x").exists()


def test_fail_under_without_a_score_says_there_is_none_to_compare() -> None:
    """single+atomic fails every episode on the reference set: nothing is mutated, so there is
    no score; --fail-under says so (not "– is below") and exits 1, as diff's nothing to
    compare does; without --fail-under the run without a score exits 0."""
    args = ["mutate", "--configurations", "single+atomic", "--cassettes", str(REPO / "cassettes")]
    result = runner.invoke(app, [*args, "--fail-under", "50"])
    assert result.exit_code == 1, result.output
    assert "is below" not in result.output
    assert ("no mutation score to compare with --fail-under 50%: no passing episode to mutate "
            "(20 failing ones skipped)") in " ".join(result.output.split())  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0


def test_the_names_a_mutation_draws_on_are_the_other_questions_in_first_order(tmp_path) -> None:
    """Written from what the catalogue promises, not from contexts_of: for each question, the
    names a place mutation may choose (``others`` less the question's own ``places``) are the
    other questions' names in the order they first appear among those questions; a name the
    question shares with a later one is never offered. The weather eval file shares 北京
    between two questions; a generated one has 300 questions sharing names."""
    from toolreplay.evals import load_eval
    from toolreplay.mutation.run import contexts_of

    lines = ["version: 1", "name: x", "system_prompt: s", "questions:"]
    for i in range(300):
        places = ", ".join(f"{{query: p{(i * 7 + j) % 120}, region: r}}" for j in range(3))
        lines.append(f" - {{id: q{i}, text: t{i}, measure: temperature, places: [{places}]}}")
    path = tmp_path / "many.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for suite in (load_suite(REPO / "evals" / "weather.yaml"), load_eval(path)):
        contexts = contexts_of(suite, [q.id for q in suite.questions])
        for q in suite.questions:
            own = [n for p in q.places for n in (p.query, *p.names)]
            expected: list[str] = []
            for other in suite.questions:
                for n in (n for p in other.places for n in (p.query, *p.names)):
                    if other.id != q.id and n not in expected and n not in own:
                        expected.append(n)
            c = contexts[q.id]
            assert [o for o in c.others if o not in c.places] == expected
            assert list(c.places) == list(dict.fromkeys(own))
