"""``turnbench stack up | status | down``: a stack started in the background and recorded in the state file.

``up`` records the stack before anything runs and again as each process exists, so ``down`` can stop a start
that was killed at any point; the provider's watchdog guards the start until the stack is recorded as up.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from turnbench.errors import StackStartError, StackStateError
from turnbench.signals import terminating_raises
from turnbench.stack import state
from turnbench.stack.external import redact
from turnbench.stack.info import StackInfo
from turnbench.stack.net import redact_url
from turnbench.stack.registry import choose, provider_class


def up(provider: str = "auto", *, echo: Callable[[str], None] = print, **options: Any) -> StackInfo:
    """Start a stack detached from this process and record it. Refuses while another one is recorded, or another
    ``up`` or ``down`` is at work on the same state directory (the lock is held until the state is written)."""
    with state.lifecycle_lock():
        return _up(provider, echo=echo, **options)


def _up(provider: str, *, echo: Callable[[str], None], **options: Any) -> StackInfo:
    recorded = state.read_state()
    if recorded is not None:
        where = (f" (OpenSearch {redact_url(recorded.info.opensearch_url)}, PostgreSQL "
                 f"{redact(recorded.info.postgres_dsn)})" if recorded.info else f" ({recorded.status})")
        raise StackStateError(f"a stack ({recorded.provider}) is already recorded in {state.state_path()}{where}: "
                              "`turnbench stack down` first")
    with terminating_raises():
        choice = choose(provider, options, detached=True)
        echo(f"turnbench: stack provider {choice.provider}: {choice.why}")
        t0 = time.monotonic()
        running = provider_class(choice.provider)(**options)

        def record(details: Mapping[str, Any]) -> None:
            state.write_state(state.Recorded(state.STARTING, choice.provider, details))

        record({})
        running.recorder = record
        try:
            info = running.start(detached=True)
        except BaseException:
            state.clear_state()  # start() has already stopped whatever it started
            raise
        info = replace(info, details={**info.details, "chosen_because": choice.why,
                                      "up_s": round(time.monotonic() - t0, 3)})
        try:
            state.write_state(state.Recorded(state.UP, choice.provider, info.details, info))
        except BaseException:
            running.stop()
            state.clear_state()
            raise
        running.hand_over()
    return info


def status() -> StackInfo:
    """The recorded stack, re-probed; StackStateError when none is recorded or it does not answer."""
    from turnbench.stack.external import describe

    recorded = state.read_state()
    if recorded is None:
        raise StackStateError(f"no stack is recorded in {state.state_path()}")
    if recorded.info is None:
        raise StackStateError(f"the {recorded.provider} stack recorded in {state.state_path()} is still starting, or "
                              "its start was interrupted: `turnbench stack down` stops what it started")
    info = recorded.info
    try:
        return describe(recorded.provider, info.opensearch_url, info.postgres_dsn, info.details)
    except StackStartError as exc:
        raise StackStateError(f"the recorded {recorded.provider} stack does not answer: {exc}") from None


def describe(info: StackInfo) -> list[str]:
    """``stack status`` for people: endpoints with the versions they report, and what runs them."""
    lines = [f"provider     {info.provider}",
             f"opensearch   {redact_url(info.opensearch_url)}  "
             f"(OpenSearch {info.opensearch_version}, Lucene {info.lucene_version})",
             f"postgresql   {redact(info.postgres_dsn)}  (PostgreSQL {info.postgres_version})"]
    lines += [f"process      {proc['name']} pid {proc['pid']}" for proc in info.details.get("processes", [])]
    lines += [f"container    {cid}" for cid in info.details.get("containers", [])]
    return lines


def down() -> state.Recorded | None:
    """Stop exactly what ``up`` recorded (by verified process or container id) and forget it; None when nothing
    was recorded. A record that cannot be verified is refused and left in place."""
    with state.lifecycle_lock(), state.use_lock(writes=True):
        recorded = state.read_state()
        if recorded is None:
            return None
        provider_class(recorded.provider).down(recorded.details)
        state.clear_state()
        return recorded
