"""The loader's pure parts: index names, settings canonicalisation, count differences, the index definition."""

import pytest

from turnbench.errors import BadInput
from turnbench.loading.index import (
    VOLATILE_SETTINGS,
    check_index_name,
    describe_difference,
    index_mappings,
    index_settings,
    strip_volatile_settings,
)


@pytest.mark.parametrize("name", ["turnbench-passages", "tb_2", "a.b"])
def test_valid_index_names_pass(name):
    assert check_index_name(name) == name


@pytest.mark.parametrize("name", ["", "BAD", "has space", "a/b", "a,b", "-x", "_x", "+x", ".", "..", "a#b", "a:b",
                                  "x" * 256])
def test_invalid_index_names_are_bad_input(name):
    with pytest.raises(BadInput, match="not a valid OpenSearch index name"):
        check_index_name(name)


def test_volatile_settings_are_dropped_and_the_rest_sorted():
    flat = {"index.uuid": "u1", "index.creation_date": "1", "index.version.created": "136", "index.provided_name": "x",
            "index.number_of_shards": "1", "index.blocks.read_only": "false"}
    assert list(strip_volatile_settings(flat).items()) == [("index.blocks.read_only", "false"),
                                                             ("index.number_of_shards", "1")]
    assert {"index.uuid", "index.creation_date", "index.version.created"} <= VOLATILE_SETTINGS


def test_describe_difference_names_the_meetings_that_differ():
    expected = (5, {"m1": 2, "m2": 3})
    got = (5, {"m1": 3, "m2": 1, "m3": 1})
    assert describe_difference(expected, got) == (
        "5 passages in 3 meetings where the inventory has 5 in 2; "
        "meetings differing: m1: 3 not 2, m2: 1 not 3, m3: 1 not 0")


def test_index_definition_single_shard_strict_mapping_sorted_by_the_normalise_order():
    s = index_settings()["index"]
    assert (s["number_of_shards"], s["number_of_replicas"]) == (1, 0)
    assert s["sort.field"] == ["passage_kind", "meeting_id", "passage_index"] and s["sort.order"] == ["asc"] * 3
    assert s["similarity"]["turnbench_bm25"] == {"type": "BM25", "k1": 1.2, "b": 0.75}
    m = index_mappings()
    assert m["dynamic"] == "strict"
    assert m["properties"]["content"]["analyzer"] == "english"
    assert m["properties"]["content"]["fields"]["exact"]["analyzer"] == "standard"
    assert {k: v["type"] for k, v in m["properties"].items()} == {
        "content": "text", "title": "text", "speaker": "keyword", "meeting_id": "keyword", "passage_id": "keyword",
        "passage_index": "integer", "passage_kind": "keyword", "start": "double", "end": "double", "words": "integer",
        "turns": "integer", "recorded_date": "date"}


def test_shards_are_one_to_sixty_four_and_no_replicas_ever():
    from turnbench.loading.index import check_shards

    assert index_settings(3)["index"]["number_of_shards"] == 3 and index_settings(3)["index"]["number_of_replicas"] == 0
    for bad in (0, 65, -1, True, 1.5, "2"):
        with pytest.raises(BadInput, match="shards must be a whole number from 1 to 64"):
            check_shards(bad)
