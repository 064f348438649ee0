"""``reports/results.json``: the judged episodes and per-configuration summary.

**One definition.** The pydantic models below (:class:`Results` and the models it nests) are
the format: every field has a description, the JSON Schema committed at
``schemas/results.schema.json`` is generated from them (:func:`results_json_schema`; a test
fails when the committed file differs), :func:`write_results` refuses a document that does
not validate, and :func:`load_results` / :func:`check_results` validate what the report reads.

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
                   "verdict", "rounds", "tool_calls", "tool_chain", "calls",
                   "pending_tool_calls", "stop_reason", "finish_reason", "usage",
                   "recorded_wall_time_s", "failure_modes", "expectations", "transcript",
                   "error"}, ...],                 # "error" only when the model API failed
     "fidelity": {"passed", "checks", "tables", "ablations", "judge_flips"}}

An episode's ``failure_modes`` is a list of :meth:`toolreplay.judging.failures.FailureMode.to_dict`
(``{"mode", "explanation", "evidence": {"message_index", "span", "text", "tool_call"}}``); a
configuration's ``failure_modes`` counts the episodes carrying each mode
(``{"empty_answer": 2, ...}``, modes with no episode left out). An episode that ended on a model
API error (stop reason ``error``, failure mode ``error``) has ``"error": {"status", "endpoint",
"message", "text"}`` (:class:`EpisodeError`); the transcript holds no message for it. An
episode whose question declares expectations (the eval file's ``expect:``) has
``"expectations"``, one :class:`ExpectationRecord` each
(:meth:`toolreplay.judging.expectations.ExpectationResult.to_dict`: ``{"kind", "expected",
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
        "rounds_over_trials":     {"mean", "sd", "min", "max"},  # over every trial
        "tool_calls_over_trials": {"mean", "sd", "min", "max"},
        "failure_mode_rates": {"empty_answer": 0.65, ...},  # trials with the mode / trials
        "questions": [{"question_id", "trials", "passes", "pass_at_k", "pass_hat_k"}]}],
    "trial_outcomes": [{"configuration", "question_id", "trial", "passed", "rounds",
                        "tool_calls", "stop_reason", "failure_modes": [mode, ...]}, ...]

``pass_at_k`` = 1 − C(n−c, k)/C(n, k) and ``pass_hat_k`` = C(c, k)/C(n, k) with c passes in n
trials (:mod:`toolreplay.results.metrics`); keys are k as strings (JSON object keys), values in
[0, 1]
rounded to 4 places. A one-trial set has ``"trials": 1`` and curves with the single key "1".


Written with a fixed key order and ``ensure_ascii=False``; regenerating from the same
cassettes gives byte-identical output (times are the manifest's recorded ones).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

RESULTS_FORMAT: Literal[1] = 1


#: Where the generated JSON Schema is committed, relative to the repository root.
SCHEMA_PATH = Path("schemas") / "results.schema.json"


SCHEMA_ID = "https://toolreplay.invalid/schemas/results.schema.json"


__all__ = [
    "RESULTS_FORMAT",
    "Ablation",
    "AuditTable",
    "Check",
    "ConfigurationSummary",
    "Endpoint",
    "EpisodeError",
    "EpisodeResult",
    "Evidence",
    "FailureModeRecord",
    "Fidelity",
    "Provenance",
    "Results",
    "ResultsError",
    "check_results",
    "load_results",
    "results_json_schema",
]


class _Model(BaseModel):
    # strict: a results file is JSON written by this package; "4" is not 4 and 1 is not true.
    # extra="allow": other stages add optional data; readers ignore what they do not know.
    model_config = ConfigDict(strict=True, extra="allow")


Span = Annotated[list[int], Field(min_length=2, max_length=2)]


class ToolCallRecord(_Model):
    """A tool call as results store it: the name and the arguments parsed from JSON."""

    name: str = Field(description="Tool name, as the model called it.")
    arguments: Any = Field(
        None,
        description="The call's arguments parsed from their JSON string (the raw string when it "
        "is not valid JSON).",
    )


class CallRecord(ToolCallRecord):
    """A tool call the host executed, with the round it was made in."""

    round: int = Field(description="The round (1-based model request) that made the call.")


class Evidence(_Model):
    """Where a failure mode shows in the episode."""

    message_index: int | None = Field(
        None, description="Index into the episode's transcript; null: the final answer."
    )
    span: Span | None = Field(
        None,
        description="[start, end) character offsets into that message's content (into the "
        "answer when message_index is null); null when the evidence is not a text span.",
    )
    text: str | None = Field(None, description="The quoted text (a promise, a value), if any.")
    tool_call: ToolCallRecord | None = Field(
        None, description="The tool call involved (e.g. the pending one), if any."
    )


class FailureModeRecord(_Model):
    """One label from the failure classifier (:mod:`toolreplay.judging.failures`)."""

    mode: str = Field(
        description="empty_answer, unfulfilled_promise, fabricated_value, no_measurement, "
        "refusal, error, ..."
    )
    explanation: str | None = Field(None, description="One sentence: why the label applies.")
    evidence: Evidence | None = Field(None, description="Where it shows; null when nowhere.")


class ExpectationRecord(_Model):
    """One expectation of the eval file checked on the episode
    (:mod:`toolreplay.judging.expectations`)."""

    kind: str = Field(
        description="tool_called, tool_not_called, tool_sequence, tool_arguments, max_rounds, "
        "max_tool_calls, stop_reason, answer_contains, answer_matches, answer_not_contains, "
        "grounded or strict_grounding."
    )
    expected: str = Field(description="The expectation in words.")
    passed: bool = Field(description="Whether the episode meets it.")
    explanation: str = Field(description="One sentence: why it passed or failed.")
    evidence: Evidence | None = Field(
        None, description="The message (and for answer checks the span) it rests on."
    )


class Message(_Model):
    """A chat message as sent to or received from the model (OpenAI chat format)."""

    role: str = Field(description="system, user, assistant or tool.")


class Usage(_Model):
    """Token usage summed over the episode's rounds, as the API reported it."""

    prompt_tokens: int = Field(description="Prompt tokens, summed over rounds.")
    completion_tokens: int = Field(description="Completion tokens, summed over rounds.")
    total_tokens: int = Field(description="prompt_tokens + completion_tokens.")


class EpisodeError(_Model):
    """The model API error an episode ended on
    (:class:`toolreplay.judging.failures.EpisodeError`)."""

    status: int | None = Field(
        None, description="HTTP status the model endpoint answered; null when no response came."
    )
    endpoint: str | None = Field(None, description="The request URL, when known.")
    message: str = Field(
        description="The server's own message when its error body holds one, else the error "
        "text without endpoint and status."
    )
    text: str = Field(description="The error as the host recorded it.")


class EpisodeResult(_Model):
    """One episode (a question under a configuration), judged and labelled."""

    configuration: str = Field(description="host+toolset[-no_<heuristic>], e.g. loop+atomic.")
    question_id: str = Field(description="The question's id in the eval file.")
    question: str = Field(description="The question's text.")
    measure: str | None = Field(
        None,
        description="What the question measures (temperature, precipitation, comparison), from "
        "the eval file; null: any measured value.",
    )
    answer: str = Field(description='The host\'s final answer ("" when there is none).')
    passed: bool = Field(
        description="The judge's verdict, and every expectation met (when there are any)."
    )
    verdict: str | None = Field(None, description="The judge's explanation.")
    rounds: int = Field(description="Model requests made.")
    tool_calls: int = Field(description="Tool calls the host executed.")
    tool_chain: list[str] = Field(description="Names of the executed tool calls, in order.")
    calls: list[CallRecord] | None = Field(
        None, description="The executed tool calls with round and parsed arguments."
    )
    pending_tool_calls: list[ToolCallRecord] | None = Field(
        None, description="Tool calls of the last reply that the host never executed."
    )
    stop_reason: str = Field(
        description="converged, repeated, max_rounds, budget, truncated, filtered or error (see "
        "the hosts)."
    )
    usage: Usage | None = Field(None, description="Token usage summed over rounds.")
    recorded_wall_time_s: float | None = Field(
        None, description="Wall time of the episode when it was recorded (seconds, manifest)."
    )
    failure_modes: list[FailureModeRecord] | None = Field(
        None, description="Failure-mode labels; absent when the classifier has not run."
    )
    expectations: list[ExpectationRecord] | None = Field(
        None,
        description="The question's expectations, checked (the episode passes only when all "
        "pass); absent when it declares none.",
    )
    transcript: list[Message] = Field(
        description="Every message in order: system, user, assistant (with tool_calls), tool."
    )
    error: EpisodeError | None = Field(
        None,
        description="The model API error the episode ended on (stop reason error); absent "
        "otherwise.",
    )


class ConfigurationSummary(_Model):
    """One configuration's totals over the questions."""

    name: str = Field(description="The configuration, e.g. single+oneshot.")
    passed: int = Field(description="Episodes judged passed.")
    total: int = Field(description="Episodes run.")
    avg_rounds: float = Field(description="Mean rounds per episode (2 decimals).")
    avg_tool_calls: float = Field(description="Mean executed tool calls per episode (2 decimals).")
    recorded_wall_time_s: float = Field(
        description="Recorded wall time summed over episodes (seconds, 3 decimals)."
    )
    avg_tokens: float = Field(description="Mean total tokens per episode (1 decimal).")
    stop_reasons: dict[str, int] | None = Field(
        None, description="Episodes per stop reason, sorted by reason."
    )
    failure_modes: dict[str, int] | None = Field(
        None, description="Episodes per failure mode (modes with none left out)."
    )


class Endpoint(_Model):
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


class Provenance(_Model):
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


class Check(_Model):
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


class TableRow(_Model):
    """A row of an audit table."""

    name: str = Field(description="Configuration shown.")
    passed: int = Field(description="Episodes passed.")
    total: int = Field(description="Episodes expected.")
    source: str | None = Field(None, description="Configuration whose cassettes were replayed.")
    missing: int | None = Field(None, description="Episodes that did not replay.")


class AuditTable(_Model):
    """A passed/total table of the audit (faithful, near-miss)."""

    title: str | None = Field(None, description="Caption.")
    judge: str | None = Field(None, description="Name of the judge used.")
    rows: list[TableRow] = Field(description="One row per configuration.")


class Flip(_Model):
    """A question whose verdict changed between two variants."""

    question_id: str = Field(description="The question.")
    from_: bool = Field(alias="from", description="Verdict before (the faithful variant).")
    to: bool = Field(description="Verdict after.")
    configuration: str | None = Field(None, description="Configuration, where not implied.")


class Ablation(_Model):
    """The baseline with one heuristic removed, replayed from its own cassettes."""

    heuristic: str = Field(description="The heuristic removed.")
    configuration: str = Field(description="The ablated configuration replayed.")
    passed: int = Field(description="Episodes passed.")
    total: int = Field(description="Episodes expected.")
    baseline_configuration: str | None = Field(None, description="The faithful configuration.")
    missing: int | None = Field(None, description="Episodes that did not replay.")
    flips: list[Flip] | None = Field(None, description="Verdicts that changed.")


class Fidelity(_Model):
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


class Results(_Model):
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
    fidelity: Fidelity | None = Field(None, description="The fidelity audit, when it ran.")

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


def check_results(results: Any) -> None:
    """Validate ``results`` (a parsed results.json) against :class:`Results`.

    Raises :class:`ResultsError` with the first problem: the message and where it is as a JSON
    path, e.g. ``'provenance' is a required property at $`` or ``... at
    $.episodes[2].failure_modes[0].evidence.span``."""
    try:
        Results.model_validate(results)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        if error["type"] == "missing" and loc:
            what = f"{loc[-1]!r} is a required property at {_json_path(loc[:-1])}"
        else:
            what = f"{error['msg']} at {_json_path(loc)}"
        raise ResultsError(
            f"not a toolreplay results file (format {RESULTS_FORMAT}): {what}"
        ) from None


def load_results(path: Path) -> dict[str, Any]:
    """Read and validate a ``results.json``.

    Returns the parsed results dict (as read: validation changes nothing). Raises
    :class:`ResultsError` naming ``path`` when the file is missing, unreadable, not UTF-8
    JSON, or not shaped like :class:`Results`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"{path}: results file not found; `toolreplay run` writes one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read results file: {exc}") from None
    try:
        results = json.loads(text)
    except ValueError as exc:
        raise ResultsError(f"{path}: not valid JSON: {exc}") from None
    try:
        check_results(results)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None
    return results
