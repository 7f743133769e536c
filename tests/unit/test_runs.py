"""turnbench.runs: the inventory's identity and DESIGN rule 5 (ties cannot move a result), against plain sorting."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.stack.helpers import words
from turnbench.corpus.records import Turn
from turnbench.errors import UnjudgedPassage
from turnbench.runs import Passage, RankedPassage, inventory_sha256, write_passages
from turnbench.stack.passages import chunk_meeting


def test_inventory_sha256_equals_the_written_file(tmp_path: Path):
    segs = [Turn(i, "AB"[i % 3 == 0], float(i), float(i + 1), words(i + 1)) for i in range(9)]
    passages = [c.passage for c in chunk_meeting("m2", segs, max_words=4)] + \
               [c.passage for c in chunk_meeting("m1", segs, max_words=4)]
    assert write_passages(tmp_path / "p.jsonl", passages) == inventory_sha256(reversed(passages))


def _rule5_by_plain_sorting(entries, pmap):
    """DESIGN rule 5 spelled out with Python sorts: best score per passage, then (-score, kind, meeting, index, id)."""
    best = {}
    for e in entries:
        seen = best.setdefault(e.query_id, {})
        seen[e.passage_id] = max(e.score, seen.get(e.passage_id, e.score))
    return {q: [RankedPassage(q, pid, 0, 0.0) for pid in sorted(
        s, key=lambda pid: (-s[pid], pmap[pid].kind, pmap[pid].meeting, pmap[pid].index, pid))]
        for q, s in sorted(best.items())}


def test_the_fast_normalised_order_equals_runs_normalise_on_tie_heavy_input():
    import random

    from turnbench.runs import normalised_order as normalised_run

    normalise = _rule5_by_plain_sorting

    rng = random.Random(3)
    passages = [Passage(f"{rng.choice('abcxyz')}{i:03d}", f"m{rng.randrange(4)}", "s", 0.0, 1.0, rng.randrange(5),
                        rng.choice(("turn", "title"))) for i in range(60)]
    pmap = {p.id: p for p in passages}
    entries = [RankedPassage(f"q{rng.randrange(7)}", rng.choice(passages).id, 0, float(rng.choice((1, 1, 2, 0.5, 3))))
               for _ in range(600)]  # many repeats of one passage in one query, most scores tied
    reference = normalise(entries, pmap)
    assert normalised_run(entries, pmap) == {q: [e.passage_id for e in v] for q, v in reference.items()}
    assert normalised_run([], pmap) == {}
    with pytest.raises(UnjudgedPassage):
        normalised_run([RankedPassage("q", "nope", 1, 1.0)], pmap)
