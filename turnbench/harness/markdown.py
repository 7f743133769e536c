"""Markdown tables for the reports people read (metrics.md, answers.md, compare.md): one way to draw them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """The lines of a pipe table. ``align`` holds one letter per column, ``l`` or ``r`` (missing: ``l``)."""
    rule = ["---:" if align[i:i + 1] == "r" else "---" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|",
            *("| " + " | ".join(cells) + " |" for cells in rows)]
