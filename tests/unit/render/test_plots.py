"""The report's plots: SVG written directly, where each mark stands where its number says, the same bytes every time."""

from __future__ import annotations

import math
import re

import pytest

from turnbench.render import plots as P


@pytest.mark.parametrize(("lo", "hi", "most", "want"), [
    (0.0, 1.0, 6, ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], 1)),
    (0.0, 1.0, 5, ([0.0, 0.25, 0.5, 0.75, 1.0], 2)),
    (-0.37, 0.52, 6, ([-0.2, 0.0, 0.2, 0.4], 1)),
    (0.0, 0.03, 6, ([0.0, 0.01, 0.02, 0.03], 2)),
    (-2.5, 7.3, 6, ([-2.0, 0.0, 2.0, 4.0, 6.0], 0)),
    (0.0, 40.0, 6, ([0.0, 10.0, 20.0, 30.0, 40.0], 0)),
])
def test_ticks_are_round_steps_inside_the_range(lo, hi, most, want):
    assert P.ticks(lo, hi, most) == want


@pytest.mark.parametrize(("lo", "hi"), [(1.0, 1.0), (2.0, 1.0), (0.0, math.inf), (math.nan, 1.0)])
def test_no_range_has_no_ticks(lo, hi):
    with pytest.raises(ValueError, match="no range to tick"):
        P.ticks(lo, hi)


def _ys(path: str) -> list[float]:
    return [float(y) for y in re.findall(r"[ML][-0-9.]+ ([-0-9.]+)", path)]


def test_strips_draw_each_value_at_its_height_and_equal_values_as_one_step():
    svg = P.strips({"lookup": [1.0, 0.0, 0.5, 0.5], "multi": [0.25]}, "value per query", "values", signed=False)
    assert svg == P.strips({"lookup": [1.0, 0.0, 0.5, 0.5], "multi": [0.25]}, "value per query", "values",
                           signed=False)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and svg.endswith("</svg>\n")
    assert "lookup (n=4)" in svg and "multi (n=1)" in svg and " id=" not in svg
    paths = re.findall(r'<path d="([^"]+)" fill="#57606a"/>', svg)
    assert len(paths) == 2
    ticks = {float(v): float(y) - 3 for y, v in re.findall(r'<text x="[-0-9.]+" y="([-0-9.]+)" font-size="8" '
                                                             r'text-anchor="end" fill="#1f2328">([0-9.]+)</text>', svg)}
    assert sorted(ticks) == [0.0, 0.25, 0.5, 0.75, 1.0]
    # lookup: from the baseline, the sorted values 0, 0.5 (twice: one step), 1, back to the baseline
    base = ticks[0.0]
    assert _ys(paths[0]) == [base, ticks[0.0], ticks[0.0], ticks[0.5], ticks[0.5], ticks[1.0], ticks[1.0], base]
    assert _ys(paths[1]) == [base, ticks[0.25], ticks[0.25], base]


def test_signed_strips_draw_losses_red_below_zero_and_wins_green_above():
    svg = P.strips({"lookup": [-0.5, 0.0, 0.25, -0.25, 0.5]}, "Δ per query", "strips")
    red = re.findall(r'<path d="([^"]+)" fill="#cf222e"/>', svg)
    green = re.findall(r'<path d="([^"]+)" fill="#1a7f37"/>', svg)
    assert len(red) == len(green) == 1
    zero = float(re.search(r'<line x1="[-0-9.]+" y1="([-0-9.]+)" x2="[-0-9.]+" y2="\1" stroke="#8c959f"', svg)[1])
    assert all(y >= zero for y in _ys(red[0])) and all(y <= zero for y in _ys(green[0]))
    assert len(_ys(red[0])) == 2 + 2 * 2 and len(_ys(green[0])) == 2 + 2 * 2  # two losses, two wins, one tie
    assert P.strips({"all": [0.0, 0.0]}, "Δ per query", "strips").count("<path") == 0  # no win, no loss


def test_forest_marks_sit_where_their_numbers_say_and_labels_are_escaped():
    rows = [P.ForestRow("lookup <nDCG@10> & co", 0.05, -0.01, 0.1, "better", (0.02, 0.07)),
            P.ForestRow("all R@10", -0.02, -0.05, 0.0, "worse")]
    svg = P.forest(rows, "cand − base")
    assert svg == P.forest(rows, "cand − base")
    assert "lookup &lt;nDCG@10&gt; &amp; co" in svg and "<nDCG" not in svg
    ticks = {float(v.replace("\u2212", "-")): float(x) for x, v in re.findall(
        r'<text x="([-0-9.]+)" y="[-0-9.]+" font-size="8" text-anchor="middle" fill="#1f2328">([^<]+)</text>', svg)
        if re.fullmatch(r"[\u22120-9.]+", v)}
    assert sorted(ticks) == [-0.05, 0.0, 0.05, 0.1]

    def x_of(v: float) -> float:  # linear between the ticks
        return ticks[0.0] + v * (ticks[0.1] - ticks[0.0]) / 0.1

    circles = [(float(x), c) for x, c in re.findall(r'<circle cx="([-0-9.]+)" cy="[-0-9.]+" r="2.4" fill="(#\w+)"/>',
                                                    svg)]
    assert [c for _, c in circles] == [P.BETTER_COLOUR, P.WORSE_COLOUR]
    assert [round(x, 1) for x, _ in circles] == [round(x_of(0.05), 1), round(x_of(-0.02), 1)]
    seeds = re.findall(r'<line x1="([-0-9.]+)" y1="[-0-9.]+" x2="\1" y2="[-0-9.]+" stroke="#8250df"', svg)
    assert [round(float(x), 1) for x in seeds] == [round(x_of(0.02), 1), round(x_of(0.07), 1)]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_value_that_is_not_a_finite_number_is_refused_not_drawn(bad):
    with pytest.raises(ValueError, match="not a finite number"):
        P.strips({"lookup": [0.5, bad]}, "value", "values", signed=False)
    with pytest.raises(ValueError, match="not a finite number"):
        P.forest([P.ForestRow("x", bad, 0.0, 1.0, "better")], "t")
