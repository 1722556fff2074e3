"""DELETION_PURGE (herd): an administrator clears a deletion that is stuck.

The API only checks the request and hands the tombstone to this action
(status PURGING), so the request transaction never waits on regional stores.
The action stops the stuck deletion (its action and children are cancelled
and their locks released), deletes the regional copies of a cluster, turns its
members into orphans (their real resources may still exist, so their rows
stay), and removes the resource row with its tombstone. Each step is
idempotent, so a purge resumed after an engine stopped simply runs again.
"""

from __future__ import annotations

from herd.engine.execution import ActionExecution, Outcome
from herd.engine.recovery import IN_FLIGHT
from herd.store import actions as action_store
from herd.store import clusters, events, resources, tombstones
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.locks import release_all
from herd.store.models import ActionRow, ClusterRow
from herd.types import ActionControl, ActionStatus, NodeStatus, ResourceType

PURGED = "Cancelled: its deletion was purged by an administrator."
#: a node whose child action the purge stopped half-way
INTERRUPTED_BY_PURGE = "Interrupted: its deletion was purged before it finished."


def _cancel(session: Session, action: ActionRow, now: float) -> None:
    action.status = ActionStatus.CANCELLED
    action.status_reason = PURGED
    # a runner still holding it stops at its next check (and ends it as purged, not as
    # robbed by a forced delete: the purge's reason is the one it keeps)
    action.control = ActionControl.CANCEL
    action.end_time = action.updated_at = now
    release_all(session, action.id)


def _stop_deletion(session: Session, action_id: str | None, now: float) -> list[str]:
    """Cancel the stuck deletion's action and its unfinished children; release their locks."""
    action = action_store.get(session, action_id) if action_id else None
    if action is None:
        return []
    cleaned = []
    if not ActionStatus(action.status).is_final:
        _cancel(session, action, now)
        cleaned.append(f"action {action.id} cancelled")
    children = action_store.unfinished_children(session, action.id)
    for child in children:
        # the members it left half-way are set ERROR when the cluster is detached
        _cancel(session, child, now)
    if children:
        cleaned.append(f"{len(children)} child action(s) cancelled")
    return cleaned


def _stop_others(session: Session, resource_id: str, purge_id: str, now: float) -> list[str]:
    """Cancel the other unfinished actions on the purged resource (e.g. a create still queued
    when the deletion began): their target is about to disappear, and a lock one of them
    took after the deletion's was released would outlive the resource."""
    others = action_store.unfinished_on(session, resource_id, purge_id)
    for action in others:
        _cancel(session, action, now)
    return [f"{len(others)} other action(s) cancelled"] if others else []


def _detach_cluster(session: Session, cluster_id: str) -> list[str]:
    # Every member still in flight: the actions working on them were cancelled above (the
    # deletion's children, or a resumed deletion's as "other actions"), so nothing will
    # finish them, and as orphans DELETING they would say otherwise for ever (issue 24's
    # crash matrix found such members twice).
    stuck = clusters.member_ids(session, cluster_id, {"status": [str(s) for s in IN_FLIGHT]})
    orphaned = clusters.detach_everything(session, cluster_id, "Its cluster was purged.")
    node_store.set_status_many(session, stuck, NodeStatus.ERROR, INTERRUPTED_BY_PURGE)
    return [f"{orphaned} member(s) made orphans"]


class PurgeHandlers:
    def purge(self, ex: ActionExecution) -> Outcome:
        """Clear the deletion of ``ex.inputs['resource_type']`` ``ex.target``."""
        given = str(ex.inputs.get("resource_type", ""))
        if given not in resources.ROW_TYPES:
            return Outcome.failed(f"Cannot purge a deletion of '{given}'.")
        kind = ResourceType(given)
        resource_id, ctx = ex.target, ex.ctx
        with ctx.database.write() as session:
            cleaned = _stop_deletion(session, ex.inputs.get("deletion_action"), ctx.now())
            cleaned += _stop_others(session, resource_id, ex.id, ctx.now())
        if kind is ResourceType.CLUSTER and ctx.regions_delete is not None:
            # Outside any transaction: the regional stores may be slow or down.
            error = ctx.regions_delete(ClusterRow(id=resource_id))
            cleaned.append(
                "regional copies" if error is None else f"regional copies failed ({error})"
            )
        with ctx.database.write() as session:
            if kind is ResourceType.CLUSTER:
                cleaned += _detach_cluster(session, resource_id)
            row = resources.get(session, kind, resource_id)
            tombstone = tombstones.get(session, kind, resource_id)
            events.record(
                session,
                otype=kind.upper(),
                oid=resource_id,
                oname=getattr(row, "name", "") if row is not None else "",
                project=tombstone.project if tombstone is not None else ex.project,
                user=ex.user,
                cluster_id=resource_id if kind is ResourceType.CLUSTER else None,
                action=ex.action,
                status="PURGED",
                reason=f"Stuck deletion purged by an administrator; cleaned: {', '.join(cleaned)}.",
                level="WARNING",
                now=ctx.now(),
                meta={"cleaned": cleaned},
            )
            tombstones.remove(session, kind, resource_id)
            if row is not None:
                resources.remove(session, row)
                cleaned.append(f"{kind} row")
        ex.outputs["cleaned"] = cleaned
        return Outcome.ok(f"Deletion of {kind} '{resource_id}' purged.", cleaned=cleaned)
