"""Helpers for tests that signal a child process."""

from __future__ import annotations

import signal


def interruptible() -> None:
    """``preexec_fn``: SIGINT back to its default disposition in the child. A suite started in the background by a
    non-interactive shell (``.ci/run &``, ``nohup make test``) has SIGINT ignored, children inherit that, and a
    Python started with SIGINT ignored never raises KeyboardInterrupt: a SIGINT test would test the shell."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
