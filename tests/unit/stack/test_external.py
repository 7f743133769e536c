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
