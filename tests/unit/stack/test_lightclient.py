"""turnbench.stack.lightclient: what a run sends with urllib3 alone fails as opensearch-py fails, in its words."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest

from turnbench.stack import lightclient
from turnbench.stack.net import free_port

INFOS = [
    (400, "search_phase_execution_exception", {"error": {"root_cause": [{"type": "parsing_exception",
                                                                          "reason": "unknown query [frobnicate]"}],
                                                         "type": "search_phase_execution_exception"},
                                               "status": 400}),
    (404, "index_not_found_exception", {"error": {"root_cause": [{"type": "index_not_found_exception",
                                                                  "reason": "no such index [x]",
                                                                  "resource.type": "index_or_alias",
                                                                  "resource.id": "x"}]}, "status": 404}),
    (409, "conflict", {"error": "version conflict"}),
    (500, "boom", None),
    (503, "<html>unavailable</html>", None),
    (401, "security_exception", {"error": {"root_cause": [], "type": "security_exception"}}),
]


@pytest.mark.parametrize(("status", "error", "info"), INFOS)
def test_an_http_error_reads_as_opensearch_pys(status, error, info):
    from opensearchpy.exceptions import HTTP_EXCEPTIONS, TransportError

    theirs = HTTP_EXCEPTIONS.get(status, TransportError)(status, error, info)
    ours = lightclient.TransportError(status, error, info)
    assert str(ours) == str(theirs) and (ours.status_code, ours.error, ours.info) == (status, error, info)


def test_an_unanswered_request_reads_as_opensearch_pys():
    import urllib3
    from opensearchpy.exceptions import ConnectionError as TheirConnectionError
    from opensearchpy.exceptions import ConnectionTimeout

    cause = urllib3.exceptions.ProtocolError("Connection aborted.")
    assert str(lightclient.ConnectionError("N/A", str(cause), cause)) == str(TheirConnectionError("N/A", str(cause),
                                                                                                  cause))
    late = urllib3.exceptions.ReadTimeoutError(None, "/x", "Read timed out.")  # type: ignore[arg-type]
    assert str(lightclient.ConnectionError("TIMEOUT", str(late), late)) == str(ConnectionTimeout("TIMEOUT", str(late),
                                                                                                 late))


class _Node(http.server.BaseHTTPRequestHandler):
    seen: list[tuple[str, str, str | None, bytes]] = []

    def _answer(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size) if size else b""
        self.seen.append((self.command, self.path, self.headers.get("Authorization"), body))
        if self.path.startswith("/missing"):
            status, data = 404, {"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "gone"}],
                                           "type": "index_not_found_exception"}, "status": 404}
        else:
            status, data = 200, {"count": 3} if self.path.endswith("/_count") else {"responses": []}
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def node() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Node)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Node.seen.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_calls_a_run_makes_carry_the_urls_credentials_and_the_bodies_as_given(node):
    import base64

    client = lightclient.LightClient(node.replace("http://", "http://admin:s%40cret@"), timeout=5)
    assert client.count(index="idx") == {"count": 3}
    assert client.indices.exists(index="idx") is True and client.indices.exists(index="missing") is False
    payload = b'{"index":"idx"}\n{"size":1}\n'
    assert client.msearch(body=payload, filter_path="responses.took,responses._shards") == {"responses": []}
    auth = "Basic " + base64.b64encode(b"admin:s@cret").decode()
    assert all(a == auth for _, _, a, _ in _Node.seen)
    assert _Node.seen[-1][:2] == ("POST", "/_msearch?filter_path=responses.took,responses._shards")
    assert _Node.seen[-1][3] == payload


def test_a_refused_call_raises_opensearch_pys_error_and_an_absent_node_a_connection_error(node):
    client = lightclient.LightClient(node, timeout=5)
    with pytest.raises(lightclient.TransportError) as err:
        client.indices.get_mapping(index="missing")
    assert err.value.status_code == 404 and err.value.error == "index_not_found_exception"
    assert str(err.value) == "NotFoundError(404, 'index_not_found_exception', 'gone')"
    gone = lightclient.LightClient(f"http://127.0.0.1:{free_port()}", timeout=5)
    with pytest.raises(lightclient.ConnectionError, match=r"^ConnectionError\(.*\) caused by: NewConnectionError"):
        gone.count(index="idx")


def test_stack_errors_turns_either_clients_failure_into_one_refusal(node):
    from turnbench.errors import StackStateError
    from turnbench.stack.clients import stack_errors
    from turnbench.stack.info import StackInfo

    stack = StackInfo("external", f"http://127.0.0.1:{free_port()}", "host=h", "2", "9", "15")
    with pytest.raises(StackStateError, match=r"^OpenSearch at http://127.0.0.1:\d+ does not answer: ConnectionError"):
        with stack_errors(stack):
            lightclient.LightClient(stack.opensearch_url, timeout=5).count(index="idx")
    with pytest.raises(StackStateError, match=r"refused a request: NotFoundError\(404"), stack_errors(stack):
        lightclient.LightClient(node, timeout=5).count(index="missing")
    with pytest.raises(KeyError), stack_errors(stack):  # anything else is not the stack's: it goes on as it was
        raise KeyError("x")


def test_a_connection_is_kept_for_every_thread_a_run_may_search_from():
    from turnbench.engines import MAX_CONCURRENCY

    assert lightclient.MAX_CONNECTIONS >= MAX_CONCURRENCY
