"""`turnbench score --hits`: a product's hits as (meeting, start, end[, speaker][, text]) per question, judged by the
words their spans hold — the held-out product path: the corpus exported as WebVTT, chunked and ranked by code that
sees only those files, its hits scored; and every hostile hits file refused in one line, nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.runfiles import read_hits

SMALL = Path(__file__).resolve().parents[2] / "fixtures" / "small"
WORD = re.compile(r"\w+")


def _product(transcripts: Path, out: Path, *, with_text: bool = True, with_speaker: bool = False) -> Path:
    """A separate product: reads only the exported WebVTT files and questions, joins every 3 cues into a chunk,
    ranks chunks by the question words they share, and hands back its top 20 as hits."""
    import webvtt

    chunks = []
    for f in sorted((transcripts / "meetings").iterdir()):
        cues = webvtt.read(str(f)).captions
        for i in range(0, len(cues), 3):
            group = cues[i:i + 3]
            chunks.append((f.stem, group[0].start_time.in_milliseconds() / 1000,
                           max(c.end_time.in_milliseconds() for c in group) / 1000,
                           " ".join(c.text for c in group), group[0].voice))
    lines = []
    for line in (transcripts / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        asked = set(WORD.findall(q["text"].lower()))
        ranked = sorted(((len(asked & set(WORD.findall(c[3].lower()))), n) for n, c in enumerate(chunks)),
                        key=lambda x: (-x[0], x[1]))[:20]
        for score, n in ranked:
            meeting, start, end, text, voice = chunks[n]
            hit = {"query": q["id"], "meeting": meeting, "start": start, "end": end, "score": score}
            if with_text:
                hit["text"] = text
            if with_speaker:
                hit["speaker"] = voice
            lines.append(json.dumps(hit) + "\n")
    out.write_text("".join(lines))
    return out


def test_a_product_that_sees_only_the_webvtt_export_is_scored_by_the_words_its_hits_hold(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["export", "transcripts", str(SMALL), "--format", "webvtt", "--out",
                                     str(tmp_path / "vtt")]).exit_code == 0
    hits = _product(tmp_path / "vtt", tmp_path / "hits.jsonl")
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--hits", str(hits), "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert doc["retrieval"]["counts"]["queries_ranked"] == 103
    overall = next(row for row in doc["retrieval"]["rows"] if row["class"] == "all")["means"]
    assert overall["nDCG@10"] > 0.3  # word overlap over 3-cue chunks finds the answers
    # the same hits as an inventory and a TREC run: the same judging, the same numbers
    passages, run = read_hits(hits)
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p.to_json()) + "\n" for p in passages))
    (tmp_path / "r.trec").write_text("".join(f"{e.query_id} Q0 {e.passage_id} {e.rank} {e.score!r} x\n" for e in run))
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(tmp_path / "p.jsonl"), "--run",
                                  str(tmp_path / "r.trec"), "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    other = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert other["retrieval"] == doc["retrieval"]
    # judged by their words: the same spans without text are judged by their times, and say so
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--hits", str(_product(
        tmp_path / "vtt", tmp_path / "h2.jsonl", with_text=False)), "--out", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
    import tempfile

    assert not list(Path(tempfile.gettempdir()).glob("turnbench-hits-*"))  # the converted files are not kept


def test_hits_make_one_passage_per_span_indexed_in_time_order() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "h.jsonl"
        path.write_text("".join(json.dumps(h) + "\n" for h in [
            {"query": "q1", "meeting": "m1", "start": 30.0, "end": 40.0},
            {"query": "q1", "meeting": "m1", "start": 10.0, "end": 20.0, "speaker": "Ann"},
            {"query": "q2", "meeting": "m1", "start": 30.0, "end": 40.0, "score": 2.5},
        ]))
        passages, run = read_hits(path)
    assert [(p.start, p.index, p.speaker, p.speakers) for p in passages] == [(10.0, 0, "Ann", None),
                                                                             (30.0, 1, "", ())]
    assert [(e.query_id, e.rank, e.score) for e in run] == [("q1", 1, 1.0), ("q1", 2, 0.5), ("q2", 1, 2.5)]
    assert run[0].passage_id == run[2].passage_id and run[0].passage_id.startswith("hit-")


@pytest.mark.parametrize("content, said", [
    (b"not json\n", "line 1: not a JSON hit"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1}\n', "line 1: a hit is {query, meeting, start, end"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2, "rank": 1}\n', "line 1: a hit is"),
    (b'{"query": "", "meeting": "m0001", "start": 1, "end": 2}\n', "query is a non-empty string"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 5, "end": 2}\n', "not a span of a meeting"),
    (b'{"query": "q00001", "meeting": "m0001", "start": "1", "end": 2}\n', "not a span of a meeting"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2, "speaker": 3}\n', "not a span of a meeting"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2, "score": "high"}\n', "is not a number"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2, "score": 1e999}\n', "not a finite number"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2}\n' * 2, "line 2: query q00001's hit repeats"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2, "score": 1}\n'
     b'{"query": "q00001", "meeting": "m0001", "start": 3, "end": 4}\n', "gives a score on some hits and not"),
    (b"", "holds no hit"),
    (b"\xff\xfe", "not UTF-8 text"),
    (b'{"query": "q00001", "meeting": "m0999", "start": 1, "end": 2}\n', "ForeignInventory"),
    (b'{"query": "q00001", "meeting": "m0001", "start": 1, "end": 9, "text": "words nobody said"}\n', "StaleBinding"),
])
def test_a_hostile_hits_file_is_refused_in_one_line_writing_nothing(tmp_path: Path, content: bytes,
                                                                    said: str) -> None:
    (tmp_path / "hits.jsonl").write_bytes(content)
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--hits", str(tmp_path / "hits.jsonl"), "--out",
                                  str(tmp_path / "out")])
    assert r.exit_code in (2, 3), r.output
    (line,) = r.stderr.strip().splitlines()
    assert said in line and "Traceback" not in r.output, line
    assert r.exit_code == (3 if said in ("ForeignInventory", "StaleBinding") else 2)
    assert not (tmp_path / "out").exists()


def test_score_takes_passages_and_run_or_hits_never_both_nor_half(tmp_path: Path) -> None:
    (tmp_path / "h.jsonl").write_text('{"query": "q00001", "meeting": "m0001", "start": 1, "end": 2}\n')
    for extra in ([], ["--passages", str(tmp_path / "h.jsonl")], ["--run", str(tmp_path / "h.jsonl")],
                  ["--hits", str(tmp_path / "h.jsonl"), "--run", str(tmp_path / "h.jsonl")]):
        r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), *extra, "--out", str(tmp_path / "out")])
        assert r.exit_code == 2 and r.stderr == "turnbench: BadInput: give --passages and --run, or --hits\n", extra
        assert not (tmp_path / "out").exists()
