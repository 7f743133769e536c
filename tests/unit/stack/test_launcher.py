"""turnbench.stack.launcher: the shipped classes are the ones their sources and the pinned compiler give."""

from __future__ import annotations

import shutil

import pytest

from turnbench.errors import StackStartError
from turnbench.stack import jarlock, jars, launcher


def _compiler():
    return jars.compiler(jarlock.read_lock())


def test_the_shipped_classes_were_built_from_the_sources_beside_them():
    """The full byte-for-byte rebuild is tests/integration/stack/test_launcher.py (it needs Java and the jars)."""
    classes = launcher.shipped(_compiler())
    names = sorted(launcher.tree(classes))
    assert names == ["META-INF/services/java.text.spi.BreakIteratorProvider", "SOURCES.sha256",
                     "turnbench/stack/ThaiBreakIteratorProvider$Adapter.class",
                     "turnbench/stack/ThaiBreakIteratorProvider.class",
                     "turnbench/stack/TurnbenchNode$EmbeddedNode.class", "turnbench/stack/TurnbenchNode.class"]
    assert (classes / "META-INF/services/java.text.spi.BreakIteratorProvider").read_text() == (
        launcher.SERVICES["java.text.spi.BreakIteratorProvider"])


def test_classes_from_other_sources_or_another_compiler_are_refused(tmp_path, monkeypatch):
    classes = tmp_path / "classes"
    shutil.copytree(launcher.CLASSES, classes)
    manifest = classes / launcher.MANIFEST
    manifest.write_text(manifest.read_text().replace("TurnbenchNode.java", "Other.java"))
    with pytest.raises(StackStartError, match="built from other sources .* rebuild them with `make launcher`"):
        launcher.shipped(_compiler(), classes)
    (classes / launcher.MANIFEST).unlink()
    with pytest.raises(StackStartError, match="the launcher classes are missing"):
        launcher.shipped(_compiler(), classes)
