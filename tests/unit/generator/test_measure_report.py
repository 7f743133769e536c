"""The self-measure's tables (turnbench/generator/measure_report.py): what each table shows and how an
absent figure looks, on stats built by hand."""

from __future__ import annotations

from rich.console import Console

from turnbench.generator.measure_report import against_columns, render_against, render_surfaces

ROW = {"n": 2, "recall_at_1": 0.5, "recall_at_10": 1.0, "gold_share_at_r": 0.5, "content_recall_at_1": 0.0,
       "content_recall_at_10": 0.5, "content_gold_share_at_r": 0.0,
       "overlap": {"n": 2, "0": 1, "1": 0, "2": 0, "3+": 1, "median": 2.0}}
REALISM = {"meetings": 3, "words_per_meeting": 120.0, "speakers_per_meeting": 4.0, "turn_words_p50": 7,
           "backchannel_share": 0.25, "overlap_share": None, "queries": 2, "query_words": 6.0,
           "query_gold_overlap": 2.0, "query_gold_overlap_at_most_1": 0.5}


def _text(table) -> str:
    console = Console(width=250, record=True)
    console.print(table)
    return console.export_text()


def test_surfaces_table_shows_content_only_figures_and_the_overlap_spread():
    stats = {"by_class": {"all": ROW}, "by_surface": {"lookup": {"paraphrase": ROW}}}
    text = _text(render_surfaces(stats))
    assert "paraphrase" in text and "1/0/0/1" in text and "content R@1" in text


def test_against_has_a_column_per_corpus_and_domain_and_a_dash_for_what_cannot_be_measured():
    mine = {"corpus": {"id": "mine"}, "by_class": {"all": ROW, "lookup": ROW}, "realism": {"all": REALISM}}
    theirs = {"corpus": {"id": "theirs"}, "by_class": {"all": ROW}, "by_domain": {"product": {"lookup": ROW}},
              "realism": {"all": REALISM, "by_domain": {"product": dict(REALISM, overlap_share=0.125)}}}
    assert [h for h, _, _ in against_columns(theirs)] == ["theirs\nall", "theirs\nproduct"]
    lines = _text(render_against([mine, theirs])).splitlines()

    def cells(label: str) -> list[str]:
        return [c.strip() for c in next(line for line in lines if label in line).split("│")][2:-1]

    assert cells("overlapping speech share") == ["–", "–", "0.125"]
    assert cells("BM25 R@1 lookup") == ["0.500", "–", "0.500"]  # "theirs" has no lookup row over all domains
    assert cells("turn words p50") == ["7", "7", "7"] and cells("turn words p90") == ["–", "–", "–"]
