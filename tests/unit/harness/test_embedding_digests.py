"""`make verify` reads the embeddings digests first: differing vectors are said to differ, not shown as metrics."""

from __future__ import annotations

import json
from pathlib import Path

from turnbench.results.directory import RUNINFO_JSON
from turnbench.results.record import digest_differences, from_tree
from turnbench.results.verify import DIFFERENT, NOT_HERE, VERIFIED, verify_digests


def _doc(passages: str | None, queries: str | None) -> dict:
    prov: dict = {"index": {}, "arm": {}, "corpus": {"id": "c", "sha256": "0" * 64}}
    if passages:
        prov["index"]["vectors"] = {"embeddings": {"digest": {"sha256": passages}}}
    if queries:
        prov["arm"]["query_vectors"] = {"digest": {"sha256": queries}}
    return {"provenance": prov}


def test_a_lexical_result_has_no_digests_and_nothing_differs():
    assert from_tree(_doc(None, None)).provenance.embeddings == {}
    assert digest_differences(from_tree(_doc(None, None)), from_tree(_doc(None, None))) == []


def test_differing_passage_vectors_are_named_first(tmp_path: Path):
    base, new = tmp_path / "base", tmp_path / "new"
    for d, doc in ((base, _doc("a" * 64, "c" * 64)), (new, _doc("b" * 64, "c" * 64))):
        d.mkdir()
        (d / "metrics.json").write_text(json.dumps(doc))
    outcome, lines = verify_digests("dense-exact", base, new)
    assert outcome == DIFFERENT and lines == [
        "verify: dense-exact: the passages embeddings differ: digest aaaaaaaaaaaa… in the baseline, bbbbbbbbbbbb… now",
        "verify: dense-exact: on a CPU of the baseline's class: metrics not compared, they follow from the vectors"]
    outcome, lines = verify_digests("dense-exact", base, base)
    assert outcome == VERIFIED and lines == [
        "verify: dense-exact: embeddings digests equal to the baseline's (vectors: passages, queries)"]


def test_vectors_from_another_class_of_cpu_are_not_verified_here_and_not_passed(tmp_path: Path):
    base, new = tmp_path / "base", tmp_path / "new"
    for d, doc, isa in ((base, _doc("a" * 64, "c" * 64), "avx512f"), (new, _doc("b" * 64, "c" * 64), "avx2")):
        d.mkdir()
        (d / "metrics.json").write_text(json.dumps(doc))
        (d / RUNINFO_JSON).write_text(json.dumps({"host": {"cpu_vector_isa": isa}}))
    outcome, lines = verify_digests("dense-exact", base, new)
    assert outcome == NOT_HERE
    assert lines[-1].startswith("verify: dense-exact: NOT VERIFIED on this CPU: the baseline's vectors come from a "
                                "CPU with [avx512f], these from [avx2]")
