"""Taking over after a dead engine, and matching real resources with node rows.

An engine is dead when its heartbeat is older than ``engine_dead_after``, or at
once when it ran on this host and its process is gone (a ``kill -9`` followed
by a restart need not wait for the heartbeat to age). Its unfinished top-level
actions go back to READY and are run again from their stored plan; their
children keep their state, so nothing is created twice. Then every resource a
driver can see is matched with its node row: a resource without a row is
destroyed (an orphan), a row still being created that has a resource adopts it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterable

from herd.engine.context import EngineContext
from herd.engine.driver_args import ref_of
from herd.errors import HerdError
from herd.store import actions as action_store
from herd.store import engines, events, locks, profiles, resources, tombstones
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.models import ActionRow, ClusterRow, NodeRow
from herd.store.wakeups import announce_ready
from herd.types import (
    ActionCause,
    ActionName,
    ActionStatus,
    NodeStatus,
    ResourceType,
    TombstoneStatus,
)

log = logging.getLogger(__name__)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_engines(ctx: EngineContext) -> list[str]:
    host = socket.gethostname()
    dead_before = ctx.dead_before()
    with ctx.database.read() as session:
        rows = engines.others(session, ctx.engine_id)
    return [
        row.id
        for row in rows
        if row.heartbeat_at < dead_before or (row.host == host and not _pid_alive(row.pid))
    ]


def take_over(ctx: EngineContext) -> int:
    """Resume the actions of dead engines; return how many top-level actions were re-queued."""
    dead = set(dead_engines(ctx))
    now = ctx.now()
    requeued = 0
    with ctx.database.write() as session:
        live = engines.ids(session) - dead
        # Live engines' actions stay out of the query: a running scale of 10,000
        # nodes has as many children, and this runs every few heartbeats.
        unfinished = action_store.unfinished_not_owned_by(session, live)
        for action in unfinished:
            if action.owner in live:
                continue
            previous = action.owner or ""
            action.owner = None
            if action.parent_id is None:
                requeued += 1
                action.status = ActionStatus.READY
                action.status_reason = (
                    f"Resumed: engine {previous[:8]} stopped while running this action."
                )
                action.updated_at = now
                events.record(
                    session,
                    otype="CLUSTER" if action.action.startswith("CLUSTER") else "NODE",
                    oid=action.target,
                    oname=action.name,
                    project=action.project,
                    cluster_id=action.cluster_id,
                    action=action.action,
                    status="RESUMED",
                    reason=action.status_reason,
                    level="WARNING",
                    now=now,
                )
        for engine_id in dead:
            engines.remove(session, engine_id)
        if requeued:
            announce_ready(session)  # every engine may take them, not only this one
    if requeued:
        log.warning("re-queued %d action(s) of stopped engines", requeued)
    return requeued


def reconcile_resources(ctx: EngineContext) -> dict[str, int]:
    """Adopt resources whose rows are still being created; destroy resources without rows."""
    counts = {"adopted": 0, "orphans_destroyed": 0}
    unique = {id(d): d for d in (ctx.drivers.get(name) for name in ctx.drivers.names())}
    for driver in unique.values():
        try:
            found = driver.discover()
        except HerdError as exc:
            log.warning("cannot list resources of %s: %s", driver.profile_type, exc)
            continue
        if not found:
            continue
        with ctx.database.write() as session:
            rows = {row.id: row for row in node_store.get_many(session, found)}
            for node_id, resource in found.items():
                row = rows.get(node_id)
                if row is not None and row.physical_id in (None, resource.physical_id):
                    if row.physical_id is None:
                        row.physical_id = resource.physical_id
                        row.data = {**(row.data or {}), **resource.data}
                        counts["adopted"] += 1
                    continue
                properties = {}
                if row is not None:
                    profile = profiles.get(session, row.profile_id)
                    if profile is not None:
                        properties = driver.validate_properties(profile.spec.get("properties", {}))
                try:
                    driver.delete(ref_of(node_id, resource.physical_id, resource.data, properties))
                    counts["orphans_destroyed"] += 1
                except HerdError as exc:
                    log.warning("cannot destroy orphan %s: %s", resource.physical_id, exc)
    return counts


#: the reason of a node whose child action ended before it finished
INTERRUPTED = "Interrupted: its action ended before it finished."

#: node states that say a child action is working on the node
IN_FLIGHT = (
    NodeStatus.CREATING,
    NodeStatus.DELETING,
    NodeStatus.RECOVERING,
    NodeStatus.OPERATING,
)


def end_children(
    session: Session, children: Iterable[ActionRow], status: ActionStatus, reason: str, now: float
) -> int:
    """End unfinished children whose parent has ended: nothing will ever run them again.

    Their node locks go with them, and a node they left half-way is ERROR: the health
    manager looks at ERROR nodes, and a node whose deletion was accepted keeps its
    tombstone, which :func:`resume_deletions` turns into a new deletion.
    """
    ended = [child for child in children if not ActionStatus(child.status).is_final]
    for child in ended:
        action_store.set_status(session, child.id, status, reason, now, owner=None)
        node = node_store.get(session, child.target)
        if node is not None and node.status in IN_FLIGHT:
            node.status = NodeStatus.ERROR
            node.status_reason = INTERRUPTED
    locks.release_nodes_held_by(session, [child.id for child in ended])
    return len(ended)


def fail_stuck_children(ctx: EngineContext) -> None:
    """Children whose parent has ended can never be run again: end them too."""
    now = ctx.now()
    with ctx.database.write() as session:
        stuck = [
            child
            for child in action_store.unfinished_children(session)
            if _parent_ended(session, child.parent_id)
        ]
        end_children(session, stuck, ActionStatus.FAILED, PARENT_ENDED, now)


#: why a child is ended with its parent
PARENT_ENDED = "Parent action ended before this action finished."


def _parent_ended(session: Session, parent_id: str | None) -> bool:
    parent = action_store.get(session, parent_id) if parent_id else None
    return parent is None or ActionStatus(parent.status).is_final


#: the action that deletes each resource type (profiles and policies are deleted by the API)
_DELETE_ACTION: dict[ResourceType, ActionName | None] = {
    ResourceType.CLUSTER: ActionName.CLUSTER_DELETE,
    ResourceType.NODE: ActionName.NODE_DELETE,
    ResourceType.PROFILE: None,
    ResourceType.POLICY: None,
}


def resume_deletions(ctx: EngineContext) -> dict[str, int]:
    """Make sure every tombstone is either being worked on, failed visibly, or gone.

    Run at start-up after :func:`take_over` (which re-queues the deletions dead
    engines were running). What is left: a tombstone whose resource row is gone
    (removed), and a DELETING tombstone whose action ended without finishing the
    deletion (timed out or cancelled): a new delete action is queued for it,
    since a deletion that was accepted is never silently dropped. A PURGING
    tombstone whose purge ended unfinished gets a new purge the same way.
    """
    counts = {"resumed": 0, "cleared": 0}
    now = ctx.now()
    with ctx.database.write() as session:
        for tombstone in tombstones.list_all(session):
            verb = _DELETE_ACTION.get(tombstone.resource_type)
            row = resources.get(session, tombstone.resource_type, tombstone.resource_id)
            if row is None:
                tombstones.remove(session, tombstone.resource_type, tombstone.resource_id)
                counts["cleared"] += 1
                continue
            purging = tombstone.status == TombstoneStatus.PURGING
            deleting = tombstone.status == TombstoneStatus.DELETING
            if purging:
                verb = ActionName.DELETION_PURGE
            elif verb is None or not deleting:
                continue
            action = action_store.get(session, tombstone.action_id) if tombstone.action_id else None
            if action is not None and not ActionStatus(action.status).is_final:
                continue
            if purging:
                # The ended purge knew which deletion it was stopping: the new one goes on.
                inputs = dict(action.inputs) if action is not None else {}
                inputs.setdefault("resource_type", tombstone.resource_type)
                cluster_id = None
            else:
                inputs = {"force": True}
                # CLUSTER_DELETE names its cluster, NODE_DELETE its node's (only these two
                # have a _DELETE_ACTION)
                cluster_id = row.id if isinstance(row, ClusterRow) else None
                if isinstance(row, NodeRow):
                    cluster_id = row.cluster_id
            new = action_store.new_action(
                action=verb,
                target=row.id,
                cluster_id=cluster_id,
                project=row.project,
                user=tombstone.requested_by,
                cause=ActionCause.RPC,
                inputs=inputs,
                now=now,
            )
            action_store.add(session, new)
            tombstone.action_id = new.id
            what = "Purge" if purging else "Deletion"
            events.record(
                session,
                otype=tombstone.resource_type.upper(),
                oid=row.id,
                oname=row.name,
                project=row.project,
                cluster_id=new.cluster_id,
                action=verb,
                status="RESUMED",
                reason=f"{what} resumed: its previous action ended before it finished.",
                level="WARNING",
                now=now,
            )
            counts["resumed"] += 1
    return counts
