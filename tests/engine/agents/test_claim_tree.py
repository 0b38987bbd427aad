"""ToE's tree of claims as data: the rule-based aggregation against trees worked out by
hand, the split, depth and pruning rules, and both stop rules."""

from __future__ import annotations

import pytest

from zofia_engine.agents.claim_tree import ClaimTree, decision_of, normalised
from zofia_engine.config import TreeSettings
from zofia_engine.report import ClaimResult

S = TreeSettings()


def _claim(id_: str, v: float | None = None, r: float | None = None, **kw: object) -> ClaimResult:
    fields = {"kind": "sub", "text": f"claim {id_}", **kw}
    return ClaimResult.model_validate({"id": id_, "veracity": v, "reliability": r, **fields})


def _tree(root_v: float = 0.5, root_r: float = 0.2) -> ClaimTree:
    tree = ClaimTree(_claim("root", kind="core"), S)
    tree.judged(_claim("root", root_v, root_r, kind="core"), has_evidence=True)
    return tree


def test_importances_are_scaled_to_sum_to_one() -> None:
    assert normalised([2.0, 1.0, 1.0]) == [0.5, 0.25, 0.25]
    assert normalised([0.0, -1.0, float("nan")]) == pytest.approx([1 / 3] * 3)
    tree = _tree()
    ids = tree.add_children("root", [_claim("a", importance=0.9), _claim("b", importance=0.9)])
    assert sum(tree.nodes[i].claim.importance or 0 for i in ids) == pytest.approx(1.0)
    assert [tree.nodes[i].claim.depth for i in ids] == [1, 1]
    assert tree.root.expanded and tree.root.children == ids


def test_aggregation_matches_a_tree_worked_out_by_hand() -> None:
    tree = _tree()
    tree.add_children("root", [_claim("a", importance=3), _claim("b", importance=1)])
    tree.judged(_claim("a", 0.2, 0.9), has_evidence=True)
    tree.judged(_claim("b", 0.6, 0.5), has_evidence=True)
    tree.aggregate()
    # w_a = 0.75 * 0.9 = 0.675, w_b = 0.25 * 0.5 = 0.125
    v = (0.675 * 0.2 + 0.125 * 0.6) / 0.8  # 0.2625
    spread = ((0.675 * (0.2 - v) ** 2 + 0.125 * (0.6 - v) ** 2) / 0.8) ** 0.5
    r = (0.75 * 0.9 + 0.25 * 0.5) * 1.0 * (1 - 2 * spread)  # all children judged
    assert tree.root.v == pytest.approx(v, abs=1e-4)
    assert tree.root.r == pytest.approx(r, abs=1e-4)
    assert tree.history == [tree.root.v]


def test_an_unjudged_child_lowers_the_parents_reliability() -> None:
    tree = _tree()
    tree.add_children("root", [_claim("a"), _claim("b")])
    tree.judged(_claim("a", 0.1, 0.9), has_evidence=True)
    tree.aggregate()
    assert tree.root.v == pytest.approx(0.1)
    # importance-weighted mean reliability of the judged (0.9), times coverage 0.5
    assert tree.root.r == pytest.approx(0.9 * 0.5, abs=1e-4)


def test_a_node_splits_when_its_own_reliability_is_low_within_the_depth_cap() -> None:
    tree = _tree()
    tree.add_children("root", [_claim("a"), _claim("b")])
    tree.judged(_claim("a", 0.5, 0.3), has_evidence=True)  # unreliable: split it
    tree.judged(_claim("b", 0.5, 0.8), has_evidence=True)  # reliable: leave it
    tree.aggregate()
    assert tree.next_to_split() is tree.nodes["a"]
    [a1, a2] = tree.add_children("a", [_claim("a1"), _claim("a2")])
    tree.judged(_claim(a1, 0.5, 0.1), has_evidence=True)
    tree.judged(_claim(a2, 0.5, 0.1), has_evidence=True)
    tree.aggregate()
    # depth 2 is the last level of a depth-3 tree: a1 and a2 cannot split further.
    assert tree.nodes[a1].claim.depth == 2 and tree.next_to_split() is None
    deeper = ClaimTree(_claim("root", kind="core"), TreeSettings(max_depth=5))
    deeper.judged(_claim("root", 0.5, 0.1, kind="core"), has_evidence=True)
    assert deeper.next_to_split() is deeper.root  # the root, split once whatever its r


def test_a_node_without_evidence_is_not_split() -> None:
    tree = _tree()
    tree.judged(_claim("root", 0.5, 0.0, kind="core"), has_evidence=False)
    assert tree.next_to_split() is None


def test_pending_work_under_a_decided_node_is_pruned() -> None:
    tree = _tree()
    [a, b] = tree.add_children("root", [_claim("a"), _claim("b")])
    tree.judged(_claim(a, 0.5, 0.2), has_evidence=True)
    tree.judged(_claim(b, 0.5, 0.2), has_evidence=True)
    [a1, a2] = tree.add_children(a, [_claim("a1", importance=0.9), _claim("a2", importance=0.1)])
    [b1] = tree.add_children(b, [_claim("b1")])
    # a's main part is decisively false; the unjudged 10% lowers r only to 0.855.
    tree.judged(_claim(a1, 0.05, 0.95), has_evidence=True)
    tree.aggregate()
    assert tree.decisive(a) and not tree.decisive(b)
    assert tree.pruned([a2, b1]) == [b1]


def test_the_root_stops_the_search_when_decisive_or_converged() -> None:
    tree = _tree()
    [a] = tree.add_children("root", [_claim("a")])
    tree.judged(_claim(a, 0.9, 0.8), has_evidence=True)
    tree.aggregate()
    assert tree.decisive("root")  # r 0.8 > 0.7 and v 0.9 outside [0.3, 0.7]
    assert decision_of(tree.root.v, S) == "true"

    tree = _tree()
    [a] = tree.add_children("root", [_claim("a")])
    for v in (0.5, 0.55, 0.52):  # within 0.1 over three updates, reliability 0.8
        tree.judged(_claim(a, v, 0.8), has_evidence=True)
        tree.aggregate()
    assert not tree.decisive("root") and tree.converged()
    assert decision_of(tree.root.v, S) is None  # 0.52: no decision

    tree = _tree()
    [a] = tree.add_children("root", [_claim("a")])
    for v in (0.5, 0.55, 0.52):  # steady, but not reliable enough to converge
        tree.judged(_claim(a, v, 0.6), has_evidence=True)
        tree.aggregate()
    assert not tree.converged()


def test_claims_come_depth_first_with_their_aggregated_scores() -> None:
    tree = _tree()
    [a, b] = tree.add_children("root", [_claim("a"), _claim("b")])
    [a1] = tree.add_children(a, [_claim("a1")])
    for node_id, v in ((a, 0.3), (b, 0.3), (a1, 0.2)):
        tree.judged(_claim(node_id, v, 0.9), has_evidence=True)
    tree.aggregate()
    claims = tree.claims()
    assert [c.id for c in claims] == ["root", a, a1, b]
    assert [c.parent for c in claims] == [None, "root", a, "root"]
    by_id = {c.id: c for c in claims}
    assert by_id[a].veracity == 0.3 and by_id[a].tree_veracity == pytest.approx(0.2)
    assert by_id[a1].tree_veracity == by_id[a1].veracity == 0.2
