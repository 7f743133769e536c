"""compare --across-snapshots and reannotate: two snapshots of one corpus, 5 targets changed and 3 deleted (issue 46
item 1). Results are scored by `turnbench score`'s own code path, bindings and all, on each snapshot."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import SNAPSHOT_IDS as IDS
from tests.unit.harness.helpers import forge_qrels, snapshot_pair
from turnbench.cli import main

CHANGED, DELETED, UNCHANGED = IDS[:5], IDS[5:8], IDS[8:]

@pytest.fixture
def sides(tmp_path):
    return snapshot_pair(tmp_path)


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_line(r, code: int, said: str) -> None:
    assert r.exit_code == code, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in r.output, r.stderr


def test_without_across_snapshots_the_comparison_is_still_refused_whole(sides):
    base, cand = sides
    _one_line(_cli("compare", base, cand), 3, "StaleBinding")


def test_across_snapshots_counts_changed_deleted_and_added_and_pairs_the_rest(sides, tmp_path):
    base, cand = sides
    out = tmp_path / "c.json"
    summary = _cli("compare", base, cand, "--across-snapshots")  # what compare prints: the denominator said
    assert "every number above is on 32 of 41 queries paired" in summary.stdout
    r = _cli("compare", base, cand, "--across-snapshots", "--json", out, "--full")
    assert r.exit_code == 0, r.output
    snap = json.loads(out.read_text())["facts"]["snapshots"]
    assert snap["not_comparable"] == {"changed": CHANGED, "deleted": DELETED, "added": ["q41"]}
    assert snap["comparable"] == {"unchanged": UNCHANGED, "reannotated": []}
    assert (snap["paired"], snap["of"]) == (32, 41)
    assert "**32 of 41 queries** paired (32 unchanged, 0 reannotated" in r.stdout
    assert "deleted (only in the baseline): 3: `q06`, `q07`, `q08`" in r.stdout
    assert "changed (bound to other text, no receipt): 5: `q01`" in r.stdout
    rows = json.loads(out.read_text())["rows"]
    assert {row["n"] for row in rows if row["block"] == "retrieval"} == {32}  # only the paired queries are drawn


def test_a_receipt_makes_one_changed_target_comparable_and_the_gate_says_its_denominator(sides, tmp_path):
    base, cand = sides
    receipt = tmp_path / "r.json"
    r = _cli("reannotate", base, cand, "--query", "q03", "--by", "Dana Reviewer", "--at", "2026-12-01", "--out",
             receipt)
    assert r.exit_code == 0, r.output
    first = receipt.read_bytes()
    again = tmp_path / "r2.json"
    assert _cli("reannotate", base, cand, "--query", "q03", "--by", "Dana Reviewer", "--at", "2026-12-01", "--out",
                again).exit_code == 0
    assert again.read_bytes() == first  # canonical bytes: nothing of the clock in them
    doc = json.loads(first)
    entry = doc["reannotations"][0]
    assert (entry["query"], entry["by"], entry["at"]) == ("q03", "Dana Reviewer", "2026-12-01")
    assert entry["old_sha256"] != entry["new_sha256"] and entry["gold"]["passages"] == {"m03:00001": 3}
    out = tmp_path / "c.json"
    r = _cli("compare", base, cand, "--across-snapshots", "--receipts", receipt, "--json", out, "--gate", "--full")
    snap = json.loads(out.read_text())["facts"]["snapshots"]
    assert (snap["paired"], snap["of"]) == (33, 41)
    assert snap["comparable"]["reannotated"] == ["q03"] and "q03" not in snap["not_comparable"]["changed"]
    assert "`q03` re-judged by Dana Reviewer at 2026-12-01" in r.stdout
    assert "**Gate: FAIL** (8 failure(s)) on 33 of 41 queries (the comparable subset across snapshots)" in r.stdout
    _one_line(r, 4, "on 33 of 41 queries paired across snapshots")


@pytest.mark.parametrize("tamper, said", [
    (lambda e: e.update(new_sha256="0" * 64), "query q03's new digest 000000000000… is not the candidate's binding"),
    (lambda e: e.update(old_sha256="0" * 64), "query q03's old digest"),
    (lambda e: e["gold"]["passages"].update({"m03:00000": 1}), "new gold is not the gold the candidate was judged"),
    (lambda e: e.update(query="q10"), "query q10 is unchanged, not changed"),
])
def test_a_tampered_receipt_is_refused_in_one_line(sides, tmp_path, tamper, said):
    base, cand = sides
    receipt = tmp_path / "r.json"
    assert _cli("reannotate", base, cand, "--query", "q03", "--by", "d", "--at", "2026-12-01", "--out",
                receipt).exit_code == 0
    doc = json.loads(receipt.read_text())
    tamper(doc["reannotations"][0])
    receipt.write_text(json.dumps(doc))
    out = tmp_path / "c.md"
    r = _cli("compare", base, cand, "--across-snapshots", "--receipts", receipt, "--out", out)
    _one_line(r, 3, "ReceiptMismatch: ")
    assert said in r.stderr and not out.exists()


def test_a_receipt_for_other_snapshots_is_refused(sides, tmp_path):
    base, cand = sides
    receipt = tmp_path / "r.json"
    assert _cli("reannotate", base, cand, "--query", "q01", "--by", "d", "--at", "2026-12-01", "--out",
                receipt).exit_code == 0
    doc = json.loads(receipt.read_text())
    doc["old_snapshot_sha256"] = "f" * 64
    receipt.write_text(json.dumps(doc))
    _one_line(_cli("compare", base, cand, "--across-snapshots", "--receipts", receipt), 3,
              "ReceiptMismatch: receipt")


@pytest.mark.parametrize("args, code, said", [
    (lambda b, c, w: ["compare", b, c, "--receipts", w / "r.json"], 2, "--receipts is read across snapshots only"),
    (lambda b, c, w: ["compare", b, c, "--across-snapshots", "--receipts", w / "none.json"], 2, "no such file"),
    (lambda b, c, w: ["compare", b, c, "--across-snapshots", "--receipts", w / "junk.json"], 2,
     "not a reannotation receipt"),
    (lambda b, c, w: ["compare", b, c, "--across-snapshots", "--html", w / "p.html"], 2,
     "--across-snapshots does not take --html"),
    (lambda b, c, w: ["compare", b, c, "--across-snapshots", "--corpus", w / "old"], 2, "does not take --corpus"),
    (lambda b, c, w: ["reannotate", b, c, "--query", "q10", "--by", "d", "--at", "2026-12-01", "--out",
                      w / "r.json"], 2, "query q10 is unchanged"),
    (lambda b, c, w: ["reannotate", b, c, "--query", "q06", "--by", "d", "--at", "2026-12-01", "--out",
                      w / "r.json"], 2, "query q06 is deleted"),
    (lambda b, c, w: ["reannotate", b, c, "--query", "q01", "--by", "d", "--at", "yesterday", "--out",
                      w / "r.json"], 2, "--at 'yesterday': give the date"),
    (lambda b, c, w: ["reannotate", b, c, "--query", "q01", "--by", " ", "--at", "2026-12-01", "--out",
                      w / "r.json"], 2, "--by: name who reannotated"),
])
def test_hostile_inputs_are_one_line_each(sides, tmp_path, args, code, said):
    base, cand = sides
    (tmp_path / "junk.json").write_text('{"format": "something else"}')
    r = _cli(*args(base, cand, tmp_path))
    _one_line(r, code, said)
    assert not (tmp_path / "r.json").exists()


def test_the_api_refuses_receipts_without_across_snapshots_and_reannotates(sides):
    from turnbench import api
    from turnbench.errors import BadInput

    base, cand = sides
    with pytest.raises(BadInput, match="receipts are read across snapshots only"):
        api.compare(base, cand, receipts=["r.json"])
    data = api.reannotate(base, cand, ["q02", "q01"], by="d", at="2026-12-01T10:00:00+00:00")
    assert [e["query"] for e in json.loads(data)["reannotations"]] == ["q01", "q02"]
    compared = api.compare(base, cand, across_snapshots=True)
    assert compared.denominator() == "32 of 41 queries"
    with pytest.raises(BadInput, match="no page is drawn across snapshots"):
        compared.to_html()
    with pytest.raises(BadInput, match="across snapshots, texts is not taken"):
        api.compare(base, cand, across_snapshots=True, texts=True)


def test_the_unchanged_queries_still_hold_one_gold_and_a_receipt_pins_the_new_one(sides, tmp_path):
    base, cand = sides
    receipt = tmp_path / "r.json"
    assert _cli("reannotate", base, cand, "--query", "q02", "--by", "d", "--at", "2026-12-01", "--out",
                receipt).exit_code == 0
    # a changed target without a receipt is not compared, whatever its gold: its forgery changes nothing paired
    forge_qrels(cand, "q01")
    assert _cli("compare", base, cand, "--across-snapshots", "--receipts", receipt).exit_code == 0
    # the receipted one's gold forged after its receipt was written: the receipt no longer matches
    forge_qrels(cand, "q02")
    _one_line(_cli("compare", base, cand, "--across-snapshots", "--receipts", receipt), 3,
              "query q02's new gold is not the gold the candidate was judged on")
    # an unchanged query's judgements forged consistently: the two sides' gold differs where it must not
    forge_qrels(cand, "q20")
    _one_line(_cli("compare", base, cand, "--across-snapshots"), 3,
              "DifferentGold: the baseline and the candidate hold different gold: query q20")


def test_a_question_scored_on_its_answer_is_classified_by_its_gold_answer(tmp_path):
    from dataclasses import replace

    from tests.unit.harness.helpers import QUERIES, SUBMITTED, count
    from turnbench.harness.answers import answers_block, score_answers
    from turnbench.harness.snapshots import CHANGED as CH
    from turnbench.harness.snapshots import UNCHANGED as UN
    from turnbench.harness.snapshots import classify
    from turnbench.pipeline.snapshots import targets
    from turnbench.results.record import from_tree

    def record(queries):
        block = answers_block([score_answers(queries, SUBMITTED, corpus="c", answerer="reference")]).to_json()
        return from_tree({"schema_version": 1, "provenance": {"corpus": {"id": "c", "sha256": "s"}},
                          "scope": {"label": "corpus", "oracle": False}, "answers": block})

    (tmp_path / "bindings.jsonl").write_text('{"id":"lookup-1","sha256":"' + "a" * 64 + '","target":"query"}\n')
    old = targets(tmp_path, record(QUERIES))
    moved = [replace(x, answer=count(4)) if x.id == "q1" else x for x in QUERIES]  # q1's count is 3 in the old
    new = targets(tmp_path, record(moved))
    assert old["lookup-1"] == "a" * 64 and set(old) == {x.id for x in QUERIES}
    classes = classify(old, new)
    assert classes[CH] == ("q1",) and "q2" in classes[UN] and "lookup-1" in classes[UN]


def test_a_rule_across_snapshots_says_its_denominator(sides, tmp_path):
    base, cand = sides
    rule = tmp_path / "rule.txt"
    rule.write_text("lookup never down within 0.01\nundetermined fails\n")
    r = _cli("compare", base, cand, "--across-snapshots", "--rule", rule, "--full")
    assert "(on 32 of 41 queries paired across snapshots)" in r.stdout
    _one_line(r, 4, "is failed on 32 of 41 queries paired across snapshots: lookup never down within 0.01")
