"""QMSum → corpus format v1: score a real, human-annotated meeting corpus with the same harness.

QMSum (MIT licence) publishes meetings from three domains with queries and human-annotated relevant
turn spans. Its spans use the same inclusive turn-range convention as our gold, so the conversion is
mostly bookkeeping; the rules below, and the judgement calls in ``qmsum_rules`` (domains, times,
summary requests, spans), are the parts a reviewer may challenge, so they are stated here and written
into the manifest's producer record.

Sources
    A JSONL file (one meeting per line), a per-meeting JSON file, or a directory: either one split's
    directory of ``<meeting_id>.json`` files, or a directory holding ``train``/``val``/``test``
    subdirectories of them (QMSum's ``data/ALL`` layout; its ``jsonl`` and ``all`` folders are ignored
    there because they repeat the same meetings). The split of a meeting is the JSONL file's stem or the
    JSON file's directory name. The same meeting given twice (same id, or the same transcript) is refused.

Release
    Before anything is parsed, every file read is checked against the release turnbench pins
    (``releases/qmsum.json``: Yale-LILY/QMSum at a named commit, under ``data/ALL``; ``corpus.releases``): a file
    the release does not list, one whose bytes differ, or a split directory read without every file the release
    lists in it is refused, unless unverified sources are allowed; the manifest's producer records the release and
    whether the sources were verified against it.

Meeting ids
    Per-meeting JSON files are named by meeting id. QMSum's JSONL lines carry no id, so a line's id is
    ``qmsum-`` plus the first 12 hex digits of the sha256 of its canonical transcript, unless the line
    has a ``meeting_id`` or ``id`` field. A meeting whose domain is ``unknown`` is kept and counted in the
    manifest. Every meeting's ``timing`` is ``synthetic`` and ``recorded_date`` is None, so no
    timing-derived figure can be computed from them.

Queries
    Specific queries (with ``relevant_text_span``) are ``lookup``, or ``summarize`` when their text asks
    for a summary; their spans become unioned turn ranges. They have no single evidence turn, so
    ``answer_turns`` is empty. General queries (no spans) are ``summarize`` at meeting level, gold the
    whole meeting. A query whose span is refused is counted by reason; a refused occurrence takes no
    part in deduplication. Duplicates (same meeting, same text after casefolding and whitespace
    collapsing) become one query: a span-bearing occurrence wins over a general one and the spans of all
    span-bearing occurrences are unioned; every dropped occurrence is counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from turnbench import canonical
from turnbench.corpus.imports import TIMING, Refused, Source, corpus_id_from, tally, write_imported
from turnbench.corpus.qmsum_rules import (
    DOMAIN_ID_PATTERNS,
    DOMAIN_SPEAKER_RULES,
    SUMMARY_PATTERN,
    UNKNOWN_DOMAIN,
    Ranges,
    domain_of,
    is_summary_request,
    merge_ranges,
    parse_spans,
    synthetic_turns,
)
from turnbench.corpus.records import RULE_OF_CLASS, Meeting, Query
from turnbench.corpus.releases import ReadFile, Release, bundled, verify
from turnbench.errors import BadInput

PRODUCER = "turnbench.qmsum"
ADAPTER_VERSION = "1"
LICENCE = {"tier": "A", "name": "MIT"}
SPLIT_DIRS = ("train", "val", "test")

_SURFACE = {"g": "qmsum-general", "s": "qmsum-specific"}  # which QMSum list the query came from
REFUSAL_REASONS = ("empty_text", "no_span", "span_malformed", "span_out_of_range", "span_reversed")


@dataclass(frozen=True)
class RawMeeting:
    """One QMSum meeting as read, before conversion."""

    id: str
    split: str
    source: str  # the Source.file it came from, with the line number for JSONL
    data: Mapping[str, Any]
    transcript_sha256: str


class _Occurrence(NamedTuple):
    """One query as listed in the source: its spans, or None for a general query without spans."""

    qid: str
    text: str
    spans: Ranges | None


@dataclass(frozen=True)
class Conversion:
    """What ``convert`` made of the sources: records to write and everything that was not written."""

    meetings: tuple[Meeting, ...]
    queries: tuple[Query, ...]
    refused: tuple[Refused, ...]
    duplicates: Mapping[str, int]
    sources: tuple[Source, ...]
    release: Mapping[str, Any] | None = None  # what was verified against which release (releases.verify)


# -- reading ---------------------------------------------------------------------------------------


def _load_json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)})") from None


def _check_meeting(d: Any, where: str) -> None:
    if not isinstance(d, dict):
        raise BadInput(f"{where}: a QMSum meeting must be a JSON object")
    for key in ("meeting_transcripts", "general_query_list", "specific_query_list"):
        if not isinstance(d.get(key), list):
            raise BadInput(f"{where}: missing or non-list {key!r}; not a QMSum meeting")
    if not d["meeting_transcripts"]:
        raise BadInput(f"{where}: empty meeting_transcripts")
    for i, t in enumerate(d["meeting_transcripts"]):
        if not isinstance(t, dict) or not isinstance(t.get("speaker"), str) or not isinstance(t.get("content"), str):
            raise BadInput(f"{where}: transcript turn {i} needs string 'speaker' and 'content'")
        if not t["speaker"].strip():
            raise BadInput(f"{where}: transcript turn {i} has an empty speaker label")
    for key in ("general_query_list", "specific_query_list"):
        for i, q in enumerate(d[key]):
            if not isinstance(q, dict) or not isinstance(q.get("query"), str):
                raise BadInput(f"{where}: {key}[{i}] needs a string 'query'")


def _transcript_sha(d: Mapping[str, Any]) -> str:
    turns = [{"content": t["content"], "speaker": t["speaker"]} for t in d["meeting_transcripts"]]
    return canonical.sha256_bytes(canonical.dumps(turns).encode())


def _read_json_file(data: bytes, path: Path, display: str, split: str) -> tuple[Source, RawMeeting]:
    d = _load_json(data, display)
    _check_meeting(d, display)
    src = Source(display, canonical.sha256_bytes(data), split)
    return src, RawMeeting(path.stem, split, display, d, _transcript_sha(d))


def _read_jsonl_file(data: bytes, path: Path) -> tuple[Source, list[RawMeeting]]:
    split = path.stem
    out = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name} line {n}"
        d = _load_json(line, where)
        _check_meeting(d, where)
        sha = _transcript_sha(d)
        given = d.get("meeting_id", d.get("id"))
        mid = str(given) if isinstance(given, (str, int)) and str(given).strip() else f"qmsum-{sha[:12]}"
        out.append(RawMeeting(mid, split, where, d, sha))
    return Source(path.name, canonical.sha256_bytes(data), split), out


def _json_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == ".json" and not p.name.startswith("."))


@dataclass(frozen=True)
class _File:
    """A file to read: where it is, how the manifest names it, its split, and its path under the release root."""

    path: Path
    display: str
    split: str
    jsonl: bool

    @property
    def key(self) -> str:
        return f"jsonl/{self.path.name}" if self.jsonl else f"{self.split}/{self.path.name}"


def _listing(paths: Sequence[Path]) -> tuple[list[_File], list[str]]:
    """The files the paths name, and the splits read as whole directories."""
    files: list[_File] = []
    whole: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            direct = _json_files(p)
            if direct:
                files.extend(_File(f, f"{p.name}/{f.name}", p.name, False) for f in direct)
                whole.append(p.name)
                continue
            splits = [p / s for s in SPLIT_DIRS if (p / s).is_dir()]
            found = [_File(f, f"{s.name}/{f.name}", s.name, False) for s in splits for f in _json_files(s)]
            if not found:
                raise BadInput(f"{p}: holds no <meeting_id>.json files and no train/val/test directories of them")
            files.extend(found)
            whole.extend(s.name for s in splits)
        elif p.is_file() and p.suffix == ".jsonl":
            files.append(_File(p, p.name, p.stem, True))
        elif p.is_file() and p.suffix == ".json":
            files.append(_File(p, p.name, p.parent.name, False))
        elif not p.exists():
            raise BadInput(f"{p}: no such file or directory")
        else:
            raise BadInput(f"{p}: not a QMSum source (expected a .jsonl file, a .json file or a directory)")
    return files, whole


def read_sources(paths: Sequence[Path], release: Release | None = None,
                 allow_unverified: bool = False) -> tuple[list[Source], list[RawMeeting], dict[str, Any] | None]:
    """Read every source; refuse unreadable input and any meeting given twice. With a ``release``, every file read
    is checked against it before anything is parsed (``releases.verify``); the third value is what the corpus
    manifest records of it (None without a release)."""
    if not paths:
        raise BadInput("no QMSum source given")
    files, whole = _listing(paths)
    data = [f.path.read_bytes() for f in files]
    record = None
    if release is not None:
        record = verify(release, [ReadFile.of(f.key, b) for f, b in zip(files, data, strict=True)], whole,
                        allow_unverified=allow_unverified)
    sources: list[Source] = []
    raws: list[RawMeeting] = []
    for f, b in zip(files, data, strict=True):
        if f.jsonl:
            src, rs = _read_jsonl_file(b, f.path)
            if not rs:
                raise BadInput(f"{f.path}: holds no meetings")
        else:
            src, raw = _read_json_file(b, f.path, f.display, f.split)
            rs = [raw]
        sources.append(src)
        raws.extend(rs)
    seen_id: dict[str, str] = {}
    seen_text: dict[str, str] = {}
    for r in raws:
        if r.id in seen_id:
            raise BadInput(f"meeting {r.id} is given twice ({seen_id[r.id]} and {r.source})")
        if r.transcript_sha256 in seen_text:
            raise BadInput(f"the same transcript is given twice ({seen_text[r.transcript_sha256]} and {r.source})")
        seen_id[r.id] = r.source
        seen_text[r.transcript_sha256] = r.source
    return sources, raws, record


# -- converting ------------------------------------------------------------------------------------


def _norm_text(text: str) -> str:
    return " ".join(text.casefold().split())


def convert_meeting(raw: RawMeeting) -> tuple[Meeting, list[Query], list[Refused], dict[str, int]]:
    d = raw.data
    turns, duration = synthetic_turns(d["meeting_transcripts"])
    speakers = tuple(sorted({t.speaker for t in turns}))
    domain = domain_of(raw.id, speakers)
    meeting = Meeting(
        id=raw.id,
        title=raw.id,
        recorded_date=None,
        duration=duration,
        timing="synthetic",
        speakers=speakers,
        turns=turns,
        attendees=speakers,
        meta={"domain": domain, "split": raw.split, "source": raw.source},
    )
    n = len(turns)
    whole = ((0, n - 1),)
    refused: list[Refused] = []
    # In source order, general list first: the first span-bearing occurrence of a text names its query.
    occurrences: list[_Occurrence] = []
    for kind, key in (("g", "general_query_list"), ("s", "specific_query_list")):
        for i, q in enumerate(d[key]):
            qid = f"{raw.id}-{kind}{i:03d}"
            text = q["query"].strip()
            if not text:
                refused.append(Refused(qid, "empty_text", "empty query text"))
                continue
            if kind == "g" and not q.get("relevant_text_span"):
                occurrences.append(_Occurrence(qid, text, None))
                continue
            spans, reason, detail = parse_spans(q.get("relevant_text_span"), n)
            if reason:
                refused.append(Refused(qid, reason, detail))
                continue
            occurrences.append(_Occurrence(qid, text, spans))

    groups: dict[str, list[_Occurrence]] = {}
    for occ in occurrences:
        groups.setdefault(_norm_text(occ.text), []).append(occ)
    dup = {"identical": 0, "spans_merged": 0, "general_dropped": 0}
    queries: list[Query] = []
    for group in groups.values():
        with_spans = [(o.qid, o.text, o.spans) for o in group if o.spans is not None]
        if with_spans:
            qid, text, first_spans = with_spans[0]
            spans = merge_ranges(r for _, _, o_spans in with_spans for r in o_spans)
            dup["general_dropped"] += len(group) - len(with_spans)
            for _, _, o_spans in with_spans[1:]:
                dup["identical" if o_spans == first_spans else "spans_merged"] += 1
            cls = "summarize" if is_summary_request(text) else "lookup"
            level, surface = "turn", _SURFACE[qid.rsplit("-", 1)[1][0]]
        else:
            qid, text = group[0].qid, group[0].text
            dup["identical"] += len(group) - 1
            spans, cls, level, surface = whole, "summarize", "meeting", _SURFACE["g"]
        queries.append(
            Query(
                id=qid,
                cls=cls,
                rule=RULE_OF_CLASS[cls],
                surface=surface,
                text=text,
                scored_on="retrieval",
                gold_meetings=(raw.id,),
                gold_turns={raw.id: spans},
                answer_turns={},
                answer=None,
                gold_level=level,
                meta={"domain": domain, "split": raw.split},
            )
        )
    return meeting, queries, refused, dup


def convert(paths: Sequence[Path], release: Release | None = None, allow_unverified: bool = False) -> Conversion:
    """Read and convert every source; pure apart from reading the input files."""
    sources, raws, record = read_sources(paths, release, allow_unverified)
    meetings, queries, refused = [], [], []
    duplicates = {"identical": 0, "spans_merged": 0, "general_dropped": 0}
    for raw in sorted(raws, key=lambda r: r.id):
        m, qs, rf, dup = convert_meeting(raw)
        meetings.append(m)
        queries.extend(qs)
        refused.extend(rf)
        for k, v in dup.items():
            duplicates[k] += v
    return Conversion(
        meetings=tuple(meetings),
        queries=tuple(sorted(queries, key=lambda q: q.id)),
        refused=tuple(sorted(refused, key=lambda r: r.query_id)),
        duplicates=duplicates,
        sources=tuple(sorted(sources, key=lambda s: (s.file, s.sha256, s.split))),
        release=record,
    )


def counts_of(conv: Conversion) -> dict[str, Any]:
    return {
        "meetings": len(conv.meetings),
        "meetings_by_domain": tally(m.meta["domain"] for m in conv.meetings),
        "meetings_by_split": tally(m.meta["split"] for m in conv.meetings),
        "turns": sum(len(m.turns) for m in conv.meetings),
        "words": sum(len(t.text.split()) for m in conv.meetings for t in m.turns),
        "queries": len(conv.queries),
        "queries_by_class": tally(q.cls for q in conv.queries),
        "queries_by_domain": tally(q.meta["domain"] for q in conv.queries),
        "queries_refused": {r: sum(1 for x in conv.refused if x.reason == r) for r in REFUSAL_REASONS},
        "queries_deduplicated": dict(sorted(conv.duplicates.items())),
        "meetings_unknown_domain": sum(1 for m in conv.meetings if m.meta["domain"] == UNKNOWN_DOMAIN),
    }


def producer_of(conv: Conversion) -> dict[str, Any]:
    return {
        "name": PRODUCER,
        "version": ADAPTER_VERSION,
        "sources": [s.to_json() for s in conv.sources],
        "timing": dict(TIMING),
        "summary_pattern": SUMMARY_PATTERN,
        "domain_id_patterns": {dom: pat for dom, pat in DOMAIN_ID_PATTERNS},
        "domain_speaker_rules": [{"domain": d, "pattern": p, "applies_to": q} for d, p, q in DOMAIN_SPEAKER_RULES],
        "dedupe": "same meeting and casefolded, whitespace-collapsed text; span occurrences win and are unioned",
        "refused_queries": [r.to_json() for r in conv.refused],
        **({"release": dict(conv.release)} if conv.release is not None else {}),
    }


def corpus_id_of(conv: Conversion) -> str:
    return corpus_id_from("qmsum", conv.sources)


def import_qmsum(paths: Sequence[Path], out: Path, *, release: Release | None = None,
                 allow_unverified: bool = False) -> dict[str, Any]:
    """Convert QMSum sources into a corpus at ``out``; returns the manifest. Nothing is left on failure. Every
    source file is checked against ``release`` (the bundled QMSum release when None) first: one that is not the
    release is refused (CorpusIntegrityError) unless ``allow_unverified``, which records it unverified."""
    out = canonical.refuse_non_empty(Path(out))
    conv = convert(paths, release if release is not None else bundled("qmsum"), allow_unverified)
    if not conv.meetings:
        raise BadInput("the sources hold no meetings")
    return write_imported(out, conv.meetings, conv.queries, corpus_id=corpus_id_of(conv), licence=LICENCE,
                          producer=producer_of(conv), counts=counts_of(conv))
