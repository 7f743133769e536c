"""The answer engine for aggregation questions (DESIGN §8): the reference answerer and the floor."""
