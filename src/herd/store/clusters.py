"""Cluster rows: new clusters, one cluster, its members and its size, its removal."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.orm import Session

from herd.store import member_revisions, nodes
from herd.store.enum_text import equal_to_any
from herd.store.models import BindingRow, ClusterLockRow, ClusterRow, NodeRow, TombstoneRow
from herd.types import ClusterStatus, NodeStatus, ResourceType


def get(session: Session, cluster_id: str) -> ClusterRow | None:
    return session.get(ClusterRow, cluster_id)


def members(session: Session, cluster_id: str) -> list[NodeRow]:
    """The cluster's node rows in index order."""
    return list(
        session.scalars(
            select(NodeRow).where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
        ).all()
    )


def member_regions(session: Session, cluster_id: str) -> set[str]:
    """Regions the cluster's members were placed in (``data.placement.region_name``).

    Reads the ``data`` column alone, streamed: loading 100,000 members as ORM rows for
    this held about 300 MB at the end of a huge CLUSTER_CREATE (issue 28). The session
    must be a ``Database.read(streaming=True)`` or a write (PostgreSQL's server-side
    cursors need a transaction).
    """
    query = select(NodeRow.data).where(NodeRow.cluster_id == cluster_id)
    found: set[str] = set()
    result = session.connection().execution_options(yield_per=2000).execute(query)
    for (data,) in result:
        region = ((data or {}).get("placement") or {}).get("region_name")
        if region:
            found.add(str(region))
    return found


def member_count(session: Session, cluster_id: str, status: NodeStatus | None = None) -> int:
    """How many nodes the cluster has (only those in ``status`` when given)."""
    query = select(func.count()).where(NodeRow.cluster_id == cluster_id)
    if status is not None:
        query = query.where(NodeRow.status == status)
    return int(session.scalar(query) or 0)


def member_statuses(session: Session, cluster_id: str) -> dict[str, int]:
    """How many of the cluster's nodes are in each status (one grouped count)."""
    query = (
        select(NodeRow.status, func.count())
        .where(NodeRow.cluster_id == cluster_id)
        .group_by(NodeRow.status)
    )
    return {str(status): int(count) for status, count in session.execute(query).all()}


def detach_everything(session: Session, cluster_id: str, reason: str) -> int:
    """Remove the cluster's bindings and lock and make its members orphans; return how many.

    The member rows stay (their real resources may still exist) with ``reason``.
    """
    session.execute(delete(BindingRow).where(BindingRow.cluster_id == cluster_id))
    session.execute(delete(ClusterLockRow).where(ClusterLockRow.cluster_id == cluster_id))
    return nodes.orphan_all(session, cluster_id, reason)


def remove(session: Session, cluster_id: str) -> None:
    """Delete the cluster row with its lock and its tombstone, in the caller's transaction, so
    nothing can see the row without the tombstone or the tombstone without the row."""
    session.execute(delete(ClusterLockRow).where(ClusterLockRow.cluster_id == cluster_id))
    session.execute(
        delete(TombstoneRow).where(
            TombstoneRow.resource_type == ResourceType.CLUSTER,
            TombstoneRow.resource_id == cluster_id,
        )
    )
    row = session.get(ClusterRow, cluster_id)
    if row is not None:
        session.delete(row)
    member_revisions.forget(session, cluster_id)


def member_at(session: Session, cluster_id: str, index: int, other_than: str) -> NodeRow | None:
    """The member holding ``index`` other than ``other_than`` (a replacement takes the index)."""
    return session.scalar(
        select(NodeRow).where(
            NodeRow.cluster_id == cluster_id, NodeRow.index == index, NodeRow.id != other_than
        )
    )


def take_index(session: Session, cluster_id: str) -> int:
    """The next member index of the cluster, taken with an atomic increment (concurrent
    creates never share one)."""
    new_next = session.execute(
        update(ClusterRow)
        .where(ClusterRow.id == cluster_id)
        .values(next_index=ClusterRow.next_index + 1)
        .returning(ClusterRow.next_index)
        .execution_options(synchronize_session=False)
    ).scalar_one()
    return int(new_next) - 1


def has_bindings(session: Session, cluster_id: str) -> bool:
    return bool(session.scalar(select(exists().where(BindingRow.cluster_id == cluster_id))))


def add_new(
    session: Session,
    *,
    name: str,
    profile_id: str,
    min_size: int,
    max_size: int,
    desired_capacity: int,
    timeout: int,
    metadata: dict[str, object],
    config: dict[str, object],
    user: str,
    project: str,
    now: float,
    domain: str = "",
) -> ClusterRow:
    """Add the row of a cluster about to be created (INIT; its action creates the members)."""
    row = ClusterRow(
        id=str(uuid.uuid4()),
        name=name,
        profile_id=profile_id,
        init_at=now,
        created_at=None,
        updated_at=None,
        min_size=min_size,
        max_size=max_size,
        desired_capacity=desired_capacity,
        next_index=1,
        timeout=timeout,
        status=ClusterStatus.INIT,
        status_reason="Initializing",
        meta_data=metadata,
        data={},
        config=config,
        dependents={},
        user=user,
        project=project,
        domain=domain,
    )
    session.add(row)
    return row


#: the member columns a cluster operation may filter on (Senlin's ``filters``)
MEMBER_FILTERS = {
    "name": NodeRow.name,
    "profile_id": NodeRow.profile_id,
    "status": NodeRow.status,
    "role": NodeRow.role,
}


def member_ids(
    session: Session, cluster_id: str, filters: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """Member ids in index order, those whose ``filters`` columns (keys of
    :data:`MEMBER_FILTERS`) hold one of the values."""
    query = select(NodeRow.id).where(NodeRow.cluster_id == cluster_id)
    for key, values in (filters or {}).items():
        query = query.where(equal_to_any(MEMBER_FILTERS[key], values))
    return list(session.scalars(query.order_by(NodeRow.index)).all())
