"""toolreplay: record/replay and evaluation of LLM tool-calling loops.

Data flow, one module per stage::

    evals ─► experiment ─► hosts ─► model (openai SDK over httpx) ─┐
                             │                                     ├─ cassettes (vcrpy)
                          toolsets ─► openmeteo (requests) ────────┘
                             ▼
                          episode ─► judge / failures / audit ─► results ─► report

The public API is importable from here; names are loaded on first use, so ``import
toolreplay`` stays cheap (no openai, vcrpy or pydantic import until a name needs it):

Hosts and limits
    :func:`run_loop` (the ``while``), :func:`run_single` (the one-round ``if``),
    :func:`run_host` (by name), :class:`LoopLimits` (``max_rounds``, ``token_budget`` in
    tokens). Each returns an :class:`Episode`.
Models
    :class:`ChatModel` (the protocol: ``complete(messages, tools) -> ModelReply``);
    :class:`OpenAIChatModel` (any OpenAI-compatible endpoint through the openai SDK over a
    passed-in ``httpx.Client``), :class:`ModelSettings` and :func:`model_settings`;
    in process: :class:`ScriptedModel` (scripted replies or functions),
    :class:`StandinModel` (the bundled stand-in policy, no server).
Episodes
    :class:`Episode`, :class:`ModelReply`, :class:`ToolCall`, :class:`ToolResult`,
    :class:`Usage`, :class:`Round`.
Tools
    :class:`Toolset`, :class:`ToolError`; from plain callables: :func:`tool`,
    :func:`tool_schema`, :func:`toolset_from_functions` (schema from type hints, or given);
    the study's toolsets: :func:`oneshot_toolset`, :func:`atomic_toolset`,
    :class:`Heuristics`, and :class:`OpenMeteoClient`.
Judging
    :class:`Judge`, :data:`FULL_JUDGE`, :data:`NARROW_JUDGE`, :class:`Verdict`; the failure
    classifier :func:`classify` and :class:`FailureMode`; the fidelity audit
    :func:`run_audit` and :class:`Audit`.
Results
    :class:`Results` (the pydantic model of ``results.json``), :func:`build_results`,
    :func:`load_results`, :func:`check_results`, :func:`write_results`,
    :func:`results_json_schema`.
Cassettes and sets
    :func:`replay_cassette`, :class:`CassetteMiss`, :class:`UnplayedInteractions`,
    :class:`CassetteError`, :func:`load_eval`, :func:`replay_set`.

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
    "ChatModel": "model",
    "OpenAIChatModel": "model",
    "ModelSettings": "model",
    "model_settings": "model",
    "ScriptedModel": "model",
    "StandinModel": "inprocess",
    "reply_from_completion": "inprocess",
    # episodes
    "Episode": "episode",
    "ModelReply": "episode",
    "ToolCall": "episode",
    "ToolResult": "episode",
    "Usage": "episode",
    "Round": "episode",
    # tools
    "Toolset": "toolsets",
    "ToolError": "toolsets",
    "Heuristics": "toolsets",
    "oneshot_toolset": "toolsets",
    "atomic_toolset": "toolsets",
    "Tool": "tools",
    "tool": "tools",
    "tool_schema": "tools",
    "toolset_from_functions": "tools",
    "OpenMeteoClient": "openmeteo",
    # judging
    "Judge": "judge",
    "Verdict": "judge",
    "FULL_JUDGE": "judge",
    "NARROW_JUDGE": "judge",
    "FailureMode": "failures",
    "classify": "failures",
    "Audit": "audit",
    "run_audit": "audit",
    # results
    "Results": "results",
    "ResultsError": "results",
    "build_results": "results",
    "check_results": "results",
    "load_results": "results",
    "write_results": "results",
    "results_json_schema": "results",
    # cassettes, eval files, sets
    "replay_cassette": "cassettes",
    "CassetteMiss": "cassettes",
    "CassetteError": "cassettes",
    "UnplayedInteractions": "cassettes",
    "load_eval": "evals",
    "EvalSuite": "evals",
    "replay_set": "experiment",
}

__all__ = [
    "FULL_JUDGE",
    "NARROW_JUDGE",
    "Audit",
    "CassetteError",
    "CassetteMiss",
    "ChatModel",
    "Episode",
    "EvalSuite",
    "FailureMode",
    "Heuristics",
    "Judge",
    "LoopLimits",
    "ModelReply",
    "ModelSettings",
    "OpenAIChatModel",
    "OpenMeteoClient",
    "Results",
    "ResultsError",
    "Round",
    "ScriptedModel",
    "StandinModel",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "Toolset",
    "UnplayedInteractions",
    "Usage",
    "Verdict",
    "__version__",
    "atomic_toolset",
    "build_results",
    "check_results",
    "classify",
    "load_eval",
    "load_results",
    "model_settings",
    "oneshot_toolset",
    "replay_cassette",
    "replay_set",
    "reply_from_completion",
    "results_json_schema",
    "run_audit",
    "run_host",
    "run_loop",
    "run_single",
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
    from .audit import Audit, run_audit
    from .cassettes import CassetteError, CassetteMiss, UnplayedInteractions, replay_cassette
    from .episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage
    from .evals import EvalSuite, load_eval
    from .experiment import replay_set
    from .failures import FailureMode, classify
    from .hosts import LoopLimits, run_host, run_loop, run_single
    from .inprocess import StandinModel, reply_from_completion
    from .judge import FULL_JUDGE, NARROW_JUDGE, Judge, Verdict
    from .model import ChatModel, ModelSettings, OpenAIChatModel, ScriptedModel, model_settings
    from .openmeteo import OpenMeteoClient
    from .results import (
        Results,
        ResultsError,
        build_results,
        check_results,
        load_results,
        results_json_schema,
        write_results,
    )
    from .tools import Tool, tool, tool_schema, toolset_from_functions
    from .toolsets import Heuristics, ToolError, Toolset, atomic_toolset, oneshot_toolset

    __version__: str
