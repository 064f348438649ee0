"""The weather study: its toolsets (oneshot with the three reference heuristics, atomic), the Open-
Meteo client, the weather measures the judge reads, and its baseline audit.
"""
