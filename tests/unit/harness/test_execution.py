"""harness.execution: scoring's parts run here by default (INLINE), each once, what it is sent handed over as a
forked child would be handed it, and its refusal raised where its value is asked for."""

from __future__ import annotations

import pytest

from turnbench.harness.execution import INLINE, Job


def test_an_inline_part_runs_once_when_its_value_is_asked_for_and_raises_its_refusal_there():
    calls = []

    def part(x):
        calls.append(x)
        if x < 0:
            raise ValueError(f"refused {x}")
        return 2 * x

    with INLINE.start(part, 3, later=True) as job:
        assert isinstance(job, Job) and job.ready() and calls == []  # nothing run until asked
        assert job.result() == 6 and job.result() == 6 and calls == [3]
    with INLINE.start(part, -1) as job, pytest.raises(ValueError, match="refused -1"):
        job.result()
    with pytest.raises(ValueError, match="refused -1"):
        job.result()  # the same refusal again, the part not run again
    assert calls == [3, -1]


def test_an_inline_part_with_an_inbox_receives_what_was_sent_and_nothing_before():
    def looks(receive, base):
        return base, receive(False)  # a look without waiting: None while nothing came

    def waits(receive, base):
        return base, receive()

    with INLINE.start(looks, "b", inbox=True) as job:
        assert job.result() == ("b", None)
    with INLINE.start(waits, "b", inbox=True) as job:
        job.send(("words", "keep"))
        assert job.result() == ("b", ("words", "keep"))
    with INLINE.start(waits, "b", inbox=True) as job, pytest.raises(RuntimeError, match="never sent"):
        job.result()  # waiting for what never comes is a bug, not a hang


def test_inline_files_stay_in_memory_and_the_inventory_is_its_canonical_lines():
    from turnbench.harness.exports import content_bytes
    from turnbench.passages import Passage, canonical_blocks, inventory_sha256

    ps = [Passage("m1:00000", "m1", "ann", 0.0, 1.0, 0, "turn", "0" * 64, 2)]
    with INLINE.inventory(ps) as job:
        sha, content = job.result()
    assert sha == inventory_sha256(ps) and content_bytes(content) == b"".join(canonical_blocks(ps))
    assert INLINE.files({"a.txt": b"x"}) == {"a.txt": b"x"}
    made = INLINE.runs(("r",), lambda: {"r": b"y"}, None)  # type: ignore[arg-type]
    assert made() == {"r": b"y"}
