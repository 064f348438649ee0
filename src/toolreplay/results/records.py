"""The per-episode models of ``results.json``: an episode's record and what it nests (tool
calls, failure modes, expectations, the judge's evidence, usage, the model API error), and one
trial's outcome. :mod:`toolreplay.results.format` builds the whole document from them and
re-exports them; the format's rules (version, optional fields, key order) are written there.

Fields are declared in the order the writer emits them, so a document read into these models
and dumped back (:func:`toolreplay.results.format.results_document`) keeps its key order.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "CallRecord",
    "ChatMessage",
    "Conclusion",
    "EpisodeError",
    "EpisodeResult",
    "Evidence",
    "ExpectationRecord",
    "FailureModeRecord",
    "GroundedValue",
    "Message",
    "ToolCallRecord",
    "TrialOutcome",
    "Usage",
    "VerdictEvidence",
]


class RecordModel(BaseModel):
    """The base of every model of ``results.json``: strict (a results file is JSON written by
    this package; ``"4"`` is not 4 and 1 is not true) and open to extra keys (other stages add
    optional data; readers ignore what they do not know)."""

    model_config = ConfigDict(strict=True, extra="allow")


Span = Annotated[list[int], Field(min_length=2, max_length=2)]


def _as_json_holds_it(value: Any) -> Any:
    """``value`` as its JSON text holds it: a number that is not finite (``NaN``,
    ``Infinity``: Python's JSON reader takes them from a model's arguments) as null, as the
    results file writes it, so a report rendered from a run's results in memory and one
    rendered from its results.json show the same."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _as_json_holds_it(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json_holds_it(v) for v in value]
    return value


#: A tool call's arguments parsed from their JSON string (or that string when it is not JSON).
Arguments = Annotated[Any, AfterValidator(_as_json_holds_it)]


class ToolCallRecord(RecordModel):
    """A tool call as results store it: the name and the arguments parsed from JSON."""

    name: str = Field(description="Tool name, as the model called it.")
    arguments: Arguments = Field(
        None,
        description="The call's arguments parsed from their JSON string (the raw string when it "
        "is not valid JSON; a number that is not finite as null).",
    )


class CallRecord(RecordModel):
    """A tool call the host executed, with the round it was made in."""

    round: int = Field(description="The round (1-based model request) that made the call.")
    name: str = Field(description="Tool name, as the model called it.")
    arguments: Arguments = Field(
        None,
        description="The call's arguments parsed from their JSON string (the raw string when it "
        "is not valid JSON; a number that is not finite as null).",
    )


class Evidence(RecordModel):
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


class FailureModeRecord(RecordModel):
    """One label from the failure classifier (:mod:`toolreplay.judging.failures`)."""

    mode: str = Field(
        description="empty_answer, unfulfilled_promise, fabricated_value, wrong_place, "
        "no_measurement, declined, refusal, truncated, error"
    )
    explanation: str | None = Field(None, description="One sentence: why the label applies.")
    evidence: Evidence | None = Field(None, description="Where it shows; null when nowhere.")


class ExpectationRecord(RecordModel):
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


class Message(RecordModel):
    """A chat message as sent to or received from the model (OpenAI chat format). Only
    ``role`` is declared: the rest (``content``, ``tool_calls``, ``tool_call_id``, reasoning
    fields, ...) is the wire's own, kept as recorded. The schema of a transcript's messages;
    in memory a message stays the plain dict it was read as (:data:`ChatMessage`)."""

    role: str = Field(description="system, user, assistant or tool.")


def _chat_message(value: Any) -> dict[str, Any]:
    """``value`` itself when it is a JSON object with a string ``role`` (not copied: a
    transcript is the largest part of a results document)."""
    if not isinstance(value, dict):
        raise PydanticCustomError("dict_type", "Input should be a valid dictionary")
    if not isinstance(value.get("role"), str):
        raise PydanticCustomError("message_role", "'role' (a string) is a required property")
    return value


#: A transcript message in memory: the chat-format dict as recorded (wire
#: :data:`toolreplay.wire.episode.Message`), checked to carry a string ``role``; its schema
#: is :class:`Message`'s.
ChatMessage = Annotated[
    dict[str, Any],
    PlainValidator(_chat_message),
    WithJsonSchema(Message.model_json_schema()),
]


class Usage(RecordModel):
    """Token usage summed over the episode's rounds, as the API reported it."""

    prompt_tokens: int = Field(description="Prompt tokens, summed over rounds.")
    completion_tokens: int = Field(description="Completion tokens, summed over rounds.")
    total_tokens: int = Field(description="prompt_tokens + completion_tokens.")


class EpisodeError(RecordModel):
    """The model API error an episode ended on
    (:class:`toolreplay.judging.episode_errors.EpisodeError`, as
    :func:`toolreplay.results.build.error_record` gives it)."""

    status: int | None = Field(
        None, description="HTTP status the model endpoint answered; null when no response came."
    )
    endpoint: str | None = Field(None, description="The request URL, when known.")
    message: str = Field(
        description="The server's own message when its error body holds one, else the error "
        "text without endpoint and status."
    )
    text: str = Field(description="The error as the host recorded it.")


class GroundedValue(RecordModel):
    """A value the answer states, and the tool result it was checked against
    (:meth:`toolreplay.judging.grounding.ValueCheck.to_dict`, read by
    :func:`toolreplay.results.build.verdict_evidence`; a format-only judge gives span,
    text and kind only)."""

    span: Span | None = Field(
        None, description="[start, end) character offsets of the value in the answer."
    )
    text: str = Field(description="The value as the answer states it, e.g. 28.3°C.")
    kind: str | None = Field(None, description="What it measures (temperature, ...).")
    stated_day: str | None = Field(None, description="The day the answer states it for.")
    stated_field: str | None = Field(None, description="The field the answer states it as.")
    stated_place: str | None = Field(None, description="The place the answer states it for.")
    grounded: bool | None = Field(
        None, description="Whether a tool result holds the value (null: not checked)."
    )
    tool_message_index: int | None = Field(
        None, description="Transcript index of the tool message holding it; null: none."
    )
    tool_field: str | None = Field(
        None, description="JSONPath of the field holding it in that tool message."
    )
    tool_value: str | None = Field(None, description="That field's value with its unit.")
    tool_place: str | None = Field(None, description="The place that tool result is for.")
    reason: str | None = Field(None, description="One line: why it is grounded or not.")
    stated_places: list[str] | None = Field(
        None, description="Every place the value is stated for, when more than one."
    )


class Conclusion(RecordModel):
    """A comparison's conclusion (:class:`toolreplay.judging.comparisons.Conclusion`, as
    :func:`toolreplay.results.build.conclusion_record` gives it)."""

    said: str | None = Field(None, description="The place the answer names.")
    span: Span | None = Field(None, description="Where the answer names it.")
    actual: str | None = Field(None, description="The place the tool results make it.")
    values: list[str] = Field(description="The tool values compared, one line each.")
    correct: bool = Field(description="Whether the answer's conclusion is right.")
    claims: list[str] | None = Field(
        None, description="The relations the answer states, as read; absent when none."
    )


class VerdictEvidence(RecordModel):
    """What the judge's verdict rests on (:func:`toolreplay.results.build.verdict_evidence` of
    the :class:`toolreplay.judging.verdicts.Verdict`)."""

    values: list[GroundedValue] = Field(description="The values read from the answer.")
    conclusion: Conclusion | None = Field(
        None, description="A comparison's conclusion; null for other questions."
    )


class EpisodeResult(RecordModel):
    """One episode (a question under a configuration), judged and labelled."""

    configuration: str = Field(description="host+toolset[-no_<heuristic>], e.g. loop+atomic.")
    question_id: str = Field(description="The question's id in the eval file.")
    trial: int | None = Field(
        None,
        description="Which repeat of its configuration × question (from 2): set on the records "
        "of ``trial_episodes``; absent on ``episodes`` (trial 1).",
    )
    test_id: str | None = Field(
        None,
        description="The test that recorded it (a test suite's set): a pytest node id "
        "(``path/test_mod.py::test_x[2]``) when the test module is known, else the test's name; "
        "absent for a set recorded by toolreplay record.",
    )
    cassette: str | None = Field(
        None,
        description="The cassette it was read or replayed from: its path relative to the "
        "working folder of the run, or ``<set folder>/<path in it>`` when the set lies outside "
        "it; absent when not known (results written before it was recorded).",
    )
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
    verdict_evidence: VerdictEvidence | None = Field(
        None, description="The values the verdict rests on; absent in older results."
    )
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
        description="converged, repeated, max_rounds, budget, truncated, filtered, error or "
        "unknown (the last reply named no finish reason where it would be converged; see the "
        "hosts)."
    )
    finish_reason: str | None = Field(
        None,
        description="The last reply's finish_reason as the API gave it (in Chat Completions "
        "terms; unknown when it named none); null when there was no reply.",
    )
    streamed: bool | None = Field(
        None,
        description="True when its model replies were streamed (server-sent events assembled); "
        "absent otherwise.",
    )
    usage: Usage | None = Field(None, description="Token usage summed over rounds.")
    recorded_wall_time_s: int | float | None = Field(
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
    transcript: list[ChatMessage] = Field(
        description="Every message in order: system, user, assistant (with tool_calls), tool."
    )
    error: EpisodeError | None = Field(
        None,
        description="The model API error the episode ended on (stop reason error); absent "
        "otherwise.",
    )

    @property
    def modes(self) -> list[str]:
        """Its failure modes' names, each once, in label order (empty when unclassified)."""
        return list(dict.fromkeys(f.mode for f in self.failure_modes or []))


class TrialOutcome(RecordModel):
    """One trial of one episode, judged and labelled (:func:`toolreplay.runs.trials.
    trial_outcome`); trial 1 is the episode in ``episodes``, a later trial's full record is in
    ``trial_episodes``."""

    configuration: str = Field(description="The configuration.")
    question_id: str = Field(description="The question's id.")
    trial: int = Field(1, description="The trial's number, from 1.")
    passed: bool = Field(description="Judged passed (the episode's rule).")
    rounds: int | None = Field(None, description="Model requests made.")
    tool_calls: int | None = Field(None, description="Tool calls executed.")
    stop_reason: str | None = Field(None, description="Why the host stopped.")
    failure_modes: list[str] | None = Field(
        None, description="The failure modes' names, sorted, each once."
    )


class SpreadRecord(RecordModel):
    """Mean, population standard deviation, min and max of a count over every trial
    (:meth:`toolreplay.results.metrics.Spread.to_record`, 4 decimals)."""

    mean: float = Field(description="Mean.")
    sd: float = Field(description="Population standard deviation.")
    min: int | float = Field(description="Smallest value (an integer for counts).")
    max: int | float = Field(description="Largest value (an integer for counts).")


class IntervalRecord(RecordModel):
    """A rate's confidence interval (:mod:`toolreplay.results.intervals`, 4 decimals)."""

    low: float = Field(description="Lower bound, in [0, 1].")
    high: float = Field(description="Upper bound, in [0, 1].")
    level: float = Field(description="Coverage, e.g. 0.95.")
    method: str = Field(description='"wilson" (score interval over the questions) or '
                        '"bootstrap" (percentile, over the questions, 2000 resamples, seed 0).')


class QuestionTrials(RecordModel):
    """One question's passes over the trials of one configuration."""

    question_id: str = Field(description="The question's id.")
    trials: int = Field(description="Trials run.")
    passes: int = Field(description="Trials judged passed.")
    pass_at_k: dict[str, float] = Field(description='pass@k by k ("1".."n"), in [0, 1].')
    pass_hat_k: dict[str, float] = Field(description='pass^k by k ("1".."n"), in [0, 1].')
