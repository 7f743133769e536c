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


def _fake_compiler_java(tmp_path, body: str):
    """A `java` that, run as `java -jar ecj.jar ... -d DIR ...`, writes what the shipped build has, except the
    main class, whose bytes are ``body`` (empty: fail like a compile error)."""
    from turnbench.stack.jdk import Java

    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    shipped = launcher.CLASSES / "turnbench"
    java.write_text(
        "#!/bin/sh\n"
        'while [ $# -gt 0 ]; do [ "$1" = -d ] && d="$2"; shift; done\n'
        + ("echo '1. ERROR in TurnbenchNode.java (at line 3)' >&2; exit 255\n" if not body else
           f'cp -r "{shipped}" "$d/" && printf %s "{body}" > "$d/turnbench/stack/TurnbenchNode.class"\n'))
    java.chmod(0o755)
    return Java(java=java, major=21, version="21.0.8", source="explicit")


def test_a_check_against_a_build_with_other_bytes_fails_naming_the_file(tmp_path):
    from turnbench.errors import CheckFailed

    java = _fake_compiler_java(tmp_path, "different")
    with pytest.raises(CheckFailed) as err:
        launcher.rebuild(java, tmp_path / "ecj.jar", _compiler(), [], check=True)
    assert str(err.value).startswith("the shipped launcher classes differ from a fresh build with ecj-3.46.0.jar "
                                     "on Java 21.0.8: turnbench/stack/TurnbenchNode.class; run `make launcher`")


def test_a_check_against_an_identical_build_passes_and_a_build_replaces_the_classes(tmp_path):
    shipped = tmp_path / "classes"
    shutil.copytree(launcher.CLASSES, shipped)
    same = (launcher.CLASSES / "turnbench/stack/TurnbenchNode.class").read_bytes()
    assert launcher.rebuild(_fake_compiler_java(tmp_path, "x"), tmp_path / "ecj.jar", _compiler(), [],
                            check=False, classes=shipped) == 6
    assert (shipped / "turnbench/stack/TurnbenchNode.class").read_bytes() == b"x" != same
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("turnbench-launcher-")]


def test_a_compile_error_is_one_line(tmp_path):
    with pytest.raises(StackStartError, match=r"^compiling the launcher failed: 1. ERROR in TurnbenchNode.java"):
        launcher.rebuild(_fake_compiler_java(tmp_path, ""), tmp_path / "ecj.jar", _compiler(), [], check=True)
