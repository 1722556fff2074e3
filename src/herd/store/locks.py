"""Cluster and node locks kept in the database.

A cluster lock is a semaphore: ``-1`` means one exclusive holder, a positive
number counts shared (node-scoped) holders. A node lock has one holder. Holders
are action ids; an action's ``owner`` is its engine, and an engine whose
heartbeat stopped is dead, so its locks can be taken over. Each function runs
inside the caller's write transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from herd.store.bulk import chunked, insert_rows
from herd.store.models import ActionRow, ClusterLockRow, EngineRow, NodeLockRow
from herd.types import ActionStatus, LockScope


def _holder_alive(session: Session, action_id: str, dead_before: float) -> bool:
    """A holder is alive when its action still runs on an engine with a fresh heartbeat."""
    action = session.get(ActionRow, action_id)
    if action is None or ActionStatus(action.status).is_final:
        return False
    if action.owner is None:
        return action.status != ActionStatus.READY
    engine = session.get(EngineRow, action.owner)
    return engine is not None and engine.heartbeat_at >= dead_before


def acquire_cluster(
    session: Session,
    cluster_id: str,
    action_id: str,
    scope: LockScope,
    now: float,
    dead_before: float,
) -> bool:
    """Take the cluster lock for ``action_id``; True when it is held afterwards."""
    row = session.get(ClusterLockRow, cluster_id, with_for_update=True)
    semaphore = -1 if scope is LockScope.CLUSTER else 1
    if row is None:
        session.add(
            ClusterLockRow(
                cluster_id=cluster_id, action_ids=[action_id], semaphore=semaphore, updated_at=now
            )
        )
        session.flush()
        return True
    holders = list(row.action_ids)
    if action_id in holders:
        return True
    live = [h for h in holders if _holder_alive(session, h, dead_before)]
    if not live:
        row.action_ids = [action_id]
        row.semaphore = semaphore
        row.updated_at = now
        return True
    if scope is LockScope.NODE and row.semaphore > 0:
        row.action_ids = [*live, action_id]
        row.semaphore = len(row.action_ids)
        row.updated_at = now
        return True
    return False


def release_cluster(session: Session, cluster_id: str, action_id: str) -> None:
    row = session.get(ClusterLockRow, cluster_id, with_for_update=True)
    if row is None or action_id not in row.action_ids:
        return
    remaining = [h for h in row.action_ids if h != action_id]
    if not remaining or row.semaphore < 0:
        session.delete(row)
    else:
        row.action_ids = remaining
        row.semaphore = len(remaining)


def acquire_node(
    session: Session, node_id: str, action_id: str, now: float, dead_before: float
) -> bool:
    row = session.get(NodeLockRow, node_id, with_for_update=True)
    if row is None:
        session.add(NodeLockRow(node_id=node_id, action_id=action_id, updated_at=now))
        session.flush()
        return True
    if row.action_id == action_id or not _holder_alive(session, row.action_id, dead_before):
        row.action_id = action_id
        row.updated_at = now
        return True
    return False


def release_node(session: Session, node_id: str, action_id: str) -> None:
    session.execute(
        delete(NodeLockRow).where(
            NodeLockRow.node_id == node_id, NodeLockRow.action_id == action_id
        )
    )


def release_all(session: Session, action_id: str) -> None:
    """Drop every lock ``action_id`` holds (used when an action ends in any way)."""
    session.execute(delete(NodeLockRow).where(NodeLockRow.action_id == action_id))
    for row in session.scalars(select(ClusterLockRow)).all():
        if action_id in row.action_ids:
            release_cluster(session, row.cluster_id, action_id)


def cluster_lock_holders(session: Session, cluster_id: str, dead_before: float) -> list[str]:
    row = session.get(ClusterLockRow, cluster_id)
    if row is None:
        return []
    return [h for h in row.action_ids if _holder_alive(session, h, dead_before)]


def node_lock_holder(session: Session, node_id: str, dead_before: float) -> str | None:
    row = session.get(NodeLockRow, node_id)
    if row is None or not _holder_alive(session, row.action_id, dead_before):
        return None
    return row.action_id


def held_by_engines(session: Session, engine_ids: Sequence[str]) -> list[str]:
    """Action ids holding locks that belong to the given engines."""
    if not engine_ids:
        return []
    return list(
        session.scalars(select(ActionRow.id).where(ActionRow.owner.in_(list(engine_ids)))).all()
    )


def locked_nodes(session: Session, node_ids: Sequence[str], dead_before: float) -> set[str]:
    """The nodes among ``node_ids`` whose lock is held by a live action."""
    if not node_ids:
        return set()
    held = session.scalars(select(NodeLockRow.node_id).where(NodeLockRow.node_id.in_(node_ids)))
    return {n for n in held.all() if node_lock_holder(session, n, dead_before) is not None}


def release_nodes_held_by(session: Session, action_ids: Sequence[str]) -> None:
    """Drop the node locks of these actions (children that ended)."""
    for chunk in chunked(action_ids):
        session.execute(delete(NodeLockRow).where(NodeLockRow.action_id.in_(chunk)))


def hand_nodes_to(session: Session, holders: Sequence[tuple[str, str]], now: float) -> None:
    """Each (node id, action id): the action holds the node's lock from now on, whoever held
    it before (a lock an earlier action left is taken over); three statements whatever the
    count."""
    for chunk in chunked([node_id for node_id, _ in holders]):
        session.execute(delete(NodeLockRow).where(NodeLockRow.node_id.in_(chunk)))
    insert_rows(
        session,
        NodeLockRow,
        [{"node_id": n, "action_id": a, "updated_at": now} for n, a in holders],
    )
