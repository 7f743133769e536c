"""The validator (turnbench/generator/validate.py): hashes first, then every named check in a fixed order;
generic checks always, synthetic checks only on a generated corpus with facts.jsonl; refusals and the CLI."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.corpus.helpers import GOOD, QMSUM_FIXTURE, QUERIES, REPO, fixture_release_of, write
from tests.unit.generator.helpers import (
    copy_corpus,
    edit_meeting,
    facts,
    meeting,
    meeting_id_first,
    read_lines,
    rehash,
    write_lines,
)
from turnbench.cli import main
from turnbench.corpus.checks import GENERIC
from turnbench.errors import CorpusIntegrityError
from turnbench.generator.checks import SYNTHETIC
from turnbench.generator.validate import CHECK_NAMES, ENCODER_CHECKS, failures, validate_corpus


def test_fresh_corpus_passes_every_check(generated):
    results = validate_corpus(generated)
    # validate_corpus never loads a model: the encoder's checks are added by `turnbench validate`
    assert [r.name for r in results] == [n for n in CHECK_NAMES if n not in ENCODER_CHECKS]
    assert len(results) >= 10
    assert failures(results) == []
    assert all(r.status == "pass" for r in results)


def test_editing_text_without_the_manifest_is_an_integrity_refusal(corpus_copy):
    mid = read_lines(corpus_copy / "queries.jsonl")[0]["gold_meetings"][0]
    edit_meeting(corpus_copy, mid, lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + " Edited."))
    with pytest.raises(CorpusIntegrityError, match="sha256 does not match"):
        validate_corpus(corpus_copy)
    result = CliRunner().invoke(main, ["validate", str(corpus_copy)])
    assert result.exit_code == 3
    assert "CorpusIntegrityError" in result.output


def test_truncating_a_meeting_file_fails_gold_refs(corpus_copy):
    last = sorted((corpus_copy / "meetings").glob("part-*.jsonl"))[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-3]))
    rehash(corpus_copy)
    failed = failures(validate_corpus(corpus_copy))
    assert "gold_refs_real" in failed
    assert "manifest_counts" in failed


def test_a_meeting_file_cut_mid_line_is_refused_even_with_fresh_hashes(corpus_copy):
    part = sorted((corpus_copy / "meetings").glob("part-*.jsonl"))[0]
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusIntegrityError, match="sha256 does not match"):
        validate_corpus(corpus_copy)
    rehash(corpus_copy)
    with pytest.raises(CorpusIntegrityError, match="is not valid JSON"):
        validate_corpus(corpus_copy)


def test_a_record_missing_a_field_is_refused_not_a_traceback(corpus_copy):
    rows = read_lines(corpus_copy / "queries.jsonl")
    del rows[0]["scored_on"]
    write_lines(corpus_copy / "queries.jsonl", rows)
    rehash(corpus_copy)
    result = CliRunner().invoke(main, ["validate", str(corpus_copy)])
    assert result.exit_code == 3
    assert "queries.jsonl: line 1 is not a format-v1 query (KeyError: 'scored_on')" in result.output


def test_validate_cli_exits_1_naming_the_failed_check(corpus_copy):
    t = next(f for f in facts(corpus_copy) if f["type"] == "aggregation_target" and f["rule"] == "R5")
    edit_meeting(corpus_copy, meeting_id_first(corpus_copy),
                 lambda m: m["turns"][0].__setitem__("text", m["turns"][0]["text"] + f" Defer the {t['item']}."))
    rehash(corpus_copy)
    result = CliRunner().invoke(main, ["validate", str(corpus_copy), "--skip-cosine"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert sum(line.startswith(("PASS  ", "FAIL  ")) for line in lines) == len(CHECK_NAMES) - len(ENCODER_CHECKS)
    assert any(line.startswith("FAIL  deferral_counts_exact") for line in lines)
    assert lines[-1] == "turnbench: CheckFailed: 1 check(s) failed: deferral_counts_exact"


def test_generic_checks_pass_and_synthetic_checks_are_na(tmp_path):
    results = validate_corpus(write(tmp_path / "c", GOOD, QUERIES))
    by = {r.name: r.status for r in results}
    assert [by[c.__name__.removeprefix("check_")] for c in GENERIC] == ["pass"] * len(GENERIC)
    assert [by[c.__name__.removeprefix("check_")] for c in SYNTHETIC] == ["n/a"] * len(SYNTHETIC)
    assert failures(results) == []
    assert {r.detail for r in results if r.status == "n/a"} == {"not a turnbench.generator corpus with facts.jsonl"}


def test_a_real_qmsum_import_passes_the_generic_checks(tmp_path):
    from turnbench.corpus.qmsum import import_qmsum

    import_qmsum([QMSUM_FIXTURE / "ALL"], tmp_path / "qm", release=fixture_release_of(tmp_path, "qmsum"))
    results = validate_corpus(tmp_path / "qm")
    assert failures(results) == []
    assert sum(r.status == "pass" for r in results) == len(GENERIC)


def test_docs_generator_lists_every_validator_check():
    doc = (REPO / "docs" / "generator.md").read_text(encoding="utf-8")
    missing = [name for name in CHECK_NAMES if name not in doc]
    assert missing == []


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_generate_then_validate_passes(tmp_path):
    out = tmp_path / "c"
    result = run("generate", "--seed", "5", "--meetings", "16", "--words-per-meeting", "500", "--out", out)
    assert result.exit_code == 0, result.output
    assert "synthetic-s5-m16-w500: 16 meetings" in result.output
    # the encoder's check has its own tests (tests/unit/engines/test_surfaces.py); skipped here, and it says so
    result = run("validate", out, "--skip-cosine")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert sum(line.startswith("PASS") for line in lines) >= 10
    assert "surface_cosine              skipped (--skip-cosine)" in result.output
    assert lines[-1] == f"all {len(CHECK_NAMES) - len(ENCODER_CHECKS)} applicable checks pass (1 n/a)"


def test_an_opaque_titled_corpus_validates_reading_series_from_meta(opaque):
    """Recordings named like files: summarize and series mentions are checked against what the generator recorded
    (Meeting.meta), and R6 is asked all the same, its answers proved from the sessions that say their series' name."""
    results = {r.name: r for r in validate_corpus(opaque)}
    assert failures(results.values()) == []
    assert results["summarize_covers_series"].status == "pass"
    n = len([f for f in facts(opaque) if f["type"] == "aggregation_target" and f["rule"] == "R6"])
    assert n >= 3 and results["attendance_max_unique"].detail.startswith(f"{n} R6 answers recomputed from who spoke")


@pytest.fixture(scope="module")
def opaque(tmp_path_factory):
    from turnbench.generator.config import GeneratorConfig
    from turnbench.generator.generate import generate

    root = tmp_path_factory.mktemp("opaque") / "c"
    generate(GeneratorConfig(seed=5, meetings=24, words_per_meeting=700, titles="opaque"), root)
    return root


def _r6(root, slot: bool):
    """An R6 target (one that names its series by slot, or one that does not) and its sessions, by meta."""
    target = next(f for f in facts(root) if f["type"] == "aggregation_target" and f["rule"] == "R6"
                  and ("slot" in f) == slot)
    sessions = [m["id"] for part in sorted((root / "meetings").glob("part-*.jsonl")) for m in read_lines(part)
                if (m["meta"].get("team"), m["meta"].get("kind")) == (target["team"], target["kind"])]
    return target, sessions


def test_a_session_that_stops_saying_its_series_name_fails_the_r6_answer(opaque, tmp_path):
    """Under opaque titles nothing but the talk says which meetings are a series' sessions: a session of an R6 series
    whose name is no longer said drops out of the count, and the check says which."""
    root = copy_corpus(opaque, tmp_path / "c")
    target, sessions = _r6(root, slot=False)
    name = f"{target['team']} {target['kind']}"
    mid = sessions[-1]
    edit_meeting(root, mid, lambda m: [t.__setitem__("text", t["text"].replace(name, "weekly catch-up"))
                                       for t in m["turns"]])
    rehash(root)
    results = {r.name: r for r in validate_corpus(root)}
    assert "attendance_max_unique" in failures(results.values())
    assert f"{target['query']}: the {name} is named in {len(sessions) - 1} meetings, it has {len(sessions)} " \
           f"sessions (differ: ['{mid}'])" in results["attendance_max_unique"].detail


def test_a_slot_session_moved_to_another_weekday_fails_the_r6_answer(opaque, tmp_path):
    """A question that names a series by its weekday is answerable only if every session falls on that day."""
    import datetime

    root = copy_corpus(opaque, tmp_path / "c")
    target, sessions = _r6(root, slot=True)
    day = datetime.date.fromisoformat(meeting(root, sessions[0])["recorded_date"])
    moved = day + datetime.timedelta(days=1 if day.day < 28 else -1)  # same month: R7 is left alone
    edit_meeting(root, sessions[0], lambda m: m.__setitem__("recorded_date", moved.isoformat()))
    rehash(root)
    results = {r.name: r for r in validate_corpus(root)}
    assert failures(results.values()) == ["attendance_max_unique"]
    assert f"not {target['slot']}s" in results["attendance_max_unique"].detail


def test_validate_refuses_missing_or_extra_files_with_exit_3(tmp_path):
    out = tmp_path / "c"
    assert run("generate", "--seed", "5", "--meetings", "16", "--words-per-meeting", "500", "--out", out).exit_code == 0
    (out / "notes.txt").write_text("extra")
    result = run("validate", out)
    assert result.exit_code == 3 and "not in the manifest: notes.txt" in result.output
    (out / "notes.txt").unlink()
    (out / "queries.jsonl").unlink()
    result = run("validate", out)
    assert result.exit_code == 3 and "missing file(s)" in result.output
    assert run("validate", tmp_path / "nowhere").exit_code == 2  # no such path: bad input, not a refusal
