"""Registers: how a meeting sounds — who is in the room, how long people talk, how often they overlap.

A register is a preset of the generator's shape parameters. ``default`` is the corpus the baselines are
recorded on (about 3,000 words a meeting, four or five speakers, medium turns with a long monologue; its shape is
the one whose corpus ranks the agreement family of arms as QMSum does, docs/agreement.md).
``interactive`` is calibrated against QMSum's product meetings (AMI: four people designing a remote
control, many short turns and backchannels); ``formal`` against its committee meetings (parliamentary
inquiries: a chair and many witnesses, long turns, almost no backchannels). ``turnbench measure CORPUS
--against QMSUM`` prints the figures side by side; docs/measurements.md records them.

A register never changes what carries ground truth (planted sentences, queries, answers); it changes
the text around them, so every check holds in every register.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnBand:
    """One band of the bulk turn-length mix: drawn with probability ``weight``, ``lo``..``hi`` words."""

    weight: float
    lo: int
    hi: int


@dataclass(frozen=True)
class Register:
    name: str
    words_per_meeting: int  # used when --words-per-meeting is not given
    team_size: tuple[int, int]
    template_others: tuple[int, int]  # people besides the chair in a series' template roster
    session_others: tuple[int, int]  # people besides the chair in a varied session
    guest_rate: float  # chance a varied session has guests from other teams
    guests: tuple[int, int]
    backchannel_rate: float  # share of bulk blocks that are a backchannel
    fragment_rate: float  # share of bulk blocks that are a short fragment ("Yeah, the remote.")
    turns: tuple[TurnBand, ...]  # the remaining bulk blocks' lengths
    words_per_monologue: int  # one long monologue per this many words (0: none)
    padding: int  # at most this many words of talk on each side of a planted sentence
    shared_start_rate: float  # a turn starts with the previous one
    overlap_rate: float  # a turn starts before the previous one ends
    backchannel_inside_rate: float  # a backchannel starts inside the previous turn
    answer_backchannels: tuple[int, ...] = (0, 0, 1, 1, 2)  # drawn: backchannels between a question and its answer
    words_per_fact: int = 1000  # one lookup fact per this many words (at least 2, at most 4 a meeting)
    words_per_discussion: int = 3000  # one asked-about discussion per this many words (at least 1)
    discussion_turns: tuple[int, int] = (7, 12)  # turns of a discussion block, backchannels aside
    discussion_sentences: tuple[int, int] = (1, 3)  # sentences of a turn in one
    discussion_reactions: float = 0.25  # share of a discussion's turns that are a short reaction ("The latency?")
    context_sentences: tuple[int, int] = (1, 2)  # sentences of topical talk beside a planted fact, each side
    disfluency: float = 0.15  # share of free sentences with a filler, a repeated word or a false start
    markers: float = 0.0  # share of disfluencies written with a transcript marker ({disfmarker}), and of
    # backchannels that are a non-speech sound ({vocalsound}), as the AMI and ICSI transcripts write them

    def facts_per_meeting(self, words: int) -> int:
        return min(4, max(2, round(words / self.words_per_fact)))

    def discussions_per_meeting(self, words: int) -> int:
        return max(1, round(words / self.words_per_discussion))


REGISTERS: dict[str, Register] = {
    r.name: r
    for r in (
        Register(
            name="default", words_per_meeting=3000, team_size=(6, 9), template_others=(3, 5),
            session_others=(2, 5), guest_rate=0.15, guests=(1, 1), backchannel_rate=0.40, fragment_rate=0.20,
            turns=(TurnBand(0.23, 6, 25), TurnBand(0.136, 25, 80), TurnBand(0.034, 80, 180)),
            words_per_monologue=2500, padding=45, shared_start_rate=0.04, overlap_rate=0.08,
            backchannel_inside_rate=0.35, discussion_reactions=0.0,
        ),
        Register(
            name="interactive", words_per_meeting=6000, team_size=(5, 7), template_others=(3, 3),
            session_others=(3, 3), guest_rate=0.0, guests=(1, 1), backchannel_rate=0.24, fragment_rate=0.30,
            turns=(TurnBand(0.29, 3, 10), TurnBand(0.12, 10, 25), TurnBand(0.042, 25, 80),
                   TurnBand(0.008, 80, 200)),
            words_per_monologue=0, padding=12, shared_start_rate=0.06, overlap_rate=0.18,
            backchannel_inside_rate=0.6, words_per_fact=1500, words_per_discussion=3000,
            discussion_turns=(9, 16), discussion_sentences=(1, 2), discussion_reactions=0.55,
            context_sentences=(0, 1), disfluency=0.25, markers=0.5,
        ),
        Register(
            name="formal", words_per_meeting=13000, team_size=(10, 13), template_others=(7, 9),
            session_others=(7, 9), guest_rate=0.8, guests=(1, 4), backchannel_rate=0.005, fragment_rate=0.15,
            turns=(TurnBand(0.19, 5, 15), TurnBand(0.22, 15, 50), TurnBand(0.24, 50, 100),
                   TurnBand(0.16, 100, 200), TurnBand(0.035, 200, 450)),
            words_per_monologue=0, padding=45, shared_start_rate=0.01, overlap_rate=0.03,
            backchannel_inside_rate=0.2, answer_backchannels=(0, 0, 0, 0, 1), words_per_fact=3000,
            words_per_discussion=4500, discussion_turns=(5, 9), discussion_sentences=(3, 6),
            discussion_reactions=0.03, context_sentences=(1, 3), disfluency=0.05,
        ),
    )
}
DEFAULT_REGISTER = "default"
