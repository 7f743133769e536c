"""Runs: per query, ranked passage ids with the engine's raw scores, put in rule-5 order (their files: ``runfiles``).

``normalised_order`` applies docs/design.md §3 rule 5 so that score ties and id conventions cannot move a
metric: a passage listed twice keeps its best score, then (-score, kind, meeting, index, id).
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from turnbench.errors import BadInput, UnjudgedPassage
from turnbench.passages import Passage, meeting_codes


@dataclass(frozen=True, slots=True)
class RankedPassage:
    query_id: str
    passage_id: str
    rank: int  # 1-based
    score: float


class Coded(Sequence[str]):
    """A column of strings as int32 codes into a table of the distinct ones: a run names each passage of its
    inventory many times, so a million hits are a few hundred thousand strings and an array (one look-up per
    distinct passage where there was one per hit, and a small pickle for the process that reads it)."""

    __slots__ = ("names", "codes")

    def __init__(self, names: list[str], codes: array) -> None:
        self.names, self.codes = names, codes

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(map(self.names.__getitem__, self.codes[i]))
        return self.names[self.codes[i]]

    def __iter__(self) -> Iterator[str]:
        return map(self.names.__getitem__, self.codes)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return Coded, (self.names, self.codes)


@dataclass(frozen=True, eq=False)
class Ranking:
    """A run column by column, as an engine handed it over: per query, in the order given, its passage ids and raw
    scores (ranks are positions). What the retrieval arms return: millions of hits without an object each; iterating
    yields :class:`RankedPassage` records one at a time for the code that wants them."""

    query_ids: tuple[str, ...]
    bounds: tuple[int, ...]  # query k's hits are passage_ids[bounds[k]:bounds[k + 1]]
    passage_ids: Sequence[str]
    scores: Sequence[float]

    def __post_init__(self) -> None:
        if not (len(self.bounds) == len(self.query_ids) + 1 and self.bounds[-1] == len(self.passage_ids)
                == len(self.scores)):
            raise ValueError("a ranking's bounds must cover its passage ids and scores exactly")

    def __len__(self) -> int:
        return len(self.passage_ids)

    def __iter__(self) -> Iterator[RankedPassage]:
        pids, scores, bounds = self.passage_ids, self.scores, self.bounds
        for k, qid in enumerate(self.query_ids):
            for rank, i in enumerate(range(bounds[k], bounds[k + 1]), 1):
                yield RankedPassage(qid, pids[i], rank, scores[i])

    def hits(self, k: int) -> tuple[Sequence[str], Sequence[float]]:
        """Query ``k``'s passage ids and scores, in rank order."""
        lo, hi = self.bounds[k], self.bounds[k + 1]
        return self.passage_ids[lo:hi], self.scores[lo:hi]

    def only(self, keep: Container[str]) -> Ranking:
        """The queries in ``keep``, in this ranking's order (itself when that is every query: no copy of the
        columns, which are millions of hits on a large corpus)."""
        if all(qid in keep for qid in self.query_ids):
            return self
        return Ranking.build((qid, *self.hits(k)) for k, qid in enumerate(self.query_ids) if qid in keep)

    @classmethod
    def build(cls, per_query: Iterable[tuple[str, Sequence[str], Sequence[float]]]) -> Ranking:
        """From ``(query id, passage ids, scores)`` per query, queries in the order given."""
        qids: list[str] = []
        bounds = [0]
        pids: list[str] = []
        scores = array("d")
        for qid, ids, sc in per_query:
            qids.append(qid)
            pids.extend(ids)
            scores.extend(sc)
            bounds.append(len(pids))
        return cls(tuple(qids), tuple(bounds), pids, scores)


def inventory_order(passages: Iterable[Passage]) -> list[Passage]:  # rule 5's: (kind, meeting, index, id)
    return sorted(passages, key=attrgetter("kind", "meeting", "index", "id"))  # the key tuples made in C


@dataclass(frozen=True, eq=False)
class Placement:
    """An inventory in rule-5 order (``inventory_order``), each passage's position there, and (when first asked for)
    the meeting of each position as a code into the sorted meeting ids: what ordering runs over the inventory reads,
    made once (scoring makes it while its run is still being read)."""

    order: list[Passage]
    at: dict[str, int]

    @classmethod
    def of(cls, passages: Iterable[Passage]) -> Placement:
        order = inventory_order(passages)
        return cls(order, {p.id: i for i, p in enumerate(order)})

    @functools.cached_property
    def meetings(self) -> tuple[list[str], Any]:
        """``passages.meeting_codes(order)``."""
        return meeting_codes(self.order)


def normalised_order(entries: Iterable[RankedPassage], passages: Mapping[str, Passage],
                     scores_out: dict[str, Sequence[float]] | None = None,
                     meetings_out: dict[str, list[str]] | None = None, *,
                     placed: Placement | None = None, positions_out: dict[str, Any] | None = None
                     ) -> dict[str, list[str]]:
    """Each query's passage ids in docs/design.md §3 rule 5 order: a passage listed twice keeps its best score, then
    (-score, kind, meeting, index, id). ``scores_out``, when given, receives each query's best raw scores in
    that order (what a tie report reads); ``meetings_out`` each query's meetings in that order by first occurrence
    (the run at meeting level, docs/design.md §6), found from the same arrays; ``positions_out`` each query's
    passages as their positions in ``placed.order`` (``placed``: the inventory placed, made here when not given).

    trec_eval breaks score ties by document id, other tools by insertion order; after this neither can change
    a metric. A ranked passage missing from the inventory is refused, never skipped. Sorted with numpy
    because scoring orders up to millions of entries.
    """
    import numpy as np

    placed = Placement.of(passages.values()) if placed is None else placed
    order, rank = placed.order, placed.at
    if isinstance(entries, Ranking):
        # our own arms hand over hits already in rule-5 order (index sorting, or an explicit sort): checked, not sorted
        done = _already_in_order(entries, placed, scores_out, meetings_out, positions_out)
        if done is not None:
            return done
    entries = entries if isinstance(entries, list) else list(entries)
    if not entries:
        return {}
    qids = [e.query_id for e in entries]
    ranks = list(map(rank.get, [e.passage_id for e in entries]))
    if None in ranks:
        e = entries[ranks.index(None)]
        raise UnjudgedPassage(f"query {e.query_id}: ranked passage {e.passage_id!r} is not in the passage inventory")
    uq = sorted(set(qids))
    code = {q: i for i, q in enumerate(uq)}
    q_arr = np.fromiter(map(code.__getitem__, qids), dtype=np.int64, count=len(qids))
    r_arr = np.array(ranks, dtype=np.int64)
    s_arr = np.array([e.score for e in entries], dtype=np.float64)
    if not np.isfinite(s_arr).all():
        raise BadInput("the run holds a score that is not a finite number")
    # best score per (query, passage): sort by (query, passage, -score) and keep the first of each pair
    i = np.lexsort((-s_arr, r_arr, q_arr))
    q_arr, r_arr, s_arr = q_arr[i], r_arr[i], s_arr[i]
    first = np.ones(len(q_arr), dtype=bool)
    first[1:] = (q_arr[1:] != q_arr[:-1]) | (r_arr[1:] != r_arr[:-1])
    q_arr, r_arr, s_arr = q_arr[first], r_arr[first], s_arr[first]
    i = np.lexsort((r_arr, -s_arr, q_arr))
    q_arr, r_arr = q_arr[i], r_arr[i]
    cuts = (np.flatnonzero(q_arr[1:] != q_arr[:-1]) + 1).tolist()
    ids = [p.id for p in order]
    flat = list(map(ids.__getitem__, r_arr.tolist()))
    bounds = [0, *cuts, len(flat)]
    present = [uq[c] for c in q_arr[[0, *cuts]].tolist()]
    if scores_out is not None:
        best = _packed(s_arr[i])
        scores_out.update({qid: best[bounds[k]:bounds[k + 1]] for k, qid in enumerate(present)})
    if meetings_out is not None:
        meetings_out.update(zip(present, _first_meetings(placed, r_arr, bounds), strict=True))
    if positions_out is not None:
        positions_out.update({qid: r_arr[bounds[k]:bounds[k + 1]] for k, qid in enumerate(present)})
    return {qid: flat[bounds[k]:bounds[k + 1]] for k, qid in enumerate(present)}


def _first_meetings(placed: Placement, r: Any, bounds: Sequence[int]) -> list[list[str]]:
    """Per query (its hits are ``r[bounds[k]:bounds[k + 1]]``, positions in ``placed.order``), the meetings of its hits
    by first occurrence: one sort of (query, meeting) codes, where a dict per query looked up every hit's meeting by
    id."""
    import numpy as np

    names, codes = placed.meetings
    meeting = codes[np.asarray(r)]
    edges = np.asarray(bounds, dtype=np.int64)
    query = np.repeat(np.arange(len(edges) - 1, dtype=np.int64), np.diff(edges))
    first = np.sort(np.unique(query * max(len(names), 1) + meeting, return_index=True)[1])
    found = [names[c] for c in meeting[first].tolist()]
    cut = np.searchsorted(first, edges).tolist()
    return [found[cut[k]:cut[k + 1]] for k in range(len(edges) - 1)]


def _already_in_order(ranking: Ranking, placed: Placement, scores_out: dict[str, Sequence[float]] | None,
                      meetings_out: dict[str, list[str]] | None = None, positions_out: dict[str, Any] | None = None
                      ) -> dict[str, list[str]] | None:
    """The rule-5 order of ``ranking`` when it is already in it — queries in id order, each query's hits by falling
    score then inventory order, no passage twice — else None (the caller sorts). One pass over arrays."""
    import numpy as np

    rank = placed.at
    qids, bounds = ranking.query_ids, ranking.bounds
    if any(a >= b for a, b in zip(qids, qids[1:], strict=False)):
        return None
    pids = ranking.passage_ids
    if isinstance(pids, Coded):
        # one look-up per distinct passage. The run's ids stay its own strings: made after scoring's children were
        # forked, they are this process's alone, where the inventory's are shared with them until written to, and
        # counting a reference to one is a write (taking them cost a copied page per few passages)
        known = np.fromiter((rank.get(n, -1) for n in pids.names), dtype=np.int64, count=len(pids.names))
        r = known[np.frombuffer(pids.codes, dtype=np.intc)] if len(pids) else np.empty(0, dtype=np.int64)
    else:
        r = np.fromiter((rank.get(pid, -1) for pid in pids), dtype=np.int64, count=len(ranking))
    if len(r) and r.min() < 0:
        i = int(np.flatnonzero(r < 0)[0])
        k = int(np.searchsorted(np.asarray(bounds), i, side="right")) - 1
        raise UnjudgedPassage(f"query {qids[k]}: ranked passage {ranking.passage_ids[i]!r} is not in the passage "
                              "inventory")
    s = np.asarray(ranking.scores, dtype=np.float64)
    if not np.isfinite(s).all():
        raise BadInput("the run holds a score that is not a finite number")
    counts = [b - a for a, b in zip(bounds, bounds[1:], strict=False)]
    q = np.repeat(np.arange(len(qids), dtype=np.int64), counts)
    same = q[1:] == q[:-1]
    if (same & ((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (r[1:] <= r[:-1])))).any():
        return None
    key = np.sort(q * max(len(rank), 1) + r)  # a passage twice in one query: equal neighbours once sorted
    if (key[1:] == key[:-1]).any():
        return None
    present = [k for k in range(len(qids)) if bounds[k + 1] > bounds[k]]
    if scores_out is not None:
        scores = _packed(s)
        scores_out.update({qids[k]: scores[bounds[k]:bounds[k + 1]] for k in present})
    if meetings_out is not None:
        firsts = _first_meetings(placed, r, bounds)
        meetings_out.update({qids[k]: firsts[k] for k in present})
    if positions_out is not None:
        positions_out.update({qids[k]: r[bounds[k]:bounds[k + 1]] for k in present})
    flat = list(pids)  # one pass over the codes, then a list slice per query
    return {qids[k]: flat[bounds[k]:bounds[k + 1]] for k in present}


def _packed(values: Any) -> array:
    """A numpy float vector as an ``array('d')`` (native float64, as numpy's): its slices hold a query's scores at 8
    bytes each, where a list of floats spends 32 (tens of millions of hits at 20,000 meetings)."""
    import numpy as np

    return array("d", np.ascontiguousarray(values, dtype=np.float64).tobytes())


def normalise(entries: Iterable[RankedPassage], passages: Mapping[str, Passage]) -> dict[str, list[RankedPassage]]:
    """``normalised_order`` with strictly decreasing scores, so no tie is left for any tool to break."""
    out: dict[str, list[RankedPassage]] = {}
    for qid, pids in normalised_order(entries, passages).items():
        n = len(pids)
        out[qid] = [RankedPassage(qid, pid, r, float(n - r + 1)) for r, pid in enumerate(pids, 1)]
    return out
