"""turnbench.compare() from a notebook: two runs scored in memory (never written) compare as the same results written
to disk do, and every refusal the files get is the same refusal in memory, with the same exit code (docs/api.md,
"In a notebook")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import turnbench
from tests.unit.harness.helpers import (
    forge_qrels,
    meeting,
    ranked_results_dir,
    small_run,
    small_world,
    turn,
    turn_passages,
    write_corpus,
)
from turnbench import api
from turnbench.cli import exit_code_for, main
from turnbench.corpus import open_corpus
from turnbench.corpus.records import Turn
from turnbench.errors import (
    BadInput,
    DifferentGold,
    NotPublishable,
    ResultsIntegrityError,
    StaleBinding,
    TurnbenchError,
    UnpairedComparison,
)
from turnbench.harness.score import ResultsFiles
from turnbench.results.record import from_tree

RESAMPLES = ["--resamples", "200"]


def _mapping(drop: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    """small_run as {query: {passage: score}}, less the passages ``drop`` names."""
    out: dict[str, dict[str, float]] = {}
    for e in small_run():
        if e.passage_id not in drop:
            out.setdefault(e.query_id, {})[e.passage_id] = float(e.score)
    return out


def _corpus(root: Path, corpus_id: str = "tiny", tier: str = "A", text: str | None = None):
    meetings, queries = small_world()
    if text is not None:  # the same corpus id, another text in m1's first turn
        m1 = meetings[0]
        first = m1.turns[0]
        meetings[0] = meeting("m1", [Turn(first.index, first.speaker, first.start, first.end, text),
                                     *m1.turns[1:]])
    return open_corpus(write_corpus(root, [*meetings, meeting("m9", [turn(0, "fay", 0, 10, 10)])], queries,
                                    corpus_id=corpus_id, tier=tier))


def _in_memory(directory: Path) -> api.Results:
    """A results directory taken into memory whole, as results never written: its record and every file beside that
    scoring makes (not those writing adds: metrics.md, the digest, runinfo.json)."""
    written = {"metrics.json", "metrics.md", "claim.sha256", "runinfo.json"}
    files = {p.name: p.read_bytes() for p in directory.iterdir() if p.name not in written}
    return api.Results(ResultsFiles(from_tree(json.loads((directory / "metrics.json").read_text(encoding="utf-8"))),
                                   files))


def test_two_runs_scored_in_memory_compare_as_the_same_results_written(tmp_path):
    corpus = _corpus(tmp_path / "corpus")
    passages = turn_passages(small_world()[0])
    base = turnbench.score(corpus, passages, _mapping(), arm={"name": "base"})
    cand = turnbench.score(corpus, passages, _mapping(drop=("m1:00001",)), arm={"name": "cand"})
    in_memory = turnbench.compare(base, cand, resamples=500)
    assert base.out_dir is None and cand.out_dir is None
    assert [p.name for p in tmp_path.iterdir()] == ["corpus"]  # nothing written but the corpus
    on_disk = turnbench.compare(base.write(tmp_path / "b").out_dir, cand.write(tmp_path / "c").out_dir, resamples=500)
    assert in_memory.to_markdown(gate=True) == on_disk.to_markdown(gate=True)
    assert in_memory.to_json() == on_disk.to_json() and in_memory.to_summary() == on_disk.to_summary()
    assert any(r.delta < 0 for r in in_memory.rows())  # a real difference, not two copies of one run
    for mixed in (turnbench.compare(base, tmp_path / "c", resamples=500),
                  turnbench.compare(tmp_path / "b", cand, resamples=500)):
        assert mixed.to_json() == on_disk.to_json()
    # with the corpus named: each side judged again from it, and the page drawn from its texts
    named = turnbench.compare(base, cand, corpora=[corpus], texts=True, resamples=500)
    assert named.to_html() == turnbench.compare(tmp_path / "b", tmp_path / "c", corpora=[corpus], texts=True,
                                                resamples=500).to_html()
    cli = CliRunner().invoke(main, ["compare", str(tmp_path / "b"), str(tmp_path / "c"), "--full", "--resamples",
                                    "500"])
    assert cli.exit_code == 0 and cli.stdout == in_memory.to_markdown()
    # Jupyter shows the report's Δ tables: inside the page, row for row, and a worse row's verdict marked
    shown = in_memory._repr_html_()
    assert shown.startswith("<table") and shown in named.to_html().decode("utf-8")
    retrieval = [r for r in in_memory.rows() if r.block == "retrieval"]
    assert shown.count("<tr>") >= len(retrieval) + 1  # a header and a row each


Built = tuple[api.Results, api.Results, dict]


def _other_corpus(w: Path) -> Built:
    passages = turn_passages(small_world()[0])
    return (turnbench.score(_corpus(w / "c1"), passages, _mapping()),
            turnbench.score(_corpus(w / "c2", "tiny-2"), passages, _mapping()), {})


def _other_text(w: Path) -> Built:
    passages = turn_passages(small_world()[0])
    return (turnbench.score(_corpus(w / "c1"), passages, _mapping()),
            turnbench.score(_corpus(w / "c2", text="x x x x x x x x x x"), passages,
                            _mapping()), {})


def _other_policy(w: Path) -> Built:
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    return (turnbench.score(corpus, passages, _mapping()),
            turnbench.score(corpus, passages, _mapping(), policy=api.RelevancePolicy(binary=True)), {})


def _other_scope(w: Path) -> Built:
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    return (turnbench.score(corpus, passages, _mapping()),
            turnbench.score(corpus, passages, _mapping(), scope="gold-meetings"), {})


def _other_queries(w: Path) -> Built:
    """The candidate's inventory holds no passage of m1: q1's gold reaches none there, and q1 is dropped."""
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    fewer = [p for p in passages if not p.id.startswith("m1:")]
    return (turnbench.score(corpus, passages, _mapping()),
            turnbench.score(corpus, fewer, {q: {p: s for p, s in d.items() if not p.startswith("m1:")}
                                            for q, d in _mapping().items()}), {})


def _forged(w: Path, alike: bool) -> Built:
    """A side whose judgements were forged consistently (values, rows, digests: it agrees with itself), taken into
    memory; ``alike``: both sides forged alike, only the corpus named gives them away."""
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    base = turnbench.score(corpus, passages, _mapping())
    forged = _in_memory(forge_qrels(base.write(w / "forged").out_dir))
    return (forged if alike else base), forged, ({"corpora": [corpus]} if alike else {})


def _forged_one(w: Path) -> Built:
    return _forged(w, alike=False)


def _forged_both(w: Path) -> Built:
    return _forged(w, alike=True)


def _values_edited(w: Path) -> Built:
    """The candidate's MRR of q2 and every row holding it raised alike (the document agrees with itself), and its
    run and qrels left as they are: the values no longer follow from them."""
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    base = turnbench.score(corpus, passages, _mapping())
    doc = json.loads(json.dumps(base.scored.document))
    block = doc["retrieval"]
    (q2,) = [q for q in block["per_query"] if q["query_id"] == "q2"]
    q2["values"]["MRR"] = 0.9

    def mean(rows, key=None, value=None):
        for row in rows:
            qs = [q for q in block["per_query"] if row["class"] in ("all", q["class"])
                  and (key is None or q.get(key) == value) and "MRR" in q["values"]]
            row["means"]["MRR"] = round(sum(q["values"]["MRR"] for q in qs) / len(qs), 6) if qs else None

    mean(block["rows"])
    for key, by in (("surface", "rows_by_surface"), ("domain", "rows_by_domain")):
        for value, rows in block.get(by, {}).items():
            mean(rows, key, value)
    return base, api.Results(ResultsFiles(from_tree(doc), base.scored.extra_files)), {}


def _same_twice(w: Path) -> Built:
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    return (turnbench.score(corpus, passages, _mapping(), arm={"name": "a"}),
            turnbench.score(corpus, passages, _mapping(), arm={"name": "b"}), {})


def _tier_b(w: Path) -> Built:
    """A tier B corpus (non-commercial; tier C is never scored at all)."""
    corpus, passages = _corpus(w / "c", tier="B"), turn_passages(small_world()[0])
    results = turnbench.score(corpus, passages, _mapping())
    return results, results, {"publishable": True}


def _corpus_of_none(w: Path) -> Built:
    corpus, passages = _corpus(w / "c"), turn_passages(small_world()[0])
    results = turnbench.score(corpus, passages, _mapping())
    return results, results, {"corpora": [_corpus(w / "other", "tiny-other")]}


REFUSALS: list[tuple[str, Callable[[Path], Built], type[TurnbenchError], str]] = [
    ("other corpora", _other_corpus, UnpairedComparison, r"corpora \(id\) differ"),
    ("one corpus id, other texts", _other_text, StaleBinding, "m1:00000 is bound to different text"),
    ("other relevance policies", _other_policy, UnpairedComparison, "relevance policies differ"),
    ("other scopes", _other_scope, UnpairedComparison, "scopes differ"),
    ("other queries", _other_queries, UnpairedComparison, "query sets differ"),
    ("judgements forged consistently", _forged_one, DifferentGold, "different gold"),
    ("judgements forged alike, the corpus named", _forged_both, DifferentGold,
     "judged again from its passages.jsonl"),
    ("a tier B corpus, publishable", _tier_b, NotPublishable, "licence tier B"),
    ("per-query values edited", _values_edited, ResultsIntegrityError, "query q2 MRR: metrics.json says 0.9"),
    ("a corpus none of the results scored", _corpus_of_none, BadInput, "is not the corpus of any results"),
]


def _cli_args(b: Path, c: Path, kwargs: dict) -> list[str]:
    args = ["compare", str(b), str(c), *RESAMPLES]
    for x in kwargs.get("corpora", ()):
        args += ["--corpus", str(x.root)]
    return args + (["--publishable"] if kwargs.get("publishable") else [])


@pytest.mark.parametrize("name,build,kind,says", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_every_refusal_of_the_files_is_the_same_in_memory(tmp_path, name, build, kind, says):
    base, cand, kwargs = build(tmp_path)
    with pytest.raises(kind, match=says) as in_memory:
        turnbench.compare(base, cand, resamples=200, **kwargs)
    b = tmp_path / "written-b"
    c = tmp_path / "written-c"
    base.write(b)
    cand.write(c)
    on_disk = CliRunner().invoke(main, _cli_args(b, c, kwargs))
    assert on_disk.exit_code == exit_code_for(in_memory.value), on_disk.output
    assert on_disk.stderr.startswith(f"turnbench: {type(in_memory.value).__name__}: "), on_disk.stderr
    assert len(on_disk.stderr.splitlines()) == 1
    for mixed in ((base, c), (b, cand)):  # one side in memory, the other on disk
        with pytest.raises(type(in_memory.value)):
            turnbench.compare(*mixed, resamples=200, **kwargs)


def test_results_in_memory_against_a_set_of_seeds_is_refused_as_a_directory_is(tmp_path):
    corpus, passages = _corpus(tmp_path / "c"), turn_passages(small_world()[0])
    results = turnbench.score(corpus, passages, _mapping())
    seeds = tmp_path / "seeds"
    for s in (1, 2):
        ranked_results_dir(seeds / f"seed-{s}", {"q01": ("lookup", 1)}, corpus=f"synthetic-s{s}-m200", seed=s)
    with pytest.raises(BadInput, match="one side is a single results directory") as in_memory:
        turnbench.compare(results, seeds, resamples=200)
    on_disk = CliRunner().invoke(main, ["compare", str(results.write(tmp_path / "r").out_dir), str(seeds)])
    assert on_disk.exit_code == exit_code_for(in_memory.value) == 2
    assert on_disk.stderr.startswith("turnbench: BadInput: one side is a single results directory")


def test_what_reads_a_results_directory_says_so_of_results_in_memory(tmp_path):
    """report and plan read a results directory (its runinfo, its texts' corpus): results in memory are refused in
    one line that says what to do, never a traceback."""
    base, _, _ = _same_twice(tmp_path)
    with pytest.raises(BadInput, match=r"^results: these results were never written.*write\(\) them first"):
        api.report(base)
    with pytest.raises(BadInput, match=r"^pilot: these results were never written"):
        api.plan(base, delta=0.01)


def test_one_change_on_two_corpora_in_memory_is_judged_as_written(tmp_path):
    """compare(also=...) with every side in memory: one Holm family over both corpora, as their directories give."""
    passages = turn_passages(small_world()[0])
    corpora = [_corpus(tmp_path / "c1"), _corpus(tmp_path / "c2", "tiny-2", text="x x x x x x x x x x")]
    sides = [(turnbench.score(c, passages, _mapping(), arm={"name": "a"}),
              turnbench.score(c, passages, _mapping(drop=("m1:00001",)), arm={"name": "b"})) for c in corpora]
    in_memory = turnbench.compare(*sides[0], also=[sides[1]], corpora=corpora, resamples=200)
    dirs = [(b.write(tmp_path / f"base{i}").out_dir, c.write(tmp_path / f"cand{i}").out_dir)
            for i, (b, c) in enumerate(sides)]
    on_disk = turnbench.compare(*dirs[0], also=[dirs[1]], corpora=corpora, resamples=200)
    assert in_memory.to_json() == on_disk.to_json() and in_memory.to_markdown() == on_disk.to_markdown()
    assert "2 corpora, judged together" in in_memory.to_summary()
    shown = in_memory._repr_html_()  # the verdict across corpora, then each corpus's Δ tables
    assert "<h3>tiny</h3>" in shown and "<h3>tiny-2</h3>" in shown and shown == on_disk._repr_html_()
