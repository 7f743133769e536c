"""Files anyone can score: the qrels and runs of a results directory in TREC format (docs/design.md §10).

With these, ``trec_eval -c``, ir_measures or ranx reproduce every number of metrics.json without turnbench:

* ``qrels.passages.txt`` — ``query 0 passage grade`` for every judged passage of every judgeable turn-level
  query, grades as judged (positive grades only; an unlisted passage is non-relevant).
* ``qrels.meetings.txt`` — ``query 0 meeting 1`` for every judgeable query (a gold meeting with no passage
  stays listed, as the scorer keeps it).
* ``run.passages.trec`` — the run as scored: docs/design.md §3 rule 5 order, ranks from 1 and strictly decreasing
  integer scores, so no tool's tie rule has anything left to decide.
* ``run.meetings.trec`` — the same run collapsed to meetings by first occurrence, scored the same way.
* ``run.raw.trec`` — the run as the engine handed it over, with its own ranks and raw scores (``repr``
  of the float, so the bytes round-trip), for anyone who wants to see the ties rule 5 broke.
* ``trec.json`` — how to read them: the relevance policy, the binary threshold (``trec_eval -l 1``), the
  measure names in trec_eval and ir_measures, which queries were dropped as unjudgeable, and which judged
  queries the run left unanswered (they score 0: ``trec_eval -c``).

Queries a tool would not see are the ones the scorer also leaves out: an unjudgeable query is in no qrels
file; an unanswered judged query is in the qrels but in no run, so only ``-c`` counts it (as zero).
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import IO, Any

from turnbench import canonical
from turnbench.errors import BadInput, ResultsIntegrityError
from turnbench.passages import Passage, canonical_blocks, inventory_sha256, inventory_to
from turnbench.rankings import RankedPassage, Ranking
from turnbench.runfiles import trec_rows

QRELS_PASSAGES = "qrels.passages.txt"
QRELS_MEETINGS = "qrels.meetings.txt"
RUN_PASSAGES = "run.passages.trec"
RUN_MEETINGS = "run.meetings.trec"
RUN_RAW = "run.raw.trec"
TREC_JSON = "trec.json"
QRELS_STRICT = "qrels.passages.strict.txt"
PASSAGES = "passages.jsonl"
SPANS = "spans.jsonl"
FILES = (QRELS_PASSAGES, QRELS_MEETINGS, RUN_PASSAGES, RUN_MEETINGS, RUN_RAW, TREC_JSON, QRELS_STRICT, PASSAGES, SPANS)

# canonical measure -> (trec_eval -m argument and output key, ir_measures name)
TOOL_NAMES = {
    "nDCG@5": ("ndcg_cut.5", "nDCG@5"), "nDCG@10": ("ndcg_cut.10", "nDCG@10"),
    "nDCG@20": ("ndcg_cut.20", "nDCG@20"), "R@5": ("recall.5", "R@5"), "R@10": ("recall.10", "R@10"),
    "R@20": ("recall.20", "R@20"), "MRR": ("recip_rank", "RR"),
    "meeting:nDCG@10": ("ndcg_cut.10", "nDCG@10"), "meeting:R@10": ("recall.10", "R@10"),
}


def run_tag(label: str) -> str:
    """A TREC run tag: one token, whatever the arm is called."""
    return "".join(ch if ch.isalnum() or ch in "-_.@" else "_" for ch in label) or "run"


@dataclass(frozen=True)
class Lazy:
    """A file's content made while it is written: a run of millions of lines is never held whole in memory.
    ``bytes(lazy)`` makes it all at once (tests, small runs); ``chunks()`` yields it a query at a time."""

    chunks: Callable[[], Iterator[bytes]]
    # the sha256 of what ``chunks`` yields, when whoever made it hashed it as it was made: not hashed again
    sha256: str | None = None

    def __bytes__(self) -> bytes:
        return b"".join(self.chunks())


@dataclass(frozen=True)
class Written(Lazy):
    """A file already written where the results are being staged, by the process that made it (``score_run`` with
    ``into``): writing the results only records its sha256; its bytes are read back from ``path`` if asked for."""

    path: Path = Path()


@dataclass(frozen=True)
class Pending(Written):
    """A file a child is still writing where the results are being staged: ``done()`` waits for it and gives its
    sha256 (or raises what stopped the child). Writing the results takes it as late as it can, so the child goes on
    writing while the files before it are written."""

    done: Callable[[], str] = field(kw_only=True)  # its sha256 (``sha256`` is None until then)


Content = bytes | Lazy


class Spool:
    """A file's content made by another process before the results are written: an unlinked temporary file opened
    here before the fork (so nothing is left behind, however the command ends), filled by the child through
    ``file``, and read back in blocks by :meth:`content`, never held whole in either process."""

    BLOCK = 1 << 20

    def __init__(self) -> None:
        self.file: IO[bytes] = tempfile.TemporaryFile()

    @classmethod
    def open(cls) -> Spool | None:
        """A spool, or None where no temporary file can be made (the caller makes the content itself)."""
        try:
            return cls()
        except OSError:
            return None

    def content(self, size: int, sha256: str | None = None) -> Lazy:
        """The ``size`` bytes written to the spool, read as they are written out (``sha256``: theirs, when the spooling
        process hashed them)."""
        def chunks() -> Iterator[bytes]:
            fd = self.file.fileno()
            for offset in range(0, size, self.BLOCK):
                want = min(self.BLOCK, size - offset)
                block = os.pread(fd, want, offset)
                if len(block) != want:
                    raise ResultsIntegrityError("a spooled results file came back shorter than it was written")
                yield block
        return Lazy(chunks, sha256)


def write_hashed(directory: Path, name: str, content: Content) -> str:
    """``content`` written to ``directory / name`` (atomically), hashed as it is written: its sha256. A file already
    written there (:class:`Written`) is not written again; content hashed by its maker is not hashed again."""
    if isinstance(content, Written):
        sha = content.done() if isinstance(content, Pending) else content.sha256
        if content.path != directory / name or not content.path.is_file():
            raise ResultsIntegrityError(f"{name} was to be written in {directory} already, and is not there")
        return str(sha)
    if isinstance(content, bytes):
        canonical.write_bytes_atomic(directory / name, content)
        return canonical.sha256_bytes(content)
    if content.sha256 is not None:
        canonical.write_bytes_atomic(directory / name, content.chunks())
        return content.sha256
    h = hashlib.sha256()
    canonical.write_bytes_atomic(directory / name, _hashed(content.chunks(), h))
    return h.hexdigest()


def write_runs(directory: Path, run: Mapping[str, Sequence[str]], meeting_run: Mapping[str, Sequence[str]],
               raw: Iterable[RankedPassage], tag: str) -> dict[str, str]:
    """``run_files``' three files written into ``directory``: name -> sha256 (for :func:`written`)."""
    return {name: write_hashed(directory, name, content)
            for name, content in run_files(run, meeting_run, raw, tag).items()}


def written(directory: Path, shas: Mapping[str, str]) -> dict[str, Content]:
    """Files ``directory`` holds, with their sha256, as the results' contents (see :class:`Written`)."""
    return {name: Written(functools.partial(_read_back, directory / name), sha, directory / name)
            for name, sha in shas.items()}


def pending(directory: Path, names: Iterable[str], shas: Callable[[], Mapping[str, str]]) -> dict[str, Content]:
    """Files a child is writing into ``directory``, as the results' contents (see :class:`Pending`): ``shas`` waits
    for the child and gives each file's sha256."""
    def done(name: str) -> str:
        return shas()[name]

    def chunks(name: str) -> Iterator[bytes]:
        done(name)
        yield from _read_back(directory / name)

    return {name: Pending(functools.partial(chunks, name), None, directory / name, done=functools.partial(done, name))
            for name in names}


def _read_back(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        yield from iter(lambda: fh.read(Spool.BLOCK), b"")


def _hashed(chunks: Iterable[bytes], h: Any) -> Iterator[bytes]:
    for chunk in chunks:
        h.update(chunk)
        yield chunk


def make_inventory(passages: Sequence[Passage], into: Path | None, spool: Spool | None) -> tuple[str, int]:
    """passages.jsonl made (by a child): written into the staged results ``into`` when given, else into ``spool``,
    hashed as it is written; its sha256 (the inventory's) and size. Without either, or when the temporary directory
    cannot take it, only the sha256 and -1: the file is then made as it is written, as :func:`inventory_content`
    says."""
    if into is not None:
        sha = write_hashed(into, PASSAGES, Lazy(functools.partial(canonical_blocks, passages)))
        return sha, (into / PASSAGES).stat().st_size
    try:
        return inventory_to(passages, spool.file) if spool is not None else (inventory_sha256(passages), -1)
    except OSError:
        return inventory_sha256(passages), -1


def inventory_content(passages: Sequence[Passage], into: Path | None, spool: Spool | None, size: int,
                      sha256: str) -> Content:
    """passages.jsonl as ``make_inventory`` made it (``sha256``: the inventory's, its bytes'): written into ``into``
    already, spooled (``size`` bytes), else its canonical lines in (meeting, index, id) order made as it is
    written."""
    if into is not None:
        return written(into, {PASSAGES: sha256})[PASSAGES]
    if spool is not None and size >= 0:
        return spool.content(size, sha256)
    return Lazy(lambda: canonical_blocks(passages))


def content_bytes(content: Content) -> bytes:
    return content if isinstance(content, bytes) else bytes(content)


def qrels_text(qrels: Mapping[str, Mapping[str, int]]) -> bytes:
    return "".join(f"{qid} 0 {doc} {qrels[qid][doc]}\n" for qid in sorted(qrels)
                   for doc in sorted(qrels[qid])).encode("utf-8")


def scored_run_text(run: Mapping[str, Sequence[str]], tag: str) -> bytes:
    return b"".join(scored_run_chunks(run, tag))


def scored_run_chunks(run: Mapping[str, Sequence[str]], tag: str) -> Iterator[bytes]:
    """:func:`scored_run_text` a query at a time."""
    # the tail of a line (rank, score, tag) depends only on the list's length: built once per length, since a
    # large run writes millions of these lines
    tails: dict[int, list[str]] = {}
    for qid in sorted(run):
        docs = run[qid]
        n = len(docs)
        tail = tails.get(n)
        if tail is None:
            tail = tails[n] = [f" {r} {n - r + 1} {tag}\n" for r in range(1, n + 1)]
        # each line joined from its pieces by C iteration: the query's head, the id, and the tail for its rank
        yield "".join(map("".join, zip(repeat(f"{qid} Q0 "), docs, tail, strict=False))).encode("utf-8")


def raw_run_text(entries: Iterable[RankedPassage], tag: str) -> bytes:
    """The engine's entries, per query in its own rank order."""
    return b"".join(raw_run_chunks(entries, tag))


def raw_run_chunks(entries: Iterable[RankedPassage], tag: str) -> Iterator[bytes]:
    """:func:`raw_run_text` a query at a time (a :class:`Ranking` in query order is read as it is)."""
    if isinstance(entries, Ranking) and list(entries.query_ids) == sorted(set(entries.query_ids)):
        from turnbench.runfiles import ranking_lines

        yield from (trec for trec, _ in ranking_lines(entries, tag, jsonl=False))
        return
    # stable: an engine that repeats a rank keeps the order it gave (the file it came from, byte for byte)
    rows = sorted(entries, key=attrgetter("query_id", "rank"))
    yield "".join(f"{e.query_id} Q0 {e.passage_id} {e.rank} {e.score!r} {tag}\n" for e in rows).encode("utf-8")


def sidecar(policy: Mapping[str, Any], measures: Sequence[str], unjudgeable: Sequence[str],
            unanswered: Sequence[str], tag: str, *, comparable: Mapping[str, Any] | None = None,
            extra: Sequence[str] = ()) -> dict[str, Any]:
    """trec.json; ``extra``: the extra measures metrics.json's ``extra`` block holds (named in ``extra_measures``,
    present only then)."""
    return {
        "files": {
            QRELS_PASSAGES: "query 0 passage grade: judged passages of judgeable turn-level queries",
            QRELS_MEETINGS: "query 0 meeting 1: gold meetings of every judgeable query",
            QRELS_STRICT: f"{QRELS_PASSAGES} less its grade-1 lines: the strict rows (only grades >= 2 relevant; "
                          "for R and MRR the same as -l 2 on the graded qrels, for nDCG not: -l leaves gains alone)",
            RUN_PASSAGES: "the run as scored: rule-5 order, strictly decreasing scores",
            RUN_MEETINGS: f"{RUN_PASSAGES} collapsed to meetings by first occurrence",
            RUN_RAW: "the run as the engine handed it over: its ranks and raw scores",
            PASSAGES: "the passage inventory the run ranks (turnbench's passage records: docs/formats.md)",
            SPANS: "per judged turn-level query its gold turns' word spans, gold word count and gold start per "
                   "meeting; per passage in any query's top 10 or holding gold, its words and (when it holds gold) "
                   "the word spans it holds: what the span and entry-point measures are computed from",
        },
        "comparable_across_chunkings": dict(comparable or {}),
        "run_tag": tag,
        "relevance_policy": dict(policy),
        "grades": "as judged; gains are the grades (linear, trec_eval's nDCG)",
        "relevance_level": 1,
        "binary_threshold": "a grade of 1 or more is relevant for R@k and MRR (trec_eval -l 1, ir_measures rel=1)",
        "strict": {"qrels": QRELS_STRICT, "relevance_level": 2, "rows": "metrics.json strict",
                   "rederive": f"every passage measure on {QRELS_STRICT}; R@k and MRR also as trec_eval -c -l 2 on "
                               f"{QRELS_PASSAGES}"},
        "semantics": "trec_eval -c: a query in the qrels that the run does not answer scores 0 and counts",
        "measures": {m: {"level": "meeting" if m.startswith("meeting:") else "passage",
                         "trec_eval": TOOL_NAMES[m][0], "ir_measures": TOOL_NAMES[m][1]}
                     for m in measures if m in TOOL_NAMES},
        "unjudgeable_dropped": list(unjudgeable),
        "unanswered_scored_zero": list(unanswered),
        "per_class": "metrics.json retrieval.per_query gives each query's class; a row is the mean over its "
                     "queries, values rounded to 6 decimals first",
        **({"extra_measures": _extra_tools(extra)} if extra else {}),
    }


def _extra_tools(names: Sequence[str]) -> dict[str, dict[str, str]]:
    from turnbench.harness.extra import tool_names
    from turnbench.harness.metrics import Measure

    return tool_names([Measure.parse(m) for m in names])


def export_files(p_qrels: Mapping[str, Mapping[str, int]], m_qrels: Mapping[str, Mapping[str, int]],
                 runs: Mapping[str, Content], side: Mapping[str, Any]) -> dict[str, Content]:
    """The exported files, the three runs as ``run_files`` gave them."""
    return {
        QRELS_PASSAGES: qrels_text(p_qrels),
        QRELS_MEETINGS: qrels_text(m_qrels),
        **runs,
        TREC_JSON: canonical.pretty(dict(side)),
    }


def run_files(run: Mapping[str, Sequence[str]], meeting_run: Mapping[str, Sequence[str]],
              raw: Iterable[RankedPassage], tag: str) -> dict[str, Lazy]:
    """run.passages.trec, run.meetings.trec and run.raw.trec, each made only as it is written."""
    return {
        RUN_PASSAGES: Lazy(lambda: scored_run_chunks(run, tag)),
        RUN_MEETINGS: Lazy(lambda: scored_run_chunks(meeting_run, tag)),
        RUN_RAW: Lazy(lambda: raw_run_chunks(raw, tag)),
    }


# -- reading them back ---------------------------------------------------------------------------------------


def parse_qrels(data: bytes, where: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            qid, _, doc, grade = parts
            out.setdefault(qid, {})[doc] = int(grade)
        except ValueError:
            raise BadInput(f"{where}: line {n} is not 'query 0 document grade'") from None
    return out


def parse_run(data: Content, where: str, depth: int | None = None) -> dict[str, list[tuple[str, float]]]:
    """Per query, ``(document, score)`` in file order (which for the scored runs is rank order); with ``depth``,
    only each query's first ``depth`` (the rest is still checked line by line, never kept)."""
    out: dict[str, list[tuple[str, float]]] = {}
    seen = 0  # lines before this chunk
    for text in _texts(data, where):
        # the line breaks bytes.splitlines knows (\n, \r, \r\n), so lines are numbered as before
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()  # the chunk ends with a break: no line after it
        for n, parts in trec_rows(lines, where, seen + 1):
            try:
                score = float(parts[4])
            except ValueError:
                raise BadInput(f"{where}: line {n}: the score is not a number") from None
            docs = out.get(parts[0])
            if docs is None:
                docs = out[parts[0]] = []
            if depth is None or len(docs) < depth:
                docs.append((parts[2], score))
        seen += len(lines)
    return out


# bytes after which a TREC line is not "one space between columns, nothing before the first": another reading
_NOT_PLAIN = (b"\t", b"\r", b"  ", b"\n ", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def plain_run(data: Content) -> bool:
    """Whether a run is plainly written — ASCII, one space between columns, nothing before the first — so that
    ``run_tops`` finds its lines as ``parse_run`` reads them."""
    return isinstance(data, bytes) and data.isascii() and not data.startswith(b" ") and \
        not any(bad in data for bad in _NOT_PLAIN)


def run_tops(data: bytes, qids: Iterable[str], depth: int) -> dict[str, list[str]]:
    """The first ``depth`` documents of each of ``qids`` in file order, as ``parse_run(data, depth=depth)`` gives
    them for a ``plain_run``, found by searching the bytes instead of reading every line (a page showing ten
    queries of a million-line run). Lines other than the ones found are not checked here: a reader of the whole
    run (the re-derivation) does that."""
    out: dict[str, list[str]] = {}
    for qid in qids:
        key = qid.encode("utf-8")
        docs: list[str] = []
        at = 0 if data.startswith(key + b" ") else _next_line(data, key, 0)
        while at >= 0 and len(docs) < depth:
            end = data.find(b"\n", at)
            parts = data[at:end if end >= 0 else len(data)].split()
            if len(parts) != 6:
                raise BadInput(f"a line of query {qid} has {len(parts)} columns, a TREC run has 6")
            docs.append(parts[2].decode("ascii"))
            at = _next_line(data, key, at)
        if docs:
            out[qid] = docs
    return out


def _next_line(data: bytes, key: bytes, after: int) -> int:
    """Where the next line after position ``after`` that starts with ``key`` and a space begins, or -1."""
    at = data.find(b"\n" + key + b" ", after)
    return at + 1 if at >= 0 else -1


def _texts(data: Content, where: str) -> Iterator[str]:
    """``data`` decoded a chunk of whole lines at a time (a lazy file's chunks end at line ends)."""
    chunks = [data] if isinstance(data, bytes) else data.chunks()
    for chunk in chunks:
        try:
            yield chunk.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput(f"{where}: not UTF-8 text") from None


def spans_text(judged: Any, tops: Iterable[str], judgeable: Mapping[str, Any], meeting_of: Mapping[str, str]) -> bytes:
    """spans.jsonl: what the span and entry-point measures read, so anyone can re-derive them (``judged``: a
    ``turnbench.harness.judgements.Judged``)."""
    lines = []
    for qid in sorted(judgeable):
        if judgeable[qid].level != "turn" or qid not in judged.gold_spans:
            continue
        lines.append({"query": qid, "gold": {m: [list(s) for s in spans] for m, spans in
                                             sorted(judged.gold_spans[qid].items())},
                      "gold_words": judged.gold_words.get(qid, 0),
                      "gold_start": dict(sorted(judged.gold_start.get(qid, {}).items()))})
    holders = {pid for held in judged.gold_held.values() for pid in held}
    head = canonical.encoded_lines(lines, [t for r in lines for t in r["gold_start"].values()])
    # a passage's row: its spans only where it holds gold; a large run's tops are a hundred thousand rows, encoded in
    # one call
    words, held = judged.words, judged.held
    return head + canonical.encoded_lines(
        [{"meeting": meeting_of[pid], "passage": pid, "spans": held.get(pid, ()), "words": words.get(pid, 0)}
         if pid in holders else {"meeting": meeting_of[pid], "passage": pid, "words": words.get(pid, 0)}
         for pid in sorted(set(tops) | holders)], ())
