"""The seeded synthetic meeting-corpus generator, its validator and the self-measure."""
