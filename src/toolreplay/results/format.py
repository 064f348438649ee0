"""``reports/results.json``: the judged episodes and per-configuration summary.

**One definition.** The pydantic models below (:class:`Results` and the models it nests) are
the format: every field has a description, the JSON Schema committed at
``schemas/results.schema.json`` is generated from them (:func:`results_json_schema`; a test
fails when the committed file differs), :func:`write_results` refuses a document that does
not validate, and :func:`load_results` / :func:`check_results` validate what the report reads.
The per-episode models live in :mod:`toolreplay.results.records` and are re-exported here.

**In memory.** The same models are the results in memory: the pipeline builds a
:class:`Results` (:func:`toolreplay.results.build.build_results`, setting only the fields the
file holds), :func:`load_results` returns one, and the report and diff read its attributes;
their entry points also take a mapping shaped like the file, validated once by
:func:`as_results`. Back to JSON:
:func:`results_document` / :func:`results_json_text` (only the fields that were set, in the
models' order, which is the writer's: a file read and dumped again is the same bytes). A
transcript message stays the chat-format dict it was recorded as (:data:`ChatMessage`).

**Format version and the rule for changing it.** ``format`` is :data:`RESULTS_FORMAT` (1).
Adding an optional field, or a field that readers may ignore, keeps the number; removing or
renaming a field, changing a field's type, units or meaning, or making an optional field
required bumps it. Readers reject any other number. Objects allow fields not listed here
(other stages add optional data), so a reader must ignore what it does not know.

Shape (key order as written)::

    {"format": 1, "cassette_set": "reference", "provenance": {...}, "judge": "measured-value",
     "configurations": [{"name", "passed", "total", "avg_rounds", "avg_tool_calls",
                         "recorded_wall_time_s", "avg_tokens", "stop_reasons",
                         "failure_modes"}, ...],
     "episodes": [{"configuration", "question_id", "question", "measure", "answer", "passed",
                   "verdict", "verdict_evidence", "rounds", "tool_calls", "tool_chain", "calls",
                   "pending_tool_calls", "stop_reason", "finish_reason", "usage",
                   "recorded_wall_time_s", "failure_modes", "expectations", "transcript",
                   "error"}, ...],                 # "error" only when the model API failed
     "fidelity": {"passed", "checks", "tables", "ablations", "judge_flips"},
     "mutation": {...}}            # optional: run --mutate (toolreplay.results.mutation)

An episode's ``failure_modes`` is a list of :class:`FailureModeRecord`
(:func:`toolreplay.results.build.failure_mode_record`: ``{"mode", "explanation", "evidence":
{"message_index", "span", "text", "tool_call"}}``); a configuration's ``failure_modes`` counts
the episodes carrying each mode (``{"empty_answer": 2, ...}``, modes with no episode left
out). An episode that ended on a model API error (stop reason ``error``, failure mode
``error``) has ``"error": {"status", "endpoint", "message", "text"}`` (:class:`EpisodeError`);
the transcript holds no message for it. An
episode whose question declares expectations (the eval file's ``expect:``) has
``"expectations"``, one :class:`ExpectationRecord` each
(:func:`toolreplay.results.build.expectation_record`: ``{"kind", "expected",
"passed", "explanation", "evidence"}``), and passes only when all of them pass; the key is
absent when it declares none.

``provenance.endpoints`` says what answered at each endpoint when the set was recorded, judged
from the manifest's URLs: ``[{"name": "model", "role": "model", "url", "host", "loopback",
"source"}, {"name": "geocoding_url", "role": "tool", ...}, ...]`` with ``source`` ``stand-in``
(a loopback model URL in a stand-in set), ``fixture-server`` (a loopback tool URL) or ``live``
(anything else; :func:`toolreplay.results.build.endpoint_source`).

Trial fields (added by :func:`toolreplay.results.build.build_results`; the fields above, the 2×2
table included, come from trial 1 alone, the study's run)::

    "selection": {"eval_file": "evals/weather.yaml", "configurations": [names run],
                  "questions": [ids run], "all_configurations": bool, "all_questions": bool},
    "trials": n,                                   # trials per configuration × question
    "configurations": [{..., "trials": n,
        "pass_at_k":  {"1": float, ..., "n": float},  # unbiased, mean over the questions
        "pass_hat_k": {"1": float, ..., "n": float},  # pass^k, same
        "pass_hat_k_interval": {"1": {"low", "high", "level", "method"}, ...},  # optional
        "rounds_over_trials":     {"mean", "sd", "min", "max"},  # over every trial
        "tool_calls_over_trials": {"mean", "sd", "min", "max"},
        "failure_mode_rates": {"empty_answer": 0.65, ...},  # trials with the mode / trials
        "questions": [{"question_id", "trials", "passes", "pass_at_k", "pass_hat_k"}]}],
    "trial_outcomes": [{"configuration", "question_id", "trial", "passed", "rounds",
                        "tool_calls", "stop_reason", "failure_modes": [mode, ...]}, ...],
    "trial_episodes": [{"configuration", "question_id", "trial", ...}, ...]  # trials 2..n

``trial_episodes`` holds the full record (:class:`EpisodeResult`, with ``trial``) of every
trial after the first, in ``trial_outcomes`` order, for the report's transcripts; nothing
counted reads it, and it is absent when every episode has one trial. An episode's optional
``cassette`` is the cassette it was read or replayed from (relative to the run's working
folder, else ``<set folder>/<path>``), ``test_id`` the test that recorded it (a test suite's
set: a pytest node id when its module is known).

``pass_at_k`` = 1 − C(n−c, k)/C(n, k) and ``pass_hat_k`` = C(c, k)/C(n, k) with c passes in n
trials (:mod:`toolreplay.results.metrics`); keys are k as strings (JSON object keys), values in
[0, 1]
rounded to 4 places. A one-trial set has ``"trials": 1`` and curves with the single key "1".
``pass_hat_k_interval`` (optional) is each k's 95% interval: Wilson over the questions for one
trial, else a seeded percentile bootstrap over the questions (:mod:`~toolreplay.results.
intervals`, ``docs/intervals.md``).


Written with a fixed key order and ``ensure_ascii=False``; regenerating from the same
cassettes gives byte-identical output (times are the manifest's recorded ones).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from toolreplay.results.mutation import MutationRecord
from toolreplay.results.records import (
    CallRecord,
    ChatMessage,
    Conclusion,
    EpisodeError,
    EpisodeResult,
    Evidence,
    ExpectationRecord,
    FailureModeRecord,
    GroundedValue,
    IntervalRecord,
    Message,
    QuestionTrials,
    RecordModel,
    SpreadRecord,
    ToolCallRecord,
    TrialOutcome,
    Usage,
    VerdictEvidence,
)
from toolreplay.strict_json import json_error_message, load_json

RESULTS_FORMAT: Literal[1] = 1


#: Where the generated JSON Schema is committed, relative to the repository root.
SCHEMA_PATH = Path("schemas") / "results.schema.json"


SCHEMA_ID = "https://toolreplay.invalid/schemas/results.schema.json"


__all__ = [
    "RESULTS_FORMAT",
    "Ablation",
    "AuditTable",
    "CallRecord",
    "ChatMessage",
    "Check",
    "Conclusion",
    "ConfigurationSummary",
    "Endpoint",
    "EpisodeError",
    "EpisodeResult",
    "Evidence",
    "ExpectationRecord",
    "FailureModeRecord",
    "Fidelity",
    "Flip",
    "GroundedValue",
    "IntervalRecord",
    "Message",
    "MutationRecord",
    "Provenance",
    "QuestionTrials",
    "Results",
    "ResultsError",
    "Selection",
    "SpreadRecord",
    "TableRow",
    "ToolCallRecord",
    "TrialOutcome",
    "Usage",
    "VerdictEvidence",
    "as_results",
    "check_results",
    "load_results",
    "results_document",
    "results_json_schema",
    "results_json_text",
]


class ConfigurationSummary(RecordModel):
    """One configuration's totals over the questions (trial 1), then, in a run with trials,
    its figures over every trial."""

    name: str = Field(description="The configuration, e.g. single+oneshot.")
    passed: int = Field(description="Episodes judged passed.")
    total: int = Field(description="Episodes run.")
    avg_rounds: float = Field(description="Mean rounds per episode (2 decimals).")
    avg_tool_calls: float = Field(description="Mean executed tool calls per episode (2 decimals).")
    recorded_wall_time_s: int | float = Field(
        description="Recorded wall time summed over episodes (seconds, 3 decimals; the integer 0 "
        "when the configuration has no episode)."
    )
    avg_tokens: float = Field(description="Mean total tokens per episode (1 decimal).")
    stop_reasons: dict[str, int] | None = Field(
        None, description="Episodes per stop reason, sorted by reason."
    )
    failure_modes: dict[str, int] | None = Field(
        None, description="Episodes per failure mode (modes with none left out)."
    )
    trials: int | None = Field(
        None, description="Fewest trials any question has; absent without trial fields."
    )
    pass_at_k: dict[str, float] | None = Field(
        None, description='pass@k by k ("1".."n"), mean over the questions, 4 decimals.'
    )
    pass_hat_k: dict[str, float] | None = Field(
        None, description='pass^k by k ("1".."n"), mean over the questions, 4 decimals.'
    )
    pass_hat_k_interval: dict[str, IntervalRecord] | None = Field(
        None, description="pass^k's confidence interval by k (k=1: pass@1); absent in older runs."
    )
    rounds_over_trials: SpreadRecord | None = Field(
        None, description="Rounds over every trial."
    )
    tool_calls_over_trials: SpreadRecord | None = Field(
        None, description="Executed tool calls over every trial."
    )
    failure_mode_rates: dict[str, float] | None = Field(
        None, description="Share of trials carrying each failure mode (modes never seen left out)."
    )
    questions: list[QuestionTrials] | None = Field(
        None, description="Each question's passes over the trials."
    )

class Endpoint(RecordModel):
    """An endpoint the set was recorded against, and what answered there."""

    name: str = Field(description="model, or the tool endpoint's manifest key (geocoding_url...).")
    role: str = Field(description="model or tool: whether the model or a tool answered there.")
    url: str = Field(description="The URL as the manifest keeps it (no credentials or query).")
    host: str = Field(description="Its host.")
    loopback: bool = Field(description="Whether the host is this machine (127.0.0.1, ...).")
    source: str = Field(
        description="What answered: stand-in (the bundled test-double model: a loopback model URL "
        "in a stand-in set), fixture-server (the fixture server: a loopback tool URL), pytest "
        "(any endpoint of a set recorded by the pytest plugin: what answered is for its tests "
        "to say) or live (anything else)."
    )


class Provenance(RecordModel):
    """Where the cassette set came from (from its manifest.json)."""

    provenance: str = Field(
        description="stand-in (a test double), live, or pytest (recorded by the pytest plugin)."
    )
    model: str = Field(description="Model name sent in the requests.")
    endpoint_host: str = Field(description="Host of the model endpoint (no credentials).")
    recorded_on: str | None = Field(description="Recording date, YYYY-MM-DD.")
    today: str | None = Field(description="The date the prompts said it was, YYYY-MM-DD.")
    packages: dict[str, str] | None = Field(
        None, description="Versions of toolreplay and its HTTP stack at recording."
    )
    endpoints: list[Endpoint] | None = Field(
        None,
        description="The model endpoint then each tool endpoint, with what answered there "
        "(judged from the manifest's URLs); absent in older results.",
    )
    streamed: bool | None = Field(
        None,
        description="True when the model's replies were streamed (the eval file's stream: "
        "true) and assembled from their event streams; absent when they were not.",
    )


class Check(RecordModel):
    """One fidelity check (:mod:`toolreplay.audit`)."""

    name: str = Field(description="baseline_heuristics, ablation, judge_breadth, ...")
    passed: bool = Field(description="Whether the check passed (false when not applicable).")
    not_applicable: bool | None = Field(
        None,
        description="true: the set lacks what the check needs (a set recorded by the pytest "
        "plugin has no study baseline); passed is false, and the check is reported as not "
        "applicable, never as a pass nor counted as a failure of the audit.",
    )
    explanation: str | None = Field(None, description="One line: what was found.")
    evidence: list[str] | None = Field(None, description="Evidence lines.")


class TableRow(RecordModel):
    """A row of an audit table."""

    name: str = Field(description="Configuration shown.")
    source: str | None = Field(None, description="Configuration whose cassettes were replayed.")
    passed: int = Field(description="Episodes passed.")
    total: int = Field(description="Episodes expected.")
    missing: int | None = Field(None, description="Episodes that did not replay.")


class AuditTable(RecordModel):
    """A passed/total table of the audit (faithful, near-miss)."""

    title: str | None = Field(None, description="Caption.")
    judge: str | None = Field(None, description="Name of the judge used.")
    rows: list[TableRow] = Field(description="One row per configuration.")


class Flip(RecordModel):
    """A question whose verdict changed between two variants."""

    configuration: str | None = Field(None, description="Configuration, where not implied.")
    question_id: str = Field(description="The question.")
    from_: bool = Field(alias="from", description="Verdict before (the faithful variant).")
    to: bool = Field(description="Verdict after.")


class Ablation(RecordModel):
    """The baseline with one heuristic removed, replayed from its own cassettes."""

    heuristic: str = Field(description="The heuristic removed.")
    configuration: str = Field(description="The ablated configuration replayed.")
    baseline_configuration: str | None = Field(None, description="The faithful configuration.")
    passed: int = Field(description="Episodes passed.")
    total: int = Field(description="Episodes expected.")
    missing: int | None = Field(None, description="Episodes that did not replay.")
    flips: list[Flip] | None = Field(None, description="Verdicts that changed.")
    no_effect: bool | None = Field(
        None, description="Whether removing the heuristic changed no verdict."
    )
    no_effect_expected: bool | None = Field(
        None,
        description="Whether no effect is expected on these questions (true), a sign of a "
        "weakened audit (false) or not in question (null).",
    )


class Fidelity(RecordModel):
    """The fidelity audit; absent when the audit has not run."""

    passed: bool | None = Field(None, description="Every check passed.")
    checks: list[Check] | None = Field(None, description="The checks, in order.")
    tables: dict[str, AuditTable] | None = Field(
        None, description="faithful and near_miss tables, by key."
    )
    ablations: list[Ablation] | None = Field(None, description="One entry per ablated variant.")
    judge_flips: list[Flip] | None = Field(
        None, description="Verdicts the narrow (°C only) judge changes."
    )


class Selection(RecordModel):
    """What a run took from its eval file."""

    eval_file: str | None = Field(None, description="The eval file, relative to the run's folder.")
    configurations: list[str] | None = Field(None, description="The configurations run.")
    questions: list[str] | None = Field(None, description="The question ids run.")
    all_configurations: bool | None = Field(
        None, description="Whether every configuration of the eval file was run."
    )
    all_questions: bool | None = Field(
        None, description="Whether every question of the eval file was run."
    )


class Results(RecordModel):
    """The whole ``results.json`` document."""

    format: Literal[1] = Field(
        description="Format version; see the module docstring for when it changes."
    )
    cassette_set: str = Field(description="The cassette set's name (its folder).")
    provenance: Provenance = Field(description="Where the set came from.")
    judge: str | None = Field(None, description="Name of the judge that gave the verdicts.")
    configurations: list[ConfigurationSummary] = Field(
        description="One summary per configuration, in the study's order."
    )
    episodes: list[EpisodeResult] = Field(description="Every episode, configuration-major.")
    selection: Selection | None = Field(
        None, description="What was run of the eval file; absent without trial fields."
    )
    trials: int | None = Field(
        None, description="Trials per configuration × question; absent without trial fields."
    )
    trial_outcomes: list[TrialOutcome] | None = Field(
        None, description="Every trial of every episode, judged; absent without trial fields."
    )
    trial_episodes: list[EpisodeResult] | None = Field(
        None,
        description="The full record of every trial after the first (each with its ``trial``), "
        "in the order of ``trial_outcomes``; the figures above (trial 1's table, pass^k) do not "
        "read it. Absent when every episode has one trial.",
    )
    fidelity: Fidelity | None = Field(None, description="The fidelity audit, when it ran.")
    mutation: MutationRecord | None = Field(
        None,
        description="The eval file's mutation score on these episodes (run --mutate; "
        ":mod:`toolreplay.results.mutation`); absent without it and in older results.",
    )

    @field_validator("format", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"format must be the integer {RESULTS_FORMAT}")
        return value


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``, generated from :class:`Results`;
    committed as ``schemas/results.schema.json`` (``python -m toolreplay.results`` prints it)."""
    schema = Results.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


class ResultsError(ValueError):
    """A results file (or results dict) that is not a valid ``results.json``. The message
    names the file when there is one, and says what is wrong and where (a JSON path)."""


def _json_path(loc: Sequence[int | str]) -> str:
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        # other parts name a union member (e.g. "list[int]"), not a place in the document
    return out


def _validated(results: Any) -> Results:
    if isinstance(results, Mapping) and "shard" in results and "provenance" not in results:
        raise ResultsError(  # `toolreplay run --shard I/N` wrote it
            f"a shard of a run ({results['shard']}), not its results: merge the shards first "
            "(`toolreplay merge DIR/shard-*-of-N.json` writes results.json), then use that"
        )
    try:
        return Results.model_validate(results)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        if error["type"] == "missing" and loc:
            what = f"the required field {loc[-1]!r} is missing at {_json_path(loc[:-1])}"
        else:
            what = f"{error['msg']} at {_json_path(loc)}"
        raise ResultsError(
            f"not a toolreplay results file (format {RESULTS_FORMAT}): {what}; it was edited "
            "or written by another tool: write it again with `toolreplay run` (or `toolreplay "
            "merge` for a sharded run)"
        ) from None


def check_results(results: Any) -> None:
    """Validate ``results`` (a parsed results.json) against :class:`Results`.

    Raises :class:`ResultsError` with the first problem: the message and where it is as a JSON
    path, e.g. ``the required field 'provenance' is missing at $`` or ``... at
    $.episodes[2].failure_modes[0].evidence.span``."""
    if not isinstance(results, Results):
        _validated(results)


def as_results(results: Results | Mapping[str, Any]) -> Results:
    """``results`` as the typed model: a :class:`Results` is returned as it is, a mapping (a
    parsed results.json, or a results dict built in memory) is validated into one. The
    report's and diff's entry points take either through this.

    Raises :class:`ResultsError` like :func:`check_results` when a mapping does not validate."""
    if isinstance(results, Results):
        return results
    return _validated(results)


def results_document(results: Results | Mapping[str, Any]) -> dict[str, Any]:
    """``results`` as the JSON document ``results.json`` holds: only the fields that were set
    (an optional field absent in the input stays absent), in the models' order (the writer's),
    ``from`` under its own name, unknown fields kept after the known ones. A document read
    with :func:`load_results` dumps back to the same JSON."""
    return as_results(results).model_dump(mode="json", by_alias=True, exclude_unset=True)


def results_json_text(results: Results | Mapping[str, Any]) -> str:
    """The text of ``results.json`` for ``results``: :func:`results_document` as JSON with a
    2-space indent, ``ensure_ascii=False`` and a final newline (UTF-8 when written)."""
    return json.dumps(results_document(results), ensure_ascii=False, indent=2) + "\n"


def load_results(path: Path) -> Results:
    """Read and validate a ``results.json``: returns it as :class:`Results`
    (:func:`results_document` gives the JSON back unchanged). Raises :class:`ResultsError`
    naming ``path`` when the file is missing, unreadable, not UTF-8 JSON, or not shaped like
    :class:`Results`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"{path}: results file not found; `toolreplay run` writes one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read results file: {exc}") from None
    try:
        results = load_json(text)  # a key given twice is refused, naming its line
    except ValueError as exc:
        raise ResultsError(json_error_message(path, exc)) from None
    try:
        return _validated(results)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None
