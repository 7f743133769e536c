"""`turnbench export beir`: read back by a reader written here (json and csv only, none of turnbench's readers), a
BEIR-style retriever's run over it scored back by `turnbench score`, byte-identical exports, and one-line refusals.

Hand-derived figures for fixtures/small (its manifest, corpus v5): 131 queries, of which 28 aggregation (scored on
answers, left out), 72 lookup + 8 multi_file + 7 summary requests about one discussion (turn level) and 16
summarize (meeting level): 103 exported, 87 of them judged on passages. 773 passages at 200 words (the load's
count, tests/integration/engines/test_dense.py).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "fixtures" / "small"


def export(out: Path, *args: str):
    return CliRunner().invoke(main, ["export", "beir", str(SMALL), "--out", str(out), *args])


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("beir") / "small"
    r = export(out)
    assert r.exit_code == 0, r.output
    return out


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0] == ["query-id", "corpus-id", "score"]  # BEIR's header
    out: dict[str, dict[str, int]] = {}
    for qid, did, score in rows[1:]:
        assert did not in out.setdefault(qid, {}), (qid, did)
        out[qid][did] = int(score)
    return out


def read_trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, did, grade = line.split()
        out.setdefault(qid, {})[did] = int(grade)
    return out


def test_an_independent_reader_finds_turnbenchs_passages_queries_and_grades(exported):
    corpus = read_jsonl(exported / "corpus.jsonl")
    queries = read_jsonl(exported / "queries.jsonl")
    qrels = read_qrels(exported / "qrels" / "test.tsv")
    meetings = read_qrels(exported / "qrels" / "meetings.tsv")
    source = read_jsonl(SMALL / "queries.jsonl")

    assert len(corpus) == 773 and len({d["_id"] for d in corpus}) == 773
    assert all(set(d) == {"_id", "title", "text", "metadata"} and d["text"] and d["title"] for d in corpus)
    assert [d["_id"] for d in corpus] == sorted(d["_id"] for d in corpus)
    inventory = read_jsonl(exported / "passages.jsonl")
    assert [p["id"] for p in inventory] == [d["_id"] for d in corpus]  # the ids `turnbench score` is given

    retrieval = {q["id"]: q for q in source if q["scored_on"] == "retrieval"}
    assert len(source) == 131 and len(retrieval) == 103
    assert {q["_id"]: q["text"] for q in queries} == {i: q["text"] for i, q in retrieval.items()}
    by_level = {lvl: {q["_id"] for q in queries if q["metadata"]["level"] == lvl} for lvl in ("turn", "meeting")}
    assert len(by_level["turn"]) == 87 and len(by_level["meeting"]) == 16
    assert {retrieval[q]["class"] for q in by_level["meeting"]} == {"summarize"}

    assert set(qrels) == by_level["turn"]  # every turn-level query of this corpus is judgeable; summarize has none
    known = {d["_id"] for d in corpus}
    assert all(did in known and 1 <= g <= 3 for grades in qrels.values() for did, g in grades.items())
    # a meeting-level row per gold meeting of every ranked query, as the source corpus lists them
    assert meetings == {i: {m: 1 for m in q["gold_meetings"]} for i, q in retrieval.items()}
    # every passage graded 3 holds an answer turn: its meeting is one the query names an answer turn in
    meeting_of = {d["_id"]: d["metadata"]["meeting"] for d in corpus}
    for qid, grades in qrels.items():
        for did, g in grades.items():
            if g == 3:
                assert meeting_of[did] in retrieval[qid]["answer_turns"], (qid, did)


def bm25_run(directory: Path, depth: int = 100) -> str:
    """A BEIR-style retriever: BM25 (rank_bm25, lowercased whitespace tokens of title and text) over corpus.jsonl,
    every query of queries.jsonl, written as a TREC run."""
    from rank_bm25 import BM25Okapi

    docs = read_jsonl(directory / "corpus.jsonl")
    bm25 = BM25Okapi([f"{d['title']} {d['text']}".lower().split() for d in docs])
    lines = []
    for q in read_jsonl(directory / "queries.jsonl"):
        scores = bm25.get_scores(q["text"].lower().split())
        top = sorted(range(len(docs)), key=lambda i: (-scores[i], docs[i]["_id"]))[:depth]
        lines += [f"{q['_id']} Q0 {docs[i]['_id']} {r} {scores[i]:.6f} beir-bm25\n" for r, i in enumerate(top, 1)]
    return "".join(lines)


@pytest.mark.parametrize("max_words", [200, 40])
def test_a_beir_style_run_is_scored_back_by_turnbench_score_unchanged(tmp_path, max_words):
    out = tmp_path / "beir"
    assert export(out, "--max-words", str(max_words)).exit_code == 0
    run = tmp_path / "run.trec"
    run.write_text(bm25_run(out), encoding="utf-8")
    results = tmp_path / "results"
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(out / "passages.jsonl"),
                                  "--run", str(run), "--out", str(results)])
    assert r.exit_code == 0, r.output
    doc = json.loads((results / "metrics.json").read_text())
    inventory = doc["provenance"]["inputs"]["passages"]
    assert inventory["sha256"] == json.loads((out / "export.json").read_text())["passages_sha256"]
    assert inventory["count"] == len(read_jsonl(out / "corpus.jsonl"))
    # the grades turnbench scored with are the exported ones, row for row
    assert read_trec_qrels(results / "qrels.passages.txt") == read_qrels(out / "qrels" / "test.tsv")
    assert read_trec_qrels(results / "qrels.meetings.txt") == read_qrels(out / "qrels" / "meetings.tsv")
    if max_words == 40:  # long turns are cut into windows: more passages than at 200 words
        assert len(read_jsonl(out / "corpus.jsonl")) > 779


def test_two_exports_are_byte_identical(exported, tmp_path):
    again = tmp_path / "again"
    assert export(again).exit_code == 0
    files = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert [str(f) for f in files] == ["README.md", "corpus.jsonl", "export.json", "passages.jsonl",
                                       "qrels/meetings.tsv", "qrels/test.tsv", "queries.jsonl"]
    for f in files:
        assert (exported / f).read_bytes() == (again / f).read_bytes(), f
    readme = (exported / "README.md").read_text()
    assert "Licence: MIT, tier A" in readme
    assert "turnbench score --corpus CORPUS_DIR --passages passages.jsonl" in readme
    assert str(tmp_path) not in readme


@pytest.mark.parametrize("make, args, code, says", [
    (lambda t: t / "absent", [], 2, "no such corpus directory"),
    (lambda t: (t / "plain").mkdir() or t / "plain", [], 2, "no manifest.json"),
    (None, ["--max-words", "0"], 2, "0 is not in the range x>=1"),
    (None, ["--max-words", "many"], 2, "'many' is not a valid integer"),
])
def test_hostile_inputs_are_one_line_with_the_right_exit_code(tmp_path, make, args, code, says):
    corpus = make(tmp_path) if make else SMALL
    r = CliRunner().invoke(main, ["export", "beir", str(corpus), "--out", str(tmp_path / "out"), *args])
    assert r.exit_code == code, r.output
    (line,) = r.output.strip().splitlines()
    assert line.startswith("turnbench: BadInput: ") and says in line, line
    assert not (tmp_path / "out").exists()


def test_a_non_empty_out_is_refused_and_left_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = export(out)
    assert r.exit_code == 2 and r.output.strip() == (
        f"turnbench: BadInput: {out}: export directory exists and is not empty; choose a new directory")
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_an_out_inside_the_corpus_or_a_results_directory_is_refused_before_anything_is_written(tmp_path):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SMALL, corpus)
    r = CliRunner().invoke(main, ["export", "beir", str(corpus), "--out", str(corpus / "beir")])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"turnbench: BadInput: --out {corpus / 'beir'} lies inside {corpus}, which this "
                                "command reads; write it elsewhere")
    results = tmp_path / "results"
    results.mkdir()
    (results / "claim.sha256").write_text("")
    r = CliRunner().invoke(main, ["export", "beir", str(corpus), "--out", str(results / "beir")])
    assert r.exit_code == 2 and "lies inside the results directory" in r.output, r.output
    assert sorted(p.name for p in corpus.iterdir()) == sorted(p.name for p in SMALL.iterdir())
    assert [p.name for p in results.iterdir()] == ["claim.sha256"]


def test_a_corpus_whose_files_do_not_match_its_manifest_is_refused(tmp_path):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SMALL, corpus)
    with (corpus / "queries.jsonl").open("a") as f:
        f.write("\n")
    r = CliRunner().invoke(main, ["export", "beir", str(corpus), "--out", str(tmp_path / "out")])
    assert r.exit_code == 3 and r.output.startswith("turnbench: CorpusIntegrityError: "), r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_an_export_stopped_midway_leaves_nothing(tmp_path, monkeypatch):
    """Ctrl-C, SIGTERM and SIGHUP reach the export as KeyboardInterrupt (turnbench.signals): the staged directory
    goes, nothing is left at --out."""
    from turnbench.export import beir

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(beir, "judge", stopped)
    with pytest.raises(KeyboardInterrupt):
        beir.export_beir(SMALL, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
