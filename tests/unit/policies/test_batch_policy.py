"""senlin.policy.batch-1.0: spec, batch sizes (Senlin's rule), order (broken first), resume."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.unit.policies.conftest import make_cluster, make_ctx, make_node

from herd.errors import InvalidSpec
from herd.json_types import dig, object_at
from herd.policies.batch import BatchPolicy, batch_size, plan_update, split_batches
from herd.policies.registry import default_policy_registry
from herd.types import ActionName, CheckStatus, HealthStatus, NodeStatus, Phase


def _spec(**properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.batch", "version": "1.0", "properties": properties}


def test_defaults_are_senlins() -> None:
    type_name, policy = default_policy_registry().create(_spec())
    assert type_name == "senlin.policy.batch-1.0"
    assert policy.properties == {"min_in_service": 1, "max_batch_size": -1, "pause_time": 60}
    assert policy.priority == 200
    assert policy.applies_to(ActionName.CLUSTER_UPDATE, Phase.BEFORE)
    assert not policy.applies_to(ActionName.CLUSTER_UPDATE, Phase.AFTER)


@pytest.mark.parametrize(
    ("properties", "field", "text"),
    [
        ({"min_in_service": "many"}, "properties.min_in_service", "not a valid Integer"),
        ({"min_in_service": -1}, "properties.min_in_service", "greater than or equal to 0"),
        ({"pause_time": -5}, "properties.pause_time", "greater than or equal to 0"),
        ({"max_batch_size": 0}, "properties.max_batch_size", "-1 (no limit) or greater"),
        ({"max_batch_size": -2}, "properties.max_batch_size", "-1 (no limit) or greater"),
        ({"batch": 2}, "properties.batch", "Unrecognizable spec item 'batch'"),
    ],
)
def test_bad_properties_name_the_field(properties: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        default_policy_registry().create(_spec(**properties))
    assert caught.value.field == field
    assert text in str(caught.value)


@pytest.mark.parametrize(
    ("total", "min_in_service", "max_batch", "expected"),
    [
        (20, 15, -1, 5),  # the members above min_in_service
        (20, 15, 2, 2),  # capped
        (20, 1, -1, 19),
        (4, 5, -1, 2),  # no more members than min_in_service: two halves (Senlin)
        (5, 5, -1, 3),
        (1, 1, -1, 1),
    ],
)
def test_batch_size_is_senlins_rule(
    total: int, min_in_service: int, max_batch: int, expected: int
) -> None:
    assert batch_size(total, min_in_service, max_batch) == expected


def test_broken_members_go_first_then_index_order() -> None:
    nodes = [
        make_node(1),
        make_node(2, status=NodeStatus.ERROR),
        make_node(3),
        make_node(4, health=HealthStatus.CHECK_FAILED),
        make_node(5, created_at=None),
        make_node(6, status=NodeStatus.WARNING),
    ]
    assert plan_update(nodes, min_in_service=4, max_batch_size=-1) == [
        ["N2", "N4"],
        ["N6", "N5"],
        ["N1", "N3"],
    ]


@given(
    total=st.integers(min_value=1, max_value=60),
    min_in_service=st.integers(min_value=0, max_value=60),
    max_batch=st.one_of(st.just(-1), st.integers(min_value=1, max_value=20)),
    broken=st.sets(st.integers(min_value=1, max_value=60)),
)
def test_a_plan_keeps_min_in_service_serving(
    total: int, min_in_service: int, max_batch: int, broken: set[int]
) -> None:
    """Each member once; while a batch runs, at least min_in_service serve (when possible)."""
    nodes = [
        make_node(i, status=NodeStatus.ERROR if i in broken else NodeStatus.ACTIVE)
        for i in range(1, total + 1)
    ]
    plan = plan_update(nodes, min_in_service, max_batch)
    flat = [n for batch in plan for n in batch]
    assert sorted(flat) == sorted(n.id for n in nodes)
    assert all(0 < len(batch) <= (max_batch if max_batch != -1 else total) for batch in plan)
    serving = {n.id for n in nodes if n.status is NodeStatus.ACTIVE}
    for batch in plan:
        during = serving - set(batch)
        if total > min_in_service:
            assert len(during) >= min(min_in_service, len(serving))
        serving |= set(batch)  # a replaced member serves again


def test_before_update_writes_senlins_schedule() -> None:
    policy = BatchPolicy({"min_in_service": 3, "max_batch_size": 1, "pause_time": 2})
    decision = policy.before(make_ctx(ActionName.CLUSTER_UPDATE, make_cluster(4)))
    assert decision.status is CheckStatus.OK
    assert decision.reason == "Batching request validated."
    assert decision.data["update"] == {
        "pause_time": 2,
        "min_in_service": 3,
        "max_batch_size": 1,
        "batch_size": 1,
        "plan": [["N1"], ["N2"], ["N3"], ["N4"]],
    }


def test_before_recover_writes_settings_without_plan() -> None:
    policy = BatchPolicy({"min_in_service": 2})
    decision = policy.before(make_ctx(ActionName.CLUSTER_RECOVER, make_cluster(5)))
    assert dig(decision.data, "update", "batch_size") == 3
    assert "plan" not in object_at(decision.data, "update")


def test_a_resumed_action_keeps_its_schedule() -> None:
    stored = {"pause_time": 0, "batch_size": 1, "plan": [["N9"], ["N1"]], "batch": 1}
    policy = BatchPolicy({})
    decision = policy.before(
        make_ctx(ActionName.CLUSTER_UPDATE, make_cluster(3), data={"update": stored})
    )
    assert decision.data["update"] == stored


def test_split_batches() -> None:
    assert split_batches(["a", "b", "c"], 2) == [["a", "b"], ["c"]]
    assert split_batches([], 2) == []
