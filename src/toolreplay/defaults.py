"""Where a project keeps what toolreplay reads, relative to the working folder: the defaults of
``--eval`` and ``--cassettes``, and what a re-record command leaves out when a set uses them.
Plain constants, cheap to import (the CLI's option declarations read them). This is the one
place they are defined: the commands, the re-record command and ``toolreplay diff`` import them
from here.

``DEFAULT_EVAL`` is this repository's reference study's eval file (the weather study), read
only when a command needs an eval file and ``--eval`` names none; nothing else in the engine
assumes it exists (a study's own project passes ``--eval``, or keeps its eval file at this
path)."""

from pathlib import Path

#: The eval file the commands read unless ``--eval`` names another.
DEFAULT_EVAL = Path("evals/weather.yaml")
#: The folder holding cassette sets unless ``--cassettes`` names another.
DEFAULT_CASSETTES = Path("cassettes")
