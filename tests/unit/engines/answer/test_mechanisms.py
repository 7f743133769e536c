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


class _Cursor:
    def __init__(self, conn):
        self.conn = conn
        self.rows: list = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, params=()):
        self.conn.sql.append((sql, params))
        if "FROM turnbench.meetings" in sql:
            self.rows = self.conn.meetings
        else:  # attendance over the meetings asked for
            counts: dict[str, int] = {}
            for mid in params[0]:
                for speaker in self.conn.spoke[mid]:
                    counts[speaker] = counts.get(speaker, 0) + 1
            self.rows = sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))

    def fetchall(self):
        return self.rows


class _Conn:
    def __init__(self, meetings, spoke):
        self.meetings, self.spoke, self.sql = meetings, spoke, []

    def cursor(self):
        return _Cursor(self)


class _Client:
    """OpenSearch's answer to a phrase aggregation: the meetings whose text holds the phrase."""

    def __init__(self, said):
        self.said, self.phrases = said, []

    def search(self, index, body):
        phrase = body["query"]["match_phrase"]["content.exact"]["query"]
        self.phrases.append(phrase)
        keys = sorted(m for m, text in self.said.items() if phrase.lower() in text.lower())
        return {"_shards": {"total": 1, "successful": 1, "failed": 0},
                "aggregations": {"meetings": {"buckets": [{"key": k} for k in keys], "sum_other_doc_count": 0}}}


def test_r6_under_opaque_titles_takes_the_series_from_the_talk():
    """Recordings named like files name no series: the sessions are the meetings whose talk says the series' name,
    and the answer is who spoke in most of them; the invitee list is never read."""
    from turnbench.engines.answer.mechanisms import ReferenceAnswerer

    meetings = [(m, f"rec-2026-01-0{i + 1}-0930.m4a", dt.date(2026, 1, i + 1)) for i, m in enumerate("abcd")]
    said = {"a": "Okay, welcome everyone to the Monday Payments design review.",
            "b": "Hi all, this is the Payments design review, so let us get going.",
            "c": "Right, let us get this design review started.",  # not a session of the series, by its talk
            "d": "Okay, welcome everyone to the Payments design review."}
    spoke = {"a": ["Ann Lee", "Bo Park"], "b": ["Bo Park"], "c": ["Ann Lee"], "d": ["Ann Lee", "Bo Park"]}
    client = _Client(said)
    ref = ReferenceAnswerer(client, _Conn(meetings, spoke), index="passages", schema="turnbench")
    for text in ("Who attended the most design review sessions for the Payments team?",
                 "Which person attended the most Payments design review meetings?"):
        got = ref.answer("q1", text)
        assert (got.answer.speaker, got.answer.count) == ("Bo Park", 3), text
    assert client.phrases == ["payments design review"] * 2
    declined = ref.answer("q2", "Which person attended the most Search planning meetings?")
    assert declined.answer is None and "'search planning'" in declined.intent["reason"]
