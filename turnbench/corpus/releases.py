"""Release manifests: what a published corpus's source files are at a named release, so an import can prove it read
them and nothing else.

A release manifest (``turnbench/corpus/releases/<corpus>.json``, docs/formats.md) names the upstream repository and
commit, the licence its repository states and the tier turnbench gives it, and, for every source file under the
release's ``root`` (the directory an importer reads: QMSum's ``data/ALL``, MeetingQA's
``ProcessedTranscripts/Annotated-AMI-QA``), its path under that root, its git blob id and the sha256 of its bytes at
the commit. The hashes were recorded from the public repository's own history (``scripts/record_release.py``:
``git cat-file`` of each blob at the commit), never from a download; a file whose blob the copy of the repository
lacked (QMSum's ``jsonl/train.jsonl``, over the copy's 4 MiB limit) has sha256 null and is checked by its git blob
id, itself a hash of its bytes.

An importer keys each file it reads by its path under the root (``<split>/<meeting>.json``; QMSum's JSONL files
``jsonl/<split>.jsonl``) and checks, before it parses anything: every file read is listed, with the same sha256, and
a split directory read holds every file the release lists in that split (a single file or a JSONL file stands on
its own). The first problem is refused in one line naming the file (CorpusIntegrityError, exit 3: the bytes are not
the ones the release pins, as for a corpus file against its manifest), unless the import allows unverified sources:
then it is imported and its manifest records ``release.verified: false`` with the problem."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench.errors import BadInput, CorpusIntegrityError

FORMAT = "turnbench-release"
FORMAT_VERSION = 1
BUNDLED = Path(__file__).parent / "releases"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def git_blob(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Pinned:
    """A file of a release: its git blob id at the commit, and the sha256 of its bytes (None when the blob was not
    in the copy of the repository it was recorded from: the blob id alone pins it then)."""

    git_blob: str
    sha256: str | None

    def matches(self, sha256: str, blob: str) -> bool:
        return sha256 == self.sha256 if self.sha256 is not None else blob == self.git_blob

    def shown(self) -> str:
        return f"sha256 {self.sha256[:12]}…" if self.sha256 is not None else f"git blob {self.git_blob[:12]}…"


@dataclass(frozen=True)
class Release:
    """One named release of a published corpus: where it is from and the sha256 of each source file."""

    corpus: str
    repository: str
    commit: str
    root: str
    licence: Mapping[str, str]
    files: Mapping[str, Pinned]  # path under root -> what it is at the commit

    @property
    def id(self) -> str:
        return f"{self.repository}@{self.commit[:12]}"


@dataclass(frozen=True)
class ReadFile:
    """A source file as an importer read it: its path under the release root, the sha256 and git blob id of its
    bytes."""

    key: str
    sha256: str
    git_blob: str

    @classmethod
    def of(cls, key: str, data: bytes) -> ReadFile:
        return cls(key, hashlib.sha256(data).hexdigest(), git_blob(data))


def load_release(path: Path | str, corpus: str) -> Release:
    """Read a release manifest of ``corpus``; a file that is not one is refused (BadInput) in one line."""
    where = str(path)
    try:
        d = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise BadInput(f"{where}: cannot read the release manifest ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{where}: not a release manifest (not valid JSON: {getattr(exc, 'msg', exc)})") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT or d.get("format_version") != FORMAT_VERSION:
        raise BadInput(f"{where}: not a release manifest (format {FORMAT} version {FORMAT_VERSION})")
    if d.get("corpus") != corpus:
        raise BadInput(f"{where}: a release of {d.get('corpus')!r}, not of {corpus!r}")
    source, licence, files = d.get("source"), d.get("licence"), d.get("files")
    if not (isinstance(source, dict) and all(isinstance(source.get(k), str) for k in ("repository", "commit", "root"))
            and _COMMIT.fullmatch(source["commit"])):
        raise BadInput(f"{where}: source needs a repository, a 40-digit commit and a root")
    if not (isinstance(licence, dict) and isinstance(licence.get("name"), str)
            and licence.get("tier") in ("A", "B", "C")):
        raise BadInput(f"{where}: licence needs a name and a tier (A, B or C)")
    if not (isinstance(files, dict) and files and all(isinstance(k, str) and _pin_ok(v) for k, v in files.items())):
        raise BadInput(f"{where}: files must map each path to its git_blob (40 hex digits) and sha256 (64, or null)")
    return Release(corpus=corpus, repository=source["repository"], commit=source["commit"], root=source["root"],
                   licence={k: str(v) for k, v in licence.items()},
                   files={k: Pinned(v["git_blob"], v["sha256"]) for k, v in files.items()})


def _pin_ok(v: Any) -> bool:
    return (isinstance(v, dict) and set(v) == {"git_blob", "sha256"} and isinstance(v["git_blob"], str)
            and bool(_COMMIT.fullmatch(v["git_blob"]))
            and (v["sha256"] is None or (isinstance(v["sha256"], str) and bool(_SHA256.fullmatch(v["sha256"])))))


def bundled(corpus: str) -> Release:
    """The release turnbench pins for ``corpus`` (package data)."""
    return load_release(BUNDLED / f"{corpus}.json", corpus)


def problem(release: Release, read: Sequence[ReadFile], whole_splits: Iterable[str]) -> str | None:
    """The first way the files read are not the release, in one line naming the file; None when they are it."""
    name = f"release {release.id}"
    for f in read:
        want = release.files.get(f.key)
        if want is None:
            return f"{f.key}: not a file of {name}"
        if not want.matches(f.sha256, f.git_blob):
            got = f"sha256 {f.sha256[:12]}…" if want.sha256 is not None else f"git blob {f.git_blob[:12]}…"
            return f"{f.key}: {got} is not {name}'s {want.shown()}"
    keys = {f.key for f in read}
    for split in sorted(set(whole_splits)):
        missing = sorted(k for k in release.files if k.startswith(f"{split}/") and k not in keys)
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            return f"{missing[0]}: missing from the directory {split}/ read ({name} lists it{more})"
    return None


def verify(release: Release, read: Sequence[ReadFile], whole_splits: Iterable[str], *,
           allow_unverified: bool) -> dict[str, Any]:
    """What the corpus manifest records of the release (``producer.release``); refuses a source that is not the
    release (CorpusIntegrityError) unless ``allow_unverified``, which records it unverified with the reason."""
    why = problem(release, read, whole_splits)
    record: dict[str, Any] = {"id": release.id, "repository": release.repository, "commit": release.commit,
                              "verified": why is None}
    if why is None:
        return record
    if not allow_unverified:
        raise CorpusIntegrityError(f"{why}; nothing was written (--allow-unverified imports it, marked unverified)")
    record["reason"] = why
    return record


def record(corpus: str, *, repository: str, commit: str, root: str, licence: Mapping[str, str],
           files: Mapping[str, Mapping[str, str | None]], recorded_from: str) -> dict[str, Any]:
    """A release manifest's JSON (what ``scripts/record_release.py`` writes)."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "corpus": corpus,
        "source": {"repository": repository, "commit": commit, "root": root, "recorded_from": recorded_from},
        "licence": dict(licence),
        "files": {k: dict(v) for k, v in sorted(files.items())},
    }
