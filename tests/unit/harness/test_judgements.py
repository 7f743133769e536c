"""Hand-worked judgements (docs/design.md §6). Each case writes its arithmetic next to the expected grade."""

from __future__ import annotations

import pytest

from tests.unit.harness.helpers import meeting, query, turn
from turnbench.errors import BadInput, ForeignInventory
from turnbench.harness.held import MeetingTurns
from turnbench.harness.judgements import RelevancePolicy, judge, union_ranges
from turnbench.passages import Passage

POLICY = RelevancePolicy()


def P(pid, mid, speaker, start, end, index=0):
    return Passage(pid, mid, speaker, float(start), float(end), index)


def held(p, m):
    """The (turn, first word, end word) spans a passage holds: here by its times, having neither text nor hash."""
    return MeetingTurns(m).held(p).spans


def grades(queries, meetings, passages, policy=POLICY):
    return {qid: dict(j.passages) for qid, j in judge(queries, meetings, passages, policy).items()}


def test_passage_spanning_two_speakers_overlapping_turns_counts_only_its_own_speaker():
    # ann speaks 0-10 and 10-20; bob talks over her 5-15. ann's passage spans 0-20.
    m = meeting("m", [turn(0, "ann", 0, 10, 10), turn(1, "bob", 5, 15, 10), turn(2, "ann", 10, 20, 10)])
    ann = P("ann", "m", "ann", 0, 20)
    bob = P("bob", "m", "bob", 5, 15, 1)
    # ann covers turns 0 and 2 only: bob's turn overlaps her passage in time but is not her speech
    assert held(ann, m) == ((0, 0, 10), (2, 0, 10))
    got = grades([query("gold_bob", "lookup", {"m": [(1, 1)]}),
                  query("gold_ann0", "lookup", {"m": [(0, 0)]}),
                  query("gold_all", "lookup", {"m": [(0, 2)]})], [m], [ann, bob])
    # gold = bob's turn: ann's passage has coverage 0/20 -> not judged; bob's has 10/10 = 1.0 -> 2.
    # Without the speaker restriction ann would read 10/30 and wrongly earn grade 1.
    assert got["gold_bob"] == {"bob": 2}
    # gold = ann's first turn: 10 / (10 + 10) = 0.5 >= high -> 2; bob's passage covers no gold turn
    assert got["gold_ann0"] == {"ann": 2}
    assert got["gold_all"] == {"ann": 2, "bob": 2}


def test_monologue_split_in_three():
    # carol's monologue: turn 0, 0-30 s, 60 words; then carol again 30-40 s, 30 words (not gold).
    m = meeting("m", [turn(0, "carol", 0, 30, 60), turn(1, "carol", 30, 40, 30)])
    p1, p2, p3 = P("p1", "m", "carol", 0, 10, 0), P("p2", "m", "carol", 10, 20, 1), P("p3", "m", "carol", 20, 40, 2)
    # by their times: p1 holds words 0-20 of turn 0, p2 words 20-40, p3 words 40-60 and all 30 of turn 1
    assert [held(p, m) for p in (p1, p2, p3)] == [((0, 0, 20),), ((0, 20, 40),), ((0, 40, 60), (1, 0, 30))]
    # p1, p2: 20 gold words of 20 -> coverage 1.0 -> 2; p3: 20 of 50 -> 0.4 -> 1
    got = grades([query("q", "lookup", {"m": [(0, 0)]})], [m], [p1, p2, p3])
    assert got["q"] == {"p1": 2, "p2": 2, "p3": 1}
    # turn 0 the answer turn: each third holds 20/60 of it, short of the default answer share 0.5 -> graded by
    # coverage (a sliver of the evidence is not the evidence); with answer=0.3 every third holds enough -> 3
    got = grades([query("q", "lookup", {"m": [(0, 0)]}, {"m": (0,)})], [m], [p1, p2, p3])
    assert got["q"] == {"p1": 2, "p2": 2, "p3": 1}
    got = grades([query("q", "lookup", {"m": [(0, 0)]}, {"m": (0,)})], [m], [p1, p2, p3], RelevancePolicy(answer=0.3))
    assert got["q"] == {"p1": 3, "p2": 3, "p3": 3}


def test_gold_span_clipping_a_passage_edge():
    # erin 0-10, 10-20, 20-30, 10 words each; the passage starts half way through turn 0.
    m = meeting("m", [turn(0, "erin", 0, 10, 10), turn(1, "erin", 10, 20, 10), turn(2, "erin", 20, 30, 10)])
    p = P("p", "m", "erin", 5, 30)
    # held: words 5-10 of turn 0 (its second half), turns 1 and 2 whole; 25 words
    assert held(p, m) == ((0, 5, 10), (1, 0, 10), (2, 0, 10))
    # gold = turn 0 only: 5/25 = 0.2 > low 0.0 -> 1 (a marginal passage, still better than unrelated text)
    assert grades([query("q", "lookup", {"m": [(0, 0)]})], [m], [p])["q"] == {"p": 1}
    # the same 0.2 is not above low = 0.2, so the query has nothing judged
    strict = RelevancePolicy(high=0.5, low=0.2)
    j = judge([query("q", "lookup", {"m": [(0, 0)]})], [m], [p], strict)["q"]
    assert j.passages == {} and not j.judgeable
    # a passage ending exactly where the gold turn starts does not overlap it at all
    before = P("b", "m", "erin", 0, 10)
    assert grades([query("q", "lookup", {"m": [(1, 1)]})], [m], [before])["q"] == {}


def test_adjacent_spans_whose_union_crosses_the_threshold():
    # frank 0-10, 10-20, 20-30, 30-40, 10 words each; the passage covers turns 1, 2 and 3 in full.
    m = meeting("m", [turn(i, "frank", 10 * i, 10 * i + 10, 10) for i in range(4)])
    p = P("p", "m", "frank", 10, 40)
    # each range alone: [0,1] gives turn 1 -> 10/30 = 1/3; [2,2] gives turn 2 -> 1/3; both grade 1
    assert grades([query("q", "lookup", {"m": [(0, 1)]})], [m], [p])["q"] == {"p": 1}
    assert grades([query("q", "lookup", {"m": [(2, 2)]})], [m], [p])["q"] == {"p": 1}
    # unioned: turns {0, 1, 2}; the passage holds 1 and 2 -> 20/30 = 2/3 >= 0.5 -> 2
    assert grades([query("q", "lookup", {"m": [(0, 1), (2, 2)]})], [m], [p])["q"] == {"p": 2}


def test_zero_duration_turn_counts_fully_in_every_passage_containing_its_instant():
    # gina's backchannel at exactly 10.0 s (4 words) between two of her own 10-word turns
    m = meeting("m", [turn(0, "gina", 0, 10, 10), turn(1, "gina", 10, 10, 4), turn(2, "gina", 10, 20, 10)])
    left, right, later = P("l", "m", "gina", 0, 10, 0), P("r", "m", "gina", 10, 20, 1), P("x", "m", "gina", 11, 20, 2)
    assert held(left, m) == ((0, 0, 10), (1, 0, 4))
    assert held(right, m) == ((1, 0, 4), (2, 0, 10))
    assert held(later, m) == ((2, 1, 10),)
    # gold = the instant turn: both neighbours hold it with 4/14 = 0.2857 -> 1; the later passage does not
    assert grades([query("q", "lookup", {"m": [(1, 1)]})], [m], [left, right, later])["q"] == {"l": 1, "r": 1}


def test_binary_policy_collapses_grades_and_strings_round_trip():
    m = meeting("m", [turn(0, "carol", 0, 30, 60), turn(1, "carol", 30, 40, 30)])
    ps = [P("p1", "m", "carol", 0, 10, 0), P("p3", "m", "carol", 20, 40, 2)]
    binary = RelevancePolicy(binary=True)
    assert grades([query("q", "lookup", {"m": [(0, 0)]}, {"m": (1,)})], [m], ps, binary)["q"] == {"p1": 1, "p3": 1}
    assert str(binary) == "binary(high=0.5,low=0.0,answer=0.5)"
    assert str(POLICY) == "graded(high=0.5,low=0.0,answer=0.5)"
    for p in (POLICY, binary, RelevancePolicy(0.75, 0.25)):
        assert RelevancePolicy.parse(str(p)) == p
    assert hash(RelevancePolicy()) == hash(RelevancePolicy(0.5, 0.0, False))
    with pytest.raises(BadInput):
        RelevancePolicy(high=0.2, low=0.3)
    with pytest.raises(BadInput):
        RelevancePolicy(high=1.5)
    with pytest.raises(BadInput):
        RelevancePolicy.parse("graded(high=0.5)")


def test_meeting_level_and_unjudgeable_queries():
    m1 = meeting("m1", [turn(0, "ann", 0, 10, 10)])
    m2 = meeting("m2", [turn(0, "bob", 0, 10, 10)])
    ps = [P("a", "m1", "ann", 0, 10)]
    out = judge([query("s", "summarize", {"m1": [], "m2": []}, level="meeting"),
                 query("s2", "summarize", {"m2": []}, level="meeting"),
                 query("t", "lookup", {"m2": [(0, 0)]})], [m1, m2], ps, POLICY)
    # a summarize query is judged on meetings; m2 has no passage but stays in the qrels and is counted
    assert out["s"].level == "meeting" and out["s"].passages == {} and out["s"].meetings == {"m1": 1, "m2": 1}
    assert out["s"].judgeable and out["s"].gold_meetings_without_passages == 1
    assert not out["s2"].judgeable
    # a lookup whose gold turn reaches no passage is unjudgeable
    assert not out["t"].judgeable and out["t"].meetings == {"m2": 1}


def test_refuses_passages_of_meetings_not_in_the_corpus_and_backwards_ranges():
    m = meeting("m", [turn(0, "ann", 0, 10, 10)])
    with pytest.raises(ForeignInventory, match="not in the corpus"):
        judge([], [m], [P("x", "elsewhere", "ann", 0, 10)], POLICY)
    with pytest.raises(BadInput):
        union_ranges([(3, 2)])


def _ordered(value):
    """``value`` with every dict as its list of items (and sets sorted), so equality also checks dict order."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [_ordered(v) for v in value]
    return value


def _world(n_meetings=6):
    import random

    rng = random.Random(7)
    ms, ps, qs = [], [], []
    for k in range(n_meetings):
        mid = f"m{k}"
        ts = [turn(i, ("ann", "bob")[i % 2], 10 * i, 10 * i + 9, rng.randint(1, 12)) for i in range(8)]
        ms.append(meeting(mid, ts))
        ps += [P(f"{mid}:{i}", mid, t.speaker, t.start, t.end, i) for i, t in enumerate(ts)]
    for n in range(12):
        gold = {f"m{k}": [(a, a + rng.randint(0, 2))] for k in rng.sample(range(n_meetings), 1 + n % 3)
                for a in [rng.randrange(6)]}
        qs.append(query(f"q{n:02d}", ("lookup", "multi_file", "summarize")[n % 3], gold,
                        {m: (rs[0][0],) for m, rs in gold.items()} if n % 3 == 0 else None,
                        "meeting" if n % 3 == 2 else "turn"))
    return ms, ps, qs


class _Lines:
    """A Visitor recording what it took, in order."""

    def __init__(self):
        self.took = []

    def read(self, m):
        return m.id, len(m.turns)

    def take(self, found):
        self.took.append(found)


@pytest.mark.parametrize("cut", [0, 1, 3, 6])
def test_a_pass_split_over_two_processes_is_the_single_pass_field_for_field_and_in_order(cut):
    from turnbench.harness.judgements import Parts, judge_all

    ms, ps, qs = _world()
    kw = {"words_of": {p.id for p in ps[::3]}, "keep_of": {p.id for p in ps[::5]}}
    one_kept, two_kept, one_seen, two_seen = {}, {}, _Lines(), _Lines()
    one = judge_all(qs, ms, ps, POLICY, digests_out=one_kept, visit=one_seen, **kw)
    two = judge_all(qs, Parts(lambda: ms[:cut], lambda: ms[cut:]), ps, POLICY, digests_out=two_kept, visit=two_seen,
                    **kw)
    assert any(j.passages for j in one.queries.values())  # the world grades something
    for name in ("queries", "words", "gold_held", "gold_words", "gold_spans", "gold_start", "held", "by_times",
                 "timings"):
        assert _ordered(getattr(two, name)) == _ordered(getattr(one, name)), name
    assert _ordered(two_kept) == _ordered(one_kept) and two_kept
    assert two_seen.took == one_seen.took == [(m.id, 8) for m in ms]
    _digests_are_the_bindings(one, one_kept, ms, ps, kw["keep_of"])


def _digests_are_the_bindings(judged, digests, ms, ps, keep_of):
    """The digests judging made are the bindings' digests of exactly the graded and the kept passages, as the
    bindings compute them from whole meetings."""
    from turnbench.harness import bindings as B

    graded = {pid for j in judged.queries.values() for pid in j.passages}
    assert set(digests) == (graded | set(keep_of)) & set(judged.held) and graded - set(keep_of)
    rows = B.compute([], [p for p in ps if p.id in digests], {m.id: m for m in ms}, judged.held)
    assert {r.id: r.sha256 for r in rows} == digests


def test_a_split_pass_refuses_as_the_single_pass_does_the_first_run_first():
    from turnbench.errors import CorpusIntegrityError
    from turnbench.harness.judgements import Parts, judge_all

    ms, ps, qs = _world()
    bad = [*ps, P("x1", "m1", "zed", 0, 1, 99), P("x4", "m4", "zed", 0, 1, 99)]
    with pytest.raises(ForeignInventory) as one:
        judge_all(qs, ms, bad, POLICY)
    with pytest.raises(ForeignInventory) as two:
        judge_all(qs, Parts(lambda: ms[:3], lambda: ms[3:]), bad, POLICY)
    assert str(two.value) == str(one.value) and "2 passage(s)" in str(one.value) and "x1" in str(one.value)

    def broken():
        yield ms[3]
        raise CorpusIntegrityError("part 2 is damaged")

    # a meeting file the child cannot read is refused here, as if this process had read it
    with pytest.raises(CorpusIntegrityError, match="part 2 is damaged"):
        judge_all(qs, Parts(lambda: ms[:3], broken), ps, POLICY)
    # the runs' own order wins: the first run's damage is raised before the second's is looked at
    with pytest.raises(CorpusIntegrityError, match="part 1"):
        judge_all(qs, Parts(lambda: (_ for _ in ()).throw(CorpusIntegrityError("part 1")), broken), ps, POLICY)


@pytest.mark.parametrize("backlog", [0, 8, 16, 10 ** 9])
def test_judging_started_before_the_filters_are_known_is_the_single_pass(monkeypatch, backlog):
    """The child judges its run from the start and holds back what it keeps until ``finish`` hands it the filters:
    none at all (it waits at its first meeting), one or two meetings' worth, or everything (it has judged every meeting
    before they come); the outcome is the single pass's, field for field and in order."""
    import time

    from turnbench.harness import judgements as J

    monkeypatch.setattr(J, "BACKLOG_TURNS", backlog)
    ms, ps, qs = _world()
    words_of, keep_of = {p.id for p in ps[::3]}, {p.id for p in ps[::5]}
    one_kept, two_kept, one_seen, two_seen = {}, {}, _Lines(), _Lines()
    one = J.judge_all(qs, ms, ps, POLICY, words_of=words_of, keep_of=keep_of, digests_out=one_kept, visit=one_seen)
    with J.Judging(qs, J.Parts(lambda: ms[:2], lambda: ms[2:]), ps, POLICY, keep=True, visit=two_seen) as judging:
        time.sleep(0.2)  # the child is well into its run (or done, or waiting) before the filters exist
        two = judging.finish(words_of, keep_of, two_kept)
    for name in ("queries", "words", "gold_held", "gold_words", "gold_spans", "gold_start", "held", "by_times",
                 "timings"):
        assert _ordered(getattr(two, name)) == _ordered(getattr(one, name)), name
    assert _ordered(two_kept) == _ordered(one_kept) and two_kept
    assert two_seen.took == one_seen.took == [(m.id, 8) for m in ms]
    assert two.words and two.held  # the filters mattered: something was kept for them


@pytest.mark.parametrize("parts", [False, True])
@pytest.mark.parametrize("late", [0, 2, 10 ** 9])
def test_filters_made_while_judging_goes_on_are_the_filters_given(monkeypatch, parts, late):
    """``finish(filters=...)``: the filters are asked for after each meeting judged here, and are None until they
    can be made (after ``late`` asks, or only when judging here cannot go on without them); the outcome is the one
    with the filters given from the start, and the child is handed them as soon as they come."""
    from turnbench.harness import judgements as J

    monkeypatch.setattr(J, "BACKLOG_TURNS", 16)
    ms, ps, qs = _world()
    words_of, keep_of = {p.id for p in ps[::3]}, {p.id for p in ps[::5]}
    one_kept, two_kept = {}, {}
    one = J.judge_all(qs, ms, ps, POLICY, words_of=words_of, keep_of=keep_of, digests_out=one_kept)
    asked: list[bool] = []

    def filters(wait):
        asked.append(wait)
        return (words_of, keep_of) if wait or len(asked) > late else None

    meetings = J.Parts(lambda: ms[:4], lambda: ms[4:]) if parts else ms
    with J.Judging(qs, meetings, ps, POLICY, keep=True) as judging:
        two = judging.finish(digests_out=two_kept, filters=filters)
    for name in ("queries", "words", "gold_held", "gold_words", "gold_spans", "gold_start", "held"):
        assert _ordered(getattr(two, name)) == _ordered(getattr(one, name)), name
    assert _ordered(two_kept) == _ordered(one_kept) and two_kept
    # asked after each meeting judged here until they came (waiting only once the backlog was full), never after
    assert asked and not any(asked[:-1]) and (asked[-1] or len(asked) == late + 1)


def test_judging_left_before_it_finishes_leaves_no_child():
    import multiprocessing

    from turnbench.harness import judgements as J

    ms, ps, qs = _world()
    with pytest.raises(RuntimeError, match="the run is bad"), \
            J.Judging(qs, J.Parts(lambda: ms[:2], lambda: ms[2:]), ps, POLICY, keep=True):
        raise RuntimeError("the run is bad")  # what normalising the run may raise while the child judges
    assert not [p for p in multiprocessing.active_children() if p.name == "turnbench-background"]


def test_a_turns_word_count_is_what_str_split_counts_for_every_kind_of_space():
    import sys

    from turnbench.harness.held import word_count, words_between

    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    unprintable = ["\x00", "\x7f", "\u200b", "\ufeff", "\u00ad"]  # not whitespace to split, but not printable either
    texts = ["", " ", "  ", "a", "a b", " a", "a ", "a  b", "é ü ☃", "a\u00a0b"]
    texts += [f"one{s}two" for s in spaces] + [f"{s}one two" for s in spaces] + [f"one two{s}" for s in spaces]
    texts += [f"one{u}two three" for u in unprintable] + [s * 3 for s in spaces]
    for text in texts:
        assert word_count(text) == len(text.split()), repr(text)
        for first, end in ((0, 0), (0, 1), (0, 2), (0, 3), (0, 99), (1, 3), (1, 99), (2, 2)):
            assert words_between(text, first, end) == " ".join(text.split()[first:end]), (text, first, end)


def test_the_one_call_path_is_problem_then_held_for_every_kind_of_passage():
    """``MeetingTurns.judged`` finds the common passage inline: it must give what ``problem`` then ``held`` give, for
    passages at the edges that path decides (instants, epsilon overlaps, a speaker's overlapping turns, hashes of
    one turn, of a run, of a window, of nothing) and for every other shape, which it hands to the general path."""
    import hashlib
    import random

    from turnbench.corpus.records import Meeting, Turn

    def sha(text):
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    rng = random.Random(25)
    eps = 1e-6
    for case in range(300):
        speakers = ("ann", "bob", "cat")[:rng.randint(1, 3)]
        turns, clock = [], 0.0
        for i in range(rng.randint(1, 9)):
            start = round(max(0.0, clock + rng.choice((-3.0, -eps / 2, 0.0, eps / 2, 2 * eps, 1.5))), 7)
            end = round(start + rng.choice((0.0, eps / 2, eps, 2 * eps, 1.0, 4.0, 9.5)), 7)
            text = " ".join(rng.choice(("alpha", "beta", "gamma", "delta")) for _ in range(rng.randint(0, 6)))
            turns.append(Turn(i, rng.choice(speakers), start, end, text))
            clock = end
        m = Meeting("m", "t", "2026-01-05", max(t.end for t in turns), "synthetic", speakers, tuple(turns))
        mt = MeetingTurns(m)
        for k in range(12):
            t = rng.choice(turns)
            start = rng.choice((t.start, t.start - eps / 2, t.start + 2 * eps, t.end, rng.uniform(-1, m.duration + 1)))
            end = max(start, rng.choice((t.end, t.end + eps / 2, t.end - 2 * eps, start,
                                         rng.uniform(0, m.duration + 1))))
            same = sorted((u for u in turns if u.speaker == t.speaker), key=lambda u: (u.start, u.end, u.index))
            at = same.index(t)
            texts = {"one": t.text, "run": "\n".join(u.text for u in same[at:at + 2]), "window": " ".join(
                t.text.split()[1:]), "none": "not said here"}
            sha256 = sha(texts[rng.choice(tuple(texts))]) if rng.random() < 0.9 else ""
            p = Passage(f"p{k}", "m", rng.choice((*speakers, "zed")) if rng.random() < 0.1 else t.speaker,
                        start, end, k, text_sha256=sha256,
                        speakers=rng.choice((None, None, None, (), tuple(speakers) if len(speakers) > 1 else None)))
            mine = MeetingTurns(m).judged(p)
            problem = mt.problem(p)
            assert mine == (f"foreign:{problem}" if problem is not None else MeetingTurns(m).held(p)), (case, k, p)
