"""sweep.md and sweep.html: one table over every chunking × arm × class, and the decision rule's verdicts.

The comparable measures (⇄) lead; the passage measures follow, marked † — their values move with the number of
relevant passages a cut makes, so they orient within a cell and are not read across cells.
"""

from __future__ import annotations

from collections.abc import Sequence

from turnbench.render.html import _page, _table, esc
from turnbench.render.markdown import COMPARABLE, fmt4, table
from turnbench.results.sweep import Rule, Sweep

NOT_COMPARABLE = "†"


def _rows(swept: Sweep) -> tuple[list[str], list[list[str]]]:
    comparable, passage = swept.comparable, swept.not_comparable
    header = ["max words", "overlap", "passages", "arm", "class", "judged",
              *(f"{m} {COMPARABLE}" for m in comparable), f"entry |Δ| s {COMPARABLE}",
              *(f"{m} {NOT_COMPARABLE}" for m in passage)]
    rows = []
    for cell in swept.cells:
        for arm, a in cell.arms.items():
            for cls, means in a.means.items():
                rows.append([str(cell.max_words), str(cell.overlap), str(cell.passages), arm, cls,
                             str(a.judged_passages), *(fmt4(means.get(m)) for m in comparable),
                             fmt4(a.entry_median_s.get(cls)), *(fmt4(means.get(m)) for m in passage)])
    return header, rows


def _facts(swept: Sweep) -> list[str]:
    return [f"corpus `{swept.corpus_id}` (sha256 `{swept.corpus_sha256[:12]}`) · max words "
            f"{', '.join(map(str, swept.max_words))} × overlap {', '.join(map(str, swept.overlaps))} · arms "
            f"{', '.join(swept.arms)} · every cell judged against the same turn gold",
            f"{COMPARABLE} comparable across chunkings (gold words, seconds from the gold start); {NOT_COMPARABLE} "
            "counts passages, so it moves with the cut: read it within a cell, not across cells. `judged`: the "
            "passages the cut makes relevant (grade ≥ 1) over all queries."]


def _verdict_lines(rule: Rule) -> list[str]:
    lines = [f"Decision rule, fixed before the numbers: **{rule.text}** ({rule.reads})."]
    for c in rule.comparisons:
        state = ("stable: holds in every cell" if c.stable and c.holds_in == len(c.cells) else
                 "stable: fails in every cell" if c.stable else
                 f"NOT stable across the grid: holds in {c.holds_in} of {len(c.cells)} cells")
        lines.append(f"- `{c.candidate}` against `{c.baseline}`: {state}")
        for cell in c.cells:
            why = "; ".join(cell.failed)
            lines.append(f"  - {cell.cell}: {'holds' if cell.holds else 'fails — ' + why}")
    return lines


def sweep_md(swept: Sweep) -> str:
    header, rows = _rows(swept)
    lines = ["# turnbench sweep", "", *(f"{f}\n" for f in _facts(swept)),
             *table(header, rows, "rrrll" + "r" * (len(header) - 5)), ""]
    if swept.rule is not None:
        lines += [*_verdict_lines(swept.rule), "", "Sign of Δ across the grid (+ every cell, − every cell, mixed):",
                  "", *(f"- {x}" for x in sign_table(swept.rule)), ""]
    return "\n".join(lines)


def sweep_html(swept: Sweep) -> bytes:
    header, rows = _rows(swept)
    body = [f"<h1>turnbench sweep: {esc(swept.corpus_id)}</h1>\n",
            *(f"<div class=meta>{esc(f)}</div>\n" for f in _facts(swept)),
            _table(header, [[esc(v) for v in r] for r in rows], 0)]
    if swept.rule is not None:
        items = _verdict_lines(swept.rule)
        body.append(f"<h2>Decision rule</h2>\n<p>{esc(items[0])}</p>\n<ul>"
                    + "".join(f"<li>{esc(x.strip().lstrip('- '))}</li>" for x in items[1:]) + "</ul>\n")
    return _page(f"turnbench sweep: {swept.corpus_id}", body)


def sign_table(rule: Rule) -> Sequence[str]:
    """Per comparison, the sign of each (class, measure)'s Δ across the grid ('mixed' where it changes)."""
    lines = []
    for c in rule.comparisons:
        for cls, signs in c.signs.items():
            lines.append(f"{c.candidate} vs {c.baseline} · {cls}: "
                         + ", ".join(f"{m} {s}" for m, s in signs.items()))
    return lines
