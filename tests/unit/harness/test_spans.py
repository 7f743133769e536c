"""Span and entry-point measures: hand-worked cases, then every value re-derived from a results directory's exported
files by code that reads only those files (span, entry) or by ir_measures (the strict rows)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import ir_measures
import pytest

from tests.unit.harness.helpers import meeting, query, score, turn, write_corpus
from turnbench.corpus import open_corpus
from turnbench.harness.spans import entry_values, span_values, times_are_truth
from turnbench.passages import Passage
from turnbench.rankings import RankedPassage
from turnbench.results.directory import write_results

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "small"


def test_span_measures_by_hand():
    # gold: 30 words (turn 0: 20, turn 1: 10). Top passages: a holds words 0-15 of turn 0 (15 words, all gold),
    # b holds 10-20 of turn 0 and 10 words of a non-gold turn (20 words; 10 gold, 5 of them already in a).
    gold_held = {"a": ((0, 0, 15),), "b": ((0, 10, 20),), "c": ((1, 0, 10),)}
    words = {"a": 15, "b": 20, "c": 10, "x": 40}
    meeting_of = {p: "m" for p in words}
    v = span_values(["a", "b", "x"], 30, gold_held, words, meeting_of)
    # union of gold held by a, b, x: words 0-20 of turn 0 = 20; read = 15 + 20 + 40 = 75
    assert v["span:R@10"] == 20 / 30
    assert v["span:P@10"] == 20 / 75
    # IoU = 20 / (75 + 30 - 20)
    assert v["span:IoU@10"] == 20 / 85
    # every gold holder (a, b, c): union 30, words 45
    assert v["span:P_best"] == 30 / 45
    assert span_values([], 30, gold_held, words, meeting_of)["span:R@10"] == 0.0


def test_only_the_top_ten_count():
    gold_held = {"g": ((0, 0, 10),)}
    words = {f"p{i}": 5 for i in range(10)} | {"g": 10}
    v = span_values([f"p{i}" for i in range(10)] + ["g"], 10, gold_held, words, {p: "m" for p in words})
    assert v["span:R@10"] == 0.0 and v["span:P@10"] == 0.0 and v["span:P_best"] == 1.0


def test_entry_points_by_hand():
    # one gold meeting m, gold starts at 100 s. Ranking: x (m, no gold, starts 95), a (m, gold, starts 120),
    # b (n, a meeting with no gold), c (m, gold, starts 100).
    start = {"x": 95.0, "a": 120.0, "b": 0.0, "c": 100.0}
    meeting_of = {"x": "m", "a": "m", "b": "n", "c": "m"}
    gold_held = {"a": ((3, 0, 5),), "c": ((3, 0, 9),)}
    v, error = entry_values(["x", "a", "b", "c"], {"m": 100.0}, gold_held, start, meeting_of)
    # the first passage holding gold is a: |120 - 100| = 20 s
    assert error == 20.0
    assert (v["entry:15s"], v["entry:30s"], v["entry:60s"]) == (0.0, 1.0, 1.0)
    # mGAP: x is in m, 5 s off: R1 = 1 - 5/150 and it matches m's one true start; nothing else can earn.
    # GAP = (R1 / 1) / 1 true start point
    assert v["entry:mGAP150"] == pytest.approx(1 - 5 / 150)


def test_mgap_over_two_gold_meetings():
    # gold starts: m at 0 s, n at 300 s. Ranking: p (n, 330 s: R = 1 - 30/150 = 0.8), q (m, 200 s: off by more than
    # 150 s, R = 0), r (m, 75 s: R = 0.5).
    start = {"p": 330.0, "q": 200.0, "r": 75.0}
    meeting_of = {"p": "n", "q": "m", "r": "m"}
    v, error = entry_values(["p", "q", "r"], {"m": 0.0, "n": 300.0}, {}, start, meeting_of)
    # rank 1: earned 0.8, 0.8 / 1; rank 3: earned 1.3, 1.3 / 3; over 2 true start points
    assert v["entry:mGAP150"] == pytest.approx((0.8 + 1.3 / 3) / 2)
    # no retrieved passage holds gold: no error, every window 0
    assert error is None and v["entry:60s"] == 0.0


def test_times_are_scored_only_where_they_are_truth():
    assert times_are_truth("turnbench.generator", {"synthetic"})
    assert times_are_truth("qmsum-import", {"measured"})
    assert not times_are_truth("qmsum-import", {"invented"})
    assert not times_are_truth("qmsum-import", {"measured", "invented"})
    assert not times_are_truth("qmsum-import", set())


def test_a_corpus_whose_times_were_invented_has_no_entry_measures_and_says_so(tmp_path):
    m = meeting("m", [turn(0, "ann", 0, 10, 10), turn(1, "bob", 10, 20, 10)])
    corpus = open_corpus(write_corpus(tmp_path / "c", [m], [query("q", "lookup", {"m": [(1, 1)]})]))
    ps = [Passage(f"m:{i:05d}", "m", t.speaker, t.start, t.end, i, words=10) for i, t in enumerate(m.turns)]
    res = score(corpus, ps, [RankedPassage("q", "m:00001", 1, 1.0)])
    measures = res.document["retrieval"]["measures"]
    assert "span:R@10" in measures and not any(x.startswith("entry:") for x in measures)
    assert res.results.retrieval.comparable == ("span:R@10", "span:P@10", "span:IoU@10", "span:P_best")


# --- re-derived from the exported files ---------------------------------------------------------------------

def _trec_run(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        out.setdefault(q, []).append((int(rank), d))
    return {q: [d for _, d in sorted(v)] for q, v in out.items()}


def rederive(directory: Path) -> dict[str, dict[str, float]]:
    """Span and entry values per query from spans.jsonl, passages.jsonl and run.passages.trec, by the rule in
    docs/harness.md, sharing no code with turnbench."""
    rows = [json.loads(x) for x in (directory / "spans.jsonl").read_text().splitlines()]
    gold = {r["query"]: r for r in rows if "query" in r}
    held = {r["passage"]: r for r in rows if "passage" in r}
    starts = {p["id"]: p["start"] for p in map(json.loads, (directory / "passages.jsonl").read_text().splitlines())}
    run = _trec_run(directory / "run.passages.trec")
    out = {}
    for qid, g in gold.items():
        gold_words = {(m, t, i) for m, spans in g["gold"].items() for t, a, b in spans for i in range(a, b)}

        def words_of(pid, gold_words=gold_words):
            r = held.get(pid, {})
            return {(r["meeting"], t, i) for t, a, b in r.get("spans", ()) for i in range(a, b)} & gold_words

        ranked = run.get(qid, [])
        top = ranked[:10]
        found = set().union(*(words_of(p) for p in top)) if top else set()
        read = sum(held[p]["words"] for p in top)
        holders = [p for p in held if words_of(p)]
        best = set().union(*(words_of(p) for p in holders)) if holders else set()
        every = sum(held[p]["words"] for p in holders)
        v = {"span:R@10": len(found) / g["gold_words"] if g["gold_words"] else 0.0,
             "span:P@10": len(found) / read if read else 0.0,
             "span:IoU@10": len(found) / (read + g["gold_words"] - len(found)) if read + g["gold_words"] else 0.0,
             "span:P_best": len(best) / every if every else 0.0}
        first = next((p for p in ranked if words_of(p)), None)
        delta = None if first is None else abs(starts[first] - g["gold_start"][held[first]["meeting"]])
        for w in (15, 30, 60):
            v[f"entry:{w}s"] = 1.0 if delta is not None and delta <= w else 0.0
        matched, earned, gap = set(), 0.0, 0.0
        meeting_of = {p["id"]: p["meeting"] for p in
                      map(json.loads, (directory / "passages.jsonl").read_text().splitlines())}
        for k, p in enumerate(ranked, 1):
            m = meeting_of[p]
            r = 0.0
            if m in g["gold_start"] and m not in matched:
                r = max(0.0, 1 - abs(starts[p] - g["gold_start"][m]) / 150)
                if r > 0:
                    matched.add(m)
            earned += r
            gap += earned / k if r > 0 else 0.0
        v["entry:mGAP150"] = gap / len(g["gold_start"]) if g["gold_start"] else 0.0
        out[qid] = v
    return out


def shuffled_fixture_run():
    """The small fixture corpus, windows of 40 words across speakers, ranked 40 deep by a fixed shuffle: (corpus,
    passages, run)."""
    from tests.unit.harness.test_independent_judge import word_windows

    corpus = open_corpus(FIXTURE)
    passages = [p for m in corpus.iter_meetings() for p, _ in word_windows(m)]
    queries = [q for q in corpus.queries() if q.scored_on == "retrieval"]
    run = []
    for n, q in enumerate(queries):
        # a deterministic ranking that puts some gold high, some low, some nowhere
        order = sorted(passages, key=lambda p: (int.from_bytes(p.id.encode(), "big") * (n + 7)) % 9973)
        run.extend(RankedPassage(q.id, p.id, r, float(100 - r)) for r, p in enumerate(order[:40], 1))
    return corpus, passages, run


@pytest.fixture(scope="module")
def scored_fixture(tmp_path_factory):
    """The small fixture corpus, windows of 40 words across speakers, ranked by a fixed shuffle."""
    corpus, passages, run = shuffled_fixture_run()
    return write_results(tmp_path_factory.mktemp("r") / "out", score(corpus, passages, run))


def test_span_and_entry_values_re_derive_from_the_exported_files(scored_fixture):
    doc = json.loads((scored_fixture / "metrics.json").read_text())
    again = rederive(scored_fixture)
    turn_rows = [r for r in doc["retrieval"]["per_query"] if r["level"] == "turn"]
    assert turn_rows and {r["query_id"] for r in turn_rows} == set(again)
    checked = 0
    for r in turn_rows:
        for m, v in r["values"].items():
            if m.startswith(("span:", "entry:")):
                assert round(again[r["query_id"]][m], 6) == v, (r["query_id"], m)
                checked += 1
    assert checked == len(turn_rows) * 8
    assert any(r["values"]["span:R@10"] > 0 for r in turn_rows) and any(r["values"]["entry:mGAP150"] > 0
                                                                         for r in turn_rows)


def test_strict_rows_re_derive_with_ir_measures(scored_fixture):
    doc = json.loads((scored_fixture / "metrics.json").read_text())
    strict = doc["strict"]
    qrels = list(ir_measures.read_trec_qrels(str(scored_fixture / "qrels.passages.strict.txt")))
    graded = list(ir_measures.read_trec_qrels(str(scored_fixture / "qrels.passages.txt")))
    run = list(ir_measures.read_trec_run(str(scored_fixture / "run.passages.trec")))
    names = {"nDCG@5": "nDCG@5", "nDCG@10": "nDCG@10", "nDCG@20": "nDCG@20", "R@5": "R@5", "R@10": "R@10",
             "R@20": "R@20", "MRR": "RR"}
    got: dict[str, dict[str, float]] = {}
    for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names.values()], qrels, run):
        got.setdefault(m.query_id, {})[str(m.measure)] = m.value
    # R and MRR are trec_eval -l 2 on the graded qrels (ir_measures rel=2)
    at_l2 = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        [ir_measures.parse_measure(n) for n in ("R(rel=2)@10", "RR(rel=2)")], graded, run)}
    assert strict["per_query"]
    for r in strict["per_query"]:
        for ours, theirs in names.items():
            assert round(got.get(r["query_id"], {}).get(theirs, 0.0), 6) == r["values"][ours], (r["query_id"], ours)
        assert round(at_l2.get((r["query_id"], "R(rel=2)@10"), 0.0), 6) == r["values"]["R@10"]
        assert round(at_l2.get((r["query_id"], "RR(rel=2)"), 0.0), 6) == r["values"]["MRR"]
    for row in strict["rows"]:
        group = [r["values"]["nDCG@10"] for r in strict["per_query"] if row["class"] in ("all", r["class"])]
        assert row["means"]["nDCG@10"] == round(math.fsum(group) / len(group), 6)


def test_turnbench_re_derives_them_too_and_refuses_a_forged_one(scored_fixture):
    """read_results re-derives every span and entry value from spans.jsonl and passages.jsonl; one forged value of
    a multi-meeting query is refused by that re-derivation, naming the query and measure."""
    from turnbench.errors import ResultsIntegrityError
    from turnbench.results import rederive as R
    from turnbench.results.directory import read_results

    read_results(scored_fixture)
    doc = json.loads((scored_fixture / "metrics.json").read_text())
    files = {name: (scored_fixture / name).read_bytes() for name in R.NEEDED}
    assert R.rederive(doc, files, "here") > 0
    row = next(r for r in doc["retrieval"]["per_query"] if r["class"] == "multi_file" and r["values"]["span:P_best"])
    row["values"]["span:P_best"] = q = round(row["values"]["span:P_best"] / 2, 6)
    with pytest.raises(ResultsIntegrityError, match=rf"here: query {row['query_id']} span:P_best: metrics.json says "
                                                    rf"{q}, its exported qrels and run give"):
        R.rederive(doc, files, "here")
