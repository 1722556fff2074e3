"""The cluster actions that bind policies: ``policy_attach``, ``policy_detach``, ``policy_update``.

Each validates the body and the binding as Senlin's API does and returns the
action to store with its inputs (see ``cluster_actions.py``, which maps each
action key to its handler).
"""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.base import parse_body
from herd.api.schemas.cluster_actions import (
    PolicyAttachParams,
    PolicyDetachParams,
    PolicyUpdateParams,
)
from herd.api.services.common import find_referenced
from herd.errors import InvalidRequest
from herd.store import bindings
from herd.store.database import Session
from herd.store.lookup import Scope
from herd.store.models import BindingRow, ClusterRow, PolicyRow
from herd.types import ActionName, ResourceType


def _policy(session: Session, cluster: ClusterRow, identity: str) -> PolicyRow:
    """The policy a body names, in the cluster's own project (an admin acting on another
    project's cluster cannot bind a third project's policy, which its owner could then
    not delete)."""
    policy: PolicyRow = find_referenced(
        session, PolicyRow, identity, Scope(cluster.project), ResourceType.POLICY
    )
    return policy


def _binding(session: Session, cluster: ClusterRow, policy: PolicyRow) -> BindingRow | None:
    return bindings.get_binding(session, cluster.id, policy.id)


def policy_attach(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: object
) -> tuple[ActionName, dict[str, object]]:
    params = parse_body(PolicyAttachParams, raw, label="policy_attach")
    policy = _policy(session, cluster, params.policy_id)
    enabled = True if params.enabled is None else params.enabled
    inputs = {"policy_id": policy.id, "enabled": enabled}
    return ActionName.CLUSTER_ATTACH_POLICY, inputs


def _require_binding(
    session: Session, cluster: ClusterRow, policy: PolicyRow, identity: str
) -> None:
    if _binding(session, cluster, policy) is None:
        raise InvalidRequest(
            f"The policy '{identity}' is not attached to the specified cluster '{cluster.id}'.",
            field="policy_id",
        )


def policy_detach(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: object
) -> tuple[ActionName, dict[str, object]]:
    params = parse_body(PolicyDetachParams, raw, label="policy_detach")
    policy = _policy(session, cluster, params.policy_id)
    _require_binding(session, cluster, policy, params.policy_id)
    return ActionName.CLUSTER_DETACH_POLICY, {"policy_id": policy.id}


def policy_update(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: object
) -> tuple[ActionName, dict[str, object]]:
    params = parse_body(PolicyUpdateParams, raw, label="policy_update")
    policy = _policy(session, cluster, params.policy_id)
    _require_binding(session, cluster, policy, params.policy_id)
    inputs: dict[str, object] = {"policy_id": policy.id}
    if params.enabled is not None:
        inputs["enabled"] = params.enabled
    return ActionName.CLUSTER_UPDATE_POLICY, inputs
