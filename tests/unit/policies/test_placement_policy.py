"""Zone and region placement policies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.errors import InvalidSpec
from herd.policies.base import PolicyContext
from herd.policies.placement import RegionPlacementPolicy, ZonePlacementPolicy, create_plan
from herd.types import ActionName, CheckStatus

Node = Callable[..., NodeSnapshot]
Cluster = Callable[..., ClusterSnapshot]
Ctx = Callable[..., PolicyContext]


def zone_policy(*zones: tuple[str, int]) -> ZonePlacementPolicy:
    return ZonePlacementPolicy({"zones": [{"name": n, "weight": w} for n, w in zones]})


def spread(node: Node, cluster: Cluster, **per_zone: int) -> ClusterSnapshot:
    nodes, i = [], 0
    for zone, k in per_zone.items():
        for _ in range(k):
            i += 1
            nodes.append(node(i, zone=zone, region=zone.replace("AZ", "R")))
    return cluster(nodes)


def test_plan_shrink_takes_from_most_over_quota() -> None:
    plan = create_plan({"A": 5, "B": 1, "C": 3}, {"A": 1, "B": 1, "C": 1}, {}, 3, expand=False)
    assert plan == {"A": 3}
    assert create_plan({"A": 4, "B": 4}, {"A": 1, "B": 1}, {}, 3, expand=False) == {"A": 2, "B": 1}


def test_plan_expand_spreads_by_weight() -> None:
    assert create_plan({"A": 0, "B": 0}, {"A": 100, "B": 100}, {}, 4, expand=True) == {
        "A": 2,
        "B": 2,
    }
    assert create_plan({"A": 0, "B": 0}, {"A": 300, "B": 100}, {}, 4, expand=True) == {
        "A": 3,
        "B": 1,
    }


def test_plan_caps_can_make_it_infeasible() -> None:
    assert create_plan({"A": 1}, {"A": 1}, {"A": 1}, 2, expand=True) is None


def test_zone_scale_in(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    c = spread(node, cluster, AZ1=4, AZ2=2)
    decision = zone_policy(("AZ1", 100), ("AZ2", 100)).before(
        ctx(ActionName.CLUSTER_SCALE_IN, c, data={"deletion": {"count": 2}})
    )
    assert decision.status is CheckStatus.OK
    assert decision.data == {"deletion": {"count": 2, "zones": {"AZ1": 2}}}


def test_zone_scale_out_and_node_create(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    c = spread(node, cluster, AZ1=2, AZ2=0)
    p = zone_policy(("AZ1", 100), ("AZ2", 100))
    out = p.before(ctx(ActionName.CLUSTER_SCALE_OUT, c, inputs={"count": 2}))
    assert out.data == {"creation": {"count": 2, "zones": {"AZ2": 2}}}
    created = p.before(ctx(ActionName.NODE_CREATE, c))
    assert created.data == {"creation": {"count": 1, "zones": {"AZ2": 1}}}


def test_zone_resize_parses(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    c = spread(node, cluster, AZ1=3, AZ2=1)
    inputs = {"adjustment_type": "EXACT_CAPACITY", "number": 2, "strict": True}
    decision = zone_policy(("AZ1", 1), ("AZ2", 1)).before(
        ctx(ActionName.CLUSTER_RESIZE, c, inputs=inputs)
    )
    assert decision.data == {"deletion": {"count": 2, "zones": {"AZ1": 2}}}
    bad = {"adjustment_type": "EXACT_CAPACITY", "number": 9, "max_size": 5, "strict": True}
    error = zone_policy(("AZ1", 1)).before(ctx(ActionName.CLUSTER_RESIZE, c, inputs=bad))
    assert error.reason == "The target capacity (9) is greater than the specified max_size (5)."


def test_zone_errors(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    c = spread(node, cluster, AZ1=1)
    none = zone_policy().before(ctx(ActionName.CLUSTER_SCALE_OUT, c))
    assert none.reason == "No availability zone found available."
    infeasible = zone_policy(("AZ9", 1)).before(ctx(ActionName.CLUSTER_SCALE_IN, c))
    assert infeasible.status is CheckStatus.ERROR
    assert infeasible.reason == "There is no feasible plan to handle all nodes."


def test_region_scale_in_and_caps(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    c = spread(node, cluster, AZ1=3, AZ2=3)
    p = RegionPlacementPolicy(
        {"regions": [{"name": "R1", "weight": 100, "cap": 3}, {"name": "R2", "weight": 300}]}
    )
    shrink = p.before(ctx(ActionName.CLUSTER_SCALE_IN, c, inputs={"count": 2}))
    assert shrink.data == {"deletion": {"count": 2, "regions": {"R1": 2}}}
    grow = p.before(ctx(ActionName.CLUSTER_SCALE_OUT, c, inputs={"count": 2}))
    assert grow.data == {"creation": {"count": 2, "regions": {"R2": 2}}}
    none = RegionPlacementPolicy({"regions": []}).before(ctx(ActionName.CLUSTER_SCALE_IN, c))
    assert none.reason == "No region is found usable."


@pytest.mark.parametrize(
    ("cls", "props", "message", "field"),
    [
        (ZonePlacementPolicy, {"zones": "AZ1"}, "'AZ1' is not a List", "properties.zones"),
        (
            ZonePlacementPolicy,
            {"zones": [{"weight": 1}]},
            "Required spec item 'name' not provided",
            "properties.zones[0].name",
        ),
        (
            ZonePlacementPolicy,
            {"zones": [{"name": "A", "weight": "x"}]},
            "The value 'x' is not a valid Integer",
            "properties.zones[0].weight",
        ),
        (
            ZonePlacementPolicy,
            {"zones": [{"name": "A"}, {"name": "A"}]},
            "Duplicate name 'A' in 'zones'.",
            "properties.zones[1].name",
        ),
        (
            RegionPlacementPolicy,
            {"regions": [{"name": "R", "cap": -2}]},
            "The value '-2' of 'cap' must be greater than or equal to -1.",
            "properties.regions[0].cap",
        ),
        (
            RegionPlacementPolicy,
            {"regions": [{"name": "R", "size": 1}]},
            "Unrecognizable spec item 'size'",
            "properties.regions[0].size",
        ),
    ],
)
def test_spec_errors(cls: Any, props: dict[str, Any], message: str, field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        cls(props)
    assert (info.value.message, info.value.field) == (message, field)
