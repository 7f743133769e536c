"""The ``turnbench`` command: a thin layer over the library.

This is the only module that turns exceptions into exit codes:
0 success · 1 a check failed · 2 bad input or usage · 3 refusal (a number could be wrong) · 4 gate failed.
Heavy imports stay inside the commands so ``turnbench --help`` is instant.
"""

from __future__ import annotations

import functools
import sys

import click

from turnbench import __version__, errors

EXIT_CODES = (
    # most specific first: the first matching class wins
    (errors.GateFailed, 4),
    (errors.Refusal, 3),
    (errors.BadInput, 2),
    (errors.TurnbenchError, 1),
)


def exit_code_for(exc: BaseException) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    raise exc


def handle_errors(fn):
    """Print a library error as one line on stderr and exit with its code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors.TurnbenchError as exc:
            code = exit_code_for(exc)
            click.echo(f"turnbench: {type(exc).__name__}: {exc}", err=True)
            sys.exit(code)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="turnbench")
def main() -> None:
    """Reproducible evaluation of meeting-transcript search."""


# -- commands are registered below, one section per stage --------------------------------------
