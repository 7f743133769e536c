"""The results record: what one scored run is, from scoring to the page, as frozen records.

Scoring returns a ``Results``; the reader (``turnbench.results.directory``) opens one from a directory, checked; the
writer writes its ``tree`` as metrics.json. Everything else — render, compare, re-derivation, report, agreement, the
API — reads fields. The JSON tree is kept whole beside the fields because the claim is its bytes: a field is never
written back, so a record read and written again is the same file, byte for byte.

The fields are what code reads. What a results file records only for people to read (the arm's request body, the
index settings, the corpus's counts) stays as recorded facts (``Facts``): the engine side is free-form by design
(docs/design.md §4), and nothing computes with it beyond equality and printing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from turnbench.canonical import DECIMALS
from turnbench.errors import ResultsIntegrityError
from turnbench.results.tables import Block, Facts, block_of

ALL = "all"  # the row of every class together
ANSWERS = "answers"  # the answers block's name, in metrics.json and answers.json



def library_drift(recorded: Mapping[str, object], now: Mapping[str, object]) -> list[str]:
    """One line per library whose version differs between two records of ``provenance.libraries``
    (``turnbench.versions``; a record without the library says ``unrecorded``), e.g. ``faker 40.54.0 in the baseline,
    41.0.0 now``."""
    return [f"{name} {recorded.get(name, 'unrecorded')} in the baseline, {now.get(name, 'unrecorded')} now"
            for name in sorted(set(recorded) | set(now)) if recorded.get(name) != now.get(name)]


@dataclass(frozen=True)
class AnswerRow:
    """An aggregate of answer scores over a group of questions: one rule, one surface, one grammar side, or all.
    A mean is None when the group has no question it applies to (``set_f1``: no meeting-set question)."""

    corpus: str
    rule: str  # a rule id or "all"
    surface: str  # a surface name or "all"
    grammar: str  # "in", "out", "all" (or "mixed" if a surface spans both, which a sane corpus never does)
    questions: int
    declined: int
    em: float | None
    partial: float | None
    answered: float | None  # the share of the group's questions answered
    set_f1: float | None

    def to_json(self) -> dict[str, object]:
        return {"corpus": self.corpus, "rule": self.rule, "surface": self.surface, "grammar": self.grammar,
                "questions": self.questions, "declined": self.declined, "em": self.em, "partial": self.partial,
                "answered": self.answered, "set_f1": self.set_f1}


@dataclass(frozen=True)
class AnswerQuery:
    """One answer-scored question's scores, with its gold and submitted answers as recorded."""

    query_id: str
    corpus: str
    rule: str
    surface: str
    grammar: str
    answered: bool
    em: float
    partial: float
    set_f1: float | None
    gold: Facts
    submitted: Facts | None
    intent: Facts
    mechanism: str

    def to_json(self) -> dict[str, object]:
        return {"corpus": self.corpus, "query_id": self.query_id, "rule": self.rule, "surface": self.surface,
                "grammar": self.grammar, "gold": self.gold, "submitted": self.submitted,
                "mechanism": self.mechanism, "intent": self.intent, "em": self.em, "partial": self.partial,
                "set_f1": self.set_f1, "answered": self.answered}


@dataclass(frozen=True)
class Answers:
    """The answers block: exact-match scoring of the aggregation questions."""

    answerer: str
    policy: Facts  # the scoring rules (harness.answers.AnswerPolicy) as recorded, for equality and the page
    rows: tuple[AnswerRow, ...]
    per_query: tuple[AnswerQuery, ...]
    mechanisms: Mapping[str, int]

    @property
    def overall(self) -> AnswerRow | None:
        """The row over every question (rule, surface and grammar all ``all``)."""
        return next((r for r in self.rows if r.rule == r.surface == r.grammar == ALL), None)

    def to_json(self) -> dict[str, object]:
        """The block as metrics.json (and answers.json) hold it."""
        return {"answerer": self.answerer, "policy": self.policy, "rows": [r.to_json() for r in self.rows],
                "per_query": [q.to_json() for q in self.per_query], "decimals": DECIMALS,
                "mechanisms": dict(self.mechanisms)}


@dataclass(frozen=True)
class Scope:
    label: str
    meaning: str
    oracle: bool


@dataclass(frozen=True)
class CorpusFacts:
    id: str
    sha256: str
    seed: int | None
    tier: str
    facts: Facts  # the whole record, counts and licence included

    @property
    def meetings(self) -> int:
        """How many meetings the corpus holds, as its counts record (0 when they do not)."""
        counts = self.facts.get("counts")
        n = counts.get("meetings") if isinstance(counts, Mapping) else None
        return n if isinstance(n, int) and not isinstance(n, bool) else 0


@dataclass(frozen=True)
class Provenance:
    """Where a number comes from. ``arm``, ``index``, ``stack`` and ``inputs`` are the engine side's recorded facts."""

    corpus: CorpusFacts
    licence_tier: str
    arm: object  # a name, or the arm's recorded definition
    relevance_policy: Facts
    metric_engine: Facts
    files: Mapping[str, str]  # file name -> sha256, of every file the claim holds beside metrics.json
    index: object = None
    stack: object = None
    inputs: Facts = field(default_factory=dict)
    # the byte-shaping libraries' versions (turnbench.versions); empty in results written before they were recorded
    libraries: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return arm_label(self.arm)

    def library_drift(self, other: Provenance) -> list[str]:
        """What differs between the libraries this claim and ``other`` were made with, one phrase per library, this
        one's as "in the baseline"; empty when either recorded none (a claim made before they were recorded)."""
        if not self.libraries or not other.libraries:
            return []
        return library_drift(self.libraries, other.libraries)

    @property
    def policy(self) -> str:
        """The relevance policy's name (what two results must share to be compared)."""
        return str(self.relevance_policy.get("name", ""))

    @property
    def embeddings(self) -> dict[str, str]:
        """The digests of the vectors the numbers were computed from (passages in the index, the queries'), by what
        they cover; empty for a result that used none (another engine's results say "external/unknown")."""
        found = {}
        index_vectors = self.index.get("vectors") if isinstance(self.index, Mapping) else None
        if index_vectors:
            found["passages"] = str(index_vectors["embeddings"]["digest"]["sha256"])
        query_vectors = self.arm.get("query_vectors") if isinstance(self.arm, Mapping) else None
        if query_vectors:
            found["queries"] = str(query_vectors["digest"]["sha256"])
        return found

    @property
    def run_depth(self) -> int | None:
        """The deepest a question's run went, as handed over (None when not recorded)."""
        run = self.inputs.get("run")
        depth = run.get("max_depth") if isinstance(run, Mapping) else None
        return depth if isinstance(depth, int) and not isinstance(depth, bool) else None

    @property
    def passage_count(self) -> int | None:
        passages = self.inputs.get("passages")
        return passages.get("count") if isinstance(passages, Mapping) else None

    @property
    def passages_sha256(self) -> str | None:
        passages = self.inputs.get("passages")
        return passages.get("sha256") if isinstance(passages, Mapping) else None


@dataclass(frozen=True)
class Results:
    """One scored run: its tables, its answers block, and where its numbers come from. ``tree`` is metrics.json as
    written (its bytes are the claim); the fields are read from it once."""

    schema_version: int
    scope: Scope
    provenance: Provenance
    retrieval: Block | None
    strict: Block | None
    answers: Answers | None
    tree: Mapping[str, Any] = field(repr=False, compare=False)
    extra: Block | None = None  # the extra measures asked for (``--measure``; turnbench.harness.extra), else None

    @property
    def corpus_id(self) -> str:
        return self.provenance.corpus.id

    @property
    def label(self) -> str:
        return self.provenance.label


def arm_label(arm: object) -> str:
    """A short name for the arm a results file records: its ``name``, or the name of its nested ``arm``."""
    if isinstance(arm, Mapping):
        inner = arm.get("arm")
        for cand in (arm.get("name"), inner.get("name") if isinstance(inner, Mapping) else None):
            if isinstance(cand, str) and cand:
                return cand
        return "(unnamed arm)"
    return str(arm)


def digest_differences(baseline: Results, candidate: Results) -> list[str]:
    """One line per vector digest that differs: when the vectors differ, every metric difference follows from
    them (another encoder, runtime or CPU), and a metric diff would be the wrong thing to show first."""
    a, b = baseline.provenance.embeddings, candidate.provenance.embeddings
    return [f"the {what} embeddings differ: digest {str(a.get(what))[:12]}… in the baseline, {str(b.get(what))[:12]}… "
            "now" for what in sorted(set(a) | set(b)) if a.get(what) != b.get(what)]


# -- the JSON boundary: a metrics.json tree into fields -----------------------------------------------------------

def from_tree(tree: Mapping[str, Any], where: str = "metrics.json") -> Results:
    """The record of a metrics.json tree; a tree missing what a record needs is refused, never half read."""
    try:
        prov = tree["provenance"]
        return Results(
            schema_version=int(tree.get("schema_version", 0)),
            scope=_scope(tree.get("scope") or {}),
            provenance=provenance_of(prov),
            retrieval=block_of("retrieval", tree["retrieval"]) if "retrieval" in tree else None,
            strict=block_of("strict", tree["strict"]) if "strict" in tree else None,
            answers=_answers(tree[ANSWERS]) if ANSWERS in tree else None,
            tree=tree,
            extra=block_of("extra", tree["extra"]) if "extra" in tree else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ResultsIntegrityError(f"{where}: not a results document ({type(e).__name__}: {e})") from None


def _scope(s: Mapping[str, Any]) -> Scope:
    return Scope(str(s.get("label", "")), str(s.get("meaning", "")), bool(s.get("oracle", False)))


def provenance_of(p: Mapping[str, Any]) -> Provenance:
    """The record of a provenance tree (recorded facts, most of it, read as they were written)."""
    c = p["corpus"]
    licence = c.get("licence") or {}
    tier = str(p.get("licence_tier") or licence.get("tier") or "")
    seed = c.get("seed")
    return Provenance(
        corpus=CorpusFacts(str(c["id"]), str(c.get("sha256", "")), seed if isinstance(seed, int) else None,
                           str(licence.get("tier") or tier), c),
        licence_tier=tier, arm=p.get("arm"), relevance_policy=p.get("relevance_policy") or {},
        metric_engine=p.get("metric_engine") or {}, files=dict(p.get("files") or {}), index=p.get("index"),
        stack=p.get("stack"), inputs=p.get("inputs") or {},
        libraries={str(k): str(v) for k, v in (p.get("libraries") or {}).items()})


def _answers(a: Mapping[str, Any]) -> Answers:
    pol = a.get("policy") or {"count_tolerance": 0, "set_credit": ""}
    rows = tuple(AnswerRow(str(r["corpus"]), str(r["rule"]), str(r["surface"]), str(r["grammar"]),
                           int(r["questions"]), int(r["declined"]), r["em"], r["partial"], r["answered"], r["set_f1"])
                 for r in a.get("rows", ()))
    per_query = tuple(AnswerQuery(str(q["query_id"]), str(q.get("corpus", "")), str(q.get("rule", "")),
                                  str(q.get("surface", "")), str(q.get("grammar", "")), bool(q["answered"]), q["em"],
                                  q["partial"], q["set_f1"], q.get("gold") or {}, q.get("submitted"),
                                  q.get("intent") or {}, str(q.get("mechanism", "")))
                      for q in a["per_query"])
    _ = int(pol["count_tolerance"]), pol["set_credit"]  # a policy without its two rules is not a results document
    return Answers(str(a.get("answerer", "")), pol, rows, per_query, dict(a.get("mechanisms") or {}))
