"""Corrupt a freshly generated corpus in distinct ways; the right named check must fail each time.

Apart from the integrity case, every corruption re-hashes the manifest afterwards, so the hash check
passes and the semantic check is what has to notice.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.generator.helpers import edit_meeting, meeting, read_lines, rehash, write_lines
from turnbench.cli import main
from turnbench.errors import CorpusIntegrityError
from turnbench.generator.validate import CHECK_NAMES, failures, tokens, validate_corpus


def facts(root):
    return read_lines(root / "facts.jsonl")


def query(root, qid):
    (q,) = [q for q in read_lines(root / "queries.jsonl") if q["id"] == qid]
    return q


def test_fresh_corpus_passes_every_check(generated):
    results = validate_corpus(generated)
    assert [r.name for r in results] == list(CHECK_NAMES)
    assert len(results) >= 10
    assert failures(results) == []
    assert all(r.status == "pass" for r in results)


def _r3_marker(root, single_occurrence: bool):
    """An R3 query with a non-zero answer and, if asked, a meeting holding its phrase exactly once."""
    fs = facts(root)
    for t in (f for f in fs if f["type"] == "aggregation_target" and f["rule"] == "R3"):
        written = [f for f in fs if f["type"] == "marker" and f["query"] == t["query"]]
        per_meeting = {}
        for f in written:
            per_meeting.setdefault(f["meeting"], []).append(f)
        once = [fl[0] for m, fl in sorted(per_meeting.items()) if len(fl) == 1]
        if written and (once or not single_occurrence):
            return t, (once[0] if single_occurrence else written[0]), sorted(per_meeting)
    raise AssertionError("no usable R3 marker in the test corpus")


def test_removing_one_marker_occurrence_fails_marker_counts(corpus_copy):
    target, fact, _ = _r3_marker(corpus_copy, single_occurrence=True)

    def drop(m):
        turn = m["turns"][fact["turn"]]
        assert fact["text"] in turn["text"]
        turn["text"] = turn["text"].replace(fact["text"], "We should check the plan.")

    edit_meeting(corpus_copy, fact["meeting"], drop)
    rehash(corpus_copy)
    failed = failures(validate_corpus(corpus_copy))
    assert "marker_counts_exact" in failed
    assert "manifest_hashes" not in failed


def test_a_stray_marker_occurrence_fails_marker_counts(corpus_copy):
    target, _, holders = _r3_marker(corpus_copy, single_occurrence=False)
    outsider = next(m["id"] for m in read_lines(sorted((corpus_copy / "meetings").glob("*.jsonl"))[0])
                    if m["id"] not in holders)

    def add(m):
        m["turns"][0]["text"] += f" Also the {target['phrase']} again."

    edit_meeting(corpus_copy, outsider, add)
    rehash(corpus_copy)
    assert failures(validate_corpus(corpus_copy)) == ["marker_counts_exact"]


def test_shifting_a_gold_turn_index_fails_lookup_answer(corpus_copy):
    rows = read_lines(corpus_copy / "queries.jsonl")
    q = next(r for r in rows if r["class"] == "lookup")
    (mid,) = q["gold_meetings"]
    q["answer_turns"][mid] = [t + 1 for t in q["answer_turns"][mid]]
    q["gold_turns"][mid] = [[a + 1, b + 1] for a, b in q["gold_turns"][mid]]
    write_lines(corpus_copy / "queries.jsonl", rows)
    rehash(corpus_copy)
    failed = failures(validate_corpus(corpus_copy))
    assert "lookup_answer_in_turn" in failed


def test_editing_text_without_the_manifest_is_an_integrity_refusal(corpus_copy):
    mid = read_lines(corpus_copy / "queries.jsonl")[0]["gold_meetings"][0]
    edit_meeting(corpus_copy, mid, lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + " Edited."))
    with pytest.raises(CorpusIntegrityError, match="sha256 does not match"):
        validate_corpus(corpus_copy)
    result = CliRunner().invoke(main, ["validate", str(corpus_copy)])
    assert result.exit_code == 3
    assert "CorpusIntegrityError" in result.output


def test_truncating_a_meeting_file_fails_gold_refs(corpus_copy):
    last = sorted((corpus_copy / "meetings").glob("part-*.jsonl"))[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-3]))
    rehash(corpus_copy)
    failed = failures(validate_corpus(corpus_copy))
    assert "gold_refs_real" in failed
    assert "manifest_counts" in failed


def test_swapping_speakers_in_an_answer_turn_fails_lookup_answer(corpus_copy):
    f_answer = next(f for f in facts(corpus_copy) if f["type"] == "lookup_answer")
    f_setup = next(f for f in facts(corpus_copy) if f["type"] == "lookup_setup" and f["query"] == f_answer["query"])

    def swap(m):
        a, s = m["turns"][f_answer["turn"]], m["turns"][f_setup["turn"]]
        a["speaker"], s["speaker"] = s["speaker"], a["speaker"]

    edit_meeting(corpus_copy, f_answer["meeting"], swap)
    rehash(corpus_copy)
    failed = failures(validate_corpus(corpus_copy))
    assert "lookup_answer_in_turn" in failed
    assert "marker_counts_exact" not in failed


def test_an_extra_deferral_fails_deferral_counts(corpus_copy):
    t = next(f for f in facts(corpus_copy) if f["type"] == "aggregation_target" and f["rule"] == "R5")
    edit_meeting(corpus_copy, meeting_id_first(corpus_copy),
                 lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + f" Defer the {t['item']}."))
    rehash(corpus_copy)
    assert failures(validate_corpus(corpus_copy)) == ["deferral_counts_exact"]


def test_moving_a_meeting_to_another_month_fails_month_counts(corpus_copy):
    fs = facts(corpus_copy)
    t = next(f for f in fs if f["type"] == "aggregation_target" and f["rule"] == "R7"
             and query(corpus_copy, f["query"])["answer"]["count"] > 0)
    holder = next(f["meeting"] for f in fs if f["type"] == "marker" and f["query"] == t["query"]
                  and meeting(corpus_copy, f["meeting"])["recorded_date"].startswith(_iso_month(t["month"])))
    edit_meeting(corpus_copy, holder, lambda m: m.__setitem__("recorded_date", "2031-01-01"))
    rehash(corpus_copy)
    assert failures(validate_corpus(corpus_copy)) == ["month_counts_exact"]


def test_a_speaker_who_never_attended_gaining_a_turn_fails_attendance(corpus_copy):
    fs = facts(corpus_copy)
    t = next(f for f in fs if f["type"] == "aggregation_target" and f["rule"] == "R6")
    ans = query(corpus_copy, t["query"])["answer"]
    sessions = [m for part in sorted((corpus_copy / "meetings").glob("*.jsonl")) for m in read_lines(part)
                if m["title"].startswith(f"{t['team']} — {t['kind']} #")]
    # give the runner-up one more session in a meeting they did not speak in: a tie or a new leader
    counts = {}
    for m in sessions:
        for s in {tt["speaker"] for tt in m["turns"]}:
            counts[s] = counts.get(s, 0) + 1
    runner = max((c, s) for s, c in counts.items() if s != ans["speaker"])[1]
    target = next(m["id"] for m in sessions if runner not in {tt["speaker"] for tt in m["turns"]})
    edit_meeting(corpus_copy, target, lambda m: m["turns"][-1].__setitem__("speaker", runner))
    rehash(corpus_copy)
    assert "attendance_max_unique" in failures(validate_corpus(corpus_copy))


def meeting_id_first(root):
    return read_lines(sorted((root / "meetings").glob("*.jsonl"))[0])[0]["id"]


def _iso_month(label: str) -> str:
    months = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
              "october", "november", "december"]
    name, year = label.lower().split()
    return f"{year}-{months.index(name) + 1:02d}"


def test_tokens_and_contracts_by_hand():
    from turnbench.generator.validate import contains_tokens, deferral_pattern

    assert tokens("Let us keep the Cedar-Lantern, OK?") == ["let", "us", "keep", "the", "cedar", "lantern", "ok"]
    assert contains_tokens(tokens("the cedar lantern and cedar lanterns"), ("cedar", "lantern")) == 1
    assert contains_tokens(tokens("lantern cedar; cedar pilot lantern"), ("cedar", "lantern")) == 0
    pat = deferral_pattern("billing migration")
    assert len(pat.findall("Defer the billing migration. We defer the billing migration, again.")) == 2
    for near in ("defer the billing migrations", "defer the billing pilot migration", "deferred the billing migration",
                 "defer the billing dashboard", "the billing migration is on track"):
        assert pat.search(near) is None, near


def test_a_lookup_answer_stated_in_a_second_meeting_fails_exclusivity(corpus_copy):
    f = next(f for f in facts(corpus_copy) if f["type"] == "lookup_answer")
    other = next(m for m in (read_lines(p) for p in sorted((corpus_copy / "meetings").glob("*.jsonl")))
                 for m in m if m["id"] != f["meeting"])
    edit_meeting(corpus_copy, other["id"], lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + " " + f["text"]))
    rehash(corpus_copy)
    assert failures(validate_corpus(corpus_copy)) == ["phrase_exclusivity"]


def test_a_meeting_file_cut_mid_line_is_refused_even_with_fresh_hashes(corpus_copy):
    part = sorted((corpus_copy / "meetings").glob("part-*.jsonl"))[0]
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusIntegrityError, match="sha256 does not match"):
        validate_corpus(corpus_copy)
    rehash(corpus_copy)
    with pytest.raises(CorpusIntegrityError, match="is not valid JSON"):
        validate_corpus(corpus_copy)


def test_a_record_missing_a_field_is_refused_not_a_traceback(corpus_copy):
    rows = read_lines(corpus_copy / "queries.jsonl")
    del rows[0]["scored_on"]
    write_lines(corpus_copy / "queries.jsonl", rows)
    rehash(corpus_copy)
    result = CliRunner().invoke(main, ["validate", str(corpus_copy)])
    assert result.exit_code == 3
    assert "not valid format v1 (KeyError: 'scored_on')" in result.output


def test_a_turn_ending_with_half_a_marker_fails_the_turn_boundary_check(corpus_copy):
    t = next(f for f in facts(corpus_copy) if f["type"] == "aggregation_target" and f["rule"] == "R3")
    first_word = t["phrase"].split()[0]
    edit_meeting(corpus_copy, meeting_id_first(corpus_copy),
                 lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + f" And the {first_word}."))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert [n for n, r in results.items() if not r.ok] == ["planted_in_short_turns"]
    assert f"ends with '{first_word}'" in results["planted_in_short_turns"].detail


def test_validate_cli_exits_1_naming_the_failed_check(corpus_copy):
    t = next(f for f in facts(corpus_copy) if f["type"] == "aggregation_target" and f["rule"] == "R5")
    edit_meeting(corpus_copy, meeting_id_first(corpus_copy),
                 lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + f" Defer the {t['item']}."))
    rehash(corpus_copy)
    result = CliRunner().invoke(main, ["validate", str(corpus_copy)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert sum(line.startswith(("PASS  ", "FAIL  ")) for line in lines) == len(CHECK_NAMES)
    assert any(line.startswith("FAIL  deferral_counts_exact") for line in lines)
    assert lines[-1] == "turnbench: CheckFailed: 1 check(s) failed: deferral_counts_exact"
