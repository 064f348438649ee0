"""Tools: toolsets (schemas + functions, validated arguments, faults as tool messages) and tools
from plain Python callables.
"""
