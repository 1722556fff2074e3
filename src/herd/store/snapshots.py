"""Build the frozen domain views that policies read from rows.

Decisions over a whole cluster (:func:`load_cluster_snapshot`) read the members
column-wise with one Core select (no ORM rows, no snapshot objects): at 100,000
members building ORM rows cost a hundred times the ranking they fed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Select, String, select, type_coerce
from sqlalchemy.orm import Session

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.domain.values import parse_bool
from herd.policies.members import MemberLists, MemberTable
from herd.store import member_cache, member_revisions
from herd.store.bulk import chunked
from herd.store.models import ClusterRow, NodeRow, ProfileRow
from herd.types import ClusterStatus, HealthStatus, NodeStatus


def node_snapshot(row: NodeRow, profile_created_at: float | None = None) -> NodeSnapshot:
    placement = (row.data or {}).get("placement") or {}
    protected, cost = _guard(row.meta_data or {})
    return NodeSnapshot(
        id=row.id,
        name=row.name,
        index=row.index,
        status=NodeStatus(row.status),
        health=HealthStatus(row.health),
        created_at=row.created_at,
        profile_created_at=profile_created_at,
        zone=placement.get("zone"),
        region=placement.get("region_name"),
        protected=protected,
        deletion_cost=cost,
        tainted=row.tainted,
        physical_id=row.physical_id,
    )


def cluster_snapshot(
    cluster: ClusterRow,
    nodes: Iterable[NodeRow],
    profile_times: Mapping[str, float | None] | None = None,
) -> ClusterSnapshot:
    times = profile_times or {}
    return ClusterSnapshot(
        id=cluster.id,
        name=cluster.name,
        min_size=cluster.min_size,
        max_size=cluster.max_size,
        desired_capacity=cluster.desired_capacity,
        status=ClusterStatus(cluster.status),
        nodes=tuple(node_snapshot(n, times.get(n.profile_id)) for n in nodes),
        config=dict(cluster.config or {}),
    )


def _guard(metadata: Mapping[str, Any]) -> tuple[bool, float]:
    """A member's ``protected`` flag and ``deletion_cost`` from its metadata."""
    try:
        cost = float(metadata.get("deletion_cost", 0) or 0)
    except (TypeError, ValueError):
        cost = 0.0
    # The API refuses a value parse_bool cannot read; rows written before that read False.
    return bool(parse_bool(metadata.get("protected", False))), cost


def _metadata(raw: Any) -> Mapping[str, Any]:
    """Node metadata as the driver returned it: JSON text (SQLite) or decoded (psycopg)."""
    if isinstance(raw, str):
        # Most members carry no metadata; skip decoding the common empty object.
        return {} if raw in ("{}", "", "null") else json.loads(raw)
    return raw or {}


def member_table(session: Session, cluster_id: str) -> MemberTable:
    """A cluster's members (by index) as columns: from the process's member cache when the
    session has one (checked against the member revision), else read with one select."""
    cache = member_cache.of(session)
    if cache is None or member_revisions.has_own_writes(session, cluster_id):
        return read_members(session, cluster_id)
    return cache.members(session, cluster_id, read_members)


@functools.cache
def _member_columns() -> Select[Any]:
    """What a decision reads of each member, in the order MemberLists takes it."""
    return select(
        NodeRow.id,
        NodeRow.name,
        NodeRow.index,
        NodeRow.status,
        NodeRow.health,
        NodeRow.created_at,
        ProfileRow.created_at,
        NodeRow.data[("placement", "zone")].as_string(),
        NodeRow.data[("placement", "region_name")].as_string(),
        # Undecoded: only members with metadata pay for parsing it.
        type_coerce(NodeRow.meta_data, String),
        NodeRow.tainted,
        NodeRow.physical_id,
    ).outerjoin(ProfileRow, ProfileRow.id == NodeRow.profile_id)


def read_members(
    session: Session, cluster_id: str, only: Collection[str] | None = None
) -> MemberTable:
    """A cluster's members (by index) as columns, read with one select; with ``only``,
    just those of these ids still in the cluster (a select per 5,000 ids)."""
    columns = _member_columns()
    # On the connection, not the session: the ORM's result handling doubled the cost.
    connection = session.connection()
    if only is None:
        query = columns.where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
        rows: Sequence[Any] = connection.execute(query).all()
    else:
        # By primary key alone: with the cluster in the WHERE clause SQLite walks the
        # cluster's index over every member. Order does not matter to a patch.
        rows = [
            row[:-1]
            for ids in chunked(only)
            for row in connection.execute(
                columns.add_columns(NodeRow.cluster_id).where(NodeRow.id.in_(ids))
            ).all()
            if row[-1] == cluster_id
        ]
    if not rows:
        return MemberTable(MemberLists([], [], [], [], [], [], [], [], [], [], [], [], []))
    (ids, names, index, status, health, created, profile_created, zone, region, meta,
     tainted, physical) = (list(column) for column in zip(*rows, strict=True))  # fmt: skip
    protected: list[bool] = [False] * len(ids)
    costs: list[float] = [0.0] * len(ids)
    for position, raw in enumerate(meta):
        metadata = _metadata(raw)
        if metadata:
            protected[position], costs[position] = _guard(metadata)
    return MemberTable(
        MemberLists(
            ids=ids,
            names=names,
            index=index,
            status=status,
            health=health,
            created_at=created,
            profile_created_at=profile_created,
            zone=zone,
            region=region,
            protected=protected,
            deletion_cost=costs,
            tainted=[bool(t) for t in tainted],
            physical_id=physical,
        )
    )


def load_cluster_snapshot(session: Session, cluster_id: str) -> ClusterSnapshot | None:
    """The cluster and its members (by index, column-wise) with their profiles' ages."""
    cluster = session.get(ClusterRow, cluster_id)
    if cluster is None:
        return None
    return ClusterSnapshot(
        id=cluster.id,
        name=cluster.name,
        min_size=cluster.min_size,
        max_size=cluster.max_size,
        desired_capacity=cluster.desired_capacity,
        status=ClusterStatus(cluster.status),
        nodes=member_table(session, cluster_id),
        config=dict(cluster.config or {}),
    )
