"""Chat models: the protocol the hosts call (base), endpoints and keys (endpoint), a client per
wire protocol (openai_chat: Chat Completions; openai_responses: the Responses API;
anthropic_messages: Anthropic Messages; :func:`chat_model` picks one from the settings),
scripted and in-process models for tests.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "AnthropicMessagesModel": "anthropic_messages",
    "ChatModel": "base",
    "ConversionError": "base",
    "MODEL_PROTOCOLS": "base",
    "OpenAIResponsesModel": "openai_responses",
    "chat_model": "endpoint",
    "EndpointError": "endpoint",
    "KEY_VARIABLES": "endpoint",
    "ModelSettings": "base",
    "OpenAIChatModel": "openai_chat",
    "ScriptedModel": "scripted",
    "StandinModel": "inprocess",
    "model_settings": "endpoint",
    "reply_from_completion": "inprocess",
    "resolve_endpoint": "endpoint",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
