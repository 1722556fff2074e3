"""Cluster create, scale-out, scale-in, resize and del-nodes on a real engine (sim driver)."""

from __future__ import annotations

import time
import uuid

from tests.functional.engine.harness import Harness

from herd.store import tombstones
from herd.store.models import ClusterRow
from herd.types import ActionName, ResourceType


def test_create_then_scale_out_keeps_indexes_and_status(harness: Harness) -> None:
    cluster = harness.cluster(3, name="web")
    nodes = harness.nodes(cluster)
    assert [n.index for n in nodes] == [1, 2, 3]
    assert {n.status for n in nodes} == {"ACTIVE"}
    assert nodes[0].name == "node-web-001"

    action = harness.run(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 2})
    assert action.status == "SUCCEEDED", action.status_reason
    assert [n.index for n in harness.nodes(cluster)] == [1, 2, 3, 4, 5]
    row = harness.get_cluster(cluster)
    assert row is not None and row.desired_capacity == 5 and row.status == "ACTIVE"
    assert (
        row.status_reason
        == "CLUSTER_SCALE_OUT: number of active nodes is equal or above desired_capacity (5)."
    )


def test_scale_in_without_policy_removes_broken_nodes_first(harness: Harness) -> None:
    cluster = harness.cluster(5)
    nodes = harness.nodes(cluster)
    harness.set_node(nodes[3].id, status="ERROR")
    harness.set_node(nodes[1].id, health="CHECK_FAILED")
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 2})
    assert action.status == "SUCCEEDED", action.status_reason
    assert set(action.outputs["nodes_removed"]) == {nodes[3].id, nodes[1].id}
    assert len(harness.nodes(cluster)) == 3


def test_scale_in_below_min_size_fails_with_senlin_text(harness: Harness) -> None:
    cluster = harness.cluster(2, min_size=2)
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
    assert action.status == "FAILED"
    assert (
        action.status_reason == "The target capacity (1) is less than the cluster's min_size (2)."
    )
    assert len(harness.nodes(cluster)) == 2


def test_resize_percentage_and_exact(harness: Harness) -> None:
    cluster = harness.cluster(10)
    action = harness.run(
        ActionName.CLUSTER_RESIZE,
        cluster,
        {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -22, "strict": True},
    )
    assert action.status == "SUCCEEDED", action.status_reason
    assert len(harness.nodes(cluster)) == 8
    action = harness.run(
        ActionName.CLUSTER_RESIZE,
        cluster,
        {"adjustment_type": "EXACT_CAPACITY", "number": 9, "max_size": 12, "strict": True},
    )
    assert action.status == "SUCCEEDED", action.status_reason
    row = harness.get_cluster(cluster)
    assert row is not None and (row.desired_capacity, row.max_size) == (9, 12)
    assert len(harness.nodes(cluster)) == 9


def test_del_nodes_without_policy_leaves_orphans_and_reduces_desired(harness: Harness) -> None:
    cluster = harness.cluster(4)
    victim = harness.nodes(cluster)[0]
    action = harness.run(
        ActionName.CLUSTER_DEL_NODES,
        cluster,
        {"candidates": [victim.id], "count": 1, "destroy_after_deletion": False},
    )
    assert action.status == "SUCCEEDED", action.status_reason
    orphan = harness.node(victim.id)
    assert orphan is not None and orphan.cluster_id is None and orphan.index == -1
    assert orphan.physical_id == victim.physical_id and orphan.status == "ACTIVE"
    row = harness.get_cluster(cluster)
    assert row is not None and row.desired_capacity == 3


def test_cluster_delete_removes_every_member(harness: Harness) -> None:
    cluster = harness.cluster(3)
    node_ids = [n.id for n in harness.nodes(cluster)]
    action = harness.run(ActionName.CLUSTER_DELETE, cluster)
    assert action.status == "SUCCEEDED", action.status_reason
    assert harness.get_cluster(cluster) is None
    assert all(harness.node(n) is None for n in node_ids)


def test_create_failures_mark_nodes_error_and_cluster_warning(harness: Harness) -> None:
    profile = harness.profile({"failure_rate": 1.0})
    row = ClusterRow(
        id=str(uuid.uuid4()),
        name="bad",
        profile_id=profile,
        init_at=time.time(),
        min_size=1,
        max_size=-1,
        desired_capacity=2,
        next_index=1,
        timeout=3600,
        status="INIT",
        project="p1",
        created_at=time.time(),
        meta_data={},
        data={},
        config={},
        dependents={},
    )
    with harness.db.write() as session:
        session.add(row)
    action = harness.run(ActionName.CLUSTER_CREATE, row.id)
    assert action.status == "FAILED"
    assert action.status_reason.startswith("Failed in creating nodes:")
    assert {n.status for n in harness.nodes(row.id)} == {"ERROR"}
    cluster = harness.get_cluster(row.id)
    assert cluster is not None and cluster.status == "ERROR"
    assert cluster.status_reason == (
        "CLUSTER_CREATE: number of active nodes is below min_size (1). "
        "2 of 2 nodes not ACTIVE (2 ERROR)."
    )


def test_a_member_deleted_by_a_scale_in_takes_its_own_tombstone_with_it(harness: Harness) -> None:
    # A member whose own deletion failed keeps an ERROR tombstone; the result writer deletes
    # rows in bulk, which the mapper hook that takes a tombstone with its row never sees:
    # the tombstone outlived the row until an engine start.
    cluster = harness.cluster(3)
    failed = harness.nodes(cluster)[1].id
    harness.set_node(failed, status="ERROR", status_reason="Node deletion failed: boom")
    harness.tombstone(ResourceType.NODE, failed)
    with harness.db.write() as session:
        tombstones.mark_error(session, ResourceType.NODE, failed, "Node deletion failed: boom")
    action = harness.run(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 1})
    assert action.status == "SUCCEEDED", action.status_reason
    assert harness.node(failed) is None  # an ERROR member goes first
    with harness.db.read() as session:
        assert tombstones.get(session, ResourceType.NODE, failed) is None
