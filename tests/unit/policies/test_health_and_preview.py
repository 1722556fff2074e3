"""The health policy and the scale-in preview."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.errors import InvalidRequest, InvalidSpec, PolicyRejected
from herd.json_types import dig
from herd.policies.base import Policy, PolicyContext
from herd.policies.checks import BoundPolicy
from herd.policies.deletion import DeletionPolicy
from herd.policies.health import HealthPolicy
from herd.policies.placement import ZonePlacementPolicy
from herd.policies.preview import preview_shrink
from herd.policies.scaling import ScalingPolicy
from herd.policies.victims import Victim, Victims
from herd.types import ActionName, CheckStatus, HealthStatus, NodeStatus, Phase

Node = Callable[..., NodeSnapshot]
Cluster = Callable[..., ClusterSnapshot]
Ctx = Callable[..., PolicyContext]

HEALTH = {
    "detection": {"type": "NODE_STATUS_POLLING", "options": {"interval": 30}},
    "recovery": {"actions": [{"name": "RECREATE"}], "fencing": ["COMPUTE"]},
}


def test_health_spec_v10_and_v11() -> None:
    p = HealthPolicy(HEALTH)
    assert dig(p.properties, "detection", "options", "interval") == 30
    assert dig(p.properties, "recovery", "actions") == [{"name": "RECREATE", "params": {}}]
    v11 = {
        "detection": {
            "detection_modes": [
                {"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": "http://h/{nodename}"}}
            ],
            "interval": 120,
        }
    }
    properties = HealthPolicy(v11).properties
    assert dig(properties, "detection", "detection_modes", 0, "options", "interval") == 60
    with pytest.raises(InvalidSpec) as info:
        HealthPolicy({"detection": {"type": "PING"}})
    assert info.value.field == "properties.detection.type"
    with pytest.raises(InvalidSpec) as info:
        HealthPolicy({"recovery": {}})
    assert info.value.message == "Required spec item 'detection' not provided"


def test_health_suspends_on_shrink_and_resumes_after(cluster: Cluster, ctx: Ctx) -> None:
    p = HealthPolicy(HEALTH)
    assert p.priority == 600
    for action in (
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_DEL_NODES,
        ActionName.NODE_DELETE,
    ):
        assert p.applies_to(action, Phase.BEFORE) and p.applies_to(action, Phase.AFTER)
    before = p.before(ctx(ActionName.CLUSTER_SCALE_IN, cluster(2), data={"deletion": {"count": 1}}))
    assert before.data == {"deletion": {"count": 1}, "health": {"suspended": True}}
    # The binding carries the suspension (and who suspended) for the health manager.
    assert before.binding_data is not None and before.binding_data["suspended"] is True
    assert "suspended_by" in before.binding_data
    after = p.after(
        ctx(ActionName.CLUSTER_SCALE_IN, cluster(2), phase=Phase.AFTER, data=before.data)
    )
    assert after.data["health"] == {"suspended": False}
    assert after.binding_data is not None and after.binding_data["suspended"] is False


def test_health_resize_grow_does_not_suspend(cluster: Cluster, ctx: Ctx) -> None:
    inputs = {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 1}
    decision = HealthPolicy(HEALTH).before(
        ctx(ActionName.CLUSTER_RESIZE, cluster(2), inputs=inputs)
    )
    assert decision.status is CheckStatus.OK and "health" not in decision.data


def preview_scale_in(
    cluster: ClusterSnapshot, policies: list[Policy], count: int | None, now: float, seed: int
) -> Victims:
    """The scale-in preview with ``policies`` bound in this order."""
    bound = [BoundPolicy(f"b{i}", type(p).__name__, p) for i, p in enumerate(policies)]
    inputs = {} if count is None else {"count": count}
    return preview_shrink(ActionName.CLUSTER_SCALE_IN, cluster, bound, inputs, now, seed)


def members(node: Node) -> list[NodeSnapshot]:
    return [
        node(1, zone="AZ1"),
        node(2, zone="AZ1", health=HealthStatus.CHECK_FAILED),
        node(3, zone="AZ2"),
        node(4, zone="AZ2", status=NodeStatus.ERROR),
        node(5, zone="AZ1"),
        node(6, zone="AZ2", protected=True),
    ]


def test_preview_with_deletion_policy(node: Node, cluster: Cluster) -> None:
    policies: list[Policy] = [DeletionPolicy({"criteria": "OLDEST_FIRST"})]
    victims = preview_scale_in(cluster(members(node)), policies, 3, now=0.0, seed=1)
    assert victims == [
        Victim("N4", "status ERROR"),
        Victim("N2", "marked unhealthy (CHECK_FAILED)"),
        Victim("N1", "OLDEST_FIRST"),
    ]


def test_preview_runs_scaling_and_zones_first(node: Node, cluster: Cluster) -> None:
    policies: list[Policy] = [
        ScalingPolicy({"event": "CLUSTER_SCALE_IN", "adjustment": {"number": 2, "cooldown": 600}}),
        ZonePlacementPolicy({"zones": [{"name": "AZ1"}, {"name": "AZ2"}]}),
        DeletionPolicy({"criteria": "YOUNGEST_FIRST"}),
        HealthPolicy(HEALTH),
    ]
    victims = preview_scale_in(cluster(members(node)), policies, None, now=0.0, seed=1)
    # scaling: 2; zones: one from each (quota 2 each after); then the worst of each zone
    assert victims == [
        Victim("N2", "marked unhealthy (CHECK_FAILED) (zone AZ1)"),
        Victim("N4", "status ERROR (zone AZ2)"),
    ]


def test_preview_without_deletion_policy_is_random_and_deterministic(
    node: Node, cluster: Cluster
) -> None:
    c = cluster(members(node))
    first = preview_scale_in(c, [], 3, now=0.0, seed=9)
    assert first[:2] == [
        Victim("N4", "status ERROR"),
        Victim("N2", "marked unhealthy (CHECK_FAILED)"),
    ]
    assert first[2].rule == "RANDOM" and first[2].node_id in {"N1", "N3", "N5"}
    assert preview_scale_in(c, [], 3, now=0.0, seed=9) == first


def test_preview_errors(node: Node, cluster: Cluster) -> None:
    c = cluster(members(node))
    with pytest.raises(PolicyRejected) as rejected:
        preview_scale_in(c, [DeletionPolicy({})], 6, now=0.0, seed=1)
    assert rejected.value.reason == "Cannot remove 6 nodes: only 5 unprotected members"
    with pytest.raises(InvalidRequest):
        preview_scale_in(c, [], 6, now=0.0, seed=1)
    scaling = ScalingPolicy({"event": "CLUSTER_SCALE_IN", "adjustment": {"number": 9}})
    with pytest.raises(PolicyRejected):
        preview_scale_in(c, [scaling], None, now=0.0, seed=1)
