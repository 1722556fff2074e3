"""Marking a cluster member unhealthy (Heat's ``mark_unhealthy`` PATCH), herd-style.

The body is validated in Heat's order with Heat's texts (unknown keys, then a
missing ``mark_unhealthy``, then a value that is not a boolean). The change is
made in one short transaction that holds the member's row lock (``FOR UPDATE``
on PostgreSQL; SQLite write transactions are serialised by ``BEGIN
IMMEDIATE``), so two concurrent marks never lose an update, and it is refused
with 409 while an action holds the cluster lock or the node lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.services.common import refuse_if_deleting
from herd.errors import ActionInProgress, InvalidRequest, NotFound
from herd.store import events
from herd.store.actions import active_actions_on
from herd.store.locks import cluster_lock_holders, node_lock_holder
from herd.store.lookup import find
from herd.store.models import ActionRow, ClusterRow, NodeRow
from herd.types import ActionName, HealthStatus, NodeStatus

ALLOWED_KEYS = ("mark_unhealthy", "resource_status_reason")
DEFAULT_REASON = "state changed by resource_mark_unhealthy api"
MAX_REASON = 4096


@dataclass(frozen=True)
class MarkRequest:
    mark_unhealthy: bool
    reason: str


@dataclass(frozen=True)
class MarkResult:
    node: NodeRow
    changed: bool
    message: str


def _set_repr(keys: list[str]) -> str:
    return "{" + ", ".join(repr(key) for key in sorted(keys)) + "}"


def parse_mark_body(body: Any) -> MarkRequest:
    """Validate the PATCH body; every problem is a 400 naming the offending key."""
    if not isinstance(body, Mapping):
        raise InvalidRequest(
            "The request body must be a JSON object with a 'mark_unhealthy' key.",
            field="body",
        )
    unknown = [key for key in body if key not in ALLOWED_KEYS]
    if unknown:
        raise InvalidRequest(
            f"Invalid keys in resource mark unhealthy {_set_repr(unknown)}",
            field=sorted(unknown)[0],
        )
    if "mark_unhealthy" not in body:
        raise InvalidRequest(
            "Missing mandatory (mark_unhealthy) key from mark unhealthy request",
            field="mark_unhealthy",
        )
    value = body["mark_unhealthy"]
    text = str(value).lower() if isinstance(value, (bool, str)) else None
    if text not in ("true", "false"):
        raise InvalidRequest(
            f'Unrecognized value "{value}" for "mark_unhealthy", '
            "acceptable values are: true, false.",
            field="mark_unhealthy",
        )
    reason = body.get("resource_status_reason")
    if reason is not None and not isinstance(reason, str):
        raise InvalidRequest(
            "The value for resource_status_reason must be a string.",
            field="resource_status_reason",
        )
    if reason is not None and len(reason) > MAX_REASON:
        raise InvalidRequest(
            f"The value for resource_status_reason must be at most {MAX_REASON} characters.",
            field="resource_status_reason",
        )
    return MarkRequest(text == "true", reason or DEFAULT_REASON)


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
    request: MarkRequest,
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
    changed = (member.health, member.health_reason) != (new_health, request.reason)
    member.health = new_health
    member.health_reason = request.reason
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
            reason=request.reason,
            level="WARNING" if request.mark_unhealthy else "INFO",
            now=now,
        )
    message = "Marked unhealthy." if request.mark_unhealthy else "Marked healthy."
    return MarkResult(member, changed, message if changed else "No change.")
