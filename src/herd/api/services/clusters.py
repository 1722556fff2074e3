"""Cluster create, update and delete: validate, store rows, queue the action."""

from __future__ import annotations

from herd.api.auth import RequestContext
from herd.api.deps import Services
from herd.api.microversion import APIVersion
from herd.api.schemas.base import parse_body
from herd.api.schemas.clusters import ClusterCreate, ClusterUpdate, DeleteRequest
from herd.api.services import deletions
from herd.api.services.common import (
    changed_inputs,
    find_referenced,
    profile_change,
    refuse_if_deleting,
    submit,
)
from herd.api.services.quotas import check_cluster_quota, check_node_quota
from herd.domain.sizing import SizeBounds, check_size_params
from herd.errors import ActionInProgress, FeatureNotSupported, InvalidRequest, ResourceInUse
from herd.store import clusters
from herd.store.database import Session
from herd.store.lookup import find
from herd.store.models import ActionRow, ClusterRow, ProfileRow
from herd.types import ActionName, ClusterStatus, ResourceType

V1_8 = APIVersion(1, 8)
BUSY_STATUSES = (
    ClusterStatus.CREATING,
    ClusterStatus.UPDATING,
    ClusterStatus.DELETING,
    ClusterStatus.RECOVERING,
)


def create_cluster(
    session: Session, services: Services, ctx: RequestContext, request: ClusterCreate
) -> tuple[ClusterRow, ActionRow]:
    max_nodes = services.settings.max_nodes_per_cluster
    min_size, max_size = request.min_size, request.max_size
    desired = request.desired_capacity
    if desired is None:
        desired = min_size if min_size is not None else 0
    error = check_size_params(
        SizeBounds(0, -1, 0),
        desired,
        0 if min_size is None else min_size,
        -1 if max_size is None else max_size,
        True,
        max_nodes,
    )
    if error:
        raise InvalidRequest(error)
    check_cluster_quota(session, services, ctx.project)
    check_node_quota(session, services, ctx.project, desired)
    # A body names resources of the caller's own project, admins included (another
    # project's profile would become undeletable by its owner).
    profile = find_referenced(
        session, ProfileRow, request.profile_id, ctx.own_scope(), ResourceType.PROFILE
    )
    cluster = clusters.add_new(
        session,
        name=request.name,
        profile_id=profile.id,
        min_size=0 if min_size is None else min_size,
        max_size=-1 if max_size is None else max_size,
        desired_capacity=desired,
        timeout=(
            services.settings.default_action_timeout if request.timeout is None else request.timeout
        ),
        metadata=request.metadata or {},
        config=request.config or {},
        user=ctx.user,
        project=ctx.project,
        domain=ctx.domain or "",
        now=services.now(),
    )
    action = submit(
        session,
        services,
        ctx,
        ActionName.CLUSTER_CREATE,
        target=cluster.id,
        cluster_id=cluster.id,
        project=cluster.project,
        timeout=cluster.timeout,
        check=False,
    )
    return cluster, action


def update_cluster(
    session: Session, services: Services, ctx: RequestContext, identity: str, request: ClusterUpdate
) -> tuple[ClusterRow, ActionRow]:
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)
    refuse_if_deleting(session, ResourceType.CLUSTER, [cluster.id])
    inputs = changed_inputs(
        {
            "name": request.name,
            "metadata": request.metadata,
            "timeout": request.timeout,
            "config": request.config,
        },
        {
            "name": cluster.name,
            "metadata": cluster.meta_data or {},
            "timeout": cluster.timeout,
            "config": cluster.config or {},
        },
    )
    if request.profile_id is not None:
        profile_id = profile_change(
            session, cluster.project, cluster.profile_id, request.profile_id, ResourceType.CLUSTER
        )
        if profile_id is not None:
            inputs["profile_id"] = profile_id
            if request.profile_only is not None:
                inputs["profile_only"] = request.profile_only
    if not inputs:
        raise InvalidRequest("No property needs an update.")
    if cluster.status == ClusterStatus.ERROR and "profile_id" not in inputs:
        # herd takes a new profile on an ERROR cluster (Senlin refused every update): it is
        # how members that crash on start are fixed (domain/cluster_status.py, docs/api.md).
        raise FeatureNotSupported("Updating a cluster in error state is not supported.")
    action = submit(
        session,
        services,
        ctx,
        ActionName.CLUSTER_UPDATE,
        target=cluster.id,
        cluster_id=cluster.id,
        project=cluster.project,
        inputs=inputs,
        timeout=cluster.timeout,
    )
    return cluster, action


def parse_force(body: object, version: APIVersion) -> bool:
    """``{"force": true}`` on DELETE, from 1.8 (ignored before, as Senlin)."""
    if version < V1_8 or body is None:
        return False
    return bool(parse_body(DeleteRequest, body, label="force").force)


def delete_cluster(
    session: Session, services: Services, ctx: RequestContext, identity: str, body: object
) -> ActionRow | None:
    """Start a CLUSTER_DELETE; None (204) when the cluster's deletion is already under way."""
    force = parse_force(body, ctx.version)
    cluster = find(session, ClusterRow, identity, ctx.scope(), "cluster")
    deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, cluster)

    def validate(retry: bool) -> None:
        if not force and not retry and cluster.status in BUSY_STATUSES:
            raise ActionInProgress(f"The cluster '{cluster.id}' is in status {cluster.status}.")
        if clusters.has_bindings(session, cluster.id):
            raise ResourceInUse(
                f"The cluster '{cluster.id}' cannot be deleted: there is still policy(s) "
                "attached to it."
            )
        if cluster.dependents:
            raise ResourceInUse(
                f"The cluster '{cluster.id}' cannot be deleted: still depended by other "
                "clusters and/or nodes."
            )

    def submit_action() -> ActionRow:
        return submit(
            session,
            services,
            ctx,
            ActionName.CLUSTER_DELETE,
            target=cluster.id,
            cluster_id=cluster.id,
            project=cluster.project,
            inputs={"force": force},
            timeout=cluster.timeout,
        )

    return deletions.start_delete(
        session,
        services,
        ctx,
        ResourceType.CLUSTER,
        cluster,
        validate=validate,
        submit_action=submit_action,
    )
