"""PostgreSQL full-text search on the stack's own PostgreSQL: a second server-side engine, no new service.

``index`` copies the passages it is handed (id, inventory position, text) into a TEMPORARY table on one connection
of its own — nothing is left on the server when the connection closes, and no table of the loaded corpus is
touched — with a ``tsvector`` column PostgreSQL computes (``to_tsvector('english', text)``: the english snowball
stemmer and stop words) and a GIN index over it. ``search`` turns each question into the OR of its own lexemes
(any word may match, as the ``bm25`` arm's match query does), keeps the passages it matches (``@@``) and ranks them
by ``ts_rank_cd`` (cover density, normalisation 0; ``engine_ts_rank``: ``ts_rank``, term frequency), equal ranks in
inventory order, in SQL. A question with no lexeme (only stop words) gets no passage, and is counted.

The rank is a float4 the server computes; the same PostgreSQL major ranks alike on every provider (embedded,
docker, external), which the integration suite checks on each leg.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from turnbench.engines.protocol import EngineContext, Question
from turnbench.passages import Passage

CONFIG = "english"
TABLE = "turnbench_pg_fulltext"
RANKS = ("ts_rank_cd", "ts_rank")
# The question's lexemes, each quoted as tsquery input wants (a quote doubled, a backslash escaped), joined by |.
QUOTED = r"'''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || ''''"
SEARCH = (
    "WITH asked AS (SELECT string_agg(" + QUOTED + ", ' | ')::tsquery AS query "
    "FROM unnest(to_tsvector('{config}', %s))) "
    "SELECT p.id, {rank}(p.tsv, asked.query, {normalisation}) AS score FROM {table} p, asked "
    "WHERE asked.query IS NOT NULL AND p.tsv @@ asked.query ORDER BY score DESC, p.ord LIMIT %s"
)


class PgFullTextEngine:
    version = "1"

    def __init__(self, rank: str = "ts_rank_cd", normalisation: int = 0, name: str = "pg-fulltext") -> None:
        if rank not in RANKS or normalisation not in range(64):
            raise ValueError(f"rank is one of {', '.join(RANKS)} and normalisation a bit mask 0..63")
        self.name = name
        self.config = {"text_search_config": CONFIG, "document": "to_tsvector(config, passage text), GIN index",
                       "query": "the OR of the question's own lexemes (to_tsvector of the question)",
                       "rank": f"{rank}(tsvector, query, {normalisation})", "hits": "passages matching any lexeme",
                       "ties": "inventory order", "table": "temporary, on the engine's own connection"}
        self._sql = SEARCH.format(config=CONFIG, rank=rank, normalisation=normalisation, table=TABLE)
        self._conn: Any = None

    def index(self, passages: Sequence[Passage], context: EngineContext) -> None:
        import psycopg

        self.close()
        self._conn = psycopg.connect(context.postgres_dsn, autocommit=True)
        with self._conn.cursor() as cur:
            cur.execute(f"CREATE TEMPORARY TABLE {TABLE} (ord integer NOT NULL, id text NOT NULL, body text NOT NULL,"
                        f" tsv tsvector GENERATED ALWAYS AS (to_tsvector('{CONFIG}', body)) STORED)")
            with cur.copy(f"COPY {TABLE} (ord, id, body) FROM STDIN") as copy:
                for n, p in enumerate(passages):
                    copy.write_row((n, p.id, p.text or ""))
            cur.execute(f"CREATE INDEX ON {TABLE} USING gin (tsv)")
            cur.execute(f"ANALYZE {TABLE}")

    def search(self, questions: Sequence[Question], depth: int) -> list[list[tuple[str, float]]]:
        out = []
        with self._conn.cursor() as cur:
            for q in questions:
                cur.execute(self._sql, (q.text, depth))
                out.append([(pid, float(score)) for pid, score in cur.fetchall()])
        return out

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def engine() -> PgFullTextEngine:
    """Cover density, as the issue asked for: ``ts_rank_cd`` with normalisation 0."""
    return PgFullTextEngine()


def engine_ts_rank() -> PgFullTextEngine:
    """Term frequency instead of cover density: ``ts_rank`` with normalisation 0."""
    return PgFullTextEngine("ts_rank", 0, "pg-fulltext-ts-rank")
