"""turnbench.engines.families: an arm declares its engine; an FTS5 arm is checked in full when its file is read, runs
in memory, quotes every question word, and reads back what SQLite stored before any question."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.engines.arms import builtin, parse_arm
from turnbench.engines.families import ENGINES, engine_ref, fts5
from turnbench.engines.protocol import Question
from turnbench.errors import BadInput, SettingIgnored
from turnbench.passages import Passage

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"
FTS5 = b'''name = "mine"
engine = "sqlite-fts5"
body = "{{query_terms}}"
[fts5]
tokenizer = "porter unicode61"
columns = { text = 1.0, speaker = 0.25 }
'''


def _passages() -> list[Passage]:
    texts = ["the budget was cut", "Running the numbers on the budget again", "nothing to see", "budget budget"]
    return [Passage(id=f"m1:{i:05d}", meeting="m1", speaker="Ann" if i else "Budget Bob", start=float(i),
                    end=i + 1.0, index=i, text=t) for i, t in enumerate(texts)]


def test_an_arm_names_its_engine_opensearch_by_default_and_its_record_is_unchanged() -> None:
    assert ENGINES == ("opensearch", "qdrant", "sqlite-fts5")
    body = b"""body = '{"query": {"match": {"content": {{query_text}}}}}'\n"""
    plain = parse_arm(b'name = "x"\n' + body, "x.toml", builtin=False)
    said = parse_arm(b'name = "x"\nengine = "opensearch"\n' + body, "x.toml", builtin=False)
    assert plain.engine == said.engine == "opensearch"
    assert "engine" not in plain.config() and "settings" not in plain.config()
    assert builtin("fts5-bm25").config()["engine"] == "sqlite-fts5"


@pytest.mark.parametrize("content, reason", [
    (b'name = "x"\nengine = "elastic"\nbody = "{{query_terms}}"\n',
     r"^x\.toml: engine 'elastic' is not one of opensearch, qdrant, sqlite-fts5$"),
    (b'name = "x"\nengine = 3\nbody = "{{query_terms}}"\n', r"engine 3 is not one of"),
    (FTS5.replace(b"[fts5]", b"pipeline = 1\n[fts5]"), r"unknown key\(s\) pipeline; an arm on sqlite-fts5 has"),
    (FTS5.replace(b"[fts5]\n", b"[fts6]\n"), r"unknown key\(s\) fts6"),
    (b'name = "x"\nengine = "sqlite-fts5"\nbody = "{{query_terms}}"\n', r"declares its settings in a \[fts5\]"),
    (FTS5.replace(b"porter unicode61", b"porter unicode61'); DROP TABLE x; --"), "tokenizer .* is not"),
    (FTS5.replace(b"porter unicode61", b"trigram"), "tokenizer 'trigram' is not"),
    (FTS5.replace(b"speaker = 0.25", b"title = 1.0"), "columns maps text and/or speaker"),
    (FTS5.replace(b"speaker = 0.25", b"speaker = -1"), "the weight of speaker must be a finite number >= 0"),
    (FTS5.replace(b"speaker = 0.25", b"speaker = nan"), "the weight of speaker must be a finite number"),
    (FTS5.replace(b"speaker = 0.25", b"speaker = true"), "the weight of speaker must be a finite number"),
    (FTS5.replace(b"columns", b"join = 'NEAR'\ncolumns"), "join is OR or AND, not 'NEAR'"),
    (FTS5.replace(b"columns", b"rank = 'x'\ncolumns"), r"\[fts5\] has unknown key\(s\) rank"),
    (FTS5.replace(b'"{{query_terms}}"', b'"budget"'), r"has no \{\{query_terms\}\}"),
    (FTS5.replace(b'"{{query_terms}}"', b'"{{query_text}}"'), r"unknown placeholder \{\{query_text\}\} for an arm "
                                                              "on sqlite-fts5; known: {{query_terms}}"),
    (FTS5.replace(b'"{{query_terms}}"', b'"title : {{query_terms}}"'), r"not an FTS5 query .*no such column"),
    (FTS5.replace(b'"{{query_terms}}"', b'"{{query_terms}} AND ("'), r"not an FTS5 query"),
    (FTS5.replace(b'"{{query_terms}}"', b'""'), "body must be the sqlite-fts5 query template"),
    (FTS5.replace(b'name = "mine"', b'name = "Mine!"'), "name 'Mine!' must be"),
])
def test_a_bad_family_arm_is_refused_in_one_line_naming_the_file(content: bytes, reason: str) -> None:
    with pytest.raises(BadInput) as err:
        parse_arm(content, "x.toml", builtin=False)
    assert re.search(reason, str(err.value)), str(err.value)
    assert str(err.value).startswith("x.toml: ") and "\n" not in str(err.value)


def test_the_cli_refuses_an_unknown_engine_exit_2_one_line_before_any_stack_writing_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "bad"\nengine = "solr"\nbody = "{{query_terms}}"\n')
    for args in (["bench", "--corpus", str(SMALL), "--arm-file", str(bad), "--out", str(tmp_path / "o"),
                  "--provider", "external"],
                 ["run", "--corpus", str(SMALL), "--arm-file", str(bad), "--out", str(tmp_path / "r")],
                 ["sweep", "--corpus", str(SMALL), "--arm-file", str(bad), "--out", str(tmp_path / "s")]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert r.stderr == f"turnbench: BadInput: {bad}: engine 'solr' is not one of opensearch, qdrant, " \
                           "sqlite-fts5\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_run_refuses_an_arm_on_another_engine_in_one_line_before_any_stack(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["run", "--corpus", str(SMALL), "--arm", "fts5-bm25", "--out", str(tmp_path / "r")])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("turnbench: BadInput: arm fts5-bm25 runs on sqlite-fts5, not on OpenSearch: bench it "
                        "(turnbench bench --arm or --arm-file), which runs it in-process on the loaded passages\n")
    assert not (tmp_path / "r").exists()


def test_every_question_word_is_a_quoted_term_never_an_operator_or_a_column() -> None:
    assert fts5.terms('What did "Ann" say — AND/OR NOT text: budget_cut? ann') == [
        "What", "did", "Ann", "say", "AND", "OR", "NOT", "text", "budget", "cut"]
    assert fts5.match("text : {{ query_terms }}", ['a"b', "c"], "OR") == 'text : ("a""b" OR "c")'
    ref = engine_ref(parse_arm(FTS5, "mine.toml", builtin=False))
    ref.engine.index(_passages(), None)
    try:
        hits = ref.engine.search([Question("q1", "budget"), Question("q2", 'NOT "text:" AND ( OR'),
                                  Question("q3", "?! —"), Question("q4", "running bob")], 10)
    finally:
        ref.engine.close()
    assert [pid for pid, _ in hits[0]] == ["m1:00003", "m1:00000", "m1:00001"]  # bm25: more budget ranks first
    assert hits[0][0][1] > hits[0][1][1] > 0
    assert hits[1] == [] and hits[2] == []  # operators asked as words match nothing; no word: no passage
    # porter stems "running" (passage 1 says "Running"); the speaker column holds "Budget Bob"
    assert {pid for pid, _ in hits[3]} == {"m1:00000", "m1:00001"}


def test_ties_are_broken_by_inventory_order_so_the_depth_cut_is_fixed() -> None:
    same = [Passage(id=f"m{i}:00000", meeting=f"m{i}", speaker="A", start=0.0, end=1.0, index=0, text="same words")
            for i in (3, 1, 2)]
    ref = engine_ref(parse_arm(FTS5, "mine.toml", builtin=False))
    ref.engine.index(same, None)
    (hits,) = ref.engine.search([Question("q", "words")], 2)
    assert [pid for pid, _ in hits] == ["m3:00000", "m1:00000"] and hits[0][1] == hits[1][1]


def test_what_sqlite_stored_is_read_back_and_a_difference_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    arm = parse_arm(FTS5, "mine.toml", builtin=False)
    store = fts5.open(arm)
    store.load(_passages())
    assert store.verify() == {"columns": ["text", "speaker"], "tokenizer": "porter unicode61", "rows": 4,
                              "probe": ["cafe", "run"]}
    store.db.execute("UPDATE passages SET text = 'changed' WHERE rowid = 2")
    with pytest.raises(SettingIgnored, match="the passage texts read back are not the texts loaded"):
        store.verify()
    store.close()

    store = fts5.open(arm)
    # the declared tokenizer would not stem; the stored one does
    monkeypatch.setattr(fts5, "expected_probe", lambda tokenizer: {"running", "cafe"})
    store.load(_passages())
    with pytest.raises(SettingIgnored, match=r"'Running Café' into \['cafe', 'run'\], not \['cafe', 'running'\]"):
        store.verify()
    store.close()


def test_the_probe_expects_what_each_declared_tokenizer_does() -> None:
    for tokenizer in ("unicode61", "porter unicode61", "unicode61 remove_diacritics 0",
                      "porter unicode61 remove_diacritics 2"):
        arm = parse_arm(FTS5.replace(b"porter unicode61", tokenizer.encode()), "mine.toml", builtin=False)
        store = fts5.open(arm)
        store.load(_passages())
        assert store.verify()["tokenizer"] == tokenizer
        store.close()


def test_the_fts5_arm_in_the_docs_parses_as_written() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "engines.md").read_text()
    (code,) = re.findall(r"<!-- fts5-arm-example -->\n```toml\n(.*?)```", text, re.S)
    arm = parse_arm(code.encode(), "fts5-text-speaker.toml", builtin=False)
    assert arm.engine == "sqlite-fts5" and arm.settings["columns"] == {"text": 1.0, "speaker": 0.5}
