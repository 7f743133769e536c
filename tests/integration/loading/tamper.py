"""What the hostile round did to a loaded stack, for the reuse tests and the fault table's "reuse" rows."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from turnbench.loading import index as ix

Documents = dict[str, dict[str, Any]]


def documents(client: Any, index: str) -> Documents:
    """Every document of ``index``: its ``_id`` and ``_source``."""
    out: Documents = {}
    resp = client.search(index=index, scroll="1m", size=1000, body={"sort": ["_doc"]})
    while resp["hits"]["hits"]:
        out.update({h["_id"]: h["_source"] for h in resp["hits"]["hits"]})
        resp = client.scroll(scroll_id=resp["_scroll_id"], scroll="1m")
    client.clear_scroll(scroll_id=resp["_scroll_id"])
    return out


def rewrite_every_document(client: Any, index: str, change: Callable[[Documents], Documents]) -> None:
    """Close and open the index (its indexing totals start again at 0), write every document once more (``change``
    edits some), force-merge to one segment until no deleted document is left: counts, indexing totals, deleted
    documents, settings and mapping are what they were."""
    from opensearchpy import helpers

    docs = documents(client, index)
    client.indices.close(index=index)
    client.indices.open(index=index, params={"wait_for_active_shards": "all"})
    client.cluster.health(index=index, wait_for_status="yellow")
    changed = change(docs)
    helpers.bulk(client, [{"_index": index, "_id": pid, "_source": changed[pid]} for pid in sorted(changed)])
    # the overwritten documents stay (soft-deleted) until the shard's retention lease moves past them, synced every
    # 30 s: flushed and merged again until none is left
    deadline = time.monotonic() + 120
    while True:
        client.indices.flush(index=index)
        client.indices.forcemerge(index=index, max_num_segments=1)
        client.indices.refresh(index=index)
        if not ix.index_provenance(client, index)["docs_deleted"] or time.monotonic() > deadline:
            break
        time.sleep(2)


def blank_meeting(meeting: str) -> Callable[[Documents], Documents]:
    """Every passage of ``meeting`` with its text blanked, the others as they were."""
    def change(docs: Documents) -> Documents:
        return {pid: ({**src, "content": [""] * len(src["content"])} if src["meeting_id"] == meeting else src)
                for pid, src in docs.items()}
    return change


def first_meeting(client: Any, index: str) -> str:
    return sorted({src["meeting_id"] for src in documents(client, index).values()})[0]
