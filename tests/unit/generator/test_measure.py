"""The self-measure on a six-meeting corpus whose rankings are derived by hand.

Documents (title + turns) and their tokens:
    m1 "Alpha" + "apple banana"        m4 "Delta" + "apple banana"   (same counts and length as m1)
    m2 "Beta"  + "apple cherry"        m5 "Epsilon" + "egg fig"
    m3 "Gamma" + "cherry cherry date"  m6 "Zeta" + "grape apple"
N = 6: a term in one document has idf log(5.5/1.5) > 0, in two log(4.5/2.5) > 0; "apple" (four documents)
has a negative idf that BM25Okapi floors to epsilon × mean idf, which is positive here.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.corpus import CorpusWriter, Meeting, Query, Turn, open_corpus
from turnbench.corpus.records import Answer
from turnbench.generator import measure

DOCS = {
    "m1": ("Alpha", "apple banana", "x"),
    "m2": ("Beta", "apple cherry", "x"),
    "m3": ("Gamma", "cherry cherry date", "x"),
    "m4": ("Delta", "apple banana", "y"),
    "m5": ("Epsilon", "egg fig", "y"),
    "m6": ("Zeta", "grape apple", "y"),
}


def _meeting(mid: str, title: str, text: str, domain: str | None) -> Meeting:
    return Meeting(
        id=mid, title=title, recorded_date=None, duration=2.0, timing="synthetic", speakers=("A",),
        turns=(Turn(0, "A", 0.0, 2.0, text),), meta={"domain": domain} if domain else {},
    )


def _query(qid: str, cls: str, text: str, gold: tuple[str, ...]) -> Query:
    return Query(qid, cls, {"lookup": "R1", "multi_file": "R2", "summarize": "R8"}[cls], "plain", text,
                 "retrieval", gold, {g: ((0, 0),) for g in gold})


QUERIES = (
    _query("q1", "lookup", "banana", ("m4",)),          # tied with m1, which sorts first: rank 2, 1 competitor
    _query("q2", "lookup", "Banana?", ("m1",)),         # rank 1, m4 is the one competitor
    _query("q3", "lookup", "date", ("m3",)),            # rank 1, nobody else scores
    _query("q4", "multi_file", "cherry", ("m2", "m3")),  # rank 1, non-gold all score 0
    _query("q5", "summarize", "apple zebra", ("m3",)),  # gold scores 0: unmatched, rank 5, all 5 compete
    _query("q6", "multi_file", "banana", ("m1", "m4")),  # both tied meetings are gold: rank 1, 0 competitors
    Query("q7", "aggregation", "R3", "plain", "how many meetings discussed apple", "answer", ("m1",),
          answer=Answer("count", count=4)),
)


def _meetings(with_domain: bool = True) -> list[Meeting]:
    return [_meeting(m, t, x, d if with_domain else None) for m, (t, x, d) in DOCS.items()]


@pytest.fixture()
def corpus_dir(tmp_path: Path) -> Path:
    out = tmp_path / "corpus"
    with CorpusWriter(out) as w:
        # written out of id order on purpose: ranks must not depend on reading order
        w.write_meetings(sorted(_meetings(), key=lambda m: m.title, reverse=True))
        w.write_queries(QUERIES)
        w.write_manifest(corpus_id="tiny", licence={"tier": "A", "name": "test"}, producer={"name": "test"},
                         counts={"meetings": 6})
    return out


def _rank_queries(meetings: list[Meeting], queries: Sequence[Query]) -> tuple[list[measure.QueryMeasure], int]:
    """Every query's figures and the meeting count, from the ranking the self-measure summarises."""
    rows, read = measure._rank(meetings, queries, True)
    return rows, len(read.ids)


def test_rank_figures_per_query_are_the_hand_derived_ones():
    rows, n = _rank_queries(_meetings(), [q for q in QUERIES if q.scored_on == "retrieval"])
    assert n == 6
    got = {r.query_id: (r.first_gold_rank, r.competitors, r.non_gold, r.domain) for r in rows}
    assert got == {
        "q1": (2, 1, 5, "y"),
        "q2": (1, 1, 5, "x"),
        "q3": (1, 0, 5, "x"),
        "q4": (1, 0, 4, "x"),
        "q5": (5, 5, 5, "x"),
        "q6": (1, 0, 4, "mixed"),
    }
    by_id = {r.query_id: r for r in rows}
    assert by_id["q5"].best_gold_score == 0.0
    # q3's gold score, by BM25Okapi's formula written out independently
    k1, b = 1.5, 0.75
    idf = math.log(6 - 1 + 0.5) - math.log(1 + 0.5)
    avgdl = (3 * 5 + 4) / 6
    expected = idf * (1 * (k1 + 1)) / (1 + k1 * (1 - b + b * 4 / avgdl))
    assert by_id["q3"].best_gold_score == pytest.approx(expected, rel=1e-12)


def _row(n, r1, r10, med, nd_count, nd_share, unmatched, share, c_r1, c_r10, c_share, overlap):
    zero, one, median = overlap
    # every query here has one word, so its share is 0 or 1: deciles by nearest rank over the sorted shares
    shares = [0.0] * zero + [1.0] * one
    deciles = [shares[round(k / 10 * (len(shares) - 1))] for k in range(11)]
    return {"n": n, "recall_at_1": r1, "recall_at_10": r10, "median_first_gold_rank": med,
            "near_dup_mean_count": nd_count, "near_dup_mean_share": nd_share, "gold_unmatched": unmatched,
            "gold_share_at_r": share, "content_recall_at_1": c_r1, "content_recall_at_10": c_r10,
            "content_gold_share_at_r": c_share,
            "overlap": {"n": zero + one, "0": zero, "1": one, "2": 0, "3+": 0, "median": median,
                        "share_mean": round(one / (zero + one), 6), "share_deciles": deciles,
                        "share_zero": round(zero / (zero + one), 6)}}


def test_summary_rows_exact(corpus_dir: Path):
    # Titles hold no query word and every document loses exactly one token without its title, so the
    # content-only ranks equal the titled ones. Overlap: each query's one word is in its gold turn, except
    # q5's "apple zebra" against m3's "cherry cherry date". Gold share at r: q4's two gold meetings rank 1
    # and 2 (share 1), q6's too; q1's one gold meeting ranks 2 (share 0), q5's ranks 5.
    stats = measure.measure_corpus(open_corpus(corpus_dir))
    assert stats["meetings"] == 6
    assert stats["queries_ranked"] == 6 and stats["queries_not_ranked"] == 1
    assert stats["by_class"] == {
        "lookup": _row(3, 0.666667, 1.0, 1.0, 0.666667, 0.133333, 0, 0.666667, 0.666667, 1.0, 0.666667,
                       (0, 3, 1.0)),
        "multi_file": _row(2, 1.0, 1.0, 1.0, 0.0, 0.0, 0, 1.0, 1.0, 1.0, 1.0, (0, 2, 1.0)),
        "summarize": _row(1, 0.0, 1.0, 5.0, 5.0, 1.0, 1, 0.0, 0.0, 1.0, 0.0, (1, 0, 0.0)),
        "all": _row(6, 0.666667, 1.0, 1.0, 1.166667, 0.233333, 1, 0.666667, 0.666667, 1.0, 0.666667, (1, 5, 1.0)),
    }
    assert stats["by_surface"] == {"lookup": {"plain": stats["by_class"]["lookup"]},
                                   "multi_file": {"plain": stats["by_class"]["multi_file"]},
                                   "summarize": {"plain": stats["by_class"]["summarize"]}}
    assert sorted(stats["by_domain"]) == ["mixed", "x", "y"]
    y = _row(1, 0.0, 1.0, 2.0, 1.0, 0.2, 0, 0.0, 0.0, 1.0, 0.0, (0, 1, 1.0))
    assert stats["by_domain"]["y"] == {"lookup": y, "all": y}
    assert stats["by_domain"]["x"]["all"]["n"] == 4
    assert stats["corpus"]["id"] == "tiny"


def test_realism_figures_by_hand(corpus_dir: Path):
    # six one-turn meetings of 2, 2, 3, 2, 2, 2 words by one speaker each, 2 s long, no overlap possible;
    # the test corpus's producer is not the generator and no meeting is measured: overlap is not measurable
    stats = measure.measure_corpus(open_corpus(corpus_dir))
    realism = stats["realism"]
    assert realism["all"] == {
        "meetings": 6, "words_per_meeting": 2.0, "speakers_per_meeting": 1.0, "turns": 6,
        "turn_words_p10": 2, "turn_words_p25": 2, "turn_words_p50": 2, "turn_words_p75": 2, "turn_words_p90": 3,
        "turn_words_p99": 3, "backchannel_share": 0.0, "overlap_share": None, "queries": 6, "query_words": 1.0,
        "query_gold_overlap": 1.0, "query_gold_overlap_at_most_1": 1.0,
    }
    assert sorted(realism["by_domain"]) == ["x", "y"] and realism["by_domain"]["y"]["meetings"] == 3
    assert set(stats["realism_definitions"]) >= {"backchannel_share", "overlap_share", "query_gold_overlap"}


def test_bm25_is_named_with_its_parameters(corpus_dir: Path):
    b = measure.measure_corpus(open_corpus(corpus_dir))["bm25"]
    assert b == {
        "implementation": "rank_bm25.BM25Okapi", "distribution": "rank-bm25", "version": "0.2.2",
        "k1": 1.5, "b": 0.75, "epsilon": 0.25,
        "tokenizer": {"name": "casefold-words", "pattern": r"\w+", "casefold": True, "stopwords": "none",
                      "stemming": "none"},
    }


def test_no_domain_breakdown_without_domains():
    stats = measure.measure_queries(_meetings(with_domain=False), QUERIES)
    assert "by_domain" not in stats
    assert stats["by_class"]["all"]["n"] == 6


def test_tie_break_is_meeting_id_not_reading_order():
    forward, _ = _rank_queries(_meetings(), QUERIES[:2])
    backward, _ = _rank_queries(list(reversed(_meetings())), QUERIES[:2])
    assert forward == backward
    assert [r.first_gold_rank for r in forward] == [2, 1]


def test_tokenizer_casefolds_and_splits_on_non_word():
    assert measure.tokenize("Straße, ROAD-map 2x!") == ["strasse", "road", "map", "2x"]


def test_stats_json_written_outside_the_hash_list_and_reopens(corpus_dir: Path):
    assert CliRunner().invoke(main, ["measure", str(corpus_dir)]).exit_code == 0
    on_disk = json.loads((corpus_dir / "stats.json").read_bytes())
    assert on_disk.pop("surface_cosine")["surfaces"]  # the encoder's part, beside the self-measure
    # the corpus reopens with its hashes verified: stats.json must not count as an extra file
    assert on_disk == measure.measure_corpus(open_corpus(corpus_dir))


def test_gold_meeting_missing_from_corpus_refuses():
    from turnbench.errors import CorpusIntegrityError

    with pytest.raises(CorpusIntegrityError, match="q9"):
        _rank_queries(_meetings(), [_query("q9", "lookup", "apple", ("m99",))])


def _measure_in_subprocess(src: Path, dest: Path, hashseed: str) -> bytes:
    shutil.copytree(src, dest)
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    proc = subprocess.run([sys.executable, "-c", "from turnbench.cli import main; main()", "measure", str(dest)],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return (dest / "stats.json").read_bytes()


def test_stats_json_byte_identical_across_hash_seeds(corpus_dir: Path, tmp_path: Path):
    a = _measure_in_subprocess(corpus_dir, tmp_path / "a", "0")
    b = _measure_in_subprocess(corpus_dir, tmp_path / "b", "4242")
    c = _measure_in_subprocess(corpus_dir, tmp_path / "c", "random")
    assert a == b == c
    assert a.endswith(b"}\n")


def test_cli_prints_table_naming_bm25(corpus_dir: Path):
    result = CliRunner().invoke(main, ["measure", str(corpus_dir)])
    assert result.exit_code == 0, result.output
    assert "rank_bm25.BM25Okapi" in result.output and "k1=1.5" in result.output
    assert (corpus_dir / "stats.json").is_file()


def test_cli_refuses_a_tampered_corpus(corpus_dir: Path):
    part = corpus_dir / "meetings" / "part-0000.jsonl"
    part.write_bytes(part.read_bytes().replace(b"grape", b"grapefruit"))
    result = CliRunner().invoke(main, ["measure", str(corpus_dir)])
    assert result.exit_code == 3
    assert "sha256 does not match" in result.output
    assert not (corpus_dir / "stats.json").exists()


def test_cli_missing_directory_is_an_error(tmp_path: Path):
    result = CliRunner().invoke(main, ["measure", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such corpus directory" in result.output


def test_measure_against_another_corpus_prints_them_side_by_side_and_writes_only_into_dir(corpus_dir, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(corpus_dir, other)
    result = CliRunner().invoke(main, ["measure", str(corpus_dir), "--against", str(other)])
    assert result.exit_code == 0, result.output
    assert "realism: the corpora side by side" in result.output
    for label in ("words / meeting (median)", "turn words p50", "backchannel share of turns",
                  "overlapping speech share", "query–gold overlap (median words)", "BM25 R@1 lookup"):
        assert label in result.output
    assert result.output.count("tiny") >= 6  # two corpora, each as a whole and per domain
    assert (corpus_dir / "stats.json").is_file() and not (other / "stats.json").exists()


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "no such corpus directory"),
    (lambda p: (p / "file.txt").write_text("x") and p / "file.txt", "not a directory, so not a corpus"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "no manifest.json; not a corpus directory"),
])
def test_measure_against_a_non_corpus_is_one_line_and_exit_2_before_any_work(corpus_dir, tmp_path, make, message):
    result = CliRunner().invoke(main, ["measure", str(corpus_dir), "--against", str(make(tmp_path))])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and message in result.output
    assert "Traceback" not in result.output
    assert not (corpus_dir / "stats.json").exists()
