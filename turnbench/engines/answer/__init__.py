"""The answer engine for aggregation questions (docs/design.md §8): the reference answerer and the floor."""
