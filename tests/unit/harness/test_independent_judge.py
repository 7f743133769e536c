"""An independent judge, written from docs/harness.md's rule and nothing in turnbench.harness, grades three
inventories of the small fixture corpus exactly as ``judge`` does:

* turnbench's own passages (whole turns of one speaker; windows of a monologue, bound by ``holds``);
* 40-word windows read straight across speakers, carrying their text, each declaring every speaker it holds;
* 30-second slices of time, with neither text nor speakers ("unknown"), judged by their times.

The windows are cut here, so the words each holds are known by construction, not found by turnbench's search.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turnbench.corpus import open_corpus
from turnbench.harness.judgements import RelevancePolicy, judge_all
from turnbench.loading.chunking import chunk_meeting
from turnbench.passages import Passage

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "small"
EPS = 1e-6
HIGH, LOW, ANSWER = 0.5, 0.0, 0.5


def _reading(m):
    return sorted(m.turns, key=lambda t: (t.start, t.end, t.index))


def own_passages(m):
    """(passage, {turn: (first, end)}) for turnbench's own cut: whole turns, or a window's declared words."""
    out = []
    for c in chunk_meeting(m.id, m.turns, max_words=60):
        p = c.passage
        spans = ({t: (a, b) for t, a, b in p.holds} if p.holds else
                 {t: (0, len(next(x for x in m.turns if x.index == t).text.split())) for t in c.turns})
        out.append((p, spans))
    return out


def word_windows(m, size=40):
    """Windows of ``size`` words over the meeting read in (start, end, index) order, across speakers."""
    flat = [(t, i, w) for t in _reading(m) for i, w in enumerate(t.text.split())]
    out = []
    for n, lo in enumerate(range(0, len(flat), size)):
        part = flat[lo:lo + size]
        spans: dict[int, list[int]] = {}
        for t, i, _ in part:
            spans.setdefault(t.index, [i, i + 1])[1] = i + 1
        turns = [t for t, _, _ in part]
        voices = sorted({t.speaker for t in turns})
        one = len(voices) == 1
        p = Passage(f"{m.id}:w{n:04d}", m.id, voices[0] if one else "", min(t.start for t in turns),
                    max(t.end for t in turns), n, text=" ".join(w for _, _, w in part),
                    speakers=None if one else tuple(voices))
        out.append((p, {t: (a, b) for t, (a, b) in spans.items()}))
    return out


def time_slices(m, seconds=30.0):
    """Slices of ``seconds``, speakers unknown, no text: each turn's words apportioned by the seconds inside."""
    out, n, start = [], 0, 0.0
    while start < m.duration:
        end = min(start + seconds, m.duration)
        spans = {}
        for t in m.turns:
            words = len(t.text.split())
            d = t.end - t.start
            if d <= EPS:
                if start - EPS <= t.start <= end + EPS and words:
                    spans[t.index] = (0, words)
                continue
            if min(t.end, end) - max(t.start, start) <= EPS:
                continue
            a = round((max(start, t.start) - t.start) / d * words)
            b = round((min(end, t.end) - t.start) / d * words)
            if b > a:
                spans[t.index] = (a, b)
        out.append((Passage(f"{m.id}:s{n:04d}", m.id, "", start, end, n, speakers=()), spans))
        n, start = n + 1, end
    return out


def expected_grade(spans, gold, answer, lengths, named=None):
    """``named``: the turns of the speaker a query names (None: it names nobody)."""
    held = sum(b - a for a, b in spans.values())
    coverage = sum(b - a for t, (a, b) in spans.items() if t in gold) / held if held else 0.0

    def most(turns):
        return max(((b - a) / lengths[t] if lengths[t] else 1.0 for t, (a, b) in spans.items() if t in turns),
                   default=0.0)

    share = most(answer)
    if share > 0 and share >= ANSWER:
        g = 3
    elif coverage >= HIGH and coverage > 0:
        g = 2
    else:
        g = 1 if coverage > LOW else 0
    if named is not None and not (most(named) > 0 and most(named) >= ANSWER):
        g = min(g, 1)  # the discussion without the named speaker's words
    return g, share


def _both(cut):
    corpus = open_corpus(FIXTURE)
    meetings = list(corpus.iter_meetings())
    inventory = [pair for m in meetings for pair in cut(m)]
    queries = [q for q in corpus.queries() if q.scored_on == "retrieval" and q.gold_level == "turn"]
    got = judge_all(queries, meetings, [p for p, _ in inventory], RelevancePolicy(HIGH, LOW, answer=ANSWER))
    lengths = {m.id: {t.index: len(t.text.split()) for t in m.turns} for m in meetings}
    want: dict[str, dict[str, int]] = {}
    shares: list[tuple[int, float]] = []
    for q in queries:
        want[q.id] = {}
        for p, spans in inventory:
            gold = {i for a, b in q.gold_turns.get(p.meeting, ()) for i in range(a, b + 1)}
            answer = set(q.answer_turns.get(p.meeting, ()))
            if not (set(spans) & (gold | answer)):
                continue
            named = set(q.speaker_turns.get(p.meeting, ())) if q.speaker else None
            g, share = expected_grade(spans, gold, answer, lengths[p.meeting], named)
            if g:
                want[q.id][p.id] = g
            if answer & set(spans):
                shares.append((g, share))
    return {q: dict(j.passages) for q, j in got.queries.items()}, want, shares


@pytest.mark.parametrize("cut", [own_passages, word_windows, time_slices], ids=["own", "40-words", "30-seconds"])
def test_grades_equal_the_stated_rule(cut):
    got, want, shares = _both(cut)
    assert got == want
    assert sum(1 for g, _ in shares if g == 3) > 0


def test_a_window_holding_a_whole_answer_turn_is_grade_3_and_a_sliver_is_not():
    _, _, windows = _both(word_windows)
    _, _, slices = _both(time_slices)
    pairs = windows + slices
    whole = [g for g, share in pairs if share == 1.0]
    slivers = [g for g, share in pairs if 0 < share < 0.1]
    assert whole and set(whole) == {3}
    assert slivers and 3 not in slivers


def test_windows_crossing_speakers_count_every_speakers_gold_words():
    # the case the old rule got wrong: a window holding another speaker's answer words, judged as one speaker's
    got, want, _ = _both(word_windows)
    crossing = {p.id for m in open_corpus(FIXTURE).iter_meetings() for p, _ in word_windows(m) if p.speakers}
    graded = [(q, pid) for q, grades in want.items() for pid in grades if pid in crossing]
    assert graded and all(got[q][pid] == want[q][pid] for q, pid in graded)
