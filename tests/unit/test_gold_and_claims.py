"""Both sides of a comparison hold the same gold, and every claimed file is tied to metrics.json (issue 40, classes 3
and 4; docs/design.md §12 rule 5).

Each forgery here is made consistent — the forged directory agrees with itself, so ``read_results`` accepts it — and
once turned a failing comparison into a pass: judgements rewritten with the values and rows they give, an aggregation
question's gold changed with its scores, a claimed file edited and claim.sha256 written again. Each is refused with
exit 3 through the command line; the untouched pair still compares (exit 0), so the checks are not refusals of
everything.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.unit.harness.helpers import QUERIES, SUBMITTED, forge_answer_gold, forge_qrels, reseal, score, small_run
from turnbench.cli import main
from turnbench.errors import DifferentGold, ResultsIntegrityError
from turnbench.harness import exports as X
from turnbench.harness.answers import score_answers
from turnbench.harness.gold import check_same_gold, gold_of
from turnbench.pipeline.answering import attach
from turnbench.pipeline.scoring import attach_report
from turnbench.results.directory import read_results, write_digest, write_results
from turnbench.results.record import from_tree


@pytest.fixture
def pair(tmp_path: Path, small_corpus) -> tuple[Path, Path]:
    """A results directory of the small corpus with report.html (no answers: the corpus has no aggregation
    question), and a byte-for-byte copy of it."""
    corpus, passages = small_corpus
    base = write_results(tmp_path / "base", attach_report(score(corpus, passages, small_run()), corpus))
    cand = tmp_path / "cand"
    shutil.copytree(base, cand)
    return base, cand


@pytest.fixture
def answered(tmp_path: Path, small_corpus) -> tuple[Path, Path]:
    """The same with an answers block and answers.md."""
    corpus, passages = small_corpus
    res = attach(score(corpus, passages, small_run()), [score_answers(QUERIES, SUBMITTED, corpus="tiny")])
    base = write_results(tmp_path / "abase", res)
    cand = tmp_path / "acand"
    shutil.copytree(base, cand)
    return base, cand


def cli(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(out: Result, kind: str, text: str) -> None:
    """Exit 3, one line on stderr naming ``kind`` and holding ``text``."""
    lines = out.stderr.strip().splitlines()
    assert out.exit_code == 3, out.stderr
    assert len(lines) == 1 and lines[0].startswith(f"turnbench: {kind}: ") and text in lines[0], out.stderr


def test_an_untouched_pair_compares_with_and_without_the_corpus(pair, tmp_path: Path) -> None:
    base, cand = pair
    assert cli("compare", base, cand, "--gate").exit_code == 0
    out = cli("compare", base, cand, "--gate", "--corpus", tmp_path / "corpus")
    assert out.exit_code == 0, out.stderr
    assert cli("report", cand, "--out", tmp_path / "r.html").exit_code == 0
    out = cli("report", cand, "--out", tmp_path / "r2.html", "--corpus", tmp_path / "corpus")
    assert out.exit_code == 0, out.stderr


# -- the gold ---------------------------------------------------------------------------------------------------

def test_judgements_forged_consistently_are_refused_against_the_other_side(pair) -> None:
    base, cand = pair
    forge_qrels(cand)
    read_results(cand)  # consistent: the forged directory agrees with itself
    assert (cand / X.QRELS_PASSAGES).read_bytes() != (base / X.QRELS_PASSAGES).read_bytes()
    for a, b in ((base, cand), (cand, base)):
        refused(cli("compare", a, b, "--gate"), "DifferentGold", "hold different gold: query q2: passage m1:00000 is "
                                                                 "graded")


def test_judgements_forged_on_both_sides_are_refused_by_the_corpus(pair, tmp_path: Path) -> None:
    """Two sides forged alike agree with each other: only the corpus, named, gives them away."""
    base, cand = pair
    forge_qrels(base)
    forge_qrels(cand)
    assert cli("compare", base, cand).exit_code == 0  # the same forged gold on both sides: nothing to tell
    refused(cli("compare", base, cand, "--corpus", tmp_path / "corpus"), "DifferentGold",
            "query q2: passage m1:00000 is graded 1 here and 0 by the corpus")
    refused(cli("report", cand, "--baseline", base, "--out", tmp_path / "r.html", "--corpus", tmp_path / "corpus"),
            "DifferentGold", "by the corpus")
    refused(cli("report", cand, "--out", tmp_path / "r.html", "--corpus", tmp_path / "corpus"), "DifferentGold",
            "by the corpus")
    assert not (tmp_path / "r.html").exists()
    assert cli("report", cand, "--out", tmp_path / "r.html").exit_code == 0  # without the corpus, nothing tells


def test_an_aggregation_gold_forged_consistently_is_refused(answered) -> None:
    base, cand = answered
    forge_answer_gold(cand, 6)
    doc = read_results(cand).tree  # consistent
    assert doc["answers"]["per_query"] != read_results(base).tree["answers"]["per_query"]
    refused(cli("compare", base, cand, "--gate"), "DifferentGold", "query q1: its gold answer (metrics.json answers) "
                                                                   "differs")


def test_two_inventories_compare_and_share_the_grades_of_the_passages_both_hold(pair) -> None:
    """Another inventory may grade other passages; a passage both hold with the same record has one grade."""
    base, cand = pair
    rows = (cand / X.PASSAGES).read_bytes().splitlines(keepends=True)
    # a passage no query judges or ranks, held by the candidate at other times: another inventory
    last = json.loads(rows[-1])
    assert last["id"] == "m3:00001"
    rows[-1] = (json.dumps({**last, "end": last["end"] - 0.5}, sort_keys=True, separators=(",", ":")) + "\n").encode()
    (cand / X.PASSAGES).write_bytes(b"".join(rows))
    reseal(cand, lambda d: d["provenance"]["inputs"]["passages"].update(
        sha256=__import__("hashlib").sha256((cand / X.PASSAGES).read_bytes()).hexdigest()))
    assert read_results(cand).provenance.inputs["passages"] != read_results(base).provenance.inputs["passages"]
    out = cli("compare", base, cand, "--gate")
    assert out.exit_code == 0, out.stderr
    forge_qrels(cand)
    refused(cli("compare", base, cand), "DifferentGold", "both inventories hold it alike")
    # every record written another way (keys in another order): the same records, still compared
    rows = [json.loads(r) for r in (cand / X.PASSAGES).read_bytes().splitlines()]
    (cand / X.PASSAGES).write_text("".join(json.dumps(dict(reversed(list(r.items())))) + "\n" for r in rows))
    reseal(cand, lambda d: d["provenance"]["inputs"]["passages"].update(
        sha256=__import__("hashlib").sha256((cand / X.PASSAGES).read_bytes()).hexdigest()))
    refused(cli("compare", base, cand), "DifferentGold", "both inventories hold it alike")


@pytest.mark.parametrize("field", ["bound", "meetings", "spans", "answers"])
def test_each_part_of_the_gold_is_compared_naming_the_first_query(pair, field: str) -> None:
    base, cand = pair
    doc = from_tree(json.loads((base / "metrics.json").read_text()))
    b = gold_of(base, doc)
    check_same_gold(b, gold_of(cand, doc))
    changed = {**{q: v for q, v in getattr(b, field).items()}, "q1": "other", "q2": "other"}
    with pytest.raises(DifferentGold, match=r"query q1: its "):
        check_same_gold(b, replace(b, **{field: changed}))


# -- every claimed file tied to metrics.json ---------------------------------------------------------------------

CLAIMED = ["metrics.md", "report.html", X.PASSAGES, X.RUN_RAW, X.TREC_JSON, X.QRELS_STRICT, X.SPANS, "bindings.jsonl",
           X.RUN_MEETINGS]


def _edit_file(directory: Path, name: str) -> None:
    path = directory / name
    data = path.read_bytes()
    path.write_bytes(data.replace(b"1", b"2", 1) if b"1" in data else data + b"\n")
    write_digest(directory)  # the forger writes the digest again


@pytest.mark.parametrize("name", CLAIMED)
def test_a_claimed_file_edited_and_rehashed_is_refused(pair, tmp_path: Path, name: str) -> None:
    base, cand = pair
    _edit_file(cand, name)
    with pytest.raises(ResultsIntegrityError, match=name.replace(".", r"\.")):
        read_results(cand)
    refused(cli("compare", base, cand), "ResultsIntegrityError", name)
    refused(cli("report", cand, "--out", tmp_path / "r.html"), "ResultsIntegrityError", name)
    assert not (tmp_path / "r.html").exists()


def test_answers_md_edited_and_rehashed_is_refused(answered) -> None:
    base, cand = answered
    _edit_file(cand, "answers.md")
    refused(cli("compare", base, cand), "ResultsIntegrityError", "answers.md")


@pytest.mark.parametrize("name", ["metrics.md", X.TREC_JSON, X.QRELS_STRICT])
def test_a_file_made_from_metrics_json_is_refused_even_with_its_digest_recorded_again(pair, name: str) -> None:
    """metrics.md, trec.json and the strict qrels are made again on read: recording the forged file's sha256 in
    metrics.json as well does not pass them."""
    base, cand = pair
    path = cand / name
    path.write_bytes(path.read_bytes() + b"\n")
    json_doc = json.loads((cand / "metrics.json").read_text())
    json_doc["provenance"]["files"].pop("metrics.md", None)
    if name == "metrics.md":  # seal() writes metrics.md from the document: forge it after
        reseal(cand)
        path.write_bytes(path.read_bytes() + b"\n")
        write_digest(cand)
    else:
        reseal(cand)
    refused(cli("compare", base, cand), "ResultsIntegrityError", f"{name} is not what metrics.json gives")


def test_a_file_not_recorded_in_metrics_json_is_refused_and_so_is_one_missing(pair) -> None:
    base, cand = pair
    (cand / "notes.txt").write_text("added, and listed in claim.sha256")
    write_digest(cand)
    refused(cli("compare", base, cand), "ResultsIntegrityError", "notes.txt is not one of the files metrics.json "
                                                                 "records")
    (cand / "notes.txt").unlink()
    (cand / "report.html").unlink()
    write_digest(cand)
    refused(cli("compare", base, cand), "ResultsIntegrityError", "metrics.json records report.html, which is not here")


def test_results_without_recorded_file_digests_are_refused(pair) -> None:
    """Results written before metrics.json recorded its files: nothing ties them to it, so they are re-scored."""
    base, cand = pair
    doc = json.loads((cand / "metrics.json").read_text())
    del doc["provenance"]["files"]
    (cand / "metrics.json").write_text(json.dumps(doc))
    write_digest(cand)
    refused(cli("compare", base, cand), "ResultsIntegrityError", "metrics.json records no sha256 of the files")


def test_metrics_json_records_every_other_file_and_the_inventory(pair) -> None:
    from turnbench.canonical import sha256_file

    base, _ = pair
    doc = read_results(base).tree
    files = doc["provenance"]["files"]
    assert sorted(files) == sorted(p.name for p in base.iterdir()
                                   if p.name not in ("metrics.json", "metrics.md", "claim.sha256", "runinfo.json"))
    assert all(files[n] == sha256_file(base / n) for n in files)
    assert files[X.PASSAGES] == doc["provenance"]["inputs"]["passages"]["sha256"]


def test_a_meeting_run_forged_with_its_digest_recorded_again_is_refused(pair) -> None:
    """run.meetings.trec is the passage run collapsed to meetings: reordered, and recorded again in metrics.json, it
    is still refused (its meeting values would otherwise follow it)."""
    base, cand = pair
    path = cand / X.RUN_MEETINGS
    lines = path.read_text().splitlines(keepends=True)
    q2 = [i for i, line in enumerate(lines) if line.startswith("q2 ")]
    assert len(q2) >= 2
    a, b = lines[q2[0]].split(), lines[q2[1]].split()
    lines[q2[0]] = " ".join([*a[:2], b[2], *a[3:]]) + "\n"
    lines[q2[1]] = " ".join([*b[:2], a[2], *b[3:]]) + "\n"
    path.write_text("".join(lines))
    reseal(cand)
    refused(cli("compare", base, cand), "ResultsIntegrityError", "query q2: run.meetings.trec is not run.passages.trec "
                                                                 "collapsed to meetings")


def test_another_inventory_recorded_again_but_not_as_the_inventory_scored_is_refused(pair) -> None:
    base, cand = pair
    (cand / X.PASSAGES).write_bytes((cand / X.PASSAGES).read_bytes() + b"\n")
    reseal(cand)  # provenance.files records it; provenance.inputs.passages still names the inventory scored
    refused(cli("compare", base, cand), "ResultsIntegrityError", "passages.jsonl is not the inventory metrics.json was "
                                                                 "scored on")
