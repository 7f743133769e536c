"""The corpus from Python: generate (or regenerate from a manifest), validate, import a published corpus, export one
for other tools. Each verb checks its arguments, then calls the room that owns the work."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from turnbench.api._args import PathLike, _corpus, _corpus_root, _int, _path, _paths, _typed
from turnbench.errors import BadInput, NotPublishable

if TYPE_CHECKING:
    from turnbench.corpus.checks import CheckResult
    from turnbench.corpus.format import Corpus
    from turnbench.export.beir import Counts
    from turnbench.export.runs import ExportedRun
    from turnbench.export.transcripts import Written
    from turnbench.generator.generate import Regenerated

CorpusLike = Any  # a Corpus or its directory


def generate(out: PathLike, *, seed: int | None = 20261130, meetings: int | None = 200, workers: int = 1,
             **config: Any) -> Corpus:
    """Generate a synthetic corpus into ``out`` (which must not exist or be empty) and return it (``.manifest``
    says what was written). ``config`` takes the rest of ``GeneratorConfig`` (words_per_meeting, near_duplicate_rate,
    register, ...); a setting given as None takes its default, and a ``register`` sets the words per meeting unless
    they are given too, as ``turnbench generate`` does."""
    from turnbench.corpus.format import Corpus
    from turnbench.generator.config import GeneratorConfig
    from turnbench.generator.generate import generate as write_corpus

    target = _path(out, "out")
    _int(workers, "workers")
    known = {f.name for f in dataclasses.fields(GeneratorConfig)} - {"seed", "meetings"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise BadInput(f"generate() takes no setting {', '.join(unknown)}; GeneratorConfig's: "
                       f"{', '.join(sorted(known))}")
    manifest = write_corpus(GeneratorConfig.from_options(seed=seed, meetings=meetings, **config), target,
                            workers=workers)
    return Corpus(root=target, manifest=manifest)


def regenerate(manifest: PathLike, out: PathLike, *, workers: int = 1,
               allow_version_drift: bool = False) -> Regenerated:
    """Regenerate the corpus a manifest records (its seed and full config) into ``out``: its manifest, the version
    drift (refused unless ``allow_version_drift``) and the files that differ from the recorded ones."""
    from turnbench.generator.generate import regenerate as again

    recorded, target = _path(manifest, "manifest"), _path(out, "out")
    _int(workers, "workers")
    _typed(allow_version_drift, bool, "allow_version_drift", "True or False")
    return again(recorded, target, workers=workers, allow_version_drift=allow_version_drift)


SKIPPED_COSINE = "skipped (--skip-cosine)"


def validate(corpus: CorpusLike, *, surface_cosine: bool | None = None) -> list[CheckResult]:
    """Every check of a corpus (hashes first, then the checks that re-derive every gold item from its text); a
    check whose ``ok`` is False failed. ``surface_cosine``: True adds the check that every query surface is
    answerable from one passage by meaning (it runs the encoder; n/a for a corpus turnbench did not generate),
    False adds it as skipped, None leaves it out."""
    from turnbench.corpus.checks import CheckResult
    from turnbench.corpus.format import open_corpus
    from turnbench.generator.validate import NOT_SYNTHETIC, is_synthetic, validate_corpus

    root = _corpus_root(corpus)
    _typed(surface_cosine, bool, "surface_cosine", "True or False", optional=True)
    results = validate_corpus(root)
    if surface_cosine is None:
        return results
    opened = open_corpus(root)
    if not is_synthetic(opened.manifest):
        results.append(CheckResult("surface_cosine", "n/a", NOT_SYNTHETIC))
    elif not surface_cosine:
        results.append(CheckResult("surface_cosine", "n/a", SKIPPED_COSINE))
    else:
        from turnbench.engines.surfaces import check_surface_cosine

        results.append(check_surface_cosine(opened))
    return results


def failed_checks(results: Sequence[CheckResult]) -> list[str]:
    """The names of the checks of ``results`` (what ``validate`` returned) that failed."""
    from turnbench.corpus.checks import CheckResult, failures

    checked = [r for r in results if isinstance(r, CheckResult)]
    if len(checked) != len(results):
        raise BadInput("results must be the CheckResults validate() returned")
    return failures(checked)


def _release(corpus: str, release: PathLike | None, allow_unverified: bool) -> Any:
    from turnbench.corpus.releases import load_release

    _typed(allow_unverified, bool, "allow_unverified", "True or False")
    return None if release is None else load_release(_path(release, "release"), corpus)


def import_qmsum(sources: Sequence[PathLike], out: PathLike, *, release: PathLike | None = None,
                 allow_unverified: bool = False) -> Mapping[str, Any]:
    """Import QMSum JSONL files or per-meeting JSON directories (e.g. data/ALL) as a corpus at ``out`` (absent or
    empty); returns its manifest. Every source file is checked against the QMSum release turnbench pins (or the
    release manifest at ``release``): one that is not the release is refused (CorpusIntegrityError) unless
    ``allow_unverified``, which imports it and records ``producer.release.verified`` false with the reason."""
    from turnbench.corpus.qmsum import import_qmsum as convert

    pinned = _release("qmsum", release, allow_unverified)
    return convert(_paths(sources, "sources"), _path(out, "out"), release=pinned, allow_unverified=allow_unverified)


def import_meetingqa(sources: Sequence[PathLike], out: PathLike, *, release: PathLike | None = None,
                     allow_unverified: bool = False) -> Mapping[str, Any]:
    """Import MeetingQA (a checkout, its Annotated-AMI-QA directory, a split directory or meeting files) as a corpus
    of licence tier B at ``out``; each question's own sentences are kept out of the transcript. Returns its
    manifest. Every source file is checked against the MeetingQA release turnbench pins (or the release manifest at
    ``release``), as ``import_qmsum`` does; ``allow_unverified`` imports anything else, recorded unverified."""
    from turnbench.corpus.meetingqa import import_meetingqa as convert

    pinned = _release("meetingqa", release, allow_unverified)
    return convert(_paths(sources, "sources"), _path(out, "out"), release=pinned, allow_unverified=allow_unverified)


def import_transcripts(directory: PathLike, out: PathLike) -> Mapping[str, Any]:
    """Import a directory of transcripts (.vtt, .srt, .json) as a corpus of meetings without questions, one meeting
    per file; returns its manifest."""
    from turnbench.corpus.transcripts import import_transcripts as convert

    return convert(_path(directory, "directory"), _path(out, "out"))


def export_beir(corpus: CorpusLike, out: PathLike, *, max_words: int = 200, pyserini: bool = False,
                publishable: bool = False) -> Counts:
    """Write a corpus as a BEIR dataset at ``out`` (absent or empty): corpus.jsonl, queries.jsonl, qrels/test.tsv,
    passages.jsonl and a README (docs/export.md); cut as a load of ``max_words`` cuts it, its text TSV-safe (the
    exact text kept as ``metadata.original_text``). With ``pyserini``, pyserini/ too: a JsonCollection, its topics
    and qrels. ``publishable``: refuse (NotPublishable) a corpus whose licence is not tier A. Returns what it
    holds."""
    from turnbench.corpus.format import open_corpus
    from turnbench.export.beir import export_beir as write

    root, target = _corpus_root(corpus), _path(out, "out")
    _int(max_words, "max_words")
    _typed(pyserini, bool, "pyserini", "True or False")
    if _typed(publishable, bool, "publishable", "True or False"):
        tier = str(open_corpus(root).licence.get("tier", "unrecorded"))
        if tier != "A":
            raise NotPublishable(f"{root}: licence tier {tier}: --publishable exports tier A corpora only")
    return write(root, target, max_words=max_words, pyserini=pyserini)


def export_transcripts(corpus: CorpusLike, out: PathLike, fmt: str) -> Written:
    """Write a corpus's meetings as transcripts (``fmt``: webvtt, srt or json) and its questions without their gold
    at ``out`` (absent or empty; docs/export.md). Returns what was written."""
    from turnbench.export.transcripts import export_transcripts as write

    root, target = _corpus_root(corpus), _path(out, "out")
    _typed(fmt, str, "fmt", "a format's name (str)")
    return write(root, target, fmt)


def export_run(source: PathLike, out: PathLike, *, run: str | None = None, fmt: str = "ranx") -> ExportedRun:
    """Write a run as ``{query id: {doc id: score}}`` JSON at ``out`` (a new file): what ranx's
    ``Run.from_file``/``Run.from_dict`` and BEIR's evaluator read (docs/export.md). ``source`` is a results
    directory (``run`` passages, the default: the run as scored; meetings; raw: the engine's scores), a run
    directory or a run file (raw scores only). Nothing in ``source`` is written."""
    from turnbench.export.runs import export_run as write

    src, target = _path(source, "source"), _path(out, "out")
    _typed(run, str, "run", "passages, meetings or raw", optional=True)
    _typed(fmt, str, "fmt", "a format's name (str)")
    return write(src, target, which=run, fmt=fmt)


def open_corpus(corpus: CorpusLike) -> Corpus:
    """A corpus directory (format v1), opened: every manifest hash verified before anything else is read
    (CorpusIntegrityError otherwise). A Corpus is returned as it is."""
    return _corpus(corpus)
