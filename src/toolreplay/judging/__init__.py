"""Judging: reading values in answers (values), tool values (toolvalues), grounding, verdicts,
failure modes and the phrasing corpus.
"""
