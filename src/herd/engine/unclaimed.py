"""Resources made for nodes whose rows were deleted while the driver call ran: destroyed at once.

A forced delete (``force`` on ``DELETE /v1/clusters/<id>`` or ``/v1/nodes/<id>``) takes the
locks of a running scale-out or recovery and deletes its node rows while that action's driver
calls are still making resources. When such a call returns, the result writer finds no row:
the resource it made belongs to nobody. Left alone it would live until the next engine start's
orphan sweep (``recovery.reconcile_resources``); instead the writer records why, and the
resource is destroyed here, through its driver, on a thread of its own: a slow delete (a Nova
server) never holds the writer's transaction or the parent action.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from herd.drivers.base import CreatedResource, ResourceRef
from herd.engine.context import EngineContext
from herd.engine.driver_args import ref_of
from herd.engine.execution import ActionExecution, NodeEventFields
from herd.errors import HerdError

log = logging.getLogger(__name__)

#: the reason of the event recorded for a resource whose node row was gone
REASON = "Node deleted while its resource was being made: the resource is destroyed."


@dataclass(frozen=True)
class MadeFor:
    """What destroying a resource made for a node needs, should the node's row be gone."""

    profile_type: str
    properties: Mapping[str, Any]  # the profile's validated properties
    name: str  # the node's name, for the event
    cluster_id: str | None


@dataclass(frozen=True)
class Unclaimed:
    """A resource made (or recovered) for a node that no longer has a row."""

    node_id: str
    resource: CreatedResource
    made_for: MadeFor

    def ref(self) -> ResourceRef:
        return ref_of(
            self.node_id, self.resource.physical_id, self.resource.data, self.made_for.properties
        )


def unclaimed_event(ex: ActionExecution, item: Unclaimed) -> NodeEventFields:
    """The WARNING event on the node id that says why its resource is destroyed."""
    made_for = item.made_for
    return {
        "otype": "NODE",
        "oid": item.node_id,
        "oname": made_for.name,
        "project": ex.project,
        "user": ex.user,
        "cluster_id": made_for.cluster_id,
        "action": ex.action,
        "status": "DELETED",
        "reason": f"{REASON} ({item.resource.physical_id})",
        "level": "WARNING",
    }


def destroy_later(ctx: EngineContext, found: Sequence[Unclaimed]) -> None:
    """Destroy ``found`` on a tracked thread (joined when the engine stops); return at once."""
    if not found:
        return
    for item in found:
        log.warning(
            "node %s was deleted while its resource %s was being made: destroying it",
            item.node_id,
            item.resource.physical_id,
        )
    items = list(found)
    ctx.abandonable.run(lambda: destroy(ctx, items), timeout=0)


def destroy(ctx: EngineContext, found: Sequence[Unclaimed]) -> int:
    """Destroy ``found``, a profile type's resources at once; how many are gone."""
    by_type: dict[str, list[Unclaimed]] = {}
    for item in found:
        by_type.setdefault(item.made_for.profile_type, []).append(item)
    gone = 0
    for profile_type, items in by_type.items():
        try:
            errors = ctx.drivers.get(profile_type).delete_many([i.ref() for i in items])
        except Exception as exc:  # no such driver, a driver bug: the sweep at start retries
            errors = [exc] * len(items)
        for item, error in zip(items, errors, strict=True):
            if error is None:
                gone += 1
                continue
            why = error if isinstance(error, HerdError) else repr(error)
            log.warning(
                "cannot destroy resource %s of deleted node %s (the next engine start's orphan"
                " sweep will): %s",
                item.resource.physical_id,
                item.node_id,
                why,
            )
    return gone
