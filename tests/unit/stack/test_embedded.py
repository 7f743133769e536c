"""turnbench.stack.embedded: what the embedded provider refuses before anything starts."""

from __future__ import annotations

import pytest

from turnbench.errors import BadInput, StackStartError


def test_port_taken_is_refused_before_anything_starts():
    import socket

    from turnbench.stack.embedded import EmbeddedStack

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        stack = EmbeddedStack(opensearch_port=port)
        with pytest.raises(StackStartError, match=f"http port {port} on 127.0.0.1 is taken") as err:
            stack.start()
    assert err.value.started_pids == ()
    assert stack.root is None


def test_bad_heap_is_bad_input():
    from turnbench.stack.embedded import EmbeddedStack

    with pytest.raises(BadInput, match="heap"):
        EmbeddedStack(heap="lots")


def test_unknown_embedded_option_is_bad_input():
    from turnbench.stack import open_stack

    with pytest.raises(BadInput, match="unknown option\\(s\\) for the embedded provider: hepa"):
        with open_stack("embedded", hepa="1g"):
            pass


@pytest.mark.parametrize(("env", "value"), [("TURNBENCH_MAVEN_REPOSITORY", "ftp://x"),
                                            ("TURNBENCH_NO_SYSTEM_POSTGRES", "yes")])
def test_a_bad_switch_is_refused_before_anything_is_fetched_or_started(monkeypatch, tmp_path, env, value):
    from turnbench.stack.embedded import EmbeddedStack

    monkeypatch.setenv(env, value)
    stack = EmbeddedStack()
    with pytest.raises(BadInput, match=env):
        stack.start()
    assert stack.root is None and not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("options", "message"), [
    ({"nodes": 0}, "nodes must be a whole number from 1 to 9"),
    ({"nodes": 10}, "nodes must be a whole number from 1 to 9"),
    ({"nodes": True}, "nodes must be a whole number from 1 to 9"),
    ({"nodes": 3, "opensearch_port": 9200}, "a cluster of several nodes takes free ports"),
])
def test_bad_node_counts_are_refused_before_anything_starts(options, message):
    from turnbench.stack.embedded import EmbeddedStack

    with pytest.raises(BadInput, match=message):
        EmbeddedStack(**options)


def test_a_cluster_gets_distinct_free_ports_for_every_node():
    from turnbench.stack.embedded import EmbeddedStack

    ports = EmbeddedStack(nodes=3)._ports()
    assert sorted(ports) == ["http", "http-1", "http-2", "postgres", "transport", "transport-1", "transport-2"]
    assert len(set(ports.values())) == 7
