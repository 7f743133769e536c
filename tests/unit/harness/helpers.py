"""Small hand-built corpora for the harness tests: every number in them is chosen so a grade or metric can be
worked out by hand."""

from __future__ import annotations

from pathlib import Path

from turnbench.corpus import CorpusWriter, Meeting, Query, Turn
from turnbench.corpus.records import Answer
from turnbench.harness.judgements import RelevancePolicy
from turnbench.harness.score import UNKNOWN, EngineSide, score_run
from turnbench.passages import Passage
from turnbench.rankings import RankedPassage
from turnbench.submissions import SubmittedAnswer, declined


def rows_of(corpus, per_query, measures, dropped):
    """The class rows the scorer makes of metrics.json's per-query rows, as metrics.json holds them."""
    from turnbench.harness.rows import aggregate_rows
    from turnbench.results.tables import query_values

    return [row.to_json() for row in aggregate_rows(corpus, [query_values(r) for r in per_query], measures, dropped)]

def words(n: int, word: str = "w") -> str:
    return " ".join([word] * n)


def turn(i: int, speaker: str, start: float, end: float, n_words: int) -> Turn:
    return Turn(i, speaker, float(start), float(end), words(n_words))


def meeting(mid: str, turns) -> Meeting:
    turns = tuple(turns)
    return Meeting(mid, f"title {mid}", "2026-01-05", max(t.end for t in turns), "synthetic",
                   tuple(sorted({t.speaker for t in turns})), turns)


def query(qid: str, cls: str, gold_turns: dict, answer_turns: dict | None = None, level: str = "turn") -> Query:
    rule = {"lookup": "R1", "multi_file": "R2", "summarize": "R8"}[cls]
    return Query(qid, cls, rule, "plain", f"question {qid}", "retrieval", tuple(sorted(gold_turns)),
                 {m: tuple(r) for m, r in gold_turns.items()}, answer_turns or {}, None, level)


def write_corpus(root: Path, meetings, queries, corpus_id: str = "tiny", tier: str = "A") -> Path:
    with CorpusWriter(root) as w:
        w.write_meetings(meetings)
        w.write_queries(sorted(queries, key=lambda q: q.id))
        w.write_manifest(corpus_id=corpus_id, licence={"name": "CC0-1.0", "tier": tier},
                         producer={"name": "hand-built", "version": "1", "seed": 7},
                         counts={"meetings": len(meetings), "queries": len(queries)})
    return root


def turn_passages(meetings, prefix: str = "") -> list[Passage]:
    """One passage per turn, ids ``{prefix}{meeting}:{index:05d}``."""
    out = []
    for m in meetings:
        for t in m.turns:
            out.append(Passage(f"{prefix}{m.id}:{t.index:05d}", m.id, t.speaker, t.start, t.end, t.index,
                               words=len(t.text.split())))
    return out


def small_world():
    """Three meetings, one turn-level lookup, one multi_file, one summarize, one unjudgeable lookup."""
    m1 = meeting("m1", [turn(0, "ann", 0, 10, 10), turn(1, "bob", 10, 20, 10), turn(2, "ann", 20, 30, 10)])
    m2 = meeting("m2", [turn(0, "cat", 0, 10, 10), turn(1, "dan", 10, 20, 10)])
    m3 = meeting("m3", [turn(0, "eve", 0, 10, 10), turn(1, "eve", 10, 20, 10)])
    queries = [
        query("q1", "lookup", {"m1": [(1, 1)]}, {"m1": (1,)}),
        query("q2", "multi_file", {"m1": [(2, 2)], "m2": [(0, 0)]}),
        query("q3", "summarize", {"m2": [], "m3": []}, level="meeting"),
        query("q4", "lookup", {"m9": [(0, 0)]}),  # gold in a meeting with no passage: unjudgeable
    ]
    return [m1, m2, m3], queries


# -- aggregation questions and submitted answers -------------------------------------------------------

def q(qid, rule, surface, answer, grammar="in", scored_on="answer"):
    return Query(id=qid, cls="aggregation", rule=rule, surface=surface, text=f"text of {qid}", scored_on=scored_on,
                 gold_meetings=tuple(answer.meetings or ()) if answer else (), answer=answer, gold_level="meeting",
                 meta={"grammar": grammar})


def count(n):
    return Answer("count", count=n)


def mset(*ms):
    return Answer("meeting_set", meetings=tuple(ms))


def spk(name, n):
    return Answer("speaker_count", count=n, speaker=name)


def sub(qid, answer, mechanism="test"):
    return SubmittedAnswer(qid, answer, mechanism, {})


# The worked example used by several tests; expected values are derived by hand below.
QUERIES = [
    q("q1", "R3", "r3-how-many", count(3)),
    q("q2", "R3", "r3-chatty", count(0), grammar="out"),
    q("q3", "R4", "r4-which", mset("m1", "m2", "m3", "m4")),
    q("q4", "R4", "r4-which", mset()),
    q("q5", "R6", "r6-who-most", spk("Ana Lima", 4)),
    q("q6", "R6", "r6-who-most", spk("Bo Chen", 2)),
    q("q7", "R5", "r5-deferred", count(5)),
    q("q8", "R7", "r7-in-month", count(2)),
    q("lookup-1", "R1", "plain", None, scored_on="retrieval"),
]
SUBMITTED = [
    sub("q1", count(3)),
    declined("q2", "out of grammar"),
    sub("q3", mset("m3", "m1", "m2")),
    sub("q4", mset()),
    sub("q5", spk("  ana \t LIMA ", 3)),
    sub("q6", spk("Bo Chen", 2)),
    sub("q7", count(6)),
    sub("q8", mset("m1", "m2")),
]


PROV = EngineSide(UNKNOWN, UNKNOWN, {"name": "hand", "k": 1})


def RP(q, p, s):
    return RankedPassage(q, p, 0, float(s))


def small_run():
    # q1 (lookup, gold = bob's turn m1:1, the answer turn): perfect.
    # q2 (multi_file, gold m1:2 and m2:0): both gold passages tied with a non-gold one in m1.
    # q3 (summarize, gold meetings m2, m3): only m3 retrieved.
    return [RP("q1", "m1:00001", 3), RP("q1", "m1:00000", 2),
            RP("q2", "m2:00000", 1), RP("q2", "m1:00002", 1), RP("q2", "m1:00000", 1),
            RP("q3", "m3:00000", 1)]


def score(corpus, passages, run, *, forked=False, **kw):
    """``score_run`` (every part here); ``forked``, or given ``into`` (a staging directory): as ``bench`` and
    ``score`` run it, through the executor (``pipeline.executor.score``: its parts in forked children)."""
    policy = kw.pop("policy", RelevancePolicy())
    if forked or "into" in kw:
        from turnbench.pipeline.executor import score as executed

        return executed(corpus, passages, run, policy=policy, engine=PROV, **kw)[0]
    return score_run(corpus, passages, run, policy=policy, engine=PROV, **kw)


# -- an independent scorer: metrics.json re-derived from a results directory's TREC files with ir_measures --------

def reproduce_with_ir_measures(directory: Path) -> dict[str, dict[str, float]]:
    """Every per-query value of metrics.json computed by ir_measures from the exported files alone, with
    ``trec_eval -c`` added by hand (a judged query missing from the run scores 0). Returns query → measure → value,
    after checking each row's mean against them; the caller compares the per-query values."""
    import json
    import math

    import ir_measures

    doc = json.loads((directory / "metrics.json").read_text())
    side = json.loads((directory / "trec.json").read_text())
    out: dict[str, dict[str, float]] = {}
    for level, qrels_file, run_file in (("passage", "qrels.passages.txt", "run.passages.trec"),
                                        ("meeting", "qrels.meetings.txt", "run.meetings.trec")):
        names = {m: spec["ir_measures"] for m, spec in side["measures"].items() if spec["level"] == level}
        qrels = list(ir_measures.read_trec_qrels(str(directory / qrels_file)))
        run = list(ir_measures.read_trec_run(str(directory / run_file)))
        judged = {q.query_id for q in qrels}
        measures = {m: ir_measures.parse_measure(name) for m, name in names.items()}
        by_measure = {v: k for k, v in measures.items()}
        for qid in judged:
            out.setdefault(qid, {}).update({m: 0.0 for m in measures})  # trec_eval -c
        for metric in ir_measures.iter_calc(list(measures.values()), qrels, run):
            out[metric.query_id][by_measure[metric.measure]] = metric.value
    classes = {r["query_id"]: r["class"] for r in doc["retrieval"]["per_query"]}
    assert set(out) == set(classes), "the qrels name exactly the judged queries"
    for row in doc["retrieval"]["rows"]:
        group = sorted(q for q in out if row["class"] in ("all", classes[q]))
        for m, mean in row["means"].items():
            if m not in side["measures"]:
                continue  # span: and entry: measures are words and seconds, re-derived in test_spans
            vals = [round(out[q][m], 6) for q in group if m in out[q]]
            again = round(math.fsum(vals) / len(vals), 6) if vals else None
            assert again == mean, f"{row['class']} {m}: ir_measures gives {again}, metrics.json {mean}"
    return out


def ranked_results_dir(path: Path, ranks: dict[str, tuple[str, int]], *, corpus: str = "c", sha: str = "s1",
                       arm: str = "base", seed: int | None = None,
                       policy: str = "graded(high=0.5,low=0.0,answer=0.5)", tier: str = "A") -> Path:
    """A results directory whose numbers follow from its exported files: each query (id -> (class, rank)) has one
    relevant passage, ranked at ``rank`` among ten (a rank above 10 leaves it out: the query scores 0). Its
    per-query values are what pytrec_eval gives those files, so the directory survives re-derivation; edit a value
    afterwards and it does not."""

    from turnbench.canonical import q6
    from turnbench.harness import exports as X
    from turnbench.harness import metrics as M
    measures = ["nDCG@10", "MRR"]
    qrels = {qid: {f"{qid}-gold": 1} for qid in ranks}
    run = {qid: [f"{qid}-gold" if k == r else f"{qid}-p{k}" for k in range(1, 11)] for qid, (_, r) in ranks.items()}
    values = M.evaluate(qrels, {qid: {d: float(10 - i) for i, d in enumerate(ds)} for qid, ds in run.items()},
                        [M.Measure.parse(m) for m in measures])
    per_query = [{"query_id": qid, "corpus": corpus, "class": cls, "rule": "R1", "surface": "s", "level": "turn",
                  "answered": True, "values": {str(m): q6(v) for m, v in values[qid].items()}}
                 for qid, (cls, _) in sorted(ranks.items())]
    doc = {
        "schema_version": 1,
        "provenance": {"corpus": {"id": corpus, "sha256": sha, "seed": seed}, "relevance_policy": {"name": policy},
                       "metric_engine": {"name": "pytrec_eval-terrier", "version": "0.5.11",
                                         "semantics": "trec_eval -c", "ndcg": "ndcg_cut"},
                       "arm": {"name": arm}, "licence_tier": tier, "stack": {}},
        "scope": {"label": "corpus", "oracle": False},
        "retrieval": {"group_by": ["corpus", "class"], "measures": measures, "per_query": per_query,
                      "rows": rows_of(corpus, per_query, measures, {}),
                      "counts": {"queries_ranked": len(ranks), "queries_judged": len(ranks), "queries_unanswered": 0,
                                 "queries_dropped_unjudgeable": 0, "judged_passages": len(ranks),
                                 "judged_passages_by_grade": {"1": len(ranks)}}},
    }
    path.mkdir(parents=True)
    (path / X.QRELS_PASSAGES).write_bytes(X.qrels_text(qrels))
    (path / X.QRELS_MEETINGS).write_bytes(b"")
    (path / X.RUN_PASSAGES).write_bytes(X.scored_run_text(run, arm))
    (path / X.RUN_MEETINGS).write_bytes(b"")
    for name in (X.SPANS, X.PASSAGES):  # no span measures: nothing in them to read
        (path / name).write_bytes(b"")
    (path / X.QRELS_STRICT).write_bytes(X.qrels_text({}))  # grade 1 only: no strict qrels
    seal(path, doc)
    return path


def seal(path: Path, doc: dict) -> None:
    """metrics.json and metrics.md written into ``path`` as turnbench writes them last: the document recording every
    other file's sha256 (and passages.jsonl's as its inventory's), then claim.sha256."""
    import json

    from turnbench.canonical import sha256_file
    from turnbench.harness import exports as X
    from turnbench.render.markdown import render_metrics_md
    from turnbench.results.claimed import with_file_digests
    from turnbench.results.directory import claimed_files, write_digest
    from turnbench.results.record import from_tree

    shas = {name: sha256_file(path / name) for name in claimed_files(path)
            if name not in ("metrics.json", "metrics.md")}
    doc["provenance"].setdefault("inputs", {}).setdefault("passages", {"sha256": shas.get(X.PASSAGES)})
    record = with_file_digests(from_tree(doc), shas)
    (path / "metrics.json").write_text(json.dumps(record.tree))
    (path / "metrics.md").write_text(render_metrics_md(record))
    write_digest(path)


# -- two snapshots of one corpus (compare --across-snapshots) --------------------------------------------------------

# 40 lookups, one a meeting: enough that a loss on a subset fails the gate
SNAPSHOT_IDS = [f"q{i:02d}" for i in range(1, 41)]


def _snapshot_meetings(changed: bool, added: bool = False):
    out = []
    for i in range(1, 41 + added):
        turns = [turn(0, "ann", 0, 10, 10), turn(1, "bob", 10, 20, 10), turn(2, "ann", 20, 30, 10)]
        if changed and f"q{i:02d}" in SNAPSHOT_IDS[:5]:  # the gold turn says other words: its target changed
            turns[1] = Turn(1, "bob", 10.0, 20.0, " ".join(["x"] * 10))
        out.append(meeting(f"m{i:02d}", turns))
    return out


def _snapshot(root: Path, new: bool):
    from turnbench.corpus import open_corpus

    meetings = _snapshot_meetings(new, added=new)
    qids = [q for q in SNAPSHOT_IDS if not (new and q in SNAPSHOT_IDS[5:8])] + (["q41"] if new else [])
    queries = [query(q, "lookup", {f"m{q[1:]}": [(1, 1)]}, {f"m{q[1:]}": (1,)}) for q in qids]
    return open_corpus(write_corpus(root, meetings, queries)), turn_passages(meetings), qids


def _scored_snapshot(tmp: Path, corpus, passages, qids, name: str, gold_rank: int) -> Path:
    """A results directory written by `turnbench score`'s own code path: each query's gold turn ranked
    ``gold_rank`` among its meeting's three."""
    import json

    from turnbench.passages import write_passages
    from turnbench.pipeline.scoring import score_files
    from turnbench.runfiles import write_jsonl_run

    src = tmp / f"{name}-in"
    src.mkdir()
    write_passages(src / "passages.jsonl", passages)
    run = {}
    for q in qids:
        m = f"m{q[1:]}"
        order = [f"{m}:00000", f"{m}:00002"]
        order.insert(gold_rank - 1, f"{m}:00001")
        run[q] = [RP(q, p, 3 - k) for k, p in enumerate(order)]
    write_jsonl_run(src / "run.jsonl", run)
    (src / "arm.json").write_text(json.dumps({"name": name}))
    score_files(corpus.root, src / "passages.jsonl", src / "run.jsonl", tmp / name, policy=RelevancePolicy(),
                arm_config=src / "arm.json")
    return tmp / name


def snapshot_pair(tmp: Path) -> tuple[Path, Path]:
    """Results on two snapshots of one corpus (``tmp/old``, ``tmp/new``) sharing query ids: of SNAPSHOT_IDS, the first
    5 targets changed (their gold turn's text), the next 3 deleted, the rest unchanged, and q41 added. The baseline
    (``tmp/base``) ranks every gold turn first, the candidate (``tmp/cand``) second: a loss on every query."""
    old, old_p, old_q = _snapshot(tmp / "old", new=False)
    new, new_p, new_q = _snapshot(tmp / "new", new=True)
    assert old.id == new.id and old.sha256 != new.sha256
    return _scored_snapshot(tmp, old, old_p, old_q, "base", 1), _scored_snapshot(tmp, new, new_p, new_q, "cand", 2)


# -- forgeries a forger makes consistent: every file agreeing with metrics.json, every digest rewritten ------------

def reseal(path: Path, change=None) -> Path:
    """``path``'s metrics.json (changed by ``change``, if given) written again with every file's sha256 as they now
    are, metrics.md and answers.md made from it, and claim.sha256 rewritten: a forger's finishing touch."""
    import json

    from turnbench.render.markdown import render_answers_md
    from turnbench.results.integrity import rebuild

    doc = json.loads((path / "metrics.json").read_text())
    if change is not None:
        change(doc)
    if "answers" in doc:
        (path / "answers.md").write_text(render_answers_md(rebuild(doc["answers"])))
    seal(path, doc)
    return path


def _rows_again(block: dict) -> None:
    """Every row of a retrieval block recomputed from its per-query rows, as a consistent forger does."""
    def dropped(rows):
        return {r["class"]: r["dropped_unjudgeable"] for r in rows if r["class"] != "all"}

    block["rows"] = rows_of(block["rows"][0]["corpus"], block["per_query"], block["measures"], dropped(block["rows"]))
    for key in ("surface", "domain"):
        for value, rows in block.get(f"rows_by_{key}", {}).items():
            block[f"rows_by_{key}"][value] = rows_of(
                rows[0]["corpus"], [r for r in block["per_query"] if r.get(key) == value], block["measures"],
                dropped(rows))


def forge_qrels(path: Path, query: str | None = None) -> Path:
    """A consistent forgery of the judgements: the first passage some query (``query``, when given) ranks first that
    is not judged (or judged 1) is judged the other way round (grade 1 given or taken: the strict qrels stay as they
    are); that query's passage values are computed again from the forged qrels, the rows from them, and every digest
    rewritten. The directory then agrees with itself: only another side's gold, or the corpus, gives it away."""
    from turnbench.harness import exports as X
    from turnbench.results.rederive import _trec_values

    qrels = X.parse_qrels((path / X.QRELS_PASSAGES).read_bytes(), "qrels")
    run = {qid: dict(docs) for qid, docs in X.parse_run((path / X.RUN_PASSAGES).read_bytes(), "run").items()}
    qid, pid = next((q, next(iter(docs))) for q, docs in sorted(run.items())
                    if q in qrels and docs and qrels[q].get(next(iter(docs)), 0) <= 1 and query in (None, q))
    if qrels[qid].pop(pid, None) is None:
        qrels[qid][pid] = 1
    (path / X.QRELS_PASSAGES).write_bytes(X.qrels_text(qrels))

    def change(doc: dict) -> None:
        block = doc["retrieval"]
        derived = _trec_values(block, {"passage": {qid: qrels[qid]}, "meeting": {}}, {"passage": run, "meeting": {}},
                               "forged")
        row = next(r for r in block["per_query"] if r["query_id"] == qid)
        row["values"].update(derived[qid])
        _rows_again(block)
        counts = block["counts"]
        counts["judged_passages"] = sum(len(d) for d in qrels.values())
        counts["judged_passages_by_grade"] = {str(g): n for g in sorted({g for d in qrels.values() for g in d.values()})
                                              if (n := sum(1 for d in qrels.values() for v in d.values() if v == g))}

    return reseal(path, change)


def forge_answer_gold(path: Path, count_to: int = 0) -> Path:
    """A consistent forgery of an aggregation question's gold: the first count question's gold count set to
    ``count_to`` (another value if it is that already), its scores and the answer rows computed again, answers.md
    made again and every digest rewritten."""
    from turnbench.results.integrity import rebuild

    def change(doc: dict) -> None:
        block = doc["answers"]
        rec = next(r for r in block["per_query"] if r["gold"].get("type") == "count")
        rec["gold"]["count"] = count_to if rec["gold"]["count"] != count_to else count_to + 6
        again = rebuild(block)
        by_id = {s.query_id: s.recorded(r.corpus).to_json() for r in again for s in r.scores}
        for r in block["per_query"]:
            r.update({k: by_id[r["query_id"]][k] for k in ("em", "partial", "set_f1", "answered")})
        block["rows"] = [row.to_json() for r in again for row in r.rows()]

    return reseal(path, change)


def rec(tree):
    """The results record of a metrics.json tree a test built by hand (a record is passed through)."""
    from collections.abc import Mapping

    from turnbench.results.record import from_tree

    return from_tree(tree) if isinstance(tree, Mapping) else tree
