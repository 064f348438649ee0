"""The external corpus (evals/phrasings-external.yaml): answers in the styles real chat models
write, rewritten from public recordings onto the study's questions and fixture values, each
with the verdict and labels a careful grader gives. Every case must get them from the judge in
use and the failure classifier; the score is stated in docs/judge.md."""

from __future__ import annotations

import re

import pytest

from toolreplay.judging.failures import classify
from toolreplay.judging.phrasings import load_corpus
from toolreplay.judging.verdicts import GROUNDED_JUDGE

from .conftest import REPO

PATH = REPO / "evals" / "phrasings-external.yaml"
CORPUS = load_corpus(PATH)


def _agrees(case) -> tuple[bool, str]:
    verdict = GROUNDED_JUDGE.judge_episode(case.episode, case.question)
    labels = tuple(f.mode for f in classify(case.episode, GROUNDED_JUDGE, case.question))
    agree = verdict.passed is (case.judge == "pass") and labels == case.labels
    return agree, f"{verdict.explanation} / labels {labels}"


def test_the_corpus_is_large_and_mixed() -> None:
    cases = CORPUS.cases
    assert len(cases) >= 60
    assert 30 <= len(CORPUS.passing) <= len(cases) - 30  # right and wrong answers
    labels = {label for c in cases for label in c.labels}
    assert {"fabricated_value", "wrong_place", "unfulfilled_promise", "no_measurement"} <= labels
    whys = " ".join(c.why for c in cases)
    for kind in ("another place", "tomorrow", "wrong comparative", "wrong conclusion", "tie"):
        assert kind in whys, kind
    answers = [c.answer for c in cases]
    assert any(a.isascii() for a in answers) and any(not a.isascii() for a in answers)
    for mark in ("**", "|---", "\n- ", "1. **", "###", "😊", "六成", " in ", "依次为", "不相上下",
                 "没有广州热", "cooler than", " > "):  # fmt: skip
        assert any(mark in a for a in answers), mark


def test_every_case_names_where_its_style_comes_from_and_why() -> None:
    """Each case follows a comment that names its source (one of the recordings the header
    lists) and gives the grader's reason."""
    text = PATH.read_text(encoding="utf-8")
    header, _, body = text.partition("\ncases:\n")
    sources = set(re.findall(r"^#\s+\[([a-z0-9-]+)\]", header, re.MULTILINE))
    assert len(sources) >= 15
    comment: list[str] = []
    cited = set()
    for line in body.splitlines():
        stripped = line.strip()
        if line.startswith("  #"):
            comment.append(stripped)
        elif line.startswith("  - "):  # a case
            found = [m for c in comment if (m := re.match(r"#\s+\[([a-z0-9-]+)\]\s+\S", c))]
            assert found and found[-1].group(1) in sources, line
            source = found[-1]
            cited.add(source.group(1))
            comment = []
    assert len(cited) >= 15


@pytest.mark.slow
@pytest.mark.parametrize("case", CORPUS.cases, ids=[c.id for c in CORPUS.cases])
def test_judge_and_classifier_agree_with_the_grader(case) -> None:
    agree, got = _agrees(case)
    assert agree, got
    for label in classify(case.episode, GROUNDED_JUDGE, case.question):
        ev = label.evidence  # the evidence quotes the answer as written
        if ev.span is not None:
            assert case.answer[ev.span[0] : ev.span[1]] == ev.text


def test_the_score_is_stated_in_the_judge_docs() -> None:
    score = sum(_agrees(c)[0] for c in CORPUS.cases)
    docs = (REPO / "docs" / "judge.md").read_text(encoding="utf-8")
    assert f"{score}/{len(CORPUS.cases)}" in docs
