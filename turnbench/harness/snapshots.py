"""Two snapshots of one corpus compared honestly (docs/design.md §7, "Across snapshots").

A corpus update can change what a query's target means while its id stays the same. ``compare`` refuses two results
scored on different corpus text whole; ``compare --across-snapshots`` instead classifies each query by its binding
(``bindings.jsonl``: the sha256 of the query's record and of the text of its gold and answer turns; a question scored
on its answer binds no turns, and its target is its gold answer) on both sides:

* **unchanged**: both sides bind it to the same text — paired;
* **changed**: both hold it, bound to different text — not comparable, unless an explicit **reannotation receipt**
  (``turnbench reannotate``) says a person re-judged it: the receipt names both snapshots, the query, its old and
  new binding digests, who and when (as given, never the clock) and the new gold, and compare accepts it only when
  every one of those is what the two results directories hold;
* **deleted**: only the baseline holds it; **added**: only the candidate does — never comparable.

The comparison is drawn on the comparable subset alone (unchanged, plus changed with a receipt), and says its paired
denominator (``n of N queries``) beside every verdict; the rest are listed by class, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput, ReceiptMismatch

UNCHANGED, CHANGED, DELETED, ADDED = "unchanged", "changed", "deleted", "added"
REANNOTATED = "reannotated"
RECEIPT_FORMAT = "turnbench-reannotation-receipt/1"
_RECEIPT_KEYS = {"format", "corpus", "old_snapshot_sha256", "new_snapshot_sha256", "reannotations"}
_ENTRY_KEYS = {"query", "old_sha256", "new_sha256", "by", "at", "gold"}


def query_bindings(directory: Path) -> dict[str, str]:
    """query id -> its binding's sha256, read from ``directory``'s bindings.jsonl (the query rows only)."""
    from turnbench.harness.bindings import BINDINGS, query_digests

    path = Path(directory) / BINDINGS
    if not path.is_file():
        raise BadInput(f"{directory}: no {BINDINGS}; --across-snapshots classifies each query by its binding "
                       "(score the results again with this turnbench)")
    return query_digests(path.read_bytes(), str(path))


def answer_targets(answers: Sequence[tuple[str, Any]]) -> dict[str, str]:
    """query id -> the sha256 of its gold answer, for the questions scored on their answer (aggregation questions),
    which bind no turns: their target is the answer the corpus gives (``(query id, gold)`` pairs)."""
    return {qid: canonical.sha256_bytes(f"answer{chr(31)}{canonical.dumps(gold)}".encode()) for qid, gold in answers}


def classify(base: Mapping[str, str], cand: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Each query id of either side by class: unchanged, changed, deleted (baseline only), added (candidate only)."""
    return {UNCHANGED: tuple(sorted(q for q in base if cand.get(q) == base[q])),
            CHANGED: tuple(sorted(q for q in base if q in cand and cand[q] != base[q])),
            DELETED: tuple(sorted(set(base) - set(cand))),
            ADDED: tuple(sorted(set(cand) - set(base)))}


@dataclass(frozen=True)
class Snapshots:
    """What was paired across two snapshots of corpus ``corpus`` and what was not, by class."""

    corpus: str
    baseline_sha256: str
    candidate_sha256: str
    unchanged: tuple[str, ...]
    reannotated: tuple[str, ...]  # changed, with a receipt: comparable
    changed: tuple[str, ...]  # changed, without one: not comparable
    deleted: tuple[str, ...]
    added: tuple[str, ...]
    receipts: tuple[Mapping[str, Any], ...] = ()  # the accepted receipts' entries (query, by, at)

    @property
    def comparable(self) -> frozenset[str]:
        return frozenset(self.unchanged) | frozenset(self.reannotated)

    @property
    def total(self) -> int:
        return len(self.unchanged) + len(self.reannotated) + len(self.changed) + len(self.deleted) + len(self.added)

    def to_json(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "baseline_sha256": self.baseline_sha256,
                "candidate_sha256": self.candidate_sha256, "paired": len(self.comparable), "of": self.total,
                "comparable": {UNCHANGED: list(self.unchanged), REANNOTATED: list(self.reannotated)},
                "not_comparable": {CHANGED: list(self.changed), DELETED: list(self.deleted), ADDED: list(self.added)},
                "receipts": [dict(r) for r in self.receipts]}


def denominator(doc: Mapping[str, Any]) -> str:
    """``n of N queries`` of a comparison's ``snapshots`` facts (``Snapshots.to_json``)."""
    return f"{doc['paired']} of {doc['of']} queries"


def markdown_lines(doc: Mapping[str, Any]) -> list[str]:
    """What a comparison's ``snapshots`` facts (``Snapshots.to_json``) say in compare.md: the paired denominator,
    and every query that was not paired, by class."""
    def ids(qs: Sequence[str]) -> str:
        return ", ".join(f"`{q}`" for q in qs) if qs else "none"

    ok, no = doc["comparable"], doc["not_comparable"]
    out = [f"**Across snapshots of `{doc['corpus']}`** (baseline sha256 `{doc['baseline_sha256'][:12]}`, candidate "
           f"`{doc['candidate_sha256'][:12]}`): every row and verdict below is on the comparable subset, "
           f"**{denominator(doc)}** paired ({len(ok[UNCHANGED])} unchanged, {len(ok[REANNOTATED])} reannotated "
           "with a receipt).", "",
           f"- reannotated (comparable, by receipt): {len(ok[REANNOTATED])}: {ids(ok[REANNOTATED])}"]
    out += [f"  - `{r['query']}` re-judged by {r['by']} at {r['at']}" for r in doc["receipts"]]
    out += [f"- not comparable, changed (bound to other text, no receipt): {len(no[CHANGED])}: {ids(no[CHANGED])}",
            f"- not comparable, deleted (only in the baseline): {len(no[DELETED])}: {ids(no[DELETED])}",
            f"- not comparable, added (only in the candidate): {len(no[ADDED])}: {ids(no[ADDED])}", ""]
    return out


def receipt_document(corpus: str, old_snapshot: str, new_snapshot: str,
                     entries: Sequence[Mapping[str, Any]]) -> bytes:
    """A receipt file's canonical bytes: the two snapshots and, per query, its old and new binding digests, who and
    when (as given) and the new gold."""
    return canonical.pretty({"format": RECEIPT_FORMAT, "corpus": corpus, "old_snapshot_sha256": old_snapshot,
                             "new_snapshot_sha256": new_snapshot,
                             "reannotations": sorted((dict(e) for e in entries), key=lambda e: str(e["query"]))})


def read_receipt(path: Path) -> dict[str, Any]:
    """A receipt file, its shape checked (BadInput on anything that is not one)."""
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"--receipts {path}: no such file")
    try:
        doc = canonical.parse_json(path.read_bytes(), max_nesting=16)
        ok = (isinstance(doc, dict) and set(doc) == _RECEIPT_KEYS and doc["format"] == RECEIPT_FORMAT
              and all(isinstance(doc[k], str) for k in ("corpus", "old_snapshot_sha256", "new_snapshot_sha256"))
              and isinstance(doc["reannotations"], list) and doc["reannotations"]
              and all(isinstance(e, dict) and set(e) == _ENTRY_KEYS and isinstance(e["gold"], dict)
                      and all(isinstance(e[k], str) for k in _ENTRY_KEYS - {"gold"}) for e in doc["reannotations"]))
    except (ValueError, UnicodeDecodeError):
        ok = False
    if not ok:
        raise BadInput(f"--receipts {path}: not a reannotation receipt ({RECEIPT_FORMAT}; `turnbench reannotate` "
                       "writes one)")
    return doc


def check_receipts(receipts: Sequence[tuple[Path, Mapping[str, Any]]], *, corpus: str, old_snapshot: str,
                   new_snapshot: str, classes: Mapping[str, Sequence[str]], base: Mapping[str, str],
                   cand: Mapping[str, str], gold: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The receipts' entries, each refused (ReceiptMismatch) unless it is for these two snapshots, names a query
    whose target changed between them, gives the digests its bindings hold on each side and the gold the candidate
    was judged on (``gold``: the candidate's gold by query)."""
    changed = set(classes[CHANGED])
    accepted: dict[str, Mapping[str, Any]] = {}
    for path, doc in receipts:
        where = f"receipt {path}"
        if (doc["corpus"], doc["old_snapshot_sha256"], doc["new_snapshot_sha256"]) != (corpus, old_snapshot,
                                                                                       new_snapshot):
            raise ReceiptMismatch(f"{where} is for snapshots {doc['old_snapshot_sha256'][:12]}… -> "
                                  f"{doc['new_snapshot_sha256'][:12]}… of {doc['corpus']!r}, not the compared "
                                  f"{old_snapshot[:12]}… -> {new_snapshot[:12]}… of {corpus!r}")
        for e in doc["reannotations"]:
            qid = e["query"]
            if qid not in changed:
                cls = next((c for c, qs in classes.items() if qid in qs), None)
                raise ReceiptMismatch(f"{where}: query {qid} is {cls or 'in neither snapshot'}, not changed: only a "
                                      "changed target is reannotated")
            for side, digest, bound in (("old", e["old_sha256"], base), ("new", e["new_sha256"], cand)):
                if digest != bound[qid]:
                    raise ReceiptMismatch(f"{where}: query {qid}'s {side} digest {digest[:12]}… is not the "
                                          f"{'baseline' if side == 'old' else 'candidate'}'s binding "
                                          f"{bound[qid][:12]}…")
            if canonical.dumps(e["gold"]) != canonical.dumps(gold.get(qid, {})):
                raise ReceiptMismatch(f"{where}: query {qid}'s new gold is not the gold the candidate was judged on")
            if qid in accepted and canonical.dumps(accepted[qid]) != canonical.dumps(e):
                raise ReceiptMismatch(f"{where}: query {qid} is reannotated twice, differently")
            accepted[qid] = e
    return [accepted[q] for q in sorted(accepted)]


def snapshots(corpus: str, old_snapshot: str, new_snapshot: str, classes: Mapping[str, Sequence[str]],
              accepted: Sequence[Mapping[str, Any]]) -> Snapshots:
    done = {str(e["query"]) for e in accepted}
    return Snapshots(corpus, old_snapshot, new_snapshot, tuple(classes[UNCHANGED]),
                     tuple(q for q in classes[CHANGED] if q in done),
                     tuple(q for q in classes[CHANGED] if q not in done), tuple(classes[DELETED]),
                     tuple(classes[ADDED]),
                     tuple({"query": e["query"], "by": e["by"], "at": e["at"]} for e in accepted))
