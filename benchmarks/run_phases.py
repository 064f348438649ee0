"""``toolreplay ARGS`` as the ``toolreplay`` script runs it, with the wall-clock time of each
phase's end written as JSON to the file ``$BENCH_PHASES_FILE`` names:

    BENCH_PHASES_FILE=phases.json python benchmarks/run_phases.py run --out /tmp/out

``started`` (this script's first line: the interpreter is up), ``replay_start`` and
``replay_end`` (around the first call of :data:`REPLAY`, ``replay_outcomes``: every episode
of the run, and the audit's own, in one call), ``replay_last_end`` (the end of its last call
that returned episodes: the audit may replay again, and calls it with no episode too; from
there on the run is serial, judging, auditing and writing in this process), ``write_start``
(:data:`WRITERS`: the results and report written, then the table printed) and ``done`` (the
command returned; the process ends next). Times are ``time.time()``, so the caller can add
the interpreter's start-up before ``started`` and the exit after ``done``. Nothing else
changes: the command runs as the process's entry, so it ends as the ``toolreplay`` script
does.

A hooked function that no longer exists stops the script (exit 3) naming it, before the
command runs: a rename in the code shows here, not as a missing stamp. A stamp the command
never reached is absent from the file (``toolreplay --help`` replays nothing).
"""

import time

STAMPS = {"started": time.time()}

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

#: ``(module, function)`` that replays a run's episodes (every worker's outcomes gathered).
REPLAY = ("toolreplay.runs.replay", "replay_outcomes")
#: ``(module, function)`` candidates that write a run's results, the first that exists:
#: ``publish_run`` now, ``write_outputs`` in older trees (before/after runs).
WRITERS = (("toolreplay.cli.run", "publish_run"), ("toolreplay.cli.run", "write_outputs"))


def _stamped(module: Any, name: str, before: str, after: str | None, last: str | None) -> None:
    original = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        STAMPS.setdefault(before, time.time())  # the first call (the audit may replay more)
        result: Any = None
        try:
            result = original(*args, **kwargs)
            return result
        finally:
            now = time.time()
            if after is not None:
                STAMPS.setdefault(after, now)  # the first call's end
            if last is not None and (result or last not in STAMPS):
                STAMPS[last] = now  # the last call that replayed something (not an empty one)

    setattr(module, name, wrapper)


def _hook(
    candidates: tuple[tuple[str, str], ...],
    before: str,
    after: str | None = None,
    last: str | None = None,
) -> None:
    import importlib

    for module_name, name in candidates:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            _stamped(module, name, before, after, last)
            return
    names = " or ".join(f"{m}.{n}" for m, n in candidates)
    sys.stderr.write(f"run_phases: {names} is gone; hook what the run calls now\n")
    raise SystemExit(3)


def _dump() -> None:
    STAMPS.setdefault("done", time.time())
    with open(os.environ["BENCH_PHASES_FILE"], "w", encoding="utf-8") as f:
        json.dump(STAMPS, f)


def main() -> None:
    import toolreplay.cli.main as cli_main

    _hook((REPLAY,), "replay_start", "replay_end", "replay_last_end")
    _hook(WRITERS, "write_start")
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
