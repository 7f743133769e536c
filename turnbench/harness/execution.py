"""How scoring's parts are run and where the files it makes go: the seam between pure scoring and its executor.

Scoring (``turnbench.harness.score``) says what is computed from what; an ``Execution`` says where it runs (here,
or in a forked child beside the rest) and where the files it makes are kept (in memory, or written where the
results are being staged). ``INLINE``, the default, runs every part here when its value is asked for and keeps
every file in memory: what the scored values are never depends on it. The executor that forks and stages is
``turnbench.pipeline.executor``; the harness never imports it, nor anything that forks.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from turnbench.harness import exports
from turnbench.passages import Passage, canonical_blocks, inventory_sha256

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@runtime_checkable
class Job(Protocol[T_co]):
    """A part of scoring started by an ``Execution``: ``result()`` its value (or what it raised), ``ready()``
    whether that is there without waiting, ``send(value)`` hands a part started with ``inbox`` its one input."""

    def result(self) -> T_co: ...

    def ready(self) -> bool: ...

    def send(self, value: Any) -> None: ...


class Execution(Protocol):
    """Where scoring's parts run and where the files it makes go (see the module's docstring)."""

    def start(self, fn: Callable[..., T], *args: Any, later: bool = False, inbox: bool = False
              ) -> contextlib.AbstractContextManager[Job[T]]:
        """``fn(*args)`` (with ``inbox``: ``fn(receive, *args)``, where ``receive(wait)`` gives what is sent, or None
        when ``wait`` is false and nothing has come yet), its value given by the job; ``later``: it is wanted last."""
        ...

    def inventory(self, passages: Sequence[Passage]) -> contextlib.AbstractContextManager[Job[tuple[str,
                                                                                                   exports.Content]]]:
        """passages.jsonl of ``passages``: its sha256 (the inventory's) and its content."""
        ...

    def runs(self, names: Sequence[str], make: Callable[[], Mapping[str, exports.Content]],
             stack: contextlib.ExitStack) -> Callable[[], Mapping[str, exports.Content]]:
        """The files ``make`` gives (named ``names``), as the results will hold them; a part that makes them is
        entered on ``stack`` (or on a longer-lived one of the executor's)."""
        ...

    def files(self, made: Mapping[str, exports.Content]) -> dict[str, exports.Content]:
        """Files made (in whichever process made them), as the results will hold them."""
        ...

    def keep(self, *objects: Any) -> None:
        """Objects scoring is done with that need not be freed one by one before the process ends."""
        ...


class _Now(Generic[T]):
    """A job of ``Inline``: run here the first time its value is asked for (after what it is sent, if anything)."""

    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...], inbox: bool) -> None:
        self._call = functools.partial(fn, self._receive, *args) if inbox else functools.partial(fn, *args)
        self._sent: list[Any] = []
        self._value: list[T] = []
        self._raised: BaseException | None = None

    def _receive(self, wait: bool = True) -> Any:
        if self._sent:
            return self._sent.pop(0)
        if wait:
            raise RuntimeError("a part run inline waited for what was never sent to it")
        return None

    def send(self, value: Any) -> None:
        self._sent.append(value)

    def ready(self) -> bool:
        return True

    def result(self) -> T:
        if not self._value and self._raised is None:
            try:
                self._value.append(self._call())
            except BaseException as exc:
                self._raised = exc
        if self._raised is not None:
            raise self._raised
        return self._value[0]


class Inline:
    """Every part run here, when its value is asked for; every file kept in memory, made as it is written."""

    @contextlib.contextmanager
    def start(self, fn: Callable[..., T], *args: Any, later: bool = False, inbox: bool = False) -> Iterator[Job[T]]:
        yield _Now(fn, args, inbox)

    @contextlib.contextmanager
    def inventory(self, passages: Sequence[Passage]) -> Iterator[Job[tuple[str, exports.Content]]]:
        yield _Now(lambda: (inventory_sha256(passages), exports.Lazy(lambda: canonical_blocks(passages))), (), False)

    def runs(self, names: Sequence[str], make: Callable[[], Mapping[str, exports.Content]],
             stack: contextlib.ExitStack) -> Callable[[], Mapping[str, exports.Content]]:
        made = make()
        return lambda: made

    def files(self, made: Mapping[str, exports.Content]) -> dict[str, exports.Content]:
        return dict(made)

    def keep(self, *objects: Any) -> None:
        pass


INLINE: Execution = Inline()
