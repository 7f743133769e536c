"""Run files: a TREC or JSON-lines run read into a :class:`~turnbench.rankings.Ranking` (or records, where it cannot
be one), and runs written.

A TREC run is read column by column, a block of whole lines at a time, every line checked (six columns, a whole-number
rank, a finite score); a line that is not is refused, naming it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import compress, islice, pairwise, repeat
from operator import is_, ne
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput
from turnbench.passages import Passage
from turnbench.rankings import Coded, RankedPassage, Ranking


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
    return _records(*_trec_columns(path))


def read_trec_ranking(path: Path) -> list[RankedPassage] | Ranking:
    """A TREC run as one :class:`Ranking` when each query's lines are together and ranked 1, 2, 3, … in file order
    (what turnbench and most engines write: its ranks are its positions, so nothing the file says is lost), without
    an object per line; else as records, as :func:`read_trec_run` reads it."""
    columns = _trec_columns(path)
    ranking = _as_ranking(*columns)
    return ranking if ranking is not None else _records(*columns)


def _records(qids: Sequence[str], pids: Sequence[str], ranks: list[int], scores: array) -> list[RankedPassage]:
    return [RankedPassage(q, p, r, v) for q, p, r, v in zip(qids, pids, ranks, scores, strict=True)]


def _trec_columns(path: Path) -> tuple[Coded, Coded, list[int], array]:
    """A TREC run's query ids and passage ids (both coded), ranks and scores, line by line, every line checked."""
    qtable: dict[str, int] = {}
    qcodes = array("i")
    table: dict[str, int] = {}
    codes = array("i")
    ranks: list[int] = []
    scores = array("d")
    seen = 0  # lines before this block
    with open(path, "rb") as fh:
        # blocks of whole lines decoded and split at once (a per-line decode was a third of the reading); small
        # enough that a block's tokens stay in the CPU's cache while they are read: 4 MB blocks took twice as long
        for block in iter(lambda: fh.readlines(1 << 16), []):
            try:
                text = b"".join(block).decode("utf-8")
            except UnicodeDecodeError:
                bad = next(i for i, raw in enumerate(block) if not _is_utf8(raw))
                raise BadInput(f"{path}: line {seen + bad + 1} is not UTF-8 text") from None
            columns = _block_columns(text)
            if columns is None:  # a blank line, or one that is not six columns: read line by line, which says why
                columns = _block_by_lines(text, str(path), seen + 1)
            q, docids, r, v = columns
            _extend_by_runs(qcodes, q, qtable)
            codes.extend(_coded(docids, table))
            ranks.extend(r)
            scores.extend(array("d", v))
            seen += len(block)
    return Coded(list(qtable), qcodes), Coded(list(table), codes), ranks, scores


def _coded(names: list[str], table: dict[str, int]) -> array:
    """``names`` as codes into ``table``, a name not in it yet given the next code: every name looked up by C
    iteration, and only those not found (a run names most passages more than once) given one in Python."""
    codes = list(map(table.get, names))
    for i in compress(range(len(codes)), map(is_, codes, repeat(None))):
        codes[i] = table.setdefault(names[i], len(table))
    return array("i", codes)


def _extend_by_runs(codes: array, names: list[str], table: dict[str, int]) -> None:
    """``codes`` extended with those of ``names`` in ``table`` (a name not in it yet given the next code), a run of
    one name at a time: a query's lines come together, so only the first of each run is looked up (the runs are found
    by comparing neighbours in C; a million query ids hashed one by one cost more than the rest of their reading)."""
    n = len(names)
    starts = [0, *compress(range(1, n), map(ne, islice(names, 1, None), names)), n] if n else [0]
    for a, b in zip(starts, starts[1:], strict=False):
        codes.extend(array("i", [table.setdefault(names[a], len(table))]) * (b - a))


_Columns = tuple[list[str], list[str], list[int], list[float]]
_END = "\x00"  # a token no line can hold once the block is known not to contain it


def _block_columns(text: str) -> _Columns | None:
    """The columns of a block of whole lines when every line has six columns and every rank and score reads, split
    by the C splitter at once: each line end becomes a token, which must then be every seventh token and only
    those. None for anything else (a blank line included), which the line-by-line reader reads or refuses."""
    if _END in text:
        return None
    text = text if text.endswith("\n") else text + "\n"
    tokens = text.replace("\n", f" {_END}\n").split()
    lines = len(tokens) // 7
    # every seventh token a line end, and no other (a blank line is a line end of its own)
    if len(tokens) % 7 or text.count("\n") != lines or tokens[6::7].count(_END) != lines:
        return None
    try:
        ranks = list(map(int, tokens[3::7]))
        scores = list(map(float, tokens[4::7]))
    except ValueError:
        return None
    if not all(map(math.isfinite, scores)):
        return None
    return tokens[0::7], tokens[2::7], ranks, scores


def _block_by_lines(text: str, where: str, first: int) -> _Columns:
    """The columns of a block of whole lines, numbered from ``first``, read one line at a time: a line that is not
    six columns, a rank that is not a whole number or a score that is not a finite number is refused, naming it."""
    qids: list[str] = []
    docids: list[str] = []
    ranks: list[int] = []
    scores: list[float] = []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the block ends with a newline: no line after it
    for n, (qid, _q0, docid, rank, score, _tag) in trec_rows(lines, where, first):
        try:
            rank_n = int(rank)
        except ValueError:
            raise BadInput(f"{where}: line {n}: rank {rank[:40]!r} is not a whole number") from None
        try:
            value = float(score)
        except ValueError:
            value = _score(score, f"{where}: line {n}")
        if not math.isfinite(value):
            _score(score, f"{where}: line {n}")
        qids.append(qid)
        docids.append(docid)
        ranks.append(rank_n)
        scores.append(value)
    return qids, docids, ranks, scores


def _as_ranking(qids: Coded, pids: Sequence[str], ranks: list[int], scores: array) -> Ranking | None:
    """The lines as a Ranking when each query's are together and ranked by position, else None. Compared as arrays:
    a run is a million lines."""
    import numpy as np

    if not len(qids):
        return Ranking((), (0,), [], scores)
    q = np.frombuffer(qids.codes, dtype=np.intc)
    bounds = [0, *(np.flatnonzero(q[1:] != q[:-1]) + 1).tolist(), len(qids)]
    # codes are given in order of first occurrence: each query's lines are together exactly when the k-th run of
    # lines is of the k-th query named
    if not np.array_equal(q[bounds[:-1]], np.arange(len(bounds) - 1)):
        return None  # a query's lines apart: the records keep where each line was
    order = list(qids.names)
    edges = np.asarray(bounds, dtype=np.int64)
    position = np.arange(1, len(qids) + 1, dtype=np.int64) - np.repeat(edges[:-1], np.diff(edges))
    try:
        given = np.asarray(ranks, dtype=np.int64)
    except OverflowError:
        return None  # a rank no position can be
    if not np.array_equal(given, position):
        return None
    return Ranking(tuple(order), tuple(bounds), pids, scores)


def trec_rows(lines: Iterable[str], where: str, first: int = 1) -> Iterator[tuple[int, list[str]]]:
    """(line number, its six columns) of each non-blank line of a TREC run, numbered from ``first``; a line of
    another width is refused, naming it."""
    for n, line in enumerate(lines, first):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise BadInput(f"{where}: line {n} has {len(parts)} columns, a TREC run has 6")
        yield n, parts


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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


def read_ranking(path: Path) -> list[RankedPassage] | Ranking:
    """A run file to score: a TREC run column-wise where it can be (:func:`read_trec_ranking`), else records."""
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: run file not found")
    return read_jsonl_run(path) if path.suffix == ".jsonl" else read_trec_ranking(path)


BLOCK_QUERIES = 256  # queries per block of lines: a large run's text is never held whole
# the bytes canonical JSON writes in a string as they are: printable ASCII but the quote and the backslash
_JSON_PLAIN = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')


def ranking_lines(ranking: Ranking, tag: str, *, jsonl: bool = True) -> Iterator[tuple[bytes, bytes | None]]:
    """The run as the engine handed it over (its ranks, its raw scores), a block of queries at a time in the
    ranking's order, queries without hits left out: the block's run.trec lines and (``jsonl``) its run.jsonl lines,
    the bytes ``write_trec_run`` and ``write_jsonl_run`` write for it. Each score's text is made once for both files
    (``canonical.float_texts``: repr's text), and each block is one join of its pieces, laid side by side by slice
    assignment: no string or tuple per hit but the pieces themselves. The run.jsonl lines are None when an id is one
    canonical JSON would escape (a quote, a backslash, a control or non-ASCII character): the caller writes that
    file as canonical JSON, line by line."""
    from itertools import chain

    texts = canonical.float_texts(ranking.scores)
    if texts is None:
        texts = list(map(float.__repr__, map(float, ranking.scores)))
        jsonl = False  # a score canonical JSON writes otherwise (1e+16), or refuses (NaN)
    if jsonl:
        pids = ranking.passage_ids
        names = pids.names if isinstance(pids, Coded) else pids
        ids = "".join(ranking.query_ids) + "".join(names)
        jsonl = ids.isascii() and not ids.encode("ascii").translate(None, _JSON_PLAIN)
    bounds, tail = ranking.bounds, f" {tag}\n"
    ranks = [f" {r} " for r in range(1, max((b - a for a, b in pairwise(bounds)), default=0) + 1)]
    for first in range(0, len(ranking.query_ids), BLOCK_QUERIES):
        block = [(qid, bounds[k], bounds[k + 1]) for k, qid in enumerate(
            ranking.query_ids[first:first + BLOCK_QUERIES], first) if bounds[k + 1] > bounds[k]]
        if not block:
            continue
        lo, hi = block[0][1], block[-1][2]
        pids, scores = ranking.passage_ids[lo:hi], texts[lo:hi]
        n = hi - lo
        trec: list[str] = [tail] * (5 * n)  # per hit: the query's head, the id, the rank, the score, the tag
        trec[0::5] = list(chain.from_iterable(repeat(f"{qid} Q0 ", b - a) for qid, a, b in block))
        trec[1::5] = pids
        trec[2::5] = list(chain.from_iterable(islice(ranks, b - a) for _, a, b in block))
        trec[3::5] = scores
        line = None
        if jsonl:  # per hit: the id, '",', the score, and what follows: the next pair, or the end of the line
            pieces: list[str] = ['],["'] * (4 * n)
            pieces[0::4], pieces[1::4], pieces[2::4] = pids, ['",'] * n, scores
            for qid, _, b in block:  # {"passages":[["p1",s1],["p2",s2]],"query":"q"}: sorted keys, no spaces
                pieces[4 * (b - lo) - 1] = ']],"query":"' + qid + '"}\n{"passages":[["'
            pieces[-1] = pieces[-1][:-len('{"passages":[["')]
            line = ('{"passages":[["' + "".join(pieces)).encode("ascii")
        yield "".join(trec).encode("utf-8"), line


def write_trec_run(path: Path, run: Mapping[str, Sequence[RankedPassage]], tag: str) -> str:
    # repr: the float round-trips, so no rounding can create or break a tie
    data = "".join(f"{qid} Q0 {e.passage_id} {e.rank} {e.score!r} {tag}\n" for qid in sorted(run)
                   for e in run[qid]).encode()
    canonical.write_bytes_atomic(Path(path), data)
    return canonical.sha256_bytes(data)


def write_jsonl_run(path: Path, run: Mapping[str, Sequence[RankedPassage]]) -> str:
    return canonical.write_jsonl(Path(path), ({"query": qid, "passages": [[e.passage_id, e.score] for e in run[qid]]}
                                              for qid in sorted(run)))


HIT_KEYS = {"query", "meeting", "start", "end", "speaker", "text", "score"}


def read_hits(path: Path) -> tuple[list[Passage], list[RankedPassage]]:
    """A product's hits — JSON lines ``{"query", "meeting", "start", "end"[, "speaker"][, "text"][, "score"]}``, each
    query's in rank order — as a passage inventory and a run: one passage per distinct span (meeting, times, speaker,
    text), named ``hit-`` and the first 16 hex of the sha256 of its span, indexed within its meeting by (start, end,
    id); no speaker is any speaker (``"unknown"``); a query's hits score their order (1, 1/2, 1/3, …) unless every
    one gives its score. Refused in one line naming the line (BadInput): anything else."""
    import hashlib

    path = Path(path)
    if not path.is_file():
        raise BadInput(f"{path}: hits file not found")
    spans: dict[str, dict[str, Any]] = {}
    by_query: dict[str, list[tuple[str, float | None, int]]] = {}
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise BadInput(f"{path}: the hits file is not UTF-8 text") from None
    for n, line in enumerate(lines, 1):
        where = f"{path}: line {n}"
        try:
            hit = canonical.parse_json(line, max_nesting=4)
        except ValueError as exc:
            raise BadInput(f"{where}: not a JSON hit ({exc})") from None
        if not isinstance(hit, dict) or set(hit) - HIT_KEYS or not {"query", "meeting", "start", "end"} <= set(hit):
            raise BadInput(f"{where}: a hit is {{query, meeting, start, end[, speaker][, text][, score]}}")
        if not isinstance(hit["query"], str) or not hit["query"]:
            raise BadInput(f"{where}: query is a non-empty string")
        span = {"meeting": hit["meeting"], "start": hit["start"], "end": hit["end"],
                **({"speaker": hit["speaker"]} if "speaker" in hit else {"speakers": "unknown"}),
                **({"text": hit["text"]} if "text" in hit else {})}
        key = canonical.dumps(span)
        pid = "hit-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        try:
            Passage.from_json({**span, "id": pid, "index": 0})
        except (TypeError, ValueError, KeyError) as exc:
            raise BadInput(f"{where}: not a span of a meeting ({exc})") from None
        spans.setdefault(pid, span)
        score = None if "score" not in hit else _score(hit["score"], where)
        hits = by_query.setdefault(hit["query"], [])
        if any(p == pid for p, _, _ in hits):
            raise BadInput(f"{where}: query {hit['query']}'s hit repeats an earlier hit's span")
        hits.append((pid, score, n))
    if not by_query:
        raise BadInput(f"{path}: holds no hit")
    order = sorted(spans, key=lambda p: (spans[p]["meeting"], spans[p]["start"], spans[p]["end"], p))
    index: dict[str, int] = {}
    passages = []
    for pid in order:
        m = spans[pid]["meeting"]
        index[m] = index.get(m, -1) + 1
        text = spans[pid].get("text")
        passages.append(Passage.from_json({**spans[pid], "id": pid, "index": index[m],
                                           "words": len(text.split()) if isinstance(text, str) else 0}))
    run = []
    for qid, hits in by_query.items():
        given = [s for _, s, _ in hits if s is not None]
        if given and len(given) != len(hits):
            raise BadInput(f"{path}: line {hits[0][2]}: query {qid} gives a score on some hits and not on others")
        for rank, (pid, s, _) in enumerate(hits, 1):
            run.append(RankedPassage(qid, pid, rank, s if s is not None else 1.0 / rank))
    return passages, run
