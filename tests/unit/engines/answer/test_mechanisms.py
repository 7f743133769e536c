"""Pure parts of the reference answerer's mechanisms: escaping, titles, names, months, field names."""

import datetime as dt

from turnbench.engines.answer.mechanisms import (
    MEETING_FIELD,
    PHRASE_FIELD,
    are_literal,
    month_bounds,
    resolve_name,
    series_of,
    word_bounded,
)
from turnbench.loading.index import index_mappings


def test_are_literal_escapes_every_non_alphanumeric_and_nothing_else():
    assert are_literal("cedar lantern") == "cedar lantern"
    assert are_literal("50%  a_b") == r"50\% a\_b"
    assert are_literal(r"c++ (beta) [x] $y^ a|b .*? {2} back\slash") == (
        r"c\+\+ \(beta\) \[x\] \$y\^ a\|b \.\*\?"
        r" \{2\} back\\slash")
    assert are_literal("o'brien \"q\"") == "o\\'brien \\\"q\\\""
    # letters outside ASCII are alphanumeric: escaping them would make an unknown ARE escape
    assert are_literal("café façade") == "café façade"


def test_word_bounded_uses_lookarounds_so_edge_punctuation_still_matches():
    assert word_bounded("x.") == r"(?<![[:alnum:]_])x\.(?![[:alnum:]_])"


def test_series_from_titles():
    assert series_of("Payments \u2014 design review #12") == ("Payments", "design review")
    assert series_of("Payments - design review #12") is None  # a hyphen is not the title convention
    assert series_of("Quarterly all-hands") is None


def test_resolve_name_casefolds_and_drops_article_and_suffix():
    teams = ["Payments", "Search", "Platform"]
    assert resolve_name("the payments", teams) == "Payments"
    assert resolve_name("PAYMENTS team", teams, drop_suffix=" team") == "Payments"
    assert resolve_name("Pay", teams) is None
    assert resolve_name("design  Review", ["design review", "weekly sync"]) == "design review"


def test_month_bounds():
    assert month_bounds(2026, 3) == (dt.date(2026, 3, 1), dt.date(2026, 4, 1))
    assert month_bounds(2026, 12) == (dt.date(2026, 12, 1), dt.date(2027, 1, 1))


def test_field_names_match_the_index_mapping():
    props = index_mappings()["properties"]
    field, sub = PHRASE_FIELD.split(".")
    assert props[field]["fields"][sub]["analyzer"] == "standard"  # no stemming: a plural is another word
    assert props[MEETING_FIELD]["type"] == "keyword"


def test_split_series_finds_the_one_team_kind_split():
    from turnbench.engines.answer.mechanisms import split_series

    series = [("Payments", "design review"), ("Payments", "weekly sync"), ("Search", "design review")]
    assert split_series("Payments design review", series) == ("Payments", "design review")
    assert split_series("the search Design  Review", series) == ("Search", "design review")
    assert split_series("Payments team weekly sync", series) == ("Payments", "weekly sync")
    assert split_series("Payments planning", series) is None
    assert split_series("design review", series) is None
