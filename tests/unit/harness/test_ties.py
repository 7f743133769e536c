"""Ties in the raw run: counted per cut-off, and trec_eval's own tie rule re-scored against rule 5."""

from __future__ import annotations

import pytest

from tests.unit.harness.helpers import RP, score, small_run
from turnbench.harness import ties as T
from turnbench.results.tables import ties_of


def test_tie_depth_and_trec_eval_order():
    scores = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    assert T.tie_depth([3.0, 2.0, 2.0, 1.0]) == 1  # the 2nd and 3rd share a score
    assert T.tie_depth([3.0, 1.0]) is None
    assert T.trec_eval_order(list(scores), list(scores.values())) == ["a", "c", "b", "d"]  # ties: id descending


def test_the_small_run_reports_its_one_tie_and_what_trec_eval_would_have_made_of_it(small_corpus):
    corpus, passages = small_corpus
    block = score(corpus, passages, small_run()).document["retrieval"]["ties"]
    # q2 ranks three passages all at score 1: a tie inside its top 5, 10 and 20
    assert block["queries_with_ties_in_top"] == {"5": 1, "10": 1, "20": 1}
    assert block["queries_with_ties_anywhere"] == 1 and block["queries_judged"] == 3
    # rule 5 puts m1:00000 (not gold) first; trec_eval (id descending) would put m2:00000 (gold) first
    t = block["trec_eval_tie_rule"]
    assert t["changed_any_metric"] and t["queries_changed"] == 1
    assert t["largest_mean_shift"]["class"] in ("multi_file", "all") and t["largest_mean_shift"]["shift"] > 0
    assert "ties: of 3 judged queries, 1 hold a raw-score tie (1 in top 5, 1 in top 10, 1 in top 20)" in \
        T.note(ties_of(block))


def test_a_run_without_ties_says_nothing_changed(small_corpus):
    corpus, passages = small_corpus
    run = [RP("q1", "m1:00001", 3), RP("q1", "m1:00000", 2), RP("q2", "m2:00000", 3), RP("q2", "m1:00002", 2)]
    block = score(corpus, passages, run).document["retrieval"]["ties"]
    assert block["queries_with_ties_anywhere"] == 0 and not block["trec_eval_tie_rule"]["changed_any_metric"]
    assert "trec_eval's tie rule would give every metric the same value" in T.note(ties_of(block))


def test_tied_queries_are_rescored_a_block_at_a_time_and_the_block_is_the_same(monkeypatch):
    # five queries, each tied at the top: rule 5 put "a" first, trec_eval's rule (id descending) puts "b" first
    run = {f"q{i}": ["a", "b"] for i in range(5)}
    best = {qid: [1.0, 1.0] for qid in run}
    values = {qid: {"MRR": 1.0 if i % 2 else 0.5} for i, qid in enumerate(run)}
    classes = {qid: "lookup" for qid in run}
    sizes: list[int] = []

    def rescore(other):
        sizes.append(len(other))
        return {qid: {"MRR": 1.0 if order[0] == "b" else 0.0} for qid, order in other.items()}

    def block():
        return T.report(run, best, sorted(run), rescore, values, classes, {qid: {"b"} for qid in run},
                        {"a": "m1", "b": "m1"})

    whole = block()
    assert sizes == [5]
    monkeypatch.setattr(T, "CHUNK", 2)
    sizes.clear()
    assert block() == whole and sizes == [2, 2, 1]
    # q0, q2, q4 move from 0.5 to 1.0 under trec_eval's rule: a mean shift of 1.5 / 5
    t = whole.to_json()["trec_eval_tie_rule"]
    assert (t["queries_changed"], t["values_changed"]) == (3, 3) == (whole.trec_eval.queries_changed,
                                                                     whole.trec_eval.values_changed)
    assert t["largest_mean_shift"] == {"class": "all", "measure": "MRR", "shift": 0.3}
    assert ties_of(whole.to_json()) == whole  # the tree written is the record read back


def test_trec_eval_order_of_a_falling_list_and_of_any_other_is_the_sort_by_score_then_id_descending():
    """Sorting only the runs of equal scores of a list by falling score is the whole sort; any other list is sorted."""
    import random

    rng = random.Random(7)
    for n in (0, 1, 2, 5, 40, 100):
        for _ in range(200):
            ids = [f"m{rng.randrange(50):02d}:{i:05d}" for i in rng.sample(range(1000), n)]
            scores = [float(rng.choice((-0.0, 0.0, 1.0, 1.5, 2.0, 7.25))) for _ in ids]
            falling = sorted(scores, reverse=True)
            for given in (falling, scores):
                want = [d for _, d in sorted(zip(given, ids, strict=True), reverse=True)]
                assert T.trec_eval_order(ids, given) == want


def _graded_case(seed: int, meetings: int = 6, longest: int = 30, grades: tuple[int, ...] = (0, 1, 2),
                 scores: tuple[int, ...] = (1, 2, 3)):
    """A run with many ties over a small inventory, random passage and meeting grades, and an exact re-scorer: a
    passage value, a reciprocal rank and a meeting value, each a function of the grades down its list (as every
    measure is)."""
    import random

    from turnbench.canonical import q6
    from turnbench.passages import Passage
    from turnbench.rankings import Placement, RankedPassage, normalised_order

    rng = random.Random(seed)
    inventory = [Passage(f"m{m:02d}:{i:05d}", f"m{m:02d}", "s", float(i), i + 1.0, i) for m in range(meetings)
                 for i in range(8)]
    meeting_of = {p.id: p.meeting for p in inventory}
    queries = [f"q{k:03d}" for k in range(300)]
    entries = [RankedPassage(qid, p.id, rank, float(rng.choice(scores)))
               for qid in queries for rank, p in enumerate(rng.sample(inventory, rng.randint(2, longest)), 1)]
    placed = Placement.of(reversed(inventory))
    positions: dict = {}
    best: dict = {}
    run = normalised_order(entries, {p.id: p for p in inventory}, best, placed=placed, positions_out=positions)
    p_qrels = {qid: {p.id: rng.choice(grades) for p in rng.sample(inventory, rng.randint(0, 30))} for qid in queries}
    m_qrels = {qid: {f"m{m:02d}": rng.choice((1, 2)) for m in rng.sample(range(meetings), rng.randint(0, 3))}
               for qid in queries}

    def values_of(orders):
        out = {}
        for qid, ids in orders.items():
            grade = p_qrels[qid]
            meetings = list(dict.fromkeys(meeting_of[d] for d in ids))[:T.MEETING_DEPTH]
            first = next((i for i, d in enumerate(ids) if grade.get(d, 0) > 0), None)
            out[qid] = {"p": sum(grade.get(d, 0) / (i + 1) for i, d in enumerate(ids[:T.PASSAGE_DEPTH])),
                        "rr": 0.0 if first is None else 1 / (first + 1),
                        "m": sum(m_qrels[qid].get(m, 0) / (i + 1) for i, m in enumerate(meetings))}
        return out

    values = {qid: {k: q6(v) for k, v in vs.items()} for qid, vs in values_of(run).items()}
    args = (run, best, sorted(run), values, {qid: "lookup" for qid in run}, p_qrels, meeting_of)
    return args, values_of, T.Grades(p_qrels, m_qrels, placed, positions)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_only_tied_queries_whose_ties_mix_grades_are_ordered_again_and_the_block_is_the_same(seed):
    (run, best, judged, values, classes, p_qrels, meeting_of), values_of, grades = _graded_case(seed)
    sizes: list[int] = []

    def rescore(other):
        sizes.append(len(other))
        return values_of(other)

    every = T.report(run, best, judged, rescore, values, classes, p_qrels, meeting_of)
    all_of_them = sum(sizes)
    sizes.clear()
    assert T.report(run, best, judged, rescore, values, classes, p_qrels, meeting_of, grades) == every
    assert every.trec_eval.values_changed > 0 and sum(sizes) < all_of_them


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_tied_query_whose_first_run_that_mixes_grades_lies_below_what_is_measured_is_not_ordered_again(seed):
    """Long lists over many meetings, graded as scoring grades them (only relevant passages in the qrels): where
    the first run of tied passages that mixes grades starts after the deepest cut-off, the first relevant passage
    and the tenth meeting, nothing measured can move, and the block is the same without ordering it again."""
    case = _graded_case(seed, meetings=40, longest=100, grades=(1, 2), scores=tuple(range(12)))
    (run, best, judged, values, classes, p_qrels, meeting_of), values_of, grades = case
    ordered: list[str] = []

    def rescore(other):
        ordered.extend(other)
        return values_of(other)

    every = T.report(run, best, judged, rescore, values, classes, p_qrels, meeting_of)
    before = set(ordered)
    ordered.clear()
    assert T.report(run, best, judged, rescore, values, classes, p_qrels, meeting_of, grades) == every
    assert every.trec_eval.values_changed > 0
    settled = T.first_mixed(run, best, judged, grades)
    # re-scored before, where the lists part; not now: their grades part only below everything measured
    deep = [qid for qid in before if qid in settled and settled[qid] >= T.PASSAGE_DEPTH
            and not T.reads_beyond(run[qid], settled[qid], p_qrels.get(qid, {}), meeting_of)]
    assert deep and not set(deep) & set(ordered) and set(ordered) < before


@pytest.mark.parametrize("seed", [5, 6])
def test_where_the_first_run_that_mixes_grades_starts_is_found_as_a_scan_of_each_list_finds_it(seed):
    """first_mixed against the definition, query by query: the start of the first run of equal scores holding two
    neighbours of different passage or meeting grades; 0 where the scores rise anywhere."""
    (run, best, *_), _, grades = _graded_case(seed)
    qids = sorted(run)
    bumped = dict(best)
    for qid in qids[::7]:  # some lists not falling
        if len(best[qid]) > 3:
            bumped[qid] = [*best[qid][:2], best[qid][0] + 1.0, *best[qid][3:]]

    def scanned(qid):
        ids, s = run[qid], bumped[qid]
        grade, meeting_grade = grades.passages.get(qid, {}), grades.meetings.get(qid, {})
        of = [(grade.get(d), meeting_grade.get(grades.placed.order[r].meeting)) for d, r in
              zip(ids, grades.positions[qid], strict=True)]
        if any(b > a for a, b in zip(s, s[1:], strict=False)):
            return 0
        start = 0
        for i in range(1, len(ids)):
            if s[i] != s[i - 1]:
                start = i
            elif of[i] != of[i - 1]:
                return start
        return None

    want = {qid: at for qid in qids if (at := scanned(qid)) is not None}
    assert T.first_mixed(run, bumped, qids, grades) == want and 0 < len(want) < len(qids)
    assert any(at > 0 for at in want.values()) and list(T.first_mixed(run, bumped, qids, grades)) == list(want)


def test_a_query_whose_scores_do_not_fall_is_always_ordered_again():
    (run, best, *_), _, grades = _graded_case(4)
    qid = next(q for q in sorted(run) if len(run[q]) > 2)
    rising = {qid: sorted(best[qid])}  # trec_eval sorts such a list whole, whatever its grades
    no_grades = T.Grades({}, {}, grades.placed, grades.positions)
    assert T.first_mixed(run, rising, [qid], no_grades) == {qid: 0}
    assert T.first_mixed(run, {qid: [1.0] * len(run[qid])}, [qid], no_grades) == {}  # tied, but one grade throughout


def test_the_note_lists_the_cut_offs_in_order_even_from_a_block_read_back_from_json():
    import json

    block = {"queries_judged": 3, "queries_with_ties_anywhere": 2, "queries_with_ties_in_top": {"5": 1, "10": 2,
                                                                                                "20": 2},
             "trec_eval_tie_rule": {"changed_any_metric": False}}
    read_back = json.loads(json.dumps(block, sort_keys=True))
    assert list(read_back["queries_with_ties_in_top"]) == ["10", "20", "5"]
    note = T.note(ties_of(block))
    assert T.note(ties_of(read_back)) == note and "(1 in top 5, 2 in top 10, 2 in top 20)" in note
