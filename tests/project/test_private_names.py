"""No test reaches into a private name of ours (issue 37): tests go through what callers
may use, so a refactor behind a module's public names never breaks a test for nothing.

The rule, read from each test file's syntax tree (``ast``), never by running it:

1. no import of a ``_name`` from ``zofia_engine``, ``storage`` or ``bots``, and no import
   of a module whose dotted path has a ``_part``;
2. no ``x._name`` where ``x`` (or the root of ``x.y.z``) was imported from our packages:
   a module, class or function of ours;
3. no ``x._name`` on any other object (a local, a fixture, an instance, ``self`` in a
   subclass of ours), read or set, when our packages define a ``_name`` and the test
   file itself does not (a function, class or variable of its own, or an attribute its
   classes set on ``self``): a file's own helpers, peers and fakes keep theirs;
4. the same for names written as strings: ``getattr(x, "_name")``,
   ``monkeypatch.setattr(x, "_name", ...)``, ``monkeypatch.setattr("bots.m._name", ...)``.

Limits: the rule knows names, not types. Rule 3 lets ``x._name`` through when the test
file itself defines a ``_name`` too (a fake subclassing one of our classes and setting
``self._name`` is not caught), and it flags a peer's private name used from another
file when our code has a private name spelled the same (rename one of them). A name
built at run time (``getattr(x, "_" + y)``), ``vars(x)`` and ``x.__dict__`` are not
seen. Dunders (``__name__``, ``__all__``) are public by Python's own convention.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

from tests.project.sources import syntax_tree

ROOT = Path(__file__).resolve().parents[2]
assert (ROOT / "pyproject.toml").is_file(), ROOT  # else every scan below finds nothing
OURS = ("zofia_engine", "storage", "bots")
BY_NAME = ("getattr", "setattr", "hasattr", "delattr")


def _private(name: str) -> bool:
    """``_name``, not a dunder, nor ``_`` (the name of what is thrown away)."""
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and name.strip("_") != "" and not dunder


def _ours(module: str) -> bool:
    return module.split(".")[0] in OURS


def _defined(trees: Iterable[ast.Module]) -> frozenset[str]:
    """Every private name the files define: functions, classes, variables, and the
    attributes a class sets on itself (``self._x = ...``; ``other._x = ...`` defines
    nothing: it reaches into ``other``)."""
    found: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                found |= {node.attr} if _root(node.value) in ("self", "cls") else set()
    return frozenset(name for name in found if _private(name))


@functools.cache
def _our_privates() -> frozenset[str]:
    """The private names our packages define."""
    paths = (path for package in OURS for path in (ROOT / package).rglob("*.py"))
    return _defined(syntax_tree(path) for path in paths)


def _imported(tree: ast.Module) -> set[str]:
    """The names a test file binds to a module, class or function of ours."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _ours(node.module or ""):
            bound |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            bound |= {
                alias.asname or alias.name.split(".")[0]
                for alias in node.names
                if _ours(alias.name)
            }
    return bound


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _in_string(text: str, reachable: frozenset[str]) -> bool:
    parts = text.split(".")
    if len(parts) > 1:
        return _ours(text) and any(_private(part) for part in parts)
    return text in reachable


def _reaches(node: ast.AST, bound: set[str], reachable: frozenset[str]) -> str | None:
    """What ``node`` reaches into, if it is a private name of ours."""
    if isinstance(node, ast.ImportFrom) and _ours(node.module or ""):
        names = [*(node.module or "").split("."), *(alias.name for alias in node.names)]
        return next((name for name in names if _private(name)), None)
    if isinstance(node, ast.Import):
        dotted = [alias.name for alias in node.names if _ours(alias.name)]
        return next((name for name in dotted if any(map(_private, name.split(".")))), None)
    if isinstance(node, ast.Attribute) and _private(node.attr):
        return node.attr if _root(node.value) in bound or node.attr in reachable else None
    if not isinstance(node, ast.Call):
        return None
    called = node.func.attr if isinstance(node.func, ast.Attribute) else _root(node.func)
    named = [a.value for a in node.args[:2] if isinstance(a, ast.Constant)]
    strings = [text for text in named if isinstance(text, str)] if called in BY_NAME else []
    return next((text for text in strings if _in_string(text, reachable)), None)


def violations(path: Path) -> list[tuple[int, str]]:
    """(line, name) for each place the test file reaches into a private name of ours."""
    tree = syntax_tree(path)
    bound, reachable = _imported(tree), _our_privates() - _defined([tree])
    found = {
        (getattr(node, "lineno", 0), _reaches(node, bound, reachable)) for node in ast.walk(tree)
    }
    return sorted((line, name) for line, name in found if name)


def test_no_test_reaches_into_a_private_name_of_ours() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for line, name in violations(path)
    ]
    assert found == []


def test_the_rule_sees_each_way_in(tmp_path: Path) -> None:
    private = sorted(_our_privates())[0]  # some private name only our packages define
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import zofia_engine._hidden\n"
        "from bots.render import _helper\n"
        "from zofia_engine.agents import follow_up as f\n"
        "from storage import Store\n"
        "f._capped(1)\n"
        "Store._connect\n"
        f"backend.{private}\n"
        "monkeypatch.setattr('bots.render.language._identifier', None)\n"
        f"getattr(thing, '{private}')\n"
        f"backend.{private} = None\n"
        # all allowed: public names, dunders, a test's own private helper, a third party's
        "f.capped(1)\nf.__name__\nimport json\njson._default_decoder\n"
        "def _mine(): ...\n_mine()\nself._mine\n",
        encoding="utf-8",
    )
    assert [name for _line, name in violations(sample)] == [
        "zofia_engine._hidden",
        "_helper",
        "_capped",
        "_connect",
        private,
        "bots.render.language._identifier",
        private,
        private,
    ]
