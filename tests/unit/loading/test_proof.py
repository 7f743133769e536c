"""The record a load keeps in the state directory and the digests a reuse compares with it (turnbench.loading.proof)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from turnbench.loading import proof

SOURCE = {"content": ["we agreed on the budget"], "meeting_id": "m1", "passage_id": "m1:00000", "start": 0.0,
          "end": 4.5, "turns": [0], "recorded_date": None, "embedding": [0.125, -0.5, 0.25]}


def test_a_document_digest_covers_every_field_and_the_vector_but_not_key_order():
    d = proof.document_digest("m1:00000", SOURCE, "embedding")
    assert d == proof.document_digest("m1:00000", dict(reversed(list(SOURCE.items()))), "embedding")
    assert d != proof.document_digest("m1:00001", SOURCE, "embedding")
    for key, value in [("content", [""]), ("start", 0.5), ("recorded_date", "2026-01-01"), ("embedding", [0.25, -0.5,
                                                                                                        0.125])]:
        assert proof.document_digest("m1:00000", {**SOURCE, key: value}, "embedding") != d, key
    assert proof.document_digest("m1:00000", {**SOURCE, "extra": 1}, "embedding") != d
    # a vector that is not a list of numbers is hashed as text, never skipped
    assert proof.document_digest("m1:00000", {**SOURCE, "embedding": "x"}, "embedding") != d
    # what bulk sends and what a search returns (JSON both ways) digest alike
    assert proof.document_digest("m1:00000", json.loads(json.dumps(SOURCE)), "embedding") == d


def test_combined_digests_name_the_first_meeting_that_differs():
    a = proof.combine({"m1:0": ("m1", "a"), "m2:0": ("m2", "b"), "m2:1": ("m2", "c")})
    assert a["count"] == 3 and sorted(a["per_meeting"]) == ["m1", "m2"]
    b = proof.combine({"m1:0": ("m1", "a"), "m2:0": ("m2", "b"), "m2:1": ("m2", "x")})
    assert a["sha256"] != b["sha256"] and proof.first_meeting_differing(a, b) == "m2"
    missing = proof.combine({"m1:0": ("m1", "a"), "m2:0": ("m2", "b")})
    assert proof.first_meeting_differing(a, missing) == "m2"
    assert proof.first_meeting_differing(a, a) is None


def test_the_record_lives_in_the_state_directory_and_only_turnbench_s_is_read(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    assert proof.read_record("idx") is None
    assert proof.write_record("idx", {"marker": {"a": 1}})
    assert proof.record_path("idx").parent == tmp_path / "state" / "loads"
    assert proof.read_record("idx") == {"marker": {"a": 1}, "format": proof.RECORD_FORMAT, "index": "idx"}
    assert proof.read_record("other") is None
    path = proof.record_path("idx")
    for text in ("not json", json.dumps({"format": "something-else", "index": "idx"}),
                 json.dumps({"format": proof.RECORD_FORMAT, "index": "another"})):
        path.write_text(text)
        assert proof.read_record("idx") is None
    proof.forget("idx")
    assert not path.exists()
    proof.forget("idx")  # nothing to remove: fine


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only mode")
def test_a_state_directory_that_cannot_take_the_record_does_not_fail_the_load(tmp_path: Path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir(mode=0o500)
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(state))
    assert proof.write_record("idx", {"marker": {}}) is False
    proof.forget("idx")


def test_an_unwritable_place_for_the_record_does_not_fail_the_load(tmp_path: Path, monkeypatch):
    (tmp_path / "state").write_text("a file where the directory would be")
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    assert proof.write_record("idx", {"marker": {}}) is False
    proof.forget("idx")
    assert proof.read_record("idx") is None
