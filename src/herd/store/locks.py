"""Cluster and node locks kept in the database.

A cluster lock is a semaphore: ``-1`` means one exclusive holder, a positive
number counts shared (node-scoped) holders. A node lock has one holder. Holders
are action ids; an action's ``owner`` is its engine, and an engine whose
heartbeat stopped is dead, so its locks can be taken over. Each function runs
inside the caller's write transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, Row, String, cast, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from herd.store.bulk import chunked, insert_rows
from herd.store.models import ActionRow, ClusterLockRow, EngineRow, NodeLockRow
from herd.types import ActionControl, ActionStatus, LockScope

_HOLDERS = select(
    ActionRow.id,
    ActionRow.parent_id,
    ActionRow.status,
    ActionRow.owner,
    EngineRow.heartbeat_at,
).outerjoin(EngineRow, EngineRow.id == ActionRow.owner)
#: a row of _HOLDERS (as SQLAlchemy types it: the outer-joined heartbeat reads None when
#: the owner has no engine row)
_Holder = Row[str, str | None, ActionStatus, str | None, float]


def live_holders(
    db: Session | Connection,
    action_ids: Iterable[str],
    dead_before: float,
    *,
    taker: str | None = None,
) -> set[str]:
    """The actions among ``action_ids`` that still hold their locks.

    The one rule for every lock, cluster or node, top-level holder or child:

    * a holder whose action is gone or final holds nothing;
    * a child holds its lock for its top-level action (its *root*): the lock lives
      as long as the root does, whatever the child's own owner column says;
    * a root lives while it is unfinished and runs on an engine whose heartbeat is
      fresh; a root queued again (READY, no owner, e.g. re-queued after its engine
      died) keeps its children's locks for its resumed run, not its own;
    * ``taker``, the action asking for the lock, takes over the locks of its own
      children (a resumed delete takes back its node from the child that held it
      when the engine died).
    """
    wanted = set(action_ids)
    rows: dict[str, _Holder] = {}
    pending = set(wanted)
    while pending:
        found = [
            row
            for chunk in chunked(sorted(pending))
            for row in db.execute(_HOLDERS.where(ActionRow.id.in_(chunk))).all()
        ]
        rows.update({row.id: row for row in found})
        pending = {row.parent_id for row in found if row.parent_id and row.parent_id not in rows}
    return {a for a in wanted if _holds(rows, a, dead_before, taker)}


def _holds(rows: dict[str, _Holder], action_id: str, dead_before: float, taker: str | None) -> bool:
    holder = rows.get(action_id)
    if holder is None or ActionStatus(holder.status).is_final:
        return False
    root = holder
    while root.parent_id is not None:
        parent = rows.get(root.parent_id)
        if parent is None:  # a child whose parent is gone works for nobody
            return False
        root = parent
    if root.id == taker and root is not holder:
        return False
    if ActionStatus(root.status).is_final:
        return False
    if root.owner is None:
        return root.status != ActionStatus.READY or root is not holder
    return root.heartbeat_at is not None and root.heartbeat_at >= dead_before


def acquire_cluster(
    session: Session,
    cluster_id: str,
    action_id: str,
    scope: LockScope,
    now: float,
    dead_before: float,
    *,
    force: bool = False,
) -> bool:
    """Take the cluster lock for ``action_id``; True when it is held afterwards.

    ``force`` (a forced CLUSTER_DELETE, as Senlin's lock stealing) takes it from live
    holders too, and asks the robbed top-level actions to stop (:func:`_rob`).
    """
    semaphore = -1 if scope is LockScope.CLUSTER else 1
    row = session.get(ClusterLockRow, cluster_id, with_for_update=True)
    if row is None:
        first = ClusterLockRow(
            cluster_id=cluster_id, action_ids=[action_id], semaphore=semaphore, updated_at=now
        )
        if _added_first(session, first):
            return True
        row = session.get(ClusterLockRow, cluster_id, with_for_update=True, populate_existing=True)
        if row is None:  # taken and released in between: ask again at the next try
            return False
    holders = list(row.action_ids)
    if action_id in holders:
        return True
    alive = live_holders(session, holders, dead_before, taker=action_id)
    live = [h for h in holders if h in alive]
    if force and live:
        _rob(session, live, CLUSTER_TAKEN, action_id)
        live = []
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
    session: Session,
    node_id: str,
    action_id: str,
    now: float,
    dead_before: float,
    *,
    force: bool = False,
) -> bool:
    """Take the node lock for ``action_id``; True when it is held afterwards.

    ``force`` (a forced NODE_DELETE) takes it from a live holder too (:func:`_rob`).
    """
    row = session.get(NodeLockRow, node_id, with_for_update=True)
    if row is None:
        if _added_first(session, NodeLockRow(node_id=node_id, action_id=action_id, updated_at=now)):
            return True
        row = session.get(NodeLockRow, node_id, with_for_update=True, populate_existing=True)
        if row is None:  # taken and released in between: ask again at the next try
            return False
    held = row.action_id != action_id and bool(
        live_holders(session, [row.action_id], dead_before, taker=action_id)
    )
    if held and not force:
        return False
    if held:
        _rob(session, [row.action_id], NODE_TAKEN, action_id)
    row.action_id = action_id
    row.updated_at = now
    return True


def _added_first(session: Session, row: ClusterLockRow | NodeLockRow) -> bool:
    """Insert the row of a lock nobody held; False when another transaction inserted it
    first. Both saw no row (a row that does not exist cannot be locked FOR UPDATE), so the
    loser's INSERT meets the winner's primary key: a busy lock, not an error."""
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        return False
    return True


#: the reasons a top-level action robbed of its lock by a forced delete ends with
CLUSTER_TAKEN = "Cancelled: its cluster was deleted by force"
NODE_TAKEN = "Cancelled: its node was deleted by force"


def _rob(session: Session, holders: Sequence[str], taken: str, taker: str) -> None:
    """A forced take: the robbed top-level actions are asked to stop (they would go on
    acting on a resource being deleted); a robbed child is left to its parent, which
    finds its node gone.

    The mark (``control`` FORCED_OUT) and the reason are written now, on the running row:
    the runner ends a robbed action CANCELLED with that reason whatever its handler made of
    the rest of its run (a scale-out whose calls all returned before its next cancel check
    ended SUCCEEDED, its nodes deleted).
    """
    session.execute(
        update(ActionRow)
        .where(ActionRow.id.in_(list(holders)), ActionRow.parent_id.is_(None))
        .values(control=ActionControl.FORCED_OUT, status_reason=f"{taken} (action {taker[:8]}).")
    )


def release_node(session: Session, node_id: str, action_id: str) -> None:
    session.execute(
        delete(NodeLockRow).where(
            NodeLockRow.node_id == node_id, NodeLockRow.action_id == action_id
        )
    )


def release_all(session: Session, action_id: str) -> None:
    """Drop every lock ``action_id`` holds (used when an action ends in any way)."""
    session.execute(delete(NodeLockRow).where(NodeLockRow.action_id == action_id))
    # Only the rows naming the action, found by the database: every action ends here, and
    # reading every locked cluster's row each time made each end cost O(busy clusters).
    # The JSON text has each id in double quotes, whichever encoder wrote it; a LIKE
    # wildcard in an id can only match more rows, and release_cluster checks each.
    named = cast(ClusterLockRow.action_ids, String).like(f'%"{action_id}"%')
    for cluster_id in session.scalars(select(ClusterLockRow.cluster_id).where(named)).all():
        release_cluster(session, cluster_id, action_id)


def cluster_lock_holders(session: Session, cluster_id: str, dead_before: float) -> list[str]:
    row = session.get(ClusterLockRow, cluster_id)
    if row is None:
        return []
    alive = live_holders(session, row.action_ids, dead_before)
    return [h for h in row.action_ids if h in alive]


def node_lock_holder(session: Session, node_id: str, dead_before: float) -> str | None:
    row = session.get(NodeLockRow, node_id)
    if row is None or not live_holders(session, [row.action_id], dead_before):
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
    query = select(NodeLockRow.node_id, NodeLockRow.action_id).where(
        NodeLockRow.node_id.in_(list(node_ids))
    )
    held: dict[str, str] = {node: holder for node, holder in session.execute(query)}
    alive = live_holders(session, held.values(), dead_before)
    return {node for node, holder in held.items() if holder in alive}


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
