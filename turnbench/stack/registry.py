"""The providers by name, and the one chooser for ``auto`` (used by ``open_stack`` and ``stack up`` alike).

``PROVIDERS`` is the one table from provider name to class; the base class in ``turnbench.stack.provider`` knows
none of them, so a provider module imports the base and this module imports the providers, never the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from turnbench.errors import BadInput, StackStartError
from turnbench.stack.provider import Provider


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
