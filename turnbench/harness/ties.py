"""Score ties in the engine's raw run, and whether docs/design.md §3 rule 5 moved a metric that trec_eval would have
read differently.

Rule 5 orders tied passages by (kind, meeting, index, id); trec_eval orders them by document id, descending.
Both are arbitrary, and only rule 5 is the same under any id convention, so turnbench scores rule 5. This
module says how much that choice mattered on a given run: how many queries hold a tie in their top k (two
of the first k passages with one score, or the k-th and the (k+1)-th, where the tie decides the cut-off), and
the metrics of the tied queries re-scored in trec_eval's own order. A query without a tie is ordered the
same by both rules, so only tied queries are evaluated again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import eq, gt
from typing import Any

from turnbench.canonical import q6
from turnbench.harness import metrics
from turnbench.rankings import Placement
from turnbench.results.tables import Shift, TieEffect, Ties

CUTOFFS = (5, 10, 20)


def tie_depth(scores: Sequence[float]) -> int | None:
    """The 0-based position of the first pair of neighbours in a ranking's ``scores`` that are equal, or None (found
    by C iteration: every query's ranking is read, most to its end)."""
    return next(compress(count(), map(eq, scores, islice(scores, 1, None))), None)


def trec_eval_order(ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """trec_eval's order of ``ids`` (distinct) with their ``scores``: score descending, then document id descending.
    A list already by falling score (a rule-5 order) has only its runs of equal scores sorted, found by C iteration
    (a ranking holds a few ties among a hundred scores)."""
    if len(ids) != len(scores):
        raise ValueError("ids and scores differ in length")
    if any(map(gt, islice(scores, 1, None), scores)):
        return [d for _, d in sorted(zip(scores, ids, strict=True), reverse=True)]
    out = list(ids)
    tied = list(compress(count(1), map(eq, islice(scores, 1, None), scores)))  # k: scores[k] == scores[k - 1]
    i = 0
    while i < len(tied):
        lo, hi = tied[i] - 1, tied[i] + 1
        while i + 1 < len(tied) and tied[i + 1] == hi:
            hi += 1
            i += 1
        out[lo:hi] = sorted(out[lo:hi], reverse=True)
        i += 1
    return out


CHUNK = 2000  # tied queries ordered and re-scored at once
PASSAGE_DEPTH = 20  # the deepest passage cut-off measured; MRR reads down to the first relevant passage
MEETING_DEPTH = 10  # the meeting cut-off measured


def could_differ(a: Sequence[str], b: Sequence[str], relevant: Container[str], meeting_of: Mapping[str, str],
                 settled: int = 0) -> bool:
    """Whether two orders of one query's passages can score differently: only if they part before every measured
    position is settled — the passage cut-offs, the first relevant passage (MRR), the first ten meetings.
    ``settled``: a position before which the two are known to hold the same grades in the same places (see
    :func:`first_mixed`), even where they hold other passages."""
    shared = 0
    for x, y in zip(a, b, strict=True):
        if x != y:
            break
        shared += 1
    if shared == len(a):
        return False
    return reads_beyond(a, max(shared, settled), relevant, meeting_of)


def reads_beyond(a: Sequence[str], shared: int, relevant: Container[str], meeting_of: Mapping[str, str]) -> bool:
    """Whether a measure reads ``a`` at or after position ``shared``: a passage cut-off lies beyond it, or the first
    relevant passage (MRR) is not before it, or fewer than the meetings measured come before it."""
    if shared < PASSAGE_DEPTH:
        return True
    first_relevant = next((i for i, d in enumerate(a) if d in relevant), None)
    if first_relevant is not None and first_relevant >= shared:
        return True
    return len(set(map(meeting_of.__getitem__, a[:shared]))) < MEETING_DEPTH


@dataclass(frozen=True)
class Grades:
    """What says which tied queries can move: each query's graded passages and graded meetings (its qrels), and
    where its ranked passages sit in the inventory (``rankings.normalised_order``'s ``positions_out``, positions in
    ``placed.order``)."""

    passages: Mapping[str, Mapping[str, int]]
    meetings: Mapping[str, Mapping[str, int]]
    placed: Placement
    positions: Mapping[str, Any]

    @functools.cached_property
    def meeting_codes(self) -> tuple[dict[str, int], Any]:
        """Each meeting's code, and the code of each passage's meeting by position in ``placed.order``."""
        names, codes = self.placed.meetings
        return {m: i for i, m in enumerate(names)}, codes


_ABSENT = -(1 << 62)  # the grade of an unjudged passage or meeting: no qrels grade is this


def first_mixed(run: Mapping[str, Sequence[str]], best: Mapping[str, Sequence[float]], qids: Sequence[str],
                grades: Grades) -> dict[str, int]:
    """Each query of ``qids`` with a run of tied passages that mixes grades, in the order given, and where the first
    such run starts: before it the trec_eval order holds the same grades in the same places. Every measure reads
    only the grades down the passage list and down the list of meetings by first occurrence (and the qrels; the
    scorer's strictly falling scores leave trec_eval no tie to break by id), and trec_eval's order only sorts each
    run of tied passages by id; a run whose passages share one grade, and whose meetings share one grade, changes
    neither list however it is sorted. A query whose scores do not fall is sorted whole by trec_eval: its first
    position is 0. Found for every query at once, over one array of scores and grades."""
    import numpy as np

    lengths = [len(run[qid]) for qid in qids]
    if sum(lengths) == 0:
        return {}
    s = np.concatenate([np.asarray(best[qid], dtype=np.float64) for qid in qids])
    r = np.concatenate([np.asarray(grades.positions[qid], dtype=np.int64) for qid in qids])
    edges = np.concatenate(([0], np.cumsum(lengths))).tolist()
    q = np.repeat(np.arange(len(qids), dtype=np.int64), lengths)
    g = np.full(len(s), _ABSENT, dtype=np.int64)
    for k, qid in enumerate(qids):  # a query's graded passages are a few: found in its list by C scans
        ids = run[qid]
        for d, grade in grades.passages.get(qid, {}).items():
            if d in ids:
                g[edges[k] + ids.index(d)] = grade
    code, of_position = grades.meeting_codes
    width = max(len(code), 1)
    keys, values = [], []
    for k, qid in enumerate(qids):
        for m, grade in grades.meetings.get(qid, {}).items():
            if m in code:
                keys.append(k * width + code[m])
                values.append(grade)
    mg = np.full(len(s), _ABSENT, dtype=np.int64)
    if keys:
        sorted_keys, at = np.unique(np.array(keys, dtype=np.int64), return_index=True)
        key = q * width + of_position[r]
        i = np.minimum(np.searchsorted(sorted_keys, key), len(sorted_keys) - 1)
        hit = sorted_keys[i] == key
        mg[hit] = np.array(values, dtype=np.int64)[at][i[hit]]
    same = q[1:] == q[:-1]
    rising = same & (s[1:] > s[:-1])  # not a rule-5 order: trec_eval's sorts the whole list
    tie = same & (s[1:] == s[:-1])
    mixed = tie & ((g[1:] != g[:-1]) | (mg[1:] != mg[:-1]))
    # where each run of equal scores starts, for every position; the first flagged pair of each query (q rises along
    # the array: its first of each value found by comparing neighbours, without np.unique, whose first call imports
    # numpy.ma)
    run_start = np.maximum.accumulate(np.where(np.concatenate(([True], ~tie)), np.arange(len(s), dtype=np.int64), 0))
    flagged = np.flatnonzero(mixed | rising)
    if not len(flagged):
        return {}
    of = q[flagged]
    firsts = flagged[np.concatenate(([True], of[1:] != of[:-1]))]
    query = q[firsts]
    begins = np.asarray(edges, dtype=np.int64)[query]
    whole = np.zeros(len(qids), dtype=bool)
    whole[q[1:][rising]] = True
    start = np.where(whole[query], begins, run_start[firsts]) - begins
    return {qids[k]: p for k, p in zip(query.tolist(), start.tolist(), strict=True)}


def report(run: Mapping[str, Sequence[str]], best: Mapping[str, Sequence[float]], judged: Sequence[str],
           rescore: Callable[[Mapping[str, Sequence[str]]], Mapping[str, Mapping[str, float]]],
           values: Mapping[str, Mapping[str, float]], classes: Mapping[str, str],
           relevant: Mapping[str, Container[str]], meeting_of: Mapping[str, str],
           grades: Grades | None = None) -> Ties:
    """The tie report of the retrieval block (``Ties``; ``to_json`` is its tree in metrics.json).

    ``run`` is the rule-5 order per query and ``best`` its best raw scores in that order, ``judged`` the queries
    that are scored, ``rescore`` scores a run given in trec_eval's order the way the scorer does (per query,
    measure -> value), ``values`` the rule-5 per-query values, ``classes`` each judged query's class,
    ``relevant`` each query's relevant passages and ``meeting_of`` each passage's meeting. With ``grades`` (whose
    graded passages must then be ``relevant``'s, as scoring gives them), only the tied queries whose first run that
    mixes grades starts where a measure reads (:func:`first_mixed`) are ordered again: the others' values cannot
    move."""
    first_tie = {qid: tie_depth(best[qid]) for qid in run}
    with_ties = {k: sum(1 for qid in judged if (d := first_tie.get(qid)) is not None and d < k) for k in CUTOFFS}
    tied = [qid for qid in judged if first_tie.get(qid) is not None]
    changed_queries = 0
    changed_values = 0
    shifts: dict[tuple[str, str], float] = {}
    # a block of queries at a time: each query's other order and its re-scoring are its own, and a large run's
    # orders and scoring inputs never exist all at once
    for lo in range(0, len(tied), CHUNK):
        part = tied[lo:lo + CHUNK]
        # a tied query whose two orders agree wherever a measure looks has nothing to re-score: those whose first
        # run that mixes grades starts below everything a measure reads are not even ordered again
        settled = {qid: 0 for qid in part} if grades is None else first_mixed(run, best, part, grades)
        orders = {qid: trec_eval_order(run[qid], best[qid]) for qid, at in settled.items()
                  if reads_beyond(run[qid], at, relevant.get(qid, ()), meeting_of)}
        differ = [qid for qid, order in orders.items()
                  if could_differ(run[qid], order, relevant.get(qid, ()), meeting_of, settled[qid])]
        again = rescore({qid: orders[qid] for qid in differ}) if differ else {}
        for qid in differ:
            diff = [m for m, v in again[qid].items() if q6(v) != values[qid][m]]
            changed_queries += bool(diff)
            changed_values += len(diff)
            for m in diff:
                for cls in (classes[qid], "all"):
                    shifts[(cls, m)] = shifts.get((cls, m), 0.0) + q6(again[qid][m]) - values[qid][m]
    counts: dict[str, int] = {}
    for qid in judged:
        counts[classes[qid]] = counts.get(classes[qid], 0) + 1
    counts["all"] = len(judged)
    largest: Shift | None = None
    biggest = 0.0
    for (cls, m), total in sorted(shifts.items()):
        shift = q6(total / counts[cls])
        if abs(shift) > biggest:
            biggest = abs(shift)
            largest = Shift(cls, m, shift)
    return Ties(len(judged), len(tied), with_ties,
                TieEffect(changed_values > 0, changed_values, changed_queries, largest))


def note(ties: Ties) -> str:
    """The one-line note metrics.md carries."""
    t = ties.trec_eval
    where = ", ".join(f"{v} in top {k}" for k, v in sorted(ties.in_top.items()))
    if not t.changed_any_metric:
        effect = "trec_eval's tie rule would give every metric the same value"
    else:
        big = t.largest_shift
        shift = (f"; largest shift of a mean: {big.cls} {big.measure} {big.shift:+.6f}" if big
                 else "; no mean moves at 6 decimals")
        effect = (f"trec_eval's tie rule would change {t.values_changed} value(s) of {t.queries_changed} "
                  f"query(ies){shift}")
    return (f"ties: of {ties.queries_judged} judged queries, {ties.anywhere} hold a raw-score tie ({where}); "
            f"rule-5 order is scored, and {effect}.")


def meeting_order(pids: Sequence[str], meeting_of: Mapping[str, str], limit: int | None = None) -> list[str]:
    """A ranked passage list collapsed to meetings by first occurrence (docs/design.md §6); with ``limit``, its
    first ``limit`` meetings only, the list read no further than it takes to find them."""
    if limit is None:
        return list(dict.fromkeys(map(meeting_of.__getitem__, pids)))
    seen: dict[str, None] = {}
    for pid in pids:
        seen[meeting_of[pid]] = None
        if len(seen) == limit:
            break
    return list(seen)


class Rescorer:
    """Per-query values of a run given in another order, scored exactly as ``score_run`` scores (the tie report).
    A query whose other order starts with the same meetings as far as the meeting measures read (``m_order``: its
    rule-5 meetings) has no meeting value that can move, and only its passage values are given."""

    def __init__(self, p_qrels: Mapping[str, Mapping[str, int]], m_qrels: Mapping[str, Mapping[str, int]],
                 scored: metrics.Scorer, meeting_of: Mapping[str, str], m_order: Mapping[str, Sequence[str]]) -> None:
        self.p_qrels, self.m_qrels, self.scored, self.meeting_of = p_qrels, m_qrels, scored, meeting_of
        self.m_order = m_order
        cutoffs = [m.cutoff for m in metrics.MEETING_MEASURES]
        self.m_depth = None if None in cutoffs else max(c for c in cutoffs if c is not None)

    def __call__(self, other: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
        pq = {qid: self.p_qrels[qid] for qid in other if qid in self.p_qrels}
        passage_measures = metrics.PASSAGE_MEASURES
        pv = (metrics.evaluate(pq, metrics.lists_read(other, pq, pq, self.scored, passage_measures), passage_measures)
              if pq else {})
        k = self.m_depth
        meetings = {qid: top for qid in other
                    if (top := meeting_order(other[qid], self.meeting_of, k)) != list(self.m_order[qid][:k])}
        mq = {qid: self.m_qrels[qid] for qid in meetings}
        meeting_measures = metrics.MEETING_MEASURES
        mv = (metrics.evaluate(mq, metrics.lists_read(meetings, mq, mq, self.scored, meeting_measures),
                               meeting_measures) if mq else {})
        return {qid: {str(m): v for m, v in {**pv.get(qid, {}), **mv.get(qid, {})}.items()} for qid in other}
