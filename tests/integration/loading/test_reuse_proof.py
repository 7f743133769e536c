"""A reused load proves its content (issue 40): what the index returns and what every table holds must read back as
the load wrote them, against the record the load kept in the state directory — statistics that match again after a
rewrite, vectors swapped inside the index, an edited row, a rewritten ``_meta`` all load again, with one note line
saying why; an alias in the index's place is someone else's (exit 3, untouched); an untouched load is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.loading.tamper import blank_meeting, documents, first_meeting, rewrite_every_document
from tests.integration.loading.test_reuse import _fake_vectors
from tests.integration.tinycorpus import MAX_WORDS
from turnbench.engines.arms import builtin
from turnbench.loading import index as ix
from turnbench.loading import proof
from turnbench.loading.reuse import load_or_reuse, settled_load
from turnbench.loading.spec import LoadSpec
from turnbench.loading.tables import SCHEMA
from turnbench.pipeline import bench as pipeline
from turnbench.results.directory import CLAIM_FILES
from turnbench.stack.clients import opensearch_client, postgres_connect

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
SMALL = REPO / "fixtures" / "small"
INDEX = "turnbench-proof-test"


@pytest.fixture(autouse=True)
def _state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))


def _spec(kw: dict) -> LoadSpec:
    """The load's shape: this module's cut and index, with whatever of LoadSpec's fields ``kw`` names (taken out)."""
    return LoadSpec(**{"max_words": MAX_WORDS, "index": INDEX,
                       **{k: kw.pop(k) for k in ("max_words", "overlap", "index", "shards", "vectors") if k in kw}})


def _load(stack, corpus, **kw):
    return load_or_reuse(stack, corpus, _spec(kw), **kw)


def _kept(stack, corpus, **kw) -> tuple[bool, str]:
    kept, why = settled_load(stack, corpus, _spec(kw))
    return kept is not None, why


def _statistics_match(client, index: str) -> None:
    """What the reuse of round 3 compared is equal again: the attack is the one the hostile round made."""
    live, recorded = ix.index_provenance(client, index), proof.read_record(index)["provenance"]
    keys = ("docs_count", "docs_deleted", "indexing_index_total", "settings_sha256", "mapping_sha256")
    assert [live[k] for k in keys] == [recorded[k] for k in keys]
    assert ix.index_topology(client, index)["segments_per_shard"] == [1]


def _bench(stack, out: Path, answerer: str = "skip", **kw):
    lines: list[str] = []
    outcomes = pipeline.bench(SMALL, [builtin("bm25")], out, pipeline.BenchOptions(
        provider="external", index=INDEX, answerer=answerer,
        stack_options={"opensearch_url": stack.opensearch_url, "postgres_dsn": stack.postgres_dsn}, **kw),
        echo=lines.append)
    return outcomes, lines


def _same_claims(a, b) -> None:
    names = sorted(p.name for p in a.out_dir.iterdir())
    assert names == sorted(p.name for p in b.out_dir.iterdir()) and set(CLAIM_FILES) <= set(names)
    for name in names:
        if name != "runinfo.json":
            assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes(), name


def test_a_rewritten_index_whose_statistics_match_again_is_loaded_again_and_benches_as_a_fresh_load(stack, tmp_path):
    fresh, _ = _bench(stack, tmp_path / "fresh", reload=True)
    kept, said = _bench(stack, tmp_path / "kept")  # untouched: kept, the same bytes
    assert any(line.startswith("load: reusing the settled index") for line in said), said
    _same_claims(fresh[0], kept[0])
    client = opensearch_client(stack)
    meeting = first_meeting(client, INDEX)
    rewrite_every_document(client, INDEX, blank_meeting(meeting))
    _statistics_match(client, INDEX)
    again, said = _bench(stack, tmp_path / "again")
    notes = [line for line in said if line.startswith("load:")]
    assert notes == [f"load: loaded {fresh[0].results.document['provenance']['corpus']['id']} into {INDEX!r} "
                     f"(index {INDEX!r}'s documents do not read back as the load wrote them (meeting {meeting!r} "
                     "first))"], said
    _same_claims(fresh[0], again[0])


def test_vectors_swapped_inside_the_index_are_read_back_and_caught(stack, tiny):
    vectors = _fake_vectors()
    _load(stack, tiny, vectors=vectors, reload=True)
    assert _kept(stack, tiny, vectors=vectors) == (True, "reused")
    client = opensearch_client(stack)
    docs = documents(client, INDEX)
    a, b = next((p, q) for p in sorted(docs) for q in sorted(docs)
                if docs[p]["embedding"] != docs[q]["embedding"] and docs[p]["meeting_id"] == docs[q]["meeting_id"])

    def swap(docs):
        return {**docs, a: {**docs[a], "embedding": docs[b]["embedding"]},
                b: {**docs[b], "embedding": docs[a]["embedding"]}}

    rewrite_every_document(client, INDEX, swap)
    _statistics_match(client, INDEX)
    # the embeddings the encoder's cache gives are still the recorded ones: only the index changed
    assert vectors.embed([], None)[1]["encoder"] == {"id": "fake-4"}
    kept, why = _kept(stack, tiny, vectors=vectors)
    assert not kept and why == (f"index {INDEX!r}'s documents do not read back as the load wrote them "
                                f"(meeting {docs[a]['meeting_id']!r} first)")
    reloaded = _load(stack, tiny, vectors=vectors)
    assert not reloaded.reused and documents(client, INDEX)[a]["embedding"] == docs[a]["embedding"]
    assert _kept(stack, tiny, vectors=vectors) == (True, "reused")


EDITS = {  # a row of each table a stage reads, edited in place: what the answer engine and a run would read
    "meetings": f"UPDATE {SCHEMA}.meetings SET title = title || ' (edited)' WHERE id = (SELECT min(id) FROM "
                f"{SCHEMA}.meetings)",
    "segments": f"UPDATE {SCHEMA}.segments SET text = '' WHERE (meeting_id, turn_index) = (SELECT meeting_id, "
                f"turn_index FROM {SCHEMA}.segments ORDER BY meeting_id, turn_index LIMIT 1)",
    "attendees": f"UPDATE {SCHEMA}.attendees SET name = name || 'x' WHERE (meeting_id, name) = (SELECT meeting_id, "
                 f"name FROM {SCHEMA}.attendees ORDER BY meeting_id, name LIMIT 1)",
    "passages": f"UPDATE {SCHEMA}.passages SET holds = '[[0, 1]]' WHERE id = (SELECT min(id) FROM "
                f"{SCHEMA}.passages WHERE holds IS NULL)",
}


@pytest.mark.parametrize("table", sorted(EDITS))
def test_an_edited_row_in_any_table_is_caught(stack, tiny, table):
    _load(stack, tiny, reload=True)
    assert _kept(stack, tiny) == (True, "reused")
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute(EDITS[table])
        assert cur.rowcount == 1
    kept, why = _kept(stack, tiny)
    # the passages' inventory is read first (it is what a run reads): it no longer hashes to the recorded sha256;
    # the other tables are caught by their digest
    assert not kept and (why.startswith("the inventory read back from PostgreSQL does not hash") if table == "passages"
                         else why == f"PostgreSQL table {SCHEMA}.{table} is not what the load wrote"), why
    reloaded = _load(stack, tiny)
    assert not reloaded.reused and reloaded.not_reused == why
    assert _kept(stack, tiny) == (True, "reused")


def test_an_edited_segment_reloads_and_the_answers_are_a_fresh_loads(stack, tmp_path):
    fresh, _ = _bench(stack, tmp_path / "fresh", answerer="reference", reload=True)
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute(f"UPDATE {SCHEMA}.segments SET text = '' WHERE meeting_id = (SELECT min(meeting_id) FROM "
                    f"{SCHEMA}.segments)")
    again, said = _bench(stack, tmp_path / "again", answerer="reference")
    assert any(line.endswith(f"(PostgreSQL table {SCHEMA}.segments is not what the load wrote)") for line in said), said
    _same_claims(fresh[0], again[0])


def test_the_index_meta_proves_nothing(stack, tiny, tiny_other):
    client = opensearch_client(stack)
    _load(stack, tiny, reload=True)
    tiny_marker = ix.index_marker(client, INDEX)
    # no record in the state directory: the index's own marker, intact, is not enough
    os.unlink(proof.record_path(INDEX))
    assert _kept(stack, tiny) == (False, f"the state directory {Path(os.environ['TURNBENCH_STATE_DIR'])} holds no "
                                         f"record of a settled load into {INDEX!r}")
    _load(stack, tiny)
    assert _kept(stack, tiny) == (True, "reused")
    # _meta made to claim more than it did: content untouched, still not proof
    ix.put_marker(client, INDEX, {**tiny_marker, "verified": True})
    kept, why = _kept(stack, tiny)
    assert not kept and "marker is not the one the state directory's record holds" in why
    # another corpus loaded, and its index's _meta made to claim the first corpus's load word for word
    _load(stack, tiny_other)
    ix.put_marker(client, INDEX, tiny_marker)
    kept, why = _kept(stack, tiny)
    assert not kept and "marker is not the one the state directory's record holds" in why
    # and a record copied in from elsewhere names another index instance (its uuid), whatever it claims
    record = proof.read_record(INDEX)
    proof.write_record(INDEX, {**record, "marker": tiny_marker})
    kept, why = _kept(stack, tiny)
    assert not kept


def _cli(stack, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TURNBENCH_OPENSEARCH_URL": stack.opensearch_url, "TURNBENCH_POSTGRES_DSN": stack.postgres_dsn,
           "TURNBENCH_STATE_DIR": str(cwd / "state")}
    return subprocess.run([sys.executable, "-c", "from turnbench.cli import main; main()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("target", ["someone-elses-passages", INDEX])
def test_an_alias_in_the_index_place_is_refused_exit_3_and_left_untouched(stack, tiny, tmp_path, target):
    client = opensearch_client(stack)
    alias = "turnbench-proof-alias"
    if target == INDEX:  # an alias of turnbench's own index: the name is still someone else's
        _load(stack, tiny)
    else:
        client.indices.create(index=target, body={"settings": {"number_of_replicas": 0}})
        client.index(index=target, id="theirs", body={"note": "not turnbench's"}, params={"refresh": "true"})
    client.indices.put_alias(index=target, name=alias)
    before = (documents(client, target), client.indices.get_mapping(index=target),
              client.indices.get_alias(name=alias))
    try:
        for command in (["load"], ["bench", "--arm", "bm25", "--answerer", "skip", "--out", str(tmp_path / "out")]):
            done = _cli(stack, [*command, "--corpus", str(tiny.root), "--index", alias, "--max-words", str(MAX_WORDS)],
                        tmp_path)
            lines = [ln for ln in done.stderr.strip().splitlines() if not ln.startswith("turnbench: stack provider")]
            assert done.returncode == 3, done.stderr
            assert len(lines) == 1 and lines[0].startswith(f"turnbench: ForeignIndex: {alias!r} is an alias (of "
                                                           f"{target})"), done.stderr
            assert (documents(client, target), client.indices.get_mapping(index=target),
                    client.indices.get_alias(name=alias)) == before
            assert not (tmp_path / "out").exists()
    finally:
        client.indices.delete_alias(index=target, name=alias)
        if target != INDEX:
            client.indices.delete(index=target)


def test_an_untouched_load_is_kept_with_and_without_vectors(stack, tiny):
    for vectors in (None, _fake_vectors()):
        first = _load(stack, tiny, vectors=vectors, reload=True)
        again = _load(stack, tiny, vectors=vectors)
        assert again.reused and (again.provenance, again.passages) == (first.provenance, first.passages)
        record = json.loads(proof.record_path(INDEX).read_text())
        assert record["documents"]["count"] == len(first.passages) and set(record["tables"]) == {
            "attendees", "meetings", "passages", "segments"}
        # what the record holds is what the index and the tables return, computed the same way
        assert proof.combine(proof.read_documents(opensearch_client(stack), INDEX, vectors and vectors.field)) == \
            record["documents"]
