"""The Chat Completions wire: episode data (messages, tool calls, tool results, rounds, usage) and
parsing model replies.
"""
