"""What a reuse proves a settled load with (issue 40): a record in the state directory and the content read back.

A load records what it wrote where only turnbench writes — ``$TURNBENCH_STATE_DIR/loads/<sha256 of the index
name>.json``, never the index's own mapping (anyone can rewrite ``_meta``): the index's uuid, the marker it put on
the index, the provenance, a digest of every passage document it sent (its ``_id`` and ``_source``, vectors
included) and a digest of every table in PostgreSQL's ``turnbench`` schema. The record is removed before a load
writes anything and written once it has settled, so a load that did not finish leaves none.

A reuse reads the index back (every document, by a scroll in ``_doc`` order, its ``_source`` hashed per passage and
the digests combined per meeting and over meetings in id order) and digests the tables again, server-side, and keeps
the load only when both equal the record. What a stage searches derives from the ``_source`` through the settings
and the mapping, whose hashes the provenance compares; so the same sources, settings and mapping are the same index.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turnbench import canonical, settings
from turnbench.errors import TurnbenchError

if TYPE_CHECKING:
    import psycopg
    from opensearchpy import OpenSearch

    from turnbench.passages import Passage

RECORD_FORMAT = "turnbench-load-record/1"
RECORDS = "loads"
# documents per scroll page: 5,000 (the most a page may hold is 10,000) costs the server half of what 1,000 do at
# 200 meetings; with vectors a page of 1,000 is already ~8 MB of JSON
SCROLL_PAGE = 5000
SCROLL_PAGE_VECTORS = 1000
# the session settings a row's text depends on, fixed so the digest is the same whoever's session computes it
_ROW_TEXT_SETTINGS = (("DateStyle", "ISO, YMD"), ("extra_float_digits", "1"), ("IntervalStyle", "postgres"),
                      ("bytea_output", "hex"), ("TimeZone", "UTC"))

PassageDigests = dict[str, tuple[str, str]]  # passage id -> (meeting id, digest of its document)


# -- the record -------------------------------------------------------------------------------------------------

def record_path(index: str) -> Path:
    return settings.state_dir() / RECORDS / f"{canonical.sha256_bytes(index.encode())[:32]}.json"


def read_record(index: str) -> dict[str, Any] | None:
    """The record of the last settled load into ``index`` from this state directory; None when there is none or it
    is not one turnbench wrote (a reuse then loads again)."""
    try:
        raw = canonical.parse_json(record_path(index).read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict) or raw.get("format") != RECORD_FORMAT or raw.get("index") != index:
        return None
    return raw


def inventory_path(index: str) -> Path:
    return record_path(index).with_suffix(".passages.jsonl")


def forget(index: str) -> None:
    """Remove the record (and the inventory kept beside it) before a load writes either store: from then on nothing
    vouches for ``index``. Best effort: a record left behind (a state directory that cannot be written) still cannot
    vouch for other content, which is what a reuse compares, nor for another index instance (its uuid); an inventory
    left behind is used only when it hashes to what the index's marker records."""
    for path in (record_path(index), inventory_path(index)):
        with contextlib.suppress(OSError):
            os.unlink(path)


def write_record(index: str, record: Mapping[str, Any]) -> bool:
    """Keep the record of a settled load; False when the state directory cannot take it (the load stands, and the
    next bench or load, finding no record, loads again)."""
    try:
        canonical.write_json(record_path(index), {**record, "format": RECORD_FORMAT, "index": index})
    except (TurnbenchError, OSError):
        return False
    return True


def keep_inventory(index: str, passages: Iterable[Passage]) -> str:
    """Keep a load's passage inventory beside its record, as passages.jsonl's bytes, and return its sha256, hashed as
    they are written. A run reads it there instead of from PostgreSQL (no client to import, nothing to encode or hash
    again), and only when that sha256 is the one a settled index's marker records: kept before the load settles, it
    vouches for nothing until then. When the state directory cannot take it the sha256 is still returned (a run
    then reads PostgreSQL)."""
    from turnbench.passages import canonical_blocks, inventory_sha256

    h = hashlib.sha256()

    def hashed() -> Iterator[bytes]:
        for block in canonical_blocks(passages):
            h.update(block)
            yield block

    try:
        canonical.write_bytes_atomic(inventory_path(index), hashed())
    except (TurnbenchError, OSError):
        return inventory_sha256(passages)
    return h.hexdigest()


def kept_inventory(index: str) -> tuple[Sequence[Passage], str, bytes] | None:
    """The inventory the last settled load into ``index`` kept in this state directory, from one read of its bytes:
    the passages (held as those bytes, read into records only when one is asked for: ``PassageLines``), the bytes'
    sha256 (which the caller holds against the marker's) and the bytes; None when there is none, or a line is not
    JSON naming a passage's id and meeting (the caller then reads PostgreSQL). What the lines hold beyond that is the
    sha256's to vouch for: the marker names the bytes the load wrote, every line a passage."""
    from turnbench.passages import PassageLines

    try:
        data = inventory_path(index).read_bytes()
    except OSError:
        return None
    passages = PassageLines(data)
    try:
        passages.ids_and_meetings()
    except ValueError:  # msgspec's DecodeError and ValidationError are ValueErrors
        return None
    return passages, hashlib.sha256(data).hexdigest(), data


# -- the index's documents --------------------------------------------------------------------------------------

def document_digest(passage_id: str, source: Mapping[str, Any], vector_field: str | None) -> str:
    """sha256 of a passage document: its id, its ``_source`` as canonical JSON and, when it has the vector field as a
    list of numbers, that vector's components as float64 bytes (the same numbers, far cheaper than their text)."""
    h = hashlib.sha256(passage_id.encode("utf-8", "surrogatepass") + b"\0")
    vector = source.get(vector_field) if vector_field is not None else None
    if isinstance(vector, list) and all(type(x) in (float, int) for x in vector):
        h.update(canonical.dumps({k: v for k, v in source.items() if k != vector_field}).encode("utf-8",
                                                                                              "surrogatepass"))
        h.update(b"\0vector\0" + array("d", vector).tobytes())
    else:
        h.update(canonical.dumps(source).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def combine(digests: PassageDigests) -> dict[str, Any]:
    """The passages' digests combined: per meeting (its passages in id order) and over the meetings in id order."""
    per_meeting: dict[str, Any] = {}  # meeting id -> its running sha256
    for pid in sorted(digests):
        meeting, digest = digests[pid]
        per_meeting.setdefault(meeting, hashlib.sha256()).update(f"{pid}\0{digest}\n".encode("utf-8",
                                                                                          "surrogatepass"))
    meetings = {m: h.hexdigest() for m, h in sorted(per_meeting.items())}
    overall = hashlib.sha256("".join(f"{m}\0{d}\n" for m, d in meetings.items()).encode("utf-8", "surrogatepass"))
    return {"count": len(digests), "sha256": overall.hexdigest(), "per_meeting": meetings}


def read_documents(client: OpenSearch, index: str, vector_field: str | None) -> PassageDigests:
    """Every document the index holds, read back by a scroll in ``_doc`` order, as its passage digest."""
    out: PassageDigests = {}
    keep = "_scroll_id,hits.hits._id,hits.hits._source"
    resp = client.search(index=index, scroll="2m", size=SCROLL_PAGE if vector_field is None else SCROLL_PAGE_VECTORS,
                         body={"sort": ["_doc"]}, params={"filter_path": keep})
    scroll_id = resp.get("_scroll_id")
    try:
        while True:
            hits = (resp.get("hits") or {}).get("hits") or []
            if not hits:
                break
            for hit in hits:
                source = hit.get("_source") or {}
                meeting = source.get("meeting_id")
                out[hit["_id"]] = (meeting if isinstance(meeting, str) else "",
                                   document_digest(hit["_id"], source, vector_field))
            resp = client.scroll(scroll_id=scroll_id, scroll="2m", params={"filter_path": keep})
            scroll_id = resp.get("_scroll_id") or scroll_id
    finally:
        if scroll_id:
            try:
                client.clear_scroll(scroll_id=scroll_id)
            except Exception:  # noqa: BLE001 - a scroll left open expires on its own; the digest is already read
                pass
    return out


def first_meeting_differing(recorded: Mapping[str, Any], got: Mapping[str, Any]) -> str | None:
    """The first meeting id (in id order) whose passages' digest differs between two combined digests."""
    a, b = recorded.get("per_meeting") or {}, got.get("per_meeting") or {}
    return next((m for m in sorted(set(a) | set(b)) if a.get(m) != b.get(m)), None)


# -- the tables -------------------------------------------------------------------------------------------------

def tables_digest(cur: psycopg.Cursor[Any], schema: str) -> dict[str, Any]:
    """Every relation in ``schema``: its kind, its columns and types, its row count and the sha256 of its rows (each
    row's text hashed by the server, the hashes sorted, so neither order nor collation matters)."""
    for name, value in _ROW_TEXT_SETTINGS:
        cur.execute("SELECT set_config(%s, %s, true)", (name, value))
    cur.execute("SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'v', 'm', 'p', 'f') ORDER BY c.relname COLLATE \"C\"",
                (schema,))
    relations = [(str(name), str(kind)) for name, kind in cur.fetchall()]
    out: dict[str, Any] = {}
    for name, kind in relations:
        cur.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = %s AND "
                    "table_name = %s ORDER BY ordinal_position", (schema, name))
        columns = [f"{c} {t}" for c, t in cur.fetchall()]
        quoted = '"' + name.replace('"', '""') + '"'
        cur.execute(f"SELECT count(*), encode(sha256(coalesce(string_agg(h, ''::bytea ORDER BY h), ''::bytea)), "
                    f"'hex') FROM (SELECT sha256(convert_to(t::text, 'UTF8')) AS h FROM {schema}.{quoted} t) s")
        row = cur.fetchone()
        out[name] = {"kind": kind, "columns": columns, "rows": int(row[0]) if row else -1,
                     "sha256": str(row[1]) if row else ""}
    return out


def first_table_differing(recorded: Mapping[str, Any], got: Mapping[str, Any]) -> str | None:
    return next((t for t in sorted(set(recorded) | set(got)) if recorded.get(t) != got.get(t)), None)


def passage_digests(pairs: Iterable[tuple[str, str, Mapping[str, Any]]], vector_field: str | None) -> PassageDigests:
    return {pid: (meeting, document_digest(pid, source, vector_field)) for pid, meeting, source in pairs}
