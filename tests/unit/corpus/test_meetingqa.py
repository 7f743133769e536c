"""The MeetingQA adapter on hand-written meetings in MeetingQA's format (tests/fixtures/meetingqa; no MeetingQA data).

The leakage control is the point of most of these tests: a question's own words (made-up animal names in the
fixture) must reach no turn, so no query can be found by the words it was spoken with, and no gold holds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.corpus.helpers import REPO, fixture_release, fixture_release_of, tree_bytes
from turnbench.cli import main
from turnbench.corpus import meetingqa, open_corpus
from turnbench.errors import BadInput
from turnbench.generator.validate import failures, validate_corpus

FIXTURE = REPO / "tests" / "fixtures" / "meetingqa"
SPLITS = FIXTURE / "ProcessedTranscripts" / "Annotated-AMI-QA"
OWN_WORDS = ("zebra", "quokka", "numbat", "axolotl", "capybara")


@pytest.fixture()
def corpus(tmp_path: Path):
    out = tmp_path / "mqa"
    meetingqa.import_meetingqa([FIXTURE], out, release=fixture_release_of(tmp_path, "meetingqa"))
    return open_corpus(out)


def _queries(corpus) -> dict:
    return {q.id: q for q in corpus.queries()}


def _meetings(corpus) -> dict:
    return {m.id: m for m in corpus.iter_meetings()}


def test_counts_licence_and_refusals(corpus):
    c = corpus.manifest["counts"]
    assert c["meetings"] == 2 and c["meetings_by_split"] == {"test": 1, "train": 1}
    assert c["meetings_by_domain"] == {"non-scenario": 1, "product": 1}
    # ES2099a: the plain, the combined (two annotated sentences, one query) and the context question;
    # EN2099b: the follow-up question only
    assert c["queries"] == 4 and c["questions_annotated"] == 3 + 3
    assert c["queries_refused"] == {"empty_text": 0, "answer_removed": 1, "span_out_of_range": 1}
    assert c["sentences_removed"] == 1 + 2 + 2 + 3 and c["answer_sentences_removed"] == 1 + 1
    assert corpus.licence == {"tier": "B", "name": "CC BY-NC-SA 4.0"}
    refused = {r["query"]: r["reason"] for r in corpus.manifest["producer"]["refused_queries"]}
    assert refused == {"EN2099b-q00000": "answer_removed", "EN2099b-q00004": "span_out_of_range"}
    assert "removed from the transcript" in corpus.manifest["producer"]["leakage_control"]


def test_no_question_words_reach_any_turn(corpus):
    """The leakage control: every imported question's own sentences are gone from every transcript."""
    texts = " ".join(t.text.lower() for m in corpus.iter_meetings() for t in m.turns)
    assert not [w for w in OWN_WORDS if w in texts]
    # and the question text is what was asked, context first
    q = _queries(corpus)
    assert q["ES2099a-q00011"].text == "We said the numbat budget was tight. So what is the numbat budget now?"
    assert q["ES2099a-q00006"].text == "Should the quokka battery be rechargeable? Or replaceable by the user?"


def test_turns_are_speaker_runs_of_what_is_left(corpus):
    es = _meetings(corpus)["ES2099a"]
    assert [(t.speaker, t.text) for t in es.turns] == [
        ("Speaker 0", "Okay, let us start with the remote."),
        ("Speaker 2", "They liked the yellow one. Mostly the yellow, yes."),
        ("Speaker 0", "Right."),
        ("Speaker 3", "About the battery."),
        ("Speaker 1", "Rechargeable, with a dock."),
        # the unanswered question stays (nobody imports it); the not-possible one too
        ("Speaker 0", "Does anyone want coffee?"),
        ("Speaker 2", "Is that the wombat prototype?"),
        ("Speaker 1", "Twelve euros per unit."),
    ]
    assert es.title == "ES2099a" and es.timing == "synthetic" and es.recorded_date is None
    assert [t.index for t in es.turns] == list(range(len(es.turns)))


def test_gold_is_the_turns_holding_answer_sentences_never_the_question(corpus):
    q = _queries(corpus)
    assert q["ES2099a-q00001"].gold_turns == {"ES2099a": ((1, 1),)}  # sentences 2-3: one speaker run
    assert q["ES2099a-q00006"].gold_turns == {"ES2099a": ((4, 4),)}  # one query for both annotated sentences
    assert q["ES2099a-q00011"].gold_turns == {"ES2099a": ((7, 7),)}
    # the follow-up question's answer lost sentence 4 (another question's own words): only sentences 2-3 remain
    assert q["EN2099b-q00001"].gold_turns == {"EN2099b": ((0, 0),)}
    for x in q.values():
        assert (x.cls, x.rule, x.surface, x.answer_turns, x.gold_level) == ("lookup", "R1", "meetingqa", {}, "turn")
    assert q["ES2099a-q00001"].meta["multispan"] == "false"


def test_imported_corpus_validates(corpus):
    assert not failures(validate_corpus(corpus.root))


def test_sources_in_every_layout_give_the_same_bytes(tmp_path: Path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    release = fixture_release_of(tmp_path, "meetingqa")
    meetingqa.import_meetingqa([FIXTURE], a, release=release)
    meetingqa.import_meetingqa([SPLITS], b, release=release)
    meetingqa.import_meetingqa([SPLITS / "test", SPLITS / "train"], c, release=release)
    assert tree_bytes(a) == tree_bytes(b) == tree_bytes(c)


def test_bad_sources_are_refused_in_one_line(tmp_path: Path):
    with pytest.raises(BadInput, match="no such file"):
        meetingqa.read_sources([tmp_path / "missing"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BadInput, match="holds no"):
        meetingqa.read_sources([empty])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sentences": [{"displayText": "x", "speakerFaceId": "0", "sentenceId": 3}]}))
    with pytest.raises(BadInput, match="sentenceId 0"):
        meetingqa.read_sources([bad])
    with pytest.raises(BadInput, match="given twice"):
        meetingqa.read_sources([SPLITS / "test", SPLITS / "test" / "EN2099b.json"])


def test_cli_import_and_exit_codes(tmp_path: Path):
    runner = CliRunner()
    release = str(fixture_release(tmp_path / "release.json", "meetingqa"))
    ok = runner.invoke(main, ["import", "meetingqa", str(FIXTURE), "--out", str(tmp_path / "out"),
                              "--release", release])
    assert ok.exit_code == 0, ok.output
    assert "4 queries" in ok.output and "kept out of the transcript" in ok.output
    assert "verified against test/hand-made@000000000000" in ok.output
    again = runner.invoke(main, ["import", "meetingqa", str(FIXTURE), "--out", str(tmp_path / "out"),
                                 "--release", release])
    assert again.exit_code == 2
    missing = runner.invoke(main, ["import", "meetingqa", str(tmp_path / "nope"), "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
