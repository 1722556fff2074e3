"""``GET /v1/clusters/<id>/health`` (herd's addition): what the health manager knows of a cluster.

The health policy and how it is read, whether checks run now (or are suspended
by a shrink, or disabled), which engine holds the cluster's health lease, and per
member the last check (when, which mode, what answer), its failures, recoveries
and back-off.
"""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.services import deletions
from herd.api.views import check_result, isotime
from herd.errors import HerdError, NotFound
from herd.store import actions as action_store
from herd.store import clusters, node_checks
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.health_leases import HealthBinding, health_bindings, lease_of
from herd.store.lookup import find
from herd.store.models import ClusterRow
from herd.types import ActionStatus, ResourceType


def _policy(services: Services, binding: HealthBinding) -> dict[str, object]:
    body: dict[str, object] = {
        "id": binding.policy_id,
        "name": binding.policy_name,
        "enabled": binding.enabled,
    }
    try:
        _, policy = services.policies.create(binding.spec)
    except HerdError as exc:
        return {**body, "error": str(exc)}
    settings = getattr(policy, "settings", None)
    if settings is None:
        return body
    return {
        **body,
        "detection_modes": settings.mode_names(),
        "interval": settings.interval,
        "node_update_timeout": settings.node_update_timeout,
        "recovery_conditional": settings.recovery_conditional.value,
        "recovery_action": settings.operation.value,
        "node_delete_timeout": settings.node_delete_timeout,
        "node_force_recreate": settings.node_force_recreate,
        "fencing": list(settings.fencing),
    }


def _suspended_by(session: Session, binding: HealthBinding) -> str | None:
    """The running shrink that suspended checks (a suspension left by an ended one is void)."""
    action_id = binding.data.get("suspended_by") if binding.data.get("suspended") else None
    if not action_id:
        return None
    action = action_store.get(session, str(action_id))
    if action is None or ActionStatus(action.status).is_final:
        return None
    return str(action_id)


def cluster_health(
    session: Session,
    services: Services,
    ctx: RequestContext,
    identity: str,
    member: str | None = None,
) -> dict[str, object]:
    """The cluster's health view; with ``member`` (herd's node page) only that member's row
    (and a summary of it), read without loading the other members."""
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)
    bindings = health_bindings(session, [cluster.id])
    binding = bindings[0] if bindings else None
    suspended_by = _suspended_by(session, binding) if binding is not None else None
    if binding is None:
        checking = "NO_POLICY"
    elif not binding.enabled:
        checking = "DISABLED"
    elif suspended_by is not None:
        checking = "SUSPENDED"
    else:
        checking = "ACTIVE"
    lease = lease_of(session, cluster.id)
    if member is None:
        nodes = clusters.members(session, cluster.id)
    else:
        node = node_store.get(session, member)
        if node is None or node.cluster_id != cluster.id:
            raise NotFound(
                "node", member, f"The node '{member}' is not a member of the cluster '{identity}'."
            )
        nodes = [node]
    checks = node_checks.load(session, [node.id for node in nodes])
    now = services.now()
    members: list[dict[str, object]] = []
    for node in nodes:
        check = checks.get(node.id)
        backoff = check.backoff_until if check is not None else None
        members.append(
            {
                "id": node.id,
                "name": node.name,
                "index": node.index,
                "status": node.status,
                "health": node.health,
                "physical_id": node.physical_id,
                "last_checked_at": isotime(check.checked_at) if check else None,
                "last_check_mode": (check.mode or None) if check else None,
                "last_check_result": check_result(check.healthy) if check else None,
                "last_check_reason": check.reason if check else None,
                "failures": check.failures if check else 0,
                "recoveries": check.recoveries if check else 0,
                "recoveries_in_a_row": check.streak if check else 0,
                "last_recovery_at": isotime(check.last_recovery_at) if check else None,
                "last_recovery_result": (check.last_recovery_result or None) if check else None,
                "backoff_until": isotime(backoff) if backoff and backoff > now else None,
            }
        )
    return {
        "cluster_health": {
            "cluster_id": cluster.id,
            "cluster_name": cluster.name,
            "status": cluster.status,
            "checking": checking,
            "suspended_by": suspended_by,
            "policy": _policy(services, binding) if binding is not None else None,
            "lease": (
                {
                    "engine_id": lease.engine_id,
                    "acquired_at": isotime(lease.acquired_at),
                    "renewed_at": isotime(lease.renewed_at),
                }
                if lease is not None
                else None
            ),
            "summary": {
                "members": len(members),
                "unhealthy": sum(1 for m in members if m["last_check_result"] == "unhealthy"),
                "recoveries": sum(check.recoveries for check in checks.values()),
                "in_backoff": sum(1 for m in members if m["backoff_until"]),
            },
            "members": members,
        }
    }
