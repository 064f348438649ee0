"""The pytest plugin: toolreplay's cassettes, matching and unplayed check for ``@pytest.mark.vcr``
tests.
"""
