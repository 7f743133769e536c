"""turnbench.stack.postgres: finding server binaries of the pinned major."""

from __future__ import annotations

import pytest

from turnbench.errors import StackStartError


def test_postgres_binaries_not_found_names_the_package(tmp_path):
    from turnbench.stack.postgres import find_postgres

    (tmp_path / "empty").mkdir()
    expected = r"not found in .*empty: install them \(Debian: apt-get install -y postgresql-15\)"
    with pytest.raises(StackStartError, match=expected):
        find_postgres(tmp_path / "empty")
