"""Lookups that name a speaker ("what did Dana think about the pricing?"), judged by hand (docs/design.md §6).

The discussion block is turns 1-3 of meeting m: Dana takes a stand on the pricing (turn 1), Bob takes one on the same
pricing right after (turn 2: the distractor, the same discussion, another speaker), Ann closes (turn 3); Ann's turn 0
opens the meeting, outside the block. Ten words each, ten seconds each. The query's gold is the block, and it names
Dana with her one turn of it (``speaker_turns``).
"""

from __future__ import annotations

import math

from tests.unit.harness.helpers import RP, meeting, score, turn, turn_passages, write_corpus
from turnbench.corpus import Query, open_corpus
from turnbench.harness.judgements import RelevancePolicy, judge
from turnbench.passages import Passage

M = meeting("m", [turn(0, "ann", 0, 10, 10), turn(1, "dana", 10, 20, 10), turn(2, "bob", 20, 30, 10),
                  turn(3, "ann", 30, 40, 10)])
DANA, BOB, CLOSE = "m:00001", "m:00002", "m:00003"


def named(qid="q", speaker="dana", turns=(1,)):
    return Query(qid, "lookup", "R9", "opinion", f"What did {speaker} think about the pricing?", "retrieval", ("m",),
                 {"m": ((1, 3),)}, speaker=speaker, speaker_turns={"m": turns})


def topic(qid="t"):
    """The same block asked about by topic: no speaker named."""
    return Query(qid, "lookup", "R9", "topic", "What was discussed about the pricing?", "retrieval", ("m",),
                 {"m": ((1, 3),)})


def test_the_named_speakers_passage_grades_above_another_speakers_in_the_same_discussion():
    got = {q: dict(j.passages) for q, j in judge([named(), topic()], [M], turn_passages([M]),
                                                  RelevancePolicy()).items()}
    # every passage of the block is all gold: coverage 10/10 = 1.0 >= high -> 2 ...
    assert got["t"] == {DANA: 2, BOB: 2, CLOSE: 2}
    # ... but the question names Dana: Bob's and Ann's passages hold none of her turn (share 0 < answer 0.5) -> 1
    assert got["q"] == {DANA: 2, BOB: 1, CLOSE: 1}
    # binary collapses the difference, as it collapses every other grade
    assert judge([named()], [M], turn_passages([M]), RelevancePolicy(binary=True))["q"].passages == \
        {DANA: 1, BOB: 1, CLOSE: 1}


def test_a_passage_must_hold_a_real_share_of_the_named_speakers_turn():
    # judged by times alone: Dana's turn is 10 words over 10 s, so 10-15 s holds words 0-5 (share 0.5 = answer ->
    # keeps its coverage grade, 2) and 10-14 s words 0-4 (share 0.4 < 0.5 -> a sliver of her words: 1)
    half = Passage("half", "m", "dana", 10.0, 15.0, 0)
    sliver = Passage("sliver", "m", "dana", 10.0, 14.0, 1)
    assert judge([named()], [M], [half, sliver], RelevancePolicy())["q"].passages == {"half": 2, "sliver": 1}
    # with answer = 0.3, 0.4 of her turn is enough
    assert judge([named()], [M], [half, sliver], RelevancePolicy(answer=0.3))["q"].passages == \
        {"half": 2, "sliver": 2}


def test_ranking_the_distractor_first_scores_lower_on_ndcg_and_the_strict_rows_and_the_surface_row_shows_it(
        tmp_path):
    corpus = open_corpus(write_corpus(tmp_path / "c", [M], [named("q"), named("r"), named("s")]))
    # q ranks Dana's passage, then Bob's; r ranks Bob's first; s ranks Bob's alone
    run = [RP("q", DANA, 2), RP("q", BOB, 1), RP("r", BOB, 2), RP("r", DANA, 1), RP("s", BOB, 1)]
    res = score(corpus, turn_passages([M]), run)
    per_query = {r["query_id"]: r["values"] for r in res.document["retrieval"]["per_query"]}
    # qrels: Dana 2, Bob 1, Ann's close 1; IDCG@10 = 2/log2(2) + 1/log2(3) + 1/log2(4)
    #   = 2 + 0.630930 + 0.5 = 3.130930
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert round(idcg, 6) == 3.130930
    # q: DCG = 2 + 1/log2(3) = 2.630930 -> 2.630930 / 3.130930 = 0.840303
    assert per_query["q"]["nDCG@10"] == 0.840303
    # r: DCG = 1 + 2/log2(3) = 2.261860 -> 2.261860 / 3.130930 = 0.722424
    assert per_query["r"]["nDCG@10"] == 0.722424
    # s: DCG = 1 -> 1 / 3.130930 = 0.319394 (Dana's passage alone would be 2 / 3.130930 = 0.638788)
    assert per_query["s"]["nDCG@10"] == 0.319394
    # R@k and MRR count every positive grade (trec_eval's rel >= 1): the discussion was found, whoever spoke
    assert [per_query[x]["MRR"] for x in "qrs"] == [1.0, 1.0, 1.0]
    assert per_query["s"]["R@10"] == round(1 / 3, 6)
    # the strict rows count grades 2 and 3 only: Dana's passage alone; s never reaches it, r reaches it second
    strict = {r["query_id"]: r["values"] for r in res.document["strict"]["per_query"]}
    assert [strict[x]["MRR"] for x in "qrs"] == [1.0, 0.5, 0.0]
    # strict nDCG: qrels Dana 2 -> IDCG = 2; q: 2/2 = 1; r: (2/log2(3)) / 2 = 0.630930; s: 0
    assert [strict[x]["nDCG@10"] for x in "qrs"] == [1.0, 0.630930, 0.0]
    # the opinion surface's row is the mean of the three: (0.840303 + 0.722424 + 0.319394) / 3 = 0.627374
    (row,) = [r for r in res.document["retrieval"]["rows_by_surface"]["opinion"] if r["class"] == "lookup"]
    assert row["means"]["nDCG@10"] == 0.627374


def test_the_gold_names_the_speaker_only_when_the_query_does():
    q = named()
    line = q.to_json()
    assert line["speaker"] == "dana" and line["speaker_turns"] == {"m": [1]}
    assert Query.from_json(line) == q
    # a query naming nobody writes neither field, so a corpus without speaker questions keeps its bytes
    assert {"speaker", "speaker_turns"}.isdisjoint(topic().to_json())
