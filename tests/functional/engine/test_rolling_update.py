"""CLUSTER_UPDATE (new profile) and CLUSTER_RECOVER in the batch policy's batches (sim driver)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from sqlalchemy import select
from tests.functional.engine.harness import PROJECT, Harness

from herd.store import actions as action_store
from herd.store.models import ActionRow, EventRow
from herd.types import ActionName, NodeStatus

BATCH = {"type": "senlin.policy.batch", "version": "1.0"}


def _batch(min_in_service: int, max_batch_size: int = -1, pause_time: int = 0) -> dict[str, Any]:
    properties = {
        "min_in_service": min_in_service,
        "max_batch_size": max_batch_size,
        "pause_time": pause_time,
    }
    return {**BATCH, "properties": properties}


def _update_events(harness: Harness, cluster_id: str, action_id: str) -> list[str]:
    """Node ids in the order their update finished (one event each)."""
    with harness.db.read() as session:
        rows = session.scalars(
            select(EventRow)
            .where(EventRow.cluster_id == cluster_id, EventRow.otype == "NODE")
            .where(EventRow.status_reason == "Update succeeded.")
            .order_by(EventRow.timestamp)
        ).all()
        return [row.oid for row in rows]


def test_update_replaces_members_batch_by_batch_broken_first(harness: Harness) -> None:
    old = harness.profile({"create_latency": 0.01})
    cluster = harness.cluster(5, profile=old)
    harness.attach(cluster, _batch(min_in_service=3))
    nodes = harness.nodes(cluster)
    harness.set_node(nodes[3].id, status=NodeStatus.ERROR, status_reason="broken")
    new = harness.profile({"create_latency": 0.02})

    action = harness.run(ActionName.CLUSTER_UPDATE, cluster, {"profile_id": new})

    assert action.status == "SUCCEEDED", action.status_reason
    plan = action.data["update"]["plan"]
    ids = [n.id for n in nodes]
    assert plan == [[ids[3], ids[0]], [ids[1], ids[2]], [ids[4]]]  # batch size 5 - 3
    assert action.data["update"]["batch"] == 3
    after = harness.nodes(cluster)
    assert {n.profile_id for n in after} == {new}
    assert {n.status for n in after} == {"ACTIVE"}
    assert all(a.physical_id != b.physical_id for a, b in zip(nodes, after, strict=True))
    order = _update_events(harness, cluster, action.id)
    position = {node: order.index(node) for node in ids}
    # Batch by batch: every member of a batch finished before the next batch's first.
    for earlier, later in itertools.pairwise(plan):
        assert max(position[n] for n in earlier) < min(position[n] for n in later)
    row = harness.get_cluster(cluster)
    assert row is not None and row.profile_id == new and row.status == "ACTIVE"


def test_a_failed_batch_stops_the_rollout_with_the_cluster_warning(harness: Harness) -> None:
    old = harness.profile()
    cluster = harness.cluster(4, profile=old)
    harness.attach(cluster, _batch(min_in_service=3))
    broken = harness.profile({"failure_rate": 1.0})

    action = harness.run(ActionName.CLUSTER_UPDATE, cluster, {"profile_id": broken})

    assert action.status == "FAILED"
    assert action.status_reason.startswith("Rolling update stopped at batch 1 of 4 (1 of 1")
    assert "batches 2..4 not started" in action.status_reason
    row = harness.get_cluster(cluster)
    assert row is not None
    assert row.status == "WARNING"
    assert row.status_reason == action.status_reason
    assert row.profile_id == old  # the cluster moves to the new profile only when all did
    nodes = harness.nodes(cluster)
    assert [n.status for n in nodes] == ["ERROR", "ACTIVE", "ACTIVE", "ACTIVE"]
    assert [n.profile_id for n in nodes[1:]] == [old, old, old]


@pytest.mark.parametrize(
    ("batch", "done"),
    [(0, 0), (0, 1), (1, 2), (1, 3)],
    ids=["before-batch-1", "mid-batch-1", "before-batch-2", "mid-batch-2"],
)
def test_a_resumed_update_continues_at_its_batch(harness: Harness, batch: int, done: int) -> None:
    """What a run after kill -9 finds: the schedule stored, ``done`` members rebuilt."""
    old = harness.profile()
    cluster = harness.cluster(4, profile=old)
    harness.attach(cluster, _batch(min_in_service=2))
    nodes = harness.nodes(cluster)
    new = harness.profile({"create_latency": 0.01})
    for node in nodes[:done]:
        harness.set_node(node.id, profile_id=new)
    schedule = {
        "pause_time": 0,
        "min_in_service": 2,
        "max_batch_size": -1,
        "batch_size": 2,
        "plan": [[nodes[0].id, nodes[1].id], [nodes[2].id, nodes[3].id]],
        "batch": batch,
    }
    with harness.db.write() as session:
        row = action_store.new_action(
            action=ActionName.CLUSTER_UPDATE,
            target=cluster,
            cluster_id=cluster,
            project=PROJECT,
            inputs={"profile_id": new},
            now=time.time(),
        )
        row.data = {"update": schedule}
        session.add(row)
    harness.engine.notify()
    action: ActionRow = harness.wait(row.id)

    assert action.status == "SUCCEEDED", action.status_reason
    assert action.data["update"]["plan"] == schedule["plan"]  # not planned again
    after = {n.id: n for n in harness.nodes(cluster)}
    for position, node in enumerate(nodes):
        rebuilt = after[node.id].physical_id != node.physical_id
        assert rebuilt is (position >= done), f"member {position}"  # each one exactly once
    assert {n.profile_id for n in after.values()} == {new}


def test_profile_only_keeps_the_members_profile(harness: Harness) -> None:
    old = harness.profile()
    cluster = harness.cluster(2, profile=old)
    new = harness.profile({"create_latency": 0.01})
    action = harness.run(
        ActionName.CLUSTER_UPDATE, cluster, {"profile_id": new, "profile_only": True}
    )
    assert action.status == "SUCCEEDED", action.status_reason
    row = harness.get_cluster(cluster)
    assert row is not None and row.profile_id == new
    assert {n.profile_id for n in harness.nodes(cluster)} == {old}


def test_recover_runs_in_batches(harness: Harness) -> None:
    cluster = harness.cluster(4)
    harness.attach(cluster, _batch(min_in_service=3))
    nodes = harness.nodes(cluster)
    for node in nodes[1:3]:
        harness.set_node(node.id, status=NodeStatus.ERROR, status_reason="broken")

    action = harness.run(ActionName.CLUSTER_RECOVER, cluster)

    assert action.status == "SUCCEEDED", action.status_reason
    assert action.data["update"]["plan"] == [[nodes[1].id], [nodes[2].id]]
    children = sorted(harness.children(action.id), key=lambda c: c.created_at or 0)
    assert [c.target for c in children] == [nodes[1].id, nodes[2].id]
    # The second batch's child was planned only after the first one ended.
    assert (children[1].created_at or 0) >= (children[0].updated_at or 0)
    assert {n.status for n in harness.nodes(cluster)} == {"ACTIVE"}


def test_a_rollout_that_breaks_every_member_leaves_an_error_cluster_a_new_profile_fixes(
    harness: Harness,
) -> None:
    # Issue 24: a cluster none of whose members works is ERROR with a reason saying so (it
    # was WARNING unless below min_size), and a new profile is still taken: it is the fix.
    old = harness.profile()
    cluster = harness.cluster(2, profile=old)
    broken = harness.profile({"failure_rate": 1.0})

    action = harness.run(ActionName.CLUSTER_UPDATE, cluster, {"profile_id": broken})

    assert action.status == "FAILED"
    row = harness.get_cluster(cluster)
    assert row is not None and row.status == "ERROR"
    assert row.status_reason == (
        "CLUSTER_UPDATE: no node is ACTIVE (desired_capacity 2). 2 of 2 nodes not ACTIVE (2 ERROR)."
    )
    fixed = harness.profile()
    action = harness.run(ActionName.CLUSTER_UPDATE, cluster, {"profile_id": fixed})
    assert action.status == "SUCCEEDED", action.status_reason
    row = harness.get_cluster(cluster)
    assert row is not None and (row.status, row.profile_id) == ("ACTIVE", fixed)
    assert [(n.status, n.profile_id) for n in harness.nodes(cluster)] == [("ACTIVE", fixed)] * 2
