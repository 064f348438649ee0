"""Cassettes: the format, reading and validation with the parse cache, miss explanations, the
manifest, the vcrpy adapter and the replay transport.
"""
