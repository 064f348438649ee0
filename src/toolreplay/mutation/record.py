"""A mutation run as the ``mutation`` section of ``results.json``
(:class:`~toolreplay.results.mutation.MutationRecord`): its scores and its surviving mutants;
killed and equivalent mutants counted, not listed."""

from __future__ import annotations

from typing import Any

from toolreplay.mutation.run import SURVIVED, MutationRun
from toolreplay.results.mutation import MutationRecord

#: The keys of :meth:`MutationRun.to_dict` the section keeps as they are.
SCORE_KEYS = (
    "seed", "budget", "mutated", "skipped", "total", "by_configuration", "by_question",
    "by_group", "by_operator", "by_check",
)  # fmt: skip

#: A survivor's fields (``status`` and ``killed_by`` say nothing of a survivor).
SURVIVOR_KEYS = ("configuration", "question_id", "trial", "cassette", "operator", "group", "change")


def mutation_record(run: MutationRun) -> MutationRecord:
    """``run`` as results' ``mutation`` section: the figures of :meth:`MutationRun.to_dict`
    (seed, budget, mutated, skipped, the total and every score table, scores 0-1 to 4 places)
    and ``survivors``, every surviving mutant's episode (configuration, question id, trial,
    cassette), operator, group and exact change, in run order. Deterministic for a seed."""
    data: dict[str, Any] = run.to_dict()
    doc = {k: data[k] for k in SCORE_KEYS}
    doc["survivors"] = [
        {k: m[k] for k in SURVIVOR_KEYS} for m in data["mutants"] if m["status"] == SURVIVED
    ]
    return MutationRecord.model_validate(doc)


__all__ = ["mutation_record"]
