"""Real corpora verified against their releases: every source file an importer reads is checked against a release
manifest (the bundled ones pin QMSum and MeetingQA at named commits) before anything is parsed. A file whose bytes
differ, a file the release does not list, or a split directory read without one of its files is refused in one line
naming the file (CorpusIntegrityError, exit 3) and nothing is written; --allow-unverified imports it and marks the
corpus unverified, with the reason, where results can read it (provenance)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.corpus.helpers import MEETINGQA_SPLITS, QMSUM_FIXTURE, fixture_release, release_file, tree_bytes
from turnbench import api
from turnbench.cli import main
from turnbench.corpus import open_corpus, qmsum
from turnbench.corpus.releases import ReadFile, bundled, git_blob, load_release
from turnbench.errors import BadInput, CorpusIntegrityError

QMSUM_SRC = Path("/work/qmsum-src")  # a copy of QMSum's data/ALL test and val splits, where there is one
MEETINGQA_SRC = Path("/work/mqa-src")


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A tiny hand-made QMSum tree (data/ALL layout: train and test directories) and its test-only release."""
    src = tmp_path / "ALL"
    shutil.copytree(QMSUM_FIXTURE / "ALL", src)
    files = {f"{p.parent.name}/{p.name}": p for p in src.glob("*/*.json")}
    return src, release_file(tmp_path / "release.json", "qmsum", files)


def _import(tmp_path: Path, *args: str):
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(main, ["import", "qmsum", *args, "--out", str(tmp_path / "out")])
    return result, before


def _refused(tmp_path: Path, result, before, message: str) -> None:
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnbench: CorpusIntegrityError: "), result.stderr
    assert message in lines[0], lines[0]
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no staged directory left behind


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    i = data.index(b'"content": "') + len(b'"content": "')  # a turn's first letter: the file stays valid JSON
    data[i] ^= 0x20  # its case flipped
    path.write_bytes(bytes(data))


def test_an_untampered_tree_imports_verified(tmp_path: Path):
    src, release = _tree(tmp_path)
    result, _ = _import(tmp_path, str(src), "--release", str(release))
    assert result.exit_code == 0, result.output
    assert "verified against test/hand-made@000000000000" in result.output
    corpus = open_corpus(tmp_path / "out")
    rel = corpus.manifest["producer"]["release"]
    assert rel == {"id": "test/hand-made@000000000000", "repository": "test/hand-made", "commit": "0" * 40,
                   "verified": True}
    assert corpus.provenance()["release"] == rel  # what a results file records of the corpus


def test_a_tampered_file_is_refused_in_one_line_exit_3_nothing_written(tmp_path: Path):
    src, release = _tree(tmp_path)
    _flip_one_byte(src / "train" / "ES2002a.json")
    result, before = _import(tmp_path, str(src), "--release", str(release))
    _refused(tmp_path, result, before, "train/ES2002a.json: sha256 ")
    assert "is not release test/hand-made@000000000000's sha256" in result.stderr


def test_allow_unverified_imports_it_and_marks_it(tmp_path: Path):
    src, release = _tree(tmp_path)
    _flip_one_byte(src / "train" / "ES2002a.json")
    result, _ = _import(tmp_path, str(src), "--release", str(release), "--allow-unverified")
    assert result.exit_code == 0, result.output
    assert "UNVERIFIED against test/hand-made@000000000000 (train/ES2002a.json: sha256" in result.output
    rel = open_corpus(tmp_path / "out").manifest["producer"]["release"]
    assert rel["verified"] is False and rel["reason"].startswith("train/ES2002a.json: sha256 ")
    assert open_corpus(tmp_path / "out").provenance()["release"]["verified"] is False


def test_a_file_the_release_does_not_list_is_refused(tmp_path: Path):
    src, release = _tree(tmp_path)
    shutil.copy(src / "train" / "ES2002a.json", src / "test" / "ES2099a.json")
    result, before = _import(tmp_path, str(src / "test"), "--release", str(release))
    _refused(tmp_path, result, before, "test/ES2099a.json: not a file of release test/hand-made@000000000000")


def test_a_split_directory_missing_a_file_is_refused_a_single_file_is_not(tmp_path: Path):
    src, release = _tree(tmp_path)
    (src / "train" / "Bmr001.json").unlink()
    result, before = _import(tmp_path, str(src), "--release", str(release))
    _refused(tmp_path, result, before, "train/Bmr001.json: missing from the directory train/ read")
    # one file given alone is checked alone, and a split not read at all is not missing
    ok, _ = _import(tmp_path, str(src / "train" / "ES2002a.json"), str(src / "test"), "--release", str(release))
    assert ok.exit_code == 0, ok.output
    assert open_corpus(tmp_path / "out").manifest["producer"]["release"]["verified"] is True


def test_a_file_that_is_not_json_is_refused_as_unverified_before_it_is_parsed(tmp_path: Path):
    src, release = _tree(tmp_path)
    path = src / "test" / "covid_1.json"
    path.write_bytes(path.read_bytes()[:100])  # a truncated download
    result, before = _import(tmp_path, str(src), "--release", str(release))
    _refused(tmp_path, result, before, "test/covid_1.json: sha256 ")
    # allowed, it reaches the parser, which refuses it as bad input
    allowed, _ = _import(tmp_path, str(src), "--release", str(release), "--allow-unverified")
    assert allowed.exit_code == 2 and "test/covid_1.json: not valid JSON" in allowed.stderr


def test_the_bundled_release_refuses_hand_made_files(tmp_path: Path):
    result, before = _import(tmp_path, str(QMSUM_FIXTURE / "ALL"))
    _refused(tmp_path, result, before, "release Yale-LILY/QMSum@83d7768c1f2b")
    mqa = CliRunner().invoke(main, ["import", "meetingqa", str(MEETINGQA_SPLITS), "--out", str(tmp_path / "m")])
    assert mqa.exit_code == 3 and "release adobe-research/meetingqa@5e3d1fbf4fef" in mqa.stderr
    assert not (tmp_path / "m").exists()


def test_the_api_takes_release_and_allow_unverified(tmp_path: Path):
    src, release = _tree(tmp_path)
    _flip_one_byte(src / "test" / "covid_1.json")
    with pytest.raises(CorpusIntegrityError, match="test/covid_1.json"):
        api.import_qmsum([src], tmp_path / "a", release=release)
    assert not (tmp_path / "a").exists()
    manifest = api.import_qmsum([src], tmp_path / "b", release=release, allow_unverified=True)
    assert manifest["producer"]["release"]["verified"] is False
    with pytest.raises(BadInput, match="allow_unverified must be True or False"):
        api.import_qmsum([src], tmp_path / "c", allow_unverified="yes")  # type: ignore[arg-type]
    with pytest.raises(BadInput, match="a release of 'qmsum', not of 'meetingqa'"):
        api.import_meetingqa([MEETINGQA_SPLITS], tmp_path / "d", release=release)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="x"), "not a release manifest"),
    (lambda d: d["source"].update(commit="abc"), "40-digit commit"),
    (lambda d: d["licence"].update(tier="D"), "tier (A, B or C)"),
    (lambda d: d["files"].update({"x.json": {"git_blob": "0" * 40, "sha256": "short"}}), "sha256 (64, or null)"),
])
def test_a_malformed_release_manifest_is_bad_input(tmp_path: Path, edit, message):
    src, release = _tree(tmp_path)
    d = json.loads(release.read_text())
    edit(d)
    release.write_text(json.dumps(d))
    result = CliRunner().invoke(main, ["import", "qmsum", str(src), "--release", str(release), "--out",
                                       str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_file_pinned_by_its_git_blob_alone_is_checked_by_it(tmp_path: Path):
    # QMSum's jsonl/train.jsonl: its blob was not in the copy of the repository, so only its git id pins it
    rel = bundled("qmsum")
    pin = rel.files["jsonl/train.jsonl"]
    assert pin.sha256 is None and pin.git_blob == "612fb8ca3e2810c85af1821691b38b2961347528"
    assert not pin.matches("0" * 64, git_blob(b"not it"))
    assert git_blob(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # as `git hash-object` gives it


def test_the_bundled_releases_name_their_source_licence_and_tier():
    q, m = bundled("qmsum"), bundled("meetingqa")
    assert (q.repository, q.commit, q.root) == ("Yale-LILY/QMSum", "83d7768c1f2b4dfeb091385d3dc7e239b8e5bb7e",
                                                "data/ALL")
    assert q.licence["name"] == "MIT" and q.licence["tier"] == "A" and q.licence["tier"] == qmsum.LICENCE["tier"]
    assert len(q.files) == 235 and sum(k.startswith("test/") for k in q.files) == 35
    assert (m.repository, m.commit) == ("adobe-research/meetingqa", "5e3d1fbf4fefb60790d2445ce6721085b274024b")
    assert m.licence["name"] == "CC BY-NC-SA 4.0" and m.licence["tier"] == "B" and len(m.files) == 166


def test_the_fixture_release_helper_matches_the_fixtures(tmp_path: Path):
    rel = load_release(fixture_release(tmp_path / "r.json", "qmsum"), "qmsum")
    f = ReadFile.of("jsonl/val.jsonl", (QMSUM_FIXTURE / "jsonl" / "val.jsonl").read_bytes())
    assert rel.files["jsonl/val.jsonl"].matches(f.sha256, f.git_blob)


@pytest.mark.skipif(not QMSUM_SRC.is_dir(), reason="no copy of QMSum's data/ALL here (CI has none)")
def test_the_real_qmsum_copy_imports_verified_and_a_tampered_copy_does_not(tmp_path: Path):
    manifest = qmsum.import_qmsum([QMSUM_SRC], tmp_path / "q")
    assert manifest["producer"]["release"]["verified"] is True
    copy = tmp_path / "copy"
    shutil.copytree(QMSUM_SRC / "val", copy / "val")
    path = min((copy / "val").glob("*.json"), key=lambda p: p.stat().st_size)  # the smallest real file
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(CorpusIntegrityError, match=f"val/{path.name}: sha256 "):
        qmsum.import_qmsum([copy / "val"], tmp_path / "t")
    assert not (tmp_path / "t").exists()


@pytest.mark.skipif(not MEETINGQA_SRC.is_dir(), reason="no copy of MeetingQA here (CI has none)")
def test_the_real_meetingqa_copy_imports_verified(tmp_path: Path):
    from turnbench.corpus import meetingqa

    manifest = meetingqa.import_meetingqa([MEETINGQA_SRC / "ProcessedTranscripts" / "Annotated-AMI-QA" / "test"],
                                          tmp_path / "m")
    assert manifest["producer"]["release"]["verified"] is True


def test_verified_and_unverified_imports_differ_only_in_the_release_record(tmp_path: Path):
    src, release = _tree(tmp_path)
    qmsum.import_qmsum([src], tmp_path / "v", release=load_release(release, "qmsum"))
    qmsum.import_qmsum([src], tmp_path / "u", allow_unverified=True)  # against the bundled release: unverified
    v, u = tree_bytes(tmp_path / "v"), tree_bytes(tmp_path / "u")
    assert {k for k in v if v[k] != u[k]} == {"manifest.json"}
    mv, mu = (json.loads(x["manifest.json"]) for x in (v, u))
    assert mv["producer"].pop("release")["verified"] is True and mu["producer"].pop("release")["verified"] is False
    assert mv == mu  # the corpus id and every hash are the same: the sources are the same bytes


def test_a_synthetic_corpus_records_no_release():
    # results measured on a generated corpus keep their bytes: the key exists only for an imported one
    from tests.unit.corpus.helpers import REPO

    small = open_corpus(REPO / "fixtures" / "small")
    assert "release" not in small.manifest["producer"] and "release" not in small.provenance()
