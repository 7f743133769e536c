"""The generated fixture corpus (fixtures/small) through load and both arms in both scopes, twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnbench.corpus.format import open_corpus
from turnbench.engines.retrieval import run_arm
from turnbench.loading.load import load_corpus
from turnbench.loading.tables import SCHEMA
from turnbench.runfiles import write_jsonl_run, write_trec_run
from turnbench.stack.clients import postgres_connect

pytestmark = pytest.mark.integration

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"


def _load_and_run(stack, corpus, out: Path):
    loaded = load_corpus(stack, corpus)
    files, runs = {}, {}
    for arm in ("bm25", "bm25-title"):
        for scope in ("corpus", "gold-meetings"):
            r = run_arm(stack, corpus, arm, scope=scope)
            runs[arm, scope] = r
            files[arm, scope] = (write_trec_run(out / f"{arm}-{scope}.trec", r.run, arm),
                                 write_jsonl_run(out / f"{arm}-{scope}.jsonl", r.run), r.arm_config)
    return loaded, runs, files


def test_fixture_corpus_loads_settles_and_runs_identically_twice(stack, tmp_path):
    corpus = open_corpus(SMALL)
    counts = corpus.manifest["counts"]
    first, runs, files1 = _load_and_run(stack, corpus, tmp_path / "1")
    p = first.provenance
    assert (p["meetings"], p["segments"]) == (counts["meetings"], counts["turns"])
    assert p["docs_count"] == p["passages"] == len(first.passages) and p["segments_per_shard"] == 1
    # chunking keeps every word: the passages hold exactly the corpus's words, none over the limit
    assert sum(x.words for x in first.passages) == counts["words"]
    assert max(x.words for x in first.passages) <= 200
    assert {x.meeting for x in first.passages} == {m.id for m in corpus.iter_meetings()}
    meetings = list(corpus.iter_meetings())
    with postgres_connect(stack) as conn:
        assert conn.execute(f"SELECT count(*), count(DISTINCT meeting_id) FROM {SCHEMA}.segments").fetchone() == \
            (counts["turns"], counts["meetings"])
        # the invitee list is product data: every invitee of every meeting, some of whom never spoke
        invited = conn.execute(f"SELECT meeting_id, name FROM {SCHEMA}.attendees ORDER BY meeting_id, name").fetchall()
        assert invited == sorted((m.id, a) for m in meetings for a in m.attendees)
        silent = conn.execute(
            f"SELECT count(*) FROM {SCHEMA}.attendees a WHERE NOT EXISTS (SELECT 1 FROM {SCHEMA}.segments s "
            "WHERE s.meeting_id = a.meeting_id AND s.speaker = a.name)").fetchone()[0]
        assert silent == sum(len(set(m.attendees) - {t.speaker for t in m.turns}) for m in meetings) > 0

    retrieval = {q.id: q for q in corpus.queries() if q.scored_on == "retrieval"}
    assert len(retrieval) == counts["queries"] - counts["queries_by_class"]["aggregation"]
    by_id = {x.id: x for x in first.passages}
    for (_arm, scope), r in runs.items():
        assert r.arm_config["queries"]["count"] == len(retrieval) == len(r.latencies)
        assert set(r.run) <= set(retrieval)
        assert all(len(ranked) <= 100 for ranked in r.run.values())
        if scope == "gold-meetings":
            for qid, ranked in r.run.items():
                assert {by_id[e.passage_id].meeting for e in ranked} <= set(retrieval[qid].gold_meetings)
    # the oracle can only help: restricted to the gold meetings, the first hit is always in one
    oracle = runs["bm25", "gold-meetings"].run
    assert all(by_id[ranked[0].passage_id].meeting in retrieval[qid].gold_meetings for qid, ranked in oracle.items())

    second, _, files2 = _load_and_run(stack, corpus, tmp_path / "2")
    assert second.passages == first.passages and second.provenance == first.provenance
    assert files2 == files1
