"""The server's fusion re-derived, worked by hand: RRF sums, min-max and l2 with their edge cases, the three means,
and the check that refuses a server whose scores the declared settings cannot give."""

from __future__ import annotations

import math

import pytest

from turnbench.engines.pipelines import NORMALIZATION, RRF, Fusion, check, expected, parse
from turnbench.errors import BadInput, SettingIgnored

A = [("a", 9.0), ("b", 6.0), ("c", 3.0)]
B = [("b", 0.8), ("d", 0.4)]


def close(x: float, y: float) -> bool:
    return math.isclose(x, y, abs_tol=1e-6)


def test_rrf_sums_one_over_k_plus_rank_in_each_list() -> None:
    got = expected(Fusion(RRF, rank_constant=20), [A, B])
    # b: rank 2 in A, rank 1 in B -> 1/22 + 1/21; a: 1/21; c: 1/23; d: 1/22
    assert close(got["b"][0], 1 / 22 + 1 / 21) and got["b"][0] == got["b"][1]
    assert close(got["a"][0], 1 / 21) and close(got["c"][0], 1 / 23) and close(got["d"][0], 1 / 22)


def test_rrf_allows_tied_documents_either_rank() -> None:
    got = expected(Fusion(RRF, rank_constant=60), [[("a", 2.0), ("b", 2.0), ("c", 1.0)]])
    assert close(got["a"][0], 1 / 62) and close(got["a"][1], 1 / 61)
    assert got["a"] == got["b"] and close(got["c"][0], 1 / 63)


def test_min_max_floors_the_minimum_at_a_thousandth_and_a_lone_score_is_one() -> None:
    f = Fusion(NORMALIZATION)
    got = expected(f, [A, [("a", 5.0)]])
    # A: a 1.0, b 0.5, c 0 -> 0.001; second list: a alone -> 1.0; arithmetic mean over both lists, absent = 0
    assert close(got["a"][0], (1.0 + 1.0) / 2) and close(got["b"][0], 0.5 / 2) and close(got["c"][0], 0.001 / 2)


def test_weighted_arithmetic_geometric_and_harmonic_means() -> None:
    lists = [A, B]  # min-max: A -> a 1, b .5, c .001; B -> b 1, d .001
    arith = expected(Fusion(NORMALIZATION, weights=(0.3, 0.7)), lists)
    assert close(arith["b"][0], 0.3 * 0.5 + 0.7 * 1.0) and close(arith["a"][0], 0.3 * 1.0)
    geo = expected(Fusion(NORMALIZATION, combination="geometric_mean", weights=(0.3, 0.7)), lists)
    assert close(geo["b"][0], math.exp(0.3 * math.log(0.5) + 0.7 * math.log(1.0)))
    assert close(geo["a"][0], 1.0)  # a list that did not return a document is skipped, not zero
    har = expected(Fusion(NORMALIZATION, combination="harmonic_mean", weights=(0.3, 0.7)), lists)
    assert close(har["b"][0], 1.0 / (0.3 / 0.5 + 0.7 / 1.0))


def test_l2_divides_by_the_norm_of_each_list() -> None:
    got = expected(Fusion(NORMALIZATION, normalization="l2"), [A])
    norm = math.sqrt(81 + 36 + 9)
    assert close(got["a"][0], 9 / norm) and close(got["c"][0], 3 / norm)


def test_the_check_passes_what_the_settings_give_and_refuses_what_they_cannot() -> None:
    f20 = Fusion(RRF, rank_constant=20)
    server = {"q1": [("b", 1 / 22 + 1 / 21), ("a", 1 / 21), ("d", 1 / 22), ("c", 1 / 23)]}
    done = check(f20, "arm", "arm.toml", server, {"q1": [A, B]})
    assert done["hits"] == 4 and done["fusion"] == "score-ranker-processor: rrf, rank constant 20"
    sixty = {"q1": [("b", 1 / 62 + 1 / 61), ("a", 1 / 61)]}  # what the server gives when it keeps 60
    with pytest.raises(SettingIgnored, match="rank constant 20 gives 0.0930"):
        check(f20, "arm", "arm.toml", sixty, {"q1": [A, B]})
    with pytest.raises(SettingIgnored, match="no sub-query returns it"):
        check(f20, "arm", "arm.toml", {"q1": [("zz", 0.1)]}, {"q1": [A, B]})


def test_parse_reads_what_the_server_reads_and_refuses_what_it_would_ignore() -> None:
    combination = {"technique": "rrf", "parameters": {"rank_constant": 7}}
    rrf = {"phase_results_processors": [{"score-ranker-processor": {"combination": combination}}]}
    assert parse(rrf, "w") == Fusion(RRF, rank_constant=7)
    assert parse({"phase_results_processors": [{"score-ranker-processor": {}}]}, "w").rank_constant == 60
    bad = {"phase_results_processors": [{"score-ranker-processor": {"combination": {"parameters": {"k": 7}}}}]}
    with pytest.raises(BadInput, match="parameters may hold rank_constant, not k"):
        parse(bad, "w")
    big = {"phase_results_processors": [{"score-ranker-processor": {"combination": {"parameters":
                                                                                       {"rank_constant": 10_001}}}}]}
    with pytest.raises(BadInput, match="from 1 to 10000"):
        parse(big, "w")
