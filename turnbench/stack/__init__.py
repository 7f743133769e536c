"""The stack layer (docs/design.md §9): providers that hand turnbench an OpenSearch and a PostgreSQL endpoint plus the
versions the servers report.

    with open_stack("embedded") as stack:      # or "docker", "external", "auto" (the default)
        stack.opensearch_url, stack.postgres_dsn, stack.versions()

``open_stack`` always tears down what it started: on return, exception, SIGINT and SIGTERM.
``current_stack()`` is the stack ``turnbench stack up`` recorded, or an external one named by environment.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from turnbench import settings
from turnbench.errors import StackStartError, StackStateError
from turnbench.signals import blocked, terminating_raises
from turnbench.stack.info import StackInfo
from turnbench.stack.registry import PROVIDERS, RECORDED, choose, provider_class

__all__ = ["StackInfo", "open_stack", "current_stack", "PROVIDERS"]


def current_stack(*, ask_postgres: bool = True) -> StackInfo:
    """The stack to use now: an external one named by TURNBENCH_OPENSEARCH_URL / TURNBENCH_POSTGRES_DSN, else
    the one ``turnbench stack up`` recorded. Raises StackStateError when there is none or it does not answer.
    ``ask_postgres`` False: a recorded stack's PostgreSQL is not asked (its version is the recorded one), for a
    command that opens a connection only if it needs one (``turnbench run``: a failure then is that command's)."""
    from turnbench.stack import external, state

    given = external.endpoints()
    if given is not None:
        try:
            return external.describe("external", given[0], given[1], {"endpoints_from": "environment"})
        except StackStartError as exc:
            raise StackStateError(str(exc)) from None
    recorded = state.read_state()
    if recorded is None:
        raise StackStateError(
            f"no stack is recorded in {state.state_path()}: start one with `turnbench stack up` (or `make stack`)"
        )
    if recorded.info is None:
        raise StackStateError(f"the {recorded.provider} stack recorded in {state.state_path()} is still starting, or "
                              "its start was interrupted: `turnbench stack down` stops what it started")
    info = recorded.info
    try:
        return external.describe(recorded.provider, info.opensearch_url, info.postgres_dsn, info.details,
                                 None if ask_postgres else info.postgres_version)
    except StackStartError as exc:
        raise StackStateError(f"the recorded {recorded.provider} stack does not answer: {exc}") from None


@contextlib.contextmanager
def open_stack(provider: str = "auto", *, echo: Callable[[str], None] | None = None,
               **options: Any) -> Iterator[StackInfo]:
    """Start (or find) a stack, yield its StackInfo, and tear down whatever was started, however the block ends.

    ``options`` go to the provider: embedded takes heap, java, cache, postgres_bin, opensearch_port,
    postgres_port, timeout, ...; external takes opensearch_url and postgres_dsn.
    """
    say = echo or (lambda line: print(line, file=sys.stderr) if settings.verbose() else None)
    with terminating_raises():
        choice = choose(provider, options, detached=False)
        if provider == "auto":
            say(f"turnbench: stack provider {choice.provider}: {choice.why}")
        if choice.provider == RECORDED:
            # Not ours: never torn down here; held against any other load or bench on it while in use
            from turnbench.stack import state

            with state.use_lock(writes=True):
                yield current_stack()
            return
        running = provider_class(choice.provider)(**options)
        info = running.start()
        try:
            yield replace(info, details={**info.details, "chosen_because": choice.why})
        finally:
            with blocked():
                running.stop()
