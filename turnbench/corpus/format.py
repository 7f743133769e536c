"""Reading and writing a corpus directory (format v1, docs/design.md §4).

Reading verifies every manifest hash before anything else is read, and refuses missing or extra
files; writing streams meetings into parts and finishes with the manifest, inside a staged directory
so an interrupted write never leaves a corpus that looks complete.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from turnbench import canonical
from turnbench.corpus.records import Meeting, Query, meeting_lines
from turnbench.errors import BadInput, CorpusIntegrityError

FORMAT_NAME = "turnbench-corpus"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
STATS = "stats.json"
# Files a corpus may hold outside the manifest's hash list: the manifest itself and the derived stats.
UNHASHED = frozenset({MANIFEST, STATS})
MEETINGS_PER_PART = 50


def part_name(ordinal: int) -> str:
    """The part file of the meeting at ``ordinal``: a pure function, so parallel writers agree."""
    return f"meetings/part-{ordinal // MEETINGS_PER_PART:04d}.jsonl"


def corpus_sha256(files: Mapping[str, str]) -> str:
    """The corpus identity: a hash over the sorted (path, sha256) list, so it names content, not location."""
    return canonical.sha256_bytes(canonical.dumps(dict(sorted(files.items()))).encode())


def _listing(root: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.startswith("."):
                continue
            out.add(Path(dirpath, f).relative_to(root).as_posix())
    return out


@dataclass(frozen=True)
class Corpus:
    """A verified corpus directory. Iterators are lazy: meetings are read part by part."""

    root: Path
    manifest: Mapping[str, Any]

    @property
    def id(self) -> str:
        return self.manifest["corpus_id"]

    @property
    def sha256(self) -> str:
        return self.manifest["corpus_sha256"]

    @property
    def licence(self) -> Mapping[str, str]:
        return self.manifest["licence"]

    @property
    def meeting_files(self) -> list[str]:
        return sorted(f for f in self.manifest["files"] if f.startswith("meetings/"))

    def iter_meetings(self) -> Iterator[Meeting]:
        return self._read(self.meeting_files)

    def halves(self, share: float = 0.5
               ) -> tuple[Callable[[], Iterator[Meeting]], Callable[[], Iterator[Meeting]]] | None:
        """The meetings as two runs of their part files, in corpus order (what ``iter_meetings`` yields, split where
        a part ends, the first run about ``share`` of their bytes), each read lazily when called; None for a corpus
        of one part, which does not split."""
        files = self.meeting_files
        if len(files) < 2:
            return None
        sizes = [(self.root / rel).stat().st_size for rel in files]
        cut, total, reached = 1, sum(sizes), sizes[0]
        while cut < len(files) - 1 and reached + sizes[cut] / 2 <= share * total:
            reached += sizes[cut]
            cut += 1
        return (lambda: self._read(files[:cut])), (lambda: self._read(files[cut:]))

    def iter_meetings_of(self, ids: Collection[str]) -> Iterator[Meeting]:
        """The meetings of ``ids``, in corpus order, the others' lines skipped unparsed (a page checks the bindings
        of ten queries: reading every meeting was most of drawing it)."""
        want = set(ids)
        if not want:
            return iter(())
        return (m for m in self._read(self.meeting_files, keep=lambda line: _may_be_one_of(line, want))
                if m.id in want)

    def _read(self, files: Sequence[str], keep: Callable[[bytes], bool] | None = None) -> Iterator[Meeting]:
        for rel in files:
            yield from canonical.read_records(self.root / rel, Meeting.from_json, "a format-v1 meeting", keep=keep,
                                              fast=meeting_lines)

    def queries(self) -> list[Query]:
        return list(self._queries)

    @functools.cached_property
    def _queries(self) -> tuple[Query, ...]:
        # read once per opened corpus: a bench asks for them at every stage, and a second read could only differ
        # if the files changed after they were verified
        return tuple(canonical.read_records(self.root / "queries.jsonl", Query.from_json, "a format-v1 query"))

    def facts(self) -> Iterator[Mapping[str, Any]]:
        path = self.root / "facts.jsonl"
        if path.exists():
            yield from canonical.read_jsonl(path)

    def provenance(self) -> dict[str, Any]:
        """What a results file records about the corpus it was measured on (docs/design.md §3 rule 1)."""
        producer = self.manifest.get("producer", {})
        prov = {
            "id": self.id,
            "format_version": self.manifest["format_version"],
            "sha256": self.sha256,
            "licence": dict(self.licence),
            "producer": producer.get("name"),
            "producer_version": producer.get("version"),
            "seed": producer.get("seed"),
            "counts": dict(self.manifest.get("counts", {})),
        }
        if isinstance(producer.get("release"), dict):  # an imported corpus: whether its sources are the release's
            prov["release"] = dict(producer["release"])
        return prov


# an "id" member with a string value, as any JSON writer spells it (no escape inside the key)
_ID_MEMBER = re.compile(rb'"id"[ \t\r\n]*:[ \t\r\n]*"((?:[^"\\]|\\.)*)"')


def _may_be_one_of(line: bytes, want: Collection[str]) -> bool:
    """Whether a meeting line may be one of ``want``: one of its "id" members names one of them, or it has no such
    member as spelled here at all (then it is parsed, to be sure). Never false for a meeting in ``want``."""
    found = _ID_MEMBER.findall(line)
    if not found:
        return True
    for raw in found:
        try:
            if (raw.decode("utf-8") if b"\\" not in raw else json.loads(b'"' + raw + b'"')) in want:
                return True
        except ValueError:
            return True
    return False


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of the corpus at ``root``, its shape checked: a path that is no corpus is bad input; a
    corpus whose manifest is malformed is refused, since nothing in it can then be trusted."""
    root = Path(root)
    path = root / MANIFEST
    if not root.exists():
        raise BadInput(f"{root}: no such corpus directory")
    if not root.is_dir():
        raise BadInput(f"{root}: not a directory, so not a corpus")
    if not path.is_file():
        raise BadInput(f"{root}: no {MANIFEST}; not a corpus directory")

    try:
        manifest = canonical.parse_json(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise CorpusIntegrityError(f"{path}: not UTF-8 text") from None
    except ValueError as exc:
        raise CorpusIntegrityError(f"{path}: not valid JSON ({exc})") from None
    check_manifest(manifest, path, CorpusIntegrityError)
    return dict(manifest)


def check_manifest(manifest: Any, path: Path, error: type[Exception]) -> None:
    """The fields every reader relies on, with their types; ``error`` names what is wrong in one line."""
    if not isinstance(manifest, dict):
        raise error(f"{path}: holds a JSON {type(manifest).__name__}, not a manifest object")
    if manifest.get("format") != FORMAT_NAME or manifest.get("format_version") != FORMAT_VERSION:
        raise error(f"{path}: format {manifest.get('format')!r} v{manifest.get('format_version')!r} is not "
                    f"{FORMAT_NAME} v{FORMAT_VERSION}")
    for key, kind in (("corpus_id", str), ("corpus_sha256", str), ("files", dict), ("licence", dict)):
        if not isinstance(manifest.get(key), kind):
            raise error(f"{path}: {key!r} is missing or not a {'string' if kind is str else 'JSON object'}")
    for rel, sha in manifest["files"].items():
        if not (isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
            raise error(f"{path}: files[{rel!r}] is not a sha256")
        parts = Path(rel).parts
        if not rel or Path(rel).is_absolute() or ".." in parts or rel.startswith("."):
            raise error(f"{path}: files names {rel!r}, which is not a path inside the corpus")


def verify(root: Path, manifest: Mapping[str, Any]) -> None:
    """Refuse unless the directory holds exactly the manifest's files, each with its recorded hash."""
    root = Path(root)
    files: Mapping[str, str] = manifest["files"]
    present = _listing(root)
    missing = sorted(set(files) - present)
    extra = sorted(present - set(files) - UNHASHED)
    if missing:
        raise CorpusIntegrityError(f"{root}: missing file(s) listed in the manifest: {', '.join(missing)}")
    if extra:
        raise CorpusIntegrityError(f"{root}: file(s) not in the manifest: {', '.join(extra)}")
    bad = [rel for rel in sorted(files) if canonical.sha256_file(root / rel) != files[rel]]
    if bad:
        raise CorpusIntegrityError(f"{root}: sha256 does not match the manifest for: {', '.join(bad)}")
    if corpus_sha256(files) != manifest.get("corpus_sha256"):
        raise CorpusIntegrityError(f"{root}: corpus_sha256 in the manifest does not match its file list")


def open_corpus(root: Path, *, check_hashes: bool = True) -> Corpus:
    root = Path(root)
    manifest = read_manifest(root)
    if check_hashes:
        verify(root, manifest)
    return Corpus(root=root, manifest=manifest)


class CorpusWriter:
    """Write a corpus into a directory that must not exist or be empty.

    Use as a context manager: files go to a staged sibling directory that is renamed into place when
    the block ends without an error; the manifest is written last, so a corpus that looks complete is.
    """

    def __init__(self, out: Path) -> None:
        out = canonical.refuse_non_empty(Path(out))
        self.out = out
        self._stage: AbstractContextManager[Path] | None = None
        self._tmp: Path | None = None
        self._parts: dict[str, IO[bytes]] = {}

    def __enter__(self) -> CorpusWriter:
        self._stage = canonical.staged_directory(self.out)
        self._tmp = self._stage.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool | None:
        for fh in self._parts.values():
            fh.close()
        self._parts.clear()
        if self._stage is None:
            return None
        return self._stage.__exit__(exc_type, exc, tb)

    @property
    def path(self) -> Path:
        if self._tmp is None:
            raise RuntimeError("CorpusWriter used outside its `with` block")
        return self._tmp

    def write_meeting_line(self, ordinal: int, line: bytes) -> None:
        """Append one already-canonical meeting line; ordinals must arrive in increasing order."""
        rel = part_name(ordinal)
        fh = self._parts.get(rel)
        if fh is None:
            for other in self._parts.values():
                other.close()
            self._parts.clear()
            (self.path / "meetings").mkdir(exist_ok=True)
            fh = self._parts[rel] = open(self.path / rel, "ab")
        fh.write(line)

    def write_meetings(self, meetings: Iterable[Meeting]) -> int:
        n = 0
        for n, m in enumerate(meetings, 1):
            self.write_meeting_line(n - 1, canonical.dumps_line(m.to_json()))
        return n

    def write_queries(self, queries: Iterable[Query]) -> None:
        canonical.write_jsonl(self.path / "queries.jsonl", (q.to_json() for q in queries))

    def write_facts(self, facts: Iterable[Mapping[str, Any]]) -> None:
        canonical.write_jsonl(self.path / "facts.jsonl", facts)

    def write_manifest(self, *, corpus_id: str, licence: Mapping[str, str], producer: Mapping[str, Any],
                       counts: Mapping[str, Any]) -> dict[str, Any]:
        for fh in self._parts.values():
            fh.close()
        self._parts.clear()
        files = {rel: canonical.sha256_file(self.path / rel) for rel in sorted(_listing(self.path) - UNHASHED)}
        manifest = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "corpus_id": corpus_id,
            "licence": dict(licence),
            "producer": dict(producer),
            "counts": dict(counts),
            "files": files,
            "corpus_sha256": corpus_sha256(files),
        }
        canonical.write_json(self.path / MANIFEST, manifest)
        return manifest
