"""The exports read back by the libraries people read them with, not by a reader written here: beir's
GenericDataLoader (the BEIR export), ir_datasets' TSV readers (the text made TSV-safe, pyserini's topics and qrels),
ranx (`turnbench export run`), whose nDCG@10 of the exported run is turnbench's own, query by query.

pyserini itself is not installed (a JVM and torch): its JsonCollection files are checked against its documented
shape (a directory of .jsonl files, one {"id", "contents"} object a line). beir is installed by `make setup`
without its dependencies (its models'); its loader needs only tqdm.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.export.test_beir import SMALL, bm25_run, export, read_jsonl
from turnbench.cli import main
from turnbench.export.beir import TSV_BREAKS, tsv_safe


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("beir") / "small"
    r = export(out, "--pyserini")
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def results(exported, tmp_path_factory) -> Path:
    """fixtures/small scored by `turnbench score` on a BEIR-style BM25 run over the export (no stack)."""
    tmp = tmp_path_factory.mktemp("scored")
    run = tmp / "run.trec"
    run.write_text(bm25_run(exported), encoding="utf-8")
    out = tmp / "results"
    r = CliRunner().invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(exported / "passages.jsonl"),
                                  "--run", str(run), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_tsv_safe_replaces_each_break_by_one_space_and_nothing_else():
    text = "a\tb\r\nc\x0bd\x0ce\x1cf\x1dg\x1eh\x85i\u2028j\u2029k  l\x1fm"
    safe = tsv_safe(text)
    assert safe == "a b  c d e f g h i j k  l\x1fm"  # CRLF is two spaces, double spaces kept, U+001F is no break
    assert len(safe) == len(text) and safe.split() == text.split()
    assert safe.splitlines() == [safe] and "\t" not in safe
    assert all(tsv_safe(c) == " " for c in TSV_BREAKS)


def test_beirs_own_loader_reads_tsv_safe_text_and_the_exact_text_is_kept(exported):
    from beir.datasets.data_loader import GenericDataLoader

    corpus, queries, qrels = GenericDataLoader(str(exported)).load(split="test")
    lines = {d["_id"]: d for d in read_jsonl(exported / "corpus.jsonl")}
    inventory = {p["id"]: p for p in read_jsonl(exported / "passages.jsonl")}
    assert len(corpus) == len(lines) == len(inventory) == 773
    originals = {pid: d["metadata"]["original_text"] for pid, d in lines.items()}
    # the passages of several turns are joined by newlines in the index: the case this normalisation is for
    assert sum("\n" in t for t in originals.values()) == 86
    for pid, doc in corpus.items():
        assert doc["text"] == tsv_safe(originals[pid]) and doc["title"] == lines[pid]["title"]
        assert not any(c in doc["text"] + doc["title"] for c in TSV_BREAKS)
        # the exact text, as the index holds it: the sha256 the inventory (and `turnbench score`) checks
        assert hashlib.sha256(originals[pid].encode("utf-8")).hexdigest() == inventory[pid]["text_sha256"]
    # BEIR keeps only the queries with qrels: the 87 turn-level ones with graded passages
    assert len(queries) == len(qrels) == 87 and set(queries) == set(qrels)
    assert all(g in (1, 2, 3) for docs in qrels.values() for g in docs.values())
    meta = json.loads((exported / "export.json").read_text())
    assert meta["format"] == "turnbench-beir-export/2" and meta["text"]["original"] == "metadata.original_text"


def test_ir_datasets_reads_the_text_as_tsv_one_passage_a_line_which_the_original_text_breaks(exported, tmp_path):
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    lines = read_jsonl(exported / "corpus.jsonl")
    safe, raw = tmp_path / "docs.tsv", tmp_path / "raw.tsv"
    safe.write_text("".join(f"{d['_id']}\t{d['text']}\n" for d in lines), encoding="utf-8")
    raw.write_text("".join(f"{d['_id']}\t{d['metadata']['original_text']}\n" for d in lines), encoding="utf-8")
    docs = list(TsvDocs(LocalDownload(safe)).docs_iter())
    assert [(d.doc_id, d.text) for d in docs] == [(d["_id"], d["text"]) for d in lines]
    # the control: the same file with the original text (newlines inside) is not one passage a line
    assert len(raw.read_text(encoding="utf-8").splitlines()) > len(lines)

    topics_file = LocalDownload(exported / "pyserini" / "queries.tsv")
    topics = {q.query_id: q.text for q in TsvQueries(topics_file).queries_iter()}
    assert topics == {q["_id"]: q["text"] for q in read_jsonl(exported / "queries.jsonl")} and len(topics) == 103
    qrels: dict[str, dict[str, int]] = {}
    for q in TrecQrels(LocalDownload(exported / "pyserini" / "qrels.txt"), {}).qrels_iter():
        qrels.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    from beir.datasets.data_loader import GenericDataLoader

    assert qrels == GenericDataLoader(str(exported)).load(split="test")[2]


def test_the_pyserini_collection_is_a_directory_of_id_contents_lines(exported):
    collection = exported / "pyserini" / "corpus"
    assert sorted(p.name for p in collection.iterdir()) == ["docs.jsonl"]
    docs = read_jsonl(collection / "docs.jsonl")
    assert all(set(d) == {"id", "contents"} and isinstance(d["contents"], str) for d in docs)
    assert [(d["id"], d["contents"]) for d in docs] == [(d["_id"], d["text"]) for d in read_jsonl(
        exported / "corpus.jsonl")]
    files = json.loads((exported / "export.json").read_text())["files"]
    assert {"pyserini/corpus/docs.jsonl", "pyserini/queries.tsv", "pyserini/qrels.txt"} <= set(files)
    assert files["pyserini/corpus/docs.jsonl"] == hashlib.sha256((collection / "docs.jsonl").read_bytes()).hexdigest()


def export_run(source: Path, out: Path, *args: str):
    return CliRunner().invoke(main, ["export", "run", str(source), "--format", "ranx", "--out", str(out), *args])


# ranx's own nDCG kernel casts its counts (numba says so, once per compile): nothing turnbench hands it
@pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64")
def test_ranx_reads_the_exported_run_and_finds_turnbenchs_ndcg_query_by_query(results, tmp_path):
    from ranx import Qrels, Run, evaluate

    before = {p.name: p.read_bytes() for p in results.iterdir()}
    out = tmp_path / "run.json"
    r = export_run(results, out)
    assert r.exit_code == 0, r.output
    assert {p.name: p.read_bytes() for p in results.iterdir()} == before  # the results directory untouched
    doc = json.loads((results / "metrics.json").read_text())
    mine = {q["query_id"]: q["values"] for q in doc["retrieval"]["per_query"]}
    qrels = Qrels.from_file(str(results / "qrels.passages.txt"), kind="trec")
    run = Run.from_file(str(out))
    judged = sorted(set(qrels.keys()))
    assert len(judged) == 87 and set(judged) <= set(run.keys()) and len(run.keys()) == 103
    run = run.make_comparable(qrels)  # ranx scores the queries of its qrels only: BEIR's loader keeps the same
    # ranx scores the run as turnbench did: its scores keep turnbench's order, so nDCG@10 and MRR agree
    for metric, name in (("ndcg@10", "nDCG@10"), ("mrr", "MRR"), ("recall@20", "R@20")):
        evaluate(qrels, run, metric)
        theirs = run.scores[metric]
        assert all(abs(theirs[q] - mine[q][name]) < 1e-6 for q in judged), metric
    # the meeting run, against the meeting qrels: every ranked query
    meetings = tmp_path / "meetings.json"
    assert export_run(results, meetings, "--run", "meetings").exit_code == 0
    mqrels = Qrels.from_file(str(results / "qrels.meetings.txt"), kind="trec")
    mrun = Run.from_file(str(meetings)).make_comparable(mqrels)
    evaluate(mqrels, mrun, "ndcg@10")
    assert all(abs(mrun.scores["ndcg@10"][q] - mine[q]["meeting:nDCG@10"]) < 1e-6 for q in mqrels.keys())


def test_the_raw_run_is_the_engines_scores_and_its_ties_are_said(results, tmp_path):
    from turnbench.runfiles import read_trec_run

    out = tmp_path / "raw.json"
    r = export_run(results, out, "--run", "raw")
    assert r.exit_code == 0, r.output
    raw = json.loads(out.read_text())
    expected: dict[str, dict[str, float]] = {}
    for e in read_trec_run(results / "run.raw.trec"):
        expected.setdefault(e.query_id, {})[e.passage_id] = e.score
    assert raw == expected
    tied = sum(1 for d in expected.values() if len(set(d.values())) < len(d))
    assert (f"{tied} queries tie on a score" in r.output) == (tied > 0)


def test_a_run_file_and_a_run_directory_export_too(results, tmp_path):
    rundir = tmp_path / "rundir"
    rundir.mkdir()
    (rundir / "run.trec").write_bytes((results / "run.raw.trec").read_bytes())
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert export_run(rundir, a).exit_code == 0
    assert export_run(rundir / "run.trec", b).exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    r = export_run(rundir, tmp_path / "c.json", "--run", "passages")
    assert r.exit_code == 2 and "run directory" in r.output and not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("case", ["exists", "no-run", "twice", "tampered"])
def test_an_export_run_refusal_is_one_line_with_its_exit_code_and_writes_nothing(results, tmp_path, case):
    import shutil

    source = tmp_path / "source"
    shutil.copytree(results, source)
    out = tmp_path / "run.json"
    code, says = 2, ""
    if case == "exists":
        out.write_text("mine")
        says = "exists"
    elif case == "no-run":
        source = tmp_path / "empty"
        source.mkdir()
        says = "holds no run"
    elif case == "twice":
        run = source / "run.trec"
        line = (results / "run.raw.trec").read_text().splitlines()[0]
        run.write_text(f"{line}\n{line}\n")
        source, says = run, "twice"
    else:
        with (source / "run.passages.trec").open("a") as f:
            f.write("q00001 Q0 m0001:00000 999 -1 tampered\n")
        code, says = 3, "does not match its sha256"
    r = export_run(source, out)
    assert r.exit_code == code, r.output
    assert len(r.output.strip().splitlines()) == 1 and says in r.output and "Traceback" not in r.output
    assert (out.read_text() == "mine") if case == "exists" else not out.exists()


def test_the_api_refuses_a_wrong_argument_before_anything_is_written(results, tmp_path):
    import turnbench.api as turnbench
    from turnbench.errors import BadInput

    with pytest.raises(BadInput, match="pyserini"):
        turnbench.export_beir(SMALL, tmp_path / "beir", pyserini="yes")
    with pytest.raises(BadInput, match="--run 'scored' is not one of passages, meetings, raw"):
        turnbench.export_run(results, tmp_path / "run.json", run="scored")
    with pytest.raises(BadInput, match="--format 'trec' is not one of ranx"):
        turnbench.export_run(results, tmp_path / "run.json", fmt="trec")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    w = turnbench.export_run(results, tmp_path / "run.json")
    assert (w.queries, w.tied_queries, w.source.name) == (103, 0, "run.passages.trec")
