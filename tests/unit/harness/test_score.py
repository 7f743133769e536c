"""score_run + results files: counting every query, id conventions, byte-identical claims, the score CLI."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from tests.unit.harness.helpers import PROV, RP, meeting, query, score, small_run, turn, turn_passages, write_corpus
from turnbench.corpus import open_corpus
from turnbench.errors import BadInput, UnjudgedPassage
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.score import UNKNOWN, EngineSide
from turnbench.passages import Passage
from turnbench.render.markdown import render_metrics_md

HERE = Path(__file__).parent








def rows_by_class(results):
    return {r["class"]: r for r in results.document["retrieval"]["rows"]}


def test_small_corpus_counts_every_query_and_shows_meeting_only_columns_as_dashes(small_corpus):
    corpus, passages = small_corpus
    res = score(corpus, passages, small_run())
    counts = res.document["retrieval"]["counts"]
    assert counts["queries_ranked"] == 4 and counts["queries_judged"] == 3
    assert counts["queries_dropped_unjudgeable"] == 1 and counts["queries_unanswered"] == 0
    assert counts["judged_passages_by_grade"] == {"2": 2, "3": 1}
    assert res.document["retrieval"]["dropped_unjudgeable"] == ["q4"]
    rows = rows_by_class(res)
    assert rows["lookup"]["dropped_unjudgeable"] == 1 and rows["lookup"]["queries"] == 1
    # q2: normalised order is m1:00000 (non-gold), m1:00002, m2:00000 (meeting, then index break the tie)
    # DCG@10 = 0 + 2/log2(3) + 2/log2(4) = 2.261860; IDCG = 2 + 2/log2(3) = 3.261860 -> 0.693426
    assert rows["multi_file"]["means"]["nDCG@10"] == 0.693426
    assert rows["multi_file"]["means"]["MRR"] == 0.5
    # q3 meeting level: gold {m2, m3}, run [m3] -> nDCG@10 = 1 / (1 + 1/log2(3)) = 0.613147, recall 0.5
    assert rows["summarize"]["means"]["meeting:nDCG@10"] == 0.613147
    assert rows["summarize"]["means"]["meeting:R@10"] == 0.5
    assert rows["summarize"]["means"]["nDCG@10"] is None
    # all: passage columns over the two passage-level queries, meeting columns over all three
    assert rows["all"]["means"]["nDCG@10"] == round((1.0 + 0.693426) / 2, 6)
    assert rows["all"]["passage_level_queries"] == 2 and rows["all"]["queries"] == 3
    md = render_metrics_md(res.results)
    assert "| tiny | summarize | 1 | 0 | 0 | — | — | — | — | — | — | — | 0.6131 | 0.5000 |" in md
    assert "| tiny | multi_file | 1 | 0 | 0 |" in md


def test_a_mean_over_what_was_returned_would_read_one_where_the_truth_is_half(tmp_path):
    m = meeting("m", [turn(0, "ann", 0, 10, 10), turn(1, "ann", 10, 20, 10)])
    corpus = open_corpus(write_corpus(tmp_path / "c", [m], [query("a", "lookup", {"m": [(0, 0)]}),
                                                             query("b", "lookup", {"m": [(1, 1)]})]))
    res = score(corpus, turn_passages([m]), [RP("a", "m:00000", 1)])  # b is never answered
    returned = [r for r in res.document["retrieval"]["per_query"] if r["answered"]]
    assert sum(r["values"]["nDCG@10"] for r in returned) / len(returned) == 1.0
    row = rows_by_class(res)["lookup"]
    assert row["means"]["nDCG@10"] == 0.5 and row["unanswered"] == 1 and row["queries"] == 2
    assert "| tiny | lookup | 2 | 1 | 0 | 0.5000 | 0.5000 |" in render_metrics_md(res.results)


def test_swapping_passage_id_conventions_leaves_every_metric_unchanged(tmp_path, small_corpus):
    corpus, passages = small_corpus
    # a second convention whose ids sort in the opposite order: "zz-..." for early passages
    rename = {p.id: f"{chr(ord('z') - p.index)}{chr(ord('z') - int(p.meeting[1:]))}-{p.meeting}" for p in passages}
    swapped = [Passage(rename[p.id], p.meeting, p.speaker, p.start, p.end, p.index, p.kind) for p in passages]
    run = small_run()
    swapped_run = [RP(e.query_id, rename[e.passage_id], e.score) for e in run]
    a, b = score(corpus, passages, run), score(corpus, swapped, swapped_run)
    ties_a, ties_b = a.document["retrieval"]["ties"], b.document["retrieval"]["ties"]
    ra, rb = a.document["retrieval"], b.document["retrieval"]
    assert {k: v for k, v in ra.items() if k != "ties"} == {k: v for k, v in rb.items() if k != "ties"}
    # the ties report says so: the same tie under both names, and trec_eval's own rule would read q2
    # differently under one of them
    assert ties_a["queries_with_ties_in_top"] == ties_b["queries_with_ties_in_top"] == {"5": 1, "10": 1, "20": 1}
    assert [ties_a["trec_eval_tie_rule"]["changed_any_metric"], ties_b["trec_eval_tie_rule"]["changed_any_metric"]
            ].count(True) == 1
    # ... which is not luck: fed raw to trec_eval, the swap moves q2's tie
    from turnbench.harness.metrics import Measure, evaluate

    qrels = {p: g for p, g in {"m1:00002": 2, "m2:00000": 2}.items()}
    raw = {"q2": [(e.passage_id, e.score) for e in run if e.query_id == "q2"]}
    raw_swapped = {"q2": [(rename[d], s) for d, s in raw["q2"]]}
    n10 = Measure("nDCG", 10)
    v1 = evaluate({"q2": qrels}, raw, [n10])["q2"][n10]
    v2 = evaluate({"q2": {rename[d]: g for d, g in qrels.items()}}, raw_swapped, [n10])["q2"][n10]
    assert v1 != v2


def test_refusals_and_bad_input(small_corpus):
    corpus, passages = small_corpus
    with pytest.raises(UnjudgedPassage):
        score(corpus, passages, [RP("q1", "nowhere:1", 1)])
    with pytest.raises(BadInput, match="not in corpus"):
        score(corpus, passages, [RP("q-unknown", "m1:00000", 1)])
    with pytest.raises(TypeError):
        EngineSide(arm=UNKNOWN)  # type: ignore[call-arg]  # no engine fact has a default: UNKNOWN is said, not implied
    with pytest.raises(BadInput, match="scope"):
        score(corpus, passages, [], scope="everything")




















def test_a_limited_meeting_order_is_the_first_meetings_of_the_whole_one():
    from turnbench.harness.ties import meeting_order

    of = {"a1": "A", "a2": "A", "b1": "B", "a3": "A", "c1": "C", "d1": "D"}
    pids = ["a1", "a2", "b1", "a3", "c1", "d1"]
    assert meeting_order(pids, of) == ["A", "B", "C", "D"]
    assert meeting_order(pids, of, 2) == ["A", "B"] and meeting_order(pids, of, 9) == ["A", "B", "C", "D"]
    assert meeting_order(["a1", "a2"], of, 1) == ["A"] and meeting_order([], of, 3) == []


def test_a_tied_query_whose_meetings_do_not_move_is_rescored_on_passages_alone():
    """The tie report's re-scoring: another order with the same first ten meetings can move no meeting value, so only
    its passage values come back; one whose meetings move is scored at both levels."""
    from turnbench.harness.metrics import Scorer
    from turnbench.harness.ties import Rescorer

    of = {f"{m}{i}": m for m in "ABC" for i in range(2)}
    # q1: rule 5 A0 A1 B0, the other order A1 A0 B0 (meetings A, B both times); q2: rule 5 A0 B0 C0, the other C0 B0 A0
    rescore = Rescorer({"q1": {"A1": 2}, "q2": {"C0": 1}}, {"q1": {"A": 1}, "q2": {"C": 1}}, Scorer(3), of,
                        {"q1": ["A", "B"], "q2": ["A", "B", "C"]})
    got = rescore({"q1": ["A1", "A0", "B0"], "q2": ["C0", "B0", "A0"]})
    assert set(got["q1"]) == {"nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "MRR"}
    assert got["q1"]["MRR"] == 1.0
    assert got["q2"]["meeting:R@10"] == 1.0 and got["q2"]["meeting:nDCG@10"] == 1.0 and got["q2"]["MRR"] == 1.0


class _OnePass:
    """A corpus read as one run of meetings (no ``halves``): how ``score_run`` judges a corpus of one part."""

    def __init__(self, corpus):
        self._corpus = corpus

    def queries(self):
        return self._corpus.queries()

    def iter_meetings(self):
        return self._corpus.iter_meetings()

    def provenance(self):
        return self._corpus.provenance()


def test_a_corpus_of_several_parts_judged_in_two_processes_scores_byte_for_byte_as_one_pass(tmp_path):
    import random

    from turnbench.harness.exports import content_bytes
    from turnbench.results.directory import write_results

    rng = random.Random(3)
    ms = [meeting(f"m{k:03d}", [turn(i, ("ann", "bob", "cy")[i % 3], 5 * i, 5 * i + 4, rng.randint(2, 9))
                                for i in range(6)]) for k in range(120)]  # three part files
    qs = []
    for n in range(40):
        cls = ("lookup", "multi_file", "summarize")[n % 3]
        gold = {f"m{k:03d}": [(a, a + 1)] for k in rng.sample(range(120), 1 + n % 3) for a in [rng.randrange(4)]}
        qs.append(query(f"q{n:02d}", cls, gold, level="meeting" if cls == "summarize" else "turn"))
    corpus = open_corpus(write_corpus(tmp_path / "c", ms, qs))
    assert corpus.halves() is not None and len(corpus.meeting_files) == 3
    passages = turn_passages(ms)
    run = [RP(q.id, p.id, rng.random()) for q in qs for p in rng.sample(passages, 30)]
    run += [RP(q.id, f"{m}:{a:05d}", 2.0) for q in qs for m, rs in q.gold_turns.items() for a, _ in rs]
    # the run handed over as a function (what turnbench score does: it is still being read when judging starts);
    # and every part run here, as a library caller's score_run runs them: the same bytes
    both = [score(c, passages, run, forked=True) for c in (corpus, _OnePass(corpus))] + [
        score(corpus, passages, lambda: run, forked=True), score(corpus, passages, run)]
    assert both[0].document["retrieval"]["counts"]["judged_passages"] > 0
    for k, res in enumerate(both):
        write_results(tmp_path / f"r{k}", res, {})
    for name in sorted(p.name for p in (tmp_path / "r0").iterdir()):
        assert len({(tmp_path / f"r{k}" / name).read_bytes() for k in range(len(both))}) == 1, name

    def unreadable():
        raise BadInput("run.trec: line 3 has 5 columns, a TREC run has 6")

    # a run that cannot be read, found once judging has started: its refusal, and no child left behind
    with pytest.raises(BadInput, match="line 3 has 5 columns"):
        score(corpus, passages, unreadable, forked=True)
    assert not [c for c in multiprocessing.active_children() if c.name == "turnbench-background"]
    assert content_bytes(both[0].extra_files["bindings.jsonl"]) == content_bytes(both[1].extra_files["bindings.jsonl"])


def test_the_page_source_gives_of_some_targets_exactly_the_rows_bindings_jsonl_holds_for_them(small_corpus):
    from turnbench.harness import bindings as B
    from turnbench.harness.exports import content_bytes
    from turnbench.pipeline.executor import score as executed

    corpus, passages = small_corpus
    res, source = executed(corpus, passages, small_run(), policy=RelevancePolicy(), engine=PROV)
    written = B.parse(content_bytes(res.extra_files[B.BINDINGS]), B.BINDINGS)
    assert list(source.bindings(None, None)) == written and written
    some = source.only({"q2"})
    shown = set(some.run["q2"])
    assert shown and set(some.run) == {"q2"} and set(some.qrels) == {"q2"}
    want = [r for r in written if (r.id == "q2" if r.target == B.QUERY else r.id in shown)]
    assert list(some.bindings(None, None)) == want == list(some.bindings({"q2"}, shown))
    assert list(some.bindings({"q9"}, set())) == []  # of a target it holds no row for, none


def test_the_inventory_spooled_by_a_child_is_the_inventory_made_without_a_spool_or_a_full_one(tmp_path, small_corpus,
                                                                                          monkeypatch):
    from turnbench import canonical
    from turnbench.harness import exports as X
    from turnbench.passages import inventory_sha256, write_passages

    corpus, passages = small_corpus
    spooled = score(corpus, list(reversed(passages)), small_run())
    assert isinstance(spooled.extra_files[X.PASSAGES], X.Lazy)
    monkeypatch.setattr(X.Spool, "open", classmethod(lambda cls: None))  # no temporary file can be made
    made = score(corpus, list(reversed(passages)), small_run())
    data = X.content_bytes(spooled.extra_files[X.PASSAGES])
    assert data == X.content_bytes(made.extra_files[X.PASSAGES]) and data.count(b"\n") == len(passages)
    assert bytes(spooled.extra_files[X.PASSAGES]) == data  # read again: the spool is read by offset, not consumed
    sha = write_passages(tmp_path / "p.jsonl", passages)
    assert canonical.sha256_bytes(data) == sha == inventory_sha256(passages)
    def full(passages, out):
        out.write(b"{")  # a part written, then the temporary directory is full
        raise OSError(28, "No space left on device")

    monkeypatch.undo()  # a spool again, and writing to it fails
    monkeypatch.setattr(X, "inventory_to", full)
    unspooled = score(corpus, list(reversed(passages)), small_run())
    assert X.content_bytes(unspooled.extra_files[X.PASSAGES]) == data
    for res in (spooled, made, unspooled):
        assert res.document["provenance"]["inputs"]["passages"]["sha256"] == sha


def test_a_spool_shorter_than_its_content_says_is_refused_not_written_short():
    from turnbench.errors import ResultsIntegrityError
    from turnbench.harness import exports as X

    spool = X.Spool()
    spool.file.write(b"x" * (X.Spool.BLOCK + 10))
    spool.file.flush()
    assert X.content_bytes(spool.content(X.Spool.BLOCK + 10)) == b"x" * (X.Spool.BLOCK + 10)
    with pytest.raises(ResultsIntegrityError, match="shorter"):
        X.content_bytes(spool.content(X.Spool.BLOCK + 11))


def test_the_strict_block_taking_graded_values_is_the_block_evaluated_whole():
    """A query whose strict qrels are its graded ones (no grade-1 passage) takes its graded values; the others are
    evaluated; the block is the one evaluated query by query, and only the others reach the evaluator."""
    import random

    from turnbench.harness import metrics as M
    from turnbench.harness import strict as STRICT
    from turnbench.harness.metrics import Scorer
    from turnbench.results.tables import QueryValues

    rng = random.Random(7)
    docs = [f"d{i}" for i in range(40)]
    run = {f"q{k}": rng.sample(docs, 25) for k in range(60)}
    qrels = {q: {d: rng.choice((1, 2, 3)) if k % 3 else rng.choice((2, 3)) for d in rng.sample(docs, rng.randint(1, 6))}
             for k, q in enumerate(run)}
    heads = [QueryValues(q, "lookup", "plain", "turn", True, {}, "c", "R1") for q in sorted(run)]
    asked: list[set[str]] = []

    def evaluate(given):
        asked.append(set(given))
        return M.evaluate_lists(given, run, Scorer(25), M.PASSAGE_MEASURES)

    graded = M.evaluate_lists(qrels, run, Scorer(25), M.PASSAGE_MEASURES)
    ranked = [query(q, "lookup", {"m": [(0, 0)]}) for q in sorted(run)]
    whole = STRICT.block_and_qrels("c", ranked, heads, qrels, evaluate)
    taken = STRICT.block_and_qrels("c", ranked, heads, qrels, evaluate, graded)
    assert taken == whole
    without_grade_one = {q for q, d in qrels.items() if 1 not in d.values()}
    assert without_grade_one and asked[1] == set(STRICT.strict_qrels(qrels)) - without_grade_one


@pytest.mark.parametrize("forked", [False, True])
def test_scoring_returns_the_record_its_tree_reads_back_as_answers_included(small_corpus, forked):
    """Scoring builds the results record from its blocks (never by parsing what it wrote); the tree metrics.json is
    written from reads back as the same record, field for field, and so does it with the answers block added."""
    from tests.unit.harness.helpers import QUERIES, SUBMITTED
    from turnbench.harness.answers import answers_block, score_answers
    from turnbench.results.record import from_tree

    corpus, passages = small_corpus
    res = score(corpus, passages, small_run(), forked=forked, measures=["P@5", "meeting:MAP@100"])
    assert res.results.extra is not None and res.results.answers is None
    assert res.results == from_tree(res.document)
    answers = answers_block([score_answers(QUERIES, SUBMITTED, corpus="c", answerer="reference")])
    both = res.with_answers(answers, {"answers.md": b"x"})
    assert both.results.answers == answers and both.results == from_tree(both.document)
    assert "answers" not in res.document and both.extra_files["answers.md"] == b"x"
    with pytest.raises(BadInput, match="already has an 'answers' block"):
        both.with_answers(answers)
