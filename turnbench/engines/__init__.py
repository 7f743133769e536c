"""Engines under test: retrieval arms on OpenSearch and the answer engine."""

# how many clients send a run's _msearch batches; here, not in retrieval, so the CLI's options name them without
# importing the OpenSearch client
DEFAULT_CONCURRENCY = 2  # two clients keep both of a small machine's cores busy: measured in benchmarks/run.py
MAX_CONCURRENCY = 32
