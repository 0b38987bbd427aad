"""The layers stay apart: data flows post → engine → report → storage → service →
renderer → platform, and no module imports back up that line or in a circle.

The packages' order: ``zofia_engine`` < ``storage`` < ``bots.service`` < the rest of
``bots``, whose top floor is the composition root ``bots.app``."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

from tests.project.sources import syntax_tree

ROOT = Path(__file__).resolve().parents[2]
assert (ROOT / "pyproject.toml").is_file(), ROOT  # else every scan below finds nothing
PACKAGES = ("zofia_engine", "storage", "bots")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``module`` imports, TYPE_CHECKING imports included."""
    found = set()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(syntax_tree(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package[: len(package) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Each project module's imports, parsed once for every test here (none changes it)."""
    known = _modules()
    return {module: _imports(module, path, known) for module, path in known.items()}


def test_no_import_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_engine_knows_no_storage_or_platform_and_storage_no_engine() -> None:
    graph = _graph()
    upward = [
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if (module.startswith("zofia_engine") and target.startswith(("storage", "bots")))
        or (module.startswith("storage") and target.startswith(("bots", "zofia_engine.engine")))
        or (module.startswith("bots.service") and target.startswith("zofia_engine.engine"))
    ]
    assert upward == []


def _imported_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return set(out.stdout.split())


def test_storage_imports_neither_the_engine_nor_bots() -> None:
    every = [name for name in _modules() if name.startswith("storage")]
    loaded = _imported_after("\n".join(f"import {name}" for name in every))
    assert "zofia_engine.engine" not in loaded and "torch" not in loaded
    assert [name for name in loaded if name.split(".")[0] == "bots"] == []


def test_the_service_imports_neither_the_engine_nor_torch() -> None:
    every = [name for name in _modules() if name.startswith("bots.service")]
    loaded = _imported_after("\n".join(f"import {name}" for name in every))
    assert "zofia_engine.engine" not in loaded and "torch" not in loaded
    assert {name for name in loaded if name.startswith("bots.")} <= set(every)


def test_zofia_check_help_imports_no_chat_platform() -> None:
    loaded = _imported_after(
        "from click.testing import CliRunner\nfrom bots.cli import main\n"
        "assert CliRunner().invoke(main, ['check', '--help']).exit_code == 0"
    )
    assert "telegram" not in loaded and "discord" not in loaded
    assert "bots.cli.check" in loaded


# Inside each package, the layers from the bottom up; a module may import its own layer
# and those below it, never one above. A floor is a top-level part of the package (a
# subpackage or a module), and no floor is split by module: there are no exceptions.
# The records (report, post, what an image and Stage 1 found) are the engine's ground
# floor. In bots, the check service (bots/service: what every front-end shares, on the
# store) is the bottom floor; bots/render (what turns a report into text) is above it,
# then bots/chat (the chat flows both platforms share), then the report pages, then the
# chat platforms and the HTTP API. The composition root (bots/app: the deployment's
# settings composed from every platform's section, the service built from them, the
# deliveries, each chat platform's start-up, the settings' reference) is the top floor
# with the CLI, which starts it all.
INNER_LAYERS = {
    "zofia_engine": [
        {
            "errors",
            "refusals",
            "settings_base",
            "text",
            "snippets",
            "retrying",
            "records",
            "report",
            "post",
            "bounded_work",
            "language",
            "prompts",  # the prompt templates: text files, read by prompting
        },
        {
            "image_settings",
            "audio_settings",
            "stage1_settings",
            "stage2_settings",
            "config",
            "prompting",
            "ports",
        },
        {"address_forms", "contacts"},
        {"encoder", "llm", "retrieval", "images", "audio", "fetch", "run_progress"},
        {"agents", "diagnostics"},
        {
            "check_evidence",
            "check_debate",
            "check_search",
            "check_run",
            "check_verdict",
            "evaluation",
        },
        {"engine", "__init__"},
    ],
    "bots": [
        {"service"},
        {"render"},
        {"chat"},
        {"web"},
        {"telegram", "discord", "whatsapp", "api"},
        {"app", "cli", "__init__"},
    ],
}


def _floor(module: str) -> str:
    """The top-level part of its package ``module`` sits in (``__init__`` for the package)."""
    return [*module.split("."), "__init__"][1]


def test_every_part_of_a_package_has_a_floor() -> None:
    unplaced = sorted(
        {
            (package, _floor(module))
            for package, layers in INNER_LAYERS.items()
            for module in _graph()
            if module.split(".")[0] == package
            and not any(_floor(module) in floor for floor in layers)
        }
    )
    assert unplaced == []


def test_no_import_runs_back_up_inside_a_package() -> None:
    graph = _graph()
    upward = []
    for package, layers in INNER_LAYERS.items():
        level = {part: n for n, parts in enumerate(layers) for part in parts}
        for module, targets in graph.items():
            if module.split(".")[0] != package:
                continue
            for target in targets:
                if (
                    target.split(".")[0] == package
                    and level[_floor(target)] > level[_floor(module)]
                ):
                    upward.append((module, target))
    assert sorted(upward) == []


def test_the_deployment_mode_is_decided_once() -> None:
    """Local or queued is ``Settings.queued`` (bots/app/settings.py); nothing else in the
    bots asks the database URL which mode it is in."""
    asking = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "bots").rglob("*.py")
        if "storage.is_postgres" in path.read_text(encoding="utf-8")
    ]
    assert asking == ["bots/app/settings.py"]


def test_the_service_reads_a_post_and_the_bots_never_fetch_or_decode() -> None:
    """A post is read once, by the service (bots/service/posts.py fetches a link,
    bots/service/images.py holds the image caps): no other part of the bots imports
    the engine's fetching or image decoding."""
    reading = ("zofia_engine.fetch", "zofia_engine.images")
    found = sorted(
        (module, target)
        for module, targets in _graph().items()
        if module.startswith("bots.") and not module.startswith("bots.service")
        for target in targets
        if target.startswith(reading)
    )
    assert found == []


# The benches' bulk loads below the store, on the store's own connection (rows copied in
# tens of thousands, the rows its connection wrote counted): fixtures of a store
# benchmark, not callers of the store. Each is the one place it says so.
RAW_DATABASE_BENCHES = frozenset({"bench/store.py", "bench/lib/purge_fill.py"})


def _named(node: ast.expr) -> str:
    """The name an expression is known by: ``store``, ``self.store`` and
    ``app[_STORE]`` are all "store"."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _named(node.slice)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def _database_leaks(path: Path) -> list[str]:
    """Where ``path`` reads a store's raw database (``<store>.db``) or asks a database
    which engine it is (``is_postgres(…)``)."""
    where = str(path.relative_to(ROOT))
    found = []
    for node in ast.walk(syntax_tree(path)):
        raw = (
            isinstance(node, ast.Attribute)
            and node.attr == "db"
            and _named(node.value).lower().endswith("store")
        )
        asks = isinstance(node, ast.Call) and _named(node.func) == "is_postgres"
        if raw or asks:
            assert isinstance(node, ast.expr)  # an attribute or a call
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_raw_database_outside_storage() -> None:
    """The bots and the benches use the store by its named methods (``store.ping()``,
    ``store.postgres()`` for the job queue …), never its raw
    ``store.db``; and none asks a database its engine: the deployment's mode is
    ``Settings.queued``, passed down from the composition root."""
    leaks = [
        leak
        for folder in ("bots", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in RAW_DATABASE_BENCHES
        for leak in _database_leaks(path)
    ]
    assert leaks == []
