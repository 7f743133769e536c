"""What a bench tells whoever shows its progress, and the seconds of each of its stages.

The pipeline times its stages itself (``Stages``, keyed by ``vocab.Stage``: the keys runinfo.json records) and
tells a ``Progress`` as it goes: a stage started, items of it counted (passages indexed, queries sent), a stage
finished, a note. Drawing is the caller's: the command line passes its own (``turnbench.cli.progress``, rich bars on
a terminal); a library caller passes nothing and gets ``QUIET``, which draws nothing and asks the engines to count
nothing (``counting``), so that no per-batch callback costs them work.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from turnbench.vocab import Stage


class Progress(Protocol):
    """Told of a bench's stages as they go (``label``: the stage's words and whose it is, e.g. ``run bm25``)."""

    @property
    def counting(self) -> bool:
        """Whether items of a stage are counted at all (``advance`` is then called per batch an engine finishes)."""
        ...

    def expect(self, stages: int) -> None:
        """How many stages the whole job has, told once before the first starts."""
        ...

    def start(self, stage: Stage, label: str) -> None: ...

    def advance(self, stage: Stage, counter: str, done: int, total: int) -> None:
        """``done`` more items of ``total`` counted by ``counter`` (e.g. ``queries bm25``) in ``stage``."""
        ...

    def finish(self, stage: Stage, label: str, seconds: float) -> None: ...

    def note(self, line: str, *, always: bool = False) -> None:
        """A note (shown where the caller shows notes, when verbose); ``always``: a warning, shown whatever."""
        ...


class Quiet:
    """Shows nothing, counts nothing; a warning still goes to stderr."""

    counting = False

    def expect(self, stages: int) -> None:
        pass

    def start(self, stage: Stage, label: str) -> None:
        pass

    def advance(self, stage: Stage, counter: str, done: int, total: int) -> None:
        pass

    def finish(self, stage: Stage, label: str, seconds: float) -> None:
        pass

    def note(self, line: str, *, always: bool = False) -> None:
        if always:
            print(line, file=sys.stderr, flush=True)


QUIET: Progress = Quiet()


class Took(NamedTuple):
    """Whose stage a time is: the stage, and what follows its label (`` bm25``, `` bm25 <corpus>``, or nothing)."""

    stage: Stage
    of: str = ""

    @property
    def label(self) -> str:
        return f"{self.stage.label}{self.of}"


@dataclass
class Stages:
    """Times each stage (``elapsed``, by ``Took``) and tells ``progress``."""

    progress: Progress = QUIET
    elapsed: dict[Took, float] = field(default_factory=dict)

    def start(self, took: Took) -> None:
        self.progress.start(took.stage, took.label)

    def finish(self, took: Took, seconds: float) -> None:
        self.elapsed[took] = self.elapsed.get(took, 0.0) + seconds
        self.progress.finish(took.stage, took.label, seconds)

    @contextlib.contextmanager
    def stage(self, stage: Stage, of: str = "") -> Iterator[None]:
        took = Took(stage, of)
        self.start(took)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.finish(took, time.perf_counter() - t0)

    def counter(self, stage: Stage, name: str) -> Callable[[int, int], None] | None:
        """A callback an engine calls with each batch it finishes and its total; None when nothing counts, so the
        engines do no progress work at all."""
        if not self.progress.counting:
            return None
        progress = self.progress

        def advance(n: int, total: int) -> None:
            progress.advance(stage, name, n, total)

        return advance

    def log(self, line: str, *, always: bool = False) -> None:
        self.progress.note(line, always=always)

    def seconds(self) -> dict[str, float]:
        """Each stage's seconds by its label, in the order they ran (what ``bench`` prints)."""
        return {took.label: s for took, s in self.elapsed.items()}
