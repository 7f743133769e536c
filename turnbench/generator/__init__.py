"""The seeded, model-free meeting-corpus generator (DESIGN §5) and its validator.

Steps, one module each: ``config`` (resolved options, derived seeds), ``register`` (how meetings sound),
``vocab`` (word lists), ``org`` (teams, rosters, series, dates), ``sessions`` (who is invited to and speaks
in each session, what it discusses, the invitee trap), ``names`` (invented subjects), ``templates`` (how
facts and questions are phrased), ``paraphrase`` (questions across a lexical gap, and their aliases),
``speech`` (sessions naming their series), ``plan`` and ``plan_aggregation`` (the global planting plan,
records in ``planting``), ``render`` (one meeting's transcript), ``queries`` (gold from where things were
written), ``generate`` (orchestration and the manifest). ``contracts`` holds what the generator writes
and the validator reads back; ``validate`` re-derives every gold item from the text on disk with the
synthetic checks (``scan``, ``checks``, ``aggregation_checks``) beside the generic ones of
``turnbench.corpus.checks``; ``measure`` reports how hard a corpus is for plain BM25, ``realism`` how much
it sounds like real meetings, ``measure_report`` prints both.
"""

# Bump whenever the same seed and options would produce different bytes.
GENERATOR_VERSION = 2
PRODUCER_NAME = "turnbench.generator"


def generator_version() -> str:
    from turnbench.version import __version__

    return f"{__version__}+g{GENERATOR_VERSION}"
