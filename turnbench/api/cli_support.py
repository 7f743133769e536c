"""What a command line built on the API needs besides the verbs, each kept where it lives and named here: the
exceptions (the command line maps them to exit codes), the vocabularies its options offer, the settings (debug,
verbose), the version, signal handling and process exit, and the check that no output overwrites an input.

Light by design: ``turnbench --help`` imports this module and nothing heavier."""

from __future__ import annotations

from turnbench import errors, settings, vocab
from turnbench.engines import DEFAULT_CONCURRENCY, MAX_CONCURRENCY
from turnbench.paths import check_outputs
from turnbench.signals import terminating_raises
from turnbench.version import __version__

__all__ = ["errors", "settings", "vocab", "DEFAULT_CONCURRENCY", "MAX_CONCURRENCY", "check_outputs",
           "abandoned_alive", "keep_until_exit", "terminating_raises", "__version__"]


def keep_until_exit() -> None:
    """From now on, what is handed to ``processes.outlive`` is kept until the process ends (the console script
    only; turnbench.processes)."""
    from turnbench.processes import keep_until_exit as keep

    keep()


def abandoned_alive() -> bool:
    """Whether a thread handed to ``processes.abandon`` (a Python engine's, left running) still runs."""
    from turnbench.processes import abandoned_alive as alive

    return alive()
