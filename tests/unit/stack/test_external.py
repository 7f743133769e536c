"""turnbench.stack.external: endpoints come in pairs; passwords never reach a message."""

from __future__ import annotations

import pytest

from turnbench.errors import BadInput
from turnbench.stack import external


def test_external_needs_both_endpoints(monkeypatch):
    monkeypatch.setenv("TURNBENCH_OPENSEARCH_URL", "http://127.0.0.1:9")
    with pytest.raises(BadInput, match="missing --postgres-dsn / TURNBENCH_POSTGRES_DSN"):
        external.endpoints()


def test_redact_hides_passwords():
    assert external.redact("host=h user=u password=s3cret dbname=d") == "host=h user=u password=*** dbname=d"
    assert external.redact("postgresql://u:s3cret@h:5432/d") == "postgresql://u:***@h:5432/d"


def test_credentials_in_a_url_are_sent_as_a_header_and_never_shown() -> None:
    import base64

    from turnbench.stack.net import redact_url, split_credentials

    bare, auth = split_credentials("http://admin:s%40cret@node1:9200/prefix")
    assert bare == "http://node1:9200/prefix"
    assert auth == "Basic " + base64.b64encode(b"admin:s@cret").decode()
    assert split_credentials("http://node1:9200") == ("http://node1:9200", None)
    text = "OpenSearch at http://admin:s%40cret@node1:9200 and postgresql://me:pw@db/x do not answer"
    assert redact_url(text) == "OpenSearch at http://admin:***@node1:9200 and postgresql://me:***@db/x do not answer"
