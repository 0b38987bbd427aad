"""The size rule: every module of the engine, the store, the bots and the bench holds
at most 400 lines, and every function (``def`` or ``async def``, nested ones included)
at most 60, from its ``def`` line (decorators apart) to its last line.

A module or function over its limit is named in :data:`EXCEPTIONS` with the reason it is
allowed to be; an exception that is no longer needed fails the test too, so the list
only ever holds what is still true.

Production code (the engine, the store and the bots) also holds its functions that take
more than :data:`MOST_PARAMETERS` parameters to :data:`MANY_PARAMETERS_CEILING`, a
ceiling that only goes down: ``python -c "from tests.project.test_sizes import
many_parameters; print(len(many_parameters()))"`` prints the count."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.project.sources import syntax_tree

ROOT = Path(__file__).resolve().parents[2]
assert (ROOT / "pyproject.toml").is_file(), ROOT  # else every scan below finds nothing
PACKAGES = ("zofia_engine", "storage", "bots", "bench")
MODULE_LINES = 400
FUNCTION_LINES = 60

#: a function past this many parameters (``self`` and ``cls`` apart) takes a record instead
MOST_PARAMETERS = 5
#: how many functions of production code may still take more (83 before issue 46; its
#: aim is 40): lower it when a change takes some away, never raise it
MANY_PARAMETERS_CEILING = 40

#: ``path`` (a module) or ``path::qualified.name`` (a function) → why it may be longer
EXCEPTIONS: dict[str, str] = {}


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """Each function in ``tree`` by its qualified name, with its length in lines."""
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            assert node.end_lineno is not None
            found.append((name, node.end_lineno - node.lineno + 1))
            found += _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            found += _functions(node, f"{prefix}{node.name}.")
        else:
            found += _functions(node, prefix)
    return found


def _oversized() -> dict[str, int]:
    """Every module and function over its limit, by its key in :data:`EXCEPTIONS`."""
    over = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            text = path.read_text(encoding="utf-8")
            if (lines := len(text.splitlines())) > MODULE_LINES:
                over[where] = lines
            for name, length in _functions(syntax_tree(path)):
                if length > FUNCTION_LINES:
                    over[f"{where}::{name}"] = length
    return over


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return [name for name in names if name not in ("self", "cls")]


def many_parameters(packages: tuple[str, ...] = PACKAGES[:3]) -> list[str]:
    """Every function of ``packages`` (production code by default) that takes more than
    :data:`MOST_PARAMETERS` parameters, as ``path:line name``."""
    return [
        f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}"
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
        for node in ast.walk(syntax_tree(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and len(_parameters(node)) > MOST_PARAMETERS
    ]


def test_modules_and_functions_stay_within_their_size() -> None:
    over = _oversized()
    assert {key: n for key, n in over.items() if key not in EXCEPTIONS} == {}


def test_every_size_exception_is_still_needed_and_says_why() -> None:
    over = _oversized()
    assert [key for key in EXCEPTIONS if key not in over] == []
    assert [key for key, why in EXCEPTIONS.items() if not why.strip()] == []


def test_the_size_rule_sees_a_long_function_in_a_class() -> None:
    body = "\n".join(f"        x{n} = {n}" for n in range(FUNCTION_LINES))
    source = f"class A:\n    async def long(self):\n{body}\n    def short(self):\n        pass"
    tree = ast.parse(source)
    assert _functions(tree) == [("A.long", FUNCTION_LINES + 1), ("A.short", 2)]


def test_functions_with_many_parameters_stay_under_their_ceiling() -> None:
    assert len(many_parameters()) <= MANY_PARAMETERS_CEILING


def test_a_method_counts_its_parameters_without_self() -> None:
    source = "class A:\n def m(self, a, b, c, d, e, *, f): ...\n def n(cls, a, b, c, d, e): ..."
    methods = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
    assert [len(_parameters(m)) for m in methods] == [6, 5]
