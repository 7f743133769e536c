"""The provider interface (DESIGN §9): every way of getting a stack hands back the same StackInfo.

A provider is a class with a name. ``start`` owns the order of steps — say what the provider lacks before
anything runs, start, and stop whatever was started when any step fails — and the subclasses fill in
``_start`` and ``stop``. The detached variant serves ``turnbench stack up``: ``start(detached=True)`` starts a
stack meant to outlive this process, and ``down`` stops one another process recorded, from its ``details``.

``PROVIDERS`` is the one table from provider name to class; ``choose`` is the one chooser for ``auto``,
used by both ``open_stack`` and ``stack up``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from turnbench.errors import BadInput, StackStartError, TurnbenchError
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


def provider_class(name: str) -> type[Provider]:
    from turnbench.stack.docker import DockerStack
    from turnbench.stack.embedded import EmbeddedStack
    from turnbench.stack.external import ExternalStack

    table: dict[str, type[Provider]] = {cls.name: cls for cls in (EmbeddedStack, DockerStack, ExternalStack)}
    try:
        return table[name]
    except KeyError:
        raise BadInput(f"unknown stack provider {name!r}; choose auto, {', '.join(PROVIDERS)}") from None


PROVIDERS = ("embedded", "docker", "external")
RECORDED = "recorded"


@dataclass(frozen=True)
class Choice:
    provider: str  # a name of PROVIDERS, or RECORDED: the running stack `stack up` recorded (never ours to stop)
    why: str


def choose(provider: str, options: Mapping[str, Any], *, detached: bool) -> Choice:
    """The provider to use, and why. ``auto``: endpoints given → external; else (for a stack this process opens,
    not a detached one, which must not find another recorded) a recorded stack that answers → it; else docker
    when it can run here (an engine answers; for a detached stack, with compose v2), else embedded, saying what
    Docker lacks."""
    if provider != "auto":
        provider_class(provider)
        return Choice(provider, "asked for")
    from turnbench.stack import external, state

    if options.get("nodes") is not None:
        return Choice("embedded", f"--nodes {options['nodes']} asks for nodes the embedded provider starts")
    if options.get("opensearch_url") or options.get("postgres_dsn") or external.endpoints() is not None:
        return Choice("external", "endpoints were given")
    reasons = []
    if not detached:
        recorded = state.read_state()
        if recorded is not None and recorded.info is not None:
            info = recorded.info
            try:
                external.describe(recorded.provider, info.opensearch_url, info.postgres_dsn, {})
                return Choice(RECORDED, f"the {recorded.provider} stack recorded in {state.state_path()} answers")
            except StackStartError:
                pass
        reasons.append("no recorded stack answers")
    # Docker is passed over only for a reason named before anything starts; once chosen, a failure is a failure.
    problem = provider_class("docker").problem(detached=detached)
    if problem is None:
        return Choice("docker", "a Docker engine answers" + (" and docker compose is v2" if detached else ""))
    reasons.append(problem)
    return Choice("embedded", " and ".join(reasons))
