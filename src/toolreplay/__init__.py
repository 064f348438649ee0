"""toolreplay: record/replay and evaluation of LLM tool-calling loops.

Data flow, one package per stage (docs/architecture.md maps every module)::

    evals ─► runs (configurations, episodes) ─► hosts ─► models (openai SDK) ─┐
                     │                            │                           ├─ cassettes
                  studies ◄── study/weather    tools ─► study's tool client ───┘
                  (Study, register_study; the weather study one implementation)
                     ▼
    wire (episodes) ─► judging / audit ─► results ─► report, diff

The public API is importable from here; names are loaded on first use, so ``import
toolreplay`` stays cheap (no openai, vcrpy or pydantic import until a name needs it):

Hosts and limits
    :func:`run_loop` (the ``while``), :func:`run_single` (the one-round ``if``),
    :func:`run_host` (by name), :class:`LoopLimits` (``max_rounds``, ``token_budget`` in
    tokens). Each returns an :class:`Episode`.
Models
    :class:`ChatModel` (the protocol: ``complete(messages, tools) -> ModelReply``);
    :class:`OpenAIChatModel` (any OpenAI-compatible endpoint through the openai SDK over a
    passed-in ``httpx.Client``), :class:`OpenAIResponsesModel` (the Responses API),
    :class:`AnthropicMessagesModel` (Anthropic Messages; the ``anthropic`` extra),
    :func:`chat_model` (the client of the settings' ``protocol``), :class:`ModelSettings`
    and :func:`model_settings`;
    in process: :class:`ScriptedModel` (scripted replies or functions),
    :class:`StandinModel` (the bundled stand-in policy, no server).
Episodes
    :class:`Episode`, :class:`ModelReply`, :class:`ToolCall`, :class:`ToolResult`,
    :class:`Usage`, :class:`Round`.
Tools
    :class:`Toolset`, :class:`ToolError`; from plain callables: :func:`tool`,
    :func:`tool_schema`, :func:`toolset_from_functions` (schema from type hints, or given).
Studies
    :class:`Study` (what a domain supplies: toolsets, tool client, judge vocabulary, audit
    and stand-in hooks) and :func:`register_study`. The weather study's own names
    (``oneshot_toolset``, ``atomic_toolset``, ``Heuristics``, ``OpenMeteoClient``) are
    imported from :mod:`toolreplay.study.weather`.
Judging
    :class:`Judge`, :data:`FULL_JUDGE`, :data:`NARROW_JUDGE`, :class:`Verdict`; the failure
    classifier :func:`classify` and :class:`FailureMode`; one episode assessed once,
    :func:`assess` and :class:`Assessment` (verdict, failure modes, expectations, the pass
    rule); the fidelity audit :func:`run_audit` and :class:`Audit`.
Evaluation
    :func:`evaluate` (an episode source and an eval file to results and the audit, as
    ``toolreplay run`` does) and :class:`Evaluation`; the sources :class:`ReplayedSet` (a
    recorded set replayed through the hosts) and :class:`SuiteCassettes` (a test suite's
    cassettes read from the wire), :class:`Selection`; :func:`suite_from_tests` (an eval
    suite for a test suite's cassettes without an eval file: each test a question).
Results
    :class:`Results` (the pydantic model of ``results.json``), :func:`build_results`,
    :func:`load_results`, :func:`check_results`, :func:`write_results`,
    :func:`results_json_schema`.
Cassettes and sets
    :func:`replay_cassette`, :class:`CassetteMiss`, :class:`UnplayedInteractions`,
    :class:`CassetteError`, :func:`load_eval`, :func:`replay_set`; episodes read from a
    cassette alone, whatever program recorded it: :func:`episode_from_cassette`,
    :func:`episodes_from_cassette`, :func:`episodes_from_interactions`.

``__version__`` is read from the installed package's metadata.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> defining module (relative to this package).
_EXPORTS: dict[str, str] = {
    # hosts and limits
    "LoopLimits": "hosts",
    "run_loop": "hosts",
    "run_single": "hosts",
    "run_host": "hosts",
    # models
    "ChatModel": "models.base",
    "OpenAIChatModel": "models.openai_chat",
    "OpenAIResponsesModel": "models.openai_responses",
    "AnthropicMessagesModel": "models.anthropic_messages",
    "chat_model": "models.endpoint",
    "ModelSettings": "models.base",
    "model_settings": "models.endpoint",
    "ScriptedModel": "models.scripted",
    "StandinModel": "models.inprocess",
    "reply_from_completion": "models.inprocess",
    # episodes
    "Episode": "wire.episode",
    "ModelReply": "wire.episode",
    "ToolCall": "wire.episode",
    "ToolResult": "wire.episode",
    "Usage": "wire.episode",
    "Round": "wire.episode",
    # tools
    "Toolset": "tools.toolset",
    "ToolError": "tools.toolset",
    "Tool": "tools.functions",
    "tool": "tools.functions",
    "tool_schema": "tools.functions",
    "toolset_from_functions": "tools.functions",
    # studies
    "Study": "studies",
    "register_study": "studies",
    # judging
    "Judge": "judging.verdicts",
    "Verdict": "judging.verdicts",
    "FULL_JUDGE": "judging.verdicts",
    "NARROW_JUDGE": "judging.verdicts",
    "FailureMode": "judging.failures",
    "classify": "judging.failures",
    "Audit": "audit.tables",
    "run_audit": "audit.run",
    # evaluation
    "evaluate": "evaluation.pipeline",
    "Evaluation": "evaluation.pipeline",
    "ReplayedSet": "evaluation.replayed",
    "SuiteCassettes": "evaluation.wire",
    "Selection": "evaluation.sources",
    "suite_from_tests": "evaluation.wire",
    "assess": "judging.assessment",
    "Assessment": "judging.assessment",
    # results
    "Results": "results.format",
    "ResultsError": "results.format",
    "build_results": "results.build",
    "check_results": "results.format",
    "load_results": "results.format",
    "write_results": "results.build",
    "results_json_schema": "results.format",
    # cassettes, eval files, sets
    "replay_cassette": "cassettes.vcr",
    "CassetteMiss": "cassettes.errors",
    "CassetteError": "cassettes.errors",
    "UnplayedInteractions": "cassettes.errors",
    "load_eval": "evals",
    "EvalSuite": "evals",
    "replay_set": "runs.replay",
    "episode_from_cassette": "cassettes.episodes",
    "episodes_from_cassette": "cassettes.episodes",
    "episodes_from_interactions": "wire.reader",
}

__all__ = [
    "FULL_JUDGE",
    "NARROW_JUDGE",
    "AnthropicMessagesModel",
    "Assessment",
    "Audit",
    "CassetteError",
    "CassetteMiss",
    "ChatModel",
    "Episode",
    "EvalSuite",
    "Evaluation",
    "FailureMode",
    "Judge",
    "LoopLimits",
    "ModelReply",
    "ModelSettings",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "ReplayedSet",
    "Results",
    "ResultsError",
    "Round",
    "ScriptedModel",
    "Selection",
    "StandinModel",
    "Study",
    "SuiteCassettes",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "Toolset",
    "UnplayedInteractions",
    "Usage",
    "Verdict",
    "__version__",
    "assess",
    "build_results",
    "chat_model",
    "check_results",
    "classify",
    "episode_from_cassette",
    "episodes_from_cassette",
    "episodes_from_interactions",
    "evaluate",
    "load_eval",
    "load_results",
    "model_settings",
    "register_study",
    "replay_cassette",
    "replay_set",
    "reply_from_completion",
    "results_json_schema",
    "run_audit",
    "run_host",
    "run_loop",
    "run_single",
    "suite_from_tests",
    "tool",
    "tool_schema",
    "toolset_from_functions",
    "write_results",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("toolreplay")
        except PackageNotFoundError:  # run from a source tree that is not installed
            value = "0+unknown"
        globals()["__version__"] = value
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolreplay' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # for type checkers and IDEs; nothing is imported at run time
    from toolreplay.audit.run import run_audit
    from toolreplay.audit.tables import Audit
    from toolreplay.cassettes.episodes import episode_from_cassette, episodes_from_cassette
    from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
    from toolreplay.cassettes.vcr import replay_cassette
    from toolreplay.evals import EvalSuite, load_eval
    from toolreplay.evaluation.pipeline import Evaluation, evaluate
    from toolreplay.evaluation.replayed import ReplayedSet
    from toolreplay.evaluation.sources import Selection
    from toolreplay.evaluation.wire import SuiteCassettes, suite_from_tests
    from toolreplay.hosts import LoopLimits, run_host, run_loop, run_single
    from toolreplay.judging.assessment import Assessment, assess
    from toolreplay.judging.failures import FailureMode, classify
    from toolreplay.judging.verdicts import FULL_JUDGE, NARROW_JUDGE, Judge, Verdict
    from toolreplay.models.anthropic_messages import AnthropicMessagesModel
    from toolreplay.models.base import ChatModel, ModelSettings
    from toolreplay.models.endpoint import chat_model, model_settings
    from toolreplay.models.inprocess import StandinModel, reply_from_completion
    from toolreplay.models.openai_chat import OpenAIChatModel
    from toolreplay.models.openai_responses import OpenAIResponsesModel
    from toolreplay.models.scripted import ScriptedModel
    from toolreplay.results.build import build_results, write_results
    from toolreplay.results.format import (
        Results,
        ResultsError,
        check_results,
        load_results,
        results_json_schema,
    )
    from toolreplay.runs.replay import replay_set
    from toolreplay.studies import Study, register_study
    from toolreplay.tools.functions import Tool, tool, tool_schema, toolset_from_functions
    from toolreplay.tools.toolset import ToolError, Toolset
    from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage
    from toolreplay.wire.reader import episodes_from_interactions

    __version__: str
