"""Transcripts as products ingest them: one file per meeting, as WebVTT captions, SRT subtitles or a JSON of
segments, each turn with its speaker and times — written from a corpus (``turnbench export transcripts``) and read
back into one (``turnbench import transcripts``).

- **WebVTT** (webvtt-py): a cue per turn, ``HH:MM:SS.mmm`` times, the speaker as a voice span ``<v Speaker>…</v>``;
  ``&``, ``<`` and ``>`` in a name or a text are written as ``&amp;``, ``&lt;``, ``&gt;`` (so a text's ``-->`` is
  never a timing line) and read back as themselves.
- **SRT** (srt): a numbered subtitle per turn, ``HH:MM:SS,mmm`` times, the speaker as a ``Speaker: `` prefix (so a
  speaker's name may not hold ``": "``).
- **JSON**: ``{"format": "turnbench-transcript", "version": 1, "meeting", "title", "recorded_date", "segments":
  [{"start", "end", "speaker", "text"}]}``, times in seconds.

Turns are written in (start, end, index) order — WebVTT's order of cues, and the order turnbench's judge reads
overlapping speech in — and times to the millisecond, as both caption formats carry them. A turn whose text holds a
blank line cannot be a cue (a blank line ends one): such a corpus is refused in one line, not written altered.
Reading refuses, naming the file (BadInput, exit 2): a file the format's reader cannot parse, a cue without a
speaker, an end before its start, a file without a cue, a file name that is no portable meeting id, two files of one
meeting.
"""

from __future__ import annotations

import datetime
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.records import Meeting, Turn
from turnbench.errors import BadInput

FORMATS = {"webvtt": ".vtt", "srt": ".srt", "json": ".json"}
JSON_FORMAT = "turnbench-transcript"
JSON_VERSION = 1
SPEAKER_SEP = ": "


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise BadInput(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
    return fmt


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


def _clock(ms: int) -> str:
    """``HH:MM:SS.mmm``, a WebVTT timestamp."""
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _check_writable(meeting: Meeting, fmt: str) -> None:
    for t in meeting.turns:
        where = f"meeting {meeting.id}, turn {t.index}"
        if re.search(r"\n[ \t]*\n", t.text) or t.text.startswith("\n") or t.text.endswith("\n"):
            raise BadInput(f"{where}: its text holds a blank line, which a {fmt} cue cannot carry; nothing was written")
        if not t.speaker.strip() or "\n" in t.speaker:
            raise BadInput(f"{where}: speaker {t.speaker!r} cannot label a {fmt} cue; nothing was written")
        if fmt == "srt" and SPEAKER_SEP in t.speaker:
            raise BadInput(f"{where}: speaker {t.speaker!r} holds {SPEAKER_SEP!r}, the SRT speaker prefix's end; "
                           "nothing was written")


def in_time_order(meeting: Meeting) -> list[Turn]:
    """The meeting's turns in (start, end, index) order: the order WebVTT wants its cues in (by start time), and the
    order turnbench's judge reads overlapping speech in, so a product joining cues in file order joins them as the
    judge reads them (docs/formats.md)."""
    return sorted(meeting.turns, key=lambda t: (t.start, t.end, t.index))


def write_meeting(meeting: Meeting, fmt: str) -> bytes:
    """One meeting's transcript in ``fmt``, its turns in :func:`in_time_order`; BadInput (nothing written) for a turn
    the format cannot carry."""
    check_format(fmt)
    if fmt != "json":
        _check_writable(meeting, fmt)
    turns = in_time_order(meeting)
    if fmt == "webvtt":
        import webvtt

        vtt = webvtt.WebVTT()
        for t in turns:
            start, end = (_clock(_ms(x)) for x in (t.start, t.end))
            vtt.captions.append(webvtt.Caption(start, end, f"<v {_esc(t.speaker)}>{_esc(t.text)}</v>"))
        return str(vtt.content).encode("utf-8")
    if fmt == "srt":
        import srt

        subs = [srt.Subtitle(n, datetime.timedelta(milliseconds=_ms(t.start)),
                             datetime.timedelta(milliseconds=_ms(t.end)), f"{t.speaker}{SPEAKER_SEP}{t.text}")
                for n, t in enumerate(turns, 1)]
        return str(srt.compose(subs, reindex=False)).encode("utf-8")
    doc = {"format": JSON_FORMAT, "version": JSON_VERSION, "meeting": meeting.id, "title": meeting.title,
           "recorded_date": meeting.recorded_date,
           "segments": [{"start": _ms(t.start) / 1000, "end": _ms(t.end) / 1000, "speaker": t.speaker,
                         "text": t.text} for t in turns]}
    return canonical.pretty(doc)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def read_transcript(data: bytes, fmt: str, where: str) -> tuple[list[Turn], dict[str, Any]]:
    """The turns a transcript holds (index, speaker, start, end, text) and what else it says (a JSON's title and
    date); BadInput naming ``where`` for anything that is not a transcript turnbench can read whole."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadInput(f"{where}: not UTF-8 text") from None
    extra: dict[str, Any] = {}
    if fmt == "webvtt":
        rows = _read_vtt(text, where)
    elif fmt == "srt":
        rows = _read_srt(text, where)
    else:
        rows, extra = _read_json(text, where)
    if not rows:
        raise BadInput(f"{where}: holds no cue: a meeting needs at least one turn")
    turns = []
    for n, (speaker, start, end, said) in enumerate(rows):
        if not (0 <= start <= end) or not all(map(_finite, (start, end))):
            raise BadInput(f"{where}: cue {n + 1} ends ({end}) before it starts ({start})")
        if not speaker.strip():
            raise BadInput(f"{where}: cue {n + 1} names no speaker")
        turns.append(Turn(n, speaker, start, end, said))
    return turns, extra


def _finite(x: float) -> bool:
    return x == x and x not in (float("inf"), float("-inf"))


def _read_vtt(text: str, where: str) -> list[tuple[str, float, float, str]]:
    import webvtt

    try:
        vtt = webvtt.from_string(text)
    except Exception as exc:  # the reader's own errors (MalformedFileError, MalformedCaptionError, ValueError)
        raise BadInput(f"{where}: not WebVTT this reader can take ({_first(exc)})") from None
    rows = []
    for n, cap in enumerate(vtt.captions, 1):
        voice = cap.voice
        if voice is None:
            raise BadInput(f"{where}: cue {n} has no voice span <v Speaker> naming who spoke")
        rows.append((html.unescape(voice), cap.start_time.in_milliseconds() / 1000,
                     cap.end_time.in_milliseconds() / 1000, html.unescape(cap.text)))
    return rows


def _read_srt(text: str, where: str) -> list[tuple[str, float, float, str]]:
    import srt

    try:
        subs = list(srt.parse(text))
    except Exception as exc:  # srt.SRTParseError and the like
        raise BadInput(f"{where}: not SRT this reader can take ({_first(exc)})") from None
    rows = []
    for n, sub in enumerate(subs, 1):
        speaker, sep, said = sub.content.partition(SPEAKER_SEP)
        if not sep or "\n" in speaker:
            raise BadInput(f"{where}: subtitle {n} has no 'Speaker: ' prefix naming who spoke")
        rows.append((speaker, sub.start.total_seconds(), sub.end.total_seconds(), said))
    return rows


def _read_json(text: str, where: str) -> tuple[list[tuple[str, float, float, str]], dict[str, Any]]:
    try:
        doc = canonical.parse_json(text, max_nesting=canonical.MAX_NESTING)
    except ValueError as exc:
        raise BadInput(f"{where}: not JSON ({_first(exc)})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("segments"), list):
        raise BadInput(f"{where}: not a transcript: a JSON object with a segments list")
    rows = []
    for n, seg in enumerate(doc["segments"], 1):
        ok = isinstance(seg, dict) and isinstance(seg.get("speaker"), str) and isinstance(seg.get("text"), str) \
            and all(not isinstance(seg.get(k), bool) and isinstance(seg.get(k), (int, float)) for k in ("start", "end"))
        if not ok:
            raise BadInput(f"{where}: segment {n} is not {{start, end (seconds), speaker, text (strings)}}")
        rows.append((seg["speaker"], float(seg["start"]), float(seg["end"]), seg["text"]))
    extra = {k: doc[k] for k in ("title", "recorded_date") if isinstance(doc.get(k), str)}
    return rows, extra


def _first(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:160]}" if lines else type(exc).__name__


def transcript_files(directory: Path) -> list[tuple[Path, str]]:
    """The transcript files of ``directory`` (its ``meetings/`` when it has one, as an export writes it), each with
    its format by extension, in name order; a manifest or questions file of an export is not a transcript."""
    root = directory / "meetings" if (directory / "meetings").is_dir() else directory
    by_ext = {ext: fmt for fmt, ext in FORMATS.items()}
    return [(p, by_ext[p.suffix]) for p in sorted(root.iterdir())
            if p.is_file() and p.suffix in by_ext and p.name != "transcripts.json"]


def meeting_of(path: Path, fmt: str, turns: Sequence[Turn], extra: dict[str, Any]) -> Meeting:
    """A meeting of corpus format v1 from one transcript file: the id is the file's name without its extension."""
    date = extra.get("recorded_date")
    speakers = tuple(dict.fromkeys(t.speaker for t in turns))
    return Meeting(id=path.stem, title=str(extra.get("title", path.stem)),
                   recorded_date=date if isinstance(date, str) else None, duration=max(t.end for t in turns),
                   timing="measured", speakers=speakers, turns=tuple(turns), attendees=speakers,
                   meta={"source": path.name, "format": fmt})


LICENCE = {"tier": "C", "name": "the transcripts' own (not known to turnbench); never bundled"}
PRODUCER = "turnbench import transcripts"
ADAPTER_VERSION = "1"


def import_transcripts(directory: Path, out: Path) -> dict[str, Any]:
    """A corpus (no questions, so no gold) of the transcripts in ``directory``: one meeting per file, named by
    the file; for ``measure --against``. Returns the manifest; nothing is left at ``out`` on failure."""
    from turnbench.corpus.checks import id_problem
    from turnbench.corpus.imports import Source, corpus_id_from, tally, write_imported

    directory, out = Path(directory), canonical.refuse_non_empty(Path(out))
    if not directory.is_dir():
        raise BadInput(f"{directory}: no such directory of transcripts")
    files = transcript_files(directory)
    if not files:
        raise BadInput(f"{directory}: holds no transcript (.vtt, .srt or .json files, or a meetings/ of them)")
    meetings: list[Meeting] = []
    sources: list[Source] = []
    seen: dict[str, str] = {}
    for path, fmt in files:
        why = id_problem(path.stem)
        if why:
            raise BadInput(f"{path}: the file's name is the meeting's id, and {path.stem!r} {why}")
        if path.stem in seen:
            raise BadInput(f"{path}: meeting {path.stem!r} is also {seen[path.stem]}")
        seen[path.stem] = path.name
        data = path.read_bytes()
        turns, extra = read_transcript(data, fmt, str(path))
        meetings.append(meeting_of(path, fmt, turns, extra))
        sources.append(Source(path.name, canonical.sha256_bytes(data), fmt))
    counts = {"meetings": len(meetings), "turns": sum(len(m.turns) for m in meetings),
              "words": sum(len(t.text.split()) for m in meetings for t in m.turns), "queries": 0,
              "files_by_format": tally(s.split for s in sources)}
    producer = {"name": PRODUCER, "version": ADAPTER_VERSION, "sources": [s.to_json() for s in sources],
                "turns": "one per cue (WebVTT), subtitle (SRT) or segment (JSON), in file order",
                "gold": "none: transcripts carry no questions"}
    return write_imported(out, meetings, [], corpus_id=corpus_id_from("transcripts", sources), licence=LICENCE,
                          producer=producer, counts=counts)
