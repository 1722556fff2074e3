"""``POST /v1/clusters/<id>/actions``: one key per request, validated as Senlin does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.errors import NodeNotOrphan, ProfileTypeNotMatch
from herd.api.microversion import APIVersion, require
from herd.api.services.cluster_extras import SYNCHRONOUS, replace_unhealthy
from herd.api.services.common import (
    find_referenced,
    get_bool,
    get_map,
    reject_unknown,
    submit,
)
from herd.domain.sizing import check_size_params, validate_resize_request, validate_scale_count
from herd.errors import InvalidRequest, NotFound, ResourceInUse
from herd.store.lookup import find
from herd.store.models import ActionRow, BindingRow, ClusterRow, NodeRow, PolicyRow, ProfileRow
from herd.types import ActionName, NodeStatus

V1_4 = APIVersion(1, 4)
V1_6 = APIVersion(1, 6)
RECOVER_OPERATIONS = ("REBOOT", "REBUILD", "RECREATE")

Inputs = dict[str, Any]
Handler = Callable[[Session, Services, RequestContext, ClusterRow, Any], tuple[ActionName, Inputs]]


def _params(value: Any, action: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"The data provided for '{action}' is not a map", field=action)
    return value


def _size_error(services: Services, cluster: ClusterRow, desired: int, strict: bool) -> None:
    error = check_size_params(
        cluster, desired, None, None, strict, services.settings.max_nodes_per_cluster
    )
    if error:
        raise InvalidRequest(error)


def _scale(verb: str, action: ActionName, sign: int) -> Handler:
    def handle(
        session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
    ) -> tuple[ActionName, Inputs]:
        params = _params(raw, verb.replace("-", "_"))
        reject_unknown(params, ("count",))
        count = validate_scale_count(params.get("count"), verb)
        if count is None:
            return action, {}
        # Not strict at the API, as Senlin: only max_nodes_per_cluster is enforced here.
        _size_error(services, cluster, cluster.desired_capacity + sign * count, strict=False)
        return action, {"count": count}

    return handle


def _member_count(session: Session, cluster: ClusterRow) -> int:
    return int(session.scalar(select(func.count()).where(NodeRow.cluster_id == cluster.id)) or 0)


def _resize(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    params = _params(raw, "resize")
    reject_unknown(
        params, ("adjustment_type", "number", "min_size", "max_size", "min_step", "strict")
    )
    inputs = validate_resize_request(
        params, cluster, _member_count(session, cluster), services.settings.max_nodes_per_cluster
    )
    return ActionName.CLUSTER_RESIZE, inputs


def _node_list(params: dict[str, Any]) -> list[str]:
    nodes = params.get("nodes")
    if not isinstance(nodes, list):
        if nodes is None:
            raise InvalidRequest("'nodes' is a required property", field="nodes")
        raise InvalidRequest(f"The value '{nodes}' is not a list for 'nodes'.", field="nodes")
    if len(nodes) < 1:
        raise InvalidRequest("Value for 'nodes' must have at least 1 item(s).", field="nodes")
    if len(set(map(str, nodes))) != len(nodes):
        raise InvalidRequest("Items for 'nodes' must be unique", field="nodes")
    return [str(n) for n in nodes]


def _find_node(session: Session, ctx: RequestContext, identity: str) -> NodeRow | None:
    try:
        return find(session, NodeRow, identity, ctx.scope(), "node")
    except NotFound:
        return None


def _profile_type(session: Session, profile_id: str) -> str | None:
    return session.scalar(select(ProfileRow.type).where(ProfileRow.id == profile_id))


def _add_nodes(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    params = _params(raw, "add_nodes")
    reject_unknown(params, ("nodes",))
    cluster_type = _profile_type(session, cluster.profile_id)
    found, not_found, bad, owned, mismatched = [], [], [], [], []
    for identity in _node_list(params):
        node = _find_node(session, ctx, identity)
        if node is None or node.project != cluster.project:
            not_found.append(identity)
            continue
        if node.status != NodeStatus.ACTIVE.value:
            bad.append(node.id)
        if node.cluster_id:
            owned.append(node.id)
        if _profile_type(session, node.profile_id) != cluster_type:
            mismatched.append(node.id)
        found.append(node.id)
    if mismatched:
        raise ProfileTypeNotMatch(
            f"Profile type of nodes {mismatched} does not match that of the cluster."
        )
    if owned:
        raise NodeNotOrphan(f"Nodes {owned} already owned by some cluster.")
    errors = []
    if bad:
        errors.append(f"Nodes are not ACTIVE: {bad}.")
    if not_found:
        errors.append(f"Nodes not found: {not_found}.")
    if errors:
        raise InvalidRequest("\n".join(errors), field="nodes")
    _size_error(services, cluster, cluster.desired_capacity + len(found), strict=True)
    return ActionName.CLUSTER_ADD_NODES, {"nodes": found}


def _del_nodes(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    params = _params(raw, "del_nodes")
    if ctx.version < V1_4:
        params.pop("destroy_after_deletion", None)
    reject_unknown(params, ("nodes", "destroy_after_deletion"))
    found, not_found, not_members = [], [], []
    for identity in _node_list(params):
        node = _find_node(session, ctx, identity)
        if node is None:
            not_found.append(identity)
        elif node.cluster_id != cluster.id:
            not_members.append(node.id)
        elif node.dependents:
            raise ResourceInUse(
                f"The node '{node.id}' cannot be deleted: still depended by other clusters "
                "and/or nodes."
            )
        else:
            found.append(node.id)
    errors = []
    if not_found:
        errors.append(f"Nodes not found: {not_found}.")
    if not_members:
        errors.append(f"Nodes not members of specified cluster: {not_members}.")
    if errors:
        raise InvalidRequest("\n".join(errors), field="nodes")
    _size_error(services, cluster, cluster.desired_capacity - len(found), strict=True)
    destroy = bool(get_bool(params, "destroy_after_deletion"))
    inputs = {"candidates": found, "count": len(found), "destroy_after_deletion": destroy}
    return ActionName.CLUSTER_DEL_NODES, inputs


def _replace_nodes(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    require(ctx.version, "1.3")
    params = _params(raw, "replace_nodes")
    reject_unknown(params, ("nodes",))
    pairs = get_map(params, "nodes")
    if not pairs:
        raise InvalidRequest("Value for 'nodes' must have at least 1 item(s).", field="nodes")
    cluster_type = _profile_type(session, cluster.profile_id)
    found: dict[str, str] = {}
    not_member, missing_old, missing_new, not_orphan, bad, mismatched = [], [], [], [], [], []
    for old_identity, new_identity in pairs.items():
        old = _find_node(session, ctx, str(old_identity))
        if old is None:
            missing_old.append(old_identity)
            continue
        if old.cluster_id != cluster.id:
            not_member.append(old.id)
        new = _find_node(session, ctx, str(new_identity))
        if new is None:
            missing_new.append(new_identity)
            continue
        if new.cluster_id:
            not_orphan.append(new.id)
        if new.status != NodeStatus.ACTIVE.value:
            bad.append(new.id)
        if _profile_type(session, new.profile_id) != cluster_type:
            mismatched.append(new.id)
        found[old.id] = new.id
    messages = []
    if not_member:
        messages.append(
            f"The specified nodes {not_member} to be replaced are not members of the "
            f"cluster {cluster.id}."
        )
    if missing_old:
        messages.append(f"Original nodes not found: {missing_old}.")
    if missing_new:
        messages.append(f"Replacement nodes not found: {missing_new}.")
    if not_orphan:
        messages.append(f"Nodes {not_orphan} already member of a cluster.")
    if bad:
        messages.append(f"Nodes are not ACTIVE: {bad}.")
    if mismatched:
        messages.append(f"Profile type of nodes {mismatched} do not match that of the cluster.")
    if messages:
        raise InvalidRequest("\n".join(messages), field="nodes")
    return ActionName.CLUSTER_REPLACE_NODES, {"candidates": found}


def _check(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    _params(raw, "check")
    return ActionName.CLUSTER_CHECK, {}


def recover_inputs(raw: Any, version: APIVersion, allowed: tuple[str, ...]) -> Inputs:
    params = _params(raw, "recover")
    if version < V1_6:
        params.pop("check", None)
    reject_unknown(params, allowed)
    inputs: Inputs = {}
    operation = params.get("operation")
    if operation is not None:
        if not isinstance(operation, str) or operation.upper() not in RECOVER_OPERATIONS:
            raise InvalidRequest(
                f"Operation value '{operation}' has to be one of the following: "
                f"{', '.join(RECOVER_OPERATIONS)}.",
                field="operation",
            )
        inputs["operation"] = operation.upper()
    if params.get("operation_params") is not None:
        inputs["operation_params"] = get_map(params, "operation_params")
    for key in ("check", "check_capacity"):
        value = get_bool(params, key) if key in allowed else None
        if value is not None:
            inputs[key] = value
    return inputs


def _recover(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    allowed = ("operation", "operation_params", "check", "check_capacity")
    return ActionName.CLUSTER_RECOVER, recover_inputs(raw, ctx.version, allowed)


def _policy(session: Session, ctx: RequestContext, params: dict[str, Any]) -> PolicyRow:
    identity = params.get("policy_id")
    if identity is None:
        raise InvalidRequest("'policy_id' is a required property", field="policy_id")
    policy: PolicyRow = find_referenced(session, PolicyRow, identity, ctx.scope(), "policy")
    return policy


def _binding(session: Session, cluster: ClusterRow, policy: PolicyRow) -> BindingRow | None:
    return session.scalars(
        select(BindingRow).where(
            BindingRow.cluster_id == cluster.id, BindingRow.policy_id == policy.id
        )
    ).first()


def _policy_attach(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    params = _params(raw, "policy_attach")
    reject_unknown(params, ("policy_id", "enabled"))
    policy = _policy(session, ctx, params)
    enabled = get_bool(params, "enabled")
    inputs = {"policy_id": policy.id, "enabled": True if enabled is None else enabled}
    return ActionName.CLUSTER_ATTACH_POLICY, inputs


def _require_binding(
    session: Session, cluster: ClusterRow, policy: PolicyRow, params: dict[str, Any], cid: str
) -> None:
    if _binding(session, cluster, policy) is None:
        raise InvalidRequest(
            f"The policy '{params['policy_id']}' is not attached to the specified cluster '{cid}'.",
            field="policy_id",
        )


def _policy_detach(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    params = _params(raw, "policy_detach")
    reject_unknown(params, ("policy_id",))
    policy = _policy(session, ctx, params)
    _require_binding(session, cluster, policy, params, cluster.id)
    return ActionName.CLUSTER_DETACH_POLICY, {"policy_id": policy.id}


def _policy_update(
    session: Session, services: Services, ctx: RequestContext, cluster: ClusterRow, raw: Any
) -> tuple[ActionName, Inputs]:
    params = _params(raw, "policy_update")
    reject_unknown(params, ("policy_id", "enabled"))
    policy = _policy(session, ctx, params)
    _require_binding(session, cluster, policy, params, cluster.id)
    inputs: Inputs = {"policy_id": policy.id}
    enabled = get_bool(params, "enabled")
    if enabled is not None:
        inputs["enabled"] = enabled
    return ActionName.CLUSTER_UPDATE_POLICY, inputs


HANDLERS: dict[str, Handler] = {
    "scale_out": _scale("scale-out", ActionName.CLUSTER_SCALE_OUT, +1),
    "scale_in": _scale("scale-in", ActionName.CLUSTER_SCALE_IN, -1),
    "resize": _resize,
    "add_nodes": _add_nodes,
    "del_nodes": _del_nodes,
    "replace_nodes": _replace_nodes,
    "check": _check,
    "recover": _recover,
    "policy_attach": _policy_attach,
    "policy_detach": _policy_detach,
    "policy_update": _policy_update,
    "replace_unhealthy": replace_unhealthy,
}


def single_action(body: Any, supported: dict[str, Any]) -> tuple[str, Any]:
    """The one ``{"<action>": {...}}`` key of an actions body, with Senlin's texts."""
    if not isinstance(body, dict):
        raise InvalidRequest("The data provided is not a map")
    if len(body) < 1:
        raise InvalidRequest("No action specified")
    if len(body) > 1:
        raise InvalidRequest("Multiple actions specified")
    name, params = next(iter(body.items()))
    if name not in supported:
        raise InvalidRequest(f"Unrecognized action '{name}' specified", field=name)
    return name, params


def cluster_action(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: Any
) -> ActionRow | dict[str, Any]:
    """Store the requested action, or answer a synchronous one (its body is returned)."""
    name, params = single_action(body, {**HANDLERS, **SYNCHRONOUS})
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    if name in SYNCHRONOUS:
        return SYNCHRONOUS[name](session, services, ctx, cluster, params)
    action, inputs = HANDLERS[name](session, services, ctx, cluster, params)
    return submit(
        session,
        services,
        ctx,
        action,
        target=cluster.id,
        cluster_id=cluster.id,
        project=cluster.project,
        inputs=inputs,
        timeout=cluster.timeout,
    )
