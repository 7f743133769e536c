"""Loading (docs/design.md §9): a corpus into a stack — PostgreSQL rows and OpenSearch passages — settled,
with the provenance every result records. ``load_corpus`` is the sequence; the index, the tables, the chunking,
the vectors and the capacity check are its parts."""
