"""The ``turnbench`` command: a client of the Python API (``turnbench.api``), its commands in the order of the data
flow. Each command parses its options, calls the API, formats what it returned; ``turnbench.cli.base`` is the only
place exceptions become exit codes. Heavy imports stay inside the
commands so ``turnbench --help`` is instant.
"""

from __future__ import annotations

import gc
import os

import click

from turnbench.api.cli_support import __version__, settings
from turnbench.cli import compare, corpus, evaluate, export, stack, sweep
from turnbench.cli.base import DEBUG_ENV, EXIT_CODES, OneLineGroup, exit_code_for, handle_errors, quick_exit

__all__ = ["main", "entry", "EXIT_CODES", "exit_code_for", "handle_errors"]


def _debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        os.environ[DEBUG_ENV] = "1"


def _verbose(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        os.environ[settings.VERBOSE.name] = "1"


@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="turnbench")
@click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_debug,
              help="Show the traceback of an error as well as its one line.")
@click.option("--verbose", is_flag=True, expose_value=False, is_eager=True, callback=_verbose,
              help="Print progress notes on stderr (the stack provider chosen, each load, seed and sweep cell); "
                   "without it a refused command prints one line, its refusal.")
def main() -> None:
    """Reproducible evaluation of meeting-transcript search.

    Exit codes: 0 success, 1 a check failed, 2 bad input, 3 refusal (a number could be wrong), 4 the gate found
    a regression, 5 an internal error.
    """


# In the order of the data flow: corpus (and its export) → stack → load → run / fuse / answer → score → bench →
# compare → report, then agreement across corpora.
for command in (corpus.generate_cmd, corpus.validate_cmd, corpus.import_group, corpus.measure_cmd,
                export.export_group,
                stack.stack_group, stack.jars_cmd, stack.load_cmd,
                evaluate.run_cmd, evaluate.fuse_cmd, evaluate.answer_cmd, evaluate.score_cmd, evaluate.bench_cmd,
                sweep.sweep_cmd,
                compare.compare_cmd, compare.reannotate_cmd, compare.plan_cmd, compare.report_cmd,
                evaluate.agreement_cmd):
    main.add_command(command)


# The cyclic collector's thresholds for one command (Python's defaults: 700, 10, 10). A command builds its records
# (a passage inventory, a run, per-query values: millions of objects at 2,000 meetings) once and holds them until
# it exits, and they hold no cycles; at the default thresholds every older generation was scanned again each time
# the heap grew, and a 2,000-meeting score spent about a sixth of its CPU in collections that freed a few hundred
# objects. Collections still run, rarely: young cycles (a caught exception's frames) are freed.
COLLECTOR_THRESHOLDS = (500_000, 100, 100)


def entry() -> None:
    """The ``turnbench`` console script: ``main`` with the collector tuned for one batch command
    (``COLLECTOR_THRESHOLDS``), then the process ends without freeing what it holds object by object
    (``quick_exit``; ``processes.outlive`` for what functions hold on their way out). ``main`` itself is what tests
    and other Python callers call: their process keeps its own collector settings and frees as usual."""
    from turnbench.api.cli_support import keep_until_exit

    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    keep_until_exit()
    try:
        main()
    except SystemExit as exc:
        quick_exit(exc.code)
    quick_exit(0)
