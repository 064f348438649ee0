"""The command-line interface: one module per command (run, merge, report, diff, audit, record),
wired in cli.main.

A standard stream the process was started without (``toolreplay run >&-``: ``sys.stdout`` is
None) is opened on the null device before anything else is imported, so what would have been
printed is discarded and the command runs as it would with its output thrown away.
"""

import os as _os
import sys as _sys


def _open_closed_streams() -> None:
    for name, mode in (("stdout", "w"), ("stderr", "w"), ("stdin", "r")):
        if getattr(_sys, name) is None:
            setattr(_sys, name, open(_os.devnull, mode, encoding="utf-8"))


_open_closed_streams()
