"""The report's plots as inline SVG, written directly: byte-identical from run to run by construction.

Each plot is a pure function of its numbers: coordinates are written with two decimals, tick values with as many as
their step needs, text is kept as text (escaped), and there are no element ids, so two plots on one page never
collide. Drawing needs no plotting library (importing one was most of a small score's time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

BETTER_COLOUR = "#1a7f37"
WORSE_COLOUR = "#cf222e"
SAME_COLOUR = "#57606a"
SEED_COLOUR = "#8250df"
AXIS_COLOUR = "#57606a"
ZERO_COLOUR = "#8c959f"
FONT = "DejaVu Sans, Verdana, sans-serif"
PX = 72  # pixels per inch: the sizes below are in inches, as the page's layout was designed
CHAR_PX = 4.6  # the width of an average character at 8 px, for the room a label needs


@dataclass(frozen=True)
class ForestRow:
    label: str
    delta: float
    low: float
    high: float
    verdict: str  # "better" | "worse" | anything else
    seeds: tuple[float, ...] = ()  # per-seed deltas, when pooled


def _colour(verdict: str) -> str:
    return {"better": BETTER_COLOUR, "worse": WORSE_COLOUR}.get(verdict, SAME_COLOUR)


def _n(x: float) -> str:
    """A coordinate: two decimals, no negative zero."""
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text


def ticks(lo: float, hi: float, most: int = 6) -> tuple[list[float], int]:
    """Round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 times a power of ten, at most ``most`` of them)
    and the decimals their labels need."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        raise ValueError(f"no range to tick: [{lo}, {hi}]")
    raw = (hi - lo) / max(1, most - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for mantissa in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = mantissa * power
        first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
        if last - first + 1 <= most:
            break
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if mantissa == 2.5 else 0)
    return [round(k * step, decimals + 2) for k in range(first, last + 1)], decimals


def _label(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    if text.lstrip("-").strip("0.") == "":
        return f"{0:.{decimals}f}"
    return text.replace("-", "\u2212")  # a typographic minus, as plots print it


def _text(x: float, y: float, s: str, *, size: float = 8, anchor: str = "start", rotate: bool = False,
          colour: str = "#1f2328") -> str:
    turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size:g}" text-anchor="{anchor}" fill="{colour}"{turn}>'
            f"{escape(s)}</text>")


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
            f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="{FONT}" role="img" aria-label="{escape(label)}">\n'
            + "\n".join(body) + "\n</svg>\n")


def _span(values: Sequence[float], *, pad: float = 0.0, signed: bool = True) -> tuple[float, float]:
    """The range [lo, hi] the values and zero need, widened by ``pad`` of it on each side; never empty (nothing but
    zeros: [-1, 1] for differences, [0, 1] for values)."""
    finite = [v for v in values if math.isfinite(v)]
    lo, hi = min([0.0, *finite]), max([0.0, *finite])
    if hi - lo <= 0:
        lo, hi = (lo - 1.0, hi + 1.0) if signed else (lo, lo + 1.0)
    room = (hi - lo) * pad
    return lo - room, hi + room


def forest(rows: Sequence[ForestRow], title: str) -> str:
    """Δ with its 95% interval per row, coloured by verdict; per-seed deltas as small marks when pooled."""
    if not all(math.isfinite(x) for r in rows for x in (r.low, r.high, r.delta, *r.seeds)):
        raise ValueError("a difference or interval to plot is not a finite number")
    width, height = 7.2 * PX, (0.5 + 0.19 * max(1, len(rows))) * PX
    left = min(0.45 * width, 12 + CHAR_PX * max((len(r.label) for r in rows), default=4))
    right, top, bottom = width - 10, 20.0, height - 28
    lo, hi = _span([x for r in rows for x in (r.low, r.high, r.delta, *r.seeds)], pad=0.05)
    xs, decimals = ticks(lo, hi)
    lo, hi = min(lo, xs[0]), max(hi, xs[-1])

    def x_at(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (right - left)

    def y_at(i: int) -> float:  # the first row at the top
        return top + (i + 0.5) * (bottom - top) / max(1, len(rows))

    body = [_text(left, 13, title, size=9),
            f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(right - left)}" height="{_n(bottom - top)}" '
            f'fill="none" stroke="{AXIS_COLOUR}" stroke-width="0.6"/>']
    for t in xs:
        x = x_at(t)
        body.append(f'<line x1="{_n(x)}" y1="{_n(bottom)}" x2="{_n(x)}" y2="{_n(bottom + 3)}" '
                    f'stroke="{AXIS_COLOUR}" stroke-width="0.6"/>')
        body.append(_text(x, bottom + 12, _label(t, decimals), anchor="middle"))
    zero = x_at(0.0)
    body.append(f'<line x1="{_n(zero)}" y1="{_n(top)}" x2="{_n(zero)}" y2="{_n(bottom)}" stroke="{ZERO_COLOUR}" '
                f'stroke-width="0.8" stroke-dasharray="3 2"/>')
    for i, r in enumerate(rows):
        y, c = y_at(i), _colour(r.verdict)
        body.append(_text(left - 4, y + 3, r.label, anchor="end"))
        body.append(f'<line x1="{_n(x_at(r.low))}" y1="{_n(y)}" x2="{_n(x_at(r.high))}" y2="{_n(y)}" '
                    f'stroke="{c}" stroke-width="1.6"/>')
        body.append(f'<circle cx="{_n(x_at(r.delta))}" cy="{_n(y)}" r="2.4" fill="{c}"/>')
        for s in r.seeds:
            body.append(f'<line x1="{_n(x_at(s))}" y1="{_n(y - 3)}" x2="{_n(x_at(s))}" y2="{_n(y + 3)}" '
                        f'stroke="{SEED_COLOUR}" stroke-width="0.8"/>')
    body.append(_text((left + right) / 2, height - 4, "Δ candidate − baseline (95% bootstrap interval; colour: "
                      "Holm-adjusted verdict)", anchor="middle"))
    return _svg(width, height, body, title)


def _steps(ys: Sequence[float], y_at: Callable[[float], float], x0: float, x1: float, base: float) -> str:
    """The outline of bars of heights ``ys`` (sorted) side by side from ``x0`` to ``x1`` on the line ``base``, as one
    path: neighbours of one height share one edge, so a class of ten thousand queries is a few hundred points."""
    n = len(ys)
    points = [f"M{_n(x0)} {_n(base)}"]
    i = 0
    while i < n:
        j = i
        while j + 1 < n and ys[j + 1] == ys[i]:
            j += 1
        y = y_at(ys[i])
        points.append(f"L{_n(x0 + (x1 - x0) * i / n)} {_n(y)}L{_n(x0 + (x1 - x0) * (j + 1) / n)} {_n(y)}")
        i = j + 1
    points.append(f"L{_n(x1)} {_n(base)}Z")
    return "".join(points)


def strips(panels: Mapping[str, Sequence[float]], ylabel: str, name: str, *, signed: bool = True) -> str:
    """One small panel per class: its per-query values sorted ascending (wins above zero, losses below)."""
    if not all(math.isfinite(v) for values in panels.values() for v in values):
        raise ValueError("a per-query value to plot is not a finite number")
    n = max(1, len(panels))
    width, height = min(7.2, 1.9 * n + 0.6) * PX, 2.0 * PX
    left, right, top, bottom, gap = 0.09 * width + 14, width - 0.01 * width, 0.14 * height + 4, height - 8, 6.0
    lo, hi = _span([v for values in panels.values() for v in values], signed=signed)
    ys_ticks, decimals = ticks(lo, hi, 5)
    lo, hi = min(lo, ys_ticks[0]), max(hi, ys_ticks[-1])
    panel_w = (right - left - gap * (n - 1)) / n

    def y_at(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * (bottom - top)

    body = [_text(10, (top + bottom) / 2, ylabel, anchor="middle", rotate=True)]
    for t in ys_ticks:
        body.append(f'<line x1="{_n(left - 3)}" y1="{_n(y_at(t))}" x2="{_n(left)}" y2="{_n(y_at(t))}" '
                    f'stroke="{AXIS_COLOUR}" stroke-width="0.6"/>')
        body.append(_text(left - 5, y_at(t) + 3, _label(t, decimals), anchor="end"))
    zero = y_at(0.0)
    for k, (label, values) in enumerate(panels.items()):
        x0 = left + k * (panel_w + gap)
        x1 = x0 + panel_w
        ys = sorted(values)
        body.append(_text((x0 + x1) / 2, top - 5, f"{label} (n={len(ys)})", anchor="middle"))
        if signed:
            below = [v for v in ys if v < 0]
            above = [v for v in ys if v > 0]
            if below:
                body.append(f'<path d="{_steps(below, y_at, x0, x0 + panel_w * len(below) / len(ys), zero)}"'
                            f' fill="{WORSE_COLOUR}"/>')
            if above:
                start = x0 + panel_w * (len(ys) - len(above)) / len(ys)
                body.append(f'<path d="{_steps(above, y_at, start, x1, zero)}" fill="{BETTER_COLOUR}"/>')
            body.append(f'<line x1="{_n(x0)}" y1="{_n(zero)}" x2="{_n(x1)}" y2="{_n(zero)}" stroke="{ZERO_COLOUR}" '
                        'stroke-width="0.6"/>')
        elif ys:
            body.append(f'<path d="{_steps(ys, y_at, x0, x1, zero)}" fill="{SAME_COLOUR}"/>')
        body.append(f'<rect x="{_n(x0)}" y="{_n(top)}" width="{_n(panel_w)}" height="{_n(bottom - top)}" '
                    f'fill="none" stroke="{AXIS_COLOUR}" stroke-width="0.6"/>')
    return _svg(width, height, body, f"{ylabel}: {name}")
