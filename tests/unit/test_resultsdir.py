"""turnbench.results.directory and turnbench.results.integrity: a results directory is read only as it was written.

Each forgery here once passed the gate: per-query values edited to NaN read as "no measurable difference",
edited to 1.0 they read "better" while the file's own rows disagreed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import QUERIES, SUBMITTED, score, small_run
from turnbench.cli import main
from turnbench.errors import BadInput, ResultsIntegrityError
from turnbench.harness.answers import score_answers
from turnbench.harness.compare import compare
from turnbench.harness.exports import FILES
from turnbench.pipeline.answering import attach
from turnbench.results.directory import DIGEST, read_results, write_digest, write_results


@pytest.fixture
def results(tmp_path: Path, small_corpus) -> Path:
    corpus, passages = small_corpus
    res = attach(score(corpus, passages, small_run()), [score_answers(QUERIES, SUBMITTED, corpus="tiny")])
    return write_results(tmp_path / "r", res)


def _edit(directory: Path, change, *, rehash: bool) -> None:
    path = directory / "metrics.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, allow_nan=True))
    if rehash:  # the forger also rewrites the digest: the document must then give itself away
        write_digest(directory)


def test_the_digest_is_what_sha256sum_checks(results: Path) -> None:
    import subprocess

    done = subprocess.run(["sha256sum", "-c", DIGEST], cwd=results, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = [line.split("  ")[1] for line in (results / DIGEST).read_text().splitlines()]
    # runinfo.json holds timings: never claimed; everything else is
    assert listed == sorted(["answers.md", "bindings.jsonl", "metrics.json", "metrics.md", *FILES])
    assert read_results(results).tree["schema_version"] == 2


def test_an_edited_file_is_refused_naming_it(results: Path) -> None:
    _edit(results, lambda d: d["retrieval"]["per_query"][0]["values"].update({"MRR": 1.0}), rehash=False)
    with pytest.raises(ResultsIntegrityError, match=r"metrics.json was changed after it was written"):
        read_results(results)


def test_a_missing_or_extra_file_is_refused(results: Path) -> None:
    (results / "answers.md").unlink()
    with pytest.raises(ResultsIntegrityError, match="answers.md is listed in claim.sha256 but missing"):
        read_results(results)
    write_digest(results)
    (results / "notes.txt").write_text("added later")
    with pytest.raises(ResultsIntegrityError, match="notes.txt is not listed"):
        read_results(results)
    (results / "notes.txt").unlink()
    (results / DIGEST).unlink()
    with pytest.raises(ResultsIntegrityError, match="no claim.sha256"):
        read_results(results)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nan_and_infinity_are_refused_even_with_a_matching_digest(results: Path, value: float) -> None:
    _edit(results, lambda d: d["retrieval"]["per_query"][0]["values"].update({"MRR": value}), rehash=True)
    with pytest.raises(BadInput, match=r"not valid JSON \((NaN|Infinity) is not a number turnbench accepts"):
        read_results(results)


def test_a_per_query_value_that_disagrees_with_its_row_is_refused(results: Path) -> None:
    _edit(results, lambda d: d["retrieval"]["per_query"][0]["values"].update({"MRR": 0.123}), rehash=True)
    with pytest.raises(ResultsIntegrityError, match=r"retrieval row .* says MRR = .*per-query rows give"):
        read_results(results)


def test_a_row_edited_alone_is_refused(results: Path) -> None:
    _edit(results, lambda d: d["retrieval"]["rows"][-1]["means"].update({"MRR": 0.99}), rehash=True)
    with pytest.raises(ResultsIntegrityError, match="retrieval row all says MRR = 0.99, its per-query rows give"):
        read_results(results)


@pytest.mark.parametrize("value", [7, 1.5, -1e-9, True, "0.5", None])
def test_a_value_outside_zero_one_is_refused(results: Path, value) -> None:
    _edit(results, lambda d: d["retrieval"]["per_query"][1]["values"].update({"MRR": value}), rehash=True)
    with pytest.raises(ResultsIntegrityError, match=r"query q\S+ MRR is .*, not a number in \[0, 1\]"):
        read_results(results)


def test_an_answer_score_that_its_answers_do_not_give_is_refused(results: Path) -> None:
    def flip(d):
        row = next(r for r in d["answers"]["per_query"] if r["em"] == 0.0)
        row["em"] = 1.0

    _edit(results, flip, rehash=True)
    with pytest.raises(ResultsIntegrityError, match=r"answer q\d says em = 1.0, but its gold and submitted"):
        read_results(results)


def test_a_list_is_not_a_results_document(results: Path) -> None:
    (results / "metrics.json").write_text("[1, 2, 3]\n")
    write_digest(results)
    with pytest.raises(BadInput, match="holds a list, not a results document"):
        read_results(results)


def test_compare_refuses_a_forged_candidate_with_exit_3(results: Path, tmp_path: Path) -> None:
    import shutil

    forged = tmp_path / "forged"
    shutil.copytree(results, forged)
    _edit(forged, lambda d: [r["values"].update({m: 1.0 for m in r["values"]})
                             for r in d["retrieval"]["per_query"]], rehash=True)
    out = CliRunner().invoke(main, ["compare", str(results), str(forged), "--gate"])
    assert out.exit_code == 3
    assert out.stderr.startswith("turnbench: ResultsIntegrityError: ") and "per-query rows give" in out.stderr
    # the genuine pair still compares
    assert compare(read_results(results), read_results(results)).gate_failures() == []


def test_a_corpus_without_answer_questions_reads_back_and_a_row_claiming_some_is_refused(
        tmp_path: Path, small_corpus) -> None:
    """QMSum has no aggregation question: its answers block holds three rows of 0 questions and no per-query row.
    bench wrote that and then refused to read it (agreement and compare on QMSum results failed)."""
    corpus, passages = small_corpus
    res = attach(score(corpus, passages, small_run()), [score_answers([], {}, corpus="tiny")])
    written = write_results(tmp_path / "r", res)
    doc = read_results(written).tree
    assert doc["answers"]["per_query"] == [] and [r["questions"] for r in doc["answers"]["rows"]] == [0, 0, 0]
    _edit(written, lambda d: d["answers"]["rows"][-1].update({"questions": 5}), rehash=True)
    with pytest.raises(ResultsIntegrityError, match="answers row all/all/all says questions = 5, its per-query rows "
                                                    "give 0"):
        read_results(written)


def test_a_consistently_rehashed_forgery_is_refused_by_the_evidence_beside_it(tmp_path):
    """Per-query values, rows and claim.sha256 rewritten together pass the digest; the exported qrels and run the
    values came from do not agree, and compare, report and agreement all say so (exit 3, naming the query)."""
    import json

    from click.testing import CliRunner

    from tests.unit.harness.helpers import ranked_results_dir, rows_of
    from turnbench.cli import main
    from turnbench.results.directory import read_results, write_digest

    ranks = {f"q{i:02d}": ("lookup", 1 + i % 5) for i in range(12)}
    base = ranked_results_dir(tmp_path / "base", ranks)
    forged = ranked_results_dir(tmp_path / "forged", ranks, arm="forged")
    doc = json.loads((forged / "metrics.json").read_text())
    row = doc["retrieval"]["per_query"][3]
    row["values"] = {m: 1.0 for m in row["values"]}  # rank 4 claimed as rank 1
    doc["retrieval"]["rows"] = rows_of("c", doc["retrieval"]["per_query"], doc["retrieval"]["measures"], {})
    (forged / "metrics.json").write_text(json.dumps(doc))
    write_digest(forged)
    with pytest.raises(ResultsIntegrityError, match=r"query q03 MRR: metrics.json says 1.0, its exported qrels and "
                                                    r"run give 0.25"):
        read_results(forged)
    runner = CliRunner()
    for args in (["compare", str(base), str(forged), "--gate"],
                 ["report", str(forged), "--out", str(tmp_path / "r.html")],
                 ["agreement", str(base), str(forged), str(base)]):
        r = runner.invoke(main, args)
        assert r.exit_code == 3 and "query q03 MRR" in r.output and len(r.output.strip().splitlines()) == 1, args
    # deleting the evidence instead is no way round it
    (forged / "run.passages.trec").unlink()
    write_digest(forged)
    with pytest.raises(ResultsIntegrityError, match="metrics.json records run.passages.trec, which is not here"):
        read_results(forged)


def test_verify_tells_a_change_from_another_cpu_class(tmp_path):
    """Equal digests: verified. Other digests from a CPU with other vector instruction sets: not verifiable here
    (dense vectors follow from the CPU's kernels). Other digests on the same class of CPU: a real difference."""
    import json

    from turnbench.results.verify import DIFFERENT, NOT_HERE, VERIFIED, verify_digests

    def side(name, digest, isa):
        d = tmp_path / name
        d.mkdir()
        vectors = {"vectors": {"embeddings": {"digest": {"sha256": digest}}}}
        doc = {"provenance": {"corpus": {"id": "c"}, "index": vectors, "arm": {}}}
        (d / "metrics.json").write_text(json.dumps(doc))
        (d / "runinfo.json").write_text(json.dumps({"host": {"cpu_vector_isa": isa}}))
        return d

    base = side("base", "a" * 64, "avx avx2 fma avx512f avx512_vnni")
    assert verify_digests("x", base, side("same", "a" * 64, "avx avx2 fma"))[0] == VERIFIED
    outcome, lines = verify_digests("x", base, side("amd", "b" * 64, "avx avx2 fma"))
    assert outcome == NOT_HERE and "NOT VERIFIED on this CPU" in lines[-1] and "[avx avx2 fma]" in lines[-1]
    assert verify_digests("x", base, side("changed", "c" * 64, "avx avx2 fma avx512f avx512_vnni"))[0] == DIFFERENT


def test_a_copy_is_re_derived_once_but_a_tampered_copy_is_still_refused(results: Path, tmp_path: Path,
                                                                        monkeypatch) -> None:
    """compare re-derives a side whose claim.sha256 is byte for byte the other's once (the same evidence); the copy
    is still verified against that digest, so a file changed under an unchanged digest is caught."""
    import shutil

    import turnbench.results.directory as R

    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    calls = []
    real = R.rederive
    monkeypatch.setattr(R, "rederive", lambda doc, files, where: calls.append(where) or real(doc, files, where))
    claims = R.rederive_dirs([results, copy])
    assert calls == [str(results)] and claims[0] == claims[1] == (results / DIGEST).read_text()
    run = copy / "run.passages.trec"
    run.write_bytes(run.read_bytes().replace(b" 1 ", b" 2 ", 1))
    with pytest.raises(ResultsIntegrityError, match="copy: run.passages.trec was changed after it was written"):
        R.rederive_dirs([results, copy])
    out = CliRunner().invoke(main, ["compare", str(results), str(copy)])
    assert out.exit_code == 3 and "run.passages.trec was changed after it was written" in out.stderr


def test_a_run_that_fails_as_its_writer_child_makes_it_leaves_no_directory(tmp_path: Path, small_corpus) -> None:
    from turnbench.harness.exports import RUN_RAW, Lazy
    from turnbench.harness.score import ResultsFiles

    corpus, passages = small_corpus
    res = score(corpus, passages, small_run())

    def broken():
        yield b"q1 Q0 m1:00000 1 1.0 t\n"
        raise BadInput("the run's source vanished while it was written")

    forged = ResultsFiles(res.results, {**res.extra_files, RUN_RAW: Lazy(broken)})
    with pytest.raises(BadInput, match="vanished while it was written"):
        write_results(tmp_path / "r", forged)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "r") == ["corpus"]  # no staging left beside it
    # written whole, the same results are byte for byte those written with every file made here
    write_results(tmp_path / "r2", res)
    assert (tmp_path / "r2" / RUN_RAW).read_bytes() == bytes(res.extra_files[RUN_RAW])


def test_results_whose_children_wrote_their_files_into_the_staging_are_the_same_bytes(tmp_path: Path,
                                                                                      small_corpus) -> None:
    """``score_run(into=...)``: passages.jsonl, the three runs, bindings.jsonl and spans.jsonl are written by the
    children that make them straight into the staged directory; the directory is byte for byte the one written with
    every file handed back, and a file that should be there already and is not is refused, leaving nothing."""
    from turnbench.harness.exports import RUN_RAW, Written
    from turnbench.results.directory import staged_results, write_staged

    corpus, passages = small_corpus
    write_results(tmp_path / "whole", score(corpus, passages, small_run()))
    with staged_results(tmp_path / "staged") as staged:
        res = score(corpus, passages, small_run(), into=staged)
        early = sorted(p.name for p in staged.iterdir() if not p.name.startswith("."))
        assert early == ["bindings.jsonl", "passages.jsonl", "run.meetings.trec", "run.passages.trec",
                         "run.raw.trec", "spans.jsonl"]
        assert all(isinstance(res.extra_files[name], Written) for name in early)
        write_staged(staged, res)
    for name in sorted(p.name for p in (tmp_path / "whole").iterdir()):
        if name != "runinfo.json":
            assert (tmp_path / "staged" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name

    with pytest.raises(ResultsIntegrityError, match="run.raw.trec was to be written"):
        with staged_results(tmp_path / "lost") as staged:
            res = score(corpus, passages, small_run(), into=staged)
            (staged / RUN_RAW).unlink()
            write_staged(staged, res)
    assert not (tmp_path / "lost").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
