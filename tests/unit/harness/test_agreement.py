"""turnbench.harness.agreement: Kendall's tau-b by hand; orders with ties as ties; swaps only where both corpora tell
a pair apart; inert arms apart; the bootstrap interval; refusals."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.unit.harness.helpers import rec
from turnbench.errors import BadInput
from turnbench.harness.agreement import agreement as _agreement
from turnbench.harness.agreement import tau_b
from turnbench.render.comparisons import render_agreement_md as render_md


def agreement(docs, **kw):
    return _agreement([rec(d) for d in docs], **kw)



def test_tau_b_by_hand() -> None:
    assert tau_b([1, 2, 3], [1, 2, 3]) == 1.0
    assert tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    # one swap among three pairs: C=2, D=1, no ties -> (2-1)/3
    assert tau_b([1, 2, 3], [2, 1, 3]) == 0.333333
    # x ties one pair (T_x=1), C=2, D=0: 2 / sqrt(3 * 2) = 0.816497
    assert tau_b([1, 1, 3], [1, 2, 3]) == 0.816497
    assert tau_b([1, 1, 1], [1, 2, 3]) is None


def _doc(corpus: str, arm: str, values: Mapping[str, Sequence[float]], measure: str = "nDCG@10",
         forged_mean: float | None = None) -> dict[str, object]:
    """A metrics.json document: per-query values per class, and class rows whose means are theirs."""
    per_query, rows = [], []
    for cls, vs in values.items():
        for n, v in enumerate(vs):
            per_query.append({"query_id": f"{cls}-{n:03d}", "class": cls, "values": {measure: v}})
        rows.append({"class": cls, "means": {measure: round(sum(vs) / len(vs), 6)}})
    every = [v for vs in values.values() for v in vs]
    rows.append({"class": "all", "means": {measure: round(sum(every) / len(every), 6)
                                           if forged_mean is None else forged_mean}})
    return {"provenance": {"corpus": {"id": corpus}, "arm": {"name": arm}}, "scope": {"oracle": False},
            "retrieval": {"rows": rows, "per_query": per_query}}


def _flat(v: float, n: int = 40) -> list[float]:
    return [v] * n


def _noisy(v: float, spread: float, n: int = 40, phase: int = 1) -> list[float]:
    """Values around ``v`` whose mean is ``v``: half above by ``spread``, half below, alternating every ``phase``
    queries (two arms of different phases differ query by query, as arms do)."""
    return [v + spread if (i // phase) % 2 else v - spread for i in range(n)]


def test_orders_show_exact_ties_and_differences_a_corpus_cannot_tell() -> None:
    docs = [_doc("syn", "a", {"lookup": _flat(0.5)}), _doc("syn", "b", {"lookup": _flat(0.5)}),
            _doc("syn", "c", {"lookup": _flat(0.2)}),
            _doc("real", "a", {"lookup": _noisy(0.40, 0.3)}), _doc("real", "b", {"lookup": _noisy(0.39, 0.3, phase=2)}),
            _doc("real", "c", {"lookup": _flat(0.1)})]
    cell = next(c for c in agreement(docs) if c.cls == "lookup")
    assert cell.orders["syn"].links == ("=", ">")
    assert cell.orders["syn"].text() == "a 0.5000 = b 0.5000 > c 0.2000"
    # 0.40 against 0.39 over 40 queries of spread 0.3 is noise: shown as ≈, never as >
    assert cell.orders["real"].links == ("≈", ">")
    # the pair tied on one corpus counts as tied there: T_x = 1, C = 2
    assert cell.tau_b == 0.816497 and cell.swaps == () and cell.unresolved == 0


def test_a_swap_needs_both_corpora_to_tell_the_pair_apart() -> None:
    docs = [_doc("syn", "x", {"lookup": _flat(0.6)}), _doc("syn", "y", {"lookup": _flat(0.4)}),
            _doc("syn", "z", {"lookup": _flat(0.1)}), _doc("syn", "w", {"lookup": _flat(0.05)}),
            # x below y by noise only: discordant for tau-b, but not a swap
            _doc("real", "x", {"lookup": _noisy(0.30, 0.25)}),
            _doc("real", "y", {"lookup": _noisy(0.31, 0.25, phase=2)}),
            # w above z, clearly: a swap
            _doc("real", "z", {"lookup": _flat(0.05)}), _doc("real", "w", {"lookup": _flat(0.2)})]
    cell = next(c for c in agreement(docs) if c.cls == "lookup")
    assert cell.swaps == (("w", "z"),)
    assert cell.unresolved == 1  # x and y: told apart on syn, not on real
    assert "w ↔ z" in render_md([cell])


def test_inert_arms_are_apart_and_the_interval_brackets_tau() -> None:
    docs = []
    for corpus, shift in (("syn", 0.0), ("real", -0.1)):
        for arm, mean in (("good", 0.6), ("mid", 0.45), ("weak", 0.3)):
            docs.append(_doc(corpus, arm, {"lookup": _noisy(mean + shift, 0.2)}))
        docs.append(_doc(corpus, "phrase", {"lookup": _flat(0.0)}))
    first, second = agreement(docs, resamples=300), agreement(docs, resamples=300)
    cell = next(c for c in first if c.cls == "lookup")
    assert cell.inert == ("phrase",) and cell.tau_b == 1.0 and cell.tau_b_all == 1.0
    assert cell.interval is not None and cell.interval[0] <= cell.tau_b <= cell.interval[1]
    assert [c.to_json() for c in first] == [c.to_json() for c in second]  # seeded: the same every time
    md = render_md(first, resamples=300)
    assert "| lookup | nDCG@10 | 1.0000 |" in md and "| phrase |" in md


def test_resampling_meetings_keeps_a_meetings_queries_together() -> None:
    docs = [_doc(c, arm, {"lookup": _noisy(m, 0.2)}) for c in ("syn", "real")
            for arm, m in (("a", 0.6), ("b", 0.4), ("c", 0.2))]
    clusters = {c: {f"lookup-{n:03d}": f"m{n // 10}" for n in range(40)} for c in ("syn", "real")}
    cell = next(c for c in agreement(docs, unit="meetings", clusters=clusters) if c.cls == "lookup")
    assert cell.tau_b == 1.0 and cell.interval is not None
    with pytest.raises(BadInput, match="each query's meeting"):
        agreement(docs, unit="meetings")
    with pytest.raises(BadInput, match="no gold meeting known"):
        agreement(docs, unit="meetings", clusters={"syn": {}, "real": {}})


def test_refusals() -> None:
    three = [_doc("a", x, {"lookup": [0.1, 0.2]}) for x in "xyz"]
    with pytest.raises(BadInput, match="two corpora"):
        agreement(three)
    with pytest.raises(BadInput, match="at least 3 arms"):
        agreement([_doc(c, x, {"lookup": [0.1]}) for c in "ab" for x in "xy"])
    with pytest.raises(BadInput, match="given twice"):
        agreement([_doc("a", "x", {"lookup": [0.1]}), _doc("a", "x", {"lookup": [0.1]})])
    forged = [*three[:2], _doc("a", "z", {"lookup": [0.1, 0.2]}, forged_mean=0.9),
              *(_doc("b", x, {"lookup": [0.1, 0.2]}) for x in "xyz")]
    with pytest.raises(BadInput, match="not the mean of its per-query values"):
        agreement(forged)
    uneven = [*three[:2], _doc("a", "z", {"lookup": [0.1, 0.2, 0.3]}), *(_doc("b", x, {"lookup": [0.1, 0.2]})
                                                                        for x in "xyz")]
    with pytest.raises(BadInput, match="different queries"):
        agreement(uneven)
    with pytest.raises(BadInput, match="at least 100 resamples"):
        agreement(three, resamples=10)


# -- the family of arms agreement is measured with (arms/agreement/) --------------------------------------------

FAMILY = sorted((Path(__file__).resolve().parents[3] / "arms" / "agreement").glob("*.toml"))
# what an agreement arm may send (the arm confinement): no script but the k-NN plugin's knn_score, no other index
ALLOWED_QUERIES = {"bool", "match", "multi_match", "match_phrase", "fuzzy", "dis_max", "knn", "script_score",
                   "hybrid"}


def _queries_in(node: object, out: set[str]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("query", "queries", "must", "should", "filter", "must_not"):
                for q in v if isinstance(v, list) else [v]:
                    if isinstance(q, dict):
                        out.update(key for key in q if key not in ("boost",))
            _queries_in(v, out)
    elif isinstance(node, list):
        for v in node:
            _queries_in(v, out)


def test_the_family_is_broad_and_every_file_is_an_arm_named_as_its_file() -> None:
    from turnbench.engines.arms import from_file

    arms = [from_file(f) for f in FAMILY]
    assert len(arms) >= 12 and all(a.name == f.stem for a, f in zip(arms, FAMILY, strict=True))
    bodies = {a.name: a.request(query_text="q", filters=[], depth=100, query_vector=[0.0] if a.encoder else None)
              for a in arms}
    pipelines = {a.name: a.pipeline_body() for a in arms}
    text = {n: json.dumps(b) for n, b in bodies.items()}
    assert any('"operator": "and"' in t for t in text.values())  # strict matching
    assert any("minimum_should_match" in t for t in text.values())
    assert any("match_phrase" in t for t in text.values()) and any("fuzziness" in t for t in text.values())
    assert any("dis_max" in t for t in text.values())
    assert any('"knn_score"' in t and '"hybrid"' not in t for t in text.values())  # dense exact
    assert any(a.needs_graph for a in arms)  # dense HNSW
    weights = {tuple(p["phase_results_processors"][0]["normalization-processor"]["combination"]["parameters"]
                     ["weights"]) for p in pipelines.values() if p and "normalization-processor" in json.dumps(p)}
    constants = {p["phase_results_processors"][0]["score-ranker-processor"]["combination"]["parameters"]
                 ["rank_constant"] for p in pipelines.values() if p and "score-ranker-processor" in json.dumps(p)}
    assert len(weights) >= 3 and len(constants) >= 2


def test_rrf_constants_sit_where_the_server_reads_them_and_queries_stay_confined() -> None:
    """OpenSearch 2.19's score-ranker-processor reads combination.parameters.rank_constant; one placed directly
    under combination is ignored (60 is used). And an agreement arm sends only confined queries: no script but
    knn_score, nothing that reads another index."""
    from turnbench.engines.arms import from_file

    for f in FAMILY:
        arm = from_file(f)
        pipeline = arm.pipeline_body() or {}
        for proc in pipeline.get("phase_results_processors", []):
            ranker = proc.get("score-ranker-processor")
            if ranker is not None:
                assert "rank_constant" not in ranker["combination"], f.name
                assert isinstance(ranker["combination"]["parameters"]["rank_constant"], int), f.name
        body = arm.request(query_text="q", filters=[], depth=100, query_vector=[0.0] if arm.encoder else None)
        found: set[str] = set()
        _queries_in(body, found)
        assert found <= ALLOWED_QUERIES, (f.name, found - ALLOWED_QUERIES)
        scripts = json.dumps(body).count('"script"')
        assert scripts == json.dumps(body).count('"source": "knn_score"'), f.name
        assert '"index"' not in json.dumps(body) and "more_like_this" not in json.dumps(body), f.name
