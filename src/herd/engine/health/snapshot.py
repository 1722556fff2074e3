"""What one health round reads from the store, in one read transaction.

The cluster, whether checks are suspended (and by which action), whether a live
action holds the cluster lock, and the members with their profiles, node locks
and check records. The round decides on this snapshot only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from herd.engine.context import EngineContext
from herd.engine.health.detection import ProbeTarget
from herd.errors import HerdError
from herd.policies.health_rules import MemberState
from herd.store import actions as action_store
from herd.store import bindings, clusters, locks, node_checks, node_reads, profiles, tombstones
from herd.store.database import Session
from herd.store.node_checks import StoredCheck
from herd.types import ActionStatus, NodeStatus, ResourceType

#: profile id -> (profile type, validated properties), or an error text
ProfileCache = dict[str, tuple[str, dict[str, object]] | str]


@dataclass(frozen=True, slots=True)
class RoundMember:
    """A member as a health round reads it (not the decisions' ``NodeSnapshot``)."""

    target: ProbeTarget
    status: NodeStatus
    updated_at: float | None
    profile_type: str | None  # None: the profile cannot be used (see profile_error)
    profile_error: str
    health: str
    health_marked_by: str | None
    status_reason: str
    busy: bool
    check: StoredCheck

    def state(self) -> MemberState:
        return MemberState(self.target.node_id, self.status, self.target.physical_id, self.busy)


@dataclass
class RoundSnapshot:
    """What one health round reads of a cluster (not the decisions' ``ClusterSnapshot``)."""

    cluster_id: str
    name: str = ""
    project: str = ""
    exists: bool = True
    suspended_by: str | None = None  # the running action that suspended checks
    suspended_action: str = ""  # its name (CLUSTER_SCALE_IN, CLUSTER_RECOVER, ...)
    locked_by: list[str] = field(default_factory=list)
    members: dict[str, RoundMember] = field(default_factory=dict)


def _suspension(session: Session, binding_id: str) -> tuple[str, str] | None:
    """(action id, action name) of the running action that suspended checks, if any."""
    binding = bindings.get(session, binding_id)
    data: Mapping[str, object] = (binding.data or {}) if binding is not None else {}
    if not data.get("suspended"):
        return None
    action_id = data.get("suspended_by")
    if not action_id:
        return "unknown", "an action"
    action = action_store.get(session, str(action_id))
    if action is None or ActionStatus(action.status).is_final:
        return None  # the shrink ended without resuming checks (it failed): not suspended
    return str(action_id), action.action


def profiles_for(
    ctx: EngineContext, session: Session, profile_ids: set[str], cache: ProfileCache
) -> None:
    """Fill ``cache`` with the validated properties of profiles not in it yet."""
    missing = [p for p in profile_ids if p not in cache]
    if not missing:
        return
    for profile in profiles.get_many(session, missing).values():
        try:
            driver = ctx.drivers.get(profile.type)
            cache[profile.id] = (
                profile.type,
                driver.validate_properties(profile.spec.get("properties", {})),
            )
        except HerdError as exc:
            cache[profile.id] = str(exc)


def read_snapshot(
    ctx: EngineContext, cluster_id: str, binding_id: str, cache: ProfileCache
) -> RoundSnapshot:
    """Read a cluster for a round: plain column values, no ORM objects (1,000 members)."""
    snapshot = RoundSnapshot(cluster_id)
    dead_before = ctx.dead_before()
    with ctx.database.read() as session:
        cluster = clusters.get(session, cluster_id)
        if cluster is None:
            snapshot.exists = False
            return snapshot
        snapshot.name, snapshot.project = cluster.name, cluster.project
        suspension = _suspension(session, binding_id)
        if suspension is not None:
            snapshot.suspended_by, snapshot.suspended_action = suspension
        snapshot.locked_by = locks.cluster_lock_holders(session, cluster_id, dead_before)
        rows = node_reads.health_rows(session, cluster_id)
        ids = [row.id for row in rows]
        locked = locks.locked_nodes(session, ids, dead_before)
        # A member whose deletion is pending (a NODE_DELETE that failed or was cancelled)
        # is not the manager's: its user asked for it to go, so it is neither checked
        # (its reason stays the deletion's) nor recovered, as by a cluster recover.
        locked |= tombstones.tombstoned(session, ResourceType.NODE, ids)
        checks = node_checks.stored(session, ids)
        profiles_for(ctx, session, {row.profile_id for row in rows}, cache)
    for row in rows:
        profile = cache.get(row.profile_id, "profile is gone")
        snapshot.members[row.id] = RoundMember(
            target=ProbeTarget(
                node_id=row.id,
                name=row.name,
                index=row._mapping["index"],  # Row.index is a method of the row tuple
                cluster_id=row.cluster_id,
                physical_id=row.physical_id,
                data=row.data or {},
                properties=profile[1] if isinstance(profile, tuple) else {},
            ),
            status=NodeStatus(row.status),
            updated_at=row.updated_at or row.init_at,
            profile_type=profile[0] if isinstance(profile, tuple) else None,
            profile_error=profile if isinstance(profile, str) else "",
            health=row.health,
            health_marked_by=row.health_marked_by,
            status_reason=row.status_reason or "",
            busy=row.id in locked,
            check=checks.get(row.id) or StoredCheck(),
        )
    return snapshot
