"""No test asserts how long something took (issue 45): a timed assertion fails on a busy
machine for no fault of the code (``elapsed < 2.0`` once took 2.29 s on a fresh machine
running other work). A test asserts a bound on work instead (characters looked up,
requests made, calls let in, tokens decoded, what a wait was decided to be), and a time
belongs in a ``bench/`` script, which ends with one JSON line.

The rule, read from each test file's syntax tree (``ast``), never by running it: no
comparison (``<``, ``>=``, ``==`` …) takes in a difference of a clock's readings, that is
a subtraction one side of which reads a clock (``time.perf_counter()``,
``time.monotonic()``, ``time.time()``, their ``_ns`` forms, ``loop.time()``) or names a
reading kept earlier (``started = time.perf_counter()``), or a name that holds such a
difference (``elapsed = time.perf_counter() - started``), or an attribute the file sets
to one (``self.worst = max(self.worst, now - last)``), however it is then combined
(``60 - waited - 1``).

What the rule lets through, on purpose: the loopback peers (``tests/peers/servers/``),
which keep the platforms' own time rules as the real servers do; a deadline that bounds
a wait so that a test fails instead of hanging (``deadline = time.monotonic() + 60``
then ``time.monotonic() < deadline``: a reading compared, not a difference), and two
readings put in order (``answered >= held.released_at``: the answer came after the
release).

Limits, said plainly: the rule reads one file at a time. The loop-stall tests
(``tests/project/test_loop_stalls.py``, the slow tier) compare ``LoopWatch.longest``,
a stall that ``tests/loop_watch.py`` measures, with a third of the time they hold the
store: the stall of the event loop is what they test, they hold real time on purpose,
and a third of a 3 s hold is an order of magnitude above a busy machine's scheduling.
They stay; ``bench/loop_stall.py`` measures the same stall as a figure.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.project.sources import syntax_tree

ROOT = Path(__file__).resolve().parents[2]
assert (ROOT / "pyproject.toml").is_file(), ROOT  # else every scan below finds nothing
TESTS = ROOT / "tests"
#: the loopback peers keep the platforms' own time rules (Discord's 3 s to acknowledge an
#: interaction, Telegram's deadline for a tap's answer and its per-chat bucket): what a
#: real server does to the bot, not what a test asserts
PEERS = TESTS / "peers" / "servers"
#: the clock readings: ``time.<name>()``, ``<loop>.time()``, or the bare function
CLOCKS = frozenset(
    {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
)


def _reads_clock(node: ast.AST) -> bool:
    """``time.perf_counter()``, ``loop.time()``, ``monotonic()``: a clock read, no
    arguments."""
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in CLOCKS
    return isinstance(func, ast.Name) and func.id in CLOCKS - {"time"}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Clocks:
    """What of one file holds a clock's reading (``started``) or a difference of them
    (``elapsed``), by name."""

    def __init__(self, tree: ast.Module) -> None:
        self.readings: set[str] = set()
        self.differences: set[str] = set()
        self.fields: set[str] = set()  # attributes set to a difference (``self.worst``)
        assigned = [
            (targets, value) for node in ast.walk(tree) for targets, value in _assignments(node)
        ]
        for _ in range(3):  # a name assigned from another such name, a few steps deep
            for (names, fields), value in assigned:
                if _reads_clock(value):
                    self.readings |= names
                elif self.timed(value):
                    self.differences |= names
                    self.fields |= fields

    def _clocked(self, node: ast.AST) -> bool:
        """A clock read, or a reading kept, anywhere in ``node``."""
        found = any(_reads_clock(n) for n in ast.walk(node))
        return found or bool(_names(node) & self.readings)

    def timed(self, node: ast.AST) -> bool:
        """Whether ``node`` takes in a difference of clock readings."""
        for inner in ast.walk(node):
            if not (isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub)):
                continue
            if self._clocked(inner.left) or self._clocked(inner.right):
                return True
        held = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        return bool(_names(node) & self.differences or held & self.fields)


def _named(target: ast.AST) -> set[str]:
    """The plain names an assignment's target binds (``a``, ``a, b``), not an
    attribute's object (``self.at = ...`` binds no name)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple | ast.List):
        return {name for element in target.elts for name in _named(element)}
    return set()


def _fields(target: ast.AST) -> set[str]:
    """The attributes an assignment's target sets (``self.worst = ...``)."""
    if isinstance(target, ast.Attribute):
        return {target.attr}
    if isinstance(target, ast.Tuple | ast.List):
        return {name for element in target.elts for name in _fields(element)}
    return set()


Targets = tuple[set[str], set[str]]  # the names and the attributes an assignment sets


def _assignments(node: ast.AST) -> list[tuple[Targets, ast.AST]]:
    """What ``node`` assigns (names, attributes), each with the value it assigns."""
    if isinstance(node, ast.Assign):
        names = {name for t in node.targets for name in _named(t)}
        fields = {name for t in node.targets for name in _fields(t)}
        return [((names, fields), node.value)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
        return [((_named(node.target), _fields(node.target)), node.value)]
    return []


def timed_comparisons(source: str) -> list[int]:
    """The lines of ``source`` that compare a difference of clock readings."""
    return timed_lines(ast.parse(source))


def timed_lines(tree: ast.Module) -> list[int]:
    """The lines of the file ``tree`` was parsed from that compare a difference of clock
    readings."""
    if not any(_reads_clock(node) for node in ast.walk(tree)):
        return []  # no clock is read, so nothing holds a reading or a difference of them
    clocks = _Clocks(tree)
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(clocks.timed(part) for part in (node.left, *node.comparators))
    )


def test_no_test_compares_how_long_something_took() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if PEERS not in path.parents
        for line in timed_lines(syntax_tree(path))
    ]
    assert found == [], "assert a bound on work, and time it in a bench/ script: " + ", ".join(
        found
    )


def test_the_rule_sees_each_way_a_time_is_asserted() -> None:
    flagged = [
        "started = time.perf_counter()\nwork()\nelapsed = time.perf_counter() - started\n"
        "assert elapsed < 2.0\n",
        "started = time.monotonic()\nwork()\nassert time.monotonic() - started < 1.0\n",
        "t = loop.time()\nwork()\ntook = loop.time() - t\nassert took >= 0.4\n",
        "sent = time.monotonic()\nwaited = time.monotonic() - sent\nassert n >= 60 - waited - 1\n",
        "start = perf_counter()\nassert (perf_counter() - start) * 1000 <= LIMIT_MS\n",
        "class Ticker:\n    def tick(self, now, last):\n"
        "        self.worst = max(self.worst, now - last)\n"
        "    async def run(self, loop):\n        last = loop.time()\n"
        "        self.worst = max(self.worst, loop.time() - last)\n"
        "assert ticker.worst < 0.5\n",
    ]
    for source in flagged:
        assert timed_comparisons(source), source
    let_through = [
        "deadline = time.monotonic() + 60\nwhile time.monotonic() < deadline:\n    pass\n",
        "answered = time.monotonic()\nassert answered >= held.released_at\n",
        "assert len(requests) == 2\n",
        "count = total - done\nassert count < 3\n",
    ]
    for source in let_through:
        assert timed_comparisons(source) == [], source
