"""The reference answerer's exact mechanisms over the stack's product data (docs/design.md §8).

What it reads, and nothing else: meeting titles and recorded dates (PostgreSQL ``meetings``), segment
speakers and text (PostgreSQL ``segments``), and the passage index (OpenSearch). Never facts, gold or any
``meta`` field. Counts come from an aggregation or a SQL count, never from a ranking:

======  ============================================================================================
rule    mechanism
======  ============================================================================================
R3, R4  ``match_phrase`` on ``content.exact`` + a ``terms`` aggregation over ``meeting_id``; a bucket
        list cut at its size limit raises :class:`~turnbench.errors.TruncatedAggregation`
R5      PostgreSQL ``regexp_count`` over segment text, word-bounded and case-insensitive — passages are
        not used, because an occurrence near a passage edge could be counted twice or not at all
R6      PostgreSQL: distinct meetings per speaker over segments (attendance = spoke at least once) in
        the meetings whose title ``"{Team} — {kind} #{n}"`` names the team and kind; where no title names a
        series, in the meetings whose talk says ``"{team} {kind}"`` (``match_phrase`` + ``terms``, as R3)
R7      the R3 meeting set ∩ PostgreSQL meetings whose ``recorded_date`` falls in the month
======  ============================================================================================

User text reaches OpenSearch only as the value of a ``match_phrase`` (no query-string syntax is parsed)
and PostgreSQL only as a bound parameter; a phrase that becomes a regular expression is escaped first
(:func:`are_literal`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from turnbench.corpus.records import Answer
from turnbench.engines.answer.grammar import Declined, Intent, parse
from turnbench.errors import SearchFailed, TruncatedAggregation, TurnbenchError
from turnbench.submissions import SubmittedAnswer, declined

T = TypeVar("T")

# Field names of the passage index (turnbench.loading.index.index_mappings; a unit test keeps them in step).
PHRASE_FIELD = "content.exact"
MEETING_FIELD = "meeting_id"
# The largest bucket list one aggregation may return; a phrase in more meetings than this raises.
DEFAULT_BUCKET_LIMIT = 10_000

MECHANISMS = {
    "R3": "opensearch match_phrase(content.exact) + terms(meeting_id) -> count",
    "R4": "opensearch match_phrase(content.exact) + terms(meeting_id) -> meeting set",
    "R5": "postgres regexp_count(segments.text, word-bounded, case-insensitive) -> sum",
    "R6": "postgres titles (none: opensearch match_phrase '<team> <kind>') -> series meetings; "
          "count(distinct meeting) per segments.speaker -> max",
    "R7": "opensearch match_phrase(content.exact) + terms(meeting_id) ∩ postgres meetings.recorded_date in month",
}

# "{Team} — {kind} #{n}" — the product's own title convention; the em dash is part of it.
TITLE_PATTERN = re.compile(r"(?P<team>.+?) \u2014 (?P<kind>.+?) #(?P<n>[0-9]+)")


def are_literal(text: str) -> str:
    """``text`` as a PostgreSQL ARE matching it literally, its words separated by single spaces.

    Single spaces, not any whitespace, because that is the deferral contract (docs/question-grammar.md §1).

    Every character that is neither alphanumeric nor whitespace is backslash-escaped: in an ARE a backslash
    before a non-alphanumeric character always means that character, while a backslash before an
    alphanumeric one would start an escape (``\\m``, ``\\d``...) — so letters and digits stay bare."""
    words = text.split()
    return " ".join("".join(c if c.isalnum() else "\\" + c for c in w) for w in words)


def word_bounded(text: str) -> str:
    """An ARE matching ``text`` literally where it is not part of a longer word on either side.

    Lookarounds instead of ``\\m``/``\\M`` so that a phrase beginning or ending in punctuation still works."""
    return r"(?<![[:alnum:]_])" + are_literal(text) + r"(?![[:alnum:]_])"


@dataclass(frozen=True)
class MeetingRow:
    id: str
    title: str
    recorded_date: dt.date | None


def series_of(title: str) -> tuple[str, str] | None:
    """(team, kind) from a title ``"{Team} — {kind} #{n}"``; None when the title does not follow it."""
    m = TITLE_PATTERN.fullmatch(title)
    return (m.group("team"), m.group("kind")) if m else None


def _fold(s: str) -> str:
    return " ".join(s.casefold().split())


def resolve_name(said: str, known: Sequence[str], *, drop_prefix: str = "the ", drop_suffix: str = "") -> str | None:
    """The one known name ``said`` refers to (casefolded, optional article/suffix), or None."""
    s = _fold(said)
    candidates = {s}
    if s.startswith(drop_prefix):
        candidates.add(s[len(drop_prefix):])
    for c in list(candidates):
        if drop_suffix and c.endswith(drop_suffix):
            candidates.add(c[: -len(drop_suffix)])
    hits = sorted({k for k in known if _fold(k) in candidates})
    return hits[0] if len(hits) == 1 else None


def split_series(said: str, series: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The one (team, kind) that ``"<team> <kind>"`` names, trying every split of its words; None if not one."""
    words = _fold(said).split()
    if words[:1] == ["the"]:
        words = words[1:]
    hits = set()
    for cut in range(1, len(words)):
        team, kind = " ".join(words[:cut]), " ".join(words[cut:])
        for t, k in series:
            if _fold(t) in (team, team.removesuffix(" team")) and _fold(k) == kind:
                hits.add((t, k))
    return hits.pop() if len(hits) == 1 else None


def month_bounds(year: int, month: int) -> tuple[dt.date, dt.date]:
    start = dt.date(year, month, 1)
    end = dt.date(year + (month == 12), month % 12 + 1, 1)
    return start, end


def _slot(value: T | None, name: str) -> T:
    """A slot the grammar fills for every question of the rule being answered."""
    if value is None:
        raise TurnbenchError(f"the parsed question has no {name}: the grammar and the answerer disagree")
    return value


class ReferenceAnswerer:
    """Answers one question at a time from an OpenSearch client and a PostgreSQL connection."""

    def __init__(self, client: Any, conn: Any, *, index: str, schema: str,
                 bucket_limit: int = DEFAULT_BUCKET_LIMIT) -> None:
        self.client = client
        self.conn = conn
        self.index = index
        self.schema = schema
        self.bucket_limit = bucket_limit
        self._meetings: list[MeetingRow] | None = None
        self._handlers: Mapping[str, Callable[[Intent], Answer | str]] = {
            "R3": self._r3, "R4": self._r4, "R5": self._r5, "R6": self._r6, "R7": self._r7,
        }

    @classmethod
    @contextlib.contextmanager
    def connect(cls, stack: Any, *, index: str | None = None,
                bucket_limit: int = DEFAULT_BUCKET_LIMIT) -> Iterator[ReferenceAnswerer]:
        from turnbench.loading.index import DEFAULT_INDEX
        from turnbench.loading.tables import SCHEMA
        from turnbench.stack.clients import opensearch_client, postgres_connect

        client = opensearch_client(stack)
        conn = postgres_connect(stack)
        try:
            yield cls(client, conn, index=index or DEFAULT_INDEX, schema=SCHEMA, bucket_limit=bucket_limit)
        finally:
            conn.close()
            with contextlib.suppress(Exception):
                client.close()

    # -- the one public step ------------------------------------------------------------------------

    def answer(self, query_id: str, text: str) -> SubmittedAnswer:
        intent = parse(text)
        if isinstance(intent, Declined):
            return declined(query_id, intent.reason)
        details = intent.details()
        result = self._handlers[intent.rule](intent)
        if isinstance(result, str):  # the question parsed, but the data cannot answer it uniquely
            return declined(query_id, result, **details)
        return SubmittedAnswer(query_id, result, MECHANISMS[intent.rule], details)

    # -- rules --------------------------------------------------------------------------------------

    def _r3(self, intent: Intent) -> Answer:
        return Answer("count", count=len(self.meetings_mentioning(_slot(intent.phrase, "phrase"))))

    def _r4(self, intent: Intent) -> Answer:
        return Answer("meeting_set", meetings=tuple(self.meetings_mentioning(_slot(intent.phrase, "phrase"))))

    def _r5(self, intent: Intent) -> Answer:
        return Answer("count", count=self.occurrences(_slot(intent.pattern, "pattern")))

    def _r6(self, intent: Intent) -> Answer | str:
        series = sorted({s for s in (series_of(m.title) for m in self.meetings()) if s is not None})
        if not series:
            return self._r6_spoken(intent)
        if intent.series is not None:
            found = split_series(intent.series, series)
            if found is None:
                return f"{intent.series!r} names no single team and kind in the meeting titles"
            team, kind = found
        else:
            found_team = resolve_name(_slot(intent.team, "team"), [t for t, _ in series], drop_suffix=" team")
            if found_team is None:
                return f"no team named {intent.team!r} in the meeting titles"
            found_kind = resolve_name(_slot(intent.kind, "kind"), [k for t, k in series if t == found_team])
            if found_kind is None:
                return f"team {found_team!r} has no {intent.kind!r} series in the meeting titles"
            team, kind = found_team, found_kind
        return self._most_attended(sorted(m.id for m in self.meetings() if series_of(m.title) == (team, kind)))

    def _r6_spoken(self, intent: Intent) -> Answer | str:
        """R6 where no title names a series (recordings named like files): the sessions are the meetings whose talk
        says the series' name, ``"{team} {kind}"`` as a phrase (the chair opens with it)."""
        if intent.series is not None:
            name = _fold(intent.series).removeprefix("the ")
        else:
            team = _fold(_slot(intent.team, "team")).removeprefix("the ").removesuffix(" team")
            name = f"{team} {_fold(_slot(intent.kind, 'kind'))}"
        ids = self.meetings_mentioning(name)
        if not ids:
            return f"no meeting title or talk names the {name!r} series"
        return self._most_attended(ids)

    def _most_attended(self, ids: Sequence[str]) -> Answer | str:
        ranked = self.attendance(ids)
        if not ranked:
            return "nobody spoke in those sessions"
        if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
            return f"{ranked[0][0]!r} and {ranked[1][0]!r} tie with {ranked[0][1]} sessions"
        return Answer("speaker_count", count=ranked[0][1], speaker=ranked[0][0])

    def _r7(self, intent: Intent) -> Answer:
        in_month = set(self.meetings_in_month(_slot(intent.year, "year"), _slot(intent.month, "month")))
        mentioning = self.meetings_mentioning(_slot(intent.phrase, "phrase"))
        return Answer("count", count=len([m for m in mentioning if m in in_month]))

    # -- mechanisms -----------------------------------------------------------------------------------

    def meetings_mentioning(self, phrase: str) -> list[str]:
        """Sorted ids of the meetings with a passage matching ``phrase`` as a phrase on ``content.exact``."""
        body = {
            "size": 0,
            "track_total_hits": False,
            "query": self.phrase_query(phrase),
            "aggs": {"meetings": {"terms": {"field": MEETING_FIELD, "size": self.bucket_limit,
                                            "order": {"_key": "asc"}}}},
        }
        resp = self.client.search(index=self.index, body=body)
        shards = resp.get("_shards", {})
        if resp.get("timed_out") or shards.get("failed", 0) or shards.get("successful") != shards.get("total"):
            raise SearchFailed(f"the aggregation for phrase {phrase!r} came back partial: {shards}")
        agg = resp["aggregations"]["meetings"]
        if agg.get("sum_other_doc_count", 0) > 0 or agg.get("doc_count_error_upper_bound", 0) > 0:
            raise TruncatedAggregation(
                f"the meeting buckets for phrase {phrase!r} were cut at {self.bucket_limit}: "
                f"{agg.get('sum_other_doc_count', 0)} matching passages fell outside them, so a count would be a floor"
            )
        return sorted(b["key"] for b in agg["buckets"])

    def phrase_query(self, phrase: str) -> dict[str, Any]:
        """The passages that mention ``phrase``: a phrase match, so the text is analysed, never parsed as syntax."""
        return {"match_phrase": {PHRASE_FIELD: {"query": phrase}}}

    def occurrences(self, pattern: str) -> int:
        """Total word-bounded, case-insensitive occurrences of the literal ``pattern`` in segment text."""
        sql = f"SELECT coalesce(sum(regexp_count(text, %s, 1, 'i')), 0) FROM {self.schema}.segments"
        params: tuple[Any, ...] = (word_bounded(pattern),)
        # A cheap substring test first: every match contains the phrase's longest word. Only for ASCII words,
        # where lower() and the regex's case-insensitivity agree exactly; position() takes no pattern syntax.
        longest = max(pattern.split(), key=len, default="")
        if longest.isascii() and longest:
            sql += " WHERE position(%s in lower(text)) > 0"
            params += (longest.lower(),)
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return int(cur.fetchone()[0])

    def attendance(self, meeting_ids: Sequence[str]) -> list[tuple[str, int]]:
        """(speaker, sessions spoken in) over ``meeting_ids``, most sessions first, then by name."""
        with self.conn.cursor() as cur:
            cur.execute(
                f"SELECT speaker, count(DISTINCT meeting_id) AS n FROM {self.schema}.segments "
                "WHERE meeting_id = ANY(%s) GROUP BY speaker ORDER BY n DESC, speaker",
                (list(meeting_ids),),
            )
            return [(str(s), int(n)) for s, n in cur.fetchall()]

    def meetings_in_month(self, year: int, month: int) -> list[str]:
        start, end = month_bounds(year, month)
        with self.conn.cursor() as cur:
            cur.execute(
                f"SELECT id FROM {self.schema}.meetings WHERE recorded_date >= %s AND recorded_date < %s ORDER BY id",
                (start, end),
            )
            return [str(r[0]) for r in cur.fetchall()]

    def meetings(self) -> list[MeetingRow]:
        if self._meetings is None:
            with self.conn.cursor() as cur:
                cur.execute(f"SELECT id, title, recorded_date FROM {self.schema}.meetings ORDER BY id")
                self._meetings = [MeetingRow(str(i), str(t), d) for i, t, d in cur.fetchall()]
        return self._meetings
