"""Passage inventories and runs: what any engine (ours or another team's) hands the harness (DESIGN §1, §6).

A passage is ``(meeting, speaker, start, end)`` plus its id; a run is, per query, ranked passage ids
with scores. ``normalise`` applies DESIGN §3 rule 5 so that score ties and id conventions cannot move
a metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from turnbench import canonical
from turnbench.errors import BadInput, UnjudgedPassage


@dataclass(frozen=True)
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

    def to_json(self) -> dict:
        return {
            "id": self.id, "meeting": self.meeting, "speaker": self.speaker, "start": self.start,
            "end": self.end, "index": self.index, "kind": self.kind, "text_sha256": self.text_sha256,
            "words": self.words,
        }

    @classmethod
    def from_json(cls, d: Mapping) -> Passage:
        try:
            return cls(str(d["id"]), str(d["meeting"]), str(d["speaker"]), float(d["start"]), float(d["end"]),
                       int(d["index"]), str(d.get("kind", "turn")), str(d.get("text_sha256", "")),
                       int(d.get("words", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInput(f"passage record {d!r} is not a valid passage ({exc})") from None


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


@dataclass(frozen=True)
class RankedPassage:
    query_id: str
    passage_id: str
    rank: int  # 1-based
    score: float


def write_passages(path: Path, passages: Iterable[Passage]) -> str:
    """Write ``passages.jsonl`` sorted by (meeting, index); returns its sha256."""
    rows = sorted(passages, key=lambda p: (p.meeting, p.index, p.id))
    return canonical.write_jsonl(path, (p.to_json() for p in rows))


def inventory_sha256(passages: Iterable[Passage]) -> str:
    """The sha256 ``write_passages`` would return for these passages, without writing: the inventory's identity."""
    rows = sorted(passages, key=lambda p: (p.meeting, p.index, p.id))
    return canonical.sha256_bytes(b"".join(canonical.dumps_line(p.to_json()) for p in rows))


def read_passages(path: Path) -> list[Passage]:
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: passage inventory not found")
    passages = [Passage.from_json(d) for d in canonical.read_jsonl(path)]
    seen: set[str] = set()
    for p in passages:
        if p.id in seen:
            raise BadInput(f"{path}: passage id {p.id!r} appears more than once")
        seen.add(p.id)
    return passages


def read_trec_run(path: Path) -> list[RankedPassage]:
    """Read a six-column TREC run (``qid Q0 docid rank score tag``)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise BadInput(f"{path}: line {n} has {len(parts)} columns, a TREC run has 6")
            qid, _q0, docid, rank, score, _tag = parts
            try:
                out.append(RankedPassage(qid, docid, int(rank), float(score)))
            except ValueError:
                raise BadInput(f"{path}: line {n}: rank or score is not a number") from None
    return out


def read_jsonl_run(path: Path) -> list[RankedPassage]:
    """Read ``run.jsonl``: one line per query, ``{"query": id, "passages": [[id, score], ...]}``."""
    out = []
    for d in canonical.read_jsonl(path):
        for rank, (pid, score) in enumerate(d["passages"], 1):
            out.append(RankedPassage(str(d["query"]), str(pid), rank, float(score)))
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

    entries = entries if isinstance(entries, list) else list(entries)
    if not entries:
        return {}
    order = sorted(passages.values(), key=lambda p: (p.kind, p.meeting, p.index, p.id))
    rank = {p.id: i for i, p in enumerate(order)}
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
    if np.isnan(s_arr).any():
        raise BadInput("the run holds a score that is not a number")
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
