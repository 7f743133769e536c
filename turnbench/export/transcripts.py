"""``turnbench export transcripts``: a corpus as the transcripts a product ingests — one file per meeting (WebVTT,
SRT or a JSON of segments: turnbench.corpus.transcripts), speaker labels and times on every turn — and the
questions without their gold, so a product ingests the corpus exactly as it ingests its own recordings, and its
hits come back to ``turnbench score``.

What is written, in one directory, staged and renamed into place (nothing partial is left by a failure or a kill):

* ``meetings/<meeting id>.vtt`` (``.srt``, ``.json``): every meeting's turns, in order;
* ``questions.jsonl``: every question scored on retrieval, ``{"id", "text"}`` in id order: never its class, rule
  or gold;
* ``transcripts.json``: the format, the corpus's provenance (id, sha256, licence), the counts and each file's sha256.

Every file is byte-identical from run to run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from turnbench import canonical
from turnbench.corpus.format import open_corpus
from turnbench.corpus.transcripts import FORMATS, check_format, write_meeting

MANIFEST_FORMAT = "turnbench-transcripts-export/1"


@dataclass(frozen=True)
class Written:
    """What an export holds."""

    meetings: int
    turns: int
    questions: int


def export_transcripts(corpus_dir: Path, out: Path, fmt: str) -> Written:
    """Write ``corpus_dir``'s meetings as ``fmt`` transcripts and its questions into ``out`` (absent or empty)."""
    check_format(fmt)
    out = canonical.refuse_non_empty(Path(out), "export directory")
    corpus = open_corpus(Path(corpus_dir))
    meetings = sorted(corpus.iter_meetings(), key=lambda m: m.id)
    files = {f"meetings/{m.id}{FORMATS[fmt]}": write_meeting(m, fmt) for m in meetings}  # refused before writing
    questions = sorted((q for q in corpus.queries() if q.scored_on == "retrieval"), key=lambda q: q.id)
    with canonical.staged_directory(out) as tmp:
        (tmp / "meetings").mkdir()
        for name, data in files.items():
            canonical.write_bytes_atomic(tmp / name, data)
        canonical.write_jsonl(tmp / "questions.jsonl", ({"id": q.id, "text": q.text} for q in questions))
        written = Written(len(meetings), sum(len(m.turns) for m in meetings), len(questions))
        canonical.write_json(tmp / "transcripts.json", {
            "format": MANIFEST_FORMAT, "transcripts": fmt, "corpus": corpus.provenance(),
            "counts": {"meetings": written.meetings, "turns": written.turns, "questions": written.questions},
            "files": {name: canonical.sha256_bytes(data) for name, data in files.items()}
            | {"questions.jsonl": canonical.sha256_file(tmp / "questions.jsonl")},
        })
    return written
