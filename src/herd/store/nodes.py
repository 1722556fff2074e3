"""Node rows: new nodes, reads by id, one cluster's rows, and every statement writing them.

The member revision (``store/member_revisions.py``) is right only if every transaction that
writes node rows says which. A session hook sees the ORM's flushes; a Core statement it does
not, so every INSERT, UPDATE or DELETE of ``nodes`` is here, in a function that notes what it
writes (``member_revisions.touch``/``touch_nodes``) before running it.
``tests/unit/store/test_node_write_contract.py`` fails on a node-writing statement anywhere
else, or on a function here that writes without touching.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import Session

from herd.store import member_revisions, size_history
from herd.store.bulk import chunked, insert_rows, update_rows
from herd.store.models import NodeRow, ProfileRow, TombstoneRow
from herd.types import HealthStatus, NodeStatus, ResourceType


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """The columns of a node row a driver call reads (read with a Core select, not the ORM)."""

    id: str
    name: str
    index: int
    cluster_id: str | None
    physical_id: str | None
    profile_id: str
    data: dict[str, Any]
    meta_data: dict[str, Any]


def facts_of(row: NodeRow) -> NodeFacts:
    """A row's facts, kept after its session ends (copies of its JSON columns)."""
    return NodeFacts(
        id=row.id,
        name=row.name,
        index=row.index,
        cluster_id=row.cluster_id,
        physical_id=row.physical_id,
        profile_id=row.profile_id,
        data=dict(row.data or {}),
        meta_data=dict(row.meta_data or {}),
    )


_FACT_COLUMNS = (
    NodeRow.id,
    NodeRow.name,
    NodeRow.index,
    NodeRow.cluster_id,
    NodeRow.physical_id,
    NodeRow.profile_id,
    NodeRow.data,
    NodeRow.meta_data,
)


def get(session: Session, node_id: str) -> NodeRow | None:
    return session.get(NodeRow, node_id)


def get_many(session: Session, node_ids: Collection[str]) -> list[NodeRow]:
    """The rows of the nodes that exist among ``node_ids`` (in no particular order)."""
    return [
        row
        for chunk in chunked(node_ids)
        for row in session.scalars(select(NodeRow).where(NodeRow.id.in_(chunk))).all()
    ]


def existing_ids(session: Session, node_ids: Collection[str]) -> set[str]:
    return {
        node_id
        for chunk in chunked(node_ids)
        for node_id in session.scalars(select(NodeRow.id).where(NodeRow.id.in_(chunk))).all()
    }


def of_cluster(session: Session, cluster_id: str) -> list[NodeRow]:
    return list(session.scalars(select(NodeRow).where(NodeRow.cluster_id == cluster_id)).all())


def facts(session: Session, node_ids: Sequence[str]) -> list[NodeFacts]:
    """What a driver call reads of many nodes, with a Core select (no ORM objects)."""
    connection = session.connection()
    return [
        NodeFacts(*row)
        for chunk in chunked(node_ids)
        for row in connection.execute(select(*_FACT_COLUMNS).where(NodeRow.id.in_(chunk)))
    ]


class PlannedNode(TypedDict):
    """The columns of a node :func:`planned_values` plans, as :func:`insert_many` writes them."""

    id: str
    name: str
    physical_id: str | None
    cluster_id: str | None
    profile_id: str
    index: int
    role: str
    init_at: float
    created_at: float | None
    updated_at: float
    status: NodeStatus
    status_reason: str
    health: HealthStatus
    health_reason: str
    tainted: bool
    meta_data: dict[str, object]
    data: dict[str, object]
    dependents: dict[str, object]
    user: str
    project: str
    domain: str


def add_new(
    session: Session,
    *,
    name: str,
    profile_id: str,
    user: str,
    project: str,
    now: float,
    domain: str = "",
    cluster_id: str | None = None,
    index: int = -1,
    role: str = "",
    metadata: dict[str, Any] | None = None,
    physical_id: str | None = None,
    data: dict[str, Any] | None = None,
    status: NodeStatus = NodeStatus.INIT,
    status_reason: str = "Initializing",
) -> NodeRow:
    """Add a node row with a new id: one being created (INIT), or an adopted resource."""
    row = NodeRow(
        id=str(uuid.uuid4()),
        name=name,
        physical_id=physical_id,
        cluster_id=cluster_id,
        profile_id=profile_id,
        index=index,
        role=role,
        init_at=now,
        created_at=now if physical_id is not None else None,
        updated_at=None,
        status=status,
        status_reason=status_reason,
        health=HealthStatus.UNKNOWN,
        health_reason="",
        tainted=False,
        meta_data=metadata or {},
        data=data or {},
        dependents={},
        user=user,
        project=project,
        domain=domain,
    )
    session.add(row)
    return row


def managing(session: Session, physical_id: str, profile_type: str) -> NodeRow | None:
    """The node that already manages the resource ``physical_id`` of ``profile_type``."""
    return session.scalars(
        select(NodeRow)
        .join(ProfileRow, ProfileRow.id == NodeRow.profile_id)
        .where(NodeRow.physical_id == physical_id, ProfileRow.type == profile_type)
    ).first()


# -- bulk paths of the engine (thousands of nodes per statement) ------------------------------


def planned_values(
    *,
    name: str,
    index: int,
    cluster_id: str,
    profile_id: str,
    placement: Mapping[str, object] | None,
    user: str,
    project: str,
    now: float,
    domain: str = "",
) -> PlannedNode:
    """The columns of a node a scale plans to create (CREATING), for :func:`insert_many`."""
    return {
        "id": str(uuid.uuid4()),
        "name": name,
        "physical_id": None,
        "cluster_id": cluster_id,
        "profile_id": profile_id,
        "index": index,
        "role": "",
        "init_at": now,
        "created_at": None,
        "updated_at": now,
        "status": NodeStatus.CREATING,
        "status_reason": "Creation in progress",
        "health": HealthStatus.UNKNOWN,
        "health_reason": "",
        "tainted": False,
        "meta_data": {},
        "data": {"placement": dict(placement)} if placement else {},
        "dependents": {},
        "user": user,
        "project": project,
        "domain": domain,
    }


def insert_many(session: Session, rows: Sequence[PlannedNode]) -> None:
    insert_rows(session, NodeRow, rows)
    by_cluster: dict[str | None, list[str]] = {}
    for row in rows:
        by_cluster.setdefault(row["cluster_id"], []).append(row["id"])
    for cluster_id, ids in by_cluster.items():
        member_revisions.touch(session, cluster_id, ids)
    size_history.note(session, by_cluster)


def update_many(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    """Per-node changes by id (each row: ``id`` plus the same columns), one executemany."""
    moving = any("cluster_id" in row for row in rows)
    if all(key == "id" or key in member_revisions.STATE_COLUMNS for row in rows for key in row):
        # Status and health alone: the log carries them (member_revisions.touch).
        by_state: dict[member_revisions.State, list[str]] = {}
        for row in rows:
            by_state.setdefault((row.get("status"), row.get("health")), []).append(row["id"])
        for state, ids in by_state.items():
            member_revisions.touch_nodes(session, ids, state=state)
    else:
        member_revisions.touch_nodes(session, [row["id"] for row in rows], resized=moving)
    for row in rows:
        if "cluster_id" in row:  # joining another cluster: that one changes too
            member_revisions.touch(session, row["cluster_id"], (row["id"],))
            size_history.note(session, [row["cluster_id"]])
    update_rows(session, NodeRow, rows)


def set_status_many(
    session: Session, node_ids: Sequence[str], status: NodeStatus, reason: str
) -> None:
    member_revisions.touch_nodes(session, node_ids, state=(status, None))
    for chunk in chunked(node_ids):
        session.execute(
            update(NodeRow).where(NodeRow.id.in_(chunk)).values(status=status, status_reason=reason)
        )


def leave_cluster_many(session: Session, node_ids: Sequence[str], reason: str, now: float) -> None:
    """The nodes become orphans (their resources stay)."""
    member_revisions.touch_nodes(session, node_ids, resized=True)
    for chunk in chunked(node_ids):
        session.execute(
            update(NodeRow)
            .where(NodeRow.id.in_(chunk))
            .values(cluster_id=None, index=-1, updated_at=now, status_reason=reason)
        )


def delete_many(session: Session, node_ids: Sequence[str]) -> None:
    """Delete node rows in bulk, and their tombstones with them (the mapper hook that takes
    a tombstone with its row, models/tombstones.py, does not fire for a Core statement):
    a node deleting itself, or a member with a failed deletion of its own, left one behind."""
    member_revisions.touch_nodes(session, node_ids, resized=True)
    for chunk in chunked(node_ids):
        session.execute(delete(NodeRow).where(NodeRow.id.in_(chunk)))
        session.execute(
            delete(TombstoneRow).where(
                TombstoneRow.resource_type == ResourceType.NODE,
                TombstoneRow.resource_id.in_(chunk),
            )
        )


def removal_rows(
    session: Session, node_ids: Iterable[str]
) -> list[tuple[str, str | None, str, NodeStatus, str | None]]:
    """(id, cluster_id, project, status, physical_id) of nodes a removal plans children for."""
    connection = session.connection()
    columns = (NodeRow.id, NodeRow.cluster_id, NodeRow.project, NodeRow.status, NodeRow.physical_id)
    return [
        (row.id, row.cluster_id, row.project, row.status, row.physical_id)
        for chunk in chunked(node_ids)
        for row in connection.execute(select(*columns).where(NodeRow.id.in_(chunk)))
    ]


@dataclass(frozen=True, slots=True)
class ResultFacts:
    """What writing a node's result reads of its row (and what its events name)."""

    id: str
    name: str
    project: str
    cluster_id: str | None
    status: str
    created_at: float | None
    data: dict[str, Any]
    physical_id: str | None = None


_RESULT_COLUMNS = (
    NodeRow.id,
    NodeRow.name,
    NodeRow.project,
    NodeRow.cluster_id,
    NodeRow.status,
    NodeRow.created_at,
    NodeRow.data,
    NodeRow.physical_id,
)


def result_facts(session: Session, node_ids: Sequence[str]) -> dict[str, ResultFacts]:
    connection = session.connection()
    return {
        row.id: ResultFacts(*row)
        for chunk in chunked(node_ids)
        for row in connection.execute(select(*_RESULT_COLUMNS).where(NodeRow.id.in_(chunk)))
    }


def orphan_all(session: Session, cluster_id: str, reason: str) -> int:
    """Make every member of the cluster an orphan (its resource stays); return how many."""
    member_revisions.touch(session, cluster_id, (member_revisions.EVERY_MEMBER,))
    size_history.note(session, [cluster_id])
    orphaned = session.execute(
        update(NodeRow)
        .where(NodeRow.cluster_id == cluster_id)
        .values(cluster_id=None, index=-1, status_reason=reason)
        .execution_options(synchronize_session=False)
    )
    return int(orphaned.rowcount)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class HealthWrite:
    """A member's health after the last mark of a batch (``store/mark_batches.py``)."""

    node_id: str
    cluster_id: str
    health: str
    reason: str
    marked_by: str | None
    marked_at: float | None
    generation: int


_WRITE_HEALTH = (
    update(NodeRow)
    .where(NodeRow.id == bindparam("node_id"))
    .values(
        health=bindparam("new_health"),
        health_reason=bindparam("new_reason"),
        health_marked_by=bindparam("marked_by"),
        health_marked_at=bindparam("marked_at"),
        health_generation=bindparam("generation"),
        updated_at=bindparam("marked_at"),
    )
)


def write_health_many(session: Session, writes: Sequence[HealthWrite]) -> None:
    """Store the members' health marks in one executemany (in node id order)."""
    if not writes:
        return
    for write in writes:
        member_revisions.touch(
            session, write.cluster_id, (write.node_id,), state=(None, write.health)
        )
    params = [
        {
            "node_id": write.node_id,
            "new_health": write.health,
            "new_reason": write.reason,
            "marked_by": write.marked_by,
            "marked_at": write.marked_at,
            "generation": write.generation,
        }
        for write in sorted(writes, key=lambda write: write.node_id)
    ]
    session.connection().execute(_WRITE_HEALTH, params)
