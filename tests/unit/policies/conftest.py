"""Builders shared by the policy tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.policies.base import PolicyContext
from herd.types import ActionName, NodeStatus, Phase

NodeFactory = Callable[..., NodeSnapshot]
ClusterFactory = Callable[..., ClusterSnapshot]
ContextFactory = Callable[..., PolicyContext]


def make_node(index: int, **overrides: Any) -> NodeSnapshot:
    values: dict[str, Any] = {
        "id": f"N{index}",
        "name": f"node-{index}",
        "index": index,
        "status": NodeStatus.ACTIVE,
        "created_at": 1000.0 + index,
        "profile_created_at": 500.0 + index,
    }
    values.update(overrides)
    return NodeSnapshot(**values)


def make_cluster(
    nodes: Sequence[NodeSnapshot] | int = 0,
    min_size: int = 0,
    max_size: int = -1,
    desired: int | None = None,
) -> ClusterSnapshot:
    members = (
        tuple(make_node(i + 1) for i in range(nodes)) if isinstance(nodes, int) else tuple(nodes)
    )
    return ClusterSnapshot(
        id="C1",
        name="c1",
        min_size=min_size,
        max_size=max_size,
        desired_capacity=len(members) if desired is None else desired,
        nodes=members,
    )


def make_ctx(
    action: ActionName,
    cluster: ClusterSnapshot,
    inputs: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
    phase: Phase = Phase.BEFORE,
    **extra: Any,
) -> PolicyContext:
    return PolicyContext(
        action=action,
        phase=phase,
        cluster=cluster,
        inputs=inputs or {},
        data=data or {},
        now=extra.pop("now", 10_000.0),
        seed=extra.pop("seed", 42),
        **extra,
    )


@pytest.fixture
def node() -> NodeFactory:
    return make_node


@pytest.fixture
def cluster() -> ClusterFactory:
    return make_cluster


@pytest.fixture
def ctx() -> ContextFactory:
    return make_ctx
