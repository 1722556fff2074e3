"""herd's cluster actions beyond Senlin's list, and Senlin's ``complete_lifecycle``.

* ``replace_unhealthy`` (asynchronous): replace every CHECK_FAILED member under the
  same name and index.
* ``complete_lifecycle`` (Senlin 1.9): finish a lifecycle hook wait, scoped to the
  cluster in the path (404 for a token of another cluster), with an optional
  ``lifecycle_action_result`` of CONTINUE (default) or ABANDON.
* ``lifecycle_heartbeat``: extend a hook wait by the hook's timeout from now.
* ``preview_scale_in``: the victims the attached policies would choose now.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import require
from herd.api.schemas.base import parse_body
from herd.api.schemas.cluster_actions import (
    CompleteLifecycleParams,
    LifecycleHeartbeatParams,
    PreviewScaleInParams,
    ReplaceUnhealthyParams,
)
from herd.errors import Conflict, NotFound, PolicyRejected
from herd.policies.preview import preview_scale_in
from herd.store.models import ActionRow, BindingRow, ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.store.snapshots import cluster_snapshot
from herd.types import ActionName, ActionStatus


def replace_unhealthy(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, dict[str, Any]]:
    params = parse_body(ReplaceUnhealthyParams, raw, label="replace_unhealthy")
    return ActionName.CLUSTER_REPLACE_UNHEALTHY, {"batch_size": params.batch_size or 1}


def _waiting_child(session: Session, cluster: ClusterRow, token: str) -> ActionRow:
    action = session.get(ActionRow, token)
    if action is None or action.cluster_id != cluster.id:
        raise NotFound("action", token, f"The action '{token}' could not be found.")
    if session.get_bind().dialect.name == "postgresql":
        session.refresh(action, with_for_update=True)
    if action.status != ActionStatus.WAITING_LIFECYCLE_COMPLETION.value:
        raise Conflict(
            f"The action '{token}' is not waiting for lifecycle completion "
            f"(status: {action.status})."
        )
    return action


def complete_lifecycle(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> dict[str, Any]:
    require(ctx.version, "1.9")
    params = parse_body(CompleteLifecycleParams, raw, label="complete_lifecycle")
    action = _waiting_child(session, cluster, params.lifecycle_action_token)
    result = params.lifecycle_action_result or "CONTINUE"
    action.status = ActionStatus.READY.value
    action.status_reason = "Lifecycle complete."
    action.data = {**(action.data or {}), "lifecycle_result": result}
    action.updated_at = services.now()
    return {"action": action.id}


def lifecycle_heartbeat(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> dict[str, Any]:
    params = parse_body(LifecycleHeartbeatParams, raw, label="lifecycle_heartbeat")
    action = _waiting_child(session, cluster, params.lifecycle_action_token)
    parent = session.get(ActionRow, action.parent_id) if action.parent_id else None
    hooks = ((parent.data if parent else None) or {}).get("hooks") or {}
    timeout = float(hooks.get("timeout") or 0)
    action.hook_deadline = services.now() + timeout
    action.updated_at = services.now()
    return {"action": action.id, "deadline": action.hook_deadline}


def preview(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> dict[str, Any]:
    params = parse_body(PreviewScaleInParams, raw, label="preview_scale_in")
    count = params.count
    members = session.scalars(
        select(NodeRow).where(NodeRow.cluster_id == cluster.id).order_by(NodeRow.index)
    ).all()
    profiles = {
        p.id: p.created_at
        for p in session.scalars(
            select(ProfileRow).where(ProfileRow.id.in_({m.profile_id for m in members}))
        ).all()
    }
    snapshot = cluster_snapshot(cluster, members, profiles)
    bound = (
        session.execute(
            select(PolicyRow)
            .join(BindingRow, BindingRow.policy_id == PolicyRow.id)
            .where(BindingRow.cluster_id == cluster.id, BindingRow.enabled.is_(True))
            .order_by(BindingRow.priority, BindingRow.id)
        )
        .scalars()
        .all()
    )
    policies = [services.policies.create(row.spec)[1] for row in bound]
    try:
        victims = preview_scale_in(
            snapshot,
            policies,
            count,
            services.now(),
            seed=0,
            max_nodes_per_cluster=services.settings.max_nodes_per_cluster,
        )
    except PolicyRejected as exc:
        raise Conflict(f"A scale-in would fail now: {exc}") from exc
    by_id = {m.id: m for m in members}
    return {
        "victims": [
            {
                "node_id": v.node_id,
                "name": by_id[v.node_id].name,
                "index": by_id[v.node_id].index,
                "status": by_id[v.node_id].status,
                "health": by_id[v.node_id].health,
                "rule": v.rule,
            }
            for v in victims
        ]
    }


SYNCHRONOUS = {
    "complete_lifecycle": complete_lifecycle,
    "lifecycle_heartbeat": lifecycle_heartbeat,
    "preview_scale_in": preview,
}
