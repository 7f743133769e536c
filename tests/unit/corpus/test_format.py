"""Reading and writing a corpus directory (turnbench/corpus/format.py): every hash is verified before
anything is read, missing and extra files are refused, and a write is staged until its manifest exists."""

from __future__ import annotations

import json

import pytest

from tests.unit.corpus.helpers import GOOD, QUERIES, write
from turnbench import canonical
from turnbench.corpus.format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MEETINGS_PER_PART,
    CorpusWriter,
    corpus_sha256,
    open_corpus,
    part_name,
)
from turnbench.errors import BadInput, CorpusIntegrityError


def test_part_files_hold_a_fixed_number_of_meetings_each():
    assert part_name(0) == "meetings/part-0000.jsonl"
    assert part_name(MEETINGS_PER_PART - 1) == "meetings/part-0000.jsonl"
    assert part_name(MEETINGS_PER_PART) == "meetings/part-0001.jsonl"


def test_the_corpus_hash_names_content_not_listing_order():
    files = {"queries.jsonl": "a" * 64, "meetings/part-0000.jsonl": "b" * 64}
    assert corpus_sha256(files) == corpus_sha256(dict(reversed(list(files.items()))))
    assert corpus_sha256(files) != corpus_sha256({**files, "queries.jsonl": "c" * 64})


def test_records_written_are_the_records_read_back(tmp_path):
    corpus = open_corpus(write(tmp_path / "c", GOOD, QUERIES))
    assert list(corpus.iter_meetings()) == GOOD
    assert corpus.queries() == QUERIES
    assert list(corpus.facts()) == []  # no facts.jsonl
    m = corpus.manifest
    assert (m["format"], m["format_version"], corpus.id) == (FORMAT_NAME, FORMAT_VERSION, "qmsum-mini")
    assert sorted(m["files"]) == ["meetings/part-0000.jsonl", "queries.jsonl"]
    assert m["files"]["queries.jsonl"] == canonical.sha256_file(tmp_path / "c" / "queries.jsonl")
    assert corpus.sha256 == corpus_sha256(m["files"])
    prov = corpus.provenance()
    assert (prov["id"], prov["producer"], prov["seed"], prov["licence"]) == (
        "qmsum-mini", "turnbench.qmsum", None, {"tier": "A", "name": "MIT"})



def test_halves_are_the_meetings_in_order_split_where_a_part_ends(tmp_path):
    import msgspec.structs

    one = open_corpus(write(tmp_path / "one", GOOD, QUERIES))
    assert one.halves() is None  # one part file: nothing to split
    many = [msgspec.structs.replace(GOOD[0], id=f"m{k:04d}") for k in range(2 * MEETINGS_PER_PART + 1)]  # three parts
    corpus = open_corpus(write(tmp_path / "three", many, QUERIES))
    here, there = corpus.halves()
    first, second = [m.id for m in here()], [m.id for m in there()]
    assert first + second == [m.id for m in corpus.iter_meetings()] == [m.id for m in many]
    # the cut nearest to half the bytes: one full part here; the other full part and the short third there
    assert len(first) == MEETINGS_PER_PART and len(second) == MEETINGS_PER_PART + 1
    assert [m.id for m in here()] == first  # each half reads afresh when called
    here, there = corpus.halves(0.9)  # nine tenths of the bytes: both full parts here
    assert [m.id for m in here()] + [m.id for m in there()] == [m.id for m in many]
    assert len(list(here())) == 2 * MEETINGS_PER_PART
    here, there = corpus.halves(0.0)  # never an empty run
    assert len(list(here())) == MEETINGS_PER_PART and len(list(there())) == MEETINGS_PER_PART + 1

def test_a_write_that_fails_leaves_nothing_and_the_stage_is_only_usable_inside_with(tmp_path):
    w = CorpusWriter(tmp_path / "out")
    with pytest.raises(RuntimeError, match="outside its `with` block"):
        _ = w.path
    with pytest.raises(OSError, match="injected"), CorpusWriter(tmp_path / "out") as w:
        w.write_meetings(GOOD)
        raise OSError("injected")
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_output_directory_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep").write_text("x")
    with pytest.raises(BadInput, match="not empty"):
        CorpusWriter(tmp_path / "out")


def _manifest(root):
    return json.loads((root / "manifest.json").read_bytes())


def test_reading_refuses_what_is_not_a_corpus(tmp_path):
    # a path that is no corpus at all is the user's to fix (exit 2); a corpus that is damaged is refused (exit 3)
    with pytest.raises(BadInput, match="no such corpus directory"):
        open_corpus(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="no manifest.json"):
        open_corpus(tmp_path / "empty")
    root = write(tmp_path / "c", GOOD, QUERIES)
    (root / "manifest.json").write_text("{")
    with pytest.raises(CorpusIntegrityError, match="not valid JSON"):
        open_corpus(root)
    root = write(tmp_path / "d", GOOD, QUERIES)
    m = _manifest(root)
    m["format_version"] = 2
    canonical.write_json(root / "manifest.json", m)
    with pytest.raises(CorpusIntegrityError, match="is not turnbench-corpus v1"):
        open_corpus(root)


def test_every_file_must_match_the_manifest(tmp_path):
    root = write(tmp_path / "c", GOOD, QUERIES)
    (root / "stats.json").write_text("{}")  # derived, outside the hash list by design
    (root / ".hidden").write_text("ignored")
    open_corpus(root)
    (root / "notes.txt").write_text("x")
    with pytest.raises(CorpusIntegrityError, match="not in the manifest: notes.txt"):
        open_corpus(root)
    (root / "notes.txt").unlink()
    (root / "queries.jsonl").write_bytes((root / "queries.jsonl").read_bytes() + b"\n")
    with pytest.raises(CorpusIntegrityError, match="sha256 does not match the manifest for: queries.jsonl"):
        open_corpus(root)
    assert open_corpus(root, check_hashes=False).queries() == QUERIES  # blank lines are skipped
    m = _manifest(root)
    m["files"]["queries.jsonl"] = canonical.sha256_file(root / "queries.jsonl")
    canonical.write_json(root / "manifest.json", m)
    with pytest.raises(CorpusIntegrityError, match="corpus_sha256 in the manifest does not match"):
        open_corpus(root)
    (root / "queries.jsonl").unlink()
    with pytest.raises(CorpusIntegrityError, match="missing file"):
        open_corpus(root)


def test_the_meetings_of_some_ids_are_exactly_those_in_corpus_order_whatever_their_text_says(tmp_path):
    import msgspec.structs

    base = GOOD[0]
    tricky = msgspec.structs.replace(base.turns[0], text='he said "id":"m0002" and {"id": "m0003"}')
    many = [msgspec.structs.replace(base, id=f"m{k:04d}") for k in range(2 * MEETINGS_PER_PART + 1)]
    many[5] = msgspec.structs.replace(many[5], turns=(tricky, *base.turns[1:]))  # names other meetings in its text
    many[7] = msgspec.structs.replace(many[7], id="réunion-\u00e9\"x")  # an id the file spells with escapes
    corpus = open_corpus(write(tmp_path / "c", many, QUERIES))
    ids = {"m0002", "m0003", many[7].id, "m0100", "absent"}
    got = list(corpus.iter_meetings_of(ids))
    assert got == [m for m in corpus.iter_meetings() if m.id in ids]
    assert [m.id for m in got] == ["m0002", "m0003", many[7].id, "m0100"]
    assert list(corpus.iter_meetings_of(set())) == []
