"""The provider interface (docs/design.md §9): every way of getting a stack hands back the same StackInfo.

A provider is a class with a name. ``start`` owns the order of steps — say what the provider lacks before
anything runs, start, and stop whatever was started when any step fails — and the subclasses fill in
``_start`` and ``stop``. The detached variant serves ``turnbench stack up``: ``start(detached=True)`` starts a
stack meant to outlive this process, and ``down`` stops one another process recorded, from its ``details``.

The base class knows no concrete provider: ``turnbench.stack.registry`` names them and chooses among them.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from turnbench.errors import StackStartError, TurnbenchError
from turnbench.stack.info import StackInfo


class Provider(abc.ABC):
    """One way of getting an OpenSearch + PostgreSQL stack.

    ``recorder``, when set (``stack up`` sets it), is called with what ``down`` would need to stop the stack each
    time that changes during the start — a process spawned, a directory made — so that a start killed at any
    point can still be stopped from its record."""

    name: ClassVar[str]
    recorder: Callable[[Mapping[str, Any]], None] | None = None

    @classmethod
    def problem(cls, *, detached: bool = False) -> str | None:
        """Why this provider cannot run on this machine (a ``detached`` stack for ``stack up`` may need more),
        found without starting anything; None when it can."""
        return None

    @classmethod
    def unusable(cls, problem: str) -> str:
        """The refusal when ``problem`` keeps this provider from running."""
        return f"the {cls.name} provider cannot run here: {problem}"

    def start(self, *, detached: bool = False) -> StackInfo:
        """Start the stack; when any step fails, stop whatever was started before the error leaves. A
        ``detached`` stack is meant to outlive this process (``stack up``): ``down`` stops it from its
        recorded ``details`` alone."""
        problem = self.problem(detached=detached)
        if problem is not None:
            raise StackStartError(self.unusable(problem))
        try:
            return self._start(detached)
        except BaseException as exc:
            pids = self.started_pids()
            self.stop()
            if isinstance(exc, StackStartError):
                exc.started_pids = pids
                raise
            if isinstance(exc, TurnbenchError) or not isinstance(exc, Exception):
                raise
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            raise StackStartError(f"the {self.name} stack did not start: {type(exc).__name__}: {first}",
                                  started_pids=pids) from exc

    def hand_over(self) -> None:  # noqa: B027 - a hook: only providers that guard a start have anything to do
        """The detached stack is recorded as up: from now on only ``down`` stops it (a guard may stand down)."""

    @classmethod
    @abc.abstractmethod
    def down(cls, details: Mapping[str, Any]) -> None:
        """Stop a stack another process started and recorded (``stack down``), from its ``details`` alone."""

    def started_pids(self) -> tuple[int, ...]:
        """Processes this provider started that are (or were) running: what a failed start must leave behind."""
        return ()

    @abc.abstractmethod
    def _start(self, detached: bool) -> StackInfo: ...

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop what ``start`` started. Safe to call twice and after a failed start."""


