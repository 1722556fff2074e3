"""What one health round reads from the store, in one read transaction.

The cluster, whether checks are suspended (and by which action), whether a live
action holds the cluster lock, and the members with their profiles, node locks
and check records. The round decides on this snapshot only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from herd.types import ActionStatus, NodeStatus

#: profile id -> (profile type, validated properties), or an error text
ProfileCache = dict[str, tuple[str, dict[str, Any]] | str]


@dataclass(frozen=True, slots=True)
class CheckState:
    """The stored part of a node's health: back-off and the current failure."""

    streak: int = 0
    last_recovery_at: float | None = None
    failed_since: float | None = None
    backoff_until: float | None = None
    healthy: bool | None = None


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
    check: CheckState

    def state(self) -> MemberState:
        return MemberState(self.target.node_id, self.status, self.target.physical_id, self.busy)


@dataclass
class ClusterSnapshot:
    cluster_id: str
    name: str = ""
    project: str = ""
    exists: bool = True
    suspended_by: str | None = None  # the running action that suspended checks
    locked_by: list[str] = field(default_factory=list)
    members: dict[str, Member] = field(default_factory=dict)


def _suspension(session: Session, binding_id: str) -> str | None:
    binding = session.get(BindingRow, binding_id)
    data: Mapping[str, Any] = (binding.data or {}) if binding is not None else {}
    if not data.get("suspended"):
        return None
    action_id = data.get("suspended_by")
    if not action_id:
        return "unknown action"
    action = session.get(ActionRow, str(action_id))
    if action is None or ActionStatus(action.status).is_final:
        return None  # the shrink ended without resuming checks (it failed): not suspended
    return str(action_id)


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


def read_snapshot(
    ctx: EngineContext,
    cluster_id: str,
    binding_id: str,
    cache: ProfileCache,
    wanted: Callable[[NodeRow], bool] | None = None,
) -> ClusterSnapshot:
    """Read a cluster for a round (``wanted`` limits the members loaded)."""
    snapshot = ClusterSnapshot(cluster_id)
    dead_before = ctx.dead_before()
    with ctx.database.read() as session:
        cluster = session.get(ClusterRow, cluster_id)
        if cluster is None:
            snapshot.exists = False
            return snapshot
        snapshot.name, snapshot.project = cluster.name, cluster.project
        snapshot.suspended_by = _suspension(session, binding_id)
        snapshot.locked_by = locks.cluster_lock_holders(session, cluster_id, dead_before)
        rows = [
            row
            for row in session.scalars(select(NodeRow).where(NodeRow.cluster_id == cluster_id))
            if wanted is None or wanted(row)
        ]
        ids = [row.id for row in rows]
        locked = set()
        if ids:
            for lock in session.scalars(select(NodeLockRow).where(NodeLockRow.node_id.in_(ids))):
                if locks.node_lock_holder(session, lock.node_id, dead_before) is not None:
                    locked.add(lock.node_id)
        checks = node_checks.load(session, ids)
        profiles_for(ctx, session, {row.profile_id for row in rows}, cache)
    for row in rows:
        profile = cache.get(row.profile_id, "profile is gone")
        check = checks.get(row.id)
        snapshot.members[row.id] = Member(
            target=ProbeTarget(
                node_id=row.id,
                name=row.name,
                index=row.index,
                cluster_id=row.cluster_id,
                physical_id=row.physical_id,
                data=dict(row.data or {}),
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
            check=CheckState(
                streak=check.streak,
                last_recovery_at=check.last_recovery_at,
                failed_since=check.failed_since,
                backoff_until=check.backoff_until,
                healthy=check.healthy,
            )
            if check is not None
            else CheckState(),
        )
    return snapshot
