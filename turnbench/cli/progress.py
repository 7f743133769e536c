"""A bench's progress drawn on a terminal: one bar over the stages, and one per counted stage (passages indexed,
queries sent) with its rate and time left. The pipeline tells it (``turnbench.pipeline.progress.Progress``); this
module only draws, with rich."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import rich.progress as rp
from rich.console import Console
from rich.text import Text


class _Rate(rp.ProgressColumn):
    """Items per second of a counted task (queries, passages); blank for the stages' bar."""

    def render(self, task: rp.Task) -> Text:
        speed = task.finished_speed or task.speed
        shown = task.fields.get("counted") and speed is not None
        return Text(f"{speed:,.0f}/s" if shown else "", style="progress.data.speed")


class RichProgress:
    """``with RichProgress(verbose=...) as progress: bench(..., progress=progress)``: bars on stderr; notes above
    them only when ``verbose`` (a warning always)."""

    counting = True

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose
        self._bars = rp.Progress(rp.SpinnerColumn(), rp.TextColumn("{task.description:<34}"), rp.BarColumn(),
                                 rp.MofNCompleteColumn(), _Rate(), rp.TimeRemainingColumn(), rp.TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=False)
        self._stages = self._bars.add_task("bench", total=None)
        self._counters: dict[str, Any] = {}

    def __enter__(self) -> RichProgress:
        self._bars.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._bars.__exit__(kind, exc, tb)

    def expect(self, stages: int) -> None:
        self._bars.update(self._stages, total=stages)

    def start(self, stage: Any, label: str) -> None:
        self._bars.update(self._stages, description=label)

    def advance(self, stage: Any, counter: str, done: int, total: int) -> None:
        task = self._counters.get(counter)
        if task is None:
            task = self._counters[counter] = self._bars.add_task(counter, total=total, counted=True)
        self._bars.update(task, total=total, advance=done)

    def finish(self, stage: Any, label: str, seconds: float) -> None:
        self._bars.advance(self._stages)

    def note(self, line: str, *, always: bool = False) -> None:
        if always or self.verbose:
            self._bars.console.print(line, markup=False, highlight=False)


@contextlib.contextmanager
def progress_shown(shown: bool, *, verbose: bool = False) -> Iterator[RichProgress | None]:
    """Bars while the block runs when ``shown`` (stderr is a terminal), else None: nothing drawn, nothing counted."""
    if not shown:
        yield None
        return
    with RichProgress(verbose=verbose) as progress:
        yield progress
