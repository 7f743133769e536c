"""Both sides of a comparison hold the same gold (docs/design.md §12 rule 5).

Each side's values are re-derived from the qrels beside it (``turnbench.results.rederive``), but qrels are a side's
own claim: a candidate whose judgements were rewritten, and its values, rows and digests with them, agrees with
itself. So compare also checks that the two sides were judged against one gold, from what both directories hold
(results written before this check still compare):

* the queries and their gold: each query's binding (its record — text, gold meetings, gold turn ranges, answer
  turns, answer — and the text of its gold turns; ``bindings.jsonl``), its gold meetings (``qrels.meetings.txt``),
  its gold answer (metrics.json's ``answers`` block) and, on one inventory, its gold turns' word spans, gold words
  and gold start (``spans.jsonl``: they cover the gold meetings the inventory holds passages of) are the same on
  both sides;
* the judgements: on the same passage inventory (``provenance.inputs.passages``; passages.jsonl is tied to it on
  read) ``qrels.passages.txt`` is the same; on two inventories, every passage both hold with the same record has
  the same grade (a grade follows from the passage's record and the corpus alone).

With the corpus named (``compare --corpus``), each side's judgements and gold are also made again from the corpus
and its own passages.jsonl and must be what it holds. A difference is refused (DifferentGold, exit 3) naming the
first query, in id order, whose gold differs.

A side scored in memory and never written (``turnbench.score`` in a notebook) is checked the same way, from the
files it holds to be written (``Held``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput, DifferentGold
from turnbench.harness import bindings, exports
from turnbench.results.record import Results

_SPANS_QUERY = b'{"gold":'
# where a side's files are: its results directory, or (scored in memory, never written) the files it would write
Held = Path | Mapping[str, exports.Content]


@dataclass(frozen=True)
class Gold:
    """What one results directory holds of its gold, per query."""

    inventory: Any  # provenance.inputs.passages.sha256
    bound: Mapping[str, str]  # query -> its binding's sha256 (empty: no bindings.jsonl)
    meetings: Mapping[str, Mapping[str, int]]  # qrels.meetings.txt
    spans: Mapping[str, bytes]  # query -> its spans.jsonl line
    answers: Mapping[str, str]  # query -> its gold answer, canonical JSON
    judgements: Mapping[str, Mapping[str, int]]  # qrels.passages.txt
    files: Held
    where: str  # the side, as a refusal names it: its directory, or what it is in memory


def _read(files: Held, name: str) -> bytes:
    if isinstance(files, Mapping):
        content = files.get(name)
        return b"" if content is None else exports.content_bytes(content)
    path = Path(files) / name
    return path.read_bytes() if path.is_file() else b""


def gold_of(files: Held, results: Results, where: str | None = None) -> Gold:
    """The gold of a results directory, or of results held in memory (``files``: the files they would write;
    ``where`` names them), ``results`` its record, read already."""
    files = files if isinstance(files, Mapping) else Path(files)
    where = str(files) if where is None else where
    bound = bindings.query_digests(_read(files, bindings.BINDINGS), f"{where}/{bindings.BINDINGS}")
    spans = {}
    for line in _read(files, exports.SPANS).splitlines():
        if line.startswith(_SPANS_QUERY):
            spans[str(canonical.parse_json(line.decode("utf-8"))["query"])] = line
    answers = {r.query_id: canonical.dumps(r.gold) for r in (results.answers.per_query if results.answers else ())}
    meetings = exports.parse_qrels(_read(files, exports.QRELS_MEETINGS), f"{where}/{exports.QRELS_MEETINGS}")
    judgements = exports.parse_qrels(_read(files, exports.QRELS_PASSAGES), f"{where}/{exports.QRELS_PASSAGES}")
    return Gold(results.provenance.passages_sha256, bound, meetings, spans, answers, judgements, files, where)


def check_same_gold(base: Gold, cand: Gold) -> None:
    """Refuse (DifferentGold) unless the two sides hold the same gold, naming the first query that differs."""
    shared = _shared_records(base, cand) if base.inventory != cand.inventory else None
    aspects: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = [
        ("gold meetings (qrels.meetings.txt) differ", base.meetings, cand.meetings),
        ("gold answer (metrics.json answers) differs", base.answers, cand.answers)]
    if shared is None:  # a query's spans cover the gold meetings its inventory holds passages of
        aspects.append(("gold turns' spans, words or start (spans.jsonl) differ", base.spans, cand.spans))
    if base.bound and cand.bound:
        aspects.insert(0, ("record or gold turns' text (bindings.jsonl) differ", base.bound, cand.bound))
    differing = []
    for what, b, c in aspects:
        qid = next((q for q in sorted(set(b) | set(c)) if b.get(q) != c.get(q)), None)
        if qid is not None:
            differing.append((qid, f"its {what}"))
    qid, why = _judgement_difference(base.judgements, cand.judgements, shared)
    if qid is not None:
        differing.append((qid, why))
    if differing:
        qid, why = min(differing)
        raise DifferentGold(f"the baseline and the candidate hold different gold: query {qid}: {why}")


def _judgement_difference(b: Mapping[str, Mapping[str, int]], c: Mapping[str, Mapping[str, int]],
                          shared: set[str] | None, sides: tuple[str, str] = ("in the baseline", "in the candidate")
                          ) -> tuple[str | None, str]:
    """The first query whose judgements differ (``shared``: on two inventories, only the passages both hold with
    the same record count; None: one inventory, every passage counts), and how."""
    for qid in sorted(set(b) | set(c)):
        bq, cq = b.get(qid, {}), c.get(qid, {})
        if shared is not None:
            bq = {p: g for p, g in bq.items() if p in shared}
            cq = {p: g for p, g in cq.items() if p in shared}
        if bq != cq:
            pid = next(p for p in sorted(set(bq) | set(cq)) if bq.get(p) != cq.get(p))
            return qid, (f"passage {pid} is graded {bq.get(pid, 0)} {sides[0]} and {cq.get(pid, 0)} {sides[1]} "
                         f"(qrels.passages.txt{'; both inventories hold it alike' if shared is not None else ''})")
    return None, ""


def _shared_records(base: Gold, cand: Gold) -> set[str]:
    """The ids of the passages whose records are the same in both inventories (as parsed: however each is written)."""
    a, b = _records(base), _records(cand)
    return {pid for pid, record in a.items() if b.get(pid) == record}


def _records(gold: Gold) -> dict[str, Any]:
    out = {}
    for n, line in enumerate(_read(gold.files, exports.PASSAGES).splitlines(), 1):
        if line.strip():
            try:
                record = canonical.parse_json(line.decode("utf-8"))
                out[str(record["id"])] = record
            except (ValueError, KeyError, TypeError):
                raise BadInput(f"{gold.where}/{exports.PASSAGES}: line {n} is not a passage record") from None
    return out


_Judged = tuple[dict[str, dict[str, int]], dict[str, dict[str, int]], dict[str, bytes]]


def check_against_corpus(gold: Gold, corpus: Corpus, results: Results, judged: dict[Any, _Judged]
                         ) -> None:
    """Refuse (DifferentGold) unless ``gold`` is what ``corpus`` gives for the side's own passages.jsonl under its
    recorded policy (``judged``: what was made already, by inventory and policy, so a pair on one inventory is
    judged once)."""
    policy = results.provenance.policy
    key = (gold.inventory, policy, corpus.sha256)
    if key not in judged:
        judged[key] = _judged(corpus, gold, policy)
    p_qrels, m_qrels, spans = judged[key]
    answers = {q.id: canonical.dumps(q.answer.to_json()) for q in corpus.queries() if q.answer is not None}
    differing = []
    for what, mine, given in (("gold meetings (qrels.meetings.txt)", gold.meetings, m_qrels),
                              ("gold turns' spans, words or start (spans.jsonl)", gold.spans, spans)):
        qid = next((q for q in sorted(set(mine) | set(given)) if mine.get(q) != given.get(q)), None)
        if qid is not None:
            differing.append((qid, f"its {what} are not what the corpus gives"))
    qid = next((q for q in sorted(gold.answers) if gold.answers[q] != answers.get(q)), None)
    if qid is not None:
        differing.append((qid, "its gold answer (metrics.json answers) is not the corpus's"))
    qid, why = _judgement_difference(gold.judgements, p_qrels, None, ("here", "by the corpus"))
    if qid is not None:
        differing.append((qid, why))
    if differing:
        qid, why = min(differing)
        raise DifferentGold(f"{gold.where}: query {qid}: {why} (corpus {corpus.id}, judged again from its "
                            f"{exports.PASSAGES})")


def _inventory(gold: Gold) -> list[Any]:
    """The passages the side was judged on: its passages.jsonl, read as ``read_passages`` reads it."""
    from turnbench.passages import Passage, read_passages

    if not isinstance(gold.files, Mapping):
        return read_passages(Path(gold.files) / exports.PASSAGES)
    try:
        return [Passage.from_json(canonical.parse_json(line.decode("utf-8")))
                for line in _read(gold.files, exports.PASSAGES).splitlines() if line.strip()]
    except (ValueError, KeyError, TypeError):
        raise BadInput(f"{gold.where}: its {exports.PASSAGES} holds a line that is not a passage record") from None


def _judged(corpus: Corpus, gold: Gold, policy: str) -> _Judged:
    """The passage and meeting qrels, and spans.jsonl's query lines, that ``corpus`` gives the passages ``gold``'s
    side holds under ``policy`` (as scoring made them)."""
    from turnbench.harness.judgements import RelevancePolicy, judge_all

    queries = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    j = judge_all(queries, corpus.iter_meetings(), _inventory(gold), RelevancePolicy.parse(policy))
    ok = {qid: q for qid, q in j.queries.items() if q.judgeable}
    spans = {}
    for qid, q in ok.items():
        if q.level == "turn" and qid in j.gold_spans:
            line = {"gold": {m: [list(s) for s in sp] for m, sp in sorted(j.gold_spans[qid].items())},
                    "gold_start": dict(sorted(j.gold_start.get(qid, {}).items())),
                    "gold_words": j.gold_words.get(qid, 0), "query": qid}
            spans[qid] = canonical.dumps(line).encode("utf-8")
    return ({qid: dict(q.passages) for qid, q in ok.items() if q.level == "turn"},
            {qid: dict(q.meetings) for qid, q in ok.items()}, spans)


Paired = tuple[Held, Results, str | None]  # a side's files, its record, how a refusal names it (None: its directory)


def check_sides(pairs: Sequence[tuple[Paired, Paired]], corpora: Iterable[Corpus] = (),
                alone: Sequence[tuple[Path, Results]] = ()) -> None:
    """Every (baseline, candidate) pair of results directories, or results held in memory (with their records),
    holds the same gold; with ``corpora``, each side of a named corpus (``alone``: and each of these directories)
    holds the gold that corpus gives."""
    by_id = {c.id: c for c in corpora}
    judged: dict[Any, Any] = {}

    def against_corpus(gold: Gold, doc: Results) -> None:
        corpus = by_id.get(doc.corpus_id)
        if corpus is not None:
            check_against_corpus(gold, corpus, doc, judged)

    for directory, doc in alone:
        if by_id:
            against_corpus(gold_of(directory, doc), doc)
    for (bdir, bdoc, bwhere), (cdir, cdoc, cwhere) in pairs:
        b, c = gold_of(bdir, bdoc, bwhere), gold_of(cdir, cdoc, cwhere)
        against_corpus(b, bdoc)
        against_corpus(c, cdoc)
        check_same_gold(b, c)
