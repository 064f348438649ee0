"""The wire: episode data (messages, tool calls, tool results, rounds, usage), parsing model
replies (streamed or not), recorded HTTP interactions (:mod:`~toolreplay.wire.interactions`) and
the wire readers that rebuild episodes from them: one module per protocol
(:mod:`~toolreplay.wire.chat_completions`, :mod:`~toolreplay.wire.responses`,
:mod:`~toolreplay.wire.anthropic_messages`, :mod:`~toolreplay.wire.gemini`,
:mod:`~toolreplay.wire.bedrock_converse`), each filling :mod:`~toolreplay.wire.protocol`'s
shape, and one episode builder for all (:mod:`~toolreplay.wire.reader`). The lowest engine
layer: it imports no other toolreplay package.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "ANTHROPIC_MESSAGES": "anthropic_messages",
    "RESPONSES": "responses",
    "exchange_status_error": "replies",
    "decode_body": "content_encoding",
    "header_text": "interactions",
    "Episode": "episode",
    "Exchange": "interactions",
    "FINISH_STOP_REASONS": "episode",
    "NO_FINISH_REASON": "episode",
    "ended_stop_reason": "episode",
    "Message": "episode",
    "ModelReply": "episode",
    "ModelReplyError": "replies",
    "REASONING_FIELDS": "episode",
    "Round": "episode",
    "ToolCall": "episode",
    "ToolResult": "episode",
    "Usage": "episode",
    "WireEpisodeError": "interactions",
    "WireRecord": "interactions",
    "WireRound": "interactions",
    "episode_from_interactions": "reader",
    "episodes_from_interactions": "reader",
    "hands_off": "reader",
    "event_chunks": "stream",
    "model_endpoint": "reader",
    "SentSettings": "request_settings",
    "sent_settings": "request_settings",
    "ToolChoiceMode": "tool_choice",
    "calls_forbidden": "tool_choice",
    "tool_choice_mode": "tool_choice",
    "no_episode_error": "unread",
    "parse_chat_reply": "replies",
    "read_exchanges": "interactions",
    "read_tool_result": "tool_results",
    "read_wire_episodes": "reader",
    "PROTOCOLS": "reader",
    "ModelRequest": "protocol",
    "WireProtocol": "protocol",
    "protocol_of": "reader",
    "reasoning_text": "episode",
    "status_error_text": "replies",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
