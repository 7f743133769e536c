"""Every claimed file of a results directory is tied to its metrics.json (docs/design.md §12 rule 5).

claim.sha256 proves only that nothing changed since it was written: a forger who edits a file and writes the digest
again passes it. So every file beside metrics.json is, on read, either

* made again from metrics.json (and the exports beside it) and compared byte for byte — ``metrics.md``,
  ``answers.md`` and ``trec.json`` from the document, ``qrels.passages.strict.txt`` from ``qrels.passages.txt`` —
  or
* the file whose sha256 metrics.json records in ``provenance.files`` (written last, once every other file is
  written and hashed): report.html, passages.jsonl (also the inventory ``provenance.inputs.passages`` names), the
  three runs, the qrels, bindings.jsonl and spans.jsonl; a file it does not record, or one it records that is not
  there, is refused too.

metrics.json itself is the one file not recorded there: its values are re-derived from the exported evidence
(``turnbench.results.rederive``). A difference is refused (ResultsIntegrityError, exit 3) naming the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from turnbench import canonical
from turnbench.errors import BadInput, ResultsIntegrityError
from turnbench.harness import exports
from turnbench.results.record import Results

METRICS_JSON, METRICS_MD = "metrics.json", "metrics.md"
FILES = "files"  # the key of provenance recording each file's sha256
NOT_RECORDED = frozenset({METRICS_JSON, METRICS_MD})  # metrics.json holds the record; metrics.md is made from it


def with_file_digests(results: Results, shas: Mapping[str, str]) -> Results:
    """``results`` recording, in its provenance (record and tree alike), the sha256 of every file written beside it
    (``shas``)."""
    files = {name: shas[name] for name in sorted(shas) if name not in NOT_RECORDED}
    tree = {**results.tree, "provenance": {**results.tree["provenance"], FILES: files}}
    return replace(results, provenance=replace(results.provenance, files=files), tree=tree)


def digest_entries(text: str) -> dict[str, str]:
    """claim.sha256's lines (verified already) as ``{file: sha256}``."""
    out = {}
    for line in text.splitlines():
        sha, _, name = line.partition("  ")
        out[name] = sha
    return out


def check_recorded(document: Mapping[str, Any], listed: Mapping[str, str], where: str) -> None:
    """Refuse unless the files ``listed`` in claim.sha256 are the ones ``document`` records, each with its sha256."""
    provenance = document["provenance"]
    recorded = provenance.get(FILES)
    if not isinstance(recorded, Mapping) or not all(isinstance(v, str) for v in recorded.values()):
        raise ResultsIntegrityError(f"{where}: metrics.json records no sha256 of the files beside it (results written "
                                    "before turnbench tied them to it), so nothing vouches for them; re-score them")
    for name in sorted((set(listed) - NOT_RECORDED) | set(recorded)):
        if name not in listed:
            raise ResultsIntegrityError(f"{where}: metrics.json records {name}, which is not here")
        if name not in recorded:
            raise ResultsIntegrityError(f"{where}: {name} is not one of the files metrics.json records")
        if listed[name] != recorded[name]:
            raise ResultsIntegrityError(f"{where}: {name} is not the file metrics.json records (its sha256 is not "
                                        "the one in metrics.json's provenance)")
    inventory = (provenance.get("inputs") or {}).get("passages") or {}
    if exports.PASSAGES in recorded and recorded[exports.PASSAGES] != inventory.get("sha256"):
        raise ResultsIntegrityError(f"{where}: {exports.PASSAGES} is not the inventory metrics.json was scored on (its "
                                    "sha256 is not provenance.inputs.passages')")


def check_derived(document: Mapping[str, Any], listed: Mapping[str, str], read: Callable[[str], bytes],
                  where: str, rendered: Mapping[str, Callable[[], bytes]]) -> None:
    """Refuse unless each file made from the document is, byte for byte, what it makes (``read(name)``: a file's
    bytes; ``rendered``: the files people read, metrics.md and answers.md, made by ``turnbench.render`` from the
    document). After ``check_recorded`` and the re-derivation: a document whose values were forged is named by its
    values first."""
    recorded = document["provenance"][FILES]
    try:
        for name, make in {**rendered, **_derived(document, recorded, read)}.items():
            if name not in listed:
                raise ResultsIntegrityError(f"{where}: no {name} beside metrics.json, which gives one")
            if read(name) != make():
                raise ResultsIntegrityError(f"{where}: {name} is not what metrics.json gives (it was edited after it "
                                            "was written)")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BadInput(f"{where}: metrics.json is malformed ({type(exc).__name__}: {exc})") from None


def _derived(document: Mapping[str, Any], recorded: Mapping[str, str], read: Callable[[str], bytes]
             ) -> dict[str, Callable[[], bytes]]:
    """The exports made again from the document (and qrels.passages.txt), by name: each a function of its bytes."""
    out: dict[str, Callable[[], bytes]] = {}
    if exports.TREC_JSON in recorded:
        out[exports.TREC_JSON] = lambda: canonical.pretty(sidecar_of(document))
    if exports.QRELS_STRICT in recorded and exports.QRELS_PASSAGES in recorded:
        out[exports.QRELS_STRICT] = lambda: _strict(read(exports.QRELS_PASSAGES))
    return out


def sidecar_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """trec.json as scoring wrote it, from the document alone."""
    from turnbench.harness import spans
    from turnbench.results.record import arm_label

    block = document["retrieval"]
    measures = list(block["measures"])
    timed = any(m.startswith("entry:") for m in measures)
    return exports.sidecar(document["provenance"]["relevance_policy"], measures, block["dropped_unjudgeable"],
                     [r["query_id"] for r in block["per_query"] if not r["answered"]],
                     exports.run_tag(arm_label(document["provenance"]["arm"])),
                     comparable=spans.comparable_facts(timed, block["counts"]["passages_judged_by_times"]),
                     extra=(document.get("extra") or {}).get("measures", ()))


def _strict(qrels: bytes) -> bytes:
    from turnbench.harness.strict import strict_qrels

    return exports.qrels_text(strict_qrels(exports.parse_qrels(qrels, exports.QRELS_PASSAGES)))
