"""``toolreplay ARGS`` as the ``toolreplay`` script runs it, with the wall-clock time of each
phase's end written as JSON to the file ``$BENCH_PHASES_FILE`` names:

    BENCH_PHASES_FILE=phases.json python benchmarks/run_phases.py run --out /tmp/out

``started`` (this script's first line: the interpreter is up), ``replay_start`` and
``replay_end`` (around the first call of ``toolreplay.runs.replay.replay_outcomes``),
``write_start`` (the results and report written, then the table printed) and ``done`` (the
command returned; the process ends next). Times are ``time.time()``, so the caller can add
the interpreter's start-up before ``started`` and the exit after ``done``. Nothing else
changes: the command runs as the process's entry, so it ends as the ``toolreplay`` script
does.
"""

import time

STAMPS = {"started": time.time()}

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402


def _stamped(module: Any, name: str, before: str, after: str | None = None) -> None:
    original = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        STAMPS.setdefault(before, time.time())  # the first call (the audit may replay more)
        try:
            return original(*args, **kwargs)
        finally:
            if after is not None:
                STAMPS.setdefault(after, time.time())

    setattr(module, name, wrapper)


def _dump() -> None:
    STAMPS.setdefault("done", time.time())
    with open(os.environ["BENCH_PHASES_FILE"], "w", encoding="utf-8") as f:
        json.dump(STAMPS, f)


def main() -> None:
    import toolreplay.cli.main as cli_main
    import toolreplay.cli.run as cli_run
    import toolreplay.runs.replay as runs_replay

    _stamped(runs_replay, "replay_outcomes", "replay_start", "replay_end")
    # the write step: publish_run now, write_outputs in older trees (before/after runs)
    writer = "publish_run" if hasattr(cli_run, "publish_run") else "write_outputs"
    _stamped(cli_run, writer, "write_start")
    end_process = getattr(cli_main, "_end_process", None)  # absent before the fast exit
    if end_process is not None:

        def ending(code: object) -> None:
            _dump()
            end_process(code)

        cli_main._end_process = ending
    sys.argv = ["toolreplay", *sys.argv[1:]]
    try:
        cli_main.main()
    finally:
        _dump()  # the usual exit (no fast exit in this version): stamped here


if __name__ == "__main__":
    main()
