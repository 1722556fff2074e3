"""senlin.policy.affinity-1.0 (validation, Nova only) and senlin.policy.health-1.2."""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.policies.conftest import make_cluster, make_ctx

from herd.engine.clusters import placements
from herd.errors import InvalidSpec
from herd.policies.affinity import NO_GROUP, AffinityPolicy, GroupChoice
from herd.policies.checks import BoundPolicy, run_checks
from herd.policies.health import HealthPolicy
from herd.policies.placement import ZonePlacementPolicy
from herd.policies.registry import default_policy_registry
from herd.types import ActionName, CheckStatus


def _affinity(**properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.affinity", "version": "1.0", "properties": properties}


def test_affinity_defaults_are_senlins() -> None:
    type_name, policy = default_policy_registry().create(_affinity())
    assert type_name == "senlin.policy.affinity-1.0"
    assert isinstance(policy, AffinityPolicy)
    assert policy.properties == {
        "servergroup": {"name": None, "policies": "anti-affinity"},
        "availability_zone": None,
        "enable_drs_extension": False,
    }
    assert policy.priority == 300
    assert AffinityPolicy.profile_types == (
        "os.nova.server-1.0",
        "os.nova.server-1.1",
        "os.nova.server-1.2",
    )


@pytest.mark.parametrize(
    ("properties", "field", "text"),
    [
        ({"servergroup": {"policies": "together"}}, "properties.servergroup.policies", "one of"),
        ({"servergroup": {"size": 2}}, "properties.servergroup.size", "Unrecognizable"),
        ({"enable_drs_extension": "maybe"}, "properties.enable_drs_extension", "Boolean"),
        ({"availability_zone": 3}, "properties.availability_zone", "not a valid string"),
        ({"enable_drs_extension": True}, "properties.enable_drs_extension", "vSphere DRS"),
    ],
)
def test_affinity_refuses_bad_specs(properties: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        default_policy_registry().create(_affinity(**properties))
    assert caught.value.field == field
    assert text in str(caught.value)


def _policy(**properties: Any) -> AffinityPolicy:
    policy = default_policy_registry().create(_affinity(**properties))[1]
    assert isinstance(policy, AffinityPolicy)
    return policy


def test_the_group_is_the_specs_else_the_profiles_hint_else_a_new_one() -> None:
    named = _policy(servergroup={"name": "web", "policies": "affinity"})
    assert named.group_choice({"scheduler_hints": {"group": "db"}}) == GroupChoice(
        "web", "affinity"
    )
    hinted = _policy()
    assert hinted.group_choice({"scheduler_hints": {"group": "db"}}) == GroupChoice(
        "db", "anti-affinity"
    )
    assert hinted.group_choice({}) == GroupChoice(None, "anti-affinity")


def test_an_existing_group_with_another_policy_is_refused_with_senlins_text() -> None:
    policy = _policy(servergroup={"name": "web", "policies": "affinity"})
    assert policy.mismatch("affinity") is None
    assert policy.mismatch("anti-affinity") == (
        "Policies specified (affinity) doesn't match that of the existing servergroup "
        "(anti-affinity)."
    )


GROUP = {"servergroup_id": "G1", "inherited_group": False}


@pytest.mark.parametrize(
    ("action", "inputs", "data", "count"),
    [
        (ActionName.CLUSTER_SCALE_OUT, {"count": 3}, {}, 3),
        (ActionName.CLUSTER_SCALE_OUT, {}, {}, 1),
        # an earlier policy's creation count is respected (Senlin's pre_op)
        (ActionName.CLUSTER_SCALE_OUT, {"count": 3}, {"creation": {"count": 2}}, 2),
        (ActionName.NODE_CREATE, {}, {}, 1),
        (ActionName.CLUSTER_RESIZE, {"adjustment_type": "EXACT_CAPACITY", "number": 5}, {}, 3),
    ],
)
def test_new_members_get_the_group(
    action: ActionName, inputs: dict[str, Any], data: dict[str, Any], count: int
) -> None:
    policy = _policy(availability_zone="az1")
    decision = policy.before(make_ctx(action, make_cluster(2), inputs, data, binding_data=GROUP))
    assert decision.status is CheckStatus.OK
    assert decision.data["placement"] == {
        "count": count,
        "placements": [{"servergroup": "G1", "zone": "az1"}] * count,
    }


def test_a_shrinking_resize_is_not_placed_and_a_binding_without_group_fails() -> None:
    policy = _policy()
    shrink = make_ctx(
        ActionName.CLUSTER_RESIZE,
        make_cluster(3),
        {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1},
        binding_data=GROUP,
    )
    assert policy.before(shrink).status is CheckStatus.NONE
    lost = policy.before(make_ctx(ActionName.CLUSTER_SCALE_OUT, make_cluster(1), {"count": 1}))
    assert lost.status is CheckStatus.ERROR and lost.reason == NO_GROUP


def test_the_engine_gives_each_new_node_the_group_and_the_zone_spread_wins() -> None:
    zones = default_policy_registry().create(
        {
            "type": "senlin.policy.zone_placement",
            "version": "1.0",
            "properties": {"zones": [{"name": "az1"}, {"name": "az2"}]},
        }
    )[1]
    assert isinstance(zones, ZonePlacementPolicy)
    bound = [
        BoundPolicy("b1", "zones", zones),
        BoundPolicy("b2", "affinity", _policy(availability_zone="az9"), data=GROUP),
    ]
    outcome = run_checks(
        bound, make_ctx(ActionName.CLUSTER_SCALE_OUT, make_cluster(0), {"count": 2})
    )
    assert outcome.ok, outcome.reason
    assert sorted(placements(outcome.data, 2), key=lambda p: str(p["zone"])) == [
        {"servergroup": "G1", "zone": "az1"},
        {"servergroup": "G1", "zone": "az2"},
    ]
    # without a zone policy, the affinity policy's zone applies
    alone = run_checks(
        bound[1:], make_ctx(ActionName.CLUSTER_SCALE_OUT, make_cluster(0), {"count": 1})
    )
    assert placements(alone.data, 1) == [{"servergroup": "G1", "zone": "az9"}]


HEALTH_12 = {
    "type": "senlin.policy.health",
    "version": 1.2,
    "properties": {
        "detection": {
            "detection_modes": [{"type": "NODE_STATUS_POLLING"}],
            "interval": 30,
        },
        "recovery": {"actions": [{"name": "RECREATE"}]},
    },
}


def test_health_12_is_accepted_like_11() -> None:
    registry = default_policy_registry()
    type_name, policy = registry.create(HEALTH_12)
    assert type_name == "senlin.policy.health-1.2"
    assert isinstance(policy, HealthPolicy)
    _, older = registry.create({**HEALTH_12, "version": "1.1"})
    assert policy.settings == older.settings  # type: ignore[attr-defined]


def test_health_12_refuses_hypervisor_polling_with_the_reason() -> None:
    spec = {
        **HEALTH_12,
        "properties": {"detection": {"detection_modes": [{"type": "HYPERVISOR_STATUS_POLLING"}]}},
    }
    with pytest.raises(InvalidSpec) as caught:
        default_policy_registry().create(spec)
    assert "HYPERVISOR_STATUS_POLLING is not supported" in str(caught.value)
    assert "no hypervisor" in str(caught.value)
