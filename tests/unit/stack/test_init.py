"""turnbench.stack: current_stack refuses without an answering stack; open_stack starts nothing it cannot finish."""

from __future__ import annotations

import pytest

from tests.unit.stack.helpers import INFO
from turnbench.errors import StackStartError, StackStateError
from turnbench.stack import current_stack, state


def test_current_stack_without_record_refuses():
    with pytest.raises(StackStateError, match="no stack is recorded in .*turnbench stack up"):
        current_stack()


def test_current_stack_with_a_dead_record_refuses():
    state.write_state(state.Recorded(state.UP, "embedded", INFO.details, INFO))
    with pytest.raises(StackStateError, match="the recorded embedded stack does not answer"):
        current_stack()


def test_open_stack_without_java_starts_nothing(tmp_path):
    from turnbench.stack import open_stack

    with pytest.raises(StackStartError, match=r"^Java not found at ") as err:
        with open_stack("embedded", java=tmp_path / "no-java"):
            pytest.fail("the stack must not open")
    assert err.value.started_pids == ()


def test_open_stack_without_postgres_binaries_starts_nothing(tmp_path):
    from turnbench.stack import open_stack

    (tmp_path / "empty").mkdir()
    with pytest.raises(StackStartError, match="PostgreSQL server binaries") as err:
        with open_stack("embedded", postgres_bin=tmp_path / "empty"):
            pytest.fail("the stack must not open")
    assert err.value.started_pids == ()
    assert "\n" not in str(err.value)


def test_a_run_does_not_ask_a_recorded_stacks_postgresql_on_its_way_in():
    """``ask_postgres=False`` (what ``turnbench run`` asks for): OpenSearch is still asked — its version is the one
    it reports now — but a PostgreSQL that does not answer is not found out here; its version is the recorded one."""
    import dataclasses
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Root(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = json.dumps({"version": {"number": "2.19.7", "lucene_version": "9.12.4"}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Root)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        info = dataclasses.replace(INFO, opensearch_url=f"http://127.0.0.1:{server.server_port}")
        state.write_state(state.Recorded(state.UP, "embedded", info.details, info))
        with pytest.raises(StackStateError, match="the recorded embedded stack does not answer: PostgreSQL at "):
            current_stack()
        found = current_stack(ask_postgres=False)
        assert (found.opensearch_version, found.lucene_version, found.postgres_version) == ("2.19.7", "9.12.4", "15.18")
    finally:
        server.shutdown()
        server.server_close()
