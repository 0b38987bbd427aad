"""ToE's tree of claims, as data: nodes, the rule-based bottom-up aggregation, the
decisiveness and convergence tests, and pruning (ToE §III, its interpretable fallback
to the learned aggregator).

Every node has its own judgement over its evidence, a veracity v (the probability the
claim is true) and a reliability r (how strongly the evidence backs that). A node
with children takes its aggregated scores from them: v is the children's v weighted
by reliability × importance; r is the children's importance-weighted reliability,
scaled down when some children are still unjudged and when their verdicts disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..config import TreeSettings
from ..report import ClaimResult

__all__ = ["ClaimTree", "Node", "decision_of", "normalised"]


@dataclass
class Node:
    """One claim of the tree and what is known of it."""

    claim: ClaimResult
    children: list[str] = field(default_factory=list)
    evaluated: bool = False
    expanded: bool = False
    has_evidence: bool = False
    v: float | None = None  # the aggregated scores (its own until it has judged children)
    r: float | None = None

    @property
    def id(self) -> str:
        return self.claim.id


def normalised(weights: Sequence[float]) -> list[float]:
    """Importance weights summing to 1 (equal when none is positive)."""
    clean = [w if math.isfinite(w) and w > 0 else 0.0 for w in weights]
    total = sum(clean)
    if total <= 0:
        return [1 / len(weights)] * len(weights) if weights else []
    return [w / total for w in clean]


def decision_of(v: float | None, settings: TreeSettings) -> str | None:
    """The verdict a root veracity maps to: ``false`` below 0.4, ``true`` above 0.6."""
    if v is None:
        return None
    if v < settings.verdict_false_below:
        return "false"
    if v > settings.verdict_true_above:
        return "true"
    return None


class ClaimTree:
    """The tree, rooted at the core claim."""

    def __init__(self, root: ClaimResult, settings: TreeSettings) -> None:
        self.settings = settings
        self.root_id = root.id
        self.nodes: dict[str, Node] = {root.id: Node(root.model_copy(update={"depth": 0}))}
        self.history: list[float] = []  # the root's v after each update

    @property
    def root(self) -> Node:
        return self.nodes[self.root_id]

    def add_children(self, parent_id: str, children: Sequence[ClaimResult]) -> list[str]:
        """Attach ``children`` (their importances normalised to sum to 1) under
        ``parent_id``, which counts as expanded; their ids."""
        parent = self.nodes[parent_id]
        parent.expanded = True
        weights = normalised([c.importance if c.importance is not None else 1.0 for c in children])
        ids = []
        for child, weight in zip(children, weights, strict=True):
            claim = child.model_copy(
                update={"parent": parent_id, "depth": parent.claim.depth + 1, "importance": weight}
            )
            self.nodes[claim.id] = Node(claim)
            parent.children.append(claim.id)
            ids.append(claim.id)
        return ids

    def judged(self, claim: ClaimResult, *, has_evidence: bool) -> None:
        """Record a node's own judgement (its claim with ``veracity`` and ``reliability``)."""
        node = self.nodes[claim.id]
        node.claim = claim.model_copy(
            update={
                "parent": node.claim.parent,
                "depth": node.claim.depth,
                "importance": node.claim.importance,
                "dimension": node.claim.dimension or claim.dimension,
            }
        )
        node.evaluated = True
        node.has_evidence = has_evidence

    def aggregate(self) -> None:
        """Propagate the scores bottom-up; the root's v joins the history."""
        self._aggregate(self.root_id)
        if self.root.v is not None:
            self.history.append(self.root.v)

    def _aggregate(self, node_id: str) -> None:
        node = self.nodes[node_id]
        for child in node.children:
            self._aggregate(child)
        done = [self.nodes[c] for c in node.children if self.nodes[c].v is not None]
        if not done:
            node.v, node.r = node.claim.veracity, node.claim.reliability
            return
        imp = [c.claim.importance or 0.0 for c in done]
        rel = [c.r or 0.0 for c in done]
        vs = [c.v or 0.0 for c in done]
        weights = [i * r for i, r in zip(imp, rel, strict=True)]
        total_imp = sum(imp) or 1.0
        if sum(weights) > 0:
            v = sum(w * x for w, x in zip(weights, vs, strict=True)) / sum(weights)
            spread = math.sqrt(
                sum(w * (x - v) ** 2 for w, x in zip(weights, vs, strict=True)) / sum(weights)
            )
        else:  # no child has any reliability: their verdicts say nothing yet
            v, spread = sum(i * x for i, x in zip(imp, vs, strict=True)) / total_imp, 0.0
        mean_r = sum(i * r for i, r in zip(imp, rel, strict=True)) / total_imp
        all_imp = sum(self.nodes[c].claim.importance or 0.0 for c in node.children) or 1.0
        coverage = sum(imp) / all_imp  # unjudged children lower the reliability
        consistency = max(0.0, 1.0 - 2.0 * spread)  # 0.5 is the widest spread in [0, 1]
        node.v, node.r = round(v, 4), round(mean_r * coverage * consistency, 4)

    def decisive(self, node_id: str) -> bool:
        """ToE's φ: reliable enough, and the veracity clearly true or clearly false."""
        node, s = self.nodes[node_id], self.settings
        if node.v is None or node.r is None:
            return False
        return node.r > s.decide_above and not s.false_below <= node.v <= s.true_above

    def converged(self) -> bool:
        """ToE's γ: the root's v moved less than the tolerance over the last 3 updates,
        and its reliability is above the expansion threshold."""
        s, last = self.settings, self.history[-3:]
        return (
            len(last) == 3
            and max(last) - min(last) < s.converge_within
            and (self.root.r or 0.0) > s.expand_below
        )

    def descendants(self, node_id: str) -> Iterator[str]:
        for child in self.nodes[node_id].children:
            yield child
            yield from self.descendants(child)

    def pruned(self, pending: Sequence[str]) -> list[str]:
        """``pending`` without the nodes under a decided (decisive, non-leaf) node."""
        cut: set[str] = set()
        for node in self.nodes.values():
            if node.children and self.decisive(node.id):
                cut.update(self.descendants(node.id))
        return [p for p in pending if p not in cut]

    def next_to_split(self) -> Node | None:
        """The judged, unsplit node whose own reliability is below the threshold, with
        evidence to split over and room below it; the most uncertain parent and the
        most important claim first. ``None`` when there is none."""
        s = self.settings
        ready = [
            n
            for n in self.nodes.values()
            if n.evaluated
            and not n.expanded
            and n.has_evidence
            and (
                (n.claim.reliability or 0.0) < s.expand_below
                or (n.id == self.root_id and not n.children)  # the root: split once, always
            )
            and n.claim.depth < s.max_depth - 1
            and not self._under_decided(n.id)
        ]
        if not ready:
            return None
        return max(ready, key=self._priority)

    def _priority(self, node: Node) -> float:
        parent = self.nodes.get(node.claim.parent or "")
        uncertainty = 1.0 - (parent.r or 0.0) if parent is not None else 1.0
        return 0.5 * uncertainty + 0.5 * (node.claim.importance or 1.0)

    def _under_decided(self, node_id: str) -> bool:
        parent_id = self.nodes[node_id].claim.parent
        while parent_id is not None:
            if self.decisive(parent_id):
                return True
            parent_id = self.nodes[parent_id].claim.parent
        return False

    def claims(self) -> list[ClaimResult]:
        """Every node's claim, depth first from the root, with its aggregated scores."""
        out: list[ClaimResult] = []

        def walk(node_id: str) -> None:
            node = self.nodes[node_id]
            out.append(
                node.claim.model_copy(update={"tree_veracity": node.v, "tree_reliability": node.r})
            )
            for child in node.children:
                walk(child)

        walk(self.root_id)
        return out
