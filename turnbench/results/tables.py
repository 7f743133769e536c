"""The tables of a results record: a class's row, a question's values, the tie report, and the blocks that hold
them (the graded retrieval block, the strict one, the extra measures), each with the tree metrics.json holds it as
(``to_json``) and that tree read back (``query_values``, ``ties_of``, ``block_of``): the writer's side and the
reader's, side by side, so the two cannot drift apart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# A recorded fact: JSON as the file holds it, for printing and equality only (never a number a table shows)
Facts = Mapping[str, object]

@dataclass(frozen=True)
class EntryError:
    """A row's entry-point error: the median |Δ| (s) of the first gold passage, over the queries that found one."""

    median: float | None
    found: int


@dataclass(frozen=True)
class Row:
    """One row of a table: a class (or ``all``) of one corpus, its query counts and its mean per measure (None when
    no query of the row has the measure, e.g. passage measures of meeting-level summaries)."""

    corpus: str
    cls: str
    queries: int
    unanswered: int
    dropped_unjudgeable: int
    means: Mapping[str, float | None]
    passage_level_queries: int = 0
    entry_error: EntryError | None = None

    def to_json(self) -> dict[str, Any]:
        """The row as metrics.json holds it."""
        tree: dict[str, Any] = {
            "corpus": self.corpus, "class": self.cls, "queries": self.queries,
            "passage_level_queries": self.passage_level_queries, "unanswered": self.unanswered,
            "dropped_unjudgeable": self.dropped_unjudgeable, "means": dict(self.means)}
        if self.entry_error is not None:
            tree["entry_error_s"] = {"median": self.entry_error.median,
                                     "queries_with_gold_found": self.entry_error.found}
        return tree


@dataclass(frozen=True)
class QueryValues:
    """One judged query's values (6 decimals)."""

    query_id: str
    cls: str
    surface: str
    level: str
    answered: bool
    values: Mapping[str, float]
    corpus: str = ""
    rule: str = ""
    domain: str | None = None
    entry_error_s: float | None = None
    # whether the query records an entry-point error (where the corpus's times are truth); it is None then when the
    # query found no gold passage
    entry_recorded: bool = False

    def with_values(self, values: Mapping[str, float], *, entry_error_s: float | None = None,
                    entry_recorded: bool = False, domain: str | None = None) -> QueryValues:
        """The same query's row with ``values`` (and the rest as given): ``dataclasses.replace`` without its cost,
        for a thousand rows a block."""
        return QueryValues(self.query_id, self.cls, self.surface, self.level, self.answered, values, self.corpus,
                           self.rule, domain, entry_error_s, entry_recorded)

    def to_json(self) -> dict[str, Any]:
        """The query's row as metrics.json holds it."""
        tree: dict[str, Any] = {"query_id": self.query_id, "corpus": self.corpus, "class": self.cls, "rule": self.rule,
                                "surface": self.surface, "level": self.level, "answered": self.answered,
                                "values": dict(self.values)}
        if self.domain is not None:
            tree["domain"] = self.domain
        if self.entry_recorded:
            tree["entry_error_s"] = self.entry_error_s
        return tree

    def group(self, key: str) -> str:
        """The query's value of a ``group_by`` key as the file names it (``class`` is ``cls``)."""
        return str(getattr(self, _FIELD.get(key, key)))


_FIELD = {"class": "cls"}


@dataclass(frozen=True)
class Shift:
    cls: str
    measure: str
    shift: float


@dataclass(frozen=True)
class TieEffect:
    """What trec_eval's own tie rule would have changed, had it scored the run instead of rule-5 order."""

    changed_any_metric: bool
    values_changed: int
    queries_changed: int
    largest_shift: Shift | None  # None when no mean moves at 6 decimals


TIES_RULE = ("a query's top k holds a tie when two of its first k passages, or its k-th and (k+1)-th, share a raw "
             "score (best score per passage)")
TREC_EVAL_TIE_ORDER = "score descending, then document id descending"


@dataclass(frozen=True)
class Ties:
    queries_judged: int
    anywhere: int  # queries holding a raw-score tie anywhere in their ranking
    in_top: Mapping[int, int]  # cut-off -> queries with a tie in their top k
    trec_eval: TieEffect

    def to_json(self) -> dict[str, Any]:
        """The tie report as metrics.json's retrieval block holds it."""
        t, big = self.trec_eval, self.trec_eval.largest_shift
        return {"rule": TIES_RULE, "queries_judged": self.queries_judged,
                "queries_with_ties_in_top": {str(k): v for k, v in self.in_top.items()},
                "queries_with_ties_anywhere": self.anywhere,
                "trec_eval_tie_rule": {
                    "order": TREC_EVAL_TIE_ORDER, "changed_any_metric": t.changed_any_metric,
                    "queries_changed": t.queries_changed, "values_changed": t.values_changed,
                    "largest_mean_shift": None if big is None else {"class": big.cls, "measure": big.measure,
                                                                    "shift": big.shift}}}


@dataclass(frozen=True)
class Block:
    """A table of per-query values and their rows: the graded retrieval block, or the strict one."""

    name: str
    measures: tuple[str, ...]
    group_by: tuple[str, ...]
    rows: tuple[Row, ...]
    per_query: tuple[QueryValues, ...]
    rows_by_surface: Mapping[str, tuple[Row, ...]] = field(default_factory=dict)
    rows_by_domain: Mapping[str, tuple[Row, ...]] = field(default_factory=dict)
    comparable: tuple[str, ...] = ()  # measures comparable across chunkings (retrieval only)
    counts: Facts = field(default_factory=dict)  # judging's counts (retrieval only)
    ties: Ties | None = None
    rule: str = ""  # what makes the block (strict only)
    threshold: int | None = None  # the least grade counted relevant (strict only)
    # the queries left out: unjudgeable ones (retrieval), those with no passage at the threshold (strict)
    dropped: tuple[Any, ...] = ()
    what: str = ""  # what the block holds (extra only)

    def to_json(self) -> dict[str, Any]:
        """The block as metrics.json holds it: the fields its kind (``name``) has."""
        tree: dict[str, Any] = {"group_by": list(self.group_by), "measures": list(self.measures),
                                "rows": [r.to_json() for r in self.rows],
                                "per_query": [q.to_json() for q in self.per_query]}
        if self.name == "retrieval":
            tree.update({"comparable_across_chunkings": list(self.comparable),
                         "rows_by_surface": _grouped_tree(self.rows_by_surface),
                         "dropped_unjudgeable": list(self.dropped), "counts": dict(self.counts),
                         "ties": None if self.ties is None else self.ties.to_json()})
            if self.rows_by_domain:
                tree["rows_by_domain"] = _grouped_tree(self.rows_by_domain)
        elif self.name == "strict":
            tree.update({"threshold": self.threshold, "rule": self.rule,
                         "dropped_no_strict_passage": list(self.dropped)})
        else:
            tree["what"] = self.what
        return tree


def _grouped_tree(grouped: Mapping[str, Sequence[Row]]) -> dict[str, list[dict[str, Any]]]:
    return {value: [r.to_json() for r in rows] for value, rows in grouped.items()}


def _row(r: Mapping[str, Any]) -> Row:
    e = r.get("entry_error_s")
    return Row(str(r.get("corpus", "")), str(r["class"]), int(r.get("queries", 0)), int(r.get("unanswered", 0)),
               int(r.get("dropped_unjudgeable", 0)), dict(r["means"]), int(r.get("passage_level_queries", 0)),
               EntryError(e.get("median"), int(e.get("queries_with_gold_found", 0))) if e is not None else None)


def query_values(r: Mapping[str, Any]) -> QueryValues:
    """A per-query row of metrics.json."""
    return QueryValues(str(r["query_id"]), str(r["class"]), str(r.get("surface", "")), str(r.get("level", "")),
                       bool(r.get("answered", True)),
                       dict(r["values"]), str(r.get("corpus", "")), str(r.get("rule", "")), r.get("domain"),
                       r.get("entry_error_s"), "entry_error_s" in r)


def ties_of(t: Mapping[str, Any] | None) -> Ties | None:
    if not t:
        return None
    rule = t["trec_eval_tie_rule"]
    big = rule.get("largest_mean_shift")
    return Ties(int(t["queries_judged"]), int(t["queries_with_ties_anywhere"]),
                {int(k): int(v) for k, v in t["queries_with_ties_in_top"].items()},
                TieEffect(bool(rule["changed_any_metric"]), int(rule.get("values_changed", 0)),
                          int(rule.get("queries_changed", 0)),
                          Shift(str(big["class"]), str(big["measure"]), float(big["shift"])) if big else None))


def block_of(name: str, b: Mapping[str, Any]) -> Block:
    # a file always names its measures (the reader checks it first); a tree built by hand may leave them to its values
    measures = b["measures"] if "measures" in b else dict.fromkeys(m for q in b["per_query"] for m in q["values"])
    return Block(
        name=name, measures=tuple(measures), group_by=tuple(b.get("group_by") or ("corpus", "class")),
        rows=tuple(map(_row, b["rows"])), per_query=tuple(map(query_values, b["per_query"])),
        rows_by_surface={k: tuple(map(_row, v)) for k, v in (b.get("rows_by_surface") or {}).items()},
        rows_by_domain={k: tuple(map(_row, v)) for k, v in (b.get("rows_by_domain") or {}).items()},
        comparable=tuple(b.get("comparable_across_chunkings") or ()), counts=b.get("counts") or {},
        ties=ties_of(b.get("ties")), rule=str(b.get("rule", "")), threshold=b.get("threshold"),
        dropped=tuple(b.get("dropped_no_strict_passage" if name == "strict" else "dropped_unjudgeable") or ()),
        what=str(b.get("what", "")))
