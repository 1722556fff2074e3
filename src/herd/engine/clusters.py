"""Cluster bookkeeping shared by the action handlers: members, sizes, status."""

from __future__ import annotations

from collections.abc import Mapping

from herd.domain.cluster_status import cluster_status_after
from herd.engine.execution import ActionExecution
from herd.json_types import int_value, list_at, object_at
from herd.store import clusters, events
from herd.store.database import Session
from herd.store.models import ClusterRow, NodeRow
from herd.types import ClusterStatus


def load_cluster(ex: ActionExecution, cluster_id: str | None = None) -> ClusterRow:
    with ex.ctx.database.read() as session:
        cluster = clusters.get(session, cluster_id or ex.target)
    if cluster is None:
        from herd.errors import NotFound

        raise NotFound("cluster", cluster_id or ex.target)
    return cluster


def members(ex: ActionExecution, cluster_id: str) -> list[NodeRow]:
    with ex.ctx.database.read() as session:
        return clusters.members(session, cluster_id)


def member_count(ex: ActionExecution, cluster_id: str) -> int:
    with ex.ctx.database.read() as session:
        return clusters.member_count(session, cluster_id)


def update_cluster(
    ex: ActionExecution, cluster_id: str, *, event_reason: str | None = None, **values: object
) -> ClusterRow:
    """Change cluster columns in one transaction, with an event when the status changes."""
    with ex.ctx.database.write() as session:
        cluster = clusters.get(session, cluster_id)
        if cluster is None:
            from herd.errors import NotFound

            raise NotFound("cluster", cluster_id)
        for key, value in values.items():
            setattr(cluster, key, value)
        cluster.updated_at = ex.ctx.now()
        if "status" in values:
            events.record(
                session,
                otype="CLUSTER",
                oid=cluster.id,
                oname=cluster.name,
                project=cluster.project,
                user=ex.user,
                cluster_id=cluster.id,
                action=ex.action,
                status=str(values["status"]),
                reason=event_reason or str(values.get("status_reason", "")),
                now=ex.ctx.now(),
            )
        return cluster


def eval_status(
    ex: ActionExecution,
    cluster_id: str,
    *,
    desired: int | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
) -> tuple[ClusterStatus, str]:
    """Senlin's ``eval_status``: set the cluster's status from its members after an action."""
    with ex.ctx.database.write() as session:
        cluster = clusters.get(session, cluster_id)
        if cluster is None:
            return ClusterStatus.ERROR, "cluster is gone"
        if desired is not None:
            cluster.desired_capacity = desired
        if min_size is not None:
            cluster.min_size = min_size
        if max_size is not None:
            cluster.max_size = max_size
        return evaluate_in(session, cluster, ex.action, user=ex.user, now=ex.ctx.now())


#: cluster statuses the members decide; the others belong to the action running on it
SETTLED = (ClusterStatus.ACTIVE, ClusterStatus.WARNING, ClusterStatus.ERROR)


def evaluate_in(
    session: Session, cluster: ClusterRow, op_name: str, *, user: str, now: float
) -> tuple[ClusterStatus, str]:
    """Store the status the cluster's members give it, in the caller's transaction.

    An event is recorded when the status or its reason changes. ``op_name`` is the
    reason's prefix and the event's action (an action name, or HEALTH_CHECK).
    """
    statuses = clusters.member_statuses(session, cluster.id)
    status, reason = cluster_status_after(
        op_name, statuses, cluster.min_size, cluster.desired_capacity, cluster.max_size
    )
    changed = cluster.status != status or cluster.status_reason != reason
    cluster.status = status
    cluster.status_reason = reason
    cluster.updated_at = now
    if changed:
        events.record(
            session,
            otype="CLUSTER",
            oid=cluster.id,
            oname=cluster.name,
            project=cluster.project,
            user=user,
            cluster_id=cluster.id,
            action=op_name,
            status=status,
            reason=reason,
            level="INFO" if status is ClusterStatus.ACTIVE else "WARNING",
            now=now,
        )
    return status, reason


def placements(data: Mapping[str, object], count: int) -> list[dict[str, object]]:
    """Expand the placement policies' ``creation`` decision into one placement per new node.

    A zone policy and a region policy both attached each spread the new nodes on
    their own: node ``i`` gets the ``i``-th zone and the ``i``-th region of the two
    spreads, so both apply. ``data['placement']['placements']`` (Senlin's shape, written by
    the affinity policy) gives node ``i`` its ``servergroup``; a zone spread wins over a
    zone given there.
    """
    creation = object_at(data, "creation")
    # Senlin's per-node entries (the affinity policy's server group, and its zone where
    # no zone placement policy spread the nodes)
    entries = list_at(object_at(data, "placement"), "placements")
    given = [entry if isinstance(entry, Mapping) else {} for entry in entries]
    spread: list[dict[str, object]] = [
        dict(given[i]) if i < len(given) else {} for i in range(count)
    ]
    for key, field in (("zones", "zone"), ("regions", "region_name")):
        names = [
            name
            for name, many in sorted(object_at(creation, key).items())
            for _ in range(int_value(many))
        ]
        for placement, name in zip(spread, names, strict=False):
            placement[field] = name
    return spread
