"""Entry point: the application with every command registered, in the order ``--help`` lists
them. Each command's module imports what the command needs when it runs, so ``--help`` and
``--version`` load none of it.

typer builds the application from the command functions' signatures at every start, whatever
the command: their annotations must be cheap to get. The command modules therefore do without
``from __future__ import annotations`` (typer would compile and evaluate every annotation
string, twice per command: about 10 ms of ``--help``'s 0.2 s), and annotate with names
imported only for type checking in quotes."""

from __future__ import annotations

import sys
from typing import Any

from toolreplay.cli import (  # noqa: F401 (registration)
    audit,
    convert,
    diff,
    merge,
    mutate,
    record,
    report,
    run,
)
from toolreplay.cli.app import app
from toolreplay.cli.helptext import HelpCommand

__all__ = ["app", "main"]

#: The order ``--help`` lists the commands in (each module registers one).
ORDER = ("run", "merge", "report", "diff", "mutate", "audit", "record", "convert")
app.registered_commands.sort(key=lambda c: ORDER.index(c.callback.__module__.rsplit(".", 1)[1]))
for _command in app.registered_commands:
    _command.cls = HelpCommand  # --help on one screen (toolreplay.cli.helptext)


def main() -> None:
    """``toolreplay``: run the application (exit codes 0 success, 1 a failed check or another
    failure, 2 a usage error, 130 interrupted; standard output closed by its reader, as in
    ``toolreplay report --out - | head``, ends the command quietly with 1, the rest of its
    output discarded). Whatever happens, what is printed passes the
    redaction step (:mod:`toolreplay.redaction`) and an unexpected error is one line, not a
    traceback (``TOOLREPLAY_TRACEBACK=1`` shows it).

    Called as the process's entry (the ``toolreplay`` script, ``python -m toolreplay``), the
    process ends as soon as the command has: its output flushed and its files closed, the
    interpreter's teardown (freeing every object, joining idle threads) is skipped
    (:func:`_end_process`). Called from other code (a test, ``python -c``), it raises
    ``SystemExit`` as usual."""
    import os

    from toolreplay.redaction import install_streams, redact_text

    caller = sys._getframe(1)
    install_streams()
    try:
        try:
            try:
                app(prog_name="toolreplay")
            finally:
                sys.stdout.flush()
        except BrokenPipeError:
            _discard_stdout()
            sys.exit(BROKEN_PIPE)
        except KeyboardInterrupt:
            sys.stderr.write("error: interrupted\n")
            sys.exit(130)
        except (MemoryError, OSError) as exc:
            if (message := resource_message(exc) or file_message(exc)) is None:
                raise
            sys.stderr.write(f"error: {redact_text(message)}\n")
            sys.exit(1)
        except Exception as exc:
            if os.environ.get("TOOLREPLAY_TRACEBACK"):
                raise
            text = " ".join(redact_text(str(exc)).split())[:500]
            sys.stderr.write(
                f"error: {type(exc).__name__}: {text} (an internal error; set "
                "TOOLREPLAY_TRACEBACK=1 to see where, and please report it)\n"
            )
            sys.exit(1)
    except SystemExit as exc:
        if _is_process_entry(caller):
            _end_process(exc.code)
        raise


def resource_message(exc: BaseException) -> str | None:
    """What to say when the machine ran out of something (``exc``: memory, file descriptors,
    disk space, processes), with what to do; None for any other error."""
    import errno
    import resource

    if isinstance(exc, MemoryError) or getattr(exc, "errno", None) == errno.ENOMEM:
        return (
            "out of memory: the machine (or this process's limit, `ulimit -v`) has no more "
            "to give; free some, or run fewer processes (--workers 1)"
        )
    code = getattr(exc, "errno", None)
    if code in (errno.EMFILE, errno.ENFILE):
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return (
            f"too many open files: this process may open {soft} (`ulimit -n`); raise the "
            "limit (`ulimit -n 4096`) or run fewer processes (--workers 1)"
        )
    if code in (errno.ENOSPC, errno.EDQUOT):
        filename = getattr(exc, "filename", None)
        where = f" writing {filename}" if filename else ""
        return f"no space left on the device{where}: free some space and run again"
    if code == errno.EAGAIN and "thread" in str(exc).lower():
        return "cannot start another thread or process (`ulimit -u`); run with --workers 1"
    return None


#: What an error of the file system says happened, and what to do, by errno name.
_FILE_ERRORS = {
    "EACCES": ("permission denied", "give a path you may use, or change its permissions"),
    "EPERM": ("operation not permitted", "give a path you may use, or change its permissions"),
    "EROFS": ("the file system is read-only", "write somewhere writable (--out)"),
    "ENOTDIR": ("a part of the path is not a folder", "check the path"),
    "EISDIR": ("a folder where a file is needed", "give a file"),
    "ENOENT": ("no such file or folder (moved or removed meanwhile?)", "check it and run again"),
    "ELOOP": ("too many symbolic links", "check the links on the path"),
    "EIO": ("an input/output error of the device", "check the disk, then run again"),
}


def file_message(exc: BaseException) -> str | None:
    """What to say when the file system refused something (``exc``, an ``OSError`` naming a
    file: permission, a read-only file system, a path that is not a folder, a file removed
    meanwhile, a device error) that no command caught: the file, what happened and what to
    do, as a problem of the machine's files rather than an internal error; None otherwise."""
    import errno

    filename = getattr(exc, "filename", None)
    name = errno.errorcode.get(getattr(exc, "errno", None) or 0, "")
    if not isinstance(exc, OSError) or filename is None or name not in _FILE_ERRORS:
        return None
    what, todo = _FILE_ERRORS[name]
    return f"{filename}: {what}; {todo}"


#: The exit status when standard output's reader went away: 1, quietly, as click and rich
#: end a command then (their handlers catch it first wherever they print).
BROKEN_PIPE = 1


def _discard_stdout() -> None:
    """Point standard output at the null device: its reader is gone, and what is still
    buffered or printed later (at exit) must go nowhere rather than fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _is_process_entry(frame: Any) -> bool:
    """Whether ``frame`` is the code the interpreter was started to run: a script or
    ``python -m`` module (``__name__ == "__main__"`` in a real file), with no tracer or
    profiler (coverage writes its data at exit) attached."""
    return (
        frame.f_globals.get("__name__") == "__main__"
        and not frame.f_code.co_filename.startswith("<")
        and sys.gettrace() is None
        and sys.getprofile() is None
        and "coverage" not in sys.modules
    )


def _end_process(code: object) -> None:
    """End the process now with ``code`` (as ``SystemExit`` would) once standard output and
    error are flushed and no other non-daemon thread runs; otherwise return, and the usual
    exit follows."""
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate()[1:]):
        return  # a thread still working: let the interpreter join it
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    try:
        if "logging" in sys.modules:
            sys.modules["logging"].shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return  # e.g. a closed pipe: the usual exit reports it
    os._exit(status & 0xFF if status >= 0 else 1)
