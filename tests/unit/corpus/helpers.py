"""Helpers for the corpus tests: small hand-written corpora in format v1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from turnbench import canonical
from turnbench.corpus.format import CorpusWriter
from turnbench.corpus.records import Meeting, Query, Turn
from turnbench.corpus.releases import ReadFile, Release, load_release, record

REPO = Path(__file__).resolve().parents[3]
QMSUM_FIXTURE = REPO / "tests" / "fixtures" / "qmsum"
MEETINGQA_FIXTURE = REPO / "tests" / "fixtures" / "meetingqa"
MEETINGQA_SPLITS = MEETINGQA_FIXTURE / "ProcessedTranscripts" / "Annotated-AMI-QA"
TEST_COMMIT = "0" * 40


def release_file(out: Path, corpus: str, files: Mapping[str, Path]) -> Path:
    """A test-only release manifest of ``corpus`` at ``out``: each path under the release root, and the file whose
    bytes it pins (read now)."""
    pins = {}
    for key, path in files.items():
        f = ReadFile.of(key, path.read_bytes())
        pins[key] = {"git_blob": f.git_blob, "sha256": f.sha256}
    out.write_bytes(canonical.pretty(record(corpus, repository="test/hand-made", commit=TEST_COMMIT, root="data",
                                            licence={"name": "test", "tier": "A"}, files=pins,
                                            recorded_from="a test's hand-made tree")))
    return out


def fixture_release(out: Path, corpus: str) -> Path:
    """The test-only release of the hand-written fixtures (tests/fixtures/qmsum, tests/fixtures/meetingqa)."""
    if corpus == "qmsum":
        files = {f"{p.parent.name}/{p.name}": p for p in (QMSUM_FIXTURE / "ALL").glob("*/*.json")}
        files.update({f"jsonl/{p.name}": p for p in (QMSUM_FIXTURE / "jsonl").glob("*.jsonl")})
    else:
        files = {f"{p.parent.name}/{p.name}": p for p in MEETINGQA_SPLITS.glob("*/*.json")}
    return release_file(out, corpus, files)


def fixture_release_of(tmp: Path, corpus: str) -> Release:
    return load_release(fixture_release(tmp / f"{corpus}-release.json", corpus), corpus)


def write(root: Path, meetings: Sequence[Meeting], queries: Sequence[Query]) -> Path:
    """A corpus that turnbench.generator did not write (no facts.jsonl), as a QMSum import would be."""
    with CorpusWriter(root) as w:
        w.write_meetings(meetings)
        w.write_queries(queries)
        w.write_manifest(corpus_id="qmsum-mini", licence={"tier": "A", "name": "MIT"},
                         producer={"name": "turnbench.qmsum", "version": "x"},
                         counts={"meetings": len(meetings), "queries": len(queries)})
    return root


def m(mid: str, turns: Sequence[Turn], duration: float = 100.0) -> Meeting:
    return Meeting(id=mid, title=mid, recorded_date=None, duration=duration, timing="synthetic",
                   speakers=tuple(sorted({t.speaker for t in turns})), turns=tuple(turns))


GOOD = [m("a", [Turn(0, "x", 0.0, 5.0, "hello there"), Turn(1, "y", 4.0, 9.0, "overlap is fine"),
                Turn(2, "z", 4.0, 6.0, "same start is fine")]),
        m("b", [Turn(0, "y", 1.0, 2.0, "one")], duration=2.0)]
QUERIES = [Query("q1", "lookup", "R1", "qmsum", "what", "retrieval", ("a",), {"a": ((0, 1),)}, {"a": (1,)}),
           Query("q2", "summarize", "R8", "qmsum", "sum", "retrieval", ("a", "b"), {"a": ((0, 2),), "b": ((0, 0),)},
                 gold_level="meeting")]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except stats.json: the self-measure may add it, and it is outside the manifest."""
    root = Path(root)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "stats.json"}
