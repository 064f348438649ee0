"""The optional ``mutation`` section of ``results.json``: the eval file's mutation score on the
episodes of the run (``toolreplay run --mutate``; :mod:`toolreplay.mutation`, docs/mutation.md).

Shape (key order as written)::

    "mutation": {"seed": 0, "budget": null, "mutated": 5, "skipped": 7,
                 "total": {"score": 0.7571, "killed": 53, "survived": 17, "equivalent": 0},
                 "by_configuration": {name: score, ...}, "by_question": {...},
                 "by_group": {...}, "by_operator": {...}, "by_check": {...},
                 "survivors": [{"configuration", "question_id", "trial", "cassette",
                                "operator", "group", "change"}, ...]}

Each score is ``{"score", "killed", "survived", "equivalent"}``: ``score`` is killed / (killed
+ survived), a fraction 0-1 rounded to 4 places, null when no mutant was scored; equivalent
mutants (a change the answer cannot depend on) are counted apart. ``by_check`` counts, of the
scored mutants of the episodes a check applies to, those it caught on its own account
(``killed``) and those it let through (``survived``); its ``equivalent`` is 0. Killed and
equivalent mutants are counted, not listed: ``survivors`` lists every surviving mutant, in the
run's order (configuration, question, trial, catalogue order). Absent from results written
without ``--mutate`` and from older results; the format number is unchanged (an optional
section).
"""

from __future__ import annotations

from pydantic import Field

from toolreplay.results.records import RecordModel

__all__ = [
    "MutationRecord", "MutationScoreRecord", "SurvivorRecord", "compare_line", "percent"
]  # fmt: skip


class MutationScoreRecord(RecordModel):
    """Killed, surviving and equivalent mutants of one group, and the score."""

    score: float | None = Field(
        None,
        description="killed / (killed + survived), 0-1, 4 decimals; null with no mutant scored."
    )
    killed: int = Field(description="Mutants whose assessment failed.")
    survived: int = Field(description="Mutants that still passed (not equivalent).")
    equivalent: int = Field(
        description="Mutants that passed after a change the answer cannot depend on (not scored)."
    )


class SurvivorRecord(RecordModel):
    """A surviving mutant: the episode it was made from, the operator and the exact change."""

    configuration: str = Field(description="The episode's configuration.")
    question_id: str = Field(description="The episode's question.")
    trial: int = Field(description="The episode's trial, from 1.")
    cassette: str = Field(
        description='The cassette the episode was read from, relative to its set ("" when '
        "not known)."
    )
    operator: str = Field(description="The catalogue's operator, e.g. answer_place.")
    group: str = Field(description="Its group: tool_result, answer or trajectory.")
    change: str = Field(description="The exact change, e.g. 'answer: ABC-1 → ZZZ-9'.")


class MutationRecord(RecordModel):
    """The eval file's mutation score on the run's episodes (``toolreplay run --mutate``)."""

    seed: int = Field(description="The seed the mutation sites were chosen with.")
    budget: int | None = Field(
        None, description="At most this many mutants an episode; null: every mutant."
    )
    mutated: int = Field(description="Passing episodes mutated (every trial).")
    skipped: int = Field(description="Failing episodes, not mutated.")
    total: MutationScoreRecord = Field(description="The score over every mutant.")
    by_configuration: dict[str, MutationScoreRecord] = Field(
        description="Per configuration, in the run's order (null score: none of its episodes "
        "passed)."
    )
    by_question: dict[str, MutationScoreRecord] = Field(
        description="Per question id, in the eval file's order."
    )
    by_group: dict[str, MutationScoreRecord] = Field(
        description="Per operator group (tool_result, answer, trajectory)."
    )
    by_operator: dict[str, MutationScoreRecord] = Field(
        description="Per operator, in catalogue order (those without a mutant left out)."
    )
    by_check: dict[str, MutationScoreRecord] = Field(
        description="Per check (verdict, failure_mode, each expectation kind): the scored "
        "mutants it caught on its own account (killed) and let through (survived)."
    )
    survivors: list[SurvivorRecord] = Field(description="Every surviving mutant, in run order.")


def percent(score: float | None) -> str:
    """A score as ``"83%"`` (``"–"`` for none)."""
    return "–" if score is None else f"{100 * score:.0f}%"


def compare_line(a: MutationRecord | None, b: MutationRecord | None) -> str | None:
    """The mutation scores of two runs as one line for ``toolreplay diff``: ``"mutation
    score: A 76% (53 of 70 killed) → B 16% (24 of 147 killed)"``, a side without one said
    ``not scored``; None when neither run carries one."""
    if a is None and b is None:
        return None

    def side(m: MutationRecord | None) -> str:
        if m is None:
            return "not scored (run --mutate)"
        t = m.total
        return f"{percent(t.score)} ({t.killed} of {t.killed + t.survived} killed)"

    return f"mutation score: A {side(a)} → B {side(b)}"
