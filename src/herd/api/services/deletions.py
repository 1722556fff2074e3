"""Reliable deletion: tombstones on DELETE, what agents and users see, and the admin endpoints.

See docs/deletion.md. In short: a DELETE inserts the resource's tombstone with
a unique-constraint INSERT in the transaction that marks the resource DELETING
and stores its delete action. While the tombstone exists agents get 404, users
see the resource with status DELETING, and a repeated DELETE starts nothing
(204) unless the deletion failed (202, retried). ``tombstones_enabled=False``
(test-only) turns all of it off: no tombstone is written, so nothing is hidden.
"""

from __future__ import annotations

from collections.abc import Callable

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.pagination import parse_bool
from herd.api.services.common import submit
from herd.errors import Conflict, Forbidden, InvalidRequest, NotFound
from herd.store import actions as action_store
from herd.store import tombstones
from herd.store.database import Session
from herd.store.listing import Clause
from herd.store.models import ActionRow, ClusterRow, NodeRow, PolicyRow, ProfileRow, TombstoneRow
from herd.store.resources import ROW_TYPES
from herd.types import (
    ActionName,
    ActionStatus,
    ClusterStatus,
    NodeStatus,
    ResourceType,
    TombstoneStatus,
)

#: a row a deletion may hide or start on
ResourceRow = ClusterRow | NodeRow | ProfileRow | PolicyRow


def enabled(services: Services) -> bool:
    return services.tombstones


# -- what callers see ----------------------------------------------------------------------


def hide_from_agent(
    session: Session, ctx: RequestContext, kind: ResourceType, row: ResourceRow
) -> None:
    """Agents get 404 for a resource being deleted (or a node of a cluster being deleted)."""
    if not ctx.is_agent:
        return
    if tombstones.tombstoned(session, kind, [row.id]):
        raise NotFound(kind, row.id)
    cluster_id = getattr(row, "cluster_id", None) if kind is ResourceType.NODE else None
    if cluster_id and tombstones.tombstoned(session, ResourceType.CLUSTER, [cluster_id]):
        raise NotFound(kind, row.id)


def agent_filter(ctx: RequestContext, kind: ResourceType) -> list[Clause]:
    """WHERE clauses that leave tombstoned resources out of an agent's lists."""
    return tombstones.hidden_from_agents(kind) if ctx.is_agent else []


# -- DELETE ----------------------------------------------------------------------------------


def _in_progress(session: Session, tombstone: TombstoneRow) -> bool:
    if tombstone.status != TombstoneStatus.DELETING:
        return False
    action = action_store.get(session, tombstone.action_id) if tombstone.action_id else None
    return action is not None and not ActionStatus(action.status).is_final


def _deleting(row: ClusterRow | NodeRow) -> ClusterStatus | NodeStatus:
    return ClusterStatus.DELETING if isinstance(row, ClusterRow) else NodeStatus.DELETING


def start_delete(
    session: Session,
    services: Services,
    ctx: RequestContext,
    kind: ResourceType,
    row: ClusterRow | NodeRow,
    *,
    validate: Callable[[bool], None],
    submit_action: Callable[[], ActionRow],
) -> ActionRow | None:
    """Start an asynchronous deletion; return its action, or None when one is in progress.

    ``validate(retry)`` raises for a refused delete (busy, in use); a retry of a
    failed deletion skips the busy-status checks, since the failed deletion left
    the status behind. ``submit_action()`` adds the delete action to the session.
    """
    if not enabled(services):
        validate(False)
        return submit_action()
    existing = tombstones.get(session, kind, row.id)
    if existing is None:
        validate(False)
        now = services.now()
        inserted = tombstones.insert(
            session,
            resource_type=kind,
            resource_id=row.id,
            project=row.project,
            requested_by=ctx.user,
            action_id=None,
            now=now,
        )
        if inserted:
            action = submit_action()
            tombstones.set_action(session, kind, row.id, action.id)
            row.status, row.status_reason = _deleting(row), "Deletion requested."
            row.deleted_at = now
            row.updated_at = now
            return action
        # Lost the race: the winner's tombstone is committed and visible now.
        existing = tombstones.get(session, kind, row.id)
        if existing is None:
            raise NotFound(kind, row.id)
    if _in_progress(session, existing):
        return None
    validate(True)
    action = submit_action()
    if not tombstones.restart(session, kind, row.id, action.id):
        session.expunge(action)  # another request retried it first
        return None
    row.status, row.status_reason = _deleting(row), "Deletion retried."
    row.updated_at = services.now()
    return action


def delete_now(
    session: Session,
    services: Services,
    ctx: RequestContext,
    kind: ResourceType,
    row: ResourceRow,
    in_use: str,
) -> None:
    """Synchronous delete (profiles, policies): tombstone, row and tombstone in one
    transaction (``tombstones.delete_at_once``); 409 ``in_use`` while referenced."""
    tombstones.delete_at_once(
        session,
        kind,
        row,
        requested_by=ctx.user,
        now=services.now(),
        keep_tombstones=enabled(services),
        in_use=in_use,
    )


# -- administration --------------------------------------------------------------------------


def require_admin(ctx: RequestContext) -> None:
    if not ctx.is_admin:
        raise Forbidden("You are not authorized to complete this operation.")


def tombstone_view(row: TombstoneRow, now: float) -> dict[str, object]:
    from herd.api.views import isotime

    return {
        "resource_type": row.resource_type,
        "resource_id": row.resource_id,
        "project": row.project,
        "deleted_at": isotime(row.deleted_at),
        "age": round(max(now - row.deleted_at, 0.0), 3),
        "status": row.status,
        "reason": row.reason,
        "action_id": row.action_id,
        "requested_by": row.requested_by,
    }


def list_deletions(
    session: Session, services: Services, ctx: RequestContext, params: dict[str, str]
) -> list[dict[str, object]]:
    require_admin(ctx)
    unknown = sorted(set(params) - {"resource_type"})
    if unknown:
        raise InvalidRequest(f"Invalid parameter {unknown[0]}", field=unknown[0])
    given = params.get("resource_type")
    if given is not None and given not in ROW_TYPES:
        raise _bad_type(given)
    kind = ResourceType(given) if given is not None else None
    now = services.now()
    views = [tombstone_view(row, now) for row in tombstones.list_all(session, kind)]
    regions = services.extra.get("regions")
    if regions is not None:
        for view in views:
            if view["resource_type"] == ResourceType.CLUSTER:
                view["regions_with_copies"] = regions.holding(view["resource_id"])
    return views


def _bad_type(kind: str) -> InvalidRequest:
    allowed = ", ".join(ROW_TYPES)
    return InvalidRequest(
        f"Invalid value '{kind}' specified for 'resource_type': must be one of {allowed}.",
        field="resource_type",
    )


def purge(
    session: Session,
    services: Services,
    ctx: RequestContext,
    resource_type: str,
    resource_id: str,
    force: str | None,
) -> tuple[dict[str, object], ActionRow]:
    """Hand a stuck deletion to a DELETION_PURGE action; return its view and the action."""
    require_admin(ctx)
    if resource_type not in ROW_TYPES:
        raise _bad_type(resource_type)
    kind = ResourceType(resource_type)
    if force is None or not parse_bool("force", force):
        raise InvalidRequest(
            "Purging a deletion needs force=true: it removes the tombstone of a deletion "
            "that did not finish.",
            field="force",
        )
    tombstone = tombstones.get(session, kind, resource_id)
    if tombstone is None:
        raise NotFound("deletion", f"{kind}/{resource_id}")
    if tombstone.status == TombstoneStatus.PURGING:
        running = action_store.get(session, tombstone.action_id) if tombstone.action_id else None
        if running is not None and not ActionStatus(running.status).is_final:
            raise Conflict(
                f"The deletion of {kind} '{resource_id}' is already being purged "
                f"(action {running.id}).",
                resource_type=kind,
                resource_id=resource_id,
            )
    now = services.now()
    limit = services.settings.deletion_stuck_after
    age = now - tombstone.deleted_at
    if age < limit:
        raise Conflict(
            f"The deletion of {kind} '{resource_id}' is not stuck: it started {age:.0f}s ago "
            f"and only deletions older than deletion_stuck_after ({limit:g}s) can be purged.",
            resource_type=kind,
            resource_id=resource_id,
        )
    deletion_action = tombstone.action_id if tombstone.status != TombstoneStatus.PURGING else None
    action = submit(
        session,
        services,
        ctx,
        ActionName.DELETION_PURGE,
        target=resource_id,
        cluster_id=None,
        project=tombstone.project,
        inputs={"resource_type": kind, "deletion_action": deletion_action},
        check=False,
    )
    view = tombstone_view(tombstone, now)
    tombstones.mark_purging(session, tombstone, action.id)
    return {**view, "status": TombstoneStatus.PURGING, "action": action.id}, action
