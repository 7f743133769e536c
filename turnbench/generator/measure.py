"""The self-measure: how hard a corpus is for plain BM25 with meetings as documents (docs/design.md §5).

A corpus that is accidentally easy (every query names its meeting) or degenerate (dozens of meetings
score as well as the gold one) shows up here before any engine is blamed for it. The figures are a
property of the corpus, not of an engine under test, so they live in the corpus directory as
``stats.json`` (outside the manifest's hash list by design).

Definitions (also written into ``stats.json``):

- document: a meeting's title and the text of every turn, joined by newlines;
- ranking: BM25 score descending, ties broken by meeting id ascending, so ranks never depend on the
  order meetings were read in;
- ``recall_at_k``: share of queries with at least one gold meeting in the top k;
- ``median_first_gold_rank``: median over queries of the 1-based rank of the best-ranked gold meeting;
- competitors of a query: the non-gold meetings whose score is at least ``0.9 × g``, where ``g`` is the
  best score of any gold meeting; when ``g ≤ 0`` (no query term reaches a gold meeting) the threshold is
  ``g`` itself, so every non-gold meeting scoring at least as well counts;
- ``near_dup_mean_count``: mean number of competitors per query; ``near_dup_mean_share``: mean over queries
  of competitors ÷ non-gold meetings; ``gold_unmatched``: queries whose best gold score is ``≤ 0``;
- ``gold_share_at_r``: mean over queries of the share of gold meetings among the top ``r`` meetings, ``r``
  the number of gold meetings (for one gold meeting, recall@1);
- ``content_*``: the same figures with documents that hold the turns only, no title: what a query finds from
  what was said (a summary request whose only route is the title scores near zero here);
- ``overlap``: how many content words (tokens minus stopwords, ``generator.contracts``) a turn-level query
  shares with its evidence (the answer turns, else the gold turns), as counts of 0, 1, 2 and 3+ and a median:
  the lexical gap a dense or hybrid engine could close; and the *share* of the query's words (content words minus
  framing words) its evidence holds, as a mean and deciles, the distance the generator draws from real queries.

Rows are given per class, per class and surface (``by_surface``) and per domain where meetings carry one;
``realism`` holds the shape figures of ``generator.realism``.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turnbench.corpus.format import Corpus
from turnbench.corpus.records import RANKED_CLASSES, Meeting, Query
from turnbench.errors import CorpusIntegrityError, Refusal
from turnbench.generator import PRODUCER_NAME
from turnbench.generator.contracts import content_words, question_words
from turnbench.generator.realism import (
    REALISM_DEFINITIONS,
    MeetingProfile,
    meeting_figures,
    profile_meeting,
    query_figures,
)

STATS_FORMAT = "turnbench-self-measure"
STATS_VERSION = 3
BM25_IMPLEMENTATION = "rank_bm25.BM25Okapi"
BM25_DISTRIBUTION = "rank-bm25"
# rank_bm25's own defaults, written out so that an absent value cannot look like a default one.
BM25_PARAMS = {"k1": 1.5, "b": 0.75, "epsilon": 0.25}
TOKEN_PATTERN = r"\w+"
TOKENIZER = {
    "name": "casefold-words",
    "pattern": TOKEN_PATTERN,
    "casefold": True,
    "stopwords": "none",
    "stemming": "none",
}
NEAR_DUP_RATIO = 0.9
CUTOFFS = (1, 10)
FLOAT_DIGITS = 6
ALL = "all"
MIXED_DOMAIN = "mixed"
NO_DOMAIN = "none"

_TOKEN_RE = re.compile(TOKEN_PATTERN)

DEFINITIONS = {
    "document": "meeting title and every turn's text, joined by newlines",
    "ranking": "BM25 score descending; ties broken by meeting id ascending",
    "recall_at_k": "share of queries with at least one gold meeting among the top k meetings",
    "median_first_gold_rank": "median over queries of the 1-based rank of the best-ranked gold meeting",
    "competitor": (
        "a non-gold meeting scoring >= near_dup_ratio x the best gold meeting's score g "
        "(>= g itself when g <= 0)"
    ),
    "near_dup_mean_count": "mean over queries of the number of competitors",
    "near_dup_mean_share": "mean over queries of competitors / non-gold meetings",
    "gold_unmatched": "queries whose best gold meeting scores <= 0 (no query term reaches it)",
    "domain": "Meeting.meta['domain'] of the query's gold meetings; 'mixed' when they differ",
    "gold_share_at_r": "mean over queries of the share of gold meetings among the top r, r = number of gold",
    "content_": "prefix: the same figure with documents of turns only (no title)",
    "overlap": ("content words a turn-level query shares with its answer turns (else gold turns): counts of "
                "0, 1, 2, 3+ and the median; share_*: the share of the query's words (content words minus framing "
                "words, generator.contracts.question_words) its evidence holds: mean, deciles (nearest rank), share 0"),
}
OVERLAP_BUCKETS = ("0", "1", "2", "3+")


def tokenize(text: str) -> list[str]:
    """The self-measure's tokenizer: casefolded runs of Unicode word characters, nothing removed."""
    return _TOKEN_RE.findall(text.casefold())


@dataclass(frozen=True)
class QueryMeasure:
    """What BM25 did for one query: the figures every summary row is built from."""

    query_id: str
    cls: str
    domain: str
    first_gold_rank: int
    best_gold_score: float
    competitors: int
    non_gold: int
    surface: str = ""
    gold_share_at_r: float = 0.0
    content_first_gold_rank: int = 0
    content_gold_share_at_r: float = 0.0
    overlap: int | None = None  # content words shared with the evidence; None for meeting-level queries
    words: int = 0
    share: float | None = None  # the share of the question's words the evidence holds (contracts.question_words)


def _round(x: float) -> float:
    return round(float(x), FLOAT_DIGITS)


@dataclass(frozen=True)
class _Read:
    """What one pass over the meetings keeps: term lists (with and without titles), domains, the content
    words of every turn a query takes as evidence, and each meeting's shape."""

    ids: tuple[str, ...]
    titled: tuple[list[str], ...]
    content: tuple[list[str], ...]
    domains: Mapping[str, str]
    evidence: Mapping[tuple[str, int], frozenset[str]]
    profiles: tuple[MeetingProfile, ...]


def evidence_turns(q: Query) -> dict[str, frozenset[int]]:
    """A turn-level query's evidence: its answer turns where it has them, else its gold turns."""
    if q.gold_level != "turn":
        return {}
    if any(q.answer_turns.values()):
        return {m: frozenset(ts) for m, ts in q.answer_turns.items()}
    return {m: frozenset(i for a, b in rs for i in range(a, b + 1)) for m, rs in q.gold_turns.items()}


def query_shares(meetings: Iterable[Meeting], queries: Sequence[Query]) -> dict[str, float]:
    """Query id -> the share of its words (``contracts.question_words``) its evidence holds, for every turn-level
    query that has words: the distance a question is from what answers it."""
    wanted = {q.id: evidence_turns(q) for q in queries if q.gold_level == "turn"}
    needed: dict[str, set[int]] = {}
    for ev in wanted.values():
        for mid, ts in ev.items():
            needed.setdefault(mid, set()).update(ts)
    said: dict[tuple[str, int], frozenset[str]] = {}
    for m in meetings:
        for t in m.turns:
            if t.index in needed.get(m.id, ()):
                said[(m.id, t.index)] = content_words(t.text)
    out = {}
    for q in queries:
        asked = question_words(q.text)
        if q.id in wanted and asked:
            held = frozenset().union(*(said.get((m, t), frozenset()) for m, ts in wanted[q.id].items() for t in ts))
            out[q.id] = len(asked & held) / len(asked)
    return out


def _read(meetings: Iterable[Meeting], queries: Sequence[Query], timed: bool | None) -> _Read:
    needed: dict[str, set[int]] = {}
    for q in queries:
        for mid, ts in evidence_turns(q).items():
            needed.setdefault(mid, set()).update(ts)
    docs: list[tuple[str, list[str], list[str]]] = []
    domains: dict[str, str] = {}
    evidence: dict[tuple[str, int], frozenset[str]] = {}
    profiles: list[MeetingProfile] = []
    for m in meetings:
        said = tokenize("\n".join(t.text for t in m.turns))
        docs.append((m.id, tokenize(m.title) + said, said))
        if "domain" in m.meta:
            domains[m.id] = str(m.meta["domain"])
        for t in m.turns:
            if t.index in needed.get(m.id, ()):
                evidence[(m.id, t.index)] = content_words(t.text)
        profiles.append(profile_meeting(m, domains.get(m.id, NO_DOMAIN), bool(timed) or m.timing == "measured"))
    ids = sorted(d[0] for d in docs)
    if len(set(ids)) != len(ids):
        raise CorpusIntegrityError("the corpus holds a meeting id more than once")
    # Documents enter BM25 in meeting-id order, whatever order the corpus yields them in: BM25Okapi's
    # epsilon floor depends on a float sum over terms in first-seen order, and the id order is also the
    # tie-break, so neither scores nor ranks can depend on reading order.
    docs.sort(key=lambda d: d[0])
    return _Read(tuple(ids), tuple(d[1] for d in docs), tuple(d[2] for d in docs), domains, evidence,
                 tuple(profiles))


def _bm25(docs: Sequence[list[str]]) -> Any:
    from rank_bm25 import BM25Okapi

    try:
        return BM25Okapi(list(docs), **BM25_PARAMS)
    except ZeroDivisionError:
        raise Refusal("the corpus has no meetings or no words; BM25 statistics are undefined") from None


def _ranks(scores: Any, gold_idx: Any) -> list[int]:
    """The 1-based rank of each gold meeting: 1 + #(higher score) + #(same score with an earlier id)."""
    import numpy as np

    return [1 + int(np.count_nonzero(scores > scores[j])) + int(np.count_nonzero(scores[:j] == scores[j]))
            for j in gold_idx]


def _rank(meetings: Iterable[Meeting], queries: Sequence[Query],
          timed: bool | None) -> tuple[list[QueryMeasure], _Read]:
    import numpy as np

    read = _read(meetings, queries, timed)
    titled, content = _bm25(read.titled), _bm25(read.content)
    n = len(read.ids)
    position = {mid: i for i, mid in enumerate(read.ids)}
    out: list[QueryMeasure] = []
    for q in sorted(queries, key=lambda q: q.id):
        gold = sorted(set(q.gold_meetings))
        missing = [g for g in gold if g not in position]
        if not gold or missing:
            raise CorpusIntegrityError(
                f"query {q.id}: gold meeting(s) {', '.join(missing) or '(none)'} not in the corpus"
            )
        terms = tokenize(q.text)
        scores = titled.get_scores(terms)
        gold_idx = np.array([position[g] for g in gold], dtype=np.int64)
        is_gold = np.zeros(n, dtype=bool)
        is_gold[gold_idx] = True
        ranks = _ranks(scores, gold_idx)
        content_ranks = _ranks(content.get_scores(terms), gold_idx)
        g = float(scores[gold_idx].max())
        threshold = NEAR_DUP_RATIO * g if g > 0 else g
        competitors = int(np.count_nonzero((scores >= threshold) & ~is_gold))
        if read.domains:
            doms = {read.domains.get(m, NO_DOMAIN) for m in gold}
            domain = doms.pop() if len(doms) == 1 else MIXED_DOMAIN
        else:
            domain = NO_DOMAIN
        evidence = evidence_turns(q)
        overlap = share = None
        if evidence:
            said = frozenset().union(*(read.evidence.get((m, t), frozenset()) for m, ts in evidence.items()
                                       for t in ts))
            overlap = len(content_words(q.text) & said)
            asked = question_words(q.text)
            share = len(asked & said) / len(asked) if asked else None
        r = len(gold)
        out.append(QueryMeasure(q.id, q.cls, domain, min(ranks), g, competitors, n - r, surface=q.surface,
                                gold_share_at_r=sum(1 for x in ranks if x <= r) / r,
                                content_first_gold_rank=min(content_ranks),
                                content_gold_share_at_r=sum(1 for x in content_ranks if x <= r) / r,
                                overlap=overlap, words=len(q.text.split()), share=share))
    return out, read


def _overlap(rows: Sequence[QueryMeasure]) -> dict[str, Any] | None:
    values = [r.overlap for r in rows if r.overlap is not None]
    if not values:
        return None
    counts = dict.fromkeys(OVERLAP_BUCKETS, 0)
    for v in values:
        counts[str(v) if v < 3 else "3+"] += 1
    out: dict[str, Any] = {"n": len(values), **counts, "median": _round(statistics.median(values))}
    shares = sorted(r.share for r in rows if r.share is not None)
    if shares:
        out["share_mean"] = _round(math.fsum(shares) / len(shares))
        out["share_deciles"] = [_round(shares[round(k / 10 * (len(shares) - 1))]) for k in range(11)]
        out["share_zero"] = _round(sum(1 for x in shares if x == 0) / len(shares))
    return out


def summarise(rows: Sequence[QueryMeasure]) -> dict[str, Any]:
    """One summary row: counts and means over ``rows`` (sums in query-id order, math.fsum)."""
    rows = sorted(rows, key=lambda r: r.query_id)
    n = len(rows)
    if n == 0:
        return {"n": 0}
    d: dict[str, Any] = {"n": n}
    for k in CUTOFFS:
        d[f"recall_at_{k}"] = _round(sum(1 for r in rows if r.first_gold_rank <= k) / n)
    d["median_first_gold_rank"] = _round(statistics.median(r.first_gold_rank for r in rows))
    d["near_dup_mean_count"] = _round(math.fsum(r.competitors for r in rows) / n)
    d["near_dup_mean_share"] = _round(
        math.fsum((r.competitors / r.non_gold) if r.non_gold else 0.0 for r in rows) / n
    )
    d["gold_unmatched"] = sum(1 for r in rows if r.best_gold_score <= 0)
    d["gold_share_at_r"] = _round(math.fsum(r.gold_share_at_r for r in rows) / n)
    for k in CUTOFFS:
        d[f"content_recall_at_{k}"] = _round(sum(1 for r in rows if r.content_first_gold_rank <= k) / n)
    d["content_gold_share_at_r"] = _round(math.fsum(r.content_gold_share_at_r for r in rows) / n)
    overlap = _overlap(rows)
    if overlap is not None:
        d["overlap"] = overlap
    return d


def _by_class(rows: Sequence[QueryMeasure]) -> dict[str, Any]:
    out = {c: summarise([r for r in rows if r.cls == c]) for c in RANKED_CLASSES if any(r.cls == c for r in rows)}
    out[ALL] = summarise(rows)
    return out


def _by_surface(rows: Sequence[QueryMeasure]) -> dict[str, Any]:
    return {c: {s: summarise([r for r in rows if r.cls == c and r.surface == s])
                for s in sorted({r.surface for r in rows if r.cls == c})}
            for c in RANKED_CLASSES if any(r.cls == c for r in rows)}


def _realism(rows: Sequence[QueryMeasure], profiles: Sequence[MeetingProfile], domain: str | None) -> dict[str, Any]:
    ps = [p for p in profiles if domain is None or p.domain == domain]
    qs = [r for r in rows if domain is None or r.domain == domain]
    figures = {**meeting_figures(ps), **query_figures([r.words for r in sorted(qs, key=lambda r: r.query_id)],
                                                      [r.overlap for r in qs if r.overlap is not None])}
    return {k: _round(v) if isinstance(v, float) else v for k, v in figures.items()}


def bm25_description() -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "implementation": BM25_IMPLEMENTATION,
        "distribution": BM25_DISTRIBUTION,
        "version": version(BM25_DISTRIBUTION),
        **BM25_PARAMS,
        "tokenizer": dict(TOKENIZER),
    }


def measure_queries(meetings: Iterable[Meeting], queries: Sequence[Query], timed: bool | None = True) -> dict[str, Any]:
    """The self-measure over in-memory records (no corpus identity): the pure core of ``measure_corpus``.

    ``timed``: whether meeting times carry information (True: every meeting's; None: only measured ones)."""
    ranked = [q for q in queries if q.scored_on == "retrieval" and q.cls in RANKED_CLASSES]
    rows, read = _rank(meetings, ranked, timed)
    result: dict[str, Any] = {
        "format": STATS_FORMAT,
        "format_version": STATS_VERSION,
        "bm25": bm25_description(),
        "near_dup_ratio": NEAR_DUP_RATIO,
        "cutoffs": list(CUTOFFS),
        "float_digits": FLOAT_DIGITS,
        "definitions": dict(DEFINITIONS),
        "realism_definitions": dict(REALISM_DEFINITIONS),
        "meetings": len(read.ids),
        "queries_ranked": len(ranked),
        "queries_not_ranked": len(queries) - len(ranked),
        "by_class": _by_class(rows),
        "by_surface": _by_surface(rows),
        "realism": {"all": _realism(rows, read.profiles, None)},
    }
    if any(r.domain != NO_DOMAIN for r in rows):
        domains = sorted({r.domain for r in rows})
        result["by_domain"] = {d: _by_class([r for r in rows if r.domain == d]) for d in domains}
    meeting_domains = sorted({p.domain for p in read.profiles} - {NO_DOMAIN})
    if meeting_domains:
        result["realism"]["by_domain"] = {d: _realism(rows, read.profiles, d) for d in meeting_domains}
    return result


def measure_corpus(corpus: Corpus) -> dict[str, Any]:
    """The self-measure of a verified corpus, as the dict written to ``stats.json``.

    The generator plans its turn times (overlaps included); other producers' times count only where a
    meeting says they were measured."""
    planned = corpus.manifest.get("producer", {}).get("name") == PRODUCER_NAME
    result = measure_queries(corpus.iter_meetings(), corpus.queries(), timed=True if planned else None)
    result["corpus"] = {
        "id": corpus.id,
        "sha256": corpus.sha256,
        "licence": dict(corpus.licence),
    }
    return result
