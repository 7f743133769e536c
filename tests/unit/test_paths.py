"""Where a command may write: an output equal to another, on or inside an input, or inside a results directory or a
corpus is refused before anything is read, whatever spelling (a symbolic link, ``..``) names it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from turnbench.errors import BadInput
from turnbench.paths import check_name, check_outputs


def test_distinct_outputs_beside_their_inputs_pass(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    got = check_outputs([("--out", tmp_path / "out.md"), ("--json", tmp_path / "out.json")], [tmp_path / "in"])
    assert got == [(tmp_path / "out.md").resolve(), (tmp_path / "out.json").resolve()]


def test_two_spellings_of_one_output_are_one_output(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "d")
    with pytest.raises(BadInput, match="--json .* is also --out"):
        check_outputs([("--out", tmp_path / "d" / "x.md"), ("--json", tmp_path / "link" / ".." / "d" / "x.md")])
    with pytest.raises(BadInput, match="is also --out"):
        check_outputs([("--out", tmp_path / "d" / "x.md"), ("--json", tmp_path / "link" / "x.md")])


def test_an_output_on_or_inside_an_input_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("")
    with pytest.raises(BadInput, match="is .*run.trec, which this command reads"):
        check_outputs([("--out", run)], [run])
    (tmp_path / "runs").mkdir()
    with pytest.raises(BadInput, match="lies inside .*runs, which this command reads"):
        check_outputs([("--out", tmp_path / "runs" / "fused")], [tmp_path / "runs"])


@pytest.mark.parametrize(("marker", "kind"), [("claim.sha256", "results directory"), ("manifest.json", "corpus")])
def test_nothing_is_written_inside_a_results_directory_or_a_corpus_even_one_not_read(tmp_path: Path, marker: str,
                                                                                     kind: str) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / marker).write_text("x")
    for target in (tmp_path / "r" / "metrics.md", tmp_path / "r" / "deeper" / "x.html", tmp_path / "r"):
        with pytest.raises(BadInput, match=f"lies inside the {kind} "):
            check_outputs([("--out", target)])


@pytest.mark.parametrize("name", ["bm25", "A.b_c-1", "x" * 100])
def test_names_that_can_name_a_directory(name: str) -> None:
    assert check_name(name, "name") == name


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "../up", "x\n", "evil\n", "tab\there", "x" * 101, "é"])
def test_names_that_cannot_are_refused_as_full_matches(name: str) -> None:
    with pytest.raises(BadInput, match="cannot name a directory"):
        check_name(name, "--control-name")


@pytest.mark.parametrize(("given", "said"), [
    ("n" * 256, "a name of 256 bytes, longer than the file system takes (255)"),
    ("é" * 128, "a name of 256 bytes"),  # bytes, not characters
    ("d/" * 2100 + "x", "a path of 4"),
])
def test_a_name_the_file_system_refuses_is_bad_input_before_any_stat(tmp_path: Path, given: str, said: str) -> None:
    with pytest.raises(BadInput, match=f"--out .*{re.escape(said)}"):
        check_outputs([("--out", tmp_path / given)])
    check_outputs([("--out", tmp_path / ("n" * 255))])  # the longest name it takes


def test_a_symbolic_link_is_not_replaced_by_a_staged_directory(tmp_path: Path) -> None:
    from turnbench.canonical import staged_directory

    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to("empty")
    with pytest.raises(BadInput, match="link is a symbolic link \\(to empty\\); a directory is written in its place"):
        with staged_directory(tmp_path / "link"):
            pass
    assert (tmp_path / "link").is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["empty", "link"]


def test_a_name_too_long_met_by_a_writer_itself_is_bad_input(tmp_path: Path) -> None:
    """What check_outputs would have refused on the command line, a writer called from Python refuses too."""
    from turnbench.canonical import refuse_non_empty, staged_directory, write_bytes_atomic

    long = tmp_path / ("n" * 300)
    for write in (lambda: refuse_non_empty(long), lambda: write_bytes_atomic(long / "x", b"x"),
                  lambda: staged_directory(long / "d").__enter__()):
        with pytest.raises(BadInput, match="cannot write here \\(File name too long\\)"):
            write()
    assert list(tmp_path.iterdir()) == []
