"""The replay workers' process pool, watched: results in order, a worker that dies named with
the episode it held (:class:`WorkerDied`), nothing left running after an error or an
interrupt."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeVar

_C = TypeVar("_C")
_R = TypeVar("_R")


class WorkerDied(RuntimeError):
    """A replay worker process ended abruptly (killed, out of memory, crashed); the message
    names the episode it held and how it ended. The run stops: nothing is judged or written."""


#: How often the parent looks at its workers while it waits for them (seconds).
POLL_S = 0.5


def _how(exitcode: int | None) -> str:
    import signal

    if exitcode is None:
        return "ended"
    if exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def _pool_context() -> Any:
    import multiprocessing

    # fork on Linux: the workers start with the openai SDK and the rest imported (~0.5 s a
    # process otherwise); elsewhere the platform's default start method.
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def watched_map(
    run: Callable[[_C], _R],
    chunks: Sequence[_C],
    workers: int,
    initializer: Callable[..., object],
    initargs: tuple[Any, ...],
    meanwhile: Callable[[], object] | None = None,
    doing: str = "replaying",
) -> Generator[_R, None, None]:
    """``run(chunk)`` of each chunk, in order, from a pool of ``workers`` processes (each
    started by ``initializer(*initargs, tell)``: ``tell``, a queue on which a worker puts
    ``(its pid, the key of the episode it takes)``), ``meanwhile()`` called here once they
    have their work (their results wait in the pipe). The parent never blocks for long (it waits
    :data:`POLL_S` at a time, so Ctrl-C and SIGTERM are answered at once) and watches its
    workers: one that dies raises :class:`WorkerDied` naming the episode it held, and the
    others are stopped; nothing is left running. ``doing``: what the workers do to an episode,
    in that message (``"replaying"``, ``"mutating"``)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout
    from concurrent.futures.process import BrokenProcessPool

    mp = _pool_context()
    tell = mp.SimpleQueue()
    held: dict[int, str] = {}
    pool = ProcessPoolExecutor(workers, mp_context=mp, initializer=initializer,
                               initargs=(*initargs, tell))  # fmt: skip
    clean = False
    procs: dict[int, Any] = {}
    try:
        futures = [pool.submit(run, chunk) for chunk in chunks]
        procs.update(getattr(pool, "_processes", None) or {})
        if meanwhile is not None:  # the workers work meanwhile
            meanwhile()
        for future in futures:
            while True:
                _drain(tell, held)  # the workers' notes never fill the pipe
                try:
                    result = future.result(timeout=POLL_S)
                    break
                except FutureTimeout:
                    procs.update(getattr(pool, "_processes", None) or {})
                    dead = [p for p in procs.values() if p.exitcode is not None]
                    if dead:
                        raise _died(tell, held, dead, doing) from None
                except BrokenProcessPool:
                    procs.update(getattr(pool, "_processes", None) or {})
                    deadline = time.monotonic() + 2.0
                    while True:  # the pool's own thread may be reaping it right now
                        dead = [p for p in procs.values() if p.exitcode not in (None, -15)]
                        if dead or time.monotonic() > deadline:
                            break
                        time.sleep(0.05)
                    raise _died(tell, held, dead, doing) from None
            yield result
        clean = True
    finally:
        if clean:
            pool.shutdown(wait=True)
        else:  # a dead worker, Ctrl-C, SIGTERM: stop every worker now
            procs.update(getattr(pool, "_processes", None) or {})
            for proc in procs.values():
                with contextlib.suppress(Exception):
                    proc.kill()
            for proc in procs.values():
                with contextlib.suppress(Exception):
                    proc.join(timeout=5)
            # the pool's thread sees its workers gone and ends: nothing waits at exit (and
            # the interpreter's exit hook does not race that thread closing its pipes)
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            if manager is not None:
                manager.join(timeout=5)
        with contextlib.suppress(Exception):
            tell.close()


#: What a worker is called in :class:`WorkerDied`'s message, by what it does.
_WORKER = {"replaying": "replay worker", "mutating": "mutation worker"}


def end_with_parent() -> None:
    """In a worker process, as it starts: SIGTERM ends it (the default action, not the
    parent's handler it inherited by fork), and on Linux so does its parent's end, however
    the parent ends (SIGKILL included: the parent-death signal); elsewhere the pool's own
    shutdown ends it. SIGINT (Ctrl-C, sent to the whole process group) is ignored: the
    parent answers it and stops every worker (:func:`watched_map`), so no worker, busy or
    waiting for work, prints a traceback of its own."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform == "linux":
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _drain(tell: Any, held: dict[int, str]) -> None:
    """Read the workers' notes (pid, episode key) into ``held``: the last episode of each."""
    with contextlib.suppress(Exception):
        while not tell.empty():
            pid, key = tell.get()
            held[pid] = key


def _died(
    tell: Any, held: dict[int, str], dead: list[Any], doing: str = "replaying"
) -> WorkerDied:
    """The error for workers ``dead``: which episode each held (from the workers' notes)."""
    _drain(tell, held)
    if not dead:
        during = f" while {doing} one of {', '.join(sorted(set(held.values())))}" if held else ""
        return WorkerDied(
            f"a {_WORKER[doing]} ended abruptly{during}; the run was stopped and nothing was "
            "written"
        )
    p = dead[0]
    key = held.get(p.pid)
    episode = f"while {doing} episode {key}" if key else "before it took an episode"
    return WorkerDied(
        f"a {_WORKER[doing]} (pid {p.pid}) {_how(p.exitcode)} {episode}; the run was stopped "
        f"and nothing was written ({_AGAIN[doing]} it alone with --workers 1 to see if it "
        "fails again)"
    )


#: How to try a worker's episode again, by what the workers did.
_AGAIN = {"replaying": "replay", "mutating": "mutate"}


__all__ = ["POLL_S", "WorkerDied", "end_with_parent", "watched_map"]
