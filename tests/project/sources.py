"""The repository's source files, each parsed once a session: the project's rules read
the same syntax trees (the layers, the sizes, the module map, the private names, the
timed assertions), so each file's tree is made once and shared. A rule reads a tree and
never changes it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def syntax_tree(path: Path) -> ast.Module:
    """The syntax tree of the file at ``path``, parsed on first use."""
    return ast.parse(path.read_text(encoding="utf-8"))
