"""Results: the record of a scored run (``record``, a contract every stage may read) and the directory that holds
one on disk (``directory``: the one reader, which opens, verifies and re-derives, and the one writer)."""
