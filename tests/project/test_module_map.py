"""The module map (docs/modules.md) is drawn from the code: every module of the three
packages, under its package, with the first sentence of its docstring. It is generated
here, so it cannot drift: a module added, moved or renamed without the map fails this
test. ``ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/project/test_module_map.py`` writes it.

The architecture page (docs/architecture.md) is written by hand, for the arrows between
the packages; it must name every package (every folder of modules) the map lists."""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from pathlib import Path

from tests.project.sources import syntax_tree

ROOT = Path(__file__).resolve().parents[2]
assert (ROOT / "pyproject.toml").is_file(), ROOT  # else every scan below finds nothing
PACKAGES = ("zofia_engine", "storage", "bots")
MAP = ROOT / "docs" / "modules.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
WRITE = os.environ.get("ZOFIA_WRITE_DOCS") == "1"
MAX_CHARS = 200  # a summary longer than this is cut at a word, with "…"

HEADER = """# Module map

Every module of the engine, the store and the bots, with the first sentence of its
docstring. This page is generated from the code by `tests/project/test_module_map.py`,
which fails when a module is added, moved or renamed and the page is not written again
(`ZOFIA_WRITE_DOCS=1 .venv/bin/pytest tests/project/test_module_map.py`). For how the
packages depend on each other, read [Architecture](architecture.md).
"""


def _summary(path: Path) -> str:
    """The first sentence of the module's docstring, on one line (``""``: none)."""
    doc = ast.get_docstring(syntax_tree(path)) or ""
    text = " ".join(doc.split())
    # reStructuredText to Markdown: ``x`` and :role:`~a.b.x` are `x`.
    text = re.sub(r":\w+:`~?\.?([^`]*?)`", lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    text = text.replace("``", "`")
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z`(*])", text, maxsplit=1)[0]
    if len(first) > MAX_CHARS:
        first = first[:MAX_CHARS].rsplit(" ", 1)[0] + " …"
    return first.replace("|", "\\|")


def _folders() -> list[Path]:
    """Every folder of modules of the three packages, in order."""
    return sorted(
        {path.parent for package in PACKAGES for path in (ROOT / package).rglob("*.py")},
        key=lambda folder: folder.relative_to(ROOT).parts,
    )


def module_map() -> str:
    """The page, drawn from the code as it is."""
    parts = [HEADER]
    for folder in _folders():
        name = folder.relative_to(ROOT).as_posix()
        parts.append(f"\n## `{name}/`\n")
        init = folder / "__init__.py"
        if init.exists() and _summary(init):
            parts.append(f"\n{_summary(init)}\n")
        rows = [
            f"| `{path.name}` | {_summary(path)} |"
            for path in sorted(folder.glob("*.py"))
            if path.name != "__init__.py"
        ]
        if rows:
            parts.append("\n| Module | What it holds |\n|---|---|\n" + "\n".join(rows) + "\n")
    return "".join(parts)


def test_the_module_map_is_drawn_from_the_code() -> None:
    page = module_map()
    if WRITE:
        MAP.write_text(page, encoding="utf-8")
    assert MAP.read_text(encoding="utf-8") == page


def test_every_module_says_what_it_holds() -> None:
    silent = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py" and not _summary(path)
    ]
    assert silent == []


def test_the_architecture_page_names_every_package() -> None:
    """Each folder of modules is named on the architecture page as ``name/`` (its
    last part, as the page's tree writes it), and a name that several folders share
    (``web/``) as often as there are such folders."""
    page = ARCHITECTURE.read_text(encoding="utf-8")
    folders = _folders()
    assert len(folders) > 20  # the scan found the packages
    shared = Counter(folder.name for folder in folders)
    unnamed = [
        folder.relative_to(ROOT).as_posix()
        for folder in folders
        if len(re.findall(rf"(?<![\w/]){re.escape(folder.name)}/", page)) < shared[folder.name]
    ]
    assert unnamed == []
