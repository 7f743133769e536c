"""The self-measure: how hard a corpus is for plain BM25 with meetings as documents (DESIGN §5).

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
  of competitors ÷ non-gold meetings; ``gold_unmatched``: queries whose best gold score is ``≤ 0``.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.corpus.format import STATS, Corpus, open_corpus
from turnbench.corpus.records import RANKED_CLASSES, Meeting, Query
from turnbench.errors import CorpusIntegrityError, Refusal

if TYPE_CHECKING:
    from rich.table import Table

STATS_FORMAT = "turnbench-self-measure"
STATS_VERSION = 1
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
}


def tokenize(text: str) -> list[str]:
    """The self-measure's tokenizer: casefolded runs of Unicode word characters, nothing removed."""
    return _TOKEN_RE.findall(text.casefold())


def document_text(meeting: Meeting) -> str:
    return "\n".join([meeting.title, *(t.text for t in meeting.turns)])


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


def _round(x: float) -> float:
    return round(float(x), FLOAT_DIGITS)


def rank_queries(meetings: Iterable[Meeting], queries: Sequence[Query]) -> tuple[list[QueryMeasure], int]:
    """Score every ranked query against every meeting; returns per-query figures and the meeting count.

    Meetings are tokenised once; BM25Okapi then keeps only term frequencies, never the text.
    """
    import numpy as np
    from rank_bm25 import BM25Okapi

    # Documents enter BM25 in meeting-id order, whatever order the corpus yields them in: BM25Okapi's
    # epsilon floor depends on a float sum over terms in first-seen order, and the id order is also the
    # tie-break, so neither scores nor ranks can depend on reading order.
    docs: list[tuple[str, list[str]]] = []
    domains: dict[str, str] = {}
    for m in meetings:
        docs.append((m.id, tokenize(document_text(m))))
        if "domain" in m.meta:
            domains[m.id] = str(m.meta["domain"])
    ids = sorted(d[0] for d in docs)
    if len(set(ids)) != len(ids):
        raise CorpusIntegrityError("the corpus holds a meeting id more than once")
    docs.sort(key=lambda d: d[0])
    try:
        bm25 = BM25Okapi([d[1] for d in docs], **BM25_PARAMS)
    except ZeroDivisionError:
        raise Refusal("the corpus has no meetings or no words; BM25 statistics are undefined") from None
    del docs  # BM25Okapi keeps term frequencies only

    n = len(ids)
    position = {mid: i for i, mid in enumerate(ids)}
    has_domain = bool(domains)

    out: list[QueryMeasure] = []
    for q in sorted(queries, key=lambda q: q.id):
        gold = sorted(set(q.gold_meetings))
        missing = [g for g in gold if g not in position]
        if not gold or missing:
            raise CorpusIntegrityError(
                f"query {q.id}: gold meeting(s) {', '.join(missing) or '(none)'} not in the corpus"
            )
        scores = bm25.get_scores(tokenize(q.text))
        gold_idx = np.array([position[g] for g in gold], dtype=np.int64)
        is_gold = np.zeros(n, dtype=bool)
        is_gold[gold_idx] = True
        # rank of meeting j = 1 + #(score > s_j) + #(score == s_j with an id before j's)
        best_rank = n + 1
        for j in gold_idx:
            s = scores[j]
            r = 1 + int(np.count_nonzero(scores > s)) + int(np.count_nonzero(scores[:j] == s))
            best_rank = min(best_rank, r)
        g = float(scores[gold_idx].max())
        threshold = NEAR_DUP_RATIO * g if g > 0 else g
        competitors = int(np.count_nonzero((scores >= threshold) & ~is_gold))
        if has_domain:
            doms = {domains.get(m, NO_DOMAIN) for m in gold}
            domain = doms.pop() if len(doms) == 1 else MIXED_DOMAIN
        else:
            domain = NO_DOMAIN
        out.append(QueryMeasure(q.id, q.cls, domain, best_rank, g, competitors, n - len(gold)))
    return out, n


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
    return d


def _by_class(rows: Sequence[QueryMeasure]) -> dict[str, Any]:
    out = {c: summarise([r for r in rows if r.cls == c]) for c in RANKED_CLASSES if any(r.cls == c for r in rows)}
    out[ALL] = summarise(rows)
    return out


def bm25_description() -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "implementation": BM25_IMPLEMENTATION,
        "distribution": BM25_DISTRIBUTION,
        "version": version(BM25_DISTRIBUTION),
        **BM25_PARAMS,
        "tokenizer": dict(TOKENIZER),
    }


def measure_queries(meetings: Iterable[Meeting], queries: Sequence[Query]) -> dict[str, Any]:
    """The self-measure over in-memory records (no corpus identity): the pure core of ``measure_corpus``."""
    ranked = [q for q in queries if q.scored_on == "retrieval" and q.cls in RANKED_CLASSES]
    rows, n_meetings = rank_queries(meetings, ranked)
    result: dict[str, Any] = {
        "format": STATS_FORMAT,
        "format_version": STATS_VERSION,
        "bm25": bm25_description(),
        "near_dup_ratio": NEAR_DUP_RATIO,
        "cutoffs": list(CUTOFFS),
        "float_digits": FLOAT_DIGITS,
        "definitions": dict(DEFINITIONS),
        "meetings": n_meetings,
        "queries_ranked": len(ranked),
        "queries_not_ranked": len(queries) - len(ranked),
        "by_class": _by_class(rows),
    }
    if any(r.domain != NO_DOMAIN for r in rows):
        domains = sorted({r.domain for r in rows})
        result["by_domain"] = {d: _by_class([r for r in rows if r.domain == d]) for d in domains}
    return result


def measure_corpus(corpus: Corpus) -> dict[str, Any]:
    """The self-measure of a verified corpus, as the dict written to ``stats.json``."""
    result = measure_queries(corpus.iter_meetings(), corpus.queries())
    result["corpus"] = {
        "id": corpus.id,
        "sha256": corpus.sha256,
        "licence": dict(corpus.licence),
    }
    return result


def write_stats(root: Path) -> dict[str, Any]:
    """Verify the corpus at ``root``, measure it and write ``stats.json`` beside its manifest."""
    root = Path(root)
    corpus = open_corpus(root)
    stats = measure_corpus(corpus)
    canonical.write_json(root / STATS, stats)
    return stats


# -- presentation ------------------------------------------------------------------------------

TABLE_COLUMNS = (
    ("n", "n"),
    ("R@1", "recall_at_1"),
    ("R@10", "recall_at_10"),
    ("median rank", "median_first_gold_rank"),
    ("near-dup count", "near_dup_mean_count"),
    ("near-dup share", "near_dup_mean_share"),
    ("gold unmatched", "gold_unmatched"),
)


def table_rows(stats: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(domain, class, row) in print order: the whole corpus first, then each domain."""
    out = [(ALL, c, row) for c, row in stats["by_class"].items()]
    for dom, classes in stats.get("by_domain", {}).items():
        out.extend((dom, c, row) for c, row in classes.items())
    order = {c: i for i, c in enumerate((*RANKED_CLASSES, ALL))}
    return sorted(out, key=lambda t: (t[0] != ALL, t[0], order.get(t[1], 99), t[1]))


def render(stats: Mapping[str, Any]) -> Table:
    """A rich Table of the stats; the caption names the BM25 implementation and its parameters."""
    from rich.table import Table

    b = stats["bm25"]
    caption = (
        f"{b['implementation']} ({b['distribution']} {b['version']}) k1={b['k1']} b={b['b']} "
        f"epsilon={b['epsilon']}; tokenizer {b['tokenizer']['name']} /{b['tokenizer']['pattern']}/ casefolded; "
        f"meetings as documents (title + turns); near-dup = other meetings >= "
        f"{stats['near_dup_ratio']:g} x best gold score; ties by meeting id"
    )
    title = f"self-measure: {stats.get('corpus', {}).get('id', '(records)')} — {stats['meetings']} meetings"
    table = Table(title=title, caption=caption)
    table.add_column("domain")
    table.add_column("class")
    for head, _ in TABLE_COLUMNS:
        table.add_column(head, justify="right")
    for dom, cls, row in table_rows(stats):
        cells = []
        for _, key in TABLE_COLUMNS:
            v = row.get(key)
            if v is None:
                cells.append("–")
            elif isinstance(v, float):
                cells.append(f"{v:.1f}" if key == "median_first_gold_rank" else f"{v:.3f}")
            else:
                cells.append(str(v))
        table.add_row(dom, cls, *cells)
    return table
