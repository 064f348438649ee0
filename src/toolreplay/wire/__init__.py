"""The wire: episode data (messages, tool calls, tool results, rounds, usage), parsing model
replies (streamed or not), recorded HTTP interactions (:mod:`~toolreplay.wire.interactions`) and
the wire readers that rebuild episodes from them, one per protocol
(:mod:`~toolreplay.wire.chat_completions`). The lowest engine layer: it imports no other
toolreplay package.
"""

from __future__ import annotations

import importlib
from typing import Any

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "Episode": "episode",
    "Exchange": "interactions",
    "FINISH_STOP_REASONS": "episode",
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
    "episode_from_interactions": "chat_completions",
    "episodes_from_interactions": "chat_completions",
    "event_chunks": "stream",
    "parse_chat_reply": "replies",
    "read_exchanges": "interactions",
    "read_wire_episodes": "chat_completions",
    "reasoning_text": "episode",
    "status_error_text": "replies",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
