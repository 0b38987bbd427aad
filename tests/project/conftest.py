from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.project.sources import syntax_tree


@pytest.fixture(scope="package", autouse=True)
def _forget_syntax_trees() -> Iterator[None]:
    """The parsed sources are shared by the rules of this package and let go after them
    (about 150 MB), so the rest of the session does not carry them."""
    yield
    syntax_tree.cache_clear()
