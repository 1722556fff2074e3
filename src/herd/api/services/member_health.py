"""Marking a cluster member unhealthy (Heat's ``mark_unhealthy`` PATCH), herd-style.

The body (``herd.api.schemas.member_health``) is validated in Heat's order with
Heat's texts (unknown keys, then a missing ``mark_unhealthy``, then a value that
is not a boolean). The change is made in a short write transaction that holds the
member's row lock (``FOR UPDATE`` on PostgreSQL; SQLite write transactions are
serialised by ``BEGIN IMMEDIATE``), so two concurrent marks never lose an update, and
it is refused with 409 while an action holds the cluster lock or the node lock.

Concurrent marks share transactions (``group_commit``): each runs in its own savepoint
of a batch and gets its own answer, 404 or 409.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.services.group_commit import GroupCommitter
from herd.errors import ActionInProgress, ResourceDeleting
from herd.store import member_marks
from herd.store.database import Session
from herd.types import HealthStatus, NodeStatus, ResourceType

DEFAULT_REASON = "state changed by resource_mark_unhealthy api"
COMMITTER = "mark_committer"


@dataclass(frozen=True)
class MarkResult:
    #: the member's view values (``herd.api.views.node_view_from_values``)
    values: list[Any]
    changed: bool
    message: str


def committer(services: Services) -> GroupCommitter:
    """This app's group committer for marks (made on first use)."""
    found = services.extra.get(COMMITTER)
    if not isinstance(found, GroupCommitter):
        # mark_member refuses (404, 409) before it writes anything: no savepoints needed.
        found = services.extra[COMMITTER] = GroupCommitter(
            services.database,
            savepoints=False,
            threads=services.settings.api_database_threads,
        )
    return found


def mark_member(
    session: Session,
    services: Services,
    ctx: RequestContext,
    cluster_identity: str,
    node_identity: str,
    request: MarkUnhealthy,
) -> MarkResult:
    # Core statements on the session's connection: the ORM has no objects to track here.
    connection = session.connection()
    cluster = member_marks.find_cluster(connection, cluster_identity, ctx.scope())
    if cluster.deleting:
        raise ResourceDeleting(
            f"The cluster '{cluster.id}' is being deleted: it cannot be used or changed.",
            resource_type=ResourceType.CLUSTER,
            resource_id=cluster.id,
        )
    member = member_marks.find_member(connection, cluster, node_identity)
    holders = list(member.cluster_lock_holders)
    if member.node_lock_holder is not None:
        holders.append(member.node_lock_holder)
    busy = member_marks.live_holder(connection, holders, services.dead_before())
    if busy is not None:
        raise ActionInProgress(
            f"Cluster {cluster.name} already has an action ({busy}) in progress."
        )
    values = member.values
    if values[member_marks.STATUS] == NodeStatus.DELETING or member.delete_pending:
        return MarkResult(values, False, "The node is being deleted; its health was not changed.")
    current_health = values[member_marks.HEALTH]
    if request.mark_unhealthy:
        new_health = HealthStatus.CHECK_FAILED
    elif current_health == HealthStatus.CHECK_FAILED:
        new_health = HealthStatus.CHECK_COMPLETE
    else:
        return MarkResult(values, False, "The node is not marked unhealthy; nothing changed.")
    reason = request.resource_status_reason or DEFAULT_REASON
    changed = (current_health, values[member_marks.HEALTH_REASON]) != (new_health, reason)
    now = services.now()
    values = member_marks.write_health(
        session,
        cluster.id,
        member,
        health=new_health,
        reason=reason,
        marked_by=ctx.user or ctx.project,
        now=now,
    )
    if changed:
        member_marks.record_event(
            connection,
            timestamp=now,
            otype="NODE",
            oid=member.id,
            oname=values[1],
            project=values[6],
            user=ctx.user,
            cluster_id=cluster.id,
            action="NODE_MARK_UNHEALTHY" if request.mark_unhealthy else "NODE_MARK_HEALTHY",
            status=new_health,
            status_reason=reason,
            level="WARNING" if request.mark_unhealthy else "INFO",
        )
    message = "Marked unhealthy." if request.mark_unhealthy else "Marked healthy."
    return MarkResult(values, changed, message if changed else "No change.")
