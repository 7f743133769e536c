"""The PostgreSQL side of a loaded corpus: schema ``turnbench``, filled by COPY (docs/design.md §8, §9).

Only what a product would hold — never facts, gold, ``Meeting.meta`` or generator metadata. The invitee list
is product data (a calendar holds it); it is not attendance, which is who spoke (docs/question-grammar.md)::

    turnbench.meetings (id text PRIMARY KEY, title text NOT NULL, recorded_date date NULL,
                        duration double precision NOT NULL, timing text NOT NULL)   -- seconds; 'synthetic'|'measured'
    turnbench.segments (meeting_id text NOT NULL REFERENCES turnbench.meetings (id),
                        turn_index integer NOT NULL, speaker text NOT NULL,
                        start_s double precision NOT NULL, end_s double precision NOT NULL, text text NOT NULL,
                        PRIMARY KEY (meeting_id, turn_index))
    turnbench.attendees (meeting_id text NOT NULL REFERENCES turnbench.meetings (id), name text NOT NULL,
                         PRIMARY KEY (meeting_id, name))                    -- Meeting.attendees: the invitees
    turnbench.passages (id text PRIMARY KEY, meeting_id text NOT NULL REFERENCES turnbench.meetings (id),
                        passage_index integer NOT NULL, kind text NOT NULL, speaker text NOT NULL,
                        start_s double precision NOT NULL, end_s double precision NOT NULL, words integer NOT NULL,
                        text_sha256 text NOT NULL, holds text, UNIQUE (meeting_id, passage_index))
                                                  -- the chunks the index holds: what a run reads its inventory from

Read segments in the total order ``ORDER BY meeting_id, start_s, end_s, turn_index``. The schema's comment is
a JSON marker ``{"format": "turnbench-tables/1", "corpus_id": ..., "corpus_sha256": ...}`` naming the corpus
loaded; the whole load is one transaction, so a reader sees the previous corpus or the new one, never half of
one. A schema of that name without the marker is someone else's (``ForeignIndex``): never touched.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from turnbench import canonical
from turnbench.corpus.records import Meeting
from turnbench.errors import ForeignIndex, IndexNotSettled
from turnbench.passages import Passage
from turnbench.stack.clients import postgres_connect
from turnbench.stack.info import StackInfo

if TYPE_CHECKING:
    import psycopg

SCHEMA = "turnbench"
TABLES_FORMAT = "turnbench-tables/2"  # 2: passages carry the words a window of a turn holds


@dataclass(frozen=True)
class TableCounts:
    meetings: int
    segments: int
    attendees: int = 0


def schema_marker(cur: psycopg.Cursor[Any]) -> dict[str, Any] | None:
    """The schema's turnbench marker; None when the schema does not exist; ForeignIndex when it has none."""
    cur.execute("SELECT obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname = %s",
                (SCHEMA,))
    row = cur.fetchone()
    if row is None:
        return None
    try:
        marker = json.loads(row[0] or "")
    except json.JSONDecodeError:
        marker = None
    if not isinstance(marker, dict) or marker.get("format") != TABLES_FORMAT:
        raise ForeignIndex(
            f"PostgreSQL schema {SCHEMA!r} exists and carries no turnbench marker: it was not created by "
            f"turnbench, so it is left untouched; use another database or stack"
        )
    return marker


def loaded_tables_marker(stack: StackInfo) -> dict[str, Any] | None:
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        return schema_marker(cur)


def copy_corpus(stack: StackInfo, meetings: Iterable[Meeting], marker: Mapping[str, Any],
                each_meeting: Callable[[Meeting], None] = lambda m: None) -> TableCounts:
    """Replace the schema with ``meetings`` in one transaction, COPY for every table; ``each_meeting`` sees every
    meeting as it streams past, so the caller can cut passages from the same single read of the corpus."""
    n_meetings = n_segments = 0
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        if schema_marker(cur) is not None:
            cur.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
        cur.execute(f"CREATE SCHEMA {SCHEMA}")
        comment = canonical.dumps({**marker, "format": TABLES_FORMAT})
        cur.execute(f"COMMENT ON SCHEMA {SCHEMA} IS {_sql_literal(comment)}")
        # keys and the foreign key come after COPY: building them once is faster than checking per row
        cur.execute(
            f"CREATE TABLE {SCHEMA}.meetings (id text NOT NULL, title text NOT NULL, recorded_date date, "
            "duration double precision NOT NULL, timing text NOT NULL)"
        )
        cur.execute(
            f"CREATE TABLE {SCHEMA}.segments (meeting_id text NOT NULL, turn_index integer NOT NULL, "
            "speaker text NOT NULL, start_s double precision NOT NULL, end_s double precision NOT NULL, "
            "text text NOT NULL)"
        )
        cur.execute(f"CREATE TABLE {SCHEMA}.attendees (meeting_id text NOT NULL, name text NOT NULL)")
        meeting_rows = []
        attendee_rows: list[tuple[str, str]] = []
        with cur.copy(
            f"COPY {SCHEMA}.segments (meeting_id, turn_index, speaker, start_s, end_s, text) FROM STDIN"
        ) as copy:
            for m in meetings:
                meeting_rows.append((m.id, m.title, m.recorded_date, m.duration, m.timing))
                attendee_rows.extend((m.id, name) for name in sorted(set(m.attendees)))
                for t in m.turns:
                    copy.write_row((m.id, t.index, t.speaker, t.start, t.end, t.text))
                n_segments += len(m.turns)
                each_meeting(m)
        with cur.copy(f"COPY {SCHEMA}.meetings (id, title, recorded_date, duration, timing) FROM STDIN") as copy:
            for row in meeting_rows:
                copy.write_row(row)
        with cur.copy(f"COPY {SCHEMA}.attendees (meeting_id, name) FROM STDIN") as copy:
            for invitee in attendee_rows:
                copy.write_row(invitee)
        n_meetings = len(meeting_rows)
        cur.execute(f"ALTER TABLE {SCHEMA}.meetings ADD PRIMARY KEY (id)")
        cur.execute(f"ALTER TABLE {SCHEMA}.segments ADD PRIMARY KEY (meeting_id, turn_index)")
        cur.execute(f"ALTER TABLE {SCHEMA}.attendees ADD PRIMARY KEY (meeting_id, name)")
        for table in ("segments", "attendees"):
            cur.execute(
                f"ALTER TABLE {SCHEMA}.{table} ADD FOREIGN KEY (meeting_id) REFERENCES {SCHEMA}.meetings (id)"
            )
        cur.execute(f"SELECT (SELECT count(*) FROM {SCHEMA}.meetings), (SELECT count(*) FROM {SCHEMA}.segments), "
                    f"(SELECT count(*) FROM {SCHEMA}.attendees)")
        got = cur.fetchone()
        if got != (n_meetings, n_segments, len(attendee_rows)):
            raise IndexNotSettled(
                f"PostgreSQL holds {got and got[0]} meetings, {got and got[1]} segments and {got and got[2]} "
                f"attendees after COPY; the corpus has {n_meetings}, {n_segments} and {len(attendee_rows)}"
            )
        for table in ("meetings", "segments", "attendees"):
            cur.execute(f"ANALYZE {SCHEMA}.{table}")
    return TableCounts(n_meetings, n_segments, len(attendee_rows))


PASSAGE_COLUMNS = "id, meeting_id, passage_index, kind, speaker, start_s, end_s, words, text_sha256, holds"


def copy_passages(stack: StackInfo, passages: Iterable[Passage], loaded: Mapping[str, Any] | None = None) -> int:
    """Replace ``turnbench.passages`` with the inventory a load cut (after :func:`copy_corpus`, whose schema it
    joins); a run reads it back (:func:`read_passages`) instead of cutting the corpus again. ``loaded``: what the
    schema's marker records of the cut (its ``loaded`` key, in the same transaction), which a reuse checks."""
    n = 0
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        marker = schema_marker(cur)
        if marker is None:
            raise IndexNotSettled(f"PostgreSQL schema {SCHEMA!r} is missing: the corpus tables were not loaded")
        comment = canonical.dumps({**{k: v for k, v in marker.items() if k != "loaded"},
                                   **({"loaded": dict(loaded)} if loaded is not None else {})})
        cur.execute(f"COMMENT ON SCHEMA {SCHEMA} IS {_sql_literal(comment)}")
        cur.execute(f"DROP TABLE IF EXISTS {SCHEMA}.passages")
        cur.execute(
            f"CREATE TABLE {SCHEMA}.passages (id text NOT NULL, meeting_id text NOT NULL, passage_index integer "
            "NOT NULL, kind text NOT NULL, speaker text NOT NULL, start_s double precision NOT NULL, end_s double "
            "precision NOT NULL, words integer NOT NULL, text_sha256 text NOT NULL, holds text)"
        )
        with cur.copy(f"COPY {SCHEMA}.passages ({PASSAGE_COLUMNS}) FROM STDIN") as copy:
            for p in passages:
                copy.write_row((p.id, p.meeting, p.index, p.kind, p.speaker, p.start, p.end, p.words, p.text_sha256,
                                None if p.holds is None else canonical.dumps([list(h) for h in p.holds])))
                n += 1
        cur.execute(f"ALTER TABLE {SCHEMA}.passages ADD PRIMARY KEY (id)")
        cur.execute(f"ALTER TABLE {SCHEMA}.passages ADD UNIQUE (meeting_id, passage_index)")
        cur.execute(f"ALTER TABLE {SCHEMA}.passages ADD FOREIGN KEY (meeting_id) REFERENCES {SCHEMA}.meetings (id)")
        cur.execute(f"ANALYZE {SCHEMA}.passages")
    return n


def read_passages(stack: StackInfo) -> list[Passage]:
    """The inventory :func:`copy_passages` stored, in (meeting, index) order; empty when there is none."""
    out: list[Passage] = []
    with postgres_connect(stack) as conn, conn.cursor() as cur:
        cur.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.passages",))
        row = cur.fetchone()
        if row is None or row[0] is None:
            return out
        cur.execute(f"SELECT {PASSAGE_COLUMNS} FROM {SCHEMA}.passages")
        for pid, meeting, index, kind, speaker, start, end, words, sha, holds in cur:
            held = None if holds is None else tuple(tuple(h) for h in json.loads(holds))
            out.append(Passage(pid, meeting, speaker, start, end, index, kind, sha, words, None, held))
    out.sort(key=attrgetter("meeting", "index"))  # Python's order, whatever the database's collation
    return out


def digest(stack: StackInfo) -> dict[str, Any]:
    """Every table of the schema digested by the server (turnbench.loading.proof.tables_digest): what a load records
    and a reuse must find again."""
    from turnbench.loading.proof import tables_digest

    with postgres_connect(stack) as conn, conn.cursor() as cur:
        return tables_digest(cur, SCHEMA)


def _sql_literal(text: str) -> str:
    # COMMENT ON takes no bind parameters; the marker is our own canonical JSON, quoted the SQL way
    return "'" + text.replace("'", "''") + "'"
