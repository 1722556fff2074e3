"""The deletion policy (mirrors senlin/tests/unit/policies/test_deletion_policy.py, plus gaps)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.errors import InvalidSpec
from herd.json_types import dig, list_at, object_at
from herd.policies.base import PolicyContext
from herd.policies.deletion import DeletionPolicy
from herd.policies.registry import default_policy_registry
from herd.policies.spec import parse_spec
from herd.types import ActionName, CheckStatus, Criteria, NodeStatus, Phase

Node = Callable[..., NodeSnapshot]
Cluster = Callable[..., ClusterSnapshot]
Ctx = Callable[..., PolicyContext]

SPEC: dict[str, Any] = {
    "type": "senlin.policy.deletion",
    "version": "1.0",
    "properties": {
        "criteria": "OLDEST_FIRST",
        "destroy_after_deletion": True,
        "grace_period": 60,
        "reduce_desired_capacity": False,
    },
}
FIXED = {"destroy_after_deletion": True, "grace_period": 60, "reduce_desired_capacity": False}


def policy(**props: Any) -> DeletionPolicy:
    return DeletionPolicy(SPEC["properties"] | props)


def test_init_reads_properties_back() -> None:
    kind, created = default_policy_registry().create(SPEC)
    assert kind == "senlin.policy.deletion-1.0"
    assert isinstance(created, DeletionPolicy)
    assert created.properties == SPEC["properties"] | {"hooks": {}}
    assert created.priority == 400 and created.singleton


def test_defaults() -> None:
    assert DeletionPolicy({}).properties == {
        "criteria": "RANDOM",
        "destroy_after_deletion": True,
        "grace_period": 0,
        "reduce_desired_capacity": True,
        "hooks": {},
    }


def test_targets_are_before_only() -> None:
    p = policy()
    for action in (
        ActionName.CLUSTER_SCALE_IN,
        ActionName.CLUSTER_DEL_NODES,
        ActionName.CLUSTER_RESIZE,
        ActionName.NODE_DELETE,
    ):
        assert p.applies_to(action, Phase.BEFORE)
        assert not p.applies_to(action, Phase.AFTER)
    assert not p.applies_to(ActionName.CLUSTER_SCALE_OUT, Phase.BEFORE)


def test_v10_and_v11_are_the_same_policy() -> None:
    registry = default_policy_registry()
    kind10, p10 = registry.create(SPEC)
    kind11, p11 = registry.create(SPEC | {"version": 1.1})
    assert (kind10, kind11) == ("senlin.policy.deletion-1.0", "senlin.policy.deletion-1.1")
    assert type(p10) is type(p11) and p10.properties == p11.properties
    hooks = {"type": "zaqar", "params": {"queue": "q"}, "timeout": 5}
    props = SPEC["properties"] | {"hooks": hooks}
    assert dig(registry.create(SPEC | {"properties": props})[1].properties, "hooks", "timeout") == 5


def test_s1_del_nodes_uses_candidates_verbatim(cluster: Cluster, ctx: Ctx) -> None:
    c = ctx(ActionName.CLUSTER_DEL_NODES, cluster(3), inputs={"candidates": ["N3", "N1"]})
    decision = policy().before(c)
    assert decision.status is CheckStatus.OK
    assert decision.reason == "Candidates generated"
    assert decision.data == {"deletion": {"count": 2, "candidates": ["N3", "N1"], **FIXED}}


def test_s2_scale_in_without_count_removes_one(cluster: Cluster, ctx: Ctx) -> None:
    decision = policy().before(ctx(ActionName.CLUSTER_SCALE_IN, cluster(3)))
    assert decision.data["deletion"] == {"count": 1, "candidates": ["N1"], **FIXED}


def test_s2_scale_in_count_clamped_to_members(cluster: Cluster, ctx: Ctx) -> None:
    decision = policy().before(ctx(ActionName.CLUSTER_SCALE_IN, cluster(1), inputs={"count": 2}))
    assert dig(decision.data, "deletion", "candidates") == ["N1"]
    assert dig(decision.data, "deletion", "count") == 1


def test_s3_scale_in_uses_prior_count(cluster: Cluster, ctx: Ctx) -> None:
    c = ctx(
        ActionName.CLUSTER_SCALE_IN,
        cluster(5),
        inputs={"count": 4},
        data={"deletion": {"count": 2}},
    )
    decision = policy().before(c)
    assert decision.data["deletion"] == {"count": 2, "candidates": ["N1", "N2"], **FIXED}


def test_update_overrides_prior_count_with_victims(cluster: Cluster, ctx: Ctx) -> None:
    c = ctx(ActionName.CLUSTER_SCALE_IN, cluster(2), data={"deletion": {"count": 3}})
    assert dig(policy().before(c).data, "deletion", "count") == 2


def test_s4_resize_shrink_parses_inputs(cluster: Cluster, ctx: Ctx) -> None:
    inputs = {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -2, "strict": True}
    decision = policy().before(ctx(ActionName.CLUSTER_RESIZE, cluster(5), inputs=inputs))
    assert decision.status is CheckStatus.OK
    assert decision.data["deletion"] == {"count": 2, "candidates": ["N1", "N2"], **FIXED}


def test_s4_resize_parse_uses_real_member_count(cluster: Cluster, ctx: Ctx) -> None:
    # desired_capacity says 9, but only 5 members exist: the shrink is from 5.
    inputs = {"adjustment_type": "EXACT_CAPACITY", "number": 4, "strict": True}
    c = ctx(ActionName.CLUSTER_RESIZE, cluster(5, desired=9), inputs=inputs)
    assert dig(policy().before(c).data, "deletion", "count") == 1


def test_s4_resize_parse_error(cluster: Cluster, ctx: Ctx) -> None:
    inputs = {"adjustment_type": "EXACT_CAPACITY", "number": 11, "max_size": 10, "strict": True}
    decision = policy().before(ctx(ActionName.CLUSTER_RESIZE, cluster(6), inputs=inputs))
    assert decision.status is CheckStatus.ERROR
    assert (
        decision.reason == "The target capacity (11) is greater than the specified max_size (10)."
    )
    assert "deletion" not in decision.data


def test_s4_resize_grow_chooses_nothing(cluster: Cluster, ctx: Ctx) -> None:
    inputs = {"adjustment_type": "CHANGE_IN_CAPACITY", "number": 2, "strict": True}
    decision = policy().before(ctx(ActionName.CLUSTER_RESIZE, cluster(3), inputs=inputs))
    assert decision.status is CheckStatus.OK
    assert decision.data == {"creation": {"count": 2}}


def test_s5_resize_with_scaling_decision(cluster: Cluster, ctx: Ctx) -> None:
    inputs = {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1}
    c = ctx(ActionName.CLUSTER_RESIZE, cluster(4), inputs=inputs, data={"deletion": {"count": 3}})
    assert dig(policy().before(c).data, "deletion", "candidates") == ["N1", "N2", "N3"]


def zoned_cluster(node: Node, cluster: Cluster) -> ClusterSnapshot:
    return cluster(
        [
            node(i, zone=("AZ-1", "AZ-2")[i % 2], region=("R-1", "R-2", "R-2")[i % 3])
            for i in range(1, 7)
        ]
    )


def test_s6_zones(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    data = {"deletion": {"count": 3, "zones": {"AZ-1": 2, "AZ-2": 1}}}
    decision = policy().before(
        ctx(ActionName.CLUSTER_SCALE_IN, zoned_cluster(node, cluster), data=data)
    )
    assert decision.data["deletion"] == {
        "count": 3,
        "zones": {"AZ-1": 2, "AZ-2": 1},
        "candidates": ["N2", "N4", "N1"],
        **FIXED,
    }


def test_s6_regions_take_precedence_over_zones(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    data = {"deletion": {"count": 3, "zones": {"AZ-1": 3}, "regions": {"R-2": 2, "R-1": 1}}}
    decision = policy().before(
        ctx(ActionName.CLUSTER_SCALE_IN, zoned_cluster(node, cluster), data=data)
    )
    # N3, N6; R-2: N1, N2, N4, N5 -> sorted regions, oldest first in each.
    assert dig(decision.data, "deletion", "candidates") == ["N3", "N1", "N2"]


def test_s6_zone_shortfall_is_clamped_not_a_crash(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    data = {"deletion": {"count": 4, "zones": {"AZ-1": 4}}}
    decision = policy().before(
        ctx(ActionName.CLUSTER_SCALE_IN, zoned_cluster(node, cluster), data=data)
    )
    assert decision.status is CheckStatus.OK
    assert dig(decision.data, "deletion", "candidates") == ["N2", "N4", "N6", "N1"]


def test_s7_node_delete(cluster: Cluster, ctx: Ctx) -> None:
    c = ctx(ActionName.NODE_DELETE, cluster(3), target_node_id="N2")
    decision = policy().before(c)
    assert decision.data == {"deletion": {"count": 1, "candidates": ["N2"], **FIXED}}
    assert decision.reason == "Candidates generated"


@pytest.mark.parametrize("criteria", list(Criteria))
def test_criteria_dispatch(criteria: Criteria, node: Node, cluster: Cluster, ctx: Ctx) -> None:
    nodes = [
        node(1, created_at=3.0),
        node(2, created_at=1.0, status=NodeStatus.ERROR),
        node(3, created_at=2.0),
    ]
    c = ctx(ActionName.CLUSTER_SCALE_IN, cluster(nodes), inputs={"count": 2})
    candidates = list_at(
        object_at(policy(criteria=criteria.value).before(c).data, "deletion"), "candidates"
    )
    assert candidates[0] == "N2"
    expected = {"OLDEST_FIRST": "N3", "YOUNGEST_FIRST": "N1", "OLDEST_PROFILE_FIRST": "N1"}
    if criteria.value in expected:
        assert candidates[1] == expected[criteria.value]


def test_protection_shortfall_is_an_error(node: Node, cluster: Cluster, ctx: Ctx) -> None:
    nodes = [node(1, protected=True), node(2), node(3, protected=True)]
    c = ctx(ActionName.CLUSTER_SCALE_IN, cluster(nodes), inputs={"count": 2})
    decision = policy().before(c)
    assert decision.status is CheckStatus.ERROR
    assert decision.reason == "Cannot remove 2 nodes: only 1 unprotected member"


HOOKS = {"type": "zaqar", "params": {"queue": "q1"}, "timeout": 120}
FULL_HOOKS = {
    "type": "zaqar",
    "params": {"queue": "q1", "url": ""},
    "timeout": 120,
    "default_result": "CONTINUE",
}


@pytest.mark.parametrize(
    ("action", "inputs", "extra"),
    [
        (ActionName.CLUSTER_SCALE_IN, {"count": 1}, {}),
        (ActionName.CLUSTER_RESIZE, {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1}, {}),
        # herd records hooks on these paths too (Senlin did not).
        (ActionName.CLUSTER_DEL_NODES, {"candidates": ["N1"]}, {}),
        (ActionName.NODE_DELETE, {}, {"target_node_id": "N1"}),
    ],
)
def test_hooks_are_saved(
    action: ActionName, inputs: dict[str, Any], extra: dict[str, Any], cluster: Cluster, ctx: Ctx
) -> None:
    decision = policy(hooks=HOOKS).before(ctx(action, cluster(3), inputs=inputs, **extra))
    assert decision.data["hooks"] == FULL_HOOKS


def test_no_hooks_no_hooks_key(cluster: Cluster, ctx: Ctx) -> None:
    assert "hooks" not in policy().before(ctx(ActionName.CLUSTER_SCALE_IN, cluster(2))).data


def test_input_data_is_not_mutated(cluster: Cluster, ctx: Ctx) -> None:
    data = {"deletion": {"count": 1}}
    policy().before(ctx(ActionName.CLUSTER_SCALE_IN, cluster(2), data=data))
    assert data == {"deletion": {"count": 1}}


@pytest.mark.parametrize(
    ("props", "message", "field"),
    [
        (
            {"criteria": "NEWEST"},
            "'NEWEST' must be one of the allowed values: OLDEST_FIRST, OLDEST_PROFILE_FIRST, "
            "YOUNGEST_FIRST, RANDOM",
            "properties.criteria",
        ),
        (
            {"destroy_after_deletion": "perhaps"},
            "The value 'perhaps' is not a valid Boolean",
            "properties.destroy_after_deletion",
        ),
        (
            {"grace_period": "soon"},
            "The value 'soon' is not a valid Integer",
            "properties.grace_period",
        ),
        (
            {"grace_period": -1},
            "The value '-1' of 'grace_period' must be greater than or equal to 0.",
            "properties.grace_period",
        ),
        ({"colour": "red"}, "Unrecognizable spec item 'colour'", "properties.colour"),
        ({"hooks": "zaqar"}, "'zaqar' is not a Map", "properties.hooks"),
        ({"hooks": {"kind": "x"}}, "Unrecognizable spec item 'kind'", "properties.hooks.kind"),
        (
            {"hooks": {"type": "sns", "params": {"queue": "q"}}},
            "'sns' must be one of the allowed values: zaqar, webhook",
            "properties.hooks.type",
        ),
        (
            {"hooks": {"params": {"queue": "q"}, "timeout": "x"}},
            "The value 'x' is not a valid Integer",
            "properties.hooks.timeout",
        ),
        (
            {"hooks": {"params": {"queue": "q"}, "timeout": -5}},
            "The value '-5' of 'timeout' must be greater than or equal to 0.",
            "properties.hooks.timeout",
        ),
        (
            {"hooks": {"type": "zaqar", "timeout": 5}},
            "A 'zaqar' lifecycle hook needs a non-empty 'params.queue'.",
            "properties.hooks.params.queue",
        ),
        (
            {"hooks": {"type": "webhook", "params": {"url": "ftp://x"}}},
            "A 'webhook' lifecycle hook needs an http(s) 'params.url', got 'ftp://x'.",
            "properties.hooks.params.url",
        ),
        (
            {"hooks": {"params": {"queue": "q"}, "default_result": "RETRY"}},
            "'RETRY' must be one of the allowed values: CONTINUE, ABANDON",
            "properties.hooks.default_result",
        ),
    ],
)
def test_spec_errors(props: dict[str, Any], message: str, field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        default_policy_registry().create(SPEC | {"properties": SPEC["properties"] | props})
    # The message is led by the key, as profile errors are (Senlin's text alone does not say).
    assert info.value.message == f"{field}: {message}"
    assert info.value.field == field


def test_strict_booleans_and_webhook_ok() -> None:
    p = policy(destroy_after_deletion="no", reduce_desired_capacity="ON")
    assert p.properties["destroy_after_deletion"] is False
    assert p.properties["reduce_desired_capacity"] is True
    hooks = {"type": "webhook", "params": {"url": "https://hooks.example/x"}}
    assert (
        dig(policy(hooks=hooks).properties, "hooks", "params", "url") == "https://hooks.example/x"
    )


def test_yaml_spec() -> None:
    text = """
type: senlin.policy.deletion
version: 1.1
description: remove the oldest
properties:
  criteria: OLDEST_FIRST
  hooks:
    type: zaqar
    timeout: 180
    params:
      queue: q
"""
    assert parse_spec(text).version == "1.1"
    kind, p = default_policy_registry().create(text)
    assert kind == "senlin.policy.deletion-1.1"
    assert dig(p.properties, "hooks", "timeout") == 180
