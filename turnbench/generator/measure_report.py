"""The self-measure's tables for people: per class (and domain), per class and surface, and the realism
figures of several corpora side by side. Presentation only; the figures come from ``measure`` and
``realism`` and are in ``stats.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from turnbench.corpus.records import RANKED_CLASSES
from turnbench.generator.measure import ALL, OVERLAP_BUCKETS
from turnbench.generator.realism import QUANTILES

if TYPE_CHECKING:
    from rich.table import Table

TABLE_COLUMNS = (
    ("n", "n"),
    ("R@1", "recall_at_1"),
    ("R@10", "recall_at_10"),
    ("median rank", "median_first_gold_rank"),
    ("near-dup count", "near_dup_mean_count"),
    ("near-dup share", "near_dup_mean_share"),
    ("gold unmatched", "gold_unmatched"),
)


def table_rows(stats: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(domain, class, row) in print order: the whole corpus first, then each domain."""
    out = [(ALL, c, row) for c, row in stats["by_class"].items()]
    for dom, classes in stats.get("by_domain", {}).items():
        out.extend((dom, c, row) for c, row in classes.items())
    order = {c: i for i, c in enumerate((*RANKED_CLASSES, ALL))}
    return sorted(out, key=lambda t: (t[0] != ALL, t[0], order.get(t[1], 99), t[1]))


def render(stats: Mapping[str, Any]) -> Table:
    """A rich Table of the stats; the caption names the BM25 implementation and its parameters."""
    from rich.table import Table

    b = stats["bm25"]
    caption = (
        f"{b['implementation']} ({b['distribution']} {b['version']}) k1={b['k1']} b={b['b']} "
        f"epsilon={b['epsilon']}; tokenizer {b['tokenizer']['name']} /{b['tokenizer']['pattern']}/ casefolded; "
        f"meetings as documents (title + turns); near-dup = other meetings >= "
        f"{stats['near_dup_ratio']:g} x best gold score; ties by meeting id"
    )
    title = f"self-measure: {stats.get('corpus', {}).get('id', '(records)')} — {stats['meetings']} meetings"
    table = Table(title=title, caption=caption)
    table.add_column("domain")
    table.add_column("class")
    for head, _ in TABLE_COLUMNS:
        table.add_column(head, justify="right")
    for dom, cls, row in table_rows(stats):
        cells = []
        for _, key in TABLE_COLUMNS:
            v = row.get(key)
            if v is None:
                cells.append("–")
            elif isinstance(v, float):
                cells.append(f"{v:.1f}" if key == "median_first_gold_rank" else f"{v:.3f}")
            else:
                cells.append(str(v))
        table.add_row(dom, cls, *cells)
    return table


SURFACE_COLUMNS = (
    ("n", "n"),
    ("R@1", "recall_at_1"),
    ("R@10", "recall_at_10"),
    ("gold@r", "gold_share_at_r"),
    ("content R@1", "content_recall_at_1"),
    ("content R@10", "content_recall_at_10"),
    ("content gold@r", "content_gold_share_at_r"),
)


def render_surfaces(stats: Mapping[str, Any]) -> Table:
    """Per class and surface: BM25 with and without titles, and the query–evidence overlap."""
    from rich.table import Table

    table = Table(title="by surface: BM25 with titles, with turns only (content), and query–evidence overlap",
                  caption=("gold@r: share of gold meetings in the top r (r = number of gold meetings); overlap: "
                           "queries sharing 0/1/2/3+ content words with their answer (else gold) turns, median"))
    table.add_column("class")
    table.add_column("surface")
    for head, _ in SURFACE_COLUMNS:
        table.add_column(head, justify="right")
    table.add_column("overlap 0/1/2/3+", justify="right")
    table.add_column("median", justify="right")
    for cls in (*RANKED_CLASSES, ALL):
        surfaces = stats["by_surface"].get(cls, {}) if cls != ALL else {"(all)": stats["by_class"][ALL]}
        for surface, row in surfaces.items():
            cells = [str(row[k]) if isinstance(row.get(k), int) else f"{row.get(k, 0.0):.3f}"
                     for _, k in SURFACE_COLUMNS]
            ov = row.get("overlap")
            spread = "/".join(str(ov[b]) for b in OVERLAP_BUCKETS) if ov else "–"
            table.add_row(cls, surface, *cells, spread, f"{ov['median']:g}" if ov else "–")
    return table


def render_overlap(all_stats: Sequence[Mapping[str, Any]]) -> Table:
    """The distance of each corpus's questions from their evidence, side by side: per class, the share of a
    question's words its evidence holds (mean, share 0, deciles)."""
    from rich.table import Table

    table = Table(title="question–evidence overlap share (words of the question its evidence holds), by corpus",
                  caption="deciles: 0%, 10%, ..., 100% (nearest rank); calibration: QMSum specific queries")
    for head in ("corpus", "class", "n", "mean", "share 0", "deciles"):
        table.add_column(head, justify="left" if head in ("corpus", "class", "deciles") else "right")
    for stats in all_stats:
        name = stats.get("corpus", {}).get("id", "(records)")
        for cls, row in stats["by_class"].items():
            ov = row.get("overlap") if isinstance(row, Mapping) else None
            if not ov or "share_mean" not in ov:
                continue
            table.add_row(name, cls, str(ov["n"]), f"{ov['share_mean']:.3f}", f"{ov['share_zero']:.3f}",
                          " ".join(f"{d:.2f}" for d in ov["share_deciles"]))
    return table


def render_cosine(stats: Mapping[str, Any]) -> Table:
    """Per surface: the encoder's cosine from a question to its evidence against random turns, and the sign test."""
    from rich.table import Table

    rows = stats.get("surface_cosine", {})
    d = rows.get("definition", {})
    table = Table(title=f"answerable by meaning: {d.get('encoder', '?')} cosine, question to evidence vs random turns",
                  caption=d.get("test", ""))
    for head in ("class", "surface", "queries", "n", "wins", "p", "gold", "random", "beats 20", "status"):
        table.add_column(head, justify="left" if head in ("class", "surface", "status") else "right")
    for r in rows.get("surfaces", []):
        table.add_row(r["class"], r["surface"], str(r["queries"]), str(r["n"]), str(r["wins"]),
                      "–" if r["p"] is None else f"{r['p']:.2g}", f"{r['gold_mean']:.3f}", f"{r['random_mean']:.3f}",
                      f"{r['beats_20']:.2f}", r["status"])
    return table


# (label, where the figure is: "realism" figures or a self-measure class row, key, format)
AGAINST_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("meetings", "realism", "meetings", "d"),
    ("words / meeting (median)", "realism", "words_per_meeting", ".0f"),
    ("speakers / meeting (median)", "realism", "speakers_per_meeting", ".0f"),
    *((f"turn words p{q}", "realism", f"turn_words_p{q}", "d") for q in QUANTILES),
    ("backchannel share of turns", "realism", "backchannel_share", ".3f"),
    ("overlapping speech share", "realism", "overlap_share", ".3f"),
    ("ranked queries", "realism", "queries", "d"),
    ("query words (median)", "realism", "query_words", ".0f"),
    ("query–gold overlap (median words)", "realism", "query_gold_overlap", ".0f"),
    ("query–gold overlap ≤ 1 (share)", "realism", "query_gold_overlap_at_most_1", ".3f"),
    ("BM25 R@1 lookup", "lookup", "recall_at_1", ".3f"),
    ("BM25 R@10 lookup", "lookup", "recall_at_10", ".3f"),
    ("BM25 R@1 all ranked", ALL, "recall_at_1", ".3f"),
    ("BM25 R@10 all ranked", ALL, "recall_at_10", ".3f"),
)


def against_columns(stats: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    """(heading, realism figures, self-measure rows by class) for the whole corpus and each of its domains."""
    name = stats.get("corpus", {}).get("id", "(records)")
    realism = stats["realism"]
    out = [(f"{name}\n{ALL}", realism[ALL], stats["by_class"])]
    for dom in sorted(realism.get("by_domain", {})):
        out.append((f"{name}\n{dom}", realism["by_domain"][dom], stats.get("by_domain", {}).get(dom, {})))
    return out


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return "–"
    return str(int(value)) if fmt == "d" else format(value, fmt)


def render_against(all_stats: Sequence[Mapping[str, Any]]) -> Table:
    """The realism figures of every corpus side by side, a column per corpus and per domain."""
    from rich.table import Table

    table = Table(title="realism: the corpora side by side (definitions: stats.json realism_definitions)",
                  caption="– : not measurable here (no timestamps) or no such queries")
    table.add_column("figure", no_wrap=True)
    cols = [c for s in all_stats for c in against_columns(s)]
    for heading, _, _ in cols:
        table.add_column(heading, justify="right", overflow="fold")
    for label, where, key, fmt in AGAINST_ROWS:
        cells = []
        for _, realism, rows in cols:
            source = realism if where == "realism" else rows.get(where, {})
            cells.append(_cell(source.get(key), fmt))
        table.add_row(label, *cells)
    return table
