"""The state file of a stack started in the background by ``turnbench stack up``.

It lives at ``$TURNBENCH_STATE_DIR/stack.json``, by default ``.turnbench/stack.json`` under the current
directory, and holds the StackInfo including the process or container ids that ``stack down`` stops.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from turnbench import canonical
from turnbench.errors import StackStateError
from turnbench.stack.info import StackInfo

STATE_FILE = "stack.json"


def state_dir() -> Path:
    return Path(os.environ.get("TURNBENCH_STATE_DIR") or Path.cwd() / ".turnbench")


def state_path() -> Path:
    return state_dir() / STATE_FILE


def read_state() -> StackInfo | None:
    path = state_path()
    if not path.exists():
        return None
    try:
        return StackInfo.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError) as exc:
        raise StackStateError(f"the stack state file {path} is unreadable ({exc}); remove it by hand") from None


def write_state(info: StackInfo) -> Path:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    canonical.write_json(path, info.to_json())
    return path


def clear_state() -> None:
    try:
        state_path().unlink()
    except FileNotFoundError:
        pass
