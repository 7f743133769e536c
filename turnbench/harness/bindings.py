"""Bindings: what each judgement target of a results directory stands for in the corpus text (docs/design.md §3 rule 2).

A qrels line names a query and a passage by id; an id says nothing about the text it stood for. So a results
directory carries ``bindings.jsonl``, one line per target, each with the sha256 of what its judgement was
derived from:

* a query: its record (text, class, gold meetings, gold turn ranges, answer turns, the speaker it names and their
  turns) and the text of every gold and answer turn;
* a passage (each judged passage, and the top ``BIND_DEPTH`` of every ranked query, which the report shows):
  its meeting, speakers and times, and the words it was judged to hold — each held turn's index, speaker, times,
  span and those words (``spans``): what its grade and its shown text come from.

Anything that binds to corpus text is checked against the corpus before it is used (``check``): a target
whose sha256 the corpus no longer gives is stale, and the first stale target (in file order) is refused with
``StaleBinding`` — never re-graded, skipped or shown with the new text. Two results directories whose
bindings disagree on a target were judged against different text, whatever their ids say (``first_difference``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import msgspec

from turnbench import canonical
from turnbench.corpus.format import Corpus
from turnbench.corpus.records import Meeting, Query, Turn
from turnbench.errors import BadInput, StaleBinding
from turnbench.harness.held import Span, words_between
from turnbench.passages import Passage

BINDINGS = "bindings.jsonl"
BIND_DEPTH = 3
QUERY, PASSAGE = "query", "passage"


class QueryBinding(msgspec.Struct, frozen=True, gc=False, tag_field="target", tag=QUERY):
    """A question's line of bindings.jsonl: its id and the sha256 of its record and its gold and answer turns."""

    id: str
    sha256: str

    target: ClassVar[str] = QUERY

    def key(self) -> tuple[Any, ...]:
        """What the digest is computed from, besides the corpus: the question's id."""
        return (QUERY, self.id)

    def to_json(self) -> dict[str, Any]:
        return {"target": QUERY, "id": self.id, "sha256": self.sha256}


class PassageBinding(msgspec.Struct, frozen=True, gc=False, tag_field="target", tag=PASSAGE, omit_defaults=True):
    """A passage's line of bindings.jsonl: the passage (its meeting, its speaker, or its speakers — ``"unknown"``
    when none is known — and its times), the word spans it was judged holding, and the sha256 of those words."""

    id: str
    meeting: str
    start: float
    end: float
    spans: tuple[tuple[int, int, int], ...]
    sha256: str
    speaker: str | None = None
    speakers: str | tuple[str, ...] | None = None  # "unknown" or the names; None: one speaker (``speaker``)

    target: ClassVar[str] = PASSAGE

    def passage(self) -> Passage:
        speakers = self.speakers
        return Passage(self.id, self.meeting, self.speaker or "", self.start, self.end, 0,
                       speakers=None if speakers is None else () if speakers == "unknown" else tuple(speakers))

    def key(self) -> tuple[Any, ...]:
        """What the digest is computed from, besides the corpus: the passage's own record."""
        return (PASSAGE, self.id, self.meeting, self.speaker, self.speakers, self.start, self.end, self.spans)

    def to_json(self) -> dict[str, Any]:
        tree = {"target": PASSAGE, "id": self.id, "meeting": self.meeting, "start": self.start, "end": self.end,
                "spans": [list(x) for x in self.spans], "sha256": self.sha256}
        if self.speaker is not None:
            tree["speaker"] = self.speaker
        if self.speakers is not None:
            tree["speakers"] = self.speakers if isinstance(self.speakers, str) else list(self.speakers)
        return tree


Binding = QueryBinding | PassageBinding  # a line of bindings.jsonl: its ``target`` says which
_DECODER = msgspec.json.Decoder(Binding)
_ENCODER = msgspec.json.Encoder(order="sorted")


# Fields are joined with the ASCII unit and record separators, which no id, name or transcript text holds: one
# fixed encoding, cheaper than JSON for the hundred thousand passages a large run binds.
_UNIT, _RECORD = "\x1f", "\x1e"
_ABSENT = "\x00"  # the text of a turn the corpus lacks


def _bound_turns(q: Query) -> dict[str, list[int]]:
    """Per meeting, the gold and answer turn indices ``q``'s binding reads, in order."""
    wanted: dict[str, set[int]] = {}
    for m, rs in q.gold_turns.items():
        wanted.setdefault(m, set()).update(i for a, b in rs for i in range(a, b + 1))
    for m, ts in q.answer_turns.items():
        wanted.setdefault(m, set()).update(ts)
    return {m: sorted(wanted[m]) for m in sorted(wanted)}


def _gold_lines(meeting_id: str, indices: Sequence[int], text_of: Mapping[int, str]) -> str:
    head, get = f"{_RECORD}{meeting_id}{_UNIT}", text_of.get
    return "".join([f"{head}{i}{_UNIT}{get(i, _ABSENT)}" for i in indices])


def query_sha256(q: Query, turns: Mapping[str, Mapping[int, Turn]]) -> str:
    """sha256 of the query's record, then (meeting, turn, text) of every gold and answer turn in (meeting, turn)
    order, ``\x00`` for a turn the corpus lacks; fields and lines separated by the unit and record separators."""
    parts = [canonical.dumps(q.to_json())]
    for m, indices in _bound_turns(q).items():
        here = turns.get(m, {})
        parts.append(_gold_lines(m, indices, {i: here[i].text for i in indices if i in here}))
    return canonical.sha256_bytes("".join(parts).encode("utf-8"))


class QueryDigests:
    """Every query's :func:`query_sha256`, fed one meeting at a time (``see``) as the judge's single pass over the
    corpus goes by, so no meeting's text outlives its turn. A query's meetings are hashed in id order; the lines of
    a meeting that arrives before an earlier one of the same query wait for it (a corpus stored in id order never
    makes any wait)."""

    def __init__(self, queries: Iterable[Query]) -> None:
        self._queries = list(queries)
        self._hash: dict[str, Any] = {}
        self._todo: dict[str, list[tuple[str, list[int]]]] = {}  # per query, its meetings still to hash, in order
        self._waiting: dict[str, dict[str, bytes]] = {}
        self._of_meeting: dict[str, list[str]] = {}
        self._indices: dict[tuple[str, str], list[int]] = {}
        for q in self._queries:
            bound = list(_bound_turns(q).items())
            self._todo[q.id] = bound
            for m, indices in bound:
                self._of_meeting.setdefault(m, []).append(q.id)
                self._indices[q.id, m] = indices

    def begin(self) -> None:
        """Hash each query's record, which comes first in its digest: called by the first ``take`` when not before
        (a caller may do it while it waits for something else, as ``score_run`` does while its run is read)."""
        if not self._hash:
            import hashlib

            self._hash = {q.id: hashlib.sha256(canonical.dumps(q.to_json()).encode("utf-8")) for q in self._queries}

    def see(self, meeting: Meeting) -> None:
        self.take(self.read(meeting))

    def read(self, meeting: Meeting) -> tuple[str, dict[str, bytes]] | None:
        """What the digests need of ``meeting``: its gold lines per query bound to it, encoded as they are hashed
        (``judgements.Visitor``: this may run in the process that read the meeting, ``take`` in this one; bytes
        cross a pipe at memory speed, where strings are encoded and decoded again)."""
        qids = self._of_meeting.get(meeting.id, ())
        if not qids:
            return None
        text_of = {t.index: t.text for t in meeting.turns}
        return meeting.id, {qid: _gold_lines(meeting.id, self._indices[qid, meeting.id], text_of).encode("utf-8")
                            for qid in qids}

    def take(self, found: tuple[str, dict[str, bytes]] | None) -> None:
        if found is None:
            return
        mid, lines = found
        self.begin()
        if self._of_meeting.pop(mid, None) is None:
            return  # seen already
        for qid, text in lines.items():
            self._waiting.setdefault(qid, {})[mid] = text
            self._drain(qid, done=False)

    def _drain(self, qid: str, *, done: bool) -> None:
        todo, waiting, h = self._todo[qid], self._waiting.get(qid, {}), self._hash[qid]
        while todo and (todo[0][0] in waiting or done):
            m, indices = todo.pop(0)
            lines = waiting.pop(m, None)
            h.update(lines if lines is not None else _gold_lines(m, indices, {}).encode("utf-8"))

    def digests(self) -> dict[str, str]:
        """The digests, every meeting not seen hashed as the corpus lacking its turns (as query_sha256 does)."""
        self.begin()
        for qid in self._todo:
            self._drain(qid, done=True)
        return {qid: h.hexdigest() for qid, h in self._hash.items()}


def passage_sha256(p: Passage, spans: Sequence[Span], turns: Mapping[int, Turn]) -> str:
    """sha256 of the passage's record and of the words it holds: each held turn (index, speaker, times), its span
    and those words. A turn the meeting no longer has hashes as absent, so the digest cannot match."""
    u = _UNIT
    parts = [f"{p.meeting}{u}{p.voices}{u}{p.start!r}{u}{p.end!r}"]
    for i, a, b in spans:
        t = turns.get(i)
        parts.append(_ABSENT if t is None else
                     f"{i}{u}{t.speaker}{u}{t.start!r}{u}{t.end!r}{u}{a}{u}{b}{u}{words_between(t.text, a, b)}")
    return canonical.sha256_bytes(_RECORD.join(parts).encode("utf-8"))


def needed(queries: Iterable[Query], passages: Iterable[Passage]) -> set[str]:
    """The meetings whose turns the bindings of ``queries`` and ``passages`` read."""
    need = {p.meeting for p in passages}
    for q in queries:
        need.update(q.gold_turns)
        need.update(q.answer_turns)
    return need


def keep_turns(meetings: Iterable[Meeting], need: set[str], into: dict[str, Meeting]) -> Iterator[Meeting]:
    """Pass ``meetings`` through, keeping the ones in ``need``: one read of the corpus serves judging and binding."""
    for m in meetings:
        if m.id in need:
            into[m.id] = m
        yield m


def compute(queries: Sequence[Query], passages: Sequence[Passage], meetings: Mapping[str, Meeting],
            held: Mapping[str, Sequence[Span]], query_digests: Mapping[str, str] | None = None,
            passage_digests: Mapping[str, str] | None = None) -> list[Binding]:
    """The binding rows of ``queries`` and ``passages`` against ``meetings`` (which must hold every turn needed).
    ``held``: the spans each passage was judged holding; ``query_digests`` and ``passage_digests``: the digests,
    when the caller has hashed them as the corpus went by (:class:`QueryDigests`, ``judgements.judge_all``), every
    passage's then (one missing is an error, never a digest of absent turns)."""
    turns = {mid: {t.index: t for t in m.turns} for mid, m in meetings.items()}
    rows: list[Binding] = [
        QueryBinding(q.id, query_digests[q.id] if query_digests is not None else query_sha256(q, turns))
        for q in sorted(queries, key=lambda q: q.id)]
    prows = []
    for p in passages:
        spans = tuple(held.get(p.id, ()))
        prows.append(PassageBinding(
            p.id, p.meeting, p.start, p.end, spans,
            passage_digests[p.id] if passage_digests is not None else passage_sha256(p, spans, turns.get(p.meeting,
                                                                                                          {})),
            speaker=p.speaker if p.speakers is None else None,
            speakers=None if p.speakers is None else (tuple(p.speakers) if p.speakers else "unknown")))
    return rows + sorted(prows, key=lambda r: r.id)


def text(rows: Iterable[Binding]) -> bytes:
    """bindings.jsonl's lines, each as ``canonical.dumps_line`` writes it: by msgspec's encoder in one call where
    that is certain to be those bytes (``canonical.encoder_writes_repr`` for a passage row's times, its only
    floats; strings escaped alike), else line by line."""
    rows = list(rows)
    if canonical.encoder_writes_repr([t for r in rows if isinstance(r, PassageBinding) for t in (r.start, r.end)]):
        try:
            return _ENCODER.encode_lines(rows)
        except (TypeError, ValueError, msgspec.EncodeError):
            pass  # a lone surrogate, which msgspec refuses: the general path refuses it too
    return b"".join(canonical.dumps_line(r.to_json()) for r in rows)


def parse(data: bytes, where: str, ids: Collection[str] | None = None) -> list[Binding]:
    """The binding rows; with ``ids``, only the rows of those targets (and perhaps others: a line written as
    turnbench writes it is skipped unread when its id is not one of them, ``_line_id``). A line that is not a
    binding — not JSON, another target, a field missing or of another type — is refused, naming it."""
    rows = []
    for n, line in enumerate(data.splitlines(), 1):
        if ids is not None:
            given = _line_id(line)
            if given is not None and given.isascii() and given.decode("ascii") not in ids:
                continue  # (an id of other bytes is read whole: UTF-8 or refused)
        try:
            rows.append(_DECODER.decode(line))
        except msgspec.MsgspecError:
            raise BadInput(f"{where}: line {n} is not a binding") from None
    return rows


def _line_id(line: bytes) -> bytes | None:
    """The id a line names, found without reading it, when it is written as turnbench writes it (sorted keys: a
    question's ``{"id":"…"`` first, a passage's after its ``end``, a number) and the id has no escape; else None. No
    ``,"id":"`` can sit inside a JSON string, whose quotes are escaped."""
    if line.startswith(b'{"id":"'):
        start = 7
    elif line.startswith(b'{"end":'):
        start = line.find(b',"id":"', 7) + 7
        if start < 7:
            return None
    else:
        return None
    end = line.find(b'"', start)
    if end < 0 or not line.startswith(b'",', end) or b"\\" in line[start:end]:
        return None
    return line[start:end]


def query_digests(data: bytes, where: str) -> dict[str, str]:
    """query id -> its binding's sha256: the question rows of bindings.jsonl's bytes ``data`` (the others read
    only as far as their target), each checked as ``parse`` checks it."""
    out = {}
    for n, line in enumerate(data.splitlines(), 1):
        if line.endswith(_QUERY_LINE_END):
            try:
                row = _DECODER.decode(line)
            except msgspec.MsgspecError:
                raise BadInput(f"{where}: line {n} is not a binding") from None
            out[row.id] = row.sha256
    return out


_QUERY_LINE_END = b'"target":"query"}'  # how a question's line ends, as canonical JSON (sorted keys) writes it


def check(rows: Sequence[Binding], corpus: Corpus, where: str,
          read: Mapping[str, Meeting] | None = None,
          memo: dict[tuple[Any, ...], str] | None = None,
          queries: Mapping[str, Query] | None = None) -> dict[str, Meeting]:
    """Refuse (StaleBinding) the first row whose target the corpus text no longer gives; return the meetings
    the rows bind to, so a caller can show their text knowing it is the text that was judged. ``read``: the
    corpus's meetings when the caller has already read them; ``memo``: digests already computed from this same
    corpus text (two results directories of one corpus share most targets: each is computed once); ``queries``:
    the corpus's queries by id, when the caller has already read them."""
    queries = queries if queries is not None else {q.id: q for q in corpus.queries()}
    wanted_q = [queries[r.id] for r in rows if isinstance(r, QueryBinding) and r.id in queries]
    wanted_p = [r.passage() for r in rows if isinstance(r, PassageBinding)]
    need = needed(wanted_q, wanted_p)
    meetings: dict[str, Meeting] = {}
    if read is not None:
        meetings = {mid: m for mid, m in read.items() if mid in need}
    else:
        of = getattr(corpus, "iter_meetings_of", None)
        for _ in keep_turns(of(need) if of is not None else corpus.iter_meetings(), need, meetings):
            pass
    memo = {} if memo is None else memo
    fresh = {(r.target, r.id): r for r in rows if r.key() not in memo}
    fresh_q = [queries[r.id] for r in fresh.values() if isinstance(r, QueryBinding) and r.id in queries]
    fresh_p = [r for r in fresh.values() if isinstance(r, PassageBinding)]
    for row in compute(fresh_q, [r.passage() for r in fresh_p], meetings, {r.id: r.spans for r in fresh_p}):
        memo[fresh[(row.target, row.id)].key()] = row.sha256
    for r in rows:
        given = memo.get(r.key())
        if given is None:
            raise StaleBinding(f"{where}: {r.target} {r.id} is bound to text of corpus {corpus.id} that it "
                               "no longer holds (the query is gone)")
        if isinstance(r, PassageBinding) and r.meeting not in meetings:
            raise StaleBinding(f"{where}: passage {r.id} is bound to meeting {r.meeting}, which corpus "
                               f"{corpus.id} no longer holds")
        if given != r.sha256:
            what = "its gold turns or record" if r.target == QUERY else "the words it holds"
            raise StaleBinding(f"{where}: {r.target} {r.id} is stale: {what} in corpus {corpus.id} no longer "
                               f"match the text it was judged on (sha256 {r.sha256[:12]}…, corpus gives "
                               f"{given[:12]}…)")
    return meetings


def first_difference(a: Sequence[Binding], b: Sequence[Binding]) -> str | None:
    """The first target both sides bind to different text, or None when every shared target agrees."""
    theirs = {(r.target, r.id): r.sha256 for r in b}
    for r in a:
        other = theirs.get((r.target, r.id))
        if other is not None and other != r.sha256:
            return f"{r.target} {r.id}"
    return None
