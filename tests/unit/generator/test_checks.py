"""The synthetic checks (turnbench/generator/checks.py) and the scan they read.

Each corruption of a freshly generated corpus must fail the right named check. Every corruption
re-hashes the manifest afterwards, so the hash check passes and the semantic check is what has to notice.
"""

from __future__ import annotations

import datetime

from tests.unit.generator.helpers import (
    edit_meeting,
    facts,
    meeting,
    meeting_id_first,
    query,
    read_lines,
    rehash,
    write_lines,
)
from turnbench.corpus.checks import check_name, run_check
from turnbench.corpus.format import open_corpus
from turnbench.generator.checks import SYNTHETIC
from turnbench.generator.scan import scan_synthetic
from turnbench.generator.validate import failures, validate_corpus


def _iso_month(label: str) -> str:
    return datetime.datetime.strptime(label, "%B %Y").strftime("%Y-%m")


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


def test_a_lookup_answer_stated_in_a_second_meeting_fails_fact_unique(corpus_copy):
    f = next(f for f in facts(corpus_copy) if f["type"] == "lookup_answer")
    other = next(m for m in (read_lines(p) for p in sorted((corpus_copy / "meetings").glob("*.jsonl")))
                 for m in m if m["id"] != f["meeting"])
    edit_meeting(corpus_copy, other["id"],
                 lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + " " + f["text"]))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["fact_unique"]
    assert f"{f['query']}: {f['subject']} with {f['value']} is said in 2 turns" in results["fact_unique"].detail


def test_a_subject_asked_the_same_thing_twice_fails_fact_unique(corpus_copy):
    rows = facts(corpus_copy)
    a, b = [f for f in rows if f["type"] == "lookup_answer"][:2]
    b["template"], b["subject"] = a["template"], a["subject"]
    write_lines(corpus_copy / "facts.jsonl", rows)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert "fact_unique" in failures(results.values())
    assert f"ask the same of {a['subject']}" in results["fact_unique"].detail


def test_a_turn_ending_with_half_a_marker_fails_the_turn_boundary_check(corpus_copy):
    t = next(f for f in facts(corpus_copy) if f["type"] == "aggregation_target" and f["rule"] == "R3")
    first_word = t["phrase"].split()[0]
    edit_meeting(corpus_copy, meeting_id_first(corpus_copy),
                 lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + f" And the {first_word}."))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert [n for n, r in results.items() if not r.ok] == ["planted_in_short_turns"]
    assert f"ends with '{first_word}'" in results["planted_in_short_turns"].detail


def test_every_synthetic_check_passes_on_the_scan_of_a_fresh_corpus(generated):
    scan = scan_synthetic(open_corpus(generated))
    results = [run_check(c, scan) for c in SYNTHETIC]
    assert [r.status for r in results] == ["pass"] * len(SYNTHETIC)
    assert [r.name for r in results] == [check_name(c) for c in SYNTHETIC]


def test_a_fact_the_check_cannot_read_fails_that_check_with_its_error(corpus_copy):
    rows = facts(corpus_copy)
    marker = next(f for f in rows if f["type"] == "marker")
    marker.pop("turn")
    write_lines(corpus_copy / "facts.jsonl", rows)
    rehash(corpus_copy)
    rule = next(f["rule"] for f in rows if f["type"] == "aggregation_target" and f["query"] == marker["query"])
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert results["facts_located"].detail == "malformed corpus data: KeyError: 'turn'"
    counted_by = "month_counts_exact" if rule == "R7" else "marker_counts_exact"
    assert failures(results.values()) == ["facts_located", counted_by]


def _meetings(root):
    return [m for part in sorted((root / "meetings").glob("*.jsonl")) for m in read_lines(part)]


def test_a_speaker_talking_over_themselves_fails_speaker_turns_disjoint(corpus_copy):
    # a turn that overlaps its predecessor, handed to the predecessor's speaker, who then overlaps themselves
    carried = {(f["meeting"], f["turn"]) for f in facts(corpus_copy) if f["meeting"] is not None}
    mid, index = next((m["id"], b["index"]) for m in _meetings(corpus_copy)
                      for a, b in zip(m["turns"], m["turns"][1:], strict=False)
                      if b["start"] < a["end"] and a["speaker"] != b["speaker"] and (m["id"], b["index"]) not in carried
                      and sum(t["speaker"] == b["speaker"] for t in m["turns"]) > 1)

    def take_over(m):
        m["turns"][index]["speaker"] = m["turns"][index - 1]["speaker"]

    edit_meeting(corpus_copy, mid, take_over)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["speaker_turns_disjoint"]
    assert f"{mid}#{index} starts at" in results["speaker_turns_disjoint"].detail


def test_a_session_naming_another_series_in_full_fails_series_named_in_speech(corpus_copy):
    mention = next(f for f in facts(corpus_copy) if f["type"] == "series_mention" and f["form"] == "full")
    own = f"{mention['team']} — {mention['kind']} #"
    other = next(m for m in _meetings(corpus_copy) if not m["title"].startswith(own))
    edit_meeting(corpus_copy, other["id"], lambda m: m["turns"][0].__setitem__(
        "text", m["turns"][0]["text"] + f" As the {mention['team']} {mention['kind']} said."))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    # an R6 question's series is the meetings that say its name, so the extra session fails its answer too
    asked = any(f["type"] == "aggregation_target" and f["rule"] == "R6"
                and (f["team"], f["kind"]) == (mention["team"], mention["kind"]) for f in facts(corpus_copy))
    assert failures(results.values()) == ["attendance_max_unique"] * asked + ["series_named_in_speech"]
    assert f"{other['id']}#0 names the series" in results["series_named_in_speech"].detail
    if asked:
        assert f"named in {other['id']}" not in results["attendance_max_unique"].detail
        assert other["id"] in results["attendance_max_unique"].detail


def test_a_mention_recorded_in_the_wrong_form_or_series_fails_series_named_in_speech(corpus_copy):
    rows = facts(corpus_copy)
    team_form = next(f for f in rows if f["type"] == "series_mention" and f["form"] == "team")
    team_form["form"] = "kind"  # the turn names the team, not the kind
    write_lines(corpus_copy / "facts.jsonl", rows)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["series_named_in_speech"]
    assert "does not say the kind name" in results["series_named_in_speech"].detail


def _discussion(root, surface: str):
    q = next(r for r in read_lines(root / "queries.jsonl") if r["rule"] == "R9" and r["surface"] == surface)
    f = next(f for f in facts(root) if f["type"] == "discussion" and f["query"] == q["id"])
    return q, f


def test_a_discussion_named_outside_its_block_fails_discussion_blocks(corpus_copy):
    q, f = _discussion(corpus_copy, "topic")
    other = next(m for m in (read_lines(p) for p in sorted((corpus_copy / "meetings").glob("*.jsonl")))
                 for m in m if m["id"] != f["meeting"])
    edit_meeting(corpus_copy, other["id"], lambda m: m["turns"][2].__setitem__(
        "text", m["turns"][2]["text"] + f" Anyway, the {f['subject']} {f['aspect']} again."))
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["discussion_blocks"]
    assert f"{q['id']}: the {f['subject']} {f['aspect']} is named outside its block" in \
        results["discussion_blocks"].detail


def test_a_discussion_of_one_speaker_fails_discussion_blocks(corpus_copy):
    q, f = _discussion(corpus_copy, "topic")
    one = meeting(corpus_copy, f["meeting"])["turns"][f["turn"]]["speaker"]

    def monologue(m):
        # the block's turns all go to its opener (times kept apart so no speaker overlaps themselves)
        for t in m["turns"][f["turn"]:f["last"] + 1]:
            t["speaker"] = one
        end = m["turns"][f["turn"]]["start"]
        for t in m["turns"][f["turn"]:f["last"] + 1]:
            span = t["end"] - t["start"]
            t["start"] = max(t["start"], end)
            t["end"] = t["start"] + span
            end = t["end"]
    edit_meeting(corpus_copy, f["meeting"], monologue)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert "discussion_blocks" in failures(results.values())
    assert f"{q['id']}: the block has 1 speakers" in results["discussion_blocks"].detail


def test_an_opinion_whose_person_never_speaks_fails_discussion_blocks(corpus_copy):
    q, f = _discussion(corpus_copy, "opinion")
    rows = read_lines(corpus_copy / "queries.jsonl")
    for r in rows:
        if r["id"] == q["id"]:
            r["text"] = r["text"].replace(f["person"], "Nobody")
    write_lines(corpus_copy / "queries.jsonl", rows)
    fs = facts(corpus_copy)
    for x in fs:
        if x.get("query") == q["id"]:
            x["person"] = "Nobody"
    write_lines(corpus_copy / "facts.jsonl", fs)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert "discussion_blocks" in failures(results.values())
    assert f"{q['id']}: Nobody is not both addressed and speaking" in results["discussion_blocks"].detail


def test_questions_that_copy_their_evidence_fail_question_overlap(corpus_copy):
    """Every lookup question made a copy of its evidence's words: a distance of zero, far from any real queries'."""
    rows = read_lines(corpus_copy / "queries.jsonl")
    texts = {(m["id"], t["index"]): t["text"] for p in sorted((corpus_copy / "meetings").glob("*.jsonl"))
             for m in read_lines(p) for t in m["turns"]}
    for r in rows:
        if r["class"] == "lookup" and r["rule"] == "R1":
            (mid,) = r["gold_meetings"]
            r["text"] = texts[(mid, r["answer_turns"][mid][0])]
    write_lines(corpus_copy / "queries.jsonl", rows)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["question_overlap"]
    assert "largest gap to the calibration" in results["question_overlap"].detail


def test_an_opinion_whose_gold_credits_another_speakers_turn_fails_discussion_blocks(corpus_copy):
    q, f = _discussion(corpus_copy, "opinion")
    rows = read_lines(corpus_copy / "queries.jsonl")
    (row,) = [r for r in rows if r["id"] == q["id"]]
    assert row["speaker_turns"] == {f["meeting"]: f["named_turns"]}
    row["speaker_turns"] = {f["meeting"]: [f["turn"]]}  # the opening: never the named person's
    write_lines(corpus_copy / "queries.jsonl", rows)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert failures(results.values()) == ["discussion_blocks"]
    assert f"{q['id']}: speaker turns {{'{f['meeting']}': ({f['turn']},)}}, {f['named']} spoke " \
        f"{f['meeting']}#{f['named_turns']}" in results["discussion_blocks"].detail


def test_an_opinion_without_a_distractor_fails_discussion_blocks(corpus_copy):
    q, f = _discussion(corpus_copy, "opinion")
    topic = f"{f['subject']} {f['aspect']}"

    def unsay(m):
        # every turn of someone else between the opening and the close stops naming the aspect (the close still
        # does, as every close does): the named speaker's stand is alone
        for t in m["turns"][f["turn"] + 1:f["last"]]:
            if t["speaker"] != f["named"]:
                t["text"] = t["text"].replace(topic, "matter")
    edit_meeting(corpus_copy, f["meeting"], unsay)
    rehash(corpus_copy)
    results = {r.name: r for r in validate_corpus(corpus_copy)}
    assert "discussion_blocks" in failures(results.values())
    assert f"{q['id']}: no one but {f['named']} names the {topic.lower()} between the opening and the close " \
        "(no distractor)" in results["discussion_blocks"].detail
