"""Marking a cluster member unhealthy (Heat's ``mark_unhealthy`` PATCH), herd-style.

The body (``herd.api.schemas.member_health``) is validated in Heat's order with
Heat's texts (unknown keys, then a missing ``mark_unhealthy``, then a value that
is not a boolean). The change is
made in one short transaction that holds the member's row lock (``FOR UPDATE``
on PostgreSQL; SQLite write transactions are serialised by ``BEGIN
IMMEDIATE``), so two concurrent marks never lose an update, and it is refused
with 409 while an action holds the cluster lock or the node lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.services.common import refuse_if_deleting
from herd.errors import ActionInProgress, NotFound
from herd.store import events
from herd.store.actions import active_actions_on
from herd.store.locks import cluster_lock_holders, node_lock_holder
from herd.store.lookup import find
from herd.store.models import ActionRow, ClusterRow, NodeRow
from herd.types import ActionName, HealthStatus, NodeStatus

DEFAULT_REASON = "state changed by resource_mark_unhealthy api"


@dataclass(frozen=True)
class MarkResult:
    node: NodeRow
    changed: bool
    message: str


def find_member(session: Session, cluster: ClusterRow, identity: str) -> NodeRow:
    """A member of ``cluster`` by id, name or short id; 404 for anything else."""
    member = session.get(NodeRow, identity) if len(identity) == 36 else None
    if member is None:
        query = select(NodeRow).where(NodeRow.cluster_id == cluster.id)
        by_name = session.scalars(query.where(NodeRow.name == identity).limit(2)).all()
        candidates = (
            by_name
            or session.scalars(
                query.where(NodeRow.id.startswith(identity, autoescape=True)).limit(2)
            ).all()
        )
        if len(candidates) > 1:
            from herd.errors import MultipleChoices

            raise MultipleChoices(
                f"Multiple results found matching the query criteria '{identity}'. "
                "Please be more specific."
            )
        member = candidates[0] if candidates else None
    if member is None or member.cluster_id != cluster.id:
        raise NotFound(
            "node", identity, f"The node '{identity}' is not a member of cluster '{cluster.name}'."
        )
    return member


def _busy_action(
    session: Session, services: Services, cluster: ClusterRow, node: NodeRow
) -> str | None:
    dead_before = services.dead_before()
    holders = cluster_lock_holders(session, cluster.id, dead_before)
    holder = node_lock_holder(session, node.id, dead_before)
    if holder is not None:
        holders.append(holder)
    if not holders:
        return None
    action = session.get(ActionRow, holders[0])
    return action.action if action is not None else "UNKNOWN"


def mark_member(
    session: Session,
    services: Services,
    ctx: RequestContext,
    cluster_identity: str,
    node_identity: str,
    request: MarkUnhealthy,
) -> MarkResult:
    cluster = find(session, ClusterRow, cluster_identity, ctx.scope(), "cluster")
    refuse_if_deleting(session, "cluster", [cluster.id])
    member = find_member(session, cluster, node_identity)
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(NodeRow.id).where(NodeRow.id == member.id).with_for_update())
        session.refresh(member)
    busy = _busy_action(session, services, cluster, member)
    if busy is not None:
        raise ActionInProgress(
            f"Cluster {cluster.name} already has an action ({busy}) in progress."
        )
    deleting = member.status == NodeStatus.DELETING.value or any(
        a.action == ActionName.NODE_DELETE.value for a in active_actions_on(session, member.id)
    )
    if deleting:
        return MarkResult(member, False, "The node is being deleted; its health was not changed.")
    now = services.now()
    if request.mark_unhealthy:
        new_health = HealthStatus.CHECK_FAILED.value
    elif member.health == HealthStatus.CHECK_FAILED.value:
        new_health = HealthStatus.CHECK_COMPLETE.value
    else:
        return MarkResult(member, False, "The node is not marked unhealthy; nothing changed.")
    reason = request.resource_status_reason or DEFAULT_REASON
    changed = (member.health, member.health_reason) != (new_health, reason)
    member.health = new_health
    member.health_reason = reason
    member.health_marked_by = ctx.user or ctx.project
    member.health_marked_at = now
    member.health_generation = (member.health_generation or 0) + 1
    member.updated_at = now
    if changed:
        events.record(
            session,
            otype="NODE",
            oid=member.id,
            oname=member.name,
            project=member.project,
            user=ctx.user,
            cluster_id=cluster.id,
            action="NODE_MARK_UNHEALTHY" if request.mark_unhealthy else "NODE_MARK_HEALTHY",
            status=new_health,
            reason=reason,
            level="WARNING" if request.mark_unhealthy else "INFO",
            now=now,
        )
    message = "Marked unhealthy." if request.mark_unhealthy else "Marked healthy."
    return MarkResult(member, changed, message if changed else "No change.")
