"""Whether a model request let the model call a tool, in every protocol's terms alike: the
``tool_choice`` each protocol sends, read into one word (:func:`tool_choice_mode`).

A request that declares tools but forbids calling them (``tool_choice: none``) offers the
model no tool: the protocols need the declarations kept when the conversation holds earlier
calls (Anthropic refuses a ``tool_use`` history without its tools), so a program withholding
tools in a last round sends them with ``none``. Every wire reader counts such a request as
offering no tool (:attr:`~toolreplay.wire.protocol.ModelRequest.tools_offered`), and the
settings read of a request (:mod:`toolreplay.wire.request_settings`) give the same word.

The forms read:

============================  =========================================================
Chat Completions, Responses    ``tool_choice``: ``"none"``, ``"auto"``, ``"required"``, or
                               a named function (``{"type": "function", ...}``); the
                               Responses ``{"type": "allowed_tools", "mode": ...}``;
                               Chat Completions' legacy ``function_call``: ``"none"``,
                               ``"auto"``, ``{"name": ...}``
Anthropic Messages             ``tool_choice``: ``{"type": "none" | "auto" | "any" |
                               "tool"}``
Gemini                         ``toolConfig.functionCallingConfig.mode`` (or
                               ``tool_config.function_calling_config.mode``): ``NONE``,
                               ``AUTO``, ``ANY``, ``VALIDATED`` (a name, any case, or the
                               proto's number: 1 ``AUTO``, 2 ``ANY``, 3 ``NONE``,
                               4 ``VALIDATED``)
Bedrock Converse               ``toolConfig.toolChoice``: ``{"auto": {}}``, ``{"any": {}}``,
                               ``{"tool": {"name": ...}}`` (Bedrock has no ``none``)
============================  =========================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

#: The one word a request's tool choice reads as: ``none`` (no tool may be called),
#: ``auto`` (the model decides), ``required`` (it must call one: Anthropic's ``any``,
#: Gemini's ``ANY``), ``named`` (it must call the one named).
ToolChoiceMode = Literal["none", "auto", "required", "named"]

_WORDS: dict[str, ToolChoiceMode] = {
    "none": "none",
    "auto": "auto",
    "required": "required",
    "any": "required",
    "validated": "auto",  # Gemini: calls or text, calls checked against their schemas
    "function": "named",
    "tool": "named",
    "custom": "named",
    "allowed_tools": "auto",
}

#: Gemini's ``FunctionCallingConfig.Mode`` numbers (``$alt=json;enum-encoding=int``).
_GEMINI_MODES = {1: "auto", 2: "any", 3: "none", 4: "validated"}


def _word(value: Any) -> ToolChoiceMode | None:
    if isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    if isinstance(value, int) and not isinstance(value, bool):
        return _WORDS.get(_GEMINI_MODES.get(value, ""))
    return None


def _field(body: Mapping[str, Any], *names: str) -> Any:
    return next((body[n] for n in names if n in body), None)


def tool_choice_mode(body: Any) -> ToolChoiceMode | None:
    """The tool choice a model request's JSON ``body`` sent, as one word
    (:data:`ToolChoiceMode`), whatever its protocol (the forms: module docstring); None when
    it sent none or one of a form not read (the protocol's default, ``auto``, then holds).
    Never raises."""
    if not isinstance(body, Mapping):
        return None
    choice = body.get("tool_choice")
    if choice is None:  # Chat Completions' legacy form: "none", "auto" or {"name": ...}
        choice = body.get("function_call")
        if isinstance(choice, Mapping) and "name" in choice:
            return "named"
    if isinstance(choice, str):
        return _word(choice)
    if isinstance(choice, Mapping):
        if choice.get("type") == "allowed_tools":  # Responses: {"mode": "auto"|"required"}
            return _word(choice.get("mode")) or "auto"
        return _word(choice.get("type"))
    config = _field(body, "toolConfig", "tool_config")
    if not isinstance(config, Mapping):
        return None
    calling = _field(config, "functionCallingConfig", "function_calling_config")
    if isinstance(calling, Mapping):  # Gemini
        return _word(calling.get("mode"))
    bedrock = config.get("toolChoice")
    if isinstance(bedrock, Mapping) and len(bedrock) == 1:
        return _word(next(iter(bedrock)))
    return None


def calls_forbidden(body: Any) -> bool:
    """Whether a model request's ``body`` forbids every tool call (``tool_choice`` ``none``
    in its protocol's form: :func:`tool_choice_mode`), tools declared or not."""
    return tool_choice_mode(body) == "none"


__all__ = ["ToolChoiceMode", "calls_forbidden", "tool_choice_mode"]
