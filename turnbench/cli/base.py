"""The one place library errors become exit codes, and the one line they are printed as.

0 success · 1 a check failed · 2 bad input or usage · 3 refusal (a number could be wrong) · 4 gate failed.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import click

from turnbench import errors

EXIT_CODES = (
    # most specific first: the first matching class wins
    (errors.GateFailed, 4),
    (errors.Refusal, 3),
    (errors.BadInput, 2),
    (errors.TurnbenchError, 1),
)

P = ParamSpec("P")
R = TypeVar("R")


def exit_code_for(exc: errors.TurnbenchError) -> int:
    return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Print a library error as one line on stderr and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except errors.TurnbenchError as exc:
            click.echo(f"turnbench: {type(exc).__name__}: {exc}", err=True)
            sys.exit(exit_code_for(exc))

    return wrapper


def say(line: str) -> None:
    """A progress or diagnostic line: stderr, so stdout stays the command's result."""
    click.echo(line, err=True)
