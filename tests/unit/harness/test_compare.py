"""compare: nearest-rank percentiles, the paired bootstrap, verdicts, refusals and the gate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import count, mset, q, ranked_results_dir, rec, rows_of, sub
from turnbench.cli import main
from turnbench.errors import UnpairedComparison
from turnbench.harness.answers import answers_block, score_answers
from turnbench.harness.compare import BETTER, SAME, WORSE, bootstrap_means, paired_interval, verdict
from turnbench.harness.compare import compare as _compare
from turnbench.harness.stats import nearest_rank
from turnbench.render.comparisons import render_compare_md

MEASURES = ["nDCG@10", "MRR"]

def compare(base, cand, **kw):
    """compare() of the records of two trees built by hand."""
    return _compare(rec(base), rec(cand), **kw)



def doc(values: dict[str, tuple[str, float]], *, sha="s1", policy="graded(high=0.5,low=0.0,answer=0.5)", arm="base",
        answers=None):
    """A minimal metrics.json: query id -> (class, value of every measure); rows as the scorer computes them."""
    per_query = [{"query_id": q, "corpus": "c", "class": cls, "level": "turn", "answered": True,
                  "values": {m: v for m in MEASURES}} for q, (cls, v) in sorted(values.items())]
    d = {
        "schema_version": 1,
        "provenance": {"corpus": {"id": "c", "sha256": sha}, "relevance_policy": {"name": policy},
                       "metric_engine": {"name": "pytrec_eval-terrier", "version": "0.5.11"}, "arm": {"name": arm}},
        "scope": {"label": "corpus", "oracle": False},
        "retrieval": {"group_by": ["corpus", "class"], "measures": MEASURES, "per_query": per_query,
                      "rows": rows_of("c", per_query, MEASURES, {})},
    }
    if answers is not None:
        d["answers"] = {"per_query": [{"query_id": q, "corpus": "c", "rule": rule, "em": em, "partial": em,
                                       "answered": em > 0, "set_f1": None}
                                      for q, (rule, em) in sorted(answers.items())]}
    return d


def test_nearest_rank_percentiles_on_literal_values():
    xs = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    # rank = ceil(p/100 * n): 2.5 -> ceil(0.25) = 1; 50 -> 5; 90 -> 9; 95 -> ceil(9.5) = 10; 97.5 -> ceil(9.75) = 10
    assert [nearest_rank(xs, p) for p in ("2.5", 50, 90, 95, "97.5")] == [10, 50, 90, 100, 100]
    assert nearest_rank(xs, 0) == 10 and nearest_rank(xs, 100) == 100
    # at 10,000 resamples the bounds are the 250th and 9,750th smallest means (1-based), no interpolation
    big = list(range(1, 10_001))
    assert nearest_rank(big, "2.5") == 250 and nearest_rank(big, "97.5") == 9750


def test_bootstrap_is_reproducible_and_exact_on_degenerate_input():
    d = [0.1, -0.2, 0.3, 0.05, 0.0, 0.4, -0.1]
    a = paired_interval(d, identity=("x",))
    assert a == paired_interval(d, identity=("x",))
    assert a != paired_interval(d, identity=("x",), seed=1)
    # a constant difference resamples to itself: the interval is the point
    assert paired_interval([0.25] * 9) == (0.25, 0.25)
    # two queries with differences 0 and 1: resampled means are 0, 0.5 or 1 (p = 1/4, 1/2, 1/4), so the 2.5th
    # percentile is 0 and the 97.5th is 1 -> the interval touches zero: no measurable difference
    lo, hi = paired_interval([0.0, 1.0])
    assert (lo, hi) == (0.0, 1.0) and verdict(lo, hi) == SAME
    means = bootstrap_means(np.array([[0.0], [1.0]]), 10_000, [1, 2])
    assert set(np.unique(means).tolist()) == {0.0, 0.5, 1.0}
    assert abs(float((means == 0.5).mean()) - 0.5) < 0.02


def test_verdicts():
    assert verdict(0.01, 0.2) == BETTER and verdict(-0.2, -0.01) == WORSE
    assert verdict(-0.1, 0.1) == SAME and verdict(0.0, 0.3) == SAME


def test_a_run_compared_with_itself_has_every_delta_zero():
    base = doc({f"q{i:02d}": ("lookup" if i % 2 else "multi_file", i / 40) for i in range(20)})
    cmp = compare(base, base)
    assert cmp.rows and all(r.delta == 0.0 and r.verdict == SAME and (r.low, r.high) == (0.0, 0.0)
                            for r in cmp.rows)
    assert {(r.group("class"), r.measure) for r in cmp.rows} == {
        (c, m) for c in ("lookup", "multi_file", "all") for m in MEASURES}
    md = render_compare_md(cmp, gate=True)
    assert "**Gate: PASS**" in md and "-0.0000" not in md
    assert md.count("| 0.0000 | 0.0% | [+0.0000, +0.0000] | 1.0000 | 1.0000 |") == len(cmp.rows)
    assert md.count("| no measurable difference |  |") == len(cmp.rows)
    assert cmp.gate_failures() == []


def test_a_clear_improvement_is_better_and_a_clear_loss_fails_the_gate():
    base = doc({f"q{i:02d}": ("multi_file", 0.2 + (i % 5) / 100) for i in range(30)})
    up = doc({f"q{i:02d}": ("multi_file", 0.5 + (i % 5) / 100) for i in range(30)}, arm="cand")
    cmp = compare(base, up)
    row = next(r for r in cmp.rows if r.group("class") == "multi_file" and r.measure == "nDCG@10")
    assert (row.baseline, row.candidate, row.delta, row.low, row.high) == (0.22, 0.52, 0.3, 0.3, 0.3)
    assert row.verdict == BETTER and cmp.gate_failures() == []
    down = compare(up, base)
    assert all(r.verdict == WORSE for r in down.rows)
    assert down.gate_failures() and "is worse" in down.gate_failures()[0]
    assert "**Gate: FAIL**" in render_compare_md(down, gate=True)


def test_a_lookup_loss_within_noise_is_a_warning_never_a_failure():
    vals = [0.1, 0.9, 0.3, 0.7, 0.5, 0.2, 0.8, 0.4, 0.6, 0.0]
    base = {f"q{i}": ("lookup", v) for i, v in enumerate(vals)}
    noisy = {f"q{i}": ("lookup", v - (0.1 if i == 0 else 0.0)) for i, v in enumerate(vals)}
    cmp = compare(doc(base), doc(noisy))
    row = next(r for r in cmp.rows if r.group("class") == "lookup" and r.measure == "MRR")
    # one query moved: its flipped loss is +1 or -1 standard units, each half the time, so the one-sided max-T
    # p-value is about 1/2 whatever the size of the loss
    assert row.delta == -0.01 and row.verdict == SAME and 0.45 < row.p_guard < 0.55
    assert cmp.gate_failures() == []
    warnings = cmp.warnings()
    assert len(warnings) == 2 and all("below zero but within noise" in w for w in warnings)
    assert "> warning: c lookup nDCG@10 Δ -0.0100 is below zero" in render_compare_md(cmp, gate=True)


def test_the_guard_fails_a_lookup_loss_beyond_noise_that_holm_does_not_name():
    # 40 lookups: 8 lose 0.1 and 2 gain 0.05; 40 multi-file questions unchanged
    base = {f"q{i:02d}": ("lookup", 0.9) for i in range(40)} | {f"m{i:02d}": ("multi_file", 0.5) for i in range(40)}
    cand = {q: (c, v - (0.1 if c == "lookup" and q < "q08" else 0.0) + (0.05 if "q30" <= q < "q32" else 0.0))
            for q, (c, v) in base.items()}
    cmp = compare(doc(base), doc(cand))
    row = next(r for r in cmp.rows if r.group("class") == "lookup" and r.measure == "MRR")
    assert row.delta == -0.0175 and row.verdict == SAME  # Holm over 6 rows does not name it...
    assert row.p_holm > 0.05 and row.p_guard < 0.025  # ...the one-sided guard, outside the family, does
    failures = cmp.gate_failures()
    assert len(failures) == 2 and all("worse beyond noise" in f and "lookup guard p" in f for f in failures)
    # the same loss in a class the guard does not read fails nothing
    moved = {q: ("multi_file" if c == "lookup" else "summarize", v) for q, (c, v) in base.items()}
    moved_cand = {q: ("multi_file" if c == "lookup" else "summarize", v) for q, (c, v) in cand.items()}
    assert compare(doc(moved), doc(moved_cand)).gate_failures() == []


def test_every_row_states_what_it_could_have_detected():
    base = {f"q{i:02d}": ("lookup", 0.5) for i in range(40)} | {f"m{i:02d}": ("multi_file", 0.5) for i in range(40)}
    cand = {q: (c, v + (0.1 if int(q[1:]) % 2 else -0.1)) for q, (c, v) in base.items()}
    cmp = compare(doc(base), doc(cand))
    for r in cmp.rows:
        sd = float(np.std([0.1, -0.1] * (r.n // 2), ddof=1))  # 0.1 * sqrt(n / (n - 1))
        assert r.sd == round(sd, 6)
        if r.group("class") == "lookup":  # the guard's critical value, one-sided at 0.025: about 1.96
            assert 1.8 < r.guard_critical < 2.2
            assert r.detectable == round((r.guard_critical + 0.841621) * sd / 40 ** 0.5, 6)
        else:  # Holm's first step over the 6 gated rows: z(1 - 0.05/12) = 2.638
            assert r.detectable == round((2.638257 + 0.841621) * sd / r.n ** 0.5, 6)
    md = render_compare_md(cmp)
    assert "| −0.0" in md and "| ±0.0" in md
    # nothing moved: the corpus says nothing about what it could have seen
    assert all(r.detectable is None for r in compare(doc(base), doc(base)).rows)


def test_refuses_unpaired_inputs_naming_the_difference():
    base = doc({"q1": ("lookup", 0.5), "q2": ("lookup", 0.5)})
    with pytest.raises(UnpairedComparison, match=r"query sets differ in retrieval: 1 only in the baseline \(e.g. q2\)"):
        compare(base, doc({"q1": ("lookup", 0.5)}))
    with pytest.raises(UnpairedComparison, match=r"corpora \(sha256\) differ: baseline 's1', candidate 's2'"):
        compare(base, doc({"q1": ("lookup", 0.5), "q2": ("lookup", 0.5)}, sha="s2"))
    with pytest.raises(UnpairedComparison, match="relevance policies differ"):
        compare(base, doc({"q1": ("lookup", 0.5), "q2": ("lookup", 0.5)}, policy="binary(high=0.5,low=0.0)"))
    with pytest.raises(UnpairedComparison, match="grouped"):
        compare(base, doc({"q1": ("lookup", 0.5), "q2": ("multi_file", 0.5)}))


def test_answer_rows_go_through_the_same_code():
    # 20 questions a rule: fewer could not clear Holm's bar at any effect (6 all-lost questions give p = 1/32)
    answers = {f"a{i:02d}": ("R3" if i < 20 else "R4", 1.0) for i in range(40)}
    worse = {q: (r, 0.0 if r == "R4" else em) for q, (r, em) in answers.items()}
    base = doc({"q1": ("lookup", 0.5)}, answers=answers)
    cmp = compare(base, doc({"q1": ("lookup", 0.5)}, answers=worse))
    em = {r.group("rule"): r for r in cmp.rows if r.block == "answers" and r.measure == "em"}
    assert em["R3"].verdict == SAME and em["R4"].verdict == WORSE and em["R4"].delta == -1.0
    assert em["all"].delta == -0.5 and em["all"].n == 40
    assert not any(r.measure == "set_f1" for r in cmp.rows)  # no query had a meeting-set answer
    with pytest.raises(UnpairedComparison, match="result blocks differ"):
        compare(base, doc({"q1": ("lookup", 0.5)}))


def test_compare_cli_exit_codes(tmp_path):
    ranks = {f"q{i:02d}": ("lookup", 1 + i % 7) for i in range(14)}
    base = str(ranked_results_dir(tmp_path / "base", ranks))
    same = str(ranked_results_dir(tmp_path / "same", ranks, arm="same"))
    worse = str(ranked_results_dir(tmp_path / "worse", {q: (c, r + 2) for q, (c, r) in ranks.items()}, arm="worse"))
    other = str(ranked_results_dir(tmp_path / "other", ranks, sha="different"))
    runner = CliRunner()
    ok = runner.invoke(main, ["compare", base, same, "--gate", "--out", str(tmp_path / "cmp.md"),
                              "--json", str(tmp_path / "cmp.json"), "--full"])
    assert ok.exit_code == 0, ok.output
    as_json = json.loads((tmp_path / "cmp.json").read_text())
    assert as_json["gate_failures"] == [] and as_json["counts"]["no measurable difference"] == len(as_json["rows"])
    assert as_json["rows"][0]["interval"] == [0.0, 0.0] and as_json["candidate"] == "same"
    assert (tmp_path / "cmp.md").read_text() in ok.output and "**Gate: PASS**" in ok.output
    gated = runner.invoke(main, ["compare", base, worse, "--gate", "--full"])
    assert gated.exit_code == 4 and "GateFailed" in gated.output and "**Gate: FAIL**" in gated.output
    summary = runner.invoke(main, ["compare", base, worse, "--gate"])  # the summary says so too
    assert summary.exit_code == 4 and "Gate: FAIL, " in summary.output and "**Gate" not in summary.output
    assert runner.invoke(main, ["compare", base, worse]).exit_code == 0  # without --gate it only reports
    refused = runner.invoke(main, ["compare", base, other])
    assert refused.exit_code == 3 and "UnpairedComparison" in refused.output and "sha256" in refused.output
    missing = runner.invoke(main, ["compare", base, str(tmp_path)])
    assert missing.exit_code == 2


def answers_doc(block):
    return {
        "schema_version": 1,
        "provenance": {"corpus": {"id": "c", "sha256": "s"}, "relevance_policy": {"name": "graded"},
                       "metric_engine": {"name": "pytrec_eval-terrier", "version": "0.5.11"}, "arm": {"name": "bm25"}},
        "scope": {"label": "corpus", "oracle": False},
        "answers": block.to_json(),
    }


# 20 count questions: the reference gets all right; a broken candidate loses 10 of them
QS = [q(f"a{i:02d}", "R3" if i % 2 else "R7", "s", count(i)) for i in range(20)]


RIGHT = [sub(x.id, count(i)) for i, x in enumerate(QS)]


BROKEN = [sub(x.id, count(i + (1 if i < 10 else 0))) for i, x in enumerate(QS)]


def test_an_em_drop_is_worse_and_fails_the_gate():
    base = answers_doc(answers_block([score_answers(QS, RIGHT, corpus="c", answerer="reference")]))
    cand = answers_doc(answers_block([score_answers(QS, BROKEN, corpus="c", answerer="reference")]))
    cmp = compare(base, cand)
    em_all = next(r for r in cmp.rows if r.block == "answers" and r.measure == "em" and r.group("rule") == "all")
    assert (em_all.baseline, em_all.candidate, em_all.delta) == (1.0, 0.5, -0.5)
    assert em_all.verdict == WORSE and em_all.high < 0
    assert any("answers" in f and " em " in f for f in cmp.gate_failures())
    same = compare(base, base)
    assert same.gate_failures() == [] and all(r.delta == 0.0 for r in same.rows)


def test_none_against_reference_is_noted_and_worse():
    base = answers_doc(answers_block([score_answers(QS, RIGHT, corpus="c", answerer="reference")]))
    cand = answers_doc(answers_block([score_answers(QS, [], corpus="c", answerer="none")]))
    cmp = compare(base, cand)
    assert "answerers differ: baseline reference, candidate none" in cmp.notes
    answered = next(r for r in cmp.rows if r.measure == "answered" and r.group("rule") == "all")
    assert (answered.delta, answered.verdict) == (-1.0, WORSE)


def test_different_answer_policies_refuse():
    base = answers_doc(answers_block([score_answers(QS, RIGHT, corpus="c", answerer="reference")]))
    loose = answers_doc(answers_block([score_answers(QS, BROKEN, corpus="c", answerer="reference", tolerance=1)]))
    with pytest.raises(UnpairedComparison, match="answer scoring policies"):
        compare(base, loose)


def test_meeting_sets_compare_on_em_and_f1():
    qs = [q(f"s{i}", "R4", "which", mset("m1", "m2")) for i in range(6)]
    base = answers_doc(answers_block([score_answers(qs, [sub(x.id, mset("m1", "m2")) for x in qs], corpus="c")]))
    cand = answers_doc(answers_block([score_answers(qs, [sub(x.id, mset("m1")) for x in qs], corpus="c")]))
    rows = {r.measure: r for r in compare(base, cand).rows if r.group("rule") == "all"}
    # one of two meetings found: EM 0, F1 = 2*1/(1+2) = 0.666667
    assert rows["em"].delta == -1.0 and rows["set_f1"].candidate == 0.666667


# -- p-values, Holm, effect sizes; A/A pairs and a planted regression ------------------------------------------

BASELINE = json.loads((__import__("pathlib").Path(__file__).resolve().parents[3] / "baselines" / "bm25"
                       / "metrics.json").read_text())


def _retrieval_only(d):
    return {k: v for k, v in d.items() if k != "answers"}


def test_every_row_carries_p_values_effect_sizes_and_both_verdicts():
    base = doc({f"q{i:02d}": ("multi_file", 0.2 + (i % 5) / 100) for i in range(30)})
    up = doc({f"q{i:02d}": ("multi_file", 0.5 + (i % 5) / 100) for i in range(30)}, arm="cand")
    row = next(r for r in compare(base, up).rows if r.group("class") == "multi_file" and r.measure == "MRR")
    assert (row.wins, row.ties, row.losses) == (30, 0, 0) and row.relative == round(0.3 / 0.22, 6)
    assert row.p == round(1 / 10_001, 6) and row.p_holm == round(4 * 1 / 10_001, 6)  # 4 rows in the family
    assert row.verdict == row.verdict_unadjusted == BETTER
    j = row.to_json()
    assert {"p", "p_holm", "relative", "wins", "ties", "losses", "verdict_unadjusted"} <= set(j)


def _label_swap(a, b, rng):
    """An A/A pair: per query a fair coin says which of two arms' values each side gets. The two sides are
    equivalent arms by construction, so any difference the gate names is a false alarm."""
    x, y = json.loads(json.dumps(a)), json.loads(json.dumps(b))
    for rx, ry in zip(x["retrieval"]["per_query"], y["retrieval"]["per_query"], strict=True):
        if rng.random() < 0.5:
            rx["values"], ry["values"] = ry["values"], rx["values"]
    return x, y


def test_holm_keeps_a_family_of_noisy_a_a_pairs_quiet_where_the_unadjusted_intervals_do_not():
    rng = np.random.default_rng(11)
    n = 120
    a = doc({f"q{i:03d}": ("multi_file" if i % 2 else "summarize", float(rng.random())) for i in range(n)})
    b = json.loads(json.dumps(a))
    for r in b["retrieval"]["per_query"]:
        r["values"] = {m: round(min(1.0, max(0.0, v + float(rng.normal(0, 0.3)))), 6) for m, v in r["values"].items()}
    alarms_before = alarms_after = 0
    pairs = 40
    for k in range(pairs):
        x, y = _label_swap(a, b, np.random.default_rng(1000 + k))
        cmp = compare(x, y, resamples=1_000)
        alarms_before += any(r.verdict_unadjusted != SAME for r in cmp.rows)
        alarms_after += any(r.verdict != SAME for r in cmp.rows)
    assert alarms_after < alarms_before
    assert alarms_after <= 0.1 * pairs


def test_self_compare_and_an_equivalent_arm_pass_the_gate():
    base = _retrieval_only(BASELINE)
    same_ranking = json.loads(json.dumps(base))
    same_ranking["provenance"]["arm"] = {"name": "bm25-content-boost-3"}  # scores x3, the same ranking
    for cand in (base, same_ranking):
        cmp = compare(base, cand)
        assert cmp.gate_failures() == [] and all(r.delta == 0.0 and r.p == 1.0 for r in cmp.rows)


def test_a_planted_regression_of_known_size_fails_the_gate():
    base = _retrieval_only(BASELINE)
    cand = json.loads(json.dumps(base))
    cand["provenance"]["arm"] = {"name": "planted"}
    mf = [r for r in cand["retrieval"]["per_query"] if r["class"] == "multi_file"]
    hit = [r for r in mf if r["values"]["nDCG@10"] > 0][:30]  # 30 queries that found something lose it all
    assert len(hit) == 30
    lost = 0.0
    for r in hit:
        lost += r["values"]["nDCG@10"]
        r["values"]["nDCG@10"] = 0.0
    cmp = compare(base, cand)
    row = next(r for r in cmp.rows if r.group("class") == "multi_file" and r.measure == "nDCG@10")
    assert row.delta == round(-lost / len(mf), 6) and row.losses == 30 and row.wins == 0
    assert row.verdict == WORSE and row.p_holm < 0.05
    assert any("multi_file nDCG@10 is worse" in f for f in cmp.gate_failures())
    others = [r for r in cmp.rows if r.measure != "nDCG@10"]
    assert all(r.delta == 0.0 for r in others)


def test_a_changed_corpus_text_under_a_shared_target_is_a_stale_binding():
    from turnbench.errors import StaleBinding
    from turnbench.harness.bindings import QueryBinding

    base = doc({"q1": ("lookup", 0.5)})
    cand = doc({"q1": ("lookup", 0.5)}, sha="s2")
    same = [QueryBinding("q1", "a" * 64)]
    changed = [QueryBinding("q1", "b" * 64)]
    with pytest.raises(StaleBinding, match=r"query q1 is bound to different text"):
        compare(base, cand, bindings=(same, changed))
    # the text every target was judged on is the same: the corpora still differ, and that alone refuses
    with pytest.raises(UnpairedComparison, match=r"corpora \(sha256\) differ"):
        compare(base, cand, bindings=(same, same))


def test_stack_differences_outside_the_claim_are_noted_not_refused(tmp_path):
    from turnbench import canonical
    from turnbench.harness.seeds import SeedsComparison
    from turnbench.pipeline.comparing import with_stack_notes

    d = doc({"q1": ("lookup", 0.5), "q2": ("lookup", 1.0)})
    cmp = compare(d, d)
    a, b = tmp_path / "a", tmp_path / "b"
    for path, provider, jvm in ((a, "embedded", "21.0.8"), (b, "docker", "21.0.8")):
        path.mkdir()
        (path / "metrics.json").write_text("{}")  # only its presence matters here: a results directory
        canonical.write_json(path / "runinfo.json", {"stack": {"provider": provider, "chosen_because": provider,
                                                               "opensearch": {"jvm": jvm}}})
    noted = with_stack_notes(cmp, a, b)
    assert noted.notes == cmp.notes + ("provider differs: baseline embedded, candidate docker",)
    assert with_stack_notes(cmp, a, a) is cmp  # nothing differs, nothing added
    assert "> note: provider differs: baseline embedded, candidate docker" in render_compare_md(noted)
    # seed sets: each seed's differences once, on the pooled comparison
    for side in (a, b):
        for seed in (1, 2):
            (side / f"seed-{seed}").mkdir()
            (side / f"seed-{seed}" / "metrics.json").write_text("{}")
            (side / f"seed-{seed}" / "runinfo.json").write_bytes((side / "runinfo.json").read_bytes())
    for side in (a, b):
        (side / "runinfo.json").unlink()
        (side / "metrics.json").unlink()
    seeds = SeedsComparison((1, 2), {1: cmp, 2: cmp}, cmp, ())
    pooled = with_stack_notes(seeds, a, b)
    assert isinstance(pooled, SeedsComparison)
    assert pooled.pooled.notes == cmp.notes + ("provider differs: baseline embedded, candidate docker",)


def test_differing_embedding_digests_are_said_before_any_row():
    a, b = doc({"q1": ("lookup", 0.5)}), doc({"q1": ("lookup", 0.5)}, arm="other")
    for d, sha in ((a, "a" * 64), (b, "b" * 64)):
        d["provenance"]["index"] = {"vectors": {"embeddings": {"digest": {"sha256": sha}}}}
    md = render_compare_md(compare(a, b, resamples=200))
    note = md.index("the passages embeddings differ: digest aaaaaaaaaaaa… in the baseline, bbbbbbbbbbbb… now")
    assert note < md.index("| block |") if "| block |" in md else note < md.index("| corpus |")


def _with_report_only(values, comparable_value, strict_value):
    """``doc`` plus a span measure (comparable across chunkings) and a strict block, at the values given."""
    d = doc(values)
    block = d["retrieval"]
    block["measures"] = [*MEASURES, "span:R@10"]
    block["comparable_across_chunkings"] = ["span:R@10"]
    for r in block["per_query"]:
        r["values"]["span:R@10"] = comparable_value(r["query_id"])
    block["rows"] = rows_of("c", block["per_query"], block["measures"], {})
    strict_rows = [{**r, "values": {m: strict_value(r["query_id"]) for m in MEASURES}} for r in block["per_query"]]
    d["strict"] = {"group_by": ["corpus", "class"], "measures": MEASURES, "per_query": strict_rows,
                   "rows": rows_of("c", strict_rows, MEASURES, {})}
    return d


def test_report_only_blocks_are_compared_in_their_own_family_and_never_gate():
    values = {f"q{i:02d}": ("lookup", 0.5) for i in range(30)}
    base = _with_report_only(values, lambda q: 0.9, lambda q: 0.9)
    # the span and strict values collapse on every lookup query; the gated measures do not move
    cand = _with_report_only(values, lambda q: 0.1, lambda q: 0.1)
    cmp = compare(base, cand)
    blocks = {r.block for r in cmp.rows}
    assert blocks == {"retrieval", "comparable", "strict"}
    assert all(r.verdict == WORSE for r in cmp.rows if r.block != "retrieval")
    assert all(r.delta == 0 for r in cmp.rows if r.block == "retrieval")
    assert cmp.gate_failures() == []
    # Holm's family is the gated rows: four (two measures x lookup, all), not the report-only rows besides
    assert cmp.facts["verdicts"]["family"] == 4
    assert cmp.counts()[WORSE] == 0
    md = render_compare_md(cmp, gate=True)
    assert "**Gate: PASS**" in md and "comparable (report-only: never gated)" in md
    assert "report-only rows (6, each block its own Holm family, never gated): 0 better, 6 worse" in md
    # a report-only block is adjusted over its own rows: the same p-values as compared alone
    alone = compare(doc(values), doc(values))
    assert len(alone.rows) == 4


def test_the_markdown_and_page_say_gate_only_when_it_was_asked_for():
    values = {f"q{i:02d}": ("lookup", 0.5) for i in range(8)}
    worse = {q: (c, 0.0) for q, (c, _) in values.items()}
    cmp = compare(doc(values), doc(worse))
    assert cmp.gate_failures()
    assert "Gate" not in render_compare_md(cmp) and "**Gate: FAIL**" in render_compare_md(cmp, gate=True)


def test_wins_and_losses_are_counted_as_six_decimals_count_them():
    from turnbench.canonical import q6
    from turnbench.harness.compare import _wins_losses

    half = 5e-7  # half a unit of the sixth decimal, and the doubles either side of it: q6 decides those
    edges = [half, -half, np.nextafter(half, 1.0), np.nextafter(half, 0.0), -np.nextafter(half, 1.0), 4e-7, 6e-7,
             -4e-7, -6e-7, 1e-6, -1e-6, 0.0, -0.0, 0.25 - 0.125, 0.3 - 0.1 - 0.2]
    rng = np.random.default_rng(7)
    d = np.array(edges + rng.uniform(-2e-6, 2e-6, 500).tolist() + (rng.integers(-3, 4, 200) / 1e6).tolist())
    assert _wins_losses(d) == (sum(1 for x in d.tolist() if q6(x) > 0), sum(1 for x in d.tolist() if q6(x) < 0))
    assert _wins_losses(np.array([6e-7, 1e-6, -3e-7, 0.0])) == (2, 0)


def test_arms_run_to_different_depths_are_noted_not_refused():
    values = {f"q{i}": ("lookup", 0.5) for i in range(6)}
    deep, shallow = doc(values), doc(values, arm="cand")
    deep["provenance"]["inputs"] = {"run": {"max_depth": 100}}
    shallow["provenance"]["inputs"] = {"run": {"max_depth": 10}}
    (note,) = [n for n in compare(deep, shallow, resamples=200).notes if "depth" in n]
    assert note.startswith("run depths differ: the baseline ranks up to 100 passages a question, the candidate 10")
    assert not [n for n in compare(deep, deep, resamples=200).notes if "depth" in n]
