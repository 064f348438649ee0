"""The HTML report: view models per section (summary, episodes, fidelity, transcripts, trials),
text to HTML (text) and the renderer (render) with its templates.
"""
