"""Shared builders for the stack tests: a recorded StackInfo and a fake `java` that prints a chosen version."""

from __future__ import annotations

from pathlib import Path

from turnbench.stack import StackInfo

INFO = StackInfo(
    provider="embedded",
    opensearch_url="http://127.0.0.1:1",
    postgres_dsn="host=127.0.0.1 port=1 user=turnbench dbname=turnbench",
    opensearch_version="2.19.6",
    lucene_version="9.12.3",
    postgres_version="15.18",
    details={"processes": []},
)


def fake_java(tmp_path: Path, version_line: str) -> Path:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return java


def words(n, tag="w"):
    return " ".join(f"{tag}{i}" for i in range(n))


class Files:
    """A loopback HTTP server for fetch tests. ``routes`` maps a path to bytes, an HTTP status code, or
    ("stall", bytes): send those bytes, then hold the connection until the server stops. ``hits`` counts
    requests per path."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.routes: dict[str, object] = {}
        self.hits: dict[str, int] = {}
        self.release = threading.Event()
        files = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
                files.hits[self.path] = files.hits.get(self.path, 0) + 1
                route = files.routes.get(self.path, 404)
                if isinstance(route, int):
                    self.send_error(route)
                    return
                stall = isinstance(route, tuple)
                body = route[1] if stall else route
                self.send_response(200)
                self.send_header("Content-Length", str(len(body) * (2 if stall else 1)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                if stall:
                    files.release.wait(30)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def pinned(files: Files, name: str, body: bytes):
    """Serve ``body`` at /<name> and return the Pinned that names it."""
    import hashlib

    from turnbench.stack.fetch import Pinned

    files.routes[f"/{name}"] = body
    return Pinned(name, hashlib.sha256(body).hexdigest(), len(body), f"{files.url}/{name}")
