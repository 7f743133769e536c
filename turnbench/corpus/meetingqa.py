"""MeetingQA → corpus format v1: questions asked by meeting participants, answered later in the same meeting.

MeetingQA (adobe-research/meetingqa) annotates AMI meetings: every sentence of a transcript carries its speaker and,
when a participant asked something, the annotators' judgement of the question (``possible``: a real question,
``meaningful``) and its answer (``answerSpan``: the ids of the sentences that answer it, empty when nobody did).
Its annotations are CC BY-NC-SA 4.0, so an import is licence tier B: never bundled, read from a path the user gives.

Sources
    A directory holding ``ProcessedTranscripts/Annotated-AMI-QA/{train,dev,test}`` (a checkout of the repository),
    the ``Annotated-AMI-QA`` directory itself, one split's directory of ``<meeting_id>.json`` files, or such files.
    The split of a meeting is its directory's name. The same meeting given twice is refused.

Release
    Before anything is parsed, every file read is checked against the release turnbench pins
    (``releases/meetingqa.json``: adobe-research/meetingqa at a named commit, under
    ``ProcessedTranscripts/Annotated-AMI-QA``; ``corpus.releases``): a file the release does not list, one whose
    bytes differ, or a split directory read without every file the release lists in it is refused, unless
    unverified sources are allowed; the manifest's producer records the release and whether it was verified.

Questions
    A sentence asks a question to import when ``question.possible`` is true and its ``answerSpan`` is non-empty.
    The question's own sentences are ``combinedQuestion`` (the sentences that together form it; the sentence alone
    when empty) and its ``questionContext`` (what the asker said to set it up); the query text is those sentences in
    transcript order, joined by a space. Several sentences of one combined question carry the same annotation: they
    make one query (the same set of own sentences), the answer spans unioned.

The leakage control
    The questions were spoken in the meeting, and most answers start right after them, so an engine that finds the
    question's own words lands beside its gold without understanding anything. The own sentences of every question
    to import (possible and answered, even one refused below) are therefore removed from the transcript before turns
    are formed: no query can be found by the words it was spoken with, and no gold holds them. They are removed for
    every query alike (a transcript is one text for all queries), so an answer sentence that is another question's
    own sentence leaves that gold too; this is counted (``answer_sentences_removed``), and a query left with no
    answer sentence is refused (``answer_removed``).

Turns and gold
    The remaining sentences become turns by speaker runs: consecutive sentences of one speaker are one turn, joined
    by a space. A query's gold is every turn holding one of its answer sentences (unioned ranges); no single turn is
    the exact evidence, so ``answer_turns`` is empty, as for QMSum. MeetingQA has no timestamps: times come from word
    counts by QMSum's rule (``qmsum_rules.synthetic_turns``), timing ``synthetic``; titles are the meeting ids, as the
    recordings are named; speakers are ``Speaker N`` from the annotated face ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.imports import TIMING, Refused, Source, corpus_id_from, tally, write_imported
from turnbench.corpus.qmsum_rules import merge_ranges, synthetic_turns
from turnbench.corpus.records import RULE_OF_CLASS, Meeting, Query
from turnbench.corpus.releases import ReadFile, Release, bundled, verify
from turnbench.errors import BadInput

PRODUCER = "turnbench.meetingqa"
ADAPTER_VERSION = "1"
LICENCE = {"tier": "B", "name": "CC BY-NC-SA 4.0"}
SPLIT_DIRS = ("train", "dev", "test")
NESTED = ("ProcessedTranscripts", "Annotated-AMI-QA")
SURFACE = "meetingqa"
# AMI's scenario meetings (a team designing a remote control) and its other recorded meetings
SCENARIO_PREFIXES = ("ES", "IS", "TS")
REFUSAL_REASONS = ("empty_text", "answer_removed", "span_out_of_range")
LEAKAGE_CONTROL = ("the own sentences of every question to import (combinedQuestion, or the sentence itself, and "
                   "questionContext) are removed from the transcript before turns are formed, for every query alike")


@dataclass(frozen=True)
class Sentence:
    index: int
    speaker: str
    text: str


@dataclass(frozen=True)
class Question:
    """One question as annotated: the sentences it was spoken with, and the sentences that answer it."""

    own: tuple[int, ...]  # sorted
    answer: tuple[int, ...]  # sorted
    meta: Mapping[str, str]


@dataclass(frozen=True)
class RawMeeting:
    id: str
    split: str
    source: str
    sentences: tuple[Sentence, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class Conversion:
    meetings: tuple[Meeting, ...]
    queries: tuple[Query, ...]
    refused: tuple[Refused, ...]
    counts: Mapping[str, int]  # questions seen, merged, sentences removed, answer sentences removed
    sources: tuple[Source, ...]
    release: Mapping[str, Any] | None = None  # what was verified against which release (releases.verify)


# -- reading ---------------------------------------------------------------------------------------


def _ids(value: Any, where: str, key: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                              for v in value):
        raise BadInput(f"{where}: {key} must be a list of sentence ids")
    return tuple(sorted(set(value)))


def parse_meeting(data: bytes, meeting_id: str, split: str, where: str) -> RawMeeting:
    """One per-meeting file: its sentences in order and the questions worth importing (possible, answered)."""
    try:
        d = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(d, dict) or not isinstance(d.get("sentences"), list) or not d["sentences"]:
        raise BadInput(f"{where}: a MeetingQA meeting is a JSON object with a non-empty 'sentences' list")
    sentences: list[Sentence] = []
    questions: dict[tuple[int, ...], Question] = {}
    for n, s in enumerate(d["sentences"]):
        if not isinstance(s, dict) or not isinstance(s.get("displayText"), str) or s.get("sentenceId") != n:
            raise BadInput(f"{where}: sentence {n} needs 'displayText' and sentenceId {n} (ids are dense, in order)")
        speaker = s.get("speakerFaceId")
        if not isinstance(speaker, (str, int)) or isinstance(speaker, bool) or not str(speaker).strip():
            raise BadInput(f"{where}: sentence {n} has no speakerFaceId")
        sentences.append(Sentence(n, f"Speaker {str(speaker).strip()}", " ".join(s["displayText"].split())))
        q = s.get("question")
        if not isinstance(q, dict) or q.get("possible") is not True:
            continue
        answer = _ids(q.get("answerSpan", []), f"{where} sentence {n}", "answerSpan")
        if not answer:
            continue
        combined = _ids(q.get("combinedQuestion", []), f"{where} sentence {n}", "combinedQuestion") or (n,)
        context = _ids(q.get("questionContext", []), f"{where} sentence {n}", "questionContext")
        own = tuple(sorted(set(combined) | set(context)))
        meta = q.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        flags = {k: str(bool(meta[k])).lower() for k in ("multispan", "multispeaker") if k in meta}
        before = questions.get(own)
        if before is not None:  # the same combined question, annotated on each of its sentences: one query
            answer = tuple(sorted(set(before.answer) | set(answer)))
            flags = dict(before.meta)
        questions[own] = Question(own, answer, flags)
    return RawMeeting(meeting_id, split, where, tuple(sentences), tuple(sorted(questions.values(),
                                                                               key=lambda q: q.own)))


def _json_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == ".json" and not p.name.startswith("."))


def _split_dirs(path: Path) -> list[Path]:
    for base in (path / NESTED[0] / NESTED[1], path / NESTED[1], path):
        splits = [base / s for s in SPLIT_DIRS if (base / s).is_dir()]
        if splits:
            return splits
    return []


def _listing(paths: Sequence[Path]) -> tuple[list[tuple[Path, str, str]], list[str]]:
    """The meeting files the paths name, as (file, display name, split), and the splits read as whole directories."""
    files: list[tuple[Path, str, str]] = []
    whole: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            direct = _json_files(p)
            if direct:
                files.extend((f, f"{p.name}/{f.name}", p.name) for f in direct)
                whole.append(p.name)
                continue
            splits = _split_dirs(p)
            found = [(f, f"{s.name}/{f.name}", s.name) for s in splits for f in _json_files(s)]
            if not found:
                raise BadInput(f"{p}: holds no <meeting_id>.json files and no {'/'.join(NESTED)}/"
                               f"{{{','.join(SPLIT_DIRS)}}} directories of them")
            files.extend(found)
            whole.extend(s.name for s in splits)
        elif p.is_file() and p.suffix == ".json":
            files.append((p, p.name, p.parent.name))
        elif not p.exists():
            raise BadInput(f"{p}: no such file or directory")
        else:
            raise BadInput(f"{p}: not a MeetingQA source (a .json meeting file or a directory of them)")
    return files, whole


def read_sources(paths: Sequence[Path], release: Release | None = None,
                 allow_unverified: bool = False) -> tuple[list[Source], list[RawMeeting], dict[str, Any] | None]:
    """Read every meeting file the paths name; refuse unreadable input and a meeting given twice. With a
    ``release``, every file read is checked against it before anything is parsed (``releases.verify``); the third
    value is what the corpus manifest records of it (None without a release)."""
    if not paths:
        raise BadInput("no MeetingQA source given")
    files, whole = _listing(paths)
    data = [f.read_bytes() for f, _, _ in files]
    record = None
    if release is not None:
        read = [ReadFile.of(f"{split}/{f.name}", b) for (f, _, split), b in zip(files, data, strict=True)]
        record = verify(release, read, whole, allow_unverified=allow_unverified)
    sources: list[Source] = []
    raws: list[RawMeeting] = []
    seen: dict[str, str] = {}
    for (f, display, split), b in zip(files, data, strict=True):
        if f.stem in seen:
            raise BadInput(f"meeting {f.stem} is given twice ({seen[f.stem]} and {display})")
        seen[f.stem] = display
        sources.append(Source(display, canonical.sha256_bytes(b), split))
        raws.append(parse_meeting(b, f.stem, split, display))
    return sources, raws, record


# -- converting ------------------------------------------------------------------------------------


def domain_of(meeting_id: str) -> str:
    return "product" if meeting_id.startswith(SCENARIO_PREFIXES) else "non-scenario"


def speaker_runs(sentences: Iterable[Sentence]) -> list[tuple[str, tuple[Sentence, ...]]]:
    """Consecutive sentences of one speaker, as (speaker, sentences)."""
    runs: list[tuple[str, list[Sentence]]] = []
    for s in sentences:
        if runs and runs[-1][0] == s.speaker:
            runs[-1][1].append(s)
        else:
            runs.append((s.speaker, [s]))
    return [(speaker, tuple(ss)) for speaker, ss in runs]


def convert_meeting(raw: RawMeeting) -> tuple[Meeting, list[Query], list[Refused], dict[str, int]]:
    n = len(raw.sentences)
    removed = {i for q in raw.questions for i in q.own if i < n}
    kept = [s for s in raw.sentences if s.index not in removed and s.text]
    runs = speaker_runs(kept)
    turn_of: dict[int, int] = {s.index: t for t, (_, ss) in enumerate(runs) for s in ss}
    turns, duration = synthetic_turns([{"speaker": sp, "content": " ".join(s.text for s in ss)} for sp, ss in runs])
    speakers = tuple(sorted({t.speaker for t in turns}))
    domain = domain_of(raw.id)
    meeting = Meeting(id=raw.id, title=raw.id, recorded_date=None, duration=duration, timing="synthetic",
                      speakers=speakers, turns=turns, attendees=speakers,
                      meta={"domain": domain, "split": raw.split, "source": raw.source})
    text_of = {s.index: s.text for s in raw.sentences}
    queries: list[Query] = []
    refused: list[Refused] = []
    counts = {"answer_sentences_removed": 0}
    for q in raw.questions:
        qid = f"{raw.id}-q{q.own[0]:05d}"
        text = " ".join(text_of[i] for i in q.own if i < n and text_of[i])
        outside = [i for i in (*q.own, *q.answer) if i >= n]
        if outside:
            refused.append(Refused(qid, "span_out_of_range", f"sentence {outside[0]} is past the last ({n - 1})"))
            continue
        if not text:
            refused.append(Refused(qid, "empty_text", "the question's sentences are empty"))
            continue
        answer = [i for i in q.answer if i in turn_of]
        counts["answer_sentences_removed"] += len(q.answer) - len(answer)
        if not answer:
            refused.append(Refused(qid, "answer_removed", "every answer sentence is an imported question's own"))
            continue
        gold = merge_ranges((turn_of[i], turn_of[i]) for i in answer)
        queries.append(Query(id=qid, cls="lookup", rule=RULE_OF_CLASS["lookup"], surface=SURFACE, text=text,
                             scored_on="retrieval", gold_meetings=(raw.id,), gold_turns={raw.id: gold},
                             answer_turns={}, answer=None, gold_level="turn",
                             meta={"domain": domain, "split": raw.split, **q.meta}))
    counts["sentences_removed"] = len(removed)
    return meeting, queries, refused, counts


def convert(paths: Sequence[Path], release: Release | None = None, allow_unverified: bool = False) -> Conversion:
    """Read and convert every source; pure apart from reading the input files."""
    sources, raws, record = read_sources(paths, release, allow_unverified)
    meetings, queries, refused = [], [], []
    counts = {"questions": sum(len(r.questions) for r in raws), "sentences_removed": 0,
              "answer_sentences_removed": 0}
    for raw in sorted(raws, key=lambda r: r.id):
        m, qs, rf, c = convert_meeting(raw)
        meetings.append(m)
        queries.extend(qs)
        refused.extend(rf)
        for k, v in c.items():
            counts[k] += v
    return Conversion(meetings=tuple(meetings), queries=tuple(sorted(queries, key=lambda q: q.id)),
                      refused=tuple(sorted(refused, key=lambda r: r.query_id)), counts=counts,
                      sources=tuple(sorted(sources, key=lambda s: (s.file, s.sha256, s.split))), release=record)


def counts_of(conv: Conversion) -> dict[str, Any]:
    return {
        "meetings": len(conv.meetings),
        "meetings_by_domain": tally(m.meta["domain"] for m in conv.meetings),
        "meetings_by_split": tally(m.meta["split"] for m in conv.meetings),
        "turns": sum(len(m.turns) for m in conv.meetings),
        "words": sum(len(t.text.split()) for m in conv.meetings for t in m.turns),
        "queries": len(conv.queries),
        "queries_by_class": tally(q.cls for q in conv.queries),
        "queries_refused": {r: sum(1 for x in conv.refused if x.reason == r) for r in REFUSAL_REASONS},
        "questions_annotated": conv.counts["questions"],
        "sentences_removed": conv.counts["sentences_removed"],
        "answer_sentences_removed": conv.counts["answer_sentences_removed"],
    }


def producer_of(conv: Conversion) -> dict[str, Any]:
    return {
        "name": PRODUCER,
        "version": ADAPTER_VERSION,
        "sources": [s.to_json() for s in conv.sources],
        "questions": "question.possible and a non-empty answerSpan; one query per set of own sentences",
        "leakage_control": LEAKAGE_CONTROL,
        "turns": "consecutive sentences of one speaker, after the questions' own sentences are removed",
        "gold": "every turn holding an answer sentence; no answer turns",
        "timing": dict(TIMING),
        "refused_queries": [r.to_json() for r in conv.refused],
        **({"release": dict(conv.release)} if conv.release is not None else {}),
    }


def corpus_id_of(conv: Conversion) -> str:
    return corpus_id_from("meetingqa", conv.sources)


def import_meetingqa(paths: Sequence[Path], out: Path, *, release: Release | None = None,
                     allow_unverified: bool = False) -> dict[str, Any]:
    """Convert MeetingQA sources into a corpus at ``out``; returns the manifest. Nothing is left on failure. Every
    source file is checked against ``release`` (the bundled MeetingQA release when None) first: one that is not the
    release is refused (CorpusIntegrityError) unless ``allow_unverified``, which records it unverified."""
    out = canonical.refuse_non_empty(Path(out))
    conv = convert(paths, release if release is not None else bundled("meetingqa"), allow_unverified)
    if not conv.queries:
        raise BadInput("the sources hold no answered question to import")
    return write_imported(out, conv.meetings, conv.queries, corpus_id=corpus_id_of(conv), licence=LICENCE,
                          producer=producer_of(conv), counts=counts_of(conv))
