"""The contracts shared by the generator and its validator (turnbench/generator/contracts.py), by hand."""

from __future__ import annotations

from turnbench.generator.contracts import (
    contains_tokens,
    deferral_pattern,
    series_of_title,
    session_title,
    tokens,
    word_count,
)


def test_tokens_and_contracts_by_hand():
    assert tokens("Let us keep the Cedar-Lantern, OK?") == ["let", "us", "keep", "the", "cedar", "lantern", "ok"]
    assert contains_tokens(tokens("the cedar lantern and cedar lanterns"), ("cedar", "lantern")) == 1
    assert contains_tokens(tokens("lantern cedar; cedar pilot lantern"), ("cedar", "lantern")) == 0
    pat = deferral_pattern("billing migration")
    assert len(pat.findall("Defer the billing migration. We defer the billing migration, again.")) == 2
    for near in ("defer the billing migrations", "defer the billing pilot migration", "deferred the billing migration",
                 "defer the billing dashboard", "the billing migration is on track"):
        assert pat.search(near) is None, near


def test_an_empty_needle_is_never_contained_and_words_are_whitespace_runs():
    assert contains_tokens(["a", "b"], ()) == 0
    assert contains_tokens(("a", "a", "a"), ("a", "a")) == 2  # overlapping runs each count
    assert word_count("  Defer the  billing-migration. ") == 3


def test_session_titles_name_their_series_and_nothing_else_does():
    title = session_title("Payments", "design review", 12)
    assert title == "Payments — design review #12"
    assert series_of_title(title) == ("Payments", "design review")
    for other in ("Payments design review #12", "Payments — design review", "ES2002a", ""):
        assert series_of_title(other) is None, other
