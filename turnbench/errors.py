"""The exceptions library code raises. Only ``turnbench.cli`` turns them into exit codes."""


class TurnbenchError(Exception):
    """Base of every error turnbench raises on purpose."""


class BadInput(TurnbenchError):
    """An argument or input file the user gave cannot be used as it is."""


class Refusal(TurnbenchError):
    """turnbench refuses to produce a number that could be wrong (DESIGN §3 rule 2)."""


class CorpusIntegrityError(Refusal):
    """A corpus file is missing, extra, or does not match its manifest hash."""


class VersionDrift(Refusal):
    """The installed generator or a byte-shaping library differs from the recorded one."""


class StackStartError(Refusal):
    """A stack service could not be found, started, or made healthy."""


class StackStateError(Refusal):
    """The recorded stack state is missing, stale, or conflicts with the request."""


class IndexNotSettled(Refusal):
    """The index did not reach the expected passage and meeting counts."""


class ForeignIndex(Refusal):
    """An index holds data this run did not create."""


class UnknownArm(Refusal):
    """No retrieval arm of that name is defined."""


class UnjudgedPassage(Refusal):
    """A run ranks a passage that is not in the passage inventory."""


class StaleBinding(Refusal):
    """A gold target no longer matches the text of the corpus it is bound to."""


class UnpairedComparison(Refusal):
    """Two results cannot be compared: query sets, corpora or policies differ."""


class TruncatedAggregation(Refusal):
    """An aggregation's bucket list hit its size limit, so its count would be a floor."""


class GateFailed(TurnbenchError):
    """A comparison gate found a regression."""


class SearchFailed(TurnbenchError):
    """OpenSearch answered a search with an error or a partial (timed-out, shard-failed) result."""
