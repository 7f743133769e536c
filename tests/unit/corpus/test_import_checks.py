"""Importers write only corpora turnbench reads: a record its readers, the loader or a TREC run line would refuse
is refused at import, in one line naming the source file and the meeting, exit 2, and nothing is written (no
corpus, no staged directory) — the rules are corpus.checks' and the records' own, not a copy of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.corpus.helpers import GOOD, QMSUM_FIXTURE, REPO, m
from turnbench.cli import main
from turnbench.corpus.imports import write_imported
from turnbench.corpus.records import Query, Turn
from turnbench.errors import BadInput

MEETINGQA = REPO / "tests" / "fixtures" / "meetingqa" / "ProcessedTranscripts" / "Annotated-AMI-QA"


def _refused(tmp_path: Path, kind: str, source: Path, *messages: str) -> None:
    out = tmp_path / "out"
    before = sorted(p.name for p in tmp_path.iterdir())
    # edited copies of the fixtures, which are no release: what is checked here is what comes after verification
    result = CliRunner().invoke(main, ["import", kind, str(source), "--out", str(out), "--allow-unverified"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnbench: BadInput: "), result.stderr
    for message in messages:
        assert message in lines[0], lines[0]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no staged directory left behind


def _qmsum_copy(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(QMSUM_FIXTURE / "ALL", src)
    return src


def test_a_qmsum_meeting_id_with_a_space_is_refused_at_import(tmp_path: Path) -> None:
    src = _qmsum_copy(tmp_path)
    (src / "train" / "Bmr001.json").rename(src / "train" / "Bmr 001.json")
    _refused(tmp_path, "qmsum", src, "train/Bmr 001.json: meeting 'Bmr 001': meeting id 'Bmr 001' holds ' '",
             "nothing was written")


def test_a_jsonl_meeting_id_with_a_tab_is_refused_naming_the_line(tmp_path: Path) -> None:
    line = {"meeting_id": "a\tb", "meeting_transcripts": [{"speaker": "A", "content": "hello there"}],
            "general_query_list": [{"query": "Summarize the meeting"}], "specific_query_list": []}
    src = tmp_path / "val.jsonl"
    src.write_text(json.dumps(line) + "\n")
    _refused(tmp_path, "qmsum", src, "val.jsonl line 1: meeting 'a\\tb': meeting id 'a\\tb' holds '\\t'")


def test_a_nul_in_a_qmsum_turn_is_refused_at_import(tmp_path: Path) -> None:
    src = _qmsum_copy(tmp_path)
    path = src / "train" / "ES2002a.json"
    d = json.loads(path.read_text())
    d["meeting_transcripts"][1]["content"] = "a \u0000 b"
    path.write_text(json.dumps(d))
    _refused(tmp_path, "qmsum", src, "train/ES2002a.json: meeting 'ES2002a': turns[1].text holds a NUL character")


def test_a_meetingqa_meeting_left_without_turns_is_refused_at_import(tmp_path: Path) -> None:
    src = tmp_path / "test"
    shutil.copytree(MEETINGQA / "test", src)
    question = {"possible": True, "meaningful": True, "questionContext": [], "combinedQuestion": [],
                "unanswerableReason": "", "confidentAnswer": True, "externalReview": False}
    # two questions answering each other: both are removed from the transcript (the leakage control), nothing is left
    sentences = [{"displayText": text, "speakerFaceId": str(n), "sentenceId": n,
                  "question": {**question, "answerSpan": [1 - n]}} for n, text in enumerate(["Why?", "Why not?"])]
    (src / "EN2098c.json").write_text(json.dumps({"displayText": "Why? Why not?", "sentences": sentences}))
    _refused(tmp_path, "meetingqa", src, "test/EN2098c.json: meeting 'EN2098c': meeting EN2098c has no turns")


def test_what_the_records_pass_but_the_corpus_checks_refuse_is_refused_too(tmp_path: Path) -> None:
    """The staged corpus is run through every generic check before it is renamed into place."""
    overlapping = m("c", [Turn(0, "x", 0.0, 5.0, "one"), Turn(1, "x", 1.0, 2.0, "inside its own speaker's turn")])
    query = Query("q1", "lookup", "R1", "qmsum", "what", "retrieval", ("c",), {"c": ((0, 1),)})
    with pytest.raises(BadInput, match="fails the check speaker_turns_disjoint .*c#1 starts at 1.0"):
        write_imported(tmp_path / "out", [*GOOD, overlapping], [query], corpus_id="x", licence={}, producer={},
                       counts={})
    assert sorted(p.name for p in tmp_path.iterdir()) == []
