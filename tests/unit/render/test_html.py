"""report.html: self-contained, byte-identical, with texts only when a corpus vouches for them; checked in a real
headless browser when one is installed (CI installs Debian's Chromium)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.unit.harness.helpers import RP, small_run
from turnbench.cli import main
from turnbench.harness.judgements import RelevancePolicy
from turnbench.passages import write_passages
from turnbench.pipeline.scoring import score_files
from turnbench.runfiles import write_jsonl_run


def _scored(tmp_path: Path, corpus, passages, run, name: str) -> Path:
    """A results directory written by `turnbench score`'s own code path (report.html included)."""
    src = tmp_path / f"{name}-in"
    src.mkdir()
    write_passages(src / "passages.jsonl", passages)
    grouped: dict = {}
    for e in run:
        grouped.setdefault(e.query_id, []).append(e)
    write_jsonl_run(src / "run.jsonl", grouped)
    (src / "arm.json").write_text(f'{{"name": "{name}"}}')
    score_files(corpus.root, src / "passages.jsonl", src / "run.jsonl", tmp_path / name, policy=RelevancePolicy(),
                arm_config=src / "arm.json")
    return tmp_path / name


@pytest.fixture
def pair(tmp_path, small_corpus):
    corpus, passages = small_corpus
    base = _scored(tmp_path, corpus, passages, small_run(), "base")
    worse = [RP("q1", "m1:00000", 3), RP("q1", "m1:00001", 2), *[e for e in small_run() if e.query_id != "q1"]]
    cand = _scored(tmp_path, corpus, passages, worse, "cand")
    return corpus, base, cand


def test_results_directories_carry_a_self_contained_page(pair):
    _, base, _ = pair
    page = (base / "report.html").read_text()
    assert "<title>turnbench report: base on tiny</title>" in page and "<svg" in page
    assert "<script" not in page and not re.search(r"(src|href)=\"?https?:", page)
    assert "question q1" in page  # the query text, from the corpus it was just scored on
    assert "claim.sha256" not in page and str(base) not in page  # no paths in a claimed file


def test_comparison_report_is_byte_identical_and_shows_the_regression_with_its_texts(tmp_path, pair):
    corpus, base, cand = pair
    runner = CliRunner()
    outs = []
    for i in (1, 2):
        out = tmp_path / f"r{i}.html"
        r = runner.invoke(main, ["report", str(cand), "--baseline", str(base), "--out", str(out), "--corpus",
                                 str(corpus.root)])
        assert r.exit_code == 0, r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    page = outs[0].decode()
    assert "turnbench report: cand vs baseline base" in page
    assert "The 10 worst regressions" in page and "<b>q1</b>" in page and "Δ -0.3691" in page
    assert "m1 turn 1 · bob" in page  # the gold turn
    assert page.count("<svg") == 2  # the forest plot and the per-query strips
    assert "gate PASS" not in page and "gate FAIL" not in page  # only compare --gate says pass or fail
    assert "comparable across chunkings" in page and "strict rows: only grades ≥ 2 relevant" in page
    assert "rows by surface" in page


def test_latency_quantiles_show_on_pages_made_on_demand_never_in_a_claimed_one(tmp_path, pair):
    import json

    corpus, base, cand = pair
    info = json.loads((cand / "runinfo.json").read_text())
    info["latency_ms"] = {"p50": 12.25, "p95": 40.5, "p99": 77.0}
    (cand / "runinfo.json").write_text(json.dumps(info))
    r = CliRunner().invoke(main, ["report", str(cand), "--baseline", str(base), "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "r.html").read_text()
    assert "p50 12.2 ms · p95 40.5 ms" in page
    assert "latency" not in (cand / "report.html").read_text()
    # compare --gate draws the gate on its page too: one lookup lost is a loss no corpus this size can tell from
    # noise, so the gate passes and the page warns
    r = CliRunner().invoke(main, ["compare", str(base), str(cand), "--gate", "--out", str(tmp_path / "c.md"), "--html",
                                  str(tmp_path / "c.html")])
    page = (tmp_path / "c.html").read_text()
    assert r.exit_code == 0 and "gate PASS" in page and "warning: tiny lookup nDCG@10" in page
    assert "below zero but within noise" in page


def test_without_a_corpus_the_page_says_so_and_a_stale_corpus_is_refused(tmp_path, pair):
    corpus, base, cand = pair
    runner = CliRunner()
    # the corpus runinfo.json records is gone: no texts, and the page says how to get them
    shutil.move(str(corpus.root), str(tmp_path / "moved"))
    r = runner.invoke(main, ["report", str(cand), "--baseline", str(base), "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    assert "gone or damaged: texts are not shown (pass --corpus DIR)" in (tmp_path / "r.html").read_text()
    # a named corpus whose text changed under a bound target: refused, naming it
    moved = tmp_path / "moved"
    part = next((moved / "meetings").glob("part-*.jsonl"))
    part.write_text(part.read_text().replace("w w w", "x w w", 1))
    _rehash(moved)
    r = runner.invoke(main, ["report", str(cand), "--out", str(tmp_path / "s.html"), "--corpus", str(moved)])
    assert r.exit_code == 3 and "StaleBinding" in r.output and "is stale" in r.output
    assert not (tmp_path / "s.html").exists()
    # compare checks the same bindings against a named corpus, before it writes anything
    r = runner.invoke(main, ["compare", str(base), str(cand), "--corpus", str(moved), "--out", str(tmp_path / "c.md"),
                             "--html", str(tmp_path / "c.html"), "--json", str(tmp_path / "c.json")])
    assert r.exit_code == 3 and r.output.count("StaleBinding") == 1 and "passage m1:00000 is stale" in r.output
    assert not any((tmp_path / n).exists() for n in ("c.md", "c.html", "c.json"))


def _rehash(root: Path) -> None:
    """Make a hand-edited corpus's manifest vouch for its bytes again, as a legitimate new version would."""
    import json

    from turnbench import canonical
    from turnbench.corpus.format import corpus_sha256

    manifest = json.loads((root / "manifest.json").read_text())
    files = {name: canonical.sha256_file(root / name) for name in manifest["files"]}
    manifest["files"] = files
    manifest["corpus_sha256"] = corpus_sha256(files)
    canonical.write_json(root / "manifest.json", manifest)


def test_report_cli_hostile_inputs(tmp_path, pair):
    from tests.unit.cli.helpers import one_meeting_corpus

    corpus, base, cand = pair
    other = one_meeting_corpus(tmp_path / "other")
    runner = CliRunner()
    cases = [
        (["report", str(cand), "--out", str(tmp_path / "x.png")], 2, "give a .html name"),
        (["report", str(tmp_path / "nope"), "--out", str(tmp_path / "x.html")], 2, "does not exist"),
        (["report", str(corpus.root), "--out", str(tmp_path / "x.html")], 2, "neither a results directory"),
        (["report", str(cand), "--out", str(tmp_path / "x.html"), "--corpus", str(tmp_path / "none")], 2,
         "no such corpus directory"),
        (["report", str(cand), "--out", str(tmp_path / "x.html"), "--corpus", str(other)], 2,
         "corpus cli-refusals is not the corpus of any results given (tiny)"),
        (["compare", str(base), str(cand), "--out", str(tmp_path / "c.html")], 2, "give a .md name"),
        (["compare", str(base), str(cand), "--html", str(tmp_path / "c.md")], 2, "give a .html name"),
        (["compare", str(base), str(cand), "--corpus", str(other)], 2, "is not the corpus of any results given"),
    ]
    for args, code, text in cases:
        r = runner.invoke(main, args)
        assert r.exit_code == code, (args, r.output)
        assert text in r.output
        assert len([x for x in r.output.splitlines() if x.startswith("turnbench:")]) <= 1
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "c.html").exists()
    ok = runner.invoke(main, ["compare", str(base), str(cand), "--out", str(tmp_path / "c.md"), "--html",
                              str(tmp_path / "c.html")])
    assert ok.exit_code == 0 and (tmp_path / "c.html").read_text().startswith("<!DOCTYPE html>")


def test_compare_writes_only_the_files_named(tmp_path, pair):
    """--out X.md writes X.md alone: an X.html beside it that the user did not name is never touched."""
    _, base, cand = pair
    mine = tmp_path / "c.html"
    mine.write_text("my own page")
    ok = CliRunner().invoke(main, ["compare", str(base), str(cand), "--out", str(tmp_path / "c.md")])
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "c.md").read_text().startswith("## turnbench compare")
    assert mine.read_text() == "my own page"
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".md", ".html")) == ["c.html", "c.md"]


# -- a real browser ---------------------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _png_size_and_colours(data: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct pixel rows in a PNG: enough to tell a blank page from a drawn one."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = len(raw) // height
    return width, height, len({raw[i * stride + 1:(i + 1) * stride] for i in range(height)})


def render_in_chromium(page: Path, png: Path, workdir: Path, height: int = 2400) -> str:
    """Screenshot ``page`` in headless Chromium and return its DOM as the browser sees it."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={workdir / 'profile'}", f"--window-size=1200,{height}"]
    assert CHROMIUM is not None
    subprocess.run([CHROMIUM, *flags, f"--screenshot={png}", page.as_uri()], check=True, capture_output=True,
                   timeout=120)
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], check=True, capture_output=True,
                         timeout=120, text=True)
    return dom.stdout


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="no Chromium here (CI installs it)")
def test_the_report_renders_in_headless_chromium(tmp_path, pair):
    corpus, base, cand = pair
    out = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(cand), "--baseline", str(base), "--out", str(out),
                                     "--corpus", str(corpus.root)]).exit_code == 0
    dom = render_in_chromium(out, tmp_path / "report.png", tmp_path)
    assert "<title>turnbench report: cand vs baseline base</title>" in dom
    assert "The 10 worst regressions" in dom
    width, height, distinct_rows = _png_size_and_colours((tmp_path / "report.png").read_bytes())
    assert (width, height) == (1200, 2400) and distinct_rows > 100  # drawn, not blank


def test_a_recorded_corpus_is_read_for_the_cards_a_page_shows_and_a_named_one_is_checked_whole(pair, monkeypatch):
    from turnbench.corpus.format import Corpus
    from turnbench.pipeline.comparing import compare_dirs

    corpus, base, cand = pair
    shown = compare_dirs(base, cand, texts=True)
    for _, v in (*shown.baseline, *shown.candidate):  # one card, q1's: its query and top passages alone
        assert set(v.texts.queries) == {"q1"} and set(v.texts.passages) == set(v.run["q1"])
        assert "found where runinfo.json records it" in v.texts.source
    named = compare_dirs(base, cand, corpora=[corpus])
    assert len(named.candidate[0][1].texts.queries) == len([r for r in named.candidate[0][1].bindings
                                                            if r.target == "query"]) > 1

    def no_meetings(self):
        raise AssertionError("a page without query cards read the corpus's meetings")

    monkeypatch.setattr(Corpus, "iter_meetings", no_meetings)
    same = compare_dirs(base, base, texts=True)  # nothing regressed: no card, no text read
    assert not same.candidate[0][1].texts.queries and b"No query got worse" in same.to_html()


@pytest.mark.parametrize("worst", [1, 2])
def test_a_results_page_reads_only_the_texts_it_shows_and_is_the_page_all_texts_would_draw(small_corpus, monkeypatch,
                                                                                           worst):
    from tests.unit.harness.helpers import score
    from turnbench.pipeline.scoring import attach_report
    from turnbench.render import html as H
    from turnbench.render import page as V
    from turnbench.results.directory import REPORT_HTML

    corpus, passages = small_corpus
    monkeypatch.setattr(V, "WORST", worst)  # fewer cards than judged queries: some queries' texts are not read
    results = score(corpus, passages, small_run())
    shown = V.results_shown(V.from_results(results))
    assert len(shown) == worst
    view = V.from_results(results)
    every = view.with_texts(V.texts_from(view, corpus, "the corpus these results were scored on"))
    assert set(every.texts.gold) > set(shown)
    page = attach_report(results, corpus).extra_files[REPORT_HTML]
    assert page == H.results_page(every)
    assert all(f"<b>{qid}</b>" in page.decode() for qid in shown)


def test_a_shown_text_changed_after_scoring_is_refused_not_drawn(small_corpus):
    from tests.unit.harness.helpers import score
    from turnbench.errors import StaleBinding
    from turnbench.pipeline.scoring import attach_report

    corpus, passages = small_corpus
    results = score(corpus, passages, small_run())
    # the page reads its queries' meetings again: a word changed in between is caught by their bindings
    path = corpus.root / corpus.meeting_files[0]
    text = path.read_text()
    assert '"w w w' in text
    path.write_text(text.replace('"w w w', '"x w w', 1))
    with pytest.raises(StaleBinding, match="is stale"):
        attach_report(results, corpus)


def test_score_prints_the_metrics_md_it_wrote_and_the_record_renders_the_same(tmp_path, small_corpus):
    """`turnbench score` prints metrics.md as it was written (not rendered a second time); the results read back
    from the directory render the same text."""
    from turnbench import api

    corpus, passages = small_corpus
    src = tmp_path / "in"
    src.mkdir()
    write_passages(src / "passages.jsonl", passages)
    grouped: dict = {}
    for e in small_run():
        grouped.setdefault(e.query_id, []).append(e)
    write_jsonl_run(src / "run.jsonl", grouped)
    r = CliRunner().invoke(main, ["score", "--corpus", str(corpus.root), "--passages", str(src / "passages.jsonl"),
                                  "--run", str(src / "run.jsonl"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    written = (tmp_path / "out" / "metrics.md").read_text()
    assert r.stdout == written + f"wrote {tmp_path / 'out'}/: metrics.json, metrics.md, report.html, the TREC qrels " \
                                 "and runs, runinfo.json\n"
    scored = api.score_files(corpus.root, src / "passages.jsonl", src / "run.jsonl", tmp_path / "again")
    assert scored.scored.markdown == written == api.Results.read(tmp_path / "out").to_markdown()
