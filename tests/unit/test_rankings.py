"""turnbench.rankings and turnbench.passages: the inventory's identity and docs/design.md §3 rule 5 (ties cannot move a
result), against plain sorting."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from tests.unit.stack.helpers import words
from turnbench.corpus.records import Turn
from turnbench.errors import UnjudgedPassage
from turnbench.loading.chunking import chunk_meeting
from turnbench.passages import Passage, inventory_sha256, write_passages
from turnbench.rankings import RankedPassage, Ranking


def test_inventory_sha256_equals_the_written_file(tmp_path: Path):
    segs = [Turn(i, "AB"[i % 3 == 0], float(i), float(i + 1), words(i + 1)) for i in range(9)]
    passages = [c.passage for c in chunk_meeting("m2", segs, max_words=4)] + \
               [c.passage for c in chunk_meeting("m1", segs, max_words=4)]
    assert write_passages(tmp_path / "p.jsonl", passages) == inventory_sha256(reversed(passages))


def test_an_inventory_held_as_its_lines_is_read_into_passages_only_when_one_is_asked_for(tmp_path: Path):
    """``PassageLines`` gives the ids and meetings of passages.jsonl's lines without reading the passages; asked for
    one, it holds exactly what ``read_passages`` reads (a window's declared words and a speakers list too), and equals
    that tuple; lines naming no id or meeting are refused as msgspec refuses them."""
    from turnbench.passages import PassageLines, ids_and_meetings, read_passages

    segs = [Turn(i, "AB"[i % 3 == 0], float(i), float(i + 1), words(i + 1)) for i in range(9)]
    passages = [c.passage for c in chunk_meeting("m1", segs, max_words=4)]
    passages.append(Passage("m2:x", "m2", "A", 0.0, 1.0, 0, speakers=("A", "B")))
    write_passages(tmp_path / "p.jsonl", passages)
    data = (tmp_path / "p.jsonl").read_bytes()
    read = tuple(read_passages(tmp_path / "p.jsonl"))
    held = PassageLines(data)
    assert ids_and_meetings(held) == ([p.id for p in read], [p.meeting for p in read]) == ids_and_meetings(read)
    assert len(held) == len(read) and held._passages is None  # counted, named, not read
    assert held[0] == read[0] and held == read and list(held) == list(read) and held == PassageLines(data)
    assert any(p.holds for p in held) and held[-1].speakers == ("A", "B") and held != read[:-1]
    for bad in (b'{"id":"p1"}\n', b'not json\n', b'{"id":1,"meeting":"m"}\n'):
        with pytest.raises(ValueError):
            PassageLines(bad).ids_and_meetings()


def _rule5_by_plain_sorting(entries, pmap):
    """docs/design.md §3 rule 5 spelled out with Python sorts: best score per passage, then
    (-score, kind, meeting, index, id)."""
    best = {}
    for e in entries:
        seen = best.setdefault(e.query_id, {})
        seen[e.passage_id] = max(e.score, seen.get(e.passage_id, e.score))
    return {q: [RankedPassage(q, pid, 0, 0.0) for pid in sorted(
        s, key=lambda pid: (-s[pid], pmap[pid].kind, pmap[pid].meeting, pmap[pid].index, pid))]
        for q, s in sorted(best.items())}


def test_the_fast_normalised_order_equals_runs_normalise_on_tie_heavy_input():
    import random

    from turnbench.rankings import normalised_order as normalised_run

    normalise = _rule5_by_plain_sorting

    rng = random.Random(3)
    passages = [Passage(f"{rng.choice('abcxyz')}{i:03d}", f"m{rng.randrange(4)}", "s", 0.0, 1.0, rng.randrange(5),
                        rng.choice(("turn", "title"))) for i in range(60)]
    pmap = {p.id: p for p in passages}
    entries = [RankedPassage(f"q{rng.randrange(7)}", rng.choice(passages).id, 0, float(rng.choice((1, 1, 2, 0.5, 3))))
               for _ in range(600)]  # many repeats of one passage in one query, most scores tied
    reference = normalise(entries, pmap)
    assert normalised_run(entries, pmap) == {q: [e.passage_id for e in v] for q, v in reference.items()}
    assert normalised_run([], pmap) == {}
    with pytest.raises(UnjudgedPassage):
        normalised_run([RankedPassage("q", "nope", 1, 1.0)], pmap)


def _first_occurrence(run, pmap):
    """Each query's meetings by first occurrence, spelled out with a dict (docs/design.md §6)."""
    return {q: list(dict.fromkeys(pmap[pid].meeting for pid in pids)) for q, pids in run.items()}


def test_the_meetings_found_with_the_order_are_each_querys_meetings_by_first_occurrence():
    import random

    from turnbench.rankings import normalised_order

    rng = random.Random(11)
    passages = [Passage(f"p{i:03d}", f"m{rng.randrange(9)}", "s", 0.0, 1.0, rng.randrange(6)) for i in range(80)]
    pmap = {p.id: p for p in passages}
    entries = [RankedPassage(f"q{rng.randrange(12)}", rng.choice(passages).id, 0, float(rng.randrange(4)))
               for _ in range(900)]
    meetings: dict = {}
    run = normalised_order(entries, pmap, None, meetings)
    assert meetings == _first_occurrence(run, pmap) and len(meetings) == 12
    # the already-ordered path finds the same: the run as handed over in its own rule-5 order, one query empty
    ranking = Ranking.build([*((q, run[q], [float(len(run[q]) - i) for i in range(len(run[q]))]) for q in sorted(run)),
                             ("q99", [], [])])
    again: dict = {}
    assert normalised_order(ranking, pmap, None, again) == run and again == meetings


@pytest.mark.parametrize("passage", [
    Passage("m1:00000", "m1", "Ana", 0.0, 1.5, 0, "turn", "a" * 64, 12),
    Passage('q"uote\\back:1', "m\u00e9eting \u2603", "Zo\u00eb \"Z\"", 1e-7, 123456789.125, 7, "title", "", 0),
    Passage("tab\there\n", "m\x01", "s", 3.0, 3.0, 0),
])
def test_a_passages_canonical_line_is_canonical_json_byte_for_byte(passage):
    from turnbench import canonical

    assert passage.canonical_line() == canonical.dumps_line(passage.to_json())
    with_text = Passage(passage.id, passage.meeting, passage.speaker, passage.start, passage.end, passage.index,
                        text="said \"so\"")
    assert with_text.canonical_line() == canonical.dumps_line(with_text.to_json())


def _ranking_case():
    from turnbench.rankings import Ranking

    passages = [Passage(f"m{m}:{i:05d}", f"m{m}", "s", 0.0, 1.0, i) for m in (1, 2) for i in range(4)]
    pmap = {p.id: p for p in passages}
    # q1: falling scores, a tie broken in inventory order (m1 before m2); q2: one hit; q3: none
    ranking = Ranking.build([("q1", ["m2:00001", "m1:00003", "m2:00000", "m1:00000"], [9.0, 4.0, 4.0, 1.5]),
                             ("q2", ["m1:00002"], [0.25]), ("q3", [], [])])
    return pmap, ranking


def test_a_ranking_already_in_rule_5_order_is_read_as_it_is_and_equals_the_sorted_answer():
    from turnbench.rankings import Placement, _already_in_order, normalised_order

    pmap, ranking = _ranking_case()
    assert len(ranking) == 5 and [e.rank for e in ranking] == [1, 2, 3, 4, 1]
    best: dict = {}
    fast = _already_in_order(ranking, Placement.of(pmap.values()), best)
    assert fast == {"q1": ["m2:00001", "m1:00003", "m2:00000", "m1:00000"], "q2": ["m1:00002"]}
    # each query's best scores packed 8 bytes a score (a list of floats would be four times that)
    assert {q: (v.typecode, v.tolist()) for q, v in best.items()} == {"q1": ("d", [9.0, 4.0, 4.0, 1.5]),
                                                                      "q2": ("d", [0.25])}
    sorted_best: dict = {}
    assert normalised_order(ranking, pmap) == normalised_order(list(ranking), pmap, sorted_best) == fast
    assert {q: (v.typecode, v.tolist()) for q, v in sorted_best.items()} == {q: (v.typecode, v.tolist())
                                                                             for q, v in best.items()}


def test_each_querys_positions_in_the_inventory_order_name_its_passages_whether_sorted_or_read_as_given():
    from turnbench.rankings import Placement, normalised_order

    pmap, ranking = _ranking_case()
    placed = Placement.of(reversed(list(pmap.values())))
    order = placed.order
    assert [p.id for p in order] == sorted(pmap)  # (kind, meeting, index, id)
    for given in (ranking, list(reversed(list(ranking)))):  # read as it is; sorted
        positions: dict = {}
        run = normalised_order(given, pmap, placed=placed, positions_out=positions)
        assert set(positions) == set(run) == {"q1", "q2"}
        assert {q: [order[i].id for i in positions[q].tolist()] for q in run} == run


@pytest.mark.parametrize("breach", ["tie out of order", "score rises", "passage twice", "queries unsorted"])
def test_a_ranking_out_of_rule_5_order_is_sorted_not_trusted(breach):
    from turnbench.rankings import Placement, Ranking, _already_in_order, normalised_order

    pmap, _ = _ranking_case()
    rows = {"tie out of order": [("q1", ["m1:00003", "m2:00000", "m1:00000"], [4.0, 4.0, 4.0])],
            "score rises": [("q1", ["m1:00003", "m2:00000"], [1.0, 2.0])],
            "passage twice": [("q1", ["m1:00003", "m2:00000", "m1:00003"], [5.0, 4.0, 3.0])],
            "queries unsorted": [("q2", ["m1:00002"], [1.0]), ("q1", ["m1:00003"], [1.0])]}[breach]
    ranking = Ranking.build(rows)
    assert _already_in_order(ranking, Placement.of(pmap.values()), None) is None
    assert normalised_order(ranking, pmap) == normalised_order(list(ranking), pmap)


def test_a_ranking_naming_a_passage_outside_the_inventory_is_refused_naming_the_query():
    from turnbench.rankings import Ranking, normalised_order

    pmap, _ = _ranking_case()
    with pytest.raises(UnjudgedPassage, match="query q2: ranked passage 'ghost' is not in the passage inventory"):
        normalised_order(Ranking.build([("q1", ["m1:00000"], [1.0]), ("q2", ["ghost"], [1.0])]), pmap)
    with pytest.raises(ValueError, match="bounds must cover"):
        Ranking(("q1",), (0, 2), ["a"], [1.0])


def test_only_keeps_the_queries_asked_for_in_order_and_is_no_copy_when_that_is_all():
    r = Ranking.build([("q2", ["a", "b"], [2.0, 1.0]), ("q1", ["c"], [0.5]), ("q3", [], [])])
    some = r.only({"q3", "q2"})
    assert (some.query_ids, list(some.passage_ids), list(some.scores)) == (("q2", "q3"), ["a", "b"], [2.0, 1.0])
    assert some.hits(1) == ([], array("d"))
    assert r.only({"q1", "q2", "q3", "q9"}) is r


def test_a_trec_run_is_read_in_blocks_with_every_line_numbered_as_the_file_has_it(tmp_path: Path):
    """Lines are whole across the reader's blocks: 200,000 lines, a CRLF line, a last line without a newline."""
    from turnbench.errors import BadInput
    from turnbench.runfiles import read_trec_run

    path = tmp_path / "run.trec"
    body = b"".join(b"q%06d Q0 m:%05d 1 %d.5 tag\n" % (i // 100, i % 100, i) for i in range(200_000))
    path.write_bytes(body + b"qz Q0 p 1 -2 tag\r\n\nqz Q0 r 2 1e-3 tag")
    entries = read_trec_run(path)
    assert len(entries) == 200_002 and entries[123_456] == RankedPassage("q001234", "m:00056", 1, 123456.5)
    assert entries[-2:] == [RankedPassage("qz", "p", 1, -2.0), RankedPassage("qz", "r", 2, 0.001)]
    for bad, message in ((b"q Q0 \xff 1 1.0 x\n", "line 200001 is not UTF-8 text"),
                         (b"q Q0 p 1 1.0\n", "line 200001 has 5 columns, a TREC run has 6"),
                         (b"q Q0 p one 1.0 x\n", "line 200001: rank 'one' is not a whole number"),
                         (b"q Q0 p 1 high x\n", "line 200001: score 'high' is not a number"),
                         (b"q Q0 p 1 nan x\n", "line 200001: score nan is not a finite number"),
                         (b"q Q0 p 1 -inf x\n", "line 200001: score -inf is not a finite number")):
        path.write_bytes(body + bad)
        with pytest.raises(BadInput, match=f"^{path}: {message}$"):
            read_trec_run(path)


def test_an_exported_run_is_parsed_chunk_by_chunk_with_lines_numbered_across_chunks():
    from turnbench.errors import BadInput
    from turnbench.harness.exports import Lazy, parse_run

    chunks = [b"q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n", b"\n", b"q2 Q0 c 1 0.5 t\r\n"]
    assert parse_run(Lazy(lambda: iter(chunks)), "r") == {"q1": [("a", 2.0), ("b", 1.0)], "q2": [("c", 0.5)]}
    assert parse_run(b"".join(chunks), "r", depth=1) == {"q1": [("a", 2.0)], "q2": [("c", 0.5)]}
    for bad, message in ((b"q3 Q0 d 1 x t\n", "r: line 5: the score is not a number"),
                         (b"q3 Q0 d 1\n", "r: line 5 has 4 columns, a TREC run has 6"),
                         (b"q3 Q0 \xff 1 1.0 t\n", "r: not UTF-8 text")):
        with pytest.raises(BadInput, match=f"^{message}$"):
            parse_run(Lazy(lambda bad=bad: iter([*chunks, bad])), "r")


def test_a_trec_run_grouped_and_ranked_by_position_is_read_as_columns_and_any_other_as_records(tmp_path: Path):
    """The column-wise reading keeps everything the file says: a run it cannot hold as positions comes back as the
    records read_trec_run gives, and either way scoring gets the same entries in the same order."""
    from turnbench.runfiles import read_trec_ranking, read_trec_run

    path = tmp_path / "run.trec"
    cases = {
        b"q1 Q0 a 1 2.5 t\nq1 Q0 b 2 2.5 t\nq2 Q0 c 1 -1 t\n": Ranking,
        b"": Ranking,
        b"q1 Q0 a 1 2.5 t\nq2 Q0 c 1 -1 t\nq1 Q0 b 2 2.5 t\n": list,  # q1's lines apart
        b"q1 Q0 a 0 2.5 t\nq1 Q0 b 1 2.5 t\n": list,  # ranked from 0
        b"q1 Q0 a 1 2.5 t\nq1 Q0 b 3 2.5 t\n": list,  # a gap in the ranks
        b"q1 Q0 b 2 2.5 t\nq1 Q0 a 1 2.5 t\n": list,  # ranks out of file order
    }
    for data, kind in cases.items():
        path.write_bytes(data)
        got = read_trec_ranking(path)
        assert isinstance(got, kind), data
        assert list(got) == read_trec_run(path), data


def test_a_plain_passage_record_is_read_in_one_step_exactly_as_the_general_path_reads_or_refuses_it(monkeypatch):
    import turnbench.passages as P

    plain = {"end": 8.25, "id": "m1:00000", "index": 0, "kind": "turn", "meeting": "m1", "speaker": "Ann",
             "start": 1.5, "text_sha256": "c" * 64, "words": 17}
    variants = [plain, {**plain, "text_sha256": ""}, {**plain, "start": 1}, {**plain, "index": True},
                {**plain, "words": -1}, {**plain, "id": " "}, {**plain, "speaker": ""}, {**plain, "end": 1.0},
                {**plain, "text_sha256": "C" * 64}, {**plain, "text_sha256": "c" * 63}, {**plain, "kind": 3},
                {**plain, "start": float("inf")}, {**plain, "meeting": None}, {**plain, "extra": 1}]

    def read(d):
        try:
            return Passage.from_json(d)
        except (KeyError, TypeError, ValueError) as exc:
            return type(exc), str(exc)

    fast = [read(d) for d in variants]
    monkeypatch.setattr(P, "_plain", lambda cls, d: None)
    assert fast == [read(d) for d in variants]
    assert isinstance(fast[0], Passage) and isinstance(fast[2], Passage) and fast[2].start == 1.0
    # accepted: the plain one, no hash, a whole-number start, and a key turnbench does not read (ignored)
    assert [i for i, x in enumerate(fast) if isinstance(x, Passage)] == [0, 1, 2, 13]


def test_a_trec_run_names_each_distinct_passage_once_and_reads_as_the_strings_it_codes(tmp_path: Path):
    import pickle

    from turnbench.rankings import Coded, normalised_order
    from turnbench.runfiles import read_trec_ranking

    path = tmp_path / "run.trec"
    path.write_bytes(b"q1 Q0 m1:00000 1 2 t\nq1 Q0 m1:00001 2 1 t\nq2 Q0 m1:00001 1 3 t\nq2 Q0 ghost 2 1 t\n")
    got = read_trec_ranking(path)
    ids = got.passage_ids
    assert isinstance(ids, Coded) and ids.names == ["m1:00000", "m1:00001", "ghost"] and list(ids.codes) == [0, 1, 1, 2]
    assert list(ids) == ["m1:00000", "m1:00001", "m1:00001", "ghost"] and ids[3] == "ghost" and ids[1:3] == [
        "m1:00001", "m1:00001"] and len(ids) == 4 and "ghost" in ids
    back = pickle.loads(pickle.dumps(ids))
    assert list(back) == list(ids) and back.names == ids.names
    pmap, _ = _ranking_case()
    # the coded run is checked as any other: the passage outside the inventory is named with its query
    with pytest.raises(UnjudgedPassage, match="query q2: ranked passage 'ghost' is not in the passage inventory"):
        normalised_order(got, pmap)
    path.write_bytes(b"q1 Q0 m1:00000 1 2 t\nq1 Q0 m1:00001 2 1 t\nq2 Q0 m1:00001 1 3 t\n")
    coded = read_trec_ranking(path)
    plain = Ranking(coded.query_ids, coded.bounds, list(coded.passage_ids), coded.scores)
    firsts: dict = {}
    out = normalised_order(coded, pmap, meetings_out=firsts)
    assert out == normalised_order(plain, pmap) == {"q1": ["m1:00000", "m1:00001"], "q2": ["m1:00001"]}
    # and the run's ids stay the run's own strings, one object per distinct id: the inventory's are shared with the
    # children scoring forks, and taking them would copy the pages they sit on
    names = {id(n) for n in coded.passage_ids.names}
    assert all(id(pid) in names for pids in out.values() for pid in pids)
    assert not any(pid is k for pids in out.values() for pid in pids for k in pmap)


@pytest.mark.parametrize("block", [
    "q1 Q0 a 1 2.5 t\nq1 Q0 b 2 2.5 t\n",
    "q1 Q0 a 1 2.5 t\nq1 Q0 b 2 2.5 t",  # no newline after the last line
    "q1\tQ0  a 1 2.5 t\r\nq1 Q0 b 2 -0.0 t\x0b\n",  # tabs, runs of spaces, CRLF, a vertical tab
    "q1 Q0 a\u2003 1 2.5 t\n",  # a Unicode space: one separator to both readers
    "q1 Q0 a 1 2.5 t\n\nq1 Q0 b 2 2.5 t\n",  # a blank line
    "q1 Q0 a 1 2.5 t\n   \nq1 Q0 b 2 2.5\n",  # a blank line, then a five-column line: lines and tokens both add up
    "q1 Q0 a 1 2.5 t\n\n1 1 1 1 1\n",  # the same, and the tokens off the stride read as ranks and scores too
    "q1 Q0 a 1 2.5\nq1 Q0 b 2 2.5 t x\n",  # five then seven columns: thirteen tokens, off the stride
    "q1 Q0 a 1 2.5 t u v w x y z q\n",  # twelve columns on one line
    "q1 Q0 a\x00 1 2.5 t\n",  # the NUL the fast reader marks line ends with
    "q1 Q0 a one 2.5 t\n", "q1 Q0 a 1_0 2.5 t\n", "q1 Q0 a 1 1_000.5 t\n", "q1 Q0 a 1 high t\n",
    "q1 Q0 a 1 nan t\n", "q1 Q0 a 1 -Infinity t\n", "q1 Q0 a 1 1e999 t\n", "",
])
def test_a_block_split_at_once_reads_exactly_as_line_by_line_or_leaves_it_to_that_reader(block):
    """The fast reader gives the line-by-line reader's columns, or nothing and the line-by-line reader refuses."""
    from turnbench.errors import BadInput
    from turnbench.runfiles import _block_by_lines, _block_columns

    fast = _block_columns(block)
    try:
        slow = _block_by_lines(block, "run", 1)
    except BadInput:
        assert fast is None
        return
    assert fast is None or fast == slow
    assert fast is not None or not block or "\n\n" in block or "\n   \n" in block or "\x00" in block


@pytest.mark.parametrize("block", [3, 256])
@pytest.mark.parametrize("case", ["plain", "coded", "escaped id", "control id", "non-ascii id", "score out of range",
                                  "nan"])
def test_a_rankings_two_run_files_from_one_pass_are_the_record_writers_bytes(tmp_path: Path, case: str, block: int,
                                                                              monkeypatch):
    """``ranking_lines`` (what ``turnbench run`` writes from its columns) gives, query by query, exactly the bytes
    ``write_trec_run`` and ``write_jsonl_run`` write from records: scores of every size in the range the encoder
    writes as repr, queries without hits left out; an id canonical JSON escapes, or a score out of that range, leaves
    run.jsonl to the record writer (None) while run.trec keeps repr's text (1e+16, nan). In blocks of 3 queries too:
    a block starting or holding queries without hits, and one with none at all."""
    import random

    from turnbench import runfiles
    from turnbench.rankings import Coded
    from turnbench.runfiles import ranking_lines, write_jsonl_run, write_trec_run

    monkeypatch.setattr(runfiles, "BLOCK_QUERIES", block)
    rnd = random.Random(7)
    names = [f"m{m:03d}-p{i:04d}" for m in range(5) for i in range(40)]
    odd = {"escaped id": 'p"1\\', "control id": "p\x7f1\t", "non-ascii id": "pé", "score out of range": None,
           "nan": None}.get(case)
    per_query = []
    for q in range(12):
        n = 0 if q in (3, 4, 5, 7) else rnd.randint(1, 30)
        ids = rnd.sample(names, n)
        scores = sorted((rnd.uniform(0.5, 1) * 10.0 ** rnd.randint(-3, 15) for _ in range(n)), reverse=True)
        per_query.append((f"q{q:02d}", ids, scores))
    if odd is not None:
        per_query[1][1][0] = odd
    if case == "score out of range":
        per_query[2][2][0] = 1e16
    if case == "nan":
        per_query[2][2][-1] = float("nan")
    ranking = Ranking.build(per_query)
    if case == "coded":
        table = {n: i for i, n in enumerate(sorted(set(ranking.passage_ids)))}
        ranking = Ranking(ranking.query_ids, ranking.bounds, Coded(sorted(table), array(
            "i", [table[p] for p in ranking.passage_ids])), ranking.scores)
    lines = list(ranking_lines(ranking, "tag"))
    records = {qid: [RankedPassage(qid, p, r, s) for r, (p, s) in enumerate(zip(ids, sc, strict=True), 1)]
               for qid, ids, sc in per_query if ids}
    write_trec_run(tmp_path / "run.trec", records, "tag")
    assert b"".join(trec for trec, _ in lines) == (tmp_path / "run.trec").read_bytes()
    assert len(lines) == (3 if block == 3 else 1)
    if case in ("plain", "coded"):
        write_jsonl_run(tmp_path / "run.jsonl", records)
        assert b"".join(line for _, line in lines) == (tmp_path / "run.jsonl").read_bytes()
    else:
        assert {line for _, line in lines} == {None}
    assert [trec for trec, _ in ranking_lines(ranking, "tag", jsonl=False)] == [trec for trec, _ in lines]
