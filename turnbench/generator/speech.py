"""Sessions that say what they are: the series or the team named in speech.

Real meetings often open with "okay, welcome to the weekly vendor review", hand over with "anything else
for the Payments team?" and close with "that is it for this design review", and sometimes say none of it.
So a session opens, hands over and closes with a mention at the rates below, each drawn from several
phrasings of three forms: ``full`` (the team and the kind in a row, "the Payments design review"),
``team`` ("the Payments team") and ``kind`` ("this design review"). ``QUIET_SHARE`` of the sessions never
say what they are; every other session says it at least once, and every series names itself in full at
least once (in the opening of its first session that speaks, when no other mention does). A summarize
question is then answered from what was said, and a title helps without being the only way; the validator
checks every mention and that no session names another series in full.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from turnbench.generator.contracts import content_words
from turnbench.generator.planting import ANYWHERE, CLOSING, OPENING, Plant, Schedule

FULL, TEAM, KIND = "full", "team", "kind"
# position -> (form, phrasing); {T} is the team, {K} the kind
PHRASINGS: dict[str, tuple[tuple[str, str], ...]] = {
    OPENING: (
        (FULL, "Okay, welcome everyone to the {T} {K}."),
        (FULL, "Hi all, this is the {T} {K}, so let us get going."),
        (KIND, "Right, let us get this {K} started."),
        (TEAM, "Morning, good to see the whole {T} team here."),
    ),
    ANYWHERE: (
        (TEAM, "Before I hand over, anything else for the {T} team?"),
        (KIND, "Over to you for the next item on this {K}."),
        (FULL, "Next item for the {T} {K}, over to you."),
    ),
    CLOSING: (
        (FULL, "That is it for this {T} {K}, thanks everyone."),
        (KIND, "Thanks all, see you at the next {K}."),
        (TEAM, "Okay, I think that wraps it up for the {T} team today."),
    ),
}
RATES = {OPENING: 0.45, ANYWHERE: 0.2, CLOSING: 0.3}
POSITION_NAMES = {OPENING: "opening", ANYWHERE: "handover", CLOSING: "closing"}
# This share of sessions never says what it is (fewer when a series would otherwise never name itself).
QUIET_SHARE = 0.3


def phrasing_words() -> frozenset[str]:
    """The content words of every phrasing, without the team and kind they name."""
    return frozenset().union(*(content_words(text.format(T="", K="")) for forms in PHRASINGS.values()
                               for _, text in forms))


def series_mentions(schedule: Schedule, rng: random.Random) -> Iterable[tuple[str, Plant]]:
    """(meeting id, plant) for every mention, series by series, in meeting order within each."""
    quiet = set(rng.sample(schedule.ids, round(len(schedule.ids) * QUIET_SHARE)))
    for sid in sorted(schedule.series_meetings):
        mids = schedule.series_meetings[sid]
        if all(m in quiet for m in mids):
            quiet.discard(mids[0])
        planted: list[tuple[str, Plant]] = []
        for mid in mids:
            if mid in quiet:
                continue
            s = schedule.session_of[mid].series
            positions = [pos for pos in (OPENING, ANYWHERE, CLOSING) if rng.random() < RATES[pos]] or [OPENING]
            for position in positions:
                form, text = PHRASINGS[position][rng.randrange(len(PHRASINGS[position]))]
                planted.append((mid, _mention(mid, s.team, s.kind, position, form, text)))
        if not any(plant.fact["form"] == FULL for _, plant in planted):
            first = next(m for m in mids if m not in quiet)
            s = schedule.session_of[first].series
            form, text = next((f, t) for f, t in PHRASINGS[OPENING] if f == FULL)
            planted = [(m, pl) for m, pl in planted if not (m == first and pl.position == OPENING)]
            planted.insert(0, (first, _mention(first, s.team, s.kind, OPENING, form, text)))
        yield from sorted(planted, key=lambda mp: (mp[0], (OPENING, ANYWHERE, CLOSING).index(mp[1].position)))


def _mention(mid: str, team: str, kind: str, position: str, form: str, text: str) -> Plant:
    return Plant(f"S{mid}.{POSITION_NAMES[position]}", "series_mention", (text.format(T=team, K=kind),),
                 {"team": team, "kind": kind, "form": form, "position": POSITION_NAMES[position]},
                 position=position)
