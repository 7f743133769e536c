"""The exceptions library code raises. Only ``turnbench.cli`` turns them into exit codes."""

from __future__ import annotations

from collections.abc import Sequence


class TurnbenchError(Exception):
    """Base of every error turnbench raises on purpose."""


class BadInput(TurnbenchError):
    """An argument or input file the user gave cannot be used as it is."""


class Refusal(TurnbenchError):
    """turnbench refuses to produce a number that could be wrong (docs/design.md §3 rule 2)."""


class CorpusIntegrityError(Refusal):
    """A corpus file is missing, extra, or does not match its manifest hash; or a published corpus's source file is
    missing, extra, or does not match its release manifest (``corpus.releases``)."""


class VersionDrift(Refusal):
    """The installed generator or a byte-shaping library differs from the recorded one."""


class CheckFailed(TurnbenchError):
    """A check the user asked for ran and failed (a corpus check, a stack that does not answer)."""


class StackStartError(Refusal):
    """A stack service could not be found, started, or made healthy.

    ``log_tail`` holds the last lines of the failing server's log; ``started_pids`` the processes that were
    running when the start gave up (all stopped again), so a caller can check by pid that nothing is left."""

    def __init__(self, message: str, *, log_tail: Sequence[str] = (), started_pids: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.log_tail: tuple[str, ...] = tuple(log_tail)
        self.started_pids: tuple[int, ...] = tuple(started_pids)


class FetchFailed(Refusal):
    """A pinned artifact (a jar, a wheel) is not in the cache and could not be fetched.

    ``replaced`` names the cached files that failed their pinned hash and were removed before the fetch was tried,
    so a fallback that recovers them can still record the repair."""

    def __init__(self, message: str, *, replaced: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.replaced: tuple[str, ...] = tuple(replaced)


class ArtifactMismatch(Refusal):
    """Bytes fetched or found in the cache are not the ones their lock pins (size or sha256): removed, refused."""


class StackStateError(Refusal):
    """The recorded stack state is missing, stale, or conflicts with the request."""


class IndexNotSettled(Refusal):
    """The index did not reach the expected passage and meeting counts."""


class ForeignIndex(Refusal):
    """An index holds data this run did not create."""


class IndexChanged(Refusal):
    """The index a run searched was written to while it ran (documents indexed or deleted by another client): its
    counts after the run are not the ones its claim records."""


class UnknownArm(Refusal):
    """No retrieval arm of that name is defined."""


class UnjudgedPassage(Refusal):
    """A run ranks a passage that is not in the passage inventory."""


class ForeignInventory(Refusal):
    """A passage inventory does not describe this corpus: a meeting, speaker or time span it does not have."""


class StaleBinding(Refusal):
    """A gold target no longer matches the text of the corpus it is bound to."""


class ResultsIntegrityError(Refusal):
    """A results file does not match the digest written with it, or its numbers disagree with each other."""


class NotPublishable(BadInput):
    """A ``--publishable`` command given results or a corpus whose licence tier keeps them out of print (tier B:
    non-commercial, internal use; tier C: the source's own terms, never redistributed)."""


class TierRefused(Refusal):
    """A corpus of licence tier C given to scoring: turnbench records such a corpus (``measure --against`` reads
    it) but never puts a number on it."""


class UnpairedComparison(Refusal):
    """Two results cannot be compared: query sets, corpora or policies differ."""


class ReceiptMismatch(Refusal):
    """A reannotation receipt given to ``compare --across-snapshots`` does not match the two snapshots compared: other
    snapshots, a target that did not change, binding digests or a new gold the results directories do not hold."""


class DifferentGold(Refusal):
    """Two results to be compared were judged against different gold (queries, gold turns or answers, or the
    judgements of one inventory), or a side's judgements are not what its named corpus gives."""


class TruncatedAggregation(Refusal):
    """An aggregation's bucket list hit its size limit, so its count would be a floor."""


class DiskFull(Refusal):
    """The disk filled up while writing; what was being written was removed, so nothing partial is left."""


class GateFailed(TurnbenchError):
    """A comparison gate found a regression."""


class SearchFailed(TurnbenchError):
    """OpenSearch answered a search with an error or a partial (timed-out, shard-failed) result."""


class SettingIgnored(Refusal):
    """The server's answers show it did not apply a setting the arm declares (a pipeline's fusion, say)."""


class NondeterministicRun(Refusal):
    """The same queries, sent twice, were answered differently: no number from this run could be reproduced."""


class EngineFailed(BadInput):
    """A Python engine (the engine protocol) raised, or broke the protocol in what it declared or returned: the
    engine's own bug, reported in one line as the engine's, never as turnbench's."""
