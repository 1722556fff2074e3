"""What one health round reads from the store, in one read transaction.

The cluster, whether checks are suspended (and by which action), whether a live
action holds the cluster lock, and the members with their profiles, node locks
and check records. The round decides on this snapshot only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.engine.context import EngineContext
from herd.engine.health.detection import ProbeTarget
from herd.errors import HerdError
from herd.policies.health_rules import MemberState
from herd.store import locks, node_checks
from herd.store.models import ActionRow, BindingRow, ClusterRow, NodeLockRow, NodeRow, ProfileRow
from herd.store.node_checks import StoredCheck
from herd.types import ActionStatus, NodeStatus

#: profile id -> (profile type, validated properties), or an error text
ProfileCache = dict[str, tuple[str, dict[str, Any]] | str]


@dataclass(frozen=True, slots=True)
class Member:
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
class ClusterSnapshot:
    cluster_id: str
    name: str = ""
    project: str = ""
    exists: bool = True
    suspended_by: str | None = None  # the running action that suspended checks
    suspended_action: str = ""  # its name (CLUSTER_SCALE_IN, CLUSTER_RECOVER, ...)
    locked_by: list[str] = field(default_factory=list)
    members: dict[str, Member] = field(default_factory=dict)


def _suspension(session: Session, binding_id: str) -> tuple[str, str] | None:
    """(action id, action name) of the running action that suspended checks, if any."""
    binding = session.get(BindingRow, binding_id)
    data: Mapping[str, Any] = (binding.data or {}) if binding is not None else {}
    if not data.get("suspended"):
        return None
    action_id = data.get("suspended_by")
    if not action_id:
        return "unknown", "an action"
    action = session.get(ActionRow, str(action_id))
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
    for profile in session.scalars(select(ProfileRow).where(ProfileRow.id.in_(missing))):
        try:
            driver = ctx.drivers.get(profile.type)
            cache[profile.id] = (
                profile.type,
                driver.validate_properties(profile.spec.get("properties", {})),
            )
        except HerdError as exc:
            cache[profile.id] = str(exc)


_MEMBER_COLUMNS = (
    NodeRow.id,
    NodeRow.name,
    NodeRow.index,
    NodeRow.cluster_id,
    NodeRow.physical_id,
    NodeRow.data,
    NodeRow.profile_id,
    NodeRow.status,
    NodeRow.status_reason,
    NodeRow.updated_at,
    NodeRow.init_at,
    NodeRow.health,
    NodeRow.health_marked_by,
)


def read_snapshot(
    ctx: EngineContext, cluster_id: str, binding_id: str, cache: ProfileCache
) -> ClusterSnapshot:
    """Read a cluster for a round: plain column values, no ORM objects (1,000 members)."""
    snapshot = ClusterSnapshot(cluster_id)
    dead_before = ctx.dead_before()
    with ctx.database.read() as session:
        cluster = session.get(ClusterRow, cluster_id)
        if cluster is None:
            snapshot.exists = False
            return snapshot
        snapshot.name, snapshot.project = cluster.name, cluster.project
        suspension = _suspension(session, binding_id)
        if suspension is not None:
            snapshot.suspended_by, snapshot.suspended_action = suspension
        snapshot.locked_by = locks.cluster_lock_holders(session, cluster_id, dead_before)
        rows = session.execute(
            select(*_MEMBER_COLUMNS).where(NodeRow.cluster_id == cluster_id)
        ).all()
        ids = [row.id for row in rows]
        locked = set()
        if ids:
            held = session.scalars(select(NodeLockRow.node_id).where(NodeLockRow.node_id.in_(ids)))
            for node_id in held.all():
                if locks.node_lock_holder(session, node_id, dead_before) is not None:
                    locked.add(node_id)
        checks = node_checks.stored(session, ids)
        profiles_for(ctx, session, {row.profile_id for row in rows}, cache)
    for row in rows:
        profile = cache.get(row.profile_id, "profile is gone")
        snapshot.members[row.id] = Member(
            target=ProbeTarget(
                node_id=row.id,
                name=row.name,
                index=row[2],  # Row.index is a method of the row tuple
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
