"""SQLite FTS5 arms (``engine = "sqlite-fts5"``): the passages in an FTS5 table, ranked by its ``bm25()``.

An arm declares, in its ``[fts5]`` table::

    tokenizer = "porter unicode61"       # the table's tokenize option: "unicode61" or "porter unicode61", either
                                         # with "remove_diacritics 0|1|2" after unicode61
    columns = { text = 1.0 }             # the columns the table indexes, each with its bm25() weight (>= 0):
                                         # text (the passage's words) and speaker (who said them)
    join = "OR"                          # optional: how the question's terms are joined, OR (default) or AND

and its body is the FTS5 MATCH expression, with ``{{query_terms}}`` where the question's terms go: the question's
words (runs of letters and digits, as unicode61 splits them; the first spelling of each, case-folded, in order), each
a quoted FTS5 string — so no word of a question is ever read as an operator or a column — joined by the arm's
``join``, in parentheses. ``body = "{{query_terms}}"`` searches every column; ``"text : {{query_terms}}"`` one.
The body is tried on an empty table of the declared tokenizer and columns when the file is read, so a body FTS5
cannot parse is refused before any stack starts.

The table lives in memory (nothing is written to disk; the process's end removes it). Rows are the inventory in the
order it is handed over (rowid = position + 1); a question is answered by ``ORDER BY bm25(...), rowid LIMIT depth``:
equal scores in inventory order, so the depth cut is the same every run. The score recorded is ``-bm25()`` (FTS5's
bm25 is lower-is-better). A question with no term gets no passage, and is counted.

After the load, what SQLite stored is read back before any question: the table's declaration (its columns and
tokenize option, from ``sqlite_master``) must be the arm's; every row's passage text read back must be the text
handed over (a sha256 over all of them); and the tokenizer, rebuilt from the declaration read back into a twin
table, must stem and fold a probe as the declared one does (porter: "Running" is "run"; remove_diacritics: "Café"
is "cafe"). A difference is ``SettingIgnored`` (exit 3), in one line.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from turnbench.errors import BadInput, SettingIgnored

TABLE = "fts5"
PLACEHOLDERS = ("query_terms",)
BATCH = 16
COLUMNS = ("text", "speaker")  # the order of the table's columns, and of bm25()'s weights
JOINS = ("OR", "AND")
TOKENIZER = re.compile(r"(porter )?unicode61( remove_diacritics [012])?")
SETTINGS = {"tokenizer", "columns", "join"}
TERM = re.compile(r"[^\W_]+")
NAME = "passages"
VERIFIED = ("after the load, before any question: the table's columns and tokenize option read back from "
            "sqlite_master, every stored passage text (sha256), and the tokenizer's stemming and folding of a probe "
            "in a twin table declared as read back")
PROBE = "Running Café"


def versions() -> dict[str, str]:
    return {"sqlite": sqlite3.sqlite_version}


def parse(raw: Mapping[str, Any], body: str, where: str) -> dict[str, Any]:
    """The ``[fts5]`` settings, checked, and the body tried on an empty table declared by them."""
    table = raw[TABLE]
    unknown = sorted(set(table) - SETTINGS)
    if unknown:
        raise BadInput(f"{where}: [fts5] has unknown key(s) {', '.join(unknown)}; it takes "
                       f"{', '.join(sorted(SETTINGS))}")
    tokenizer = table.get("tokenizer")
    if not isinstance(tokenizer, str) or not TOKENIZER.fullmatch(tokenizer):
        raise BadInput(f"{where}: [fts5] tokenizer {tokenizer!r} is not \"unicode61\" or \"porter unicode61\" "
                       "(either may end in \"remove_diacritics 0|1|2\")")
    columns = table.get("columns")
    if not isinstance(columns, dict) or not columns or set(columns) - set(COLUMNS):
        raise BadInput(f"{where}: [fts5] columns maps {' and/or '.join(COLUMNS)} to its bm25() weight, "
                       f"not {columns!r}")
    weights: dict[str, float] = {}
    for col in COLUMNS:
        if col in columns:
            w = columns[col]
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise BadInput(f"{where}: [fts5] columns: the weight of {col} must be a finite number >= 0, "
                               f"not {w!r}")
            weights[col] = float(w)
    join = table.get("join", "OR")
    if join not in JOINS:
        raise BadInput(f"{where}: [fts5] join is OR or AND, not {join!r}")
    if "{{query_terms}}" not in re.sub(r"\{\{\s*query_terms\s*\}\}", "{{query_terms}}", body):
        raise BadInput(f"{where}: the body has no {{{{query_terms}}}}, so every question would get the same answer")
    settings = {"tokenizer": tokenizer, "columns": weights, "join": join}
    db = sqlite3.connect(":memory:")
    try:
        db.execute(_create(settings))
        db.execute(f"SELECT rowid FROM {NAME} WHERE {NAME} MATCH ?", (match(body, ["sample", "question"], join),))
    except sqlite3.Error as exc:
        raise BadInput(f"{where}: the body is not an FTS5 query over columns {', '.join(weights)} ({exc})") from None
    finally:
        db.close()
    return settings


def terms(text: str) -> list[str]:
    """The question's words as unicode61 splits them (letters and digits), the first spelling of each."""
    seen: dict[str, str] = {}
    for word in TERM.findall(text):
        seen.setdefault(word.casefold(), word)
    return list(seen.values())


def match(body: str, words: Sequence[str], join: str) -> str:
    """The MATCH expression: the body with ``{{query_terms}}`` replaced by the quoted words joined by ``join``."""
    quoted = "(" + f" {join} ".join('"' + w.replace('"', '""') + '"' for w in words) + ")"
    return re.sub(r"\{\{\s*query_terms\s*\}\}", lambda _m: quoted, body)


def _create(settings: Mapping[str, Any], name: str = NAME) -> str:
    cols = ", ".join(settings["columns"])
    return f"CREATE VIRTUAL TABLE {name} USING fts5({cols}, tokenize = '{settings['tokenizer']}')"


def open(arm: Any) -> Fts5Store:  # noqa: A001 - the family interface's name
    return Fts5Store(arm.body, arm.settings, arm.name)


class Fts5Store:
    """One run's in-memory FTS5 table."""

    batch = BATCH

    def __init__(self, body: str, settings: Mapping[str, Any], arm: str) -> None:
        self.body, self.settings, self.arm = body, dict(settings), arm
        self.db = sqlite3.connect(":memory:")
        self.ids: list[str] = []
        self.texts_sha256 = ""
        weights = ", ".join(repr(w) for w in self.settings["columns"].values())
        self.sql = (f"SELECT rowid, bm25({NAME}, {weights}) AS s FROM {NAME} WHERE {NAME} MATCH ? "
                    "ORDER BY s, rowid LIMIT ?")

    def load(self, passages: Sequence[Any]) -> None:
        cols = list(self.settings["columns"])
        self.db.execute(_create(self.settings))
        rows = [(n + 1, *(_value(p, c) for c in cols)) for n, p in enumerate(passages)]
        marks = ", ".join("?" * (len(cols) + 1))
        with self.db:
            self.db.executemany(f"INSERT INTO {NAME} (rowid, {', '.join(cols)}) VALUES ({marks})", rows)
        self.ids = [p.id for p in passages]
        self.texts_sha256 = _digest((n + 1, p.text or "") for n, p in enumerate(passages))

    def verify(self) -> dict[str, Any]:
        where = f"arm {self.arm} (sqlite-fts5)"
        (sql,) = self.db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (NAME,)).fetchone()
        declared = re.fullmatch(rf"CREATE VIRTUAL TABLE {NAME} USING fts5\((.*), tokenize = '([^']*)'\)", sql)
        stored = {"columns": declared.group(1).split(", ") if declared else None,
                  "tokenizer": declared.group(2) if declared else None}
        if stored != {"columns": list(self.settings["columns"]), "tokenizer": self.settings["tokenizer"]}:
            raise SettingIgnored(f"{where}: SQLite stored the table as {sql!r}, not as the arm declares it")
        count = self.db.execute(f"SELECT count(*) FROM {NAME}").fetchone()[0]
        if count != len(self.ids):
            raise SettingIgnored(f"{where}: the table holds {count} rows, not the {len(self.ids)} passages loaded")
        if "text" in self.settings["columns"]:
            read = _digest(self.db.execute(f"SELECT rowid, text FROM {NAME} ORDER BY rowid"))
            if read != self.texts_sha256:
                raise SettingIgnored(f"{where}: the passage texts read back are not the texts loaded")
        probe = self._probe(sql)
        if probe != expected_probe(self.settings["tokenizer"]):
            raise SettingIgnored(f"{where}: the stored tokenizer turns {PROBE!r} into {sorted(probe)}, not "
                                 f"{sorted(expected_probe(self.settings['tokenizer']))} as "
                                 f"{self.settings['tokenizer']!r} does")
        return {**stored, "rows": count, "probe": sorted(probe)}

    def _probe(self, sql: str) -> set[str]:
        twin = sql.replace(f"CREATE VIRTUAL TABLE {NAME} ", "CREATE VIRTUAL TABLE temp.probe ", 1)
        col = next(iter(self.settings["columns"]))
        try:
            self.db.execute(twin)
            self.db.execute(f"INSERT INTO temp.probe ({col}) VALUES (?)", (PROBE,))
            self.db.execute("CREATE VIRTUAL TABLE temp.probe_vocab USING fts5vocab(temp, probe, 'row')")
            return {t for (t,) in self.db.execute("SELECT term FROM temp.probe_vocab")}
        finally:
            self.db.execute("DROP TABLE IF EXISTS temp.probe_vocab")
            self.db.execute("DROP TABLE IF EXISTS temp.probe")

    def query(self, questions: Sequence[Any], depth: int) -> list[list[tuple[str, float]]]:
        out: list[list[tuple[str, float]]] = []
        for q in questions:
            words = terms(q.text)
            if not words:
                out.append([])
                continue
            rows = self.db.execute(self.sql, (match(self.body, words, self.settings["join"]), depth)).fetchall()
            out.append([(self.ids[rowid - 1], 0.0 - score) for rowid, score in rows])
        return out

    def close(self) -> None:
        self.db.close()


def expected_probe(tokenizer: str) -> set[str]:
    """What the declared tokenizer makes of :data:`PROBE`: porter stems "running" to "run"; unicode61 folds case
    and, unless ``remove_diacritics 0``, the accent."""
    running = "run" if tokenizer.startswith("porter ") else "running"
    cafe = "café" if tokenizer.endswith("remove_diacritics 0") else "cafe"
    return {running, cafe}


def _value(p: Any, column: str) -> str:
    if column == "text":
        return str(p.text or "")
    return " ".join(p.speakers) if p.speakers else p.speaker


def _digest(rows: Any) -> str:
    h = hashlib.sha256()
    for rowid, text in rows:
        h.update(f"{rowid}\t".encode())
        h.update(str(text).encode())
        h.update(b"\n")
    return h.hexdigest()
