"""turnbench.harness.decisions: verdicts by hand (zero-width intervals, ties, noise), the four agreement classes and
their counts, the material real-only bar, refusals, and the shipped decisions file (arms/decisions/)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.unit.harness.helpers import rec
from turnbench.errors import BadInput
from turnbench.harness.decisions import (
    AGREE,
    BETTER,
    NONE,
    OPPOSITE,
    REAL_ONLY,
    SYNTHETIC_ONLY,
    WORSE,
    TeamDecision,
    arms_of,
    classify,
    decision_tables,
    parse_decisions,
    read_decisions,
    verdict,
)
from turnbench.render.comparisons import render_decisions_md

REPO = Path(__file__).resolve().parents[3]
N = 40


def _doc(corpus: str, arm: str, values: Sequence[float], *, generated: bool = False,
         ids: Sequence[str] | None = None) -> dict[str, object]:
    """A metrics.json document of one arm: lookup questions' nDCG@10, the class rows' means theirs."""
    ids = ids or [f"q{n:03d}" for n in range(len(values))]
    per_query = [{"query_id": q, "class": "lookup", "values": {"nDCG@10": v}} for q, v in zip(ids, values,
                                                                                            strict=True)]
    mean = round(sum(values) / len(values), 6)
    return {"provenance": {"corpus": {"id": corpus, "producer": "turnbench.generator" if generated else "imported"},
                           "arm": {"name": arm}},
            "scope": {"oracle": False},
            "retrieval": {"rows": [{"class": "lookup", "means": {"nDCG@10": mean}},
                                   {"class": "all", "means": {"nDCG@10": mean}}], "per_query": per_query}}


def _flat(v: float) -> list[float]:
    return [v] * N


def _noisy(v: float, spread: float, phase: int = 1) -> list[float]:
    return [v + spread if (i // phase) % 2 else v - spread for i in range(N)]


def _ids(values: Sequence[float]) -> dict[str, float]:
    return {f"q{n:03d}": v for n, v in enumerate(values)}


def test_verdicts_by_hand_zero_width_intervals_and_ties() -> None:
    # every question gains 0.1: every resample's mean is 0.1, the interval [0.1, 0.1] lies above zero
    v = verdict(_ids(_flat(0.4)), _ids(_flat(0.5)), "gain")
    assert (v.verdict, v.delta, v.interval, v.relative) == (BETTER, 0.1, (0.1, 0.1), 0.25)
    assert v.control_mean == 0.4 and v.treatment_mean == 0.5 and v.queries == N
    # no question moves: an interval of zero width at zero holds zero -> no measurable difference
    tie = verdict(_ids(_flat(0.3)), _ids(_flat(0.3)), "tie")
    assert (tie.verdict, tie.delta, tie.interval) == (NONE, 0.0, (0.0, 0.0))
    loss = verdict(_ids(_flat(0.2)), _ids(_flat(0.15)), "loss")
    assert loss.verdict == WORSE and loss.interval == (-0.05, -0.05) and loss.relative == -0.25
    # a control at 0 has no relative difference
    assert verdict(_ids(_flat(0.0)), _ids(_flat(0.1)), "from-zero").relative is None
    # half the questions +0.3, half -0.3: the mean is 0, the interval wide around it
    noise = verdict(_ids(_flat(0.5)), _ids(_noisy(0.5, 0.3)), "noise")
    assert noise.verdict == NONE and noise.delta == 0.0 and noise.interval[0] < 0 < noise.interval[1]
    # the interval is seeded by the decision's name: the same every time
    assert verdict(_ids(_flat(0.5)), _ids(_noisy(0.5, 0.3)), "noise") == noise


def test_classification_of_every_pair_of_verdicts() -> None:
    table = {(BETTER, BETTER): AGREE, (WORSE, WORSE): AGREE, (NONE, NONE): AGREE,
             (BETTER, WORSE): OPPOSITE, (WORSE, BETTER): OPPOSITE,
             (BETTER, NONE): SYNTHETIC_ONLY, (WORSE, NONE): SYNTHETIC_ONLY,
             (NONE, BETTER): REAL_ONLY, (NONE, WORSE): REAL_ONLY}
    for (s, r), want in table.items():
        assert classify(s, r) == want, (s, r)


# control c, treatment t: on the synthetic corpus and on the real one
CASES = {
    "both-better": ((0.4, 0.5), (0.1, 0.12), AGREE),
    "both-none": ((0.4, 0.4), (0.1, 0.1), AGREE),
    "opposite": ((0.4, 0.5), (0.2, 0.1), OPPOSITE),
    "syn-only": ((0.4, 0.3), (0.1, 0.1), SYNTHETIC_ONLY),
    "real-only-material": ((0.4, 0.4), (0.5, 0.51), REAL_ONLY),  # |Δ| = 0.01 exactly: counts
    "real-only-small": ((0.4, 0.4), (0.5, 0.491), REAL_ONLY),  # |Δ| = 0.009: does not
}


def _corpora() -> list[dict[str, object]]:
    docs = []
    for name, ((sc, st), (rc, rt), _) in CASES.items():
        docs += [_doc("syn", f"{name}-c", _flat(sc), generated=True), _doc("syn", f"{name}-t", _flat(st),
                                                                             generated=True),
                 _doc("real", f"{name}-c", _flat(rc)), _doc("real", f"{name}-t", _flat(rt))]
    return docs


DECISIONS = tuple(TeamDecision(n, f"asks {n}?", f"{n}-c", f"{n}-t") for n in CASES)


def test_a_table_classifies_and_counts_each_decision() -> None:
    (t,) = decision_tables([rec(d) for d in _corpora()], DECISIONS, resamples=200)
    assert (t.synthetic, t.real) == ("syn", "real")
    assert {r.decision.name: r.agreement for r in t.rows} == {n: c for n, (_, _, c) in CASES.items()}
    assert [r.decision.name for r in t.rows if r.material] == ["real-only-material"]
    assert t.counts() == {AGREE: 2, OPPOSITE: 1, SYNTHETIC_ONLY: 1, REAL_ONLY: 2, "real-only material": 1}
    row = next(r for r in t.rows if r.decision.name == "opposite")
    assert (row.synthetic.verdict, row.real.verdict, row.real.delta, row.real.relative) == (BETTER, WORSE, -0.1, -0.5)
    doc = json.loads(json.dumps(t.to_json()))
    assert doc["counts"]["opposite"] == 1 and doc["decisions"][4]["material"] is True
    md = render_decisions_md(t, resamples=200)
    assert "agree 2 · opposite 1 · synthetic-only 1 · real-only 2 (|Δ| ≥ 0.01 on the real corpus: 1)" in md
    assert "| opposite | opposite-c → opposite-t | **better** +0.1000 [+0.1000, +0.1000] (+25.0%) | **worse** " \
           "-0.1000 [-0.1000, -0.1000] (-50.0%) | opposite |" in md
    assert "real-only (|Δ| ≥ 0.01)" in md and "- `both-none`: asks both-none?" in md
    # a decision's verdict does not depend on which other decisions are asked, nor on their order
    (alone,) = decision_tables([rec(d) for d in _corpora()], DECISIONS[2:3], resamples=200)
    assert alone.rows[0] == t.rows[2]


def test_one_table_per_real_corpus_and_the_synthetic_one_named() -> None:
    docs = _corpora() + [_doc("other", d["provenance"]["arm"]["name"], _flat(0.3))  # type: ignore[index]
                         for d in _corpora() if d["provenance"]["corpus"]["id"] == "real"]  # type: ignore[index]
    tables = decision_tables([rec(d) for d in docs], DECISIONS, resamples=200)
    assert [t.real for t in tables] == ["other", "real"]
    # no generated corpus among the results: the synthetic one must be named
    plain = [json.loads(json.dumps(d).replace("turnbench.generator", "imported")) for d in _corpora()]
    with pytest.raises(BadInput, match=r"no single generated corpus .*--synthetic ID"):
        decision_tables([rec(d) for d in plain], DECISIONS)
    (t,) = decision_tables([rec(d) for d in plain], DECISIONS, synthetic="syn", resamples=200)
    assert t.real == "real"
    with pytest.raises(BadInput, match="no results on the synthetic corpus nope"):
        decision_tables([rec(d) for d in plain], DECISIONS, synthetic="nope")


def test_refusals_a_missing_arm_and_sides_on_different_questions() -> None:
    missing = [d for d in _corpora() if d["provenance"] != {"corpus": {"id": "real", "producer": "imported"},
                                                          "arm": {"name": "opposite-t"}}]
    with pytest.raises(BadInput, match=r"^decision opposite: no results of arm opposite-t on corpus real$"):
        decision_tables([rec(d) for d in missing], DECISIONS)
    uneven = [d for d in _corpora() if d["provenance"]["arm"]["name"] != "syn-only-t"]  # type: ignore[index]
    uneven.append(_doc("syn", "syn-only-t", _flat(0.3)[:-1] + [0.3], generated=True,
                       ids=[f"q{n:03d}" for n in range(N - 1)] + ["elsewhere"]))
    with pytest.raises(BadInput, match=r"decision syn-only: on corpus syn, syn-only-c scored 40 questions and "
                                       r"syn-only-t 40, not the same ones \(first apart: elsewhere\)"):
        decision_tables([rec(d) for d in uneven], DECISIONS)
    only = [d for d in _corpora() if d["provenance"]["corpus"]["id"] == "syn"]  # type: ignore[index]
    with pytest.raises(BadInput, match="results of syn only"):
        decision_tables([rec(d) for d in only], DECISIONS)
    with pytest.raises(BadInput, match="at least 100 resamples"):
        decision_tables([rec(d) for d in _corpora()], DECISIONS, resamples=10)


@pytest.mark.parametrize(("text", "message"), [
    (b"", "no \\[\\[decision\\]\\] tables"),
    (b"[[decision]\n", "not a UTF-8 TOML decisions file"),
    (b"\xff", "not a UTF-8 TOML decisions file"),
    (b'title = "x"\n', "unknown key 'title'"),
    (b"decision = [1]\n", "decision 1: not a table"),
    (b"decision = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nested too deeply"),
    (b'[[decision]]\nname = "a"\nasks = "?"\ncontrol = "x"\n', "decision 1: missing 'treatment'"),
    (b'[[decision]]\nname = "a"\nasks = "?"\ncontrol = "x"\ntreatment = "y"\nweight = 1\n',
     "decision 1: unknown key 'weight'"),
    (b'[[decision]]\nname = "a"\nasks = "?"\ncontrol = "x"\ntreatment = 3\n', "'treatment' must be a non-empty"),
    (b'[[decision]]\nname = "a"\nasks = "?"\ncontrol = "x"\ntreatment = "x"\n', "the same arm, x"),
    (b'[[decision]]\nname = "a"\nasks = "?"\ncontrol = "x"\ntreatment = "y"\n'
     b'[[decision]]\nname = "a"\nasks = "?"\ncontrol = "y"\ntreatment = "z"\n', "decision 2: the name 'a' is given"),
])
def test_a_malformed_decisions_file_is_refused_in_one_line(text: bytes, message: str) -> None:
    with pytest.raises(BadInput, match=message) as caught:
        parse_decisions(text, "d.toml")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("d.toml: ")


# -- the shipped decisions (arms/decisions/) -----------------------------------------------------------------------

DIR = REPO / "arms" / "decisions"


def _arm_file(name: str) -> Path:
    found = [p for p in (DIR / f"{name}.toml", REPO / "arms" / "agreement" / f"{name}.toml",
                         REPO / "turnbench" / "engines" / "builtin_arms" / f"{name}.toml") if p.is_file()]
    assert len(found) == 1, name
    return found[0]


def test_the_shipped_decisions_are_many_every_arm_a_file_named_as_its_arm() -> None:
    from turnbench.engines.arms import from_file

    decisions = read_decisions(DIR / "decisions.toml")
    assert len(decisions) >= 20
    arms = {n: from_file(_arm_file(n)) for n in arms_of(decisions)}
    assert all(a.name == n for n, a in arms.items())
    # every arm file in arms/decisions/ is one a decision names
    assert {p.stem for p in DIR.glob("*.toml")} - {"decisions"} <= set(arms)
    text = {n: json.dumps(a.config()) for n, a in arms.items()}
    kinds = {
        "lexical vs dense": any(d.control == "lex-bm25" and "knn_score" in text[d.treatment] for d in decisions),
        "fusion method": any("score-ranker" in text[d.control] and "normalization" in text[d.treatment]
                             for d in decisions),
        "rerank": any("rerank" in text[d.treatment] for d in decisions),
        "ef_search where it decides (k 10)": any('\\"ef_search\\": 16' in text[d.control] and d.control.endswith(
            "ef16") and arms[d.control].depth == 10 for d in decisions),
        "operator and": any('\\"operator\\": \\"and\\"' in text[d.treatment] for d in decisions),
        "minimum_should_match": any("minimum_should_match" in text[d.treatment] for d in decisions),
        "fields": any("content.exact" in text[d.treatment] for d in decisions),
    }
    assert all(kinds.values()), kinds


def test_the_decision_arms_stay_confined() -> None:
    from tests.unit.harness.test_agreement import ALLOWED_QUERIES, _queries_in
    from turnbench.engines.arms import from_file

    for f in sorted(DIR.glob("*.toml")):
        if f.name == "decisions.toml":
            continue
        arm = from_file(f)
        body = arm.request(query_text="q", filters=[], depth=arm.depth, query_vector=[0.0] if arm.encoder else None)
        found: set[str] = set()
        _queries_in(body, found)
        assert found <= ALLOWED_QUERIES, (f.name, found - ALLOWED_QUERIES)
        assert '"script"' not in json.dumps(body) or '"knn_score"' in json.dumps(body), f.name

