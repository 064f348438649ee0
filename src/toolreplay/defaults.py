"""Where a project keeps what toolreplay reads, relative to the working folder: the defaults of
``--eval`` and ``--cassettes``, and what a re-record command leaves out when a set uses them.
Plain constants, cheap to import (the CLI's option declarations read them)."""

from pathlib import Path

#: The eval file the commands read unless ``--eval`` names another.
DEFAULT_EVAL = Path("evals/weather.yaml")
#: The folder holding cassette sets unless ``--cassettes`` names another.
DEFAULT_CASSETTES = Path("cassettes")
