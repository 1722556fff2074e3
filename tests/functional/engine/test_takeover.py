"""Locks and child actions of a dead engine are taken over like top-level ones; force forces.

Each test writes the rows a ``kill -9`` leaves behind (tests/e2e/test_crash_matrix.py does the
same with a real ``herd serve`` killed by SIGKILL) and lets a real engine find them.
"""

from __future__ import annotations

import time
import uuid

from sqlalchemy import select
from tests.functional.engine.harness import PROJECT, Harness

from herd.store import actions as action_store
from herd.store import locks
from herd.store.database import Database
from herd.store.models import ActionRow, ClusterLockRow, EngineRow, NodeLockRow
from herd.types import ActionCause, ActionControl, ActionName, ActionStatus, LockScope


def _engine(db: Database, *, alive: bool) -> str:
    """An engine row: a dead one (heartbeat long ago), or one alive for the whole test."""
    engine_id = str(uuid.uuid4())
    now = time.time()
    beat = now + 3600 if alive else now - 100
    with db.write() as session:
        session.add(
            EngineRow(id=engine_id, host="elsewhere", pid=1, started_at=now, heartbeat_at=beat)
        )
    return engine_id


def _action(
    db: Database,
    verb: ActionName,
    target: str,
    cluster_id: str | None,
    *,
    owner: str | None,
    status: ActionStatus = ActionStatus.RUNNING,
    parent_id: str | None = None,
) -> str:
    with db.write() as session:
        row = action_store.new_action(
            action=verb,
            target=target,
            cluster_id=cluster_id,
            project=PROJECT,
            cause=ActionCause.DERIVED if parent_id else ActionCause.RPC,
            status=status,
            parent_id=parent_id,
            owner=owner,
            now=time.time(),
        )
        session.add(row)
    return row.id


def _crashed_node_delete(harness: Harness, engine: str) -> tuple[str, str, str, str]:
    """A NODE_DELETE whose engine died while its child was deleting the node, as the crash
    leaves it: both RUNNING, the cluster lock held by the parent, the node lock by the child."""
    cluster = harness.cluster(2)
    node = harness.nodes(cluster)[0].id
    parent = _action(harness.db, ActionName.NODE_DELETE, node, cluster, owner=engine)
    child = _action(
        harness.db, ActionName.NODE_DELETE, node, cluster, owner=engine, parent_id=parent
    )
    now = time.time()
    with harness.db.write() as session:
        action_store.add_dependency(session, child, parent)
        assert locks.acquire_cluster(session, cluster, parent, LockScope.NODE, now, 0)
        locks.hand_nodes_to(session, [(node, child)], now)
    harness.set_node(node, status="DELETING", status_reason="Deletion in progress")
    return cluster, node, parent, child


def _open_actions_and_locks(harness: Harness) -> tuple[list[str], int, int]:
    with harness.db.read() as session:
        open_actions = session.scalars(
            select(ActionRow.action).where(
                ActionRow.status.not_in(["SUCCEEDED", "FAILED", "CANCELLED"])
            )
        ).all()
        node_locks = len(session.scalars(select(NodeLockRow.node_id)).all())
        cluster_locks = len(session.scalars(select(ClusterLockRow.cluster_id)).all())
    return list(open_actions), node_locks, cluster_locks


def test_a_node_delete_resumed_after_its_engine_died_takes_its_node_back(
    harness: Harness,
) -> None:
    dead = _engine(harness.db, alive=False)
    cluster, node, parent, child = _crashed_node_delete(harness, dead)
    # The heartbeat pass re-queues the parent; its child's lock passes to it.
    resumed = harness.wait(parent)
    assert resumed.status == "SUCCEEDED", resumed.status_reason
    assert harness.node(node) is None
    assert harness.wait(child).status == "SUCCEEDED"
    cluster_row = harness.get_cluster(cluster)
    assert cluster_row is not None and cluster_row.desired_capacity == 1
    assert _open_actions_and_locks(harness) == ([], 0, 0)


def test_a_child_left_open_by_an_ended_parent_holds_nothing(harness: Harness) -> None:
    # What the bug left: the resumed delete FAILED, its child RUNNING without an owner and
    # with the node lock (written under a live engine, so no take-over runs in between).
    live = _engine(harness.db, alive=True)
    _cluster, node, parent, child = _crashed_node_delete(harness, live)
    with harness.db.write() as session:
        for action_id, status in ((parent, ActionStatus.FAILED), (child, ActionStatus.RUNNING)):
            row = session.get(ActionRow, action_id)
            assert row is not None
            row.status, row.owner = status, None
    # A new delete (not forced) gets the lock: the child's parent has ended.
    action = harness.run(ActionName.NODE_DELETE, node)
    assert action.status == "SUCCEEDED", action.status_reason
    assert harness.node(node) is None


def test_a_live_holder_keeps_its_lock_unless_the_delete_is_forced(harness: Harness) -> None:
    live = _engine(harness.db, alive=True)
    cluster = harness.cluster(2)
    node = harness.nodes(cluster)[0].id
    holder = _action(harness.db, ActionName.NODE_UPDATE, node, cluster, owner=live)
    with harness.db.write() as session:
        assert locks.acquire_node(session, node, holder, time.time(), time.time() - 3)
    refused = harness.run(ActionName.NODE_DELETE, node)
    assert (refused.status, refused.status_reason) == ("FAILED", "Failed in locking node")
    assert harness.node(node) is not None

    forced = harness.run(ActionName.NODE_DELETE, node, {"force": True})
    assert forced.status == "SUCCEEDED", forced.status_reason
    assert harness.node(node) is None
    with harness.db.read() as session:
        robbed = session.get(ActionRow, holder)
        assert robbed is not None and robbed.control is ActionControl.FORCED_OUT
        # the reason its runner ends it with (CANCELLED), written when the lock was taken
        assert robbed.status_reason == f"{locks.NODE_TAKEN} (action {forced.id[:8]})."


def test_a_forced_cluster_delete_takes_the_cluster_lock(harness: Harness) -> None:
    live = _engine(harness.db, alive=True)
    cluster = harness.cluster(2)
    holder = _action(harness.db, ActionName.CLUSTER_CHECK, cluster, cluster, owner=live)
    with harness.db.write() as session:
        assert locks.acquire_cluster(
            session, cluster, holder, LockScope.CLUSTER, time.time(), time.time() - 3
        )
    forced = harness.run(ActionName.CLUSTER_DELETE, cluster, {"force": True})
    assert forced.status == "SUCCEEDED", forced.status_reason
    assert harness.get_cluster(cluster) is None
    assert harness.nodes(cluster) == []


def test_an_ended_action_ends_its_open_children_and_frees_their_nodes(harness: Harness) -> None:
    # A resumed delete that cannot take its cluster lock (a live exclusive holder) fails in
    # the end: its child, left RUNNING by the crash, must not outlive it with the node lock.
    dead, live = _engine(harness.db, alive=False), _engine(harness.db, alive=True)
    cluster, node, parent, child = _crashed_node_delete(harness, dead)
    blocker = _action(harness.db, ActionName.CLUSTER_CHECK, cluster, cluster, owner=live)
    with harness.db.write() as session:
        locks.release_all(session, parent)
        assert locks.acquire_cluster(session, cluster, blocker, LockScope.CLUSTER, time.time(), 0)
    ended = harness.wait(parent)
    assert (ended.status, ended.status_reason) == ("FAILED", "Failed in locking cluster")
    orphaned = harness.wait(child)
    assert (orphaned.status, orphaned.status_reason) == (
        "FAILED",
        "Parent action ended before this action finished.",
    )
    with harness.db.read() as session:
        assert session.get(NodeLockRow, node) is None
    stuck = harness.node(node)
    assert stuck is not None and stuck.status == "ERROR"


def test_live_holders_follow_the_root_action(db_url: str) -> None:
    """The one liveness rule, on the rows (no engine runs here to change them): a child lives
    and dies with its root."""
    database = Database(db_url)
    database.migrate()
    try:
        _holder_rows(database)
    finally:
        database.dispose()


def _holder_rows(database: Database) -> None:
    live, dead = _engine(database, alive=True), _engine(database, alive=False)
    cluster = str(uuid.uuid4())
    on_live = _action(database, ActionName.CLUSTER_SCALE_IN, cluster, cluster, owner=live)
    child_of_live = _action(
        database, ActionName.NODE_DELETE, "n1", cluster, owner=None, parent_id=on_live
    )
    on_dead = _action(database, ActionName.CLUSTER_SCALE_IN, cluster, cluster, owner=dead)
    child_of_dead = _action(
        database, ActionName.NODE_DELETE, "n2", cluster, owner=live, parent_id=on_dead
    )
    requeued = _action(
        database,
        ActionName.CLUSTER_SCALE_IN,
        cluster,
        cluster,
        owner=None,
        status=ActionStatus.READY,
    )
    child_of_requeued = _action(
        database, ActionName.NODE_DELETE, "n3", cluster, owner=None, parent_id=requeued
    )
    ended = _action(
        database,
        ActionName.CLUSTER_SCALE_IN,
        cluster,
        cluster,
        owner=live,
        status=ActionStatus.FAILED,
    )
    child_of_ended = _action(
        database, ActionName.NODE_DELETE, "n4", cluster, owner=live, parent_id=ended
    )
    everyone = [
        on_live,
        child_of_live,
        on_dead,
        child_of_dead,
        requeued,
        child_of_requeued,
        ended,
        child_of_ended,
    ]
    dead_before = time.time() - 3
    with database.read() as session:
        alive = locks.live_holders(session, everyone, dead_before)
        # A re-queued root keeps its children's locks for its resumed run, not its own.
        assert alive == {on_live, child_of_live, child_of_requeued}
        # ... and takes them over itself when it runs again.
        assert locks.live_holders(session, everyone, dead_before, taker=requeued) == {
            on_live,
            child_of_live,
        }
    with database.write() as session:
        locks.hand_nodes_to(
            session,
            [
                ("n1", child_of_live),
                ("n2", child_of_dead),
                ("n3", child_of_requeued),
                ("n4", child_of_ended),
            ],
            time.time(),
        )
    with database.read() as session:
        assert locks.locked_nodes(session, ["n1", "n2", "n3", "n4"], dead_before) == {"n1", "n3"}
        assert locks.node_lock_holder(session, "n3", dead_before) == child_of_requeued
        assert locks.node_lock_holder(session, "n4", dead_before) is None
