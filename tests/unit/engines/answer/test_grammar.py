"""The reference answerer's intent parser: general frames, slots, and declining what it does not cover."""

import pytest

from turnbench.engines.answer.grammar import Declined, Intent, parse


@pytest.mark.parametrize("text, phrase", [
    ("How many meetings discussed the cedar lantern?", "cedar lantern"),
    ("how many meetings mentioned cedar lantern", "cedar lantern"),
    ("In how many meetings was the cedar lantern mentioned?", "cedar lantern"),
    ("In how many sessions did we talk about the cedar lantern?", "cedar lantern"),
    ("How many calls did the cedar lantern come up in?", "cedar lantern"),
    ("How many different meetings brought up the Cedar  Lantern ?", "Cedar Lantern"),
    ('How many meetings mentioned "the cedar lantern"?', "cedar lantern"),
])
def test_count_meetings_is_r3(text, phrase):
    assert parse(text) == Intent("R3", phrase=phrase)


@pytest.mark.parametrize("text", [
    "Which meetings mention the amber heron?",
    "What sessions discussed amber heron?",
    "List all meetings that mentioned the amber heron.",
    "Show me the meetings where the amber heron was discussed",
    "Name every meeting... ",  # no predicate: declined below, not here
][:4])
def test_which_meetings_is_r4(text):
    assert parse(text) == Intent("R4", phrase="amber heron")


@pytest.mark.parametrize("text", [
    "How many times in total did we defer the billing migration?",
    "How many times was the billing migration deferred?",
    "How often did the team defer the billing migration?",
    "How many times altogether was the billing migration deferred?",
])
def test_deferral_count_is_r5_with_the_deferral_pattern(text):
    assert parse(text) == Intent("R5", phrase="billing migration", pattern="defer the billing migration")


@pytest.mark.parametrize("text, team, kind", [
    ("Who attended the most design review sessions for the Payments team?", "Payments", "design review"),
    ("Who attended the most weekly sync meetings for Search?", "Search", "weekly sync"),
    ("Which person joined the most vendor review calls of the Billing team", "Billing", "vendor review"),
])
def test_attendance_is_r6(text, team, kind):
    assert parse(text) == Intent("R6", team=team, kind=kind)


@pytest.mark.parametrize("text", [
    "How many meetings in March 2026 discussed the cedar lantern?",
    "How many meetings discussed the cedar lantern in March 2026?",
    "How many meetings discussed the cedar lantern, during Mar 2026?",
    "In how many sessions during the month of march 2026 was the cedar lantern mentioned?",
])
def test_count_in_month_is_r7(text):
    intent = parse(text)
    assert intent == Intent("R7", phrase="cedar lantern", year=2026, month=3)
    assert intent.details() == {"rule": "R7", "phrase": "cedar lantern", "month": "2026-03"}


@pytest.mark.parametrize("text", [
    "",
    "cedar lantern — count of meetings?",
    "Did anyone bring up the cedar lantern?",
    "How many meetings last month discussed the cedar lantern?",
    "How many meetings did not mention the cedar lantern?",
    "How many meetings discussed the cedar lantern or the amber heron?",
    "How many meetings discussed the cedar lantern in March?",  # no year: which March?
    "How many meetings in 2026 March discussed the cedar lantern?",
    "How many meetings were there?",
    "Which meetings in March 2026 mentioned the amber heron?",  # no such rule
    "Who attended the most sessions?",
    "What is the cedar lantern?",
    "Summarise the design reviews",
])
def test_outside_the_grammar_is_declined(text):
    assert isinstance(parse(text), Declined)


def test_quoted_phrase_is_taken_verbatim_even_with_odd_characters():
    assert parse('How many meetings mentioned "50% of the a_b (beta) rewrite"?') == \
        Intent("R3", phrase="50% of the a_b (beta) rewrite")
    # a word the grammar would refuse outside quotes is just part of a quoted name
    assert parse('Which meetings mention "before or after"?') == Intent("R4", phrase="before or after")
    assert parse("How many times did we defer 'the o\u2019brien launch'?").pattern == "defer the o\u2019brien launch"


@pytest.mark.parametrize("text, intent", [
    ('Count the meetings that mentioned "cedar lantern".', Intent("R3", phrase="cedar lantern")),
    ('Count how many times "billing migration" was deferred.',
     Intent("R5", phrase="billing migration", pattern="defer the billing migration")),
    ('In March 2026, how many meetings discussed "cedar lantern"?',
     Intent("R7", phrase="cedar lantern", year=2026, month=3)),
    ("Which person attended the most Payments design review meetings?",
     Intent("R6", series="Payments design review")),
])
def test_imperative_leading_time_and_adjacent_series_forms(text, intent):
    assert parse(text) == intent


@pytest.mark.parametrize("text", [
    "Did the cedar lantern come up much? Give me the number of calls.",
    "Pull up every call where somebody brought up the cedar lantern.",
    "How often has the billing migration been put off?",  # the deferral contract is the verb "defer"
    "Of everyone at the Payments design review meetings, who showed up most often, and how many times?",
    "Back in March 2026, on how many calls did the cedar lantern come up?",
])
def test_casual_paraphrases_are_declined(text):
    assert isinstance(parse(text), Declined)


def _derivations():
    """Every sentence docs/question-grammar.md §2 derives, for one phrase, item, month, team and kind."""
    x, item, month, team, kind = "cedar lantern", "billing migration", "March 2026", "Payments", "design review"
    for meetings in ("meetings", "sessions"):
        for mention in ("mentioned", "discussed", "talked about"):
            for pred in (f"{mention} the {x}", f'{mention} "{x}"'):
                yield f"How many {meetings} {pred}?", Intent("R3", phrase=x)
                yield f"Count the {meetings} that {pred}.", Intent("R3", phrase=x)
                yield f"Which {meetings} {pred}?", Intent("R4", phrase=x)
                yield f"List the {meetings} that {pred}.", Intent("R4", phrase=x)
                r7 = Intent("R7", phrase=x, year=2026, month=3)
                yield f"How many {meetings} in {month} {pred}?", r7
                yield f"In {month}, how many {meetings} {pred}?", r7
    r5 = Intent("R5", phrase=item, pattern=f"defer the {item}")
    yield f"How many times in total did we defer the {item}?", r5
    yield f'Count how many times "{item}" was deferred.', r5
    yield f"Who attended the most {kind} sessions for the {team} team?", Intent("R6", team=team, kind=kind)
    yield f"Which person attended the most {team} {kind} meetings?", Intent("R6", series=f"{team} {kind}")


@pytest.mark.parametrize("text, intent", list(_derivations()))
def test_every_documented_in_grammar_production_parses(text, intent):
    assert parse(text) == intent


@pytest.mark.parametrize("text", [
    "Did the cedar lantern come up much? Give me the number of calls.",
    "Pull up every call where somebody brought up the cedar lantern.",
    "Tally up how often the billing migration got pushed to a later date.",
    "Of everyone at the Payments design review meetings, who showed up most often, and how many times?",
    "Back in March 2026, on how many calls did the cedar lantern come up?",
])
def test_every_documented_out_of_grammar_family_is_declined(text):
    assert isinstance(parse(text), Declined)
