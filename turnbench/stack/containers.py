"""Containers turnbench labelled, removed by label: what the docker provider and the watchdog both need.

Kept apart from the provider so the watchdog (a process of its own that outlives a killed parent) can remove a
stack's containers without importing the provider that started them.
"""

from __future__ import annotations


def remove_labelled(label: str) -> None:
    """Remove every container carrying ``label`` (key=value), volumes included; quiet when the engine is gone."""
    try:
        import docker

        client = docker.from_env(timeout=30)
        try:
            # ignore_removed: a container removed between the listing and its inspection (a watchdog racing us) is
            # simply gone, not an error that would leave the rest behind
            for container in client.containers.list(all=True, filters={"label": label}, ignore_removed=True):
                container.remove(force=True, v=True)
        finally:
            client.close()
    except Exception:  # the engine went away: nothing left that we could remove
        pass
