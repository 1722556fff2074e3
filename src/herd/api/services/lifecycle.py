"""The synchronous lifecycle-hook calls of ``POST /v1/clusters/<id>/actions``.

* ``complete_lifecycle`` (Senlin 1.9): finish a lifecycle hook wait, scoped to the
  cluster in the path (404 for a token of another cluster), with an optional
  ``lifecycle_action_result`` of CONTINUE (default) or ABANDON.
* ``lifecycle_heartbeat`` (herd): extend a hook wait by the hook's timeout from now.
"""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import require
from herd.api.schemas.base import parse_body
from herd.api.schemas.cluster_actions import CompleteLifecycleParams, LifecycleHeartbeatParams
from herd.errors import Conflict, MultipleChoices, NotFound
from herd.store import actions as action_store
from herd.store.database import Session, refresh_for_update
from herd.store.models import ActionRow, ClusterRow
from herd.types import ActionStatus


def _find_token(session: Session, cluster: ClusterRow, token: str) -> ActionRow | None:
    """The cluster's action ``token`` names: its full id or a unique prefix (the short id the
    CLI's tables and events print; herd addition)."""
    action = action_store.get(session, token)
    if action is None and 0 < len(token) < 36:
        found = action_store.by_prefix(session, cluster.id, token)
        if len(found) > 1:
            raise MultipleChoices(
                f"Multiple results found matching the query criteria '{token}'. "
                "Please be more specific."
            )
        action = found[0] if found else None
    return action


def _waiting_child(session: Session, cluster: ClusterRow, token: str) -> ActionRow:
    action = _find_token(session, cluster, token)
    if action is None or action.cluster_id != cluster.id:
        raise NotFound("action", token, f"The action '{token}' could not be found.")
    refresh_for_update(session, action)
    if action.status != ActionStatus.WAITING_LIFECYCLE_COMPLETION:
        raise Conflict(
            f"The action '{token}' is not waiting for lifecycle completion "
            f"(status: {action.status})."
        )
    return action


def complete_lifecycle(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: object
) -> dict[str, object]:
    require(ctx.version, "1.9")
    params = parse_body(CompleteLifecycleParams, raw, label="complete_lifecycle")
    action = _waiting_child(session, cluster, params.lifecycle_action_token)
    result = params.lifecycle_action_result or "CONTINUE"
    action.status = ActionStatus.READY
    action.status_reason = "Lifecycle complete."
    action.data = {**(action.data or {}), "lifecycle_result": result}
    action.updated_at = services.now()
    return {"action": action.id}


def lifecycle_heartbeat(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: object
) -> dict[str, object]:
    params = parse_body(LifecycleHeartbeatParams, raw, label="lifecycle_heartbeat")
    action = _waiting_child(session, cluster, params.lifecycle_action_token)
    parent = action_store.get(session, action.parent_id) if action.parent_id else None
    hooks = ((parent.data if parent else None) or {}).get("hooks") or {}
    timeout = float(hooks.get("timeout") or 0)
    action.hook_deadline = services.now() + timeout
    action.updated_at = services.now()
    return {"action": action.id, "deadline": action.hook_deadline}


LIFECYCLE_CALLS = {
    "complete_lifecycle": complete_lifecycle,
    "lifecycle_heartbeat": lifecycle_heartbeat,
}
