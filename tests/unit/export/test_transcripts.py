"""Transcripts out and in: `export transcripts` writes every meeting as WebVTT, SRT or JSON that the formats' own
readers parse back to the same turns; `import transcripts` makes a corpus of them without gold; hostile files and
options are refused in one line, writing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.corpus.format import open_corpus
from turnbench.corpus.records import Meeting, Turn
from turnbench.corpus.transcripts import read_transcript, write_meeting

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"
EXT = {"webvtt": ".vtt", "srt": ".srt", "json": ".json"}


def _turns(corpus: Path) -> dict[str, list[tuple[str, float, float, str]]]:
    """Each meeting's turns in time order (start, end, index): the order an export writes them in."""
    return {m.id: [(t.speaker, t.start, t.end, t.text) for t in sorted(m.turns, key=lambda t: (t.start, t.end,
                                                                                              t.index))]
            for m in open_corpus(corpus).iter_meetings()}


@pytest.mark.parametrize("fmt", ["webvtt", "srt", "json"])
def test_export_then_parse_with_the_formats_own_readers_gives_the_same_turns(tmp_path: Path, fmt: str) -> None:
    r = CliRunner().invoke(main, ["export", "transcripts", str(SMALL), "--format", fmt, "--out", str(tmp_path / "x")])
    assert r.exit_code == 0, r.output
    assert r.stdout == f"24 meetings (816 turns) as {fmt}, 103 questions without gold -> {tmp_path / 'x'}\n"
    files = sorted((tmp_path / "x" / "meetings").iterdir())
    assert [f.name for f in files][:2] == [f"m0001{EXT[fmt]}", f"m0002{EXT[fmt]}"] and len(files) == 24
    # parsed by the format's own reader, not by turnbench's
    if fmt == "webvtt":
        import webvtt

        cues = webvtt.read(str(files[0])).captions
        got = [(c.voice, c.start_time.in_milliseconds() / 1000, c.end_time.in_milliseconds() / 1000, c.text)
               for c in cues]
    elif fmt == "srt":
        import srt

        got = [(s.content.split(": ", 1)[0], s.start.total_seconds(), s.end.total_seconds(),
                s.content.split(": ", 1)[1]) for s in srt.parse(files[0].read_text())]
    else:
        got = [(s["speaker"], s["start"], s["end"], s["text"]) for s in json.loads(files[0].read_text())["segments"]]
    assert got == _turns(SMALL)["m0001"]
    # the questions, never their gold
    questions = [json.loads(x) for x in (tmp_path / "x" / "questions.jsonl").read_text().splitlines()]
    assert len(questions) == 103 and all(set(q) == {"id", "text"} for q in questions)
    manifest = json.loads((tmp_path / "x" / "transcripts.json").read_text())
    assert manifest["transcripts"] == fmt and manifest["counts"] == {"meetings": 24, "turns": 816, "questions": 103}
    # and read back into a corpus: the same turns, no questions
    r = CliRunner().invoke(main, ["import", "transcripts", str(tmp_path / "x"), "--out", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
    assert _turns(tmp_path / "c") == _turns(SMALL)
    assert list(open_corpus(tmp_path / "c").queries()) == []


def test_two_exports_are_the_same_bytes(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert CliRunner().invoke(main, ["export", "transcripts", str(SMALL), "--format", "webvtt", "--out",
                                         str(tmp_path / name)]).exit_code == 0
    a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert a == b and len(a) == 26


@pytest.mark.parametrize("fmt", ["webvtt", "srt", "json"])
def test_markup_characters_and_arrows_in_a_turn_come_back_as_themselves(fmt: str) -> None:
    said = "if a < b && c > d --> ship it; <b>bold</b> &amp; done\nsecond line"
    m = Meeting("m1", "t", None, 9.0, "measured", ("A <1> & co",), (Turn(0, "A <1> & co", 0.5, 9.0, said),))
    turns, _ = read_transcript(write_meeting(m, fmt), fmt, "m1")
    assert [(t.speaker, t.start, t.end, t.text) for t in turns] == [("A <1> & co", 0.5, 9.0, said)]


def _export(args: list[str], tmp_path: Path) -> object:
    return CliRunner().invoke(main, ["export", "transcripts", *args])


@pytest.mark.parametrize("fmt, text, speaker, said", [
    ("webvtt", "one\n\ntwo", "Ann", "its text holds a blank line, which a webvtt cue cannot carry"),
    ("srt", "one", "Dr: Who", "holds ': ', the SRT speaker prefix's end"),
    ("srt", "one", "  ", "cannot label a srt cue"),
])
def test_a_turn_a_format_cannot_carry_is_refused_nothing_written(tmp_path: Path, fmt: str, text: str,
                                                                 speaker: str, said: str) -> None:
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SMALL, corpus)
    from tests.unit.generator.helpers import rehash

    part = sorted((corpus / "meetings").iterdir())[0]
    rows = [json.loads(x) for x in part.read_text().splitlines()]
    rows[0]["turns"][0]["text"] = text
    rows[0]["turns"][0]["speaker"] = speaker
    rows[0]["speakers"] = sorted(set(rows[0]["speakers"]) | {speaker})
    part.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rehash(corpus)
    r = CliRunner().invoke(main, ["export", "transcripts", str(corpus), "--format", fmt, "--out",
                                  str(tmp_path / "x")])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert said in line and line.endswith("nothing was written"), line
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob(".x.*"))


@pytest.mark.parametrize("name, content, said", [
    ("m1.vtt", b"not a caption file\n", "not WebVTT this reader can take"),
    ("m1.vtt", b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nno voice here\n", "cue 1 has no voice span"),
    ("m1.vtt", b"WEBVTT\n\n00:00:05.000 --> 00:00:02.000\n<v Ann>backwards</v>\n", "cue 1 ends (2.0) before it "
                                                                                   "starts (5.0)"),
    ("m1.vtt", b"WEBVTT\n", "holds no cue"),
    ("m1.vtt", b"\xff\xfe\x00", "not UTF-8 text"),
    ("m1.srt", b"1\n00:00:01,000 --> 00:00:02,000\nno speaker prefix\n", "subtitle 1 has no 'Speaker: ' prefix"),
    ("m1.srt", b"1\n00:00:01,000 -> 00:00:02,000\nAnn: hi\n", "not SRT this reader can take"),
    ("m1.json", b"[1, 2]", "not a transcript: a JSON object with a segments list"),
    ("m1.json", b'{"segments": [{"start": "0", "end": 1, "speaker": "A", "text": "x"}]}', "segment 1 is not"),
    ("m1.json", b'{"segments": [{"start": 0, "end": 1, "speaker": "", "text": "x"}]}', "cue 1 names no speaker"),
    ("m1.json", b'{"segments": [{"start": 0, "end": 1e999, "speaker": "A", "text": "x"}]}', "ends (inf)"),
    ("m1.json", b"{" * 5000, "not JSON"),
    ("bad name!.vtt", b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ann>hi</v>\n", "the file's name is the "
                                                                                  "meeting's id"),
])
def test_a_hostile_transcript_is_refused_in_one_line_naming_the_file_nothing_written(
        tmp_path: Path, name: str, content: bytes, said: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_bytes(content)
    r = CliRunner().invoke(main, ["import", "transcripts", str(src), "--out", str(tmp_path / "c")])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"turnbench: BadInput: {src / name}: ") and said in line, line
    assert not (tmp_path / "c").exists() and not list(tmp_path.glob(".c.*"))


def test_import_refusals_of_the_directory_and_the_options(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    cues = b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ann>hi</v>\n"
    (src / "m1.vtt").write_bytes(cues)
    (src / "m1.srt").write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nAnn: hi\n")
    cases = [
        (["import", "transcripts", str(src), "--out", str(tmp_path / "c")], 2, "meeting 'm1' is also m1.srt"),
        (["import", "transcripts", str(tmp_path / "nope"), "--out", str(tmp_path / "c")], 2, "no such directory"),
        (["import", "transcripts", str(tmp_path / "c"), "--out", str(tmp_path / "c")], 2, ""),
        (["export", "transcripts", str(SMALL), "--format", "xml", "--out", str(tmp_path / "c")], 2,
         "Invalid value for '--format'"),
        (["export", "transcripts", str(SMALL), "--out", str(tmp_path / "c")], 2, "Missing option '--format'"),
        (["export", "transcripts", str(tmp_path / "nope"), "--format", "srt", "--out", str(tmp_path / "c")], 2, ""),
        (["export", "transcripts", str(SMALL), "--format", "srt", "--out", str(SMALL / "x")], 2, ""),
    ]
    for args, code, said in cases:
        r = CliRunner().invoke(main, args)
        assert r.exit_code == code, (args, r.output)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and "Traceback" not in r.output, (args, r.output)
        assert not (tmp_path / "c").exists() and not (SMALL / "x").exists()
    (src / "m1.srt").unlink()
    (src / "empty").mkdir()
    r = CliRunner().invoke(main, ["import", "transcripts", str(src / "empty"), "--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "holds no transcript" in r.stderr
    r = CliRunner().invoke(main, ["import", "transcripts", str(src), "--out", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
