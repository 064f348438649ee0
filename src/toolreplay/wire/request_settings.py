"""What a recorded model request sent, in every protocol's terms alike: the model, the
temperature, the system prompt, the tool schemas and whether the model could call them
(:func:`sent_settings`). The audit of a
test suite's arms compares these between configurations, whatever wire each spoke."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolreplay.wire.interactions import Exchange
from toolreplay.wire.reader import model_endpoint, protocol_of
from toolreplay.wire.tool_choice import ToolChoiceMode, tool_choice_mode


@dataclass(frozen=True)
class SentSettings:
    """``model`` (the body's, else the one the path names; ``""`` when neither), ``temperature``
    (None when not sent), ``system`` (the system messages' contents, in order: Chat Completions
    ``system``/``developer`` messages, Responses ``instructions``, Anthropic ``system``, Gemini
    ``systemInstruction``, Bedrock ``system``), ``tools`` (the tool schemas as sent, None
    when none were) and ``tool_choice``: the tool choice sent, as one word whatever the
    protocol (``"none"``, ``"auto"``, ``"required"``, ``"named"``:
    :func:`~toolreplay.wire.tool_choice.tool_choice_mode`; None when not sent). The schemas
    of a request whose ``tool_choice`` is ``"none"`` are declared but offer the model
    nothing (:attr:`tools_offered`)."""

    model: str
    temperature: Any
    system: tuple[Any, ...]
    tools: Any
    tool_choice: ToolChoiceMode | None = None

    @property
    def tools_offered(self) -> bool:
        """Whether the model could call a tool: schemas sent and a tool choice other than
        ``"none"``."""
        return bool(self.tools) and self.tool_choice != "none"


def _temperature(body: dict[str, Any]) -> Any:
    if "temperature" in body:
        return body["temperature"]
    for nested in ("generationConfig", "generation_config", "inferenceConfig"):
        config = body.get(nested)
        if isinstance(config, dict) and "temperature" in config:
            return config["temperature"]
    return None


def sent_settings(exchange: Exchange) -> SentSettings:
    """The settings a model request sent (:class:`SentSettings`); for an exchange that is no
    model request of a known protocol, its body's ``model``, ``temperature`` and ``tools``
    where they are, and no system prompt."""
    body = exchange.request_body if isinstance(exchange.request_body, dict) else {}
    protocol = protocol_of(exchange)
    system: tuple[Any, ...] = ()
    if protocol is not None:
        messages = protocol.request(exchange, {}).messages
        system = tuple(
            m.get("content") for m in messages if m.get("role") in ("system", "developer")
        )
    config = body.get("toolConfig")
    tools = (
        body.get("tools")
        or body.get("functions")  # Chat Completions' legacy function declarations
        or (config.get("tools") if isinstance(config, dict) else None)
    )
    return SentSettings(
        model_endpoint(exchange)[1],
        _temperature(body),
        system,
        tools or None,
        tool_choice_mode(body),
    )


__all__ = ["SentSettings", "sent_settings"]
