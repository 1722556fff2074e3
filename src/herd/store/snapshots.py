"""Build the frozen domain views that policies read from rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.domain.snapshots import ClusterSnapshot, NodeSnapshot
from herd.domain.values import parse_bool
from herd.store.models import ClusterRow, NodeRow, ProfileRow
from herd.types import ClusterStatus, HealthStatus, NodeStatus


def node_snapshot(row: NodeRow, profile_created_at: float | None = None) -> NodeSnapshot:
    placement = (row.data or {}).get("placement") or {}
    metadata = row.meta_data or {}
    try:
        cost = float(metadata.get("deletion_cost", 0) or 0)
    except (TypeError, ValueError):
        cost = 0.0
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
        # The API refuses a value parse_bool cannot read; rows written before that read False.
        protected=bool(parse_bool(metadata.get("protected", False))),
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


def load_cluster_snapshot(session: Session, cluster_id: str) -> ClusterSnapshot | None:
    """The cluster and its members (by index) with their profiles' creation times."""
    cluster = session.get(ClusterRow, cluster_id)
    if cluster is None:
        return None
    nodes = session.scalars(
        select(NodeRow).where(NodeRow.cluster_id == cluster_id).order_by(NodeRow.index)
    ).all()
    profile_ids = {node.profile_id for node in nodes}
    times = {
        profile_id: created_at
        for profile_id, created_at in session.execute(
            select(ProfileRow.id, ProfileRow.created_at).where(ProfileRow.id.in_(profile_ids))
        )
    }
    return cluster_snapshot(cluster, nodes, times)
