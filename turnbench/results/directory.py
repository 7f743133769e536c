"""Results directories on disk (docs/design.md §10, docs/formats.md): writing one, reading one back, and nothing else.

A results directory holds the claim — metrics.json and metrics.md (canonical JSON and fixed formatting: 6 decimals
in JSON, 4 in markdown, every list sorted, no wall-clock value, hostname or absolute path), answers.md, the
exported qrels and runs, bindings.jsonl and report.html — and, outside it, runinfo.json (timings, latency
quantiles, concurrency, host facts: what legitimately differs between runs).

A directory is trusted only as written. ``write_digest`` records the sha256 of every file but runinfo.json in
``claim.sha256`` — the format ``sha256sum`` writes, so ``sha256sum -c claim.sha256`` checks it without turnbench —
and ``read_results`` refuses a directory whose files do not match it, then checks the document against itself
(``turnbench.results.integrity``), every other file against metrics.json (the sha256 its provenance records, or the
bytes it makes again: ``turnbench.results.claimed``) and its values against the evidence
(``turnbench.results.rederive``). A hand-edited file is refused (exit 3) naming what differs, even with
``claim.sha256`` written again.

A *side* of a comparison is one results directory, or a set of ``seed-<S>/`` results directories (``bench
--seeds``); each directory is read through ``read`` (digest and numbers checked), its bindings with it, so that a
corpus whose text changed under a shared target is refused as a stale binding.
"""

from __future__ import annotations

import contextlib
import json
import platform
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.errors import BadInput, CorpusIntegrityError, ResultsIntegrityError
from turnbench.harness import bindings, exports
from turnbench.harness.answers import AnswerResults, answers_block
from turnbench.harness.exports import QRELS_PASSAGES, RUN_MEETINGS, RUN_PASSAGES, RUN_RAW
from turnbench.harness.score import ResultsFiles
from turnbench.harness.stats import nearest_rank
from turnbench.processes import Background
from turnbench.render import page
from turnbench.render.markdown import render_answers_md, render_metrics_md
from turnbench.render.page import Side
from turnbench.results.claimed import check_derived, check_recorded, digest_entries, with_file_digests
from turnbench.results.integrity import check_document
from turnbench.results.record import ANSWERS, Results, from_tree
from turnbench.results.rederive import NEEDED, rederive
from turnbench.submissions import SubmittedAnswer, write_answers

METRICS_JSON = "metrics.json"
METRICS_MD = "metrics.md"


RUNINFO_JSON = "runinfo.json"
CLAIM_FILES = (METRICS_JSON, METRICS_MD)


def runinfo(elapsed: Mapping[str, float], latencies_ms: Sequence[float] = (), concurrency: int | None = None,
            **extra: Any) -> dict[str, Any]:
    """runinfo.json's content: timings outside the claim, quantiles by nearest rank."""
    lat = sorted(latencies_ms)
    return {
        "elapsed_seconds": {k: round(float(v), 3) for k, v in elapsed.items()},
        "latency_ms": {f"p{p}": round(nearest_rank(lat, p), 3) for p in (50, 95, 99)} if lat else None,
        "queries_timed": len(lat),
        "concurrency": concurrency,
        "host": {"python": platform.python_version(), "machine": platform.machine(), "system": platform.system(),
                 "cpu_vector_isa": cpu_vector_isa()},
        **extra,
    }


def write_results(out_dir: Path, results: ResultsFiles,
                  info: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None) -> Path:
    """Write a results directory. It must not exist or be empty: an old claim is never half-overwritten. report.html
    is written after the other files (it may be drawn while they are written), then metrics.json and metrics.md
    (metrics.json records every other file's sha256), then ``info`` (or what it returns, called then: its timings
    may include that drawing)."""
    with staged_results(out_dir) as staged:
        write_staged(staged, results, info)
    return Path(out_dir)


@contextlib.contextmanager
def staged_results(out_dir: Path) -> Iterator[Path]:
    """A results directory being written: refused unless ``out_dir`` is absent or empty, then a staging directory
    beside it, renamed into place only when the block succeeds (``write_staged`` fills it; files made before may be
    written there early, as ``score_run(into=...)`` has its children write theirs)."""
    with canonical.staged_directory(canonical.refuse_non_empty(Path(out_dir), "results directory")) as tmp:
        yield tmp


def write_staged(tmp: Path, results: ResultsFiles,
                 info: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None) -> str:
    """``write_results`` into the staging directory of ``staged_results``; metrics.md's text, as written."""
    files = results.extra_files
    # the raw and the meeting runs, made as they are written (about half the writing), are written by a forked child
    # while the rest are written here, unless they were written already; the report is written here last (it may
    # still be being drawn by another child); each file is hashed as it is written, for claim.sha256
    away = {n: c for n in sorted(files) if n in _AWAY and isinstance(c := files[n], exports.Lazy)
            and not isinstance(c, exports.Written)}
    with contextlib.ExitStack() as stack:
        writing = stack.enter_context(Background(_write_all, tmp, away)) if away else None
        shas = _write_all(tmp, {n: files[n] for n in sorted(files) if n not in away and n != REPORT_HTML})
        shas |= writing.result() if writing is not None else {}
        if REPORT_HTML in files:
            shas |= _write_all(tmp, {REPORT_HTML: files[REPORT_HTML]})
        # metrics.json last: it records the sha256 of every other file (docs/formats.md), so none can be edited and
        # re-hashed in claim.sha256 alone
        record = with_file_digests(results.results, shas)
        markdown = render_metrics_md(record)
        shas |= _write_all(tmp, {METRICS_JSON: canonical.pretty(record.tree), METRICS_MD: markdown.encode("utf-8")})
        if callable(info):
            info = info()
        canonical.write_json(tmp / RUNINFO_JSON, dict(info) if info is not None else runinfo({}))
        write_digest(tmp, shas)
    return markdown


_AWAY = frozenset({RUN_RAW, RUN_MEETINGS})


def _write_all(directory: Path, files: Mapping[str, exports.Content]) -> dict[str, str]:
    """Each file written, and the sha256 of what was written."""
    return {name: exports.write_hashed(directory, name, content) for name, content in files.items()}


def runinfo_notes(baseline: Path, candidate: Path) -> tuple[str, ...]:
    """What differs between the two runs' stacks outside the claim (provider, exact server versions, JVM,
    images, binaries): not a reason to refuse a comparison, but a reader should see it."""
    def facts(directory: Path) -> dict[str, Any]:
        path = Path(directory) / RUNINFO_JSON
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        stack = info.get("stack") if isinstance(info, dict) else None
        return _flatten(stack) if isinstance(stack, dict) else {}

    a, b = facts(baseline), facts(candidate)
    return tuple(f"{key} differs: baseline {a.get(key)!s}, candidate {b.get(key)!s}"
                 for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key) and key != "chosen_because")


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def read_metrics(path: Path) -> Results:
    """The results of a directory (or of its metrics.json), refused unless they are exactly as written."""
    return read_results(Path(path))


DIGEST = "claim.sha256"
NOT_CLAIMED = frozenset({"runinfo.json", DIGEST})


def claimed_files(directory: Path) -> list[str]:
    # hidden files are the staging machinery (an owner marker), never results
    return sorted(p.name for p in Path(directory).iterdir()
                  if p.is_file() and p.name not in NOT_CLAIMED and not p.name.startswith("."))


def digest_text(directory: Path, known: Mapping[str, str] | None = None) -> str:
    """claim.sha256's lines; ``known`` gives the sha256 of files hashed as they were written (the rest are read)."""
    known = known or {}
    return "".join(f"{known.get(name) or canonical.sha256_file(Path(directory) / name)}  {name}\n"
                   for name in claimed_files(directory))


def write_digest(directory: Path, known: Mapping[str, str] | None = None) -> None:
    canonical.write_bytes_atomic(Path(directory) / DIGEST, digest_text(directory, known).encode("utf-8"))


def verify_digest(directory: Path) -> str:
    """Refuse unless ``claim.sha256`` lists exactly the directory's claim files, each with its hash; returns the
    digest's text."""
    directory = Path(directory)
    path = directory / DIGEST
    if not path.is_file():
        raise ResultsIntegrityError(f"{directory}: no {DIGEST}, so nothing vouches for these results; "
                                    "write them with `turnbench bench` or `turnbench score`")
    recorded: dict[str, str] = {}
    text = path.read_text(encoding="utf-8", errors="replace")
    for n, line in enumerate(text.splitlines(), 1):
        sha, _, name = line.partition("  ")
        if len(sha) != 64 or not name or "/" in name:
            raise ResultsIntegrityError(f"{path}: line {n} is not '<sha256>  <file>'")
        recorded[name] = sha
    present = set(claimed_files(directory))
    for name in sorted(set(recorded) | present):
        if name not in present:
            raise ResultsIntegrityError(f"{directory}: {name} is listed in {DIGEST} but missing")
        if name not in recorded:
            raise ResultsIntegrityError(f"{directory}: {name} is not listed in {DIGEST}")
        if canonical.sha256_file(directory / name) != recorded[name]:
            raise ResultsIntegrityError(f"{directory}: {name} was changed after it was written "
                                        f"(its sha256 no longer matches {DIGEST})")
    return text


def load_json(path: Path) -> Any:
    """JSON as turnbench writes it: UTF-8, and no NaN or infinity (Python's json would accept both)."""
    try:
        return canonical.parse_json(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise BadInput(f"{path}: not valid JSON ({exc})") from None


def read_results(directory: Path, *, checked: bool = True) -> Results:
    """The results of a directory, refused unless its digest and its own numbers agree. ``checked=False``
    verifies the digest alone and leaves the rest — the document consistent with itself, its values following
    from the exported evidence — to the caller (``rederive_dirs``)."""
    return from_tree(*_checked(Path(directory), checked)[0:1], str(directory))


class ReadOnce:
    """The documents one command has read unchecked, by the claim.sha256 text that vouched for each: a directory
    whose verified digest is one of them holds the same bytes, so it is not parsed again (a self-compare, two seeds
    of one run). Opaque to its holder: the trees stay inside this module."""

    def __init__(self) -> None:
        self._trees: dict[str, dict[str, Any]] = {}


def _checked(directory: Path, checked: bool, known: ReadOnce | None = None) -> tuple[dict[str, Any], str]:
    """(metrics.json, the claim.sha256 text that vouched for it). ``known`` (unchecked reads only): documents
    already read, by that text; a directory whose verified digest is one of them holds the same bytes, so it is not
    parsed again."""
    if directory.is_file() and directory.name == "metrics.json":
        directory = directory.parent
    path = directory / "metrics.json"
    if not directory.is_dir():
        raise BadInput(f"{directory}: no such results directory")
    if not path.is_file():
        raise BadInput(f"{directory}: no metrics.json here; not a results directory")
    claim = verify_digest(directory)
    if checked:
        known = None  # a document read unchecked must never stand in for a checked one
    if known is not None and claim in known._trees:
        return dict(known._trees[claim]), claim
    doc = load_json(path)
    if not checked and not isinstance(doc, dict):
        check_document(doc, str(directory))  # not a document at all: refused here, whoever checks the rest
    if checked:
        check_document(doc, str(directory))
        _rederive(directory, doc, claim)
    if known is not None:
        known._trees[claim] = doc
    return dict(doc), claim


def _rederive(directory: Path, doc: Any, claim: str) -> None:
    # the digest proves only that nothing changed since writing: every other file must be the one metrics.json
    # records or gives, and its values must follow from the evidence
    listed, where = digest_entries(claim), str(directory)
    check_recorded(doc, listed, where)
    files = {name: (directory / name).read_bytes() for name in NEEDED if (directory / name).is_file()}
    rederive(doc, files, where)
    check_derived(doc, listed, lambda name: files[name] if name in files else (directory / name).read_bytes(), where,
                  _rendered(doc))


def _rendered(document: Mapping[str, Any]) -> dict[str, Callable[[], bytes]]:
    """The files people read, as ``document`` makes them: metrics.md, and answers.md when it has answers."""
    from turnbench.results.integrity import rebuild

    out: dict[str, Callable[[], bytes]] = {METRICS_MD: lambda: render_metrics_md(from_tree(document)).encode("utf-8")}
    if ANSWERS in document:
        out[ANSWERS_MD] = lambda: render_answers_md(rebuild(document[ANSWERS])).encode("utf-8")
    return out


def rederive_dirs(directories: Sequence[Path]) -> list[str]:
    """Every directory read and checked as ``read_results`` does; returns each one's claim.sha256 text, so a
    caller that read them with ``checked=False`` can confirm it read what was checked. A directory whose
    verified digest is byte-identical to one already re-derived holds the same evidence, so it is not re-derived
    again (a self-compare, a candidate whose results did not move)."""
    claims: list[str] = []
    read = ReadOnce()  # by claim text: a copy is verified against its digest, not read again
    for directory in directories:
        first = len(read._trees)
        doc, claim = _checked(Path(directory), False, read)
        if len(read._trees) > first:
            check_document(doc, str(directory))
            _rederive(Path(directory), doc, claim)
        claims.append(claim)
    return claims


def side_dirs(path: Path) -> list[Path]:
    """The results directories one side of a comparison reads: itself, or its seed-<S>/ directories."""
    seeds = seed_dirs(Path(path))
    return [Path(path)] if seeds is None else list(seeds.values())


def corpus_ids(path: Path) -> set[str]:
    """The corpus ids a results directory (or set of seeds) records, read without any check (a comparison checks)."""
    out = set()
    for d in side_dirs(Path(path)):
        try:
            out.add(str(json.loads((d / METRICS_JSON).read_bytes())["provenance"]["corpus"]["id"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # the comparison says what is wrong with it
    return out


# The instruction sets onnxruntime's kernels choose between: the same int8 model gives other vectors on a CPU with
# another set (AVX2's multiply-add saturates where AVX-512 VNNI's does not; float reductions run in other orders), so
# dense results are reproducible on one class of CPU, not across them. Recorded in runinfo.json (never the claim).
VECTOR_ISA = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx_vnni",
              "avx512_bf16", "amx_int8", "amx_bf16", "asimd", "asimddp", "sve")


def cpu_vector_isa() -> str:
    """The CPU's vector instruction sets among ``VECTOR_ISA``, as /proc/cpuinfo names them ("" when unknown)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    line = next((ln for ln in text.splitlines() if ln.startswith(("flags", "Features"))), "")
    have = set(line.partition(":")[2].split())
    return " ".join(f for f in VECTOR_ISA if f in have)


SEED_DIR = re.compile(r"seed-([0-9]{1,10})")


def seed_dirs(path: Path) -> dict[int, Path] | None:
    """``{seed: results directory}`` when ``path`` holds ``seed-<S>/`` results directories; None when ``path`` is
    a results directory itself."""
    path = Path(path)
    if (path / "metrics.json").is_file() or path.name == "metrics.json":
        return None
    found = {int(m.group(1)): d for d in sorted(path.iterdir()) if d.is_dir() and (m := SEED_DIR.fullmatch(d.name))
             and (d / "metrics.json").is_file()} if path.is_dir() else {}
    if not found:
        raise BadInput(f"{path}: neither a results directory (metrics.json) nor a set of seed-<S>/ results "
                       "directories")
    return dict(sorted(found.items()))


ANSWERS_MD = "answers.md"
ANSWERS_JSON = "answers.json"


ANSWERS_JSONL = "answers.jsonl"


def write_answer_results(out_dir: Any, answer_results: AnswerResults, submitted: Sequence[SubmittedAnswer],
                         provenance: Mapping[str, Any]) -> Any:
    """A results directory of the answer stage alone: answers.json (provenance + the block), answers.md and
    answers.jsonl (what was submitted, re-scorable). It must not exist or be empty."""

    out_dir = canonical.refuse_non_empty(Path(out_dir), "results directory")
    with canonical.staged_directory(out_dir) as tmp:
        canonical.write_json(tmp / ANSWERS_JSON, {"provenance": dict(provenance),
                                                  ANSWERS: answers_block([answer_results]).to_json()})
        canonical.write_bytes_atomic(tmp / ANSWERS_MD, render_answers_md([answer_results]).encode("utf-8"))
        write_answers(tmp / ANSWERS_JSONL, submitted)
        write_digest(tmp)
    return out_dir


def read(directory: Path, *, checked: bool = True, known: ReadOnce | None = None) -> page.Page:
    """A results directory, refused unless its digest and numbers hold (``read_results``; ``known`` as there)."""
    directory = Path(directory)
    document, claim = _checked(directory, checked, known)
    files = {name: (directory / name).read_bytes() for name in (RUN_PASSAGES, QRELS_PASSAGES, bindings.BINDINGS)
             if (directory / name).is_file()}
    recorded, latency = None, None
    info = directory / RUNINFO_JSON
    if info.is_file():
        try:
            doc = load_json(info)
            value, quantiles = doc.get("corpus_dir"), doc.get("latency_ms")
            recorded = value if isinstance(value, str) else None
            if isinstance(quantiles, dict) and all(isinstance(quantiles.get(k), (int, float)) and
                                                   not isinstance(quantiles.get(k), bool) for k in ("p50", "p95")):
                latency = {k: float(quantiles[k]) for k in ("p50", "p95")}
        except (BadInput, AttributeError):
            recorded, latency = None, None
    return page.from_files(from_tree(document, str(directory)), files, recorded, latency, claim)


def attach_texts(view: page.Page, corpora: Sequence[Corpus], cache: page.Meetings | None = None,
                 only: Collection[str] | None = None) -> page.Page:
    """``view`` with texts from the named corpus of its id (every binding checked), else from the corpus
    runinfo.json records (``only``: just the queries a page shows, checked and read)."""
    from turnbench.corpus.format import open_corpus

    cache = cache or page.Meetings()
    if not view.has_bindings:
        return view
    for c in corpora:
        if c.id == view.corpus_id:
            return view.with_texts(page.texts_from(view, c, "named with --corpus", cache.of(c), cache.memo(c)))
    if view.corpus_dir is None:
        return view
    try:
        recorded = open_corpus(Path(view.corpus_dir))
    except (BadInput, CorpusIntegrityError, OSError):
        return view.with_texts(page.Texts("the corpus recorded in runinfo.json is gone or damaged: texts are not "
                                               "shown (pass --corpus DIR)"))
    if recorded.sha256 != view.corpus_sha256:
        return view.with_texts(page.Texts("the corpus recorded in runinfo.json now holds other text: texts are "
                                               "not shown (pass --corpus DIR)"))
    read = cache.of(recorded) if only is None or only else {}  # a page showing no query reads no meeting
    return view.with_texts(page.texts_from(view, recorded, "found where runinfo.json records it", read,
                                      cache.memo(recorded), only))


REPORT_HTML = "report.html"


def load_side(path: Path, *, checked: bool = True, known: ReadOnce | None = None) -> Side:
    seeds = seed_dirs(Path(path))
    if seeds is None:
        return [(None, read(Path(path), checked=checked, known=known))]
    return [(s, read(d, checked=checked, known=known)) for s, d in seeds.items()]


def with_texts(sides: Sequence[Side], corpora: Sequence[Corpus],
               shown: Mapping[int | None, Collection[str]] | None = None) -> list[Side]:
    """``sides`` with the texts each results directory binds to. Every named corpus must be the corpus of some
    results here, and each results directory of that corpus is checked against its text (StaleBinding names the
    first stale target). ``shown``: per seed, the queries the page shows; a corpus found through runinfo.json is
    then read and checked for those alone."""
    ids = {v.corpus_id for side in sides for _, v in side}
    for c in corpora:
        if c.id not in ids:
            raise BadInput(f"corpus {c.id} is not the corpus of any results given ({', '.join(sorted(ids))})")
    cache = page.Meetings()
    return [[(s, attach_texts(v, corpora, cache, None if shown is None else shown.get(s, ()))) for s, v in side]
            for side in sides]
