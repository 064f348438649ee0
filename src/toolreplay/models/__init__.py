"""Chat models: the protocol the hosts call (base), endpoints and keys (endpoint), the openai SDK
client (openai_chat), scripted and in-process models for tests.
"""
