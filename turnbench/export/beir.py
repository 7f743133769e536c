"""``turnbench export beir``: a corpus as BEIR reads it (corpus.jsonl, queries.jsonl, qrels/test.tsv), from
turnbench's own passages and judgements, so a run any BEIR-style retriever makes over it is scored back by
``turnbench score`` unchanged.

What is written, in one directory, staged and renamed into place (nothing partial is left by a failure or a kill):

* ``corpus.jsonl``: one line per passage, exactly the passages ``turnbench load --max-words N`` cuts
  (turnbench.loading.chunking.chunk_meeting): ``_id`` is turnbench's passage id (``{meeting}:{n:05d}``), ``title``
  the meeting's title and ``text`` the passage's segments joined by spaces, both made safe for TSV (:func:`tsv_safe`:
  every tab and line break replaced by one space), ``metadata`` the meeting, speaker, time span and
  ``original_text``, the passage's exact text (its segments joined by newlines: what the index holds, what the
  encoders embed and what ``text_sha256`` in passages.jsonl hashes);
* ``queries.jsonl``: every query scored on retrieval (lookup, multi_file and summarize; aggregation questions are
  scored on answers, not rankings, and are left out), ``_id`` and ``text`` (TSV-safe) as in the corpus,
  ``metadata`` its class, surface, level and ``original_text``;
* ``qrels/test.tsv``: ``query-id corpus-id score`` with a header, the positive grades (1..3) of every passage under
  turnbench's relevance policy (turnbench.harness.judgements, default graded(high=0.5,low=0.0)), for the turn-level
  queries; rows sorted by query id, then passage id. A summarize query is judged at meeting level only (its gold is
  every session of a series), so it has no row here: BEIR's loader drops a query without qrels from its means, as
  turnbench drops an unjudgeable one;
* ``qrels/meetings.tsv``: the meeting-level judgements turnbench scores for every ranked query (summarize
  included): ``corpus-id`` is a gold meeting, score 1. A passage run is scored against them after collapsing to
  meetings by first occurrence (what ``turnbench score`` does; BEIR's own evaluator would need the same collapse);
* ``passages.jsonl``: the passage inventory ``turnbench score --passages`` reads (its sha256 is the one a load of
  the same corpus and max_words records in its index marker);
* with ``pyserini``, ``pyserini/``: the same passages as pyserini's JsonCollection (``corpus/docs.jsonl``, a line
  ``{"id", "contents"}`` per passage, ``contents`` the TSV-safe text), its topics (``queries.tsv``, ``qid<TAB>text``)
  and the passage qrels as trec_eval reads them (``qrels.txt``);
* ``export.json``: provenance (corpus id, sha256 and licence, max_words, the relevance policy, counts, each file's
  sha256) and ``README.md``: what each field means, how it maps back, the licence tier, how to score a run.

Every file is byte-identical from run to run (canonical JSON, sorted rows, no paths or times).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import Corpus, open_corpus
from turnbench.corpus.records import RANKED_CLASSES, Query
from turnbench.errors import BadInput
from turnbench.harness.judgements import QueryJudgements, RelevancePolicy, judge
from turnbench.loading.chunking import DEFAULT_MAX_WORDS, chunk_meeting
from turnbench.passages import Passage, write_passages

FORMAT = "turnbench-beir-export/2"
QRELS_HEADER = "query-id\tcorpus-id\tscore\n"
FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels/meetings.tsv", "passages.jsonl", "README.md")
PYSERINI_FILES = ("pyserini/corpus/docs.jsonl", "pyserini/queries.tsv", "pyserini/qrels.txt")
# what a TSV reader (csv, ir_datasets' docs_tsv, pyserini's TsvCollection) or a line reader takes for the end of a
# field or a line: the tab and every character str.splitlines() splits on (LF, CR, VT, FF, FS, GS, RS, NEL, LS, PS)
TSV_BREAKS = "\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_TSV_SAFE = str.maketrans(dict.fromkeys(TSV_BREAKS, " "))


def tsv_safe(text: str) -> str:
    """``text`` with each of :data:`TSV_BREAKS` replaced by one space, and nothing else changed: one character for
    one (CRLF is two spaces), so the length, every character offset and the words (``str.split``: each of them is
    whitespace) stay those of the original; no run of spaces is collapsed, nothing is stripped."""
    return text.translate(_TSV_SAFE)


@dataclass(frozen=True)
class Counts:
    """What an export holds, as its export.json and README say."""

    passages: int
    meetings: int
    queries: int  # every retrieval-scored query, in queries.jsonl
    queries_turn_level: int  # judged on passages (lookup, multi_file)
    queries_meeting_level: int  # judged on meetings only (summarize)
    queries_with_passage_qrels: int  # turn-level queries with at least one graded passage
    passage_qrels: int  # rows of qrels/test.tsv
    passage_qrels_by_grade: Mapping[str, int]
    queries_with_meeting_qrels: int
    meeting_qrels: int  # rows of qrels/meetings.tsv

    def to_json(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.__dict__.items()}


def ranked_queries(corpus: Corpus) -> list[Query]:
    """The queries a BEIR retriever can be scored on: those scored on retrieval, in id order."""
    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    for q in queries:
        if q.cls not in RANKED_CLASSES:
            raise BadInput(f"query {q.id} is scored on retrieval but its class {q.cls!r} is not a ranked class")
    return queries


def export_beir(corpus_dir: Path, out: Path, *, max_words: int = DEFAULT_MAX_WORDS,
                policy: RelevancePolicy = RelevancePolicy(), pyserini: bool = False) -> Counts:
    """Write ``corpus_dir`` as a BEIR dataset into ``out`` (absent or empty); see the module docstring."""
    out = canonical.refuse_non_empty(Path(out), "export directory")
    chunk_meeting("validate", (), max_words=max_words)  # a bad max_words is refused before anything is read
    corpus = open_corpus(Path(corpus_dir))
    queries = ranked_queries(corpus)
    with canonical.staged_directory(out) as tmp:
        passages = _write_corpus(corpus, tmp / "corpus.jsonl", max_words)
        judged = judge(queries, corpus.iter_meetings(), passages, policy)
        canonical.write_jsonl(tmp / "queries.jsonl", (_query_line(q, judged[q.id]) for q in queries))
        (tmp / "qrels").mkdir()
        p_rows = [(qid, pid, g) for qid, j in sorted(judged.items()) if j.level == "turn" and j.judgeable
                  for pid, g in sorted(j.passages.items())]
        m_rows = [(qid, mid, g) for qid, j in sorted(judged.items()) if j.judgeable
                  for mid, g in sorted(j.meetings.items())]
        canonical.write_bytes_atomic(tmp / "qrels" / "test.tsv", _tsv(p_rows))
        canonical.write_bytes_atomic(tmp / "qrels" / "meetings.tsv", _tsv(m_rows))
        inventory = write_passages(tmp / "passages.jsonl", passages)
        files: tuple[str, ...] = FILES
        if pyserini:
            _write_pyserini(tmp, queries, p_rows)
            files = FILES + PYSERINI_FILES
        counts = _counts(passages, queries, judged, p_rows, m_rows)
        readme = render_readme(corpus, counts, max_words, policy, pyserini=pyserini)
        canonical.write_bytes_atomic(tmp / "README.md", readme.encode("utf-8"))
        canonical.write_json(tmp / "export.json", {
            "format": FORMAT, "corpus": corpus.provenance(), "max_words": max_words,
            "passages_sha256": inventory, "relevance": policy.to_json(), "counts": counts.to_json(),
            "text": {"normalised": "tsv_safe", "replaced_by_one_space": [f"U+{ord(c):04X}" for c in TSV_BREAKS],
                     "original": "metadata.original_text"},
            "files": {name: canonical.sha256_file(tmp / name) for name in files},
        })
    return counts


def _write_corpus(corpus: Corpus, path: Path, max_words: int) -> list[Passage]:
    """corpus.jsonl written meeting by meeting as the load cuts them; the passages (without text) returned."""
    passages: list[Passage] = []

    def lines() -> Iterator[dict[str, Any]]:
        for m in sorted(corpus.iter_meetings(), key=lambda m: m.id):
            for c in chunk_meeting(m.id, m.turns, max_words=max_words):
                passages.append(c.passage)
                p = c.passage
                yield {"_id": p.id, "title": tsv_safe(m.title), "text": tsv_safe(c.text),
                       "metadata": {"meeting": p.meeting, "speaker": p.speaker, "start": p.start, "end": p.end,
                                    "original_text": c.text}}

    canonical.write_jsonl(path, lines())
    return passages


def _query_line(q: Query, j: QueryJudgements) -> dict[str, Any]:
    return {"_id": q.id, "text": tsv_safe(q.text),
            "metadata": {"class": q.cls, "surface": q.surface, "level": j.level, "original_text": q.text}}


def _write_pyserini(tmp: Path, queries: Sequence[Query], p_rows: Sequence[tuple[str, str, int]]) -> None:
    """pyserini/: corpus/docs.jsonl (JsonCollection: ``{"id", "contents"}``, the TSV-safe text, read back from
    corpus.jsonl), queries.tsv (its TSV topics: ``qid<TAB>text``) and qrels.txt (``qid 0 docid grade``)."""
    (tmp / "pyserini" / "corpus").mkdir(parents=True)
    canonical.write_jsonl(tmp / "pyserini" / "corpus" / "docs.jsonl",
                          ({"id": d["_id"], "contents": d["text"]}
                           for _, d in canonical.read_jsonl_numbered(tmp / "corpus.jsonl", BadInput)))
    _tsv(p_rows)  # its ids checked as the qrels' are
    for q in queries:
        if q.id.split() != [q.id]:
            raise BadInput(f"query id {q.id!r} holds whitespace: it cannot go into pyserini's topics or qrels")
    canonical.write_bytes_atomic(tmp / "pyserini" / "queries.tsv",
                                 "".join(f"{q.id}\t{tsv_safe(q.text)}\n" for q in queries).encode("utf-8"))
    canonical.write_bytes_atomic(tmp / "pyserini" / "qrels.txt",
                                 "".join(f"{q} 0 {d} {g}\n" for q, d, g in p_rows).encode("utf-8"))


def _tsv(rows: Sequence[tuple[str, str, int]]) -> bytes:
    for qid, did, _ in rows:
        if any(c in s for s in (qid, did) for c in "\t\n\r"):
            raise BadInput(f"id {qid!r} or {did!r} holds a tab or a line break: it cannot go into a TSV qrels file")
    return (QRELS_HEADER + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows)).encode("utf-8")


def _counts(passages: Sequence[Passage], queries: Sequence[Query], judged: Mapping[str, QueryJudgements],
            p_rows: Sequence[tuple[str, str, int]], m_rows: Sequence[tuple[str, str, int]]) -> Counts:
    turn = [q for q in queries if judged[q.id].level == "turn"]
    grades = {str(g): sum(1 for *_, x in p_rows if x == g) for g in sorted({g for *_, g in p_rows})}
    return Counts(passages=len(passages), meetings=len({p.meeting for p in passages}), queries=len(queries),
                  queries_turn_level=len(turn), queries_meeting_level=len(queries) - len(turn),
                  queries_with_passage_qrels=len({q for q, _, _ in p_rows}), passage_qrels=len(p_rows),
                  passage_qrels_by_grade=grades, queries_with_meeting_qrels=len({q for q, _, _ in m_rows}),
                  meeting_qrels=len(m_rows))


def render_readme(corpus: Corpus, counts: Counts, max_words: int, policy: RelevancePolicy, *,
                  pyserini: bool = False) -> str:
    lic = corpus.licence
    grades = ", ".join(f"{n} of grade {g}" for g, n in counts.passage_qrels_by_grade.items())
    dropped = counts.queries_turn_level - counts.queries_with_passage_qrels
    dropped_note = (f" ({dropped} have none: turnbench drops them from its means and counts them as unjudgeable; "
                    "BEIR's loader drops a query without qrels)") if dropped else ""
    pyserini_files = """
- `pyserini/corpus/docs.jsonl`: the passages as pyserini's JsonCollection (`{"id", "contents"}`, `contents` the
  TSV-safe `text`; `--input pyserini/corpus`), `pyserini/queries.tsv` its topics (`qid<TAB>text`) and
  `pyserini/qrels.txt` the passage grades as trec_eval reads them (`qid 0 docid grade`).""" if pyserini else ""
    return f"""# {corpus.id}, exported for BEIR

Written by `turnbench export beir` from turnbench corpus `{corpus.id}` (sha256 `{corpus.sha256}`), passages cut at
most {max_words} words each (what `turnbench load --max-words {max_words}` indexes).

Licence: {lic.get('name', 'not stated')}, tier {lic.get('tier', 'not stated')}, as the corpus manifest states. This
export is the corpus's text: its licence and tier travel with every copy.

## Files

- `corpus.jsonl`, {counts.passages} passages: `_id` turnbench's passage id (`meeting:nnnnn`), `title` its
  meeting's title, `text` its speaker's turns (one speaker per passage), both TSV-safe (below), `metadata` its
  meeting, speaker, start and end in seconds and `original_text`, the exact text.
- `queries.jsonl`, {counts.queries} questions scored on retrieval: `_id` turnbench's query id, `text` (TSV-safe),
  `metadata` its class (lookup, multi_file, summarize), surface (phrasing family), level (`turn` or `meeting`)
  and `original_text`.
- `qrels/test.tsv`, {counts.passage_qrels} rows: `query-id`, `corpus-id` (a passage id), `score` the grade
  ({grades}).
- `qrels/meetings.tsv`, {counts.meeting_qrels} rows: `query-id`, `corpus-id` (a meeting id, not a passage),
  `score` 1: the query's gold meetings.
- `passages.jsonl`, {counts.passages} passages: the inventory `turnbench score --passages` reads (ids, meeting,
  speaker, times, the sha256 of each text).
- `export.json`: provenance (corpus, max_words, relevance policy, counts, each file's sha256).{pyserini_files}

**TSV-safe text.** `title` and `text` hold no tab and no line break, so a tool that writes them into a TSV or reads
them a line at a time (ir_datasets' `docs_tsv`, pyserini's TsvCollection) keeps one passage per line: each tab,
LF, CR, VT, FF, U+001C-U+001E, U+0085, U+2028 and U+2029 is replaced by one space, one character for one, nothing
else changed (no spaces collapsed, nothing stripped), so lengths, offsets and words are the original's. The exact
text, the turns joined by newlines as the index holds them, is `metadata.original_text` (BEIR's loader and
pyserini read only `_id`, `title` and `text`); its sha256 is `text_sha256` in `passages.jsonl`.

Grades come from turnbench's own judgements, {policy}: 3 when the passage holds a turn with the exact answer,
2 when at least {policy.high} of the words it covers are gold, 1 when more than {policy.low} are, else unjudged
(which nDCG, recall and MRR treat as not relevant). Relevance is keyed on turns, so the grades are those of these
passages; another chunking needs turnbench to judge it (`turnbench score` with that engine's own inventory).

## Queries and levels

{counts.queries_turn_level} queries are judged on passages (`level` turn: lookup, multi_file);
{counts.queries_with_passage_qrels} of them have graded passages in `qrels/test.tsv`{dropped_note}.
{counts.queries_meeting_level} summarize queries (`level` meeting) ask about a whole series: they are judged on
meetings only, so they have no rows in `qrels/test.tsv` and BEIR's own evaluation leaves them out. They are in
`queries.jsonl` so a retriever ranks them too: `turnbench score` collapses a passage run to meetings by first
occurrence and scores every ranked query against `qrels/meetings.tsv`
({counts.queries_with_meeting_qrels} queries). Aggregation questions (answered by counting, not ranking) are not
exported.

## Scoring a run back

Write the retriever's results as a TREC run (`query-id Q0 corpus-id rank score tag`, one line per hit; BEIR's
`EvaluateRetrieval` results dict, `{{query_id: {{corpus_id: score}}}}`, written that way), then:

    turnbench score --corpus CORPUS_DIR --passages passages.jsonl --run run.trec --out results/my-retriever

with `CORPUS_DIR` the turnbench corpus itself (`{corpus.id}`): turnbench re-judges the inventory against the
corpus, breaks score ties by its own rule and writes a results directory that `turnbench compare` reads beside
any arm's.
"""
