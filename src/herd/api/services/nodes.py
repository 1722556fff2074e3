"""Node create, update, delete and node actions."""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.schemas.base import parse_body
from herd.api.schemas.cluster_actions import CheckParams, NodeRecoverParams
from herd.api.schemas.nodes import NodeCreate, NodeUpdate
from herd.api.services import deletions
from herd.api.services.cluster_actions import V1_6, recover_inputs
from herd.api.services.clusters import parse_force
from herd.api.services.common import (
    changed_inputs,
    find_referenced,
    profile_change,
    refuse_if_deleting,
    single_action,
    submit,
)
from herd.api.services.quotas import check_node_quota
from herd.errors import ActionInProgress, InvalidRequest, ResourceInUse
from herd.store import clusters, profiles
from herd.store import nodes as node_store
from herd.store.database import Session
from herd.store.lookup import find
from herd.store.models import ActionRow, ClusterRow, NodeRow, ProfileRow
from herd.types import ActionName, NodeStatus, ResourceType

BUSY_STATUSES = (
    NodeStatus.CREATING,
    NodeStatus.UPDATING,
    NodeStatus.DELETING,
    NodeStatus.RECOVERING,
)


def create_node(
    session: Session, services: Services, ctx: RequestContext, request: NodeCreate
) -> tuple[NodeRow, ActionRow]:
    # A body names resources of the caller's own project, admins included.
    profile = find_referenced(
        session, ProfileRow, request.profile_id, ctx.own_scope(), ResourceType.PROFILE
    )
    check_node_quota(session, services, ctx.project, 1)
    cluster: ClusterRow | None = None
    if request.cluster_id:
        cluster = find_referenced(
            session, ClusterRow, request.cluster_id, ctx.own_scope(), ResourceType.CLUSTER
        )
        cluster_type = profiles.get(session, cluster.profile_id)
        if cluster_type is not None and cluster_type.type != profile.type:
            raise InvalidRequest(
                "Node and cluster have different profile type, operation aborted.",
                field="profile_id",
            )
    node = node_store.add_new(
        session,
        name=request.name,
        profile_id=profile.id,
        cluster_id=cluster.id if cluster else None,
        index=clusters.take_index(session, cluster.id) if cluster else -1,
        role=request.role or "",
        metadata=request.metadata or {},
        user=ctx.user,
        project=cluster.project if cluster else ctx.project,
        domain=cluster.domain if cluster else ctx.domain or "",
        now=services.now(),
    )
    action = submit(
        session,
        services,
        ctx,
        ActionName.NODE_CREATE,
        target=node.id,
        cluster_id=node.cluster_id,
        project=node.project,
        check=False,
    )
    return node, action


def update_node(
    session: Session, services: Services, ctx: RequestContext, identity: str, request: NodeUpdate
) -> tuple[NodeRow, ActionRow]:
    node = find(session, NodeRow, identity, ctx.scope(), "node")
    deletions.hide_from_agent(session, ctx, ResourceType.NODE, node)
    refuse_if_deleting(session, ResourceType.NODE, [node.id])
    refuse_if_deleting(session, ResourceType.CLUSTER, [node.cluster_id])
    inputs = changed_inputs(
        {
            "name": request.name,
            "role": request.role,
            "metadata": request.metadata,
            "tainted": request.tainted,
        },
        {
            "name": node.name,
            "role": node.role,
            "metadata": node.meta_data or {},
            "tainted": node.tainted,
        },
    )
    if request.profile_id is not None:
        profile_id = profile_change(
            session, node.project, node.profile_id, request.profile_id, ResourceType.NODE
        )
        if profile_id is not None:
            inputs["profile_id"] = profile_id
    if not inputs:
        raise InvalidRequest("No property needs an update.")
    action = submit(
        session,
        services,
        ctx,
        ActionName.NODE_UPDATE,
        target=node.id,
        cluster_id=node.cluster_id,
        project=node.project,
        inputs=inputs,
    )
    return node, action


def delete_node(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: object
) -> ActionRow | None:
    """Start a NODE_DELETE; None (204) when the node's deletion is already under way."""
    force = parse_force(body, ctx.version)
    node = find(session, NodeRow, identity, ctx.scope(), "node")
    deletions.hide_from_agent(session, ctx, ResourceType.NODE, node)
    # Its cluster's deletion takes the node with it; a second deleter would fight it for the lock.
    refuse_if_deleting(session, ResourceType.CLUSTER, [node.cluster_id])

    def validate(retry: bool) -> None:
        if node.dependents:
            raise ResourceInUse(
                f"The node '{node.id}' cannot be deleted: still depended by other clusters "
                "and/or nodes."
            )
        if not force and not retry and node.status in BUSY_STATUSES:
            raise ActionInProgress(f"The node '{node.id}' is in status {node.status}.")

    def submit_action() -> ActionRow:
        return submit(
            session,
            services,
            ctx,
            ActionName.NODE_DELETE,
            target=node.id,
            cluster_id=node.cluster_id,
            project=node.project,
            inputs={"force": force},
        )

    return deletions.start_delete(
        session,
        services,
        ctx,
        ResourceType.NODE,
        node,
        validate=validate,
        submit_action=submit_action,
    )


NODE_ACTIONS = {"check": ActionName.NODE_CHECK, "recover": ActionName.NODE_RECOVER}


def node_action(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: object
) -> ActionRow:
    name, params = single_action(body, NODE_ACTIONS, stop=".")
    if params is not None and not isinstance(params, dict):
        raise InvalidRequest("The params provided is not a map.", field=name)  # Senlin's text
    if name == "check":
        parse_body(CheckParams, params, label="check")
        inputs: dict[str, object] = {}
    else:
        ignore = ("check",) if ctx.version < V1_6 else ()
        request = parse_body(NodeRecoverParams, params, label="recover", ignore=ignore)
        inputs = recover_inputs(request)
    node = find(session, NodeRow, identity, ctx.scope(), "node")
    deletions.hide_from_agent(session, ctx, ResourceType.NODE, node)
    return submit(
        session,
        services,
        ctx,
        NODE_ACTIONS[name],
        target=node.id,
        cluster_id=node.cluster_id,
        project=node.project,
        inputs=inputs,
    )
