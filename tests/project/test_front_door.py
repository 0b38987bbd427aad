"""The check service's front door holds (issue 46): the bots above the service reach the
store only through it, the service stands in floors with no arrow back up, the mode is
a collaborator and not a flag, the engine's port has two methods, and no module keeps
hidden state.

Read from the code's syntax trees, never by running it; the import graph is
:mod:`tests.project.test_architecture`'s."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from tests.project.sources import syntax_tree
from tests.project.test_architecture import ROOT, _graph

from zofia_engine.ports import Checker

PACKAGES = ("zofia_engine", "storage", "bots")
# The floors of bots/service from the bottom up: its records (what crosses to the
# renderers and platforms, and the settings and rules they need beside them), its
# parts, the service (the front door), and its deliveries (the modes, built by the
# composition root and handed to the service).
SERVICE_FLOORS = [
    {"__init__", "records", "refusals", "settings", "naming", "images", "audio"},
    {
        "handles", "limits", "repeats", "near", "stored_answers", "fair_slots",
        "follow_ups", "reviews", "finished", "corrections", "shown", "delivery",
        "posts", "chats", "pages", "api_keys", "outbound", "rounds",
    },
    {"checks"},
    {"local", "queue", "webhooks"},
]  # fmt: skip
#: the floors of bots above the service that may name the store: the service itself,
#: the composition root and the CLI (which open it)
STORE_NAMERS = ("bots.service", "bots.app", "bots.cli")
#: what the renderers, chat flows, pages, platforms and API take from the service: its
#: records, the intake rules beside them, the front door, and the webhook calls (which
#: the API server runs beside it, as a bot runs its deliveries)
THROUGH_THE_DOOR = (
    "bots.service.records",
    "bots.service.refusals",
    "bots.service.images",
    "bots.service.audio",
    "bots.service.checks",
    "bots.service.webhooks",
)


def _service_floor(module: str) -> int:
    part = [*module.split("."), "__init__"][2]
    return next(n for n, floor in enumerate(SERVICE_FLOORS) if part in floor)


def test_no_store_import_in_the_bots_above_the_service() -> None:
    found = sorted(
        (module, target)
        for module, targets in _graph().items()
        if module.startswith("bots.") and not module.startswith(STORE_NAMERS)
        for target in targets
        if target.split(".")[0] == "storage"
    )
    assert found == []


def test_the_bots_take_only_records_and_the_door_from_the_service() -> None:
    found = sorted(
        (module, target)
        for module, targets in _graph().items()
        if module.startswith("bots.") and not module.startswith(STORE_NAMERS)
        for target in targets
        if target.startswith("bots.service") and not target.startswith(THROUGH_THE_DOOR)
    )
    assert found == []


def test_the_service_stands_in_floors_with_no_arrow_back_up() -> None:
    graph = _graph()
    service = [module for module in graph if module.split(".")[:2] == ["bots", "service"]]
    assert {[*m.split("."), "__init__"][2] for m in service} <= set().union(*SERVICE_FLOORS)
    upward = sorted(
        (module, target)
        for module in service
        for target in graph[module]
        if target.startswith("bots.service") and _service_floor(target) > _service_floor(module)
    )
    assert upward == []


def _files() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def test_no_parameter_is_named_queued() -> None:
    """The mode is a collaborator the composition root chooses (a ``CardDelivery``),
    never a flag handed down."""
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for path in _files()
        for node in ast.walk(syntax_tree(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and "queued" in [a.arg for a in (*node.args.args, *node.args.kwonlyargs)]
    ]
    assert found == []


def test_the_checker_port_has_two_methods() -> None:
    methods = [
        name
        for name, member in vars(Checker).items()
        if inspect.isfunction(member) and not name.startswith("_")
    ]
    assert sorted(methods) == ["check", "read"]


#: constructors of values a module could keep and change: mutable state
_MUTABLE = {"dict", "list", "set", "defaultdict", "deque", "Counter", "OrderedDict"}
_MUTABLE |= {"ThreadPoolExecutor", "ProcessPoolExecutor", "Lock", "RLock", "Event"}


def _mutable(value: ast.expr) -> bool:
    if isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in _MUTABLE
    return False


def _hidden_state(path: Path) -> list[str]:
    """A module-level name bound to a mutable value that is no constant (constants are
    UPPER_CASE, read and never changed), and every ``global`` statement."""
    tree = syntax_tree(path)
    where = path.relative_to(ROOT)
    found = [f"{where}:{n.lineno} global" for n in ast.walk(tree) if isinstance(n, ast.Global)]
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            constant = all(name.lstrip("_").isupper() or name == "__all__" for name in names)
            if names and not constant and _mutable(node.value):
                found.append(f"{where}:{node.lineno} {', '.join(names)}")
    return found


def test_no_module_keeps_hidden_state() -> None:
    """No module-level executor, lock, secret or cache of ours that a second service in
    one process would share without knowing it."""
    assert [found for path in _files() for found in _hidden_state(path)] == []
