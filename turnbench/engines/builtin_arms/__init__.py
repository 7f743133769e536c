"""The built-in retrieval arms, as arm files (see turnbench.engines.arms)."""
