"""Cancelling a running action, and taking over the locks of a dead engine."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import select
from tests.functional.engine.harness import Harness

from herd.engine.driver_args import resource_ref
from herd.engine.stopped import DELETION_CANCELLED
from herd.store import locks, tombstones
from herd.store.models import ActionRow, ClusterLockRow, EngineRow
from herd.types import ActionName, LockScope, ResourceType


def test_cancel_stops_a_slow_scale_out_and_its_children(harness: Harness) -> None:
    profile = harness.profile({"create_latency": 0.5})
    cluster = harness.cluster(0, profile=profile)
    action_id = harness.submit(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 200})
    action = harness.cancel_when(
        action_id, lambda: any(n.status == "ACTIVE" for n in harness.nodes(cluster))
    )
    assert action.status == "CANCELLED"
    assert action.status_reason == f"CLUSTER_SCALE_OUT [{action_id[:8]}] cancelled"
    children = harness.children(action_id)
    assert {c.status for c in children} <= {"SUCCEEDED", "CANCELLED"}
    assert any(c.status == "CANCELLED" for c in children)
    with harness.db.read() as session:
        assert session.get(ClusterLockRow, cluster) is None


def test_lock_of_a_dead_engine_is_taken_over(harness: Harness) -> None:
    cluster = harness.cluster(1)
    dead_engine = str(uuid.uuid4())
    stuck = str(uuid.uuid4())
    now = time.time()
    with harness.db.write() as session:
        session.add(
            EngineRow(
                id=dead_engine,
                host="elsewhere",
                pid=1,
                started_at=now - 100,
                heartbeat_at=now - 100,
            )
        )
        session.add(
            ActionRow(
                id=stuck,
                name="stuck",
                cluster_id=cluster,
                target=cluster,
                action="CLUSTER_CHECK",
                cause="RPC Request",
                owner=dead_engine,
                status="RUNNING",
                project="p1",
                inputs={},
                outputs={},
                data={},
                created_at=now - 100,
            )
        )
        session.flush()
        assert locks.acquire_cluster(session, cluster, stuck, LockScope.CLUSTER, now - 100, 0)
    action = harness.run(ActionName.CLUSTER_SCALE_OUT, cluster, {"count": 1})
    assert action.status == "SUCCEEDED", action.status_reason
    # The heartbeat pass finds the dead engine, forgets it, and runs its action again.
    resumed = harness.wait(stuck)
    assert resumed.status == "SUCCEEDED", resumed.status_reason
    assert any(e.status == "RESUMED" for e in harness.events(cluster))
    with harness.db.read() as session:
        assert dead_engine not in session.scalars(select(EngineRow.id)).all()


def test_a_cancelled_cluster_delete_is_a_deletion_that_did_not_finish(harness: Harness) -> None:
    # Issue 24's cancel matrix: the cluster said DELETING "Deletion in progress." for good
    # with nothing running; now it is what is left, and its tombstone says how to finish.
    profile = harness.profile({"delete_latency": 0.5})
    cluster = harness.cluster(80, profile=profile)
    action_id = harness.submit(ActionName.CLUSTER_DELETE, cluster)
    harness.tombstone(ResourceType.CLUSTER, cluster, action_id)
    cancelled = harness.cancel_when(action_id, lambda: len(harness.nodes(cluster)) < 80)
    assert cancelled.status == "CANCELLED"
    left = harness.nodes(cluster)
    # the deletions under way when the cancel landed are finished, the others never started
    assert len(left) < 80 and {n.status for n in left} <= {"ACTIVE"}
    found = harness.get_cluster(cluster)
    assert found is not None
    assert (found.status, found.desired_capacity) == ("ACTIVE", len(left))
    with harness.db.read() as session:
        tombstone = tombstones.get(session, ResourceType.CLUSTER, cluster)
        assert tombstone is not None and tombstone.status == "ERROR"
        assert tombstone.reason == (
            f"Deletion cancelled with {len(left)} member(s) left; a new DELETE finishes it."
        )


def test_a_cancelled_scale_in_leaves_no_member_deleting(harness: Harness) -> None:
    # A member whose deletion never ran is ACTIVE again when it has its resource; one
    # without (a failed create) stayed DELETING with nothing running: now it is ERROR.
    cluster = harness.cluster(120, profile=harness.profile({"delete_latency": 0.5}))
    sim = harness.engine.ctx.drivers.get("herd.sim-1.0")
    bare = {n.id: n for n in harness.nodes(cluster)[::4]}
    sim.delete_many([resource_ref(n, {}) for n in bare.values()])
    # Left ACTIVE, so that they rank among the others: as ERROR they would all be among the
    # first 32 children, deleted at once (no resource to wait for), and on a busy machine
    # none could be left by the time the cancel lands.
    for node_id in bare:
        harness.set_node(node_id, physical_id=None, status_reason="lost")
    action_id = harness.submit(ActionName.CLUSTER_SCALE_IN, cluster, {"count": 120})
    # 32 node threads: most children wait their turn and never run
    cancelled = harness.cancel_when(action_id, lambda: len(harness.nodes(cluster)) < 120)

    assert cancelled.status == "CANCELLED"
    left = harness.nodes(cluster)
    assert any(n.id in bare for n in left)
    assert {(n.status, n.status_reason, n.physical_id is None) for n in left} == {
        ("ACTIVE", DELETION_CANCELLED, False),
        ("ERROR", DELETION_CANCELLED, True),
    }
    assert set(sim.discover()) == {n.id for n in left if n.physical_id}
    found = harness.get_cluster(cluster)
    assert found is not None and found.desired_capacity == len(left)
    with harness.db.read() as session:
        assert tombstones.list_all(session, ResourceType.NODE) == []
