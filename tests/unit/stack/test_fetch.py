"""turnbench.stack.fetch: pinned files land in the store only with their pinned bytes; nothing partial stays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.unit.stack.helpers import pinned
from turnbench.errors import ArtifactMismatch, BadInput, FetchFailed
from turnbench.stack import fetch


def _leftovers(store):
    return sorted(p.name for p in store.rglob("*") if p.is_file())


def test_fetches_verifies_and_then_reads_only_the_cache(files, tmp_path):
    store = tmp_path / "store"
    items = [pinned(files, f"a{i}-1.0.jar", os.urandom(5000 + i)) for i in range(6)]
    report = fetch.ensure(items, store, workers=3)
    assert report.fetched == tuple(i.file for i in items) and report.replaced == ()
    assert [p.read_bytes() for p in report.paths] == [files.routes[f"/{i.file}"] for i in items]
    assert all(p == store / i.sha256 / i.file for p, i in zip(report.paths, items, strict=True))
    again = fetch.ensure(items, store)
    assert again.fetched == () and sum(files.hits.values()) == 6


def test_a_tampered_cached_file_is_removed_and_fetched_again(files, tmp_path):
    store = tmp_path / "store"
    item = pinned(files, "lucene-core-9.12.3.jar", b"the pinned bytes" * 100)
    path = fetch.ensure([item], store).paths[0]
    path.write_bytes(b"THE pinned bytes" * 100)  # same size, other bytes
    report = fetch.ensure([item], store)
    assert report.replaced == ("lucene-core-9.12.3.jar",) and report.fetched == ("lucene-core-9.12.3.jar",)
    assert path.read_bytes() == b"the pinned bytes" * 100


def test_a_tampered_cached_file_offline_is_removed_and_refused(files, tmp_path):
    store = tmp_path / "store"
    item = pinned(files, "x-1.jar", b"abc" * 10)
    path = fetch.ensure([item], store).paths[0]
    path.write_bytes(b"abd" * 10)
    with pytest.raises(FetchFailed, match=r"1 jars not in the cache .* \(first: x-1.jar\): fetch them first"):
        fetch.ensure([item], store, offline=True, what="jars")
    assert not path.exists()


def test_wrong_bytes_from_the_server_are_refused_and_nothing_is_kept(files, tmp_path):
    store = tmp_path / "store"
    good = pinned(files, "good-1.jar", b"g" * 1000)
    bad = pinned(files, "bad-1.jar", b"b" * 1000)
    files.routes["/bad-1.jar"] = b"c" * 1000
    with pytest.raises(ArtifactMismatch) as err:
        fetch.ensure([good, bad], store)
    message = str(err.value)
    assert message.startswith(f"bad-1.jar from {files.url}/bad-1.jar: 1000 bytes with sha256 ")
    assert message.endswith(f"its lock pins 1000 bytes with sha256 {bad.sha256}; removed, refused")
    assert "bad-1.jar" not in _leftovers(store) and not any(n.endswith(".part") for n in _leftovers(store))


def test_more_bytes_than_pinned_are_refused(files, tmp_path):
    item = pinned(files, "big-1.jar", b"x" * 100)
    files.routes["/big-1.jar"] = b"x" * 10_000_000
    with pytest.raises(ArtifactMismatch, match="more than the 100 bytes its lock pins"):
        fetch.ensure([item], tmp_path / "store")
    assert _leftovers(tmp_path / "store") == []


def test_http_errors_are_one_line_and_only_server_errors_are_retried(files, tmp_path):
    missing = pinned(files, "gone-1.jar", b"x")
    files.routes["/gone-1.jar"] = 404
    with pytest.raises(FetchFailed, match=r"could not fetch http://127.0.0.1:\d+/gone-1.jar: HTTP 404"):
        fetch.ensure([missing], tmp_path / "store")
    assert files.hits["/gone-1.jar"] == 1
    flaky = pinned(files, "flaky-1.jar", b"y")
    files.routes["/flaky-1.jar"] = 503
    with pytest.raises(FetchFailed, match="HTTP 503"):
        fetch.ensure([flaky], tmp_path / "store")
    assert files.hits["/flaky-1.jar"] == fetch.ATTEMPTS


def test_unreachable_server_is_one_line(tmp_path):
    item = fetch.Pinned("a-1.jar", "0" * 64, 1, "http://127.0.0.1:9/a-1.jar")
    with pytest.raises(FetchFailed) as err:
        fetch.ensure([item], tmp_path / "store")
    assert str(err.value).startswith("could not fetch http://127.0.0.1:9/a-1.jar: ") and "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["../evil.jar", ".hidden.jar", "a/b.jar", "", "x" * 300])
def test_unsafe_file_names_are_bad_input(name):
    with pytest.raises(BadInput, match="not a pinned file"):
        fetch.Pinned(name, "0" * 64, 1, None)


def test_a_sha256_that_is_not_one_is_bad_input():
    with pytest.raises(BadInput):
        fetch.Pinned("a-1.jar", "abc", 1, None)


def test_an_unwritable_store_is_bad_input(files, tmp_path):
    item = pinned(files, "a-1.jar", b"abc")
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(BadInput, match="cannot write here|cannot be made there"):
        fetch.ensure([item], tmp_path / "file" / "store")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_fetch_leaves_no_half_file(files, tmp_path, sig):
    """SIGTERM ends through cleanup (the temporary file goes); after SIGKILL it stays under a temporary name
    only, and the next fetch of that file sweeps it."""
    store = tmp_path / "store"
    body = os.urandom(200_000)
    item = pinned(files, "slow-1.jar", body)
    files.routes["/slow-1.jar"] = ("stall", body[:100_000])
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from turnbench.signals import terminating_raises
        from turnbench.stack.fetch import Pinned, ensure
        with terminating_raises():
            ensure([Pinned("slow-1.jar", sys.argv[2], 200000, sys.argv[3])], Path(sys.argv[1]))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(store), item.sha256, str(item.url)])
    deadline = time.monotonic() + 20
    while not list(store.rglob(".slow-1.jar.*.part")) and time.monotonic() < deadline:
        time.sleep(0.05)
    parts = list(store.rglob(".slow-1.jar.*.part"))
    assert parts, "the fetch never started writing"
    while parts[0].stat().st_size == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    assert proc.wait(timeout=20) == (143 if sig == signal.SIGTERM else -signal.SIGKILL)
    assert not (store / item.sha256 / "slow-1.jar").exists()
    left = [n for n in _leftovers(store) if n.endswith(".part")]
    assert left == ([] if sig == signal.SIGTERM else [parts[0].name])
    files.routes["/slow-1.jar"] = body
    report = fetch.ensure([item], store)
    assert report.paths[0].read_bytes() == body and _leftovers(store) == ["slow-1.jar"]


def test_install_places_verified_bytes_from_a_stream(tmp_path):
    import hashlib
    import io

    body = b"inner jar"
    item = fetch.Pinned("inner-1.jar", hashlib.sha256(body).hexdigest(), len(body), None)
    path = fetch.install(item, io.BytesIO(body), tmp_path / "store")
    assert path.read_bytes() == body
    with pytest.raises(ArtifactMismatch):
        fetch.install(fetch.Pinned("other-1.jar", item.sha256, len(body), None), io.BytesIO(b"inner jaR"),
                      tmp_path / "store")
    assert _leftovers(tmp_path / "store") == ["inner-1.jar"]
