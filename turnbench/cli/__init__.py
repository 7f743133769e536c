"""The ``turnbench`` command: a thin layer over the library, its commands in the order of the data flow.

``turnbench.cli.base`` is the only place exceptions become exit codes. Heavy imports stay inside the
commands so ``turnbench --help`` is instant.
"""

from __future__ import annotations

import click

from turnbench import __version__
from turnbench.cli import compare, corpus, evaluate, stack
from turnbench.cli.base import EXIT_CODES, exit_code_for, handle_errors

__all__ = ["main", "EXIT_CODES", "exit_code_for", "handle_errors"]


class _InFlowOrder(click.Group):
    """Lists commands in the order they were added (the data flow), not alphabetically."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


@click.group(cls=_InFlowOrder, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="turnbench")
def main() -> None:
    """Reproducible evaluation of meeting-transcript search."""


# In the order of the data flow: corpus → stack → load → run / answer → score → bench → compare → report.
for command in (corpus.generate_cmd, corpus.validate_cmd, corpus.import_group, corpus.measure_cmd,
                stack.stack_group, stack.jars_cmd, stack.load_cmd,
                evaluate.run_cmd, evaluate.answer_cmd, evaluate.score_cmd, evaluate.bench_cmd, compare.compare_cmd,
                compare.report_cmd):
    main.add_command(command)
