"""Studies built on the engine. The engine never imports them: the CLI wires them in, and the
rest of the engine reaches a study through its :class:`~toolreplay.studies.Study`
(found by name, :func:`~toolreplay.studies.load_study`).
"""
