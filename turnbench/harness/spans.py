"""Measures comparable across chunkings (docs/design.md §12 rule 2, docs/harness.md): words and seconds, not
passages.

Passage-count measures (nDCG@k, R@k, MRR) depend on how a corpus was cut: the same gold is 1,878 relevant passages
under one chunking and 2,989 under another, so their values cannot be set beside each other across chunkings. These
can, because their units — the gold turns' words, and seconds from where the gold starts — do not move with the
cut. For a turn-level query, over its top ``SPAN_DEPTH`` passages:

* ``span:R@10`` — the gold words held by the top passages (their union: a word held twice counts once) ÷ the words
  of the gold turns;
* ``span:P@10`` — that union ÷ the words the top passages hold (overlapping passages count their words twice: a
  reader reads them twice);
* ``span:IoU@10`` — that union ÷ (words held by the top passages + gold words they miss);
* ``span:P_best`` — the chunking's ceiling: the same precision over every passage that holds any gold word.

Entry points (where a reader starts listening; seconds from the gold start — the answer turn's start for a lookup,
the first gold turn's otherwise, in the meeting of the passage):

* ``entry:15s`` / ``30s`` / ``60s`` — 1 when the first retrieved passage that holds gold words starts within that
  many seconds of the gold start, else 0 (also when no retrieved passage holds gold);
* ``entry:mGAP150`` — generalised average precision with a 150 s window: walking the ranking, a passage in a meeting
  whose true start point is not yet matched earns R = max(0, 1 − |Δ| ÷ 150) and matches it (each true start point,
  one per gold meeting, rewards at most one passage); mGAP = Σ over ranks k with R_k > 0 of (Σ_{i≤k} R_i ÷ k) ÷ the
  number of true start points.

Each query also records ``entry_error_s``, the |Δ| of that first gold passage (None when there is none), whose median
a row reports. Entry points are computed only where the times are part of the truth: a corpus the generator wrote
(times by construction) or one whose every meeting's timing is ``measured``; never on times an importer invented.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from turnbench.canonical import q6
from turnbench.harness.held import Span

if TYPE_CHECKING:
    from turnbench.harness.judgements import Judged
    from turnbench.passages import Passage
    from turnbench.results.tables import QueryValues

SPAN_DEPTH = 10
WINDOWS = (15, 30, 60)
MGAP_WINDOW = 150.0
SPAN_MEASURES = ("span:R@10", "span:P@10", "span:IoU@10", "span:P_best")
ENTRY_MEASURES = (*(f"entry:{w}s" for w in WINDOWS), "entry:mGAP150")
COMPARABLE = SPAN_MEASURES + ENTRY_MEASURES
GENERATED_BY = "turnbench.generator"
SPAN_RULE = ("over each turn-level query's top 10 passages: span:R@10 = gold words they hold (a union) / gold words; "
             "span:P@10 = that union / words they hold (overlaps counted twice); span:IoU@10 = that union / (words "
             "they hold + gold words missed); span:P_best = the same precision over every passage holding gold")
ENTRY_RULE = ("from the gold start (the answer turn's start for a lookup, the first gold turn's otherwise, in the "
              "passage's meeting): entry:Ns = 1 when the first retrieved passage holding gold words starts within N "
              "s; entry:mGAP150 = generalised average precision, R = max(0, 1 - |delta| / 150 s), each true start "
              "point (one per gold meeting) rewarding at most one passage, in rank order")


def comparable_facts(timed: bool, by_times: int) -> dict[str, Any]:
    """trec.json's account of the measures comparable across chunkings (``timed``: the entry points were computed;
    ``by_times``: passages judged by their times alone)."""
    return {"span": SPAN_RULE,
            "entry_points": ENTRY_RULE if timed else "not computed: the corpus's times were neither measured nor "
                                                     "generated as part of its truth (an importer invented them)",
            "passages_judged_by_times": by_times}


def _union(spans: Sequence[tuple[str, Span]]) -> int:
    """Words in the union of (meeting, (turn, first, end)) spans."""
    by_turn: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for meeting, (turn, a, b) in spans:
        by_turn.setdefault((meeting, turn), []).append((a, b))
    total = 0
    for intervals in by_turn.values():
        intervals.sort()
        lo, hi = intervals[0]
        for a, b in intervals[1:]:
            if a > hi:
                total += hi - lo
                lo, hi = a, b
            else:
                hi = max(hi, b)
        total += hi - lo
    return total


def span_values(top: Sequence[str], gold_words: int, gold_held: Mapping[str, tuple[Span, ...]],
                words: Mapping[str, int], meeting_of: Mapping[str, str]) -> dict[str, float]:
    """The span measures of one query: ``top`` its first ``SPAN_DEPTH`` passages, ``gold_held`` the gold spans each
    gold-holding passage holds, ``words`` the words every one of them holds."""
    def union(pids: Sequence[str]) -> int:
        return _union([(meeting_of[pid], s) for pid in pids for s in gold_held.get(pid, ())])

    top = list(top[:SPAN_DEPTH])
    found = union(top)
    read = sum(words[pid] for pid in top)
    holders = sorted(gold_held)
    every = sum(words[pid] for pid in holders)
    return {
        "span:R@10": found / gold_words if gold_words else 0.0,
        "span:P@10": found / read if read else 0.0,
        "span:IoU@10": found / (read + gold_words - found) if read + gold_words - found else 0.0,
        "span:P_best": union(holders) / every if every else 0.0,
    }


def entry_values(ranked: Sequence[str], gold_start: Mapping[str, float], gold_held: Mapping[str, tuple[Span, ...]],
                 start_of: Mapping[str, float], meeting_of: Mapping[str, str]) -> tuple[dict[str, float], float | None]:
    """The entry-point measures of one query over its whole ranking, and the error of its first gold passage."""
    error = None
    for pid in ranked:
        m = meeting_of[pid]
        if gold_held.get(pid) and m in gold_start:
            error = abs(start_of[pid] - gold_start[m])
            break
    out = {f"entry:{w}s": 1.0 if error is not None and error <= w else 0.0 for w in WINDOWS}
    matched: set[str] = set()
    earned = gap = 0.0
    for k, pid in enumerate(ranked, 1):
        m = meeting_of[pid]
        if m in gold_start and m not in matched:
            r = max(0.0, 1.0 - abs(start_of[pid] - gold_start[m]) / MGAP_WINDOW)
            if r > 0.0:  # a passage earning nothing adds nothing to either sum
                matched.add(m)
                earned += r
                gap += earned / k
                if len(matched) == len(gold_start):
                    break  # every true start point is matched: nothing further can earn
    out["entry:mGAP150"] = gap / len(gold_start) if gold_start else 0.0
    return out, error


def times_are_truth(producer: str | None, timings: set[str]) -> bool:
    """Whether a corpus's times may be scored: written by the generator, or every meeting's timing measured."""
    return producer == GENERATED_BY or (bool(timings) and timings == {"measured"})


# per turn-level query: its span (and entry-point) measures, 6 decimals, and its entry error (None: none found)
Comparable = dict[str, tuple[dict[str, float], float | None]]


def comparable_values(heads: Sequence[QueryValues], run: Mapping[str, Sequence[str]], judged: Judged,
                      pmap: Mapping[str, Passage], meeting_of: Mapping[str, str], *, timed: bool) -> Comparable:
    """Each turn-level query's (``heads``: its row's ``query_id`` and ``level``) span measures over ``run``, and
    (``timed``) its entry-point measures and error, as the judge found the passages' spans."""
    starts = _Starts(pmap)
    out: Comparable = {}
    for row in heads:
        if row.level != "turn":
            continue
        qid = row.query_id
        ranked = run.get(qid, ())
        held = judged.gold_held.get(qid, {})
        values = span_values(ranked, judged.gold_words.get(qid, 0), held, judged.words, meeting_of)
        error = None
        if timed:
            entry, error = entry_values(ranked, judged.gold_start.get(qid, {}), held, starts, meeting_of)
            values.update(entry)
        out[qid] = ({m: q6(v) for m, v in values.items()}, None if error is None else q6(error))
    return out


class _Starts(Mapping[str, float]):
    """Each passage's start, read from the inventory as asked: the entry-point measures stop at the first passages
    that earn, so a per-query dict of every ranked passage's start was mostly never read."""

    def __init__(self, pmap: Mapping[str, Passage]) -> None:
        self._pmap = pmap

    def __getitem__(self, pid: str) -> float:
        return self._pmap[pid].start

    def __iter__(self) -> Iterator[str]:
        return iter(self._pmap)

    def __len__(self) -> int:
        return len(self._pmap)
