"""Passage inventories and runs: what any engine (ours or another team's) hands the harness (DESIGN §1, §6).

A passage is ``(meeting, speaker, start, end)`` plus its id; a run is, per query, ranked passage ids
with scores. ``normalise`` applies DESIGN §3 rule 5 so that score ties and id conventions cannot move
a metric.
"""

from __future__ import annotations

import hashlib
import json
import math
from array import array
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from turnbench import canonical
from turnbench.errors import BadInput, UnjudgedPassage

T = TypeVar("T")
# the encoder canonical.dumps uses for a string (ensure_ascii off): the same escapes, byte for byte
_json_string = json.encoder.encode_basestring


@dataclass(frozen=True, slots=True)
class Passage:
    id: str
    meeting: str
    speaker: str
    start: float
    end: float
    index: int  # position of the passage within its meeting, 0-based
    kind: str = "turn"  # "turn" for speaker-turn passages; other kinds (titles, digests) sort after
    text_sha256: str = ""
    words: int = 0
    # Another engine may hand in the passage's text itself; turnbench's own inventories carry only its hash.
    text: str | None = None

    def canonical_line(self) -> bytes:
        """``canonical.dumps_line(self.to_json())``, written out: an inventory of a million passages is hashed
        (:func:`inventory_sha256`) in a second instead of ten. A passage carrying its text takes the general path."""
        if self.text is not None:
            return canonical.dumps_line(self.to_json())
        s = _json_string
        return (f'{{"end":{float.__repr__(self.end)},"id":{s(self.id)},"index":{int.__repr__(self.index)},'
                f'"kind":{s(self.kind)},"meeting":{s(self.meeting)},"speaker":{s(self.speaker)},'
                f'"start":{float.__repr__(self.start)},"text_sha256":{s(self.text_sha256)},'
                f'"words":{int.__repr__(self.words)}}}\n').encode()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "meeting": self.meeting, "speaker": self.speaker, "start": self.start,
            "end": self.end, "index": self.index, "kind": self.kind, "text_sha256": self.text_sha256,
            "words": self.words,
        }
        if self.text is not None:
            out["text"] = self.text
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Passage:
        """A passage record, every field of its type: a malformed record raises ValueError or TypeError."""
        text = d.get("text")
        sha = _of_type(d, "text_sha256", str, "")
        if text is not None:
            if not isinstance(text, str):
                raise TypeError(f"text is a {type(text).__name__}, not a string")
            own = canonical.sha256_bytes(text.encode("utf-8"))
            if sha and sha != own:
                raise ValueError("text_sha256 is not the sha256 of the passage's own text")
        if sha and not (len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
            raise ValueError(f"text_sha256 {sha[:80]!r} is not a sha256")
        start, end = _number(d, "start"), _number(d, "end")
        if end < start:
            raise ValueError(f"it ends ({end}) before it starts ({start})")
        index, words = _of_type(d, "index", int), _of_type(d, "words", int, 0)
        if index < 0 or words < 0:
            raise ValueError("index and words must not be negative")
        return cls(_name(d, "id"), _name(d, "meeting"), _name(d, "speaker"), start, end, index,
                   _of_type(d, "kind", str, "turn"), sha, words, text)


def _of_type(d: Mapping[str, Any], key: str, kind: type[T], default: T | None = None) -> T:
    if key not in d:
        if default is None:
            raise KeyError(key)
        return default
    value = d[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{key} is a {type(value).__name__}, not a {kind.__name__}")
    return value


def _name(d: Mapping[str, Any], key: str) -> str:
    value = _of_type(d, key, str)
    if not value.strip():
        raise ValueError(f"{key} is empty")
    return value


def _number(d: Mapping[str, Any], key: str) -> float:
    value = d[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{key} is {value!r}, not a finite number")
    return float(value)


@dataclass(frozen=True)
class Scope:
    """Which passages a run searched. ``gold-meetings`` is an ORACLE: it knows each answer's meetings, so its
    figures are an upper bound on ranking within meetings, never a product figure; the label travels with
    every run and result made under it."""

    name: str
    oracle: bool
    label: str  # what the run's resolved arm configuration says
    meaning: str  # what a results file says


SCOPES: Mapping[str, Scope] = MappingProxyType({s.name: s for s in (
    Scope("corpus", False, "corpus: every passage in the index is a candidate (what a product does)",
          "retrieval over the whole corpus, as a product does"),
    Scope("gold-meetings", True, "ORACLE UPPER BOUND: each query is restricted to its own gold meetings",
          "ORACLE: retrieval restricted to each query's gold meetings; an upper bound, not a system result"),
)})


def get_scope(name: str) -> Scope:
    try:
        return SCOPES[name]
    except KeyError:
        raise BadInput(f"unknown scope {name!r}; scopes: {', '.join(SCOPES)}") from None


@dataclass(frozen=True, slots=True)
class RankedPassage:
    query_id: str
    passage_id: str
    rank: int  # 1-based
    score: float


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


def write_passages(path: Path, passages: Iterable[Passage]) -> str:
    """Write ``passages.jsonl`` sorted by (meeting, index); returns its sha256."""
    rows = sorted(passages, key=lambda p: (p.meeting, p.index, p.id))
    data = b"".join(p.canonical_line() for p in rows)
    canonical.write_bytes_atomic(Path(path), data)
    return canonical.sha256_bytes(data)


def inventory_sha256(passages: Iterable[Passage]) -> str:
    """The sha256 ``write_passages`` would return for these passages, without writing: the inventory's identity."""
    rows = sorted(passages, key=lambda p: (p.meeting, p.index, p.id))
    h = hashlib.sha256()
    for p in rows:
        h.update(p.canonical_line())
    return h.hexdigest()


def read_passages(path: Path) -> list[Passage]:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: passage inventory not found")
    passages = list(canonical.read_records(path, Passage.from_json, "a passage record", BadInput))
    seen: set[str] = set()
    for p in passages:
        if p.id in seen:
            raise BadInput(f"{path}: passage id {p.id!r} appears more than once")
        seen.add(p.id)
    return passages


def _score(text: Any, where: str) -> float:
    """A run's score: a finite number. An infinite one would silently hand the order to the tie-break."""
    try:
        value = float(text) if not isinstance(text, bool) else float("nan")
    except (TypeError, ValueError):
        raise BadInput(f"{where}: score {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise BadInput(f"{where}: score {value} is not a finite number")
    return value


def read_trec_run(path: Path) -> list[RankedPassage]:
    """Read a six-column TREC run (``qid Q0 docid rank score tag``)."""
    out = []
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise BadInput(f"{path}: line {n} is not UTF-8 text") from None
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise BadInput(f"{path}: line {n} has {len(parts)} columns, a TREC run has 6")
            qid, _q0, docid, rank, score, _tag = parts
            try:
                rank_n = int(rank)
            except ValueError:
                raise BadInput(f"{path}: line {n}: rank {rank[:40]!r} is not a whole number") from None
            out.append(RankedPassage(qid, docid, rank_n, _score(score, f"{path}: line {n}")))
    return out


def read_jsonl_run(path: Path) -> list[RankedPassage]:
    """Read ``run.jsonl``: one line per query, ``{"query": id, "passages": [[id, score], ...]}``."""
    out = []
    for n, d in canonical.read_jsonl_numbered(path, BadInput):
        where = f"{path}: line {n}"
        if not isinstance(d, dict) or not isinstance(d.get("query"), str) or not isinstance(d.get("passages"), list):
            raise BadInput(f'{where} is not {{"query": id, "passages": [[id, score], ...]}}')
        for rank, item in enumerate(d["passages"], 1):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                raise BadInput(f"{where}: passage {rank} is not a [passage id, score] pair")
            out.append(RankedPassage(d["query"], item[0], rank, _score(item[1], where)))
    return out


def read_run(path: Path) -> list[RankedPassage]:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: run file not found")
    return read_jsonl_run(path) if path.suffix == ".jsonl" else read_trec_run(path)


def normalised_order(entries: Iterable[RankedPassage], passages: Mapping[str, Passage],
                     scores_out: dict[str, list[float]] | None = None) -> dict[str, list[str]]:
    """Each query's passage ids in DESIGN §3 rule 5 order: a passage listed twice keeps its best score, then
    (-score, kind, meeting, index, id). ``scores_out``, when given, receives each query's best raw scores in
    that order (what a tie report reads).

    trec_eval breaks score ties by document id, other tools by insertion order; after this neither can change
    a metric. A ranked passage missing from the inventory is refused, never skipped. Sorted with numpy
    because scoring orders up to millions of entries.
    """
    import numpy as np

    order = sorted(passages.values(), key=lambda p: (p.kind, p.meeting, p.index, p.id))
    rank = {p.id: i for i, p in enumerate(order)}
    if isinstance(entries, Ranking):
        # our own arms hand over hits already in rule-5 order (index sorting, or an explicit sort): checked, not sorted
        done = _already_in_order(entries, rank, scores_out)
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
        best = s_arr[i].tolist()
        scores_out.update({qid: best[bounds[k]:bounds[k + 1]] for k, qid in enumerate(present)})
    return {qid: flat[bounds[k]:bounds[k + 1]] for k, qid in enumerate(present)}


def _already_in_order(ranking: Ranking, rank: Mapping[str, int],
                      scores_out: dict[str, list[float]] | None) -> dict[str, list[str]] | None:
    """The rule-5 order of ``ranking`` when it is already in it — queries in id order, each query's hits by falling
    score then inventory order, no passage twice — else None (the caller sorts). One pass over arrays."""
    import numpy as np

    qids, bounds = ranking.query_ids, ranking.bounds
    if any(a >= b for a, b in zip(qids, qids[1:], strict=False)):
        return None
    r = np.fromiter((rank.get(pid, -1) for pid in ranking.passage_ids), dtype=np.int64, count=len(ranking))
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
    if len(np.unique(q * max(len(rank), 1) + r)) != len(r):
        return None
    pids = ranking.passage_ids
    present = [k for k in range(len(qids)) if bounds[k + 1] > bounds[k]]
    if scores_out is not None:
        scores = s.tolist()
        scores_out.update({qids[k]: scores[bounds[k]:bounds[k + 1]] for k in present})
    return {qids[k]: list(pids[bounds[k]:bounds[k + 1]]) for k in present}


def normalise(entries: Iterable[RankedPassage], passages: Mapping[str, Passage]) -> dict[str, list[RankedPassage]]:
    """``normalised_order`` with strictly decreasing scores, so no tie is left for any tool to break."""
    out: dict[str, list[RankedPassage]] = {}
    for qid, pids in normalised_order(entries, passages).items():
        n = len(pids)
        out[qid] = [RankedPassage(qid, pid, r, float(n - r + 1)) for r, pid in enumerate(pids, 1)]
    return out


def write_trec_run(path: Path, run: Mapping[str, Sequence[RankedPassage]], tag: str) -> str:
    lines = []
    for qid in sorted(run):
        for e in run[qid]:
            # repr: the float round-trips, so no rounding can create or break a tie
            lines.append(f"{qid} Q0 {e.passage_id} {e.rank} {e.score!r} {tag}\n")
    data = "".join(lines).encode()
    canonical.write_bytes_atomic(Path(path), data)
    return canonical.sha256_bytes(data)


def write_jsonl_run(path: Path, run: Mapping[str, Sequence[RankedPassage]]) -> str:
    return canonical.write_jsonl(
        Path(path),
        ({"query": qid, "passages": [[e.passage_id, e.score] for e in run[qid]]} for qid in sorted(run)),
    )
