"""Two different conversations recorded by one test are two questions, not two trials.

A test that runs its agent twice with different prompts records two unrelated conversations
in one cassette. The wire reader already made them two episodes, but the suite folder gave
every episode of a cassette to the one question that names its test, as its trials (and
without an eval file :func:`suite_from_tests` made one question per test id): pass^k then
mixed two questions. Now each conversation (its first user message) is a question; the same
conversation recorded again stays a trial. The conversations are pydantic-ai's real
cassettes, put one after the other as one test would record them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toolreplay.evals import ANY_MEASURE, EvalSuite, ExperimentSpec, Question
from toolreplay.evaluation.wire import suite_from_tests
from toolreplay.runs.suite_folder import conversation_questions, read_suite_folder

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"

TOKYO = "What is the temperature in Tokyo?"
LONDON = "What is the capital of the UK? Use the tool, then answer."


def _load(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))
    return list(data["interactions"])


def _cassette(folder: Path, stem: str, *names: str) -> Path:
    module = folder / "test_agent"
    module.mkdir(exist_ok=True)
    interactions = [i for name in names for i in _load(name)]
    path = module / f"{stem}.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions}), encoding="utf-8")
    return path


TOOL_CALL = "pydantic-ai-openai-tool-call.yaml"
STREAM = "pydantic-ai-openai-stream.yaml"


def test_two_conversations_of_one_test_are_two_questions(tmp_path):
    path = _cassette(tmp_path, "test_two_prompts", TOOL_CALL, STREAM)
    suite = suite_from_tests([path])
    assert [(q.id, q.text) for q in suite.questions] == [
        ("test_two_prompts", TOKYO),
        ("test_two_prompts~2", LONDON),
    ]
    found = read_suite_folder(tmp_path, suite)
    assert [(e.question_id, e.trial, e.question) for e in found.episodes] == [
        ("test_two_prompts", 1, TOKYO),
        ("test_two_prompts~2", 1, LONDON),
    ]
    assert found.trials == 1 and not found.unmatched


def test_the_same_conversation_recorded_again_is_a_trial(tmp_path):
    path = _cassette(tmp_path, "test_twice", TOOL_CALL, TOOL_CALL)
    suite = suite_from_tests([path])
    assert [q.id for q in suite.questions] == ["test_twice"]
    found = read_suite_folder(tmp_path, suite)
    assert [(e.question_id, e.trial) for e in found.episodes] == [
        ("test_twice", 1),
        ("test_twice", 2),
    ]


def test_parametrised_repeats_holding_two_conversations_give_two_questions_with_trials(tmp_path):
    paths = [_cassette(tmp_path, f"test_two[{n}]", TOOL_CALL, STREAM) for n in range(2)]
    suite = suite_from_tests(paths)
    assert [q.id for q in suite.questions] == ["test_two", "test_two~2"]
    found = read_suite_folder(tmp_path, suite)
    assert sorted((e.question_id, e.trial) for e in found.episodes) == [
        ("test_two", 1), ("test_two", 2), ("test_two~2", 1), ("test_two~2", 2),
    ]  # fmt: skip


def _question(qid: str, text: str, tests: tuple[str, ...]) -> Question:
    return Question(id=qid, text=text, measure=ANY_MEASURE, places=(), day_index=0,
                    tests=tests)  # fmt: skip


def _suite(*questions: Question) -> EvalSuite:
    return EvalSuite("s", "", questions, ExperimentSpec(("loop",), (), 6, 20000, 0.0, ()), "s")


def test_an_eval_file_question_naming_the_test_takes_one_conversation(tmp_path):
    _cassette(tmp_path, "test_two_prompts", TOOL_CALL, STREAM)
    # named by the test, its text another wording: the first conversation only
    one = _suite(_question("temperature", "Tokyo temperature?", ("test_two_prompts",)))
    found = read_suite_folder(tmp_path, one)
    assert [(e.question_id, e.trial, e.question) for e in found.episodes] == [
        ("temperature", 1, TOKYO)
    ]
    assert len(found.unmatched) == 1 and "episode 2" in found.unmatched[0]
    # two questions naming the test, each its own conversation by its text
    both = _suite(
        _question("capital", LONDON, ("test_two_prompts",)),
        _question("temperature", TOKYO, ("test_two_prompts",)),
    )
    found = read_suite_folder(tmp_path, both)
    assert sorted((e.question_id, e.trial, e.question) for e in found.episodes) == [
        ("capital", 1, LONDON), ("temperature", 1, TOKYO),
    ]  # fmt: skip


def test_conversation_questions_by_text_then_in_order():
    a = _question("a", "A?", ("test_x",))
    b = _question("b", "B?", ("test_x",))
    other = _question("c", "C?", ())
    suite = _suite(a, b, other)
    assert conversation_questions(suite, "test_x", ["B?", "Z?", "C?"]) == {
        "B?": b, "Z?": a, "C?": other,
    }  # fmt: skip
    assert conversation_questions(suite, "test_y", ["A?", "Q?"]) == {"A?": a, "Q?": None}


def _prefixed(folder: Path, module: str, stem: str, prefix: str, *names: str) -> Path:
    """A cassette of ``names`` whose user messages start with ``prefix`` (a prompt template
    that differs per repeat or per arm)."""
    interactions = [i for name in names for i in _load(name)]
    for interaction in interactions:
        body = interaction["request"].get("parsed_body") or {}
        for message in body.get("messages", []):
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                message["content"] = prefix + message["content"]
    (folder / module).mkdir(exist_ok=True)
    path = folder / module / f"{stem}.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions}), encoding="utf-8")
    return path


def test_repeats_whose_prompt_carries_a_timestamp_stay_trials_of_one_question(tmp_path):
    paths = [
        _prefixed(tmp_path, "test_agent", f"test_w[{n}]", f"[now: 2025-01-0{n + 1}] ", TOOL_CALL)
        for n in range(3)
    ]
    suite = suite_from_tests(paths)
    assert [q.id for q in suite.questions] == ["test_w"]
    found = read_suite_folder(tmp_path, suite)
    assert [(e.question_id, e.trial) for e in found.episodes] == [
        ("test_w", 1), ("test_w", 2), ("test_w", 3),
    ]  # fmt: skip
    assert found.trials == 3


def test_the_same_test_in_two_arms_with_different_templates_answers_one_question(tmp_path):
    paths = [
        _prefixed(tmp_path, "test_baseline", "test_w", "", TOOL_CALL),
        _prefixed(tmp_path, "test_candidate", "test_w", "Answer briefly. ", TOOL_CALL),
    ]
    suite = suite_from_tests(paths)
    assert [q.id for q in suite.questions] == ["test_w"]
    found = read_suite_folder(tmp_path, suite)
    assert [(e.configuration, e.question_id) for e in found.episodes] == [
        ("test_baseline", "test_w"), ("test_candidate", "test_w"),
    ]  # fmt: skip


def test_varied_repeats_of_two_conversations_map_by_position(tmp_path):
    paths = [
        _prefixed(tmp_path, "test_agent", f"test_two[{n}]", f"run {n}: ", TOOL_CALL, STREAM)
        for n in range(2)
    ]
    suite = suite_from_tests(paths)
    assert [q.id for q in suite.questions] == ["test_two", "test_two~2"]
    found = read_suite_folder(tmp_path, suite)
    assert sorted((e.question_id, e.trial, e.question[:6]) for e in found.episodes) == [
        ("test_two", 1, "run 0:"), ("test_two", 2, "run 1:"),
        ("test_two~2", 1, "run 0:"), ("test_two~2", 2, "run 1:"),
    ]  # fmt: skip
