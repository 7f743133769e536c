"""Which process is which: a pid names a process only together with its start time, read from /proc.

After a process exits its pid can be reused by an unrelated one, so turnbench records a process it starts as
(pid, start ticks) and treats a pid as its own only while both match.
"""

from __future__ import annotations

from pathlib import Path


def start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot; None when no such process exists."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])


def is_running(pid: int, ticks: int | None = None) -> bool:
    """True while the process exists, is not a zombie, and (when given) started at ``ticks``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return False
    rest = stat[stat.rindex(")") + 2:].split()
    if rest[0] in ("Z", "X"):
        return False
    return ticks is None or int(rest[19]) == ticks


def cmdline(pid: int) -> tuple[str, ...] | None:
    """The process's argument vector; None when it cannot be read (gone, or not ours to read)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
