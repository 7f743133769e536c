"""The one place errors become exit codes, and the one line they are printed as.

0 success · 1 a check failed · 2 bad input or usage · 3 refusal (a number could be wrong) · 4 gate failed ·
5 an internal error (a bug in turnbench: the line says how to see its traceback).

Every error is one line on stderr of at most ``MAX_MESSAGE`` characters: a 50 MB id in an input file must not
become a 50 MB message. Click's own usage errors (an unknown option, a port out of range) are shown the same way.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, ParamSpec, TypeVar

import click

from turnbench.api.cli_support import errors, settings, terminating_raises

EXIT_CODES = (
    # most specific first: the first matching class wins
    (errors.GateFailed, 4),
    (errors.Refusal, 3),
    (errors.BadInput, 2),
    (errors.TurnbenchError, 1),
)
EXIT_USAGE = 2
EXIT_INTERNAL = 5
MAX_MESSAGE = 300
DEBUG_ENV = settings.DEBUG.name

P = ParamSpec("P")
R = TypeVar("R")


def exit_code_for(exc: errors.TurnbenchError) -> int:
    return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line, cut to ``limit`` characters with the full length said."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    return f"{flat[:limit]}… ({len(flat)} characters)"


def fail(label: str, message: str, code: int) -> NoReturn:
    click.echo(one_line(f"turnbench: {label}: {message}"), err=True)
    sys.exit(code)


def debugging() -> bool:
    return settings.debugging()


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Print a library error as one line on stderr and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except errors.TurnbenchError as exc:
            if debugging():
                traceback.print_exc()
            fail(type(exc).__name__, str(exc), exit_code_for(exc))

    return wrapper


class OneLineGroup(click.Group):
    """A click group whose every failure — usage errors and unexpected exceptions alike — is one line.

    The last-resort handler turns an exception nothing above anticipated into one line naming its type and
    exit 5; ``--debug`` (or TURNBENCH_DEBUG=1) prints the traceback as well.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # the order they were added in: the data flow, not the alphabet

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            # SIGTERM and SIGHUP end a command through its `finally` blocks, as Ctrl-C does
            with terminating_raises():
                return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            fail("BadInput", exc.format_message(), exc.exit_code if exc.exit_code else EXIT_USAGE)
        except click.Abort:
            fail("Aborted", "interrupted", 130)
        except KeyboardInterrupt:
            fail("Aborted", "interrupted", 130)
        except SystemExit:
            raise
        except BrokenPipeError:
            # the reader went away (`turnbench compare ... | head`): nothing more can be said to it
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - kept open until the interpreter exits
            sys.exit(1)
        except Exception as exc:  # the last resort: a bug, reported as one line, never a bare traceback
            if debugging():
                traceback.print_exc()
            fail("InternalError", f"{type(exc).__name__}: {exc} (a bug in turnbench; rerun with --debug for the "
                 "traceback)", EXIT_INTERNAL)


def quick_exit(code: str | int | None) -> NoReturn:
    """End the process with ``code`` (as ``sys.exit`` reads it) once its work is done and written: the exit handlers
    run and the standard streams are flushed, then the process ends without the interpreter freeing every object
    one by one (a score of 2,000 meetings holds millions; freeing them took a second and a half, after the last
    file was closed). With a thread of its own still running, the interpreter's own exit waits for it as usual; the
    threads a Python engine left running (``processes.abandon``, said in a note) are not waited for."""
    import atexit
    import threading

    from turnbench.api.cli_support import abandoned_alive

    if threading.active_count() > 1 and not abandoned_alive():
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 1  # a reader gone (a closed pipe) or a closed stream: what was said may be lost
    os._exit(status)


def say(line: str) -> None:
    """A line of the command's outcome (what was written, what it cost): stderr, so stdout stays the result."""
    click.echo(line, err=True)


def note(line: str) -> None:
    """A progress note (the stack provider chosen, a load, a seed): on stderr only with --verbose
    (TURNBENCH_VERBOSE=1), so that a command that is refused prints exactly one line, its refusal."""
    if settings.verbose():
        click.echo(line, err=True)
