"""``turnbench stack up | status | down``: a stack started in the background and recorded in the state file."""

from __future__ import annotations

import time
from typing import Any, Callable

from turnbench.errors import StackStartError, StackStateError
from turnbench.stack import state
from turnbench.stack.info import StackInfo


def up(provider: str = "auto", *, echo: Callable[[str], None] = print, **options: Any) -> StackInfo:
    """Start a stack detached from this process and record it. Refuses while another one is recorded."""
    from turnbench.stack import _sigterm_raises

    recorded = state.read_state()
    if recorded is not None:
        raise StackStateError(
            f"a stack ({recorded.provider}) is already recorded in {state.state_path()} "
            f"(OpenSearch {recorded.opensearch_url}, PostgreSQL {recorded.postgres_dsn}): "
            "`turnbench stack down` first"
        )
    with _sigterm_raises():
        chosen, why = _choose(provider, options)
        echo(f"turnbench: stack provider {chosen}: {why}")
        t0 = time.monotonic()
        if chosen == "embedded":
            from turnbench.stack.embedded import EmbeddedStack

            running = EmbeddedStack(**options, detached=True)
            info = running.start()
            stop = running.stop
        elif chosen == "docker":
            from turnbench.stack import docker

            info = docker.compose_up()
            stop = lambda: docker.compose_down(info.details)  # noqa: E731
        else:
            from turnbench.stack.external import open_external

            info = open_external(**options)
            stop = lambda: None  # noqa: E731
        details = dict(info.details)
        details["chosen_because"] = why
        details["up_s"] = round(time.monotonic() - t0, 3)
        info = StackInfo(**{**info.__dict__, "details": details})
        try:
            state.write_state(info)
        except BaseException:
            stop()
            raise
    return info


def _choose(provider: str, options: dict) -> tuple[str, str]:
    if provider != "auto":
        from turnbench.stack import choose_provider

        return choose_provider(provider)
    if options.get("opensearch_url") or options.get("postgres_dsn"):
        return "external", "endpoints were given"
    from turnbench.stack import docker

    problem = docker.engine_problem()
    if problem is None:
        return "docker", "a Docker engine answers"
    return "embedded", f"no Docker engine ({problem})"


def status() -> StackInfo:
    """The recorded stack, re-probed; StackStateError when none is recorded or it does not answer."""
    from turnbench.stack.external import describe

    recorded = state.read_state()
    if recorded is None:
        raise StackStateError(f"no stack is recorded in {state.state_path()}")
    try:
        return describe(recorded.provider, recorded.opensearch_url, recorded.postgres_dsn, recorded.details)
    except StackStartError as exc:
        raise StackStateError(f"the recorded {recorded.provider} stack does not answer: {exc}") from None


def down() -> StackInfo | None:
    """Stop exactly what ``up`` recorded (by process or container id) and forget it; None when nothing was."""
    recorded = state.read_state()
    if recorded is None:
        return None
    if recorded.provider == "embedded":
        from turnbench.stack.embedded import EmbeddedStack

        EmbeddedStack.stop_recorded(recorded.details)
    elif recorded.provider == "docker":
        from turnbench.stack import docker

        docker.compose_down(recorded.details)
    state.clear_state()
    return recorded
