"""The report's plots as inline SVG, byte-identical from run to run (matplotlib, pinned).

What makes the bytes stable: no pyplot state (a bare ``Figure`` on the SVG canvas), text kept as text
(``svg.fonttype = none``, so no glyph tables), a fixed ``svg.hashsalt`` and root id per plot (so element ids
are the same every run and never collide between the plots of one page), no date in the metadata, and the
XML prologue dropped because the SVG is inlined into HTML.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BETTER_COLOUR = "#1a7f37"
WORSE_COLOUR = "#cf222e"
SAME_COLOUR = "#57606a"
SEED_COLOUR = "#8250df"
_RC: dict[str, Any] = {"svg.fonttype": "none", "font.family": "DejaVu Sans", "font.size": 8.0, "axes.linewidth": 0.6,
       "axes.edgecolor": "#57606a", "xtick.major.width": 0.6, "ytick.major.width": 0.6}


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


def warm() -> None:
    """Import what drawing needs (matplotlib's figure and SVG backend: most of a second on a cold start), so a
    process that will draw can pay for it while it waits for something else."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: F401
    from matplotlib.figure import Figure  # noqa: F401


def _svg(fig: Any, name: str) -> str:
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buf = io.StringIO()
    FigureCanvasSVG(fig).print_svg(buf, metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):].strip() + "\n"


def _context(name: str) -> Any:
    import matplotlib

    rc: dict[str, Any] = {**_RC, "svg.hashsalt": f"turnbench-{name}", "svg.id": f"plot-{name}"}
    return matplotlib.rc_context(rc)  # type: ignore[arg-type]


def forest(rows: Sequence[ForestRow], title: str) -> str:
    """Δ with its 95% interval per row, coloured by verdict; per-seed deltas as small marks when pooled."""
    from matplotlib.figure import Figure

    with _context("forest"):
        fig = Figure(figsize=(7.2, 0.5 + 0.19 * max(1, len(rows))))
        ax = fig.add_subplot()
        ys = list(range(len(rows)))[::-1]
        for y, r in zip(ys, rows, strict=True):
            c = _colour(r.verdict)
            ax.plot([r.low, r.high], [y, y], color=c, linewidth=1.6, solid_capstyle="butt")
            ax.plot([r.delta], [y], marker="o", markersize=3.6, color=c)
            if r.seeds:
                ax.plot(list(r.seeds), [y] * len(r.seeds), linestyle="none", marker="|", markersize=6,
                        color=SEED_COLOUR)
        ax.axvline(0.0, color="#8c959f", linewidth=0.8, linestyle="--")
        ax.set_yticks(ys, [r.label for r in rows])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel("Δ candidate − baseline (95% bootstrap interval; colour: Holm-adjusted verdict)")
        ax.set_title(title, loc="left", fontsize=9)
        ax.grid(axis="x", color="#d0d7de", linewidth=0.5)
        fig.subplots_adjust(left=0.27, right=0.98, top=1 - 0.35 / fig.get_figheight(),
                            bottom=0.45 / fig.get_figheight())
        return _svg(fig, "forest")


def strips(panels: Mapping[str, Sequence[float]], ylabel: str, name: str, *, signed: bool = True) -> str:
    """One small panel per class: its per-query values sorted ascending (wins above zero, losses below)."""
    from matplotlib.figure import Figure

    with _context(name):
        n = max(1, len(panels))
        fig = Figure(figsize=(min(7.2, 1.9 * n + 0.6), 2.0))
        axes = fig.subplots(1, n, sharey=True, squeeze=False)[0]
        for ax, (label, values) in zip(axes, panels.items(), strict=False):
            ys = sorted(values)
            xs = [(i + 0.5) / len(ys) for i in range(len(ys))] if ys else []
            if signed:
                ax.fill_between(xs, 0, ys, where=[v > 0 for v in ys], step="mid", color=BETTER_COLOUR,
                                linewidth=0)
                ax.fill_between(xs, 0, ys, where=[v < 0 for v in ys], step="mid", color=WORSE_COLOUR,
                                linewidth=0)
                ax.axhline(0.0, color="#8c959f", linewidth=0.6)
            else:
                ax.fill_between(xs, 0, ys, step="mid", color=SAME_COLOUR, linewidth=0)
            ax.set_xlim(0, 1)
            ax.set_xticks([])
            ax.set_title(f"{label} (n={len(ys)})", fontsize=8)
        axes[0].set_ylabel(ylabel)
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        fig.subplots_adjust(left=0.09, right=0.99, top=0.86, bottom=0.06, wspace=0.08)
        return _svg(fig, name)
