"""The seeded, model-free meeting-corpus generator (docs/design.md §5) and its validator.

Steps, one module each: ``config`` (resolved options, derived seeds), ``register`` (how meetings sound),
``wordlists`` (word lists), ``org`` (teams, rosters, series, dates), ``subjects`` (what meetings talk about, named as
people name things), ``sessions`` (who is invited to and speaks in each session, what it discusses, the invitee
trap), ``names`` (the few invented code words), ``templates`` (how facts, discussions and questions are phrased),
``lexicon`` (questions at a calibrated distance from their evidence), ``speech`` (sessions naming their series),
``plan`` and ``plan_aggregation`` (the global planting plan, records in ``planting``), ``talk`` (talk about a
subject: the context of a fact, discussions), ``noise`` (disfluencies, transcript markers, the ASR preset),
``transcript`` (one meeting's transcript), ``queries`` (gold from where things were written), ``generate``
(orchestration and the manifest). ``contracts`` holds what the generator writes and the validator reads back;
``validate`` re-derives every gold item from the text on disk with the synthetic checks (``scan``, ``checks``,
``aggregation_checks``) beside the generic ones of ``turnbench.corpus.checks``; ``measure`` reports how hard a
corpus is for plain BM25 and how far its questions are from their evidence, ``realism`` how much it sounds like
real meetings, ``measure_report`` prints them. (The check that needs an encoder, ``surface_cosine``, lives in
``turnbench.engines.surfaces``.)
"""

# Bump whenever the same seed and options would produce different bytes. 5: corpus v5 (docs/generator.md, Versions).
GENERATOR_VERSION = 5
PRODUCER_NAME = "turnbench.generator"


def generator_version() -> str:
    from turnbench.version import __version__

    return f"{__version__}+g{GENERATOR_VERSION}"
