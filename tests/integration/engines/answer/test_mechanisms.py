"""The reference answerer on the real stack, over a hand-written corpus whose answers are counted by hand.

Every answer below can be checked by reading ``MEETINGS``:

- "cedar lantern" is mentioned in a-01, a-02 (capitalised) and a-04; a-01 also says "cedar lanterns" (a
  plural: another word), a-03 says "cedar blue lantern" (inserted word) and a-04 "lantern cedar" (reordered):
  near misses that must not count. R3 = 3, R4 = {a-01, a-02, a-04}; by month: March 2026 = 2 (a-01, a-02),
  April = 1 (a-04), May = 0.
- "defer the billing migration": twice in a-01 ("Can we defer ...", "Defer the billing migration, ...");
  a-02 only mentions the item, a-03 defers "the billing migrations" (plural). R5 = 2.
- Items with characters that mean something to SQL, LIKE or a regular expression are deferred once each;
  a-05 defers "the Routing UPGRADE" once (case differs from the question); with two spaces it is no
  deferral by contract (docs/question-grammar.md §1: single spaces).
- Platform weekly sync = a-01 (Ana, Ben), a-02 (Ana, Ben? no: Ana, Cleo), a-05 (Ana, Cleo): Ana spoke in 3,
  Cleo 2, Ben 1. Payments weekly sync = a-04 (Dev, Eve), a-06 (Dev, Fay): Dev 2.
"""

from __future__ import annotations

import pytest

from turnbench.corpus.format import CorpusWriter, open_corpus
from turnbench.corpus.records import Answer, Meeting, Query, Turn
from turnbench.engines.answer.engine import answer_queries
from turnbench.engines.answer.mechanisms import ReferenceAnswerer
from turnbench.errors import StackStateError, TruncatedAggregation
from turnbench.harness.answers import score_answers
from turnbench.loading import index, tables
from turnbench.loading.load import load_corpus
from turnbench.stack import clients

pytestmark = pytest.mark.integration

NASTY = {
    "50% rollout": "Let us defer the 50% rollout and revisit in a month.",
    "a_b (beta) rewrite": "Honestly we should defer the a_b (beta) rewrite for now.",
    "back\\slash cleanup": "Can we defer the back\\slash cleanup to the next sync?",
    "o'brien launch": "I would say we defer the o'brien launch until next quarter.",
    "[x] $y^ cleanup": "Defer the [x] $y^ cleanup, it is not ready yet.",
    'q"uote |pipe| upgrade': 'We defer the q"uote |pipe| upgrade as well.',
}

MEETINGS = [
    ("a-01", "Platform \u2014 weekly sync #1", "2026-03-02", [
        ("Ana", "I think we should revisit the cedar lantern next week."),
        ("Ben", "Can we defer the billing migration to the next sync?"),
        ("Ana", "Defer the billing migration, it is not ready yet. And the cedar lanterns are a separate thing."),
    ]),
    ("a-02", "Platform \u2014 weekly sync #2", "2026-03-16", [
        ("Ana", "Any update on the Cedar Lantern from your side?"),
        ("Cleo", "We finished the first half of the billing migration last week."),
    ]),
    ("a-03", "Platform \u2014 design review #1", "2026-04-06", [
        ("Cleo", "The cedar blue lantern looks odd to me."),
        ("Ana", "Honestly we should defer the billing migrations for now."),
        *[("Ana", text) for text in list(NASTY.values())[:3]],
    ]),
    ("a-04", "Payments \u2014 weekly sync #1", "2026-04-20", [
        ("Dev", "So the cedar lantern is moving again, which is good."),
        ("Eve", "The lantern cedar idea was different."),
        *[("Dev", text) for text in list(NASTY.values())[3:]],
    ]),
    ("a-05", "Platform \u2014 weekly sync #3", "2026-05-04", [
        ("Ana", "Who owns the amber heron these days?"),
        ("Cleo", "I do. We DEFER THE Routing UPGRADE again, sadly; "
                 "defer the routing  upgrade (two spaces) is not one."),
    ]),
    ("a-06", "Payments \u2014 weekly sync #2", "2026-05-11", [
        ("Dev", "We got some feedback about the amber heron from the field."),
        ("Fay", "Good."),
    ]),
]


def _meeting(mid, title, date, spec) -> Meeting:
    turns, t = [], 0.0
    for i, (speaker, text) in enumerate(spec):
        end = t + 0.4 * len(text.split())
        turns.append(Turn(i, speaker, t, end, text))
        t = end
    speakers = tuple(sorted({x.speaker for x in turns}))
    return Meeting(mid, title, date, t, "synthetic", speakers, tuple(turns), speakers,
                   meta={"team": "never read by the answerer"})


def _q(qid, rule, surface, text, answer, grammar="in") -> Query:
    return Query(qid, "aggregation", rule, surface, text, "answer", tuple(answer.meetings or ()), answer=answer,
                 gold_level="meeting", meta={"grammar": grammar})


def count(n):
    return Answer("count", count=n)


QUERIES = [
    _q("r3-a", "R3", "how-many", "How many meetings discussed the cedar lantern?", count(3)),
    _q("r3-b", "R3", "in-how-many", "In how many meetings was the amber heron mentioned?", count(2)),
    _q("r3-zero", "R3", "how-many", "How many meetings mentioned the cedar harbor?", count(0)),
    _q("r3-nasty", "R3", "how-many", 'How many meetings mentioned "the [x] $y^ cleanup"?', count(1)),
    _q("r4-a", "R4", "which", "Which meetings mention the cedar lantern?",
       Answer("meeting_set", meetings=("a-01", "a-02", "a-04"))),
    _q("r4-zero", "R4", "which", "List the meetings that mentioned the granite falcon.",
       Answer("meeting_set", meetings=())),
    _q("r5-a", "R5", "times", "How many times in total did we defer the billing migration?", count(2)),
    _q("r5-zero", "R5", "times", "How many times was the amber heron deferred?", count(0)),
    *[_q(f"r5-nasty-{i}", "R5", "times-quoted", f'How many times did we defer "the {item}"?', count(1))
      for i, item in enumerate(NASTY)],
    _q("r5-case", "R5", "times", "How many times in total did we defer the routing upgrade?", count(1)),
    # a LIKE wildcard or a regex metacharacter read as syntax would match the deferrals above
    _q("r5-like", "R5", "times-quoted", 'How many times did we defer "the 50_ rollout"?', count(0)),
    _q("r5-regex", "R5", "times-quoted", 'How many times did we defer "the .* rollout"?', count(0)),
    _q("r5-alt", "R5", "times-quoted", 'How many times did we defer "the x|billing migration"?', count(0)),
    _q("r5-sql", "R5", "times-quoted",
       "How many times did we defer \"the x'); DROP TABLE turnbench.segments; --\"?", count(0)),
    _q("r6-a", "R6", "who-most", "Who attended the most weekly sync sessions for the Platform team?",
       Answer("speaker_count", count=3, speaker="Ana")),
    _q("r6-b", "R6", "who-most", "Who attended the most weekly sync meetings for Payments?",
       Answer("speaker_count", count=2, speaker="Dev")),
    _q("r7-mar", "R7", "in-month", "How many meetings in March 2026 discussed the cedar lantern?", count(2)),
    _q("r7-apr", "R7", "in-month", "How many meetings discussed the cedar lantern during April 2026?", count(1)),
    _q("r7-may", "R7", "in-month", "How many meetings in May 2026 discussed the cedar lantern?", count(0)),
    _q("out-1", "R3", "chatty", "Did the cedar lantern come up much lately?", count(3), grammar="out"),
    _q("out-2", "R7", "relative", "How many meetings last month discussed the cedar lantern?", count(0),
       grammar="out"),
]


@pytest.fixture(scope="module")
def loaded(stack, tmp_path_factory):
    root = tmp_path_factory.mktemp("answers") / "corpus"
    with CorpusWriter(root) as w:
        w.write_meetings([_meeting(*m) for m in MEETINGS])
        w.write_queries(QUERIES)
        w.write_facts([])
        w.write_manifest(corpus_id="answers-kit", licence={"tier": "synthetic", "name": "CC0-1.0"},
                         producer={"name": "tests/integration/test_answers_engine", "version": "1", "seed": 0},
                         counts={"meetings": len(MEETINGS), "queries": len(QUERIES)})
    corpus = open_corpus(root)
    load_corpus(stack, corpus)
    return corpus


def _scores(stack, corpus, **kw):
    submitted = answer_queries(stack, corpus.queries(), corpus=corpus, **kw)
    return submitted, score_answers(corpus.queries(), submitted, corpus=corpus.id,
                                    answerer=kw.get("answerer", "reference"))


def test_reference_is_exact_in_grammar_and_declines_the_rest(stack, loaded):
    submitted, res = _scores(stack, loaded)
    wrong = [(s.query_id, s.gold.to_json(), s.submitted.to_json()) for s in res.scores
             if s.grammar == "in" and s.em != 1.0]
    assert wrong == []
    rows = {r.grammar: r for r in res.grammar_rows()}
    assert (rows["in"].em, rows["in"].answered, rows["in"].declined) == (1.0, 1.0, 0)
    assert (rows["out"].questions, rows["out"].declined, rows["out"].em, rows["out"].answered) == (2, 2, 0.0, 0.0)
    by_id = {a.query_id: a for a in submitted}
    assert by_id["r3-a"].mechanism.startswith("opensearch match_phrase(content.exact) + terms(meeting_id)")
    assert by_id["r5-a"].mechanism.startswith("postgres regexp_count")
    assert by_id["r5-a"].intent == {"rule": "R5", "phrase": "billing migration",
                                    "pattern": "defer the billing migration"}
    assert by_id["r7-mar"].intent["month"] == "2026-03"
    assert by_id["out-1"].mechanism == "declined" and by_id["out-1"].intent["reason"]


def test_injection_attempt_changed_nothing(stack, loaded):
    with clients.postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {tables.SCHEMA}.segments")
        assert cur.fetchone()[0] == sum(len(m[3]) for m in MEETINGS)


def test_none_is_the_floor(stack, loaded):
    _, res = _scores(stack, loaded, answerer="none")
    al = res.rule_rows()[-1]
    assert (al.em, al.answered, al.declined, al.questions) == (0.0, 0.0, len(QUERIES), len(QUERIES))


def test_truncated_bucket_list_raises(stack, loaded):
    with ReferenceAnswerer.connect(stack, bucket_limit=2) as ref:
        assert ref.meetings_mentioning("amber heron") == ["a-05", "a-06"]  # exactly at the limit: fine
        with pytest.raises(TruncatedAggregation, match="cut at 2"):
            ref.answer("r3-a", "How many meetings discussed the cedar lantern?")


class _MissesOneMeeting(ReferenceAnswerer):
    """A phrase filter with a bug: it silently drops one meeting's passages."""

    def phrase_query(self, phrase):
        return {"bool": {"must": [super().phrase_query(phrase)], "must_not": [{"term": {"meeting_id": "a-04"}}]}}


def test_a_filter_that_misses_one_meeting_is_caught(stack, loaded):
    with _MissesOneMeeting.connect(stack) as ref:
        submitted = [ref.answer(q.id, q.text) for q in loaded.queries()]
    res = score_answers(loaded.queries(), submitted)
    em = res.em_by_query()
    assert em["r3-a"] == 0.0 and em["r4-a"] == 0.0 and em["r7-apr"] == 0.0
    r4 = next(s for s in res.scores if s.query_id == "r4-a")
    assert r4.set_f1 == pytest.approx(0.8)  # 2 of 3 found: F1 = 2*2/(2+3) says "one meeting missing"
    al = res.rule_rows()[-1]
    assert al.em < 1.0 and al.declined == 2  # wrong, not silent: only the two out-of-grammar questions declined


def test_an_unrefreshed_index_is_caught(stack, loaded):
    """Passages bulk-indexed without a refresh are invisible to search: the counts fall, EM drops below 1."""
    client = clients.opensearch_client(stack)
    name = "answers-unrefreshed"
    if client.indices.exists(index=name):
        client.indices.delete(index=name)
    client.indices.create(index=name, body={"settings": index.index_settings(), "mappings": index.index_mappings()})
    try:
        hits = client.search(index=index.DEFAULT_INDEX, body={"size": 1000, "query": {"match_all": {}}})["hits"]["hits"]
        from opensearchpy import helpers

        helpers.bulk(client, ({"_index": name, "_id": h["_id"], "_source": h["_source"]} for h in hits), refresh=False)
        assert client.count(index=name)["count"] == 0  # nothing searchable yet
        submitted = answer_queries(stack, loaded.queries(), index=name)
        res = score_answers(loaded.queries(), submitted)
        em = res.em_by_query()
        assert em["r3-a"] == 0.0 and em["r4-a"] == 0.0
        assert em["r3-zero"] == 1.0  # a zero answer is right for the wrong reason: why zeros are not enough
        assert res.rule_rows()[-1].em < 1.0
    finally:
        client.indices.delete(index=name)


def test_a_stack_holding_another_corpus_is_refused(stack, loaded, tmp_path):
    other = tmp_path / "other"
    with CorpusWriter(other) as w:
        w.write_meetings([_meeting(*MEETINGS[0])])
        w.write_queries([])
        w.write_facts([])
        w.write_manifest(corpus_id="answers-other", licence={"tier": "synthetic", "name": "CC0-1.0"},
                         producer={"name": "test", "version": "1", "seed": 1}, counts={"meetings": 1, "queries": 0})
    with pytest.raises(StackStateError):
        answer_queries(stack, loaded.queries(), corpus=open_corpus(other))


def test_answers_depend_on_the_question_text_alone(stack, loaded):
    """Gold, gold meetings and meta scrambled: the reference answerer answers exactly as before."""
    import dataclasses

    scrambled = [dataclasses.replace(q, answer=Answer("count", count=999), gold_meetings=("zzz",),
                                     meta={"grammar": "out" if q.meta.get("grammar") == "in" else "in"})
                 for q in loaded.queries()]
    assert answer_queries(stack, scrambled, corpus=loaded) == answer_queries(stack, loaded.queries(), corpus=loaded)


def test_a_nul_byte_in_a_question_is_a_one_line_refusal(stack, loaded):
    """PostgreSQL cannot hold a NUL byte: the deferral count's bound parameter is refused by the client."""
    from dataclasses import replace

    bad = [replace(q, text="How many times in total did we defer the billing\x00 migration?")
           for q in loaded.queries() if q.rule == "R5"][:1]
    with pytest.raises(StackStateError, match=r"^PostgreSQL refused a request: DataError: .*NUL"):
        answer_queries(stack, bad, corpus=loaded)


def test_a_database_that_went_away_is_a_one_line_refusal(stack, loaded):
    from dataclasses import replace

    gone = replace(stack, postgres_dsn="host=127.0.0.1 port=9 user=turnbench dbname=turnbench connect_timeout=2")
    with pytest.raises(StackStateError, match=r"^PostgreSQL does not answer: "):
        answer_queries(gone, loaded.queries(), corpus=loaded)
