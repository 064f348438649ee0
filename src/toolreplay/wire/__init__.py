"""The wire: episode data (messages, tool calls, tool results, rounds, usage), parsing model
replies (streamed or not), recorded HTTP interactions (:mod:`~toolreplay.wire.interactions`) and
the wire readers that rebuild episodes from them, one per protocol
(:mod:`~toolreplay.wire.chat_completions`). The lowest engine layer: it imports no other
toolreplay package.
"""
