"""Records read straight from their bytes (``canonical.read_records(fast=...)``: the passage inventory, a corpus's
meetings) are the records, and the refusals, of the dict-by-dict reader, line for line: each hostile line below is
read both ways and must give the same passage or the same one-line error."""

from __future__ import annotations

import json

import pytest

from turnbench import canonical
from turnbench.corpus.records import Meeting, meeting_lines
from turnbench.errors import BadInput, CorpusIntegrityError
from turnbench.passages import Passage, plain_block, read_passages

SHA = "a" * 64
PLAIN = {"end": 2.5, "id": "m1:0", "index": 0, "kind": "turn", "meeting": "m1", "speaker": "Ann", "start": 1.0,
         "text_sha256": SHA, "words": 3}


def _line(**change: object) -> str:
    d = {**PLAIN, **change}
    return json.dumps({k: v for k, v in d.items() if v is not _GONE}, ensure_ascii=False)


_GONE = object()

# each line is a file of its own (and, below, one file of all the good ones): plain and every way to leave the plain
# shape, be it valid or not
PASSAGE_LINES = [
    _line(),
    _line(start=1, end=3),  # whole numbers for times: read as floats
    _line(index=True), _line(words=False), _line(index=1.0), _line(index=10 ** 30), _line(index=-1), _line(words=-2),
    _line(start=3.0, end=2.0), _line(id=" "), _line(meeting=""), _line(speaker="\t"), _line(id=None),
    _line(kind=None), _line(kind=""), _line(text_sha256=None), _line(text_sha256="A" * 64),
    _line(text_sha256="a" * 63), _line(text_sha256=""), _line(text_sha256="g" * 64),
    _line(kind=_GONE), _line(words=_GONE), _line(text_sha256=_GONE), _line(speaker=_GONE), _line(id=_GONE),
    _line(extra="ignored"), _line(text=None), _line(holds=None), _line(speakers=None),
    _line(holds=[[0, 0, 3]]), _line(holds=[[0, 0, 3], [1, 0, 2]]), _line(holds=[]), _line(holds=[[0, 2, 2]]),
    _line(holds=[[0, 0, 3], [0, 3, 4]]), _line(holds=[[-1, 0, 3]]), _line(holds=[[0, -1, 3]]),
    _line(holds=[[0, 0]]), _line(holds=[[0, True, 3]]), _line(holds=[[0, 0.0, 3]]), _line(holds="all"),
    _line(speaker=_GONE, speakers=["Bo", "Ann"]), _line(speaker=_GONE, speakers="unknown"),
    _line(speaker=_GONE, speakers=["Ann"]), _line(speakers=["Ann", "Bo"]),
    _line(text="one two three", text_sha256=_GONE), _line(text=3),
    _line(id='quote"d'), _line(id="tab\there"), _line(id="nul\u0000"), _line(id="é ü"),
    '{"end":2.5,"id":"m1:0","id":"m1:1","index":0,"kind":"turn","meeting":"m1","speaker":"Ann","start":1.0,'
    f'"text_sha256":"{SHA}","words":3}}',  # a key twice: the last one counts, as json reads it
    '{"end":1e999,"id":"m1:0","index":0,"kind":"turn","meeting":"m1","speaker":"Ann","start":1.0,"words":3}',
    '{"end":NaN,"id":"m1:0","index":0,"kind":"turn","meeting":"m1","speaker":"Ann","start":1.0,"words":3}',
    '{"end":2.5,"id":"m1:0","index":0,"kind":"turn","meeting":"m1","speaker":"Ann","start":1.0,"words":3,}',
    '{"end":2.5,"id":"m1:0","index":00,"kind":"turn","meeting":"m1","speaker":"Ann","start":1.0,"words":3}',
    '{"end":2.5,"spe\\u0061kers":null,"id":"m1:0","index":0,"kind":"turn","meeting":"m1","speaker":"Ann",'
    '"start":1.0,"words":3}',  # an escaped key: "speakers" after all
    '{"end":2.5,"id":"\\ud800","index":0,"kind":"turn","meeting":"m1","speaker":"Ann","start":1.0,"words":3}',
    "\ufeff" + _line(), "  " + _line() + "  ", "[]", "3", "null", _line() + " " + _line(),
]


def _slow_passages(path):
    """The inventory read dict by dict, as before there was a fast path."""
    return list(canonical.read_records(path, Passage.from_json, "a passage record", BadInput))


def _outcome(read, path):
    try:
        return read(path)
    except (BadInput, CorpusIntegrityError) as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("line", PASSAGE_LINES)
def test_a_passage_line_reads_and_is_refused_as_the_dict_reader_reads_it(tmp_path, line):
    path = tmp_path / "passages.jsonl"
    path.write_bytes(line.encode("utf-8", "surrogatepass") + b"\n")
    assert _outcome(read_passages, path) == _outcome(_slow_passages, path)


def test_a_whole_inventory_reads_as_the_dict_reader_reads_it_and_bad_lines_are_named_by_number(tmp_path):
    lines = [_line(id=f"m1:{i}", index=i) for i in range(5)] + ["", "   "] + [_line(id="m1:9", holds=[[0, 0, 3]])]
    path = tmp_path / "passages.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast = read_passages(path)
    assert fast == _slow_passages(path) and len(fast) == 6
    bad = lines[:3] + [_line(index=-1)] + lines[3:]
    path.write_text("\n".join(bad) + "\n", encoding="utf-8")
    assert _outcome(read_passages, path) == _outcome(_slow_passages, path)
    assert "line 4 is not a passage record" in _outcome(read_passages, path)


def test_the_fast_path_reads_the_plain_lines_and_leaves_the_rest():
    lines = [_line().encode(), _line(holds=[[0, 0, 3]]).encode(), _line(text="a b c", text_sha256=_GONE).encode(),
             _line(index=-1).encode(), b"\n", _line(id='q"').encode()]
    found = plain_block(lines)
    assert found[0] == Passage("m1:0", "m1", "Ann", 1.0, 2.5, 0, "turn", SHA, 3)
    assert found[1] is not None and found[1].holds == ((0, 0, 3),)
    assert found[2:] == [None, None, None, None]


MEETING = {"id": "m1", "title": "Sync", "recorded_date": "2026-01-05", "duration": 30.0, "timing": "synthetic",
           "speakers": ["Ann", "Bo"], "attendees": ["Ann", "Bo"], "agenda": ["plan"], "meta": {"team": "x"},
           "turns": [{"index": 0, "speaker": "Ann", "start": 0.0, "end": 10.0, "text": "hello there"},
                     {"index": 1, "speaker": "Bo", "start": 10.0, "end": 30.0, "text": "hi"}]}


def _meeting(**change: object) -> str:
    d = {**MEETING, **change}
    return json.dumps({k: v for k, v in d.items() if v is not _GONE}, ensure_ascii=False)


def _turns(**change: object) -> list[dict]:
    return [{**MEETING["turns"][0], **change}, MEETING["turns"][1]]


MEETING_LINES = [
    _meeting(), _meeting(duration=30), _meeting(recorded_date=None), _meeting(recorded_date=_GONE),
    _meeting(recorded_date=20260105), _meeting(timing=3), _meeting(attendees=_GONE, agenda=_GONE, meta=_GONE),
    _meeting(meta={"n": 1}), _meeting(meta=None), _meeting(meta=[["a", "b"]]), _meeting(speakers="Ann"),
    _meeting(speakers=["Ann", 3]), _meeting(title="nul\u0000"), _meeting(title=None), _meeting(id=_GONE),
    _meeting(turns=_turns(index=True)), _meeting(turns=_turns(index=1.9)), _meeting(turns=_turns(index="0")),
    _meeting(turns=_turns(start="0.5")), _meeting(turns=_turns(text="nul\u0000")), _meeting(turns=_turns(text=5)),
    _meeting(turns=_turns(speaker=None)), _meeting(turns=[[0, "Ann", 0.0, 1.0, "x"]]), _meeting(extra=1),
    _meeting(turns=_turns(extra=1)), _meeting(title="é \\ ü"),
    '{"id":"m1","id":"m2","title":"t","duration":1.0,"timing":"synthetic","speakers":[],"turns":[]}',
    '{"id":"\\ud800","title":"t","duration":1.0,"timing":"synthetic","speakers":[],"turns":[]}',
    '{"id":"m1","title":"t","duration":1e999,"timing":"synthetic","speakers":[],"turns":[]}',
    "[]", "\ufeff" + _meeting(),
]


def _meetings(path, fast):
    return list(canonical.read_records(path, Meeting.from_json, "a format-v1 meeting", fast=fast))


@pytest.mark.parametrize("line", MEETING_LINES)
def test_a_meeting_line_reads_and_is_refused_as_the_dict_reader_reads_it(tmp_path, line):
    path = tmp_path / "part-0000.jsonl"
    path.write_bytes(line.encode("utf-8", "surrogatepass") + b"\n")
    fast = _outcome(lambda p: _meetings(p, meeting_lines), path)
    assert fast == _outcome(lambda p: _meetings(p, None), path)
    if isinstance(fast, list):
        assert [m.to_json() for m in fast] == [m.to_json() for m in _meetings(path, None)]
        assert all(type(m.duration) is float and type(m.turns) is tuple for m in fast)


def test_a_kept_subset_of_meetings_is_read_the_same_both_ways(tmp_path):
    lines = [_meeting(id=f"m{i}") for i in range(4)] + [_meeting(id="m9", title=None)]
    path = tmp_path / "part-0000.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def keep(line: bytes) -> bool:
        return b'"m1"' in line or b'"m3"' in line

    fast = list(canonical.read_records(path, Meeting.from_json, "m", keep=keep, fast=meeting_lines))
    assert [m.id for m in fast] == ["m1", "m3"]
    with pytest.raises(CorpusIntegrityError, match="line 5 is not"):
        list(canonical.read_records(path, Meeting.from_json, "m", fast=meeting_lines))
