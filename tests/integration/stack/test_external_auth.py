"""Basic auth in the OpenSearch URL of an external stack, against a node that requires it: the session's real node
behind a proxy that answers 401 to any request without the right credentials. The credentials work for the probe,
the load, the run and the score; the password appears in no message and no file."""

from __future__ import annotations

import base64
import http.server
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from turnbench.cli import main
from turnbench.errors import StackStartError
from turnbench.stack.external import describe
from turnbench.stack.net import free_port

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "small"
USER, PASSWORD = "admin", "s3cr@t"


@pytest.fixture
def guarded(stack):
    """An OpenSearch URL that needs basic auth: a proxy on loopback in front of the session's node."""
    upstream = stack.opensearch_url.rstrip("/")
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Guard(http.server.BaseHTTPRequestHandler):
        def _forward(self) -> None:
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="opensearch"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization",
                                                                                   "content-length")}
            req = urllib.request.Request(upstream + self.path, data=body, method=self.command, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=300) as resp:
                    status, data, kind = resp.status, resp.read(), resp.headers.get("Content-Type", "")
            except urllib.error.HTTPError as exc:
                status, data, kind = exc.code, exc.read(), exc.headers.get("Content-Type", "")
            self.send_response(status)
            self.send_header("Content-Type", kind or "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Guard)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_probe_sends_the_credentials_and_never_shows_the_password(stack, guarded):
    quoted = PASSWORD.replace("@", "%40")
    info = describe("external", guarded.replace("http://", f"http://{USER}:{quoted}@"), stack.postgres_dsn, {})
    assert info.opensearch_version == stack.opensearch_version
    with pytest.raises(StackStartError) as err:
        describe("external", guarded.replace("http://", f"http://{USER}:wrong@"), stack.postgres_dsn, {})
    assert "401" in str(err.value) and f"{USER}:***@" in str(err.value) and "wrong" not in str(err.value)


def test_load_run_and_score_through_a_node_that_requires_auth(stack, guarded, tmp_path, monkeypatch):
    quoted = PASSWORD.replace("@", "%40")
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", guarded.replace("http://", f"http://{USER}:{quoted}@"))
    monkeypatch.setenv("TURNBENCH_POSTGRES_DSN", stack.postgres_dsn)
    monkeypatch.setenv("TURNBENCH_STATE_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    loaded = runner.invoke(main, ["load", "--corpus", str(SMALL), "--index", "turnbench-auth-test"])
    assert loaded.exit_code == 0, loaded.output
    ran = runner.invoke(main, ["run", "--corpus", str(SMALL), "--arm", "bm25", "--index", "turnbench-auth-test",
                               "--out", str(tmp_path / "run")])
    assert ran.exit_code == 0, ran.output
    scored = runner.invoke(main, ["score", "--corpus", str(SMALL), "--passages", str(tmp_path / "run/passages.jsonl"),
                                  "--run", str(tmp_path / "run/run.trec"), "--out", str(tmp_path / "res")])
    assert scored.exit_code == 0, scored.output
    for text in (loaded.output, ran.output, scored.output):
        assert PASSWORD not in text and quoted not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert PASSWORD.encode() not in data and quoted.encode() not in data, path
    # without the credentials the node refuses, and the one line names the URL, never a password
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", guarded.replace("http://", f"http://{USER}:wrong@"))
    refused = runner.invoke(main, ["run", "--corpus", str(SMALL), "--arm", "bm25", "--out", str(tmp_path / "r2")])
    assert refused.exit_code == 3 and "wrong" not in refused.output and f"{USER}:***@" in refused.output
