"""Studies built on the engine. The engine never imports them; the CLI, the package top level and
the test doubles wire them in.
"""
