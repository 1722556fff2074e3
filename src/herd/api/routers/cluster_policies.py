"""``/v1/clusters/<id>/policies``: the bindings of a cluster."""

from __future__ import annotations

from fastapi import APIRouter, Request

from herd.api import pagination
from herd.api.auth import Context
from herd.api.deps import ServicesDep
from herd.api.openapi import answers
from herd.api.view_models import BindingView
from herd.api.views import render_bindings
from herd.errors import NotFound
from herd.store import bindings
from herd.store.lookup import find
from herd.store.models import BindingRow, ClusterRow, PolicyRow

router = APIRouter(prefix="/v1/clusters", tags=["cluster policies"])

LIST_SPEC = pagination.ListSpec(
    model=BindingRow,
    sort_keys={"enabled": BindingRow.enabled, "priority": BindingRow.priority},
    default_sort=("priority",),
    filters={"enabled": BindingRow.enabled},
    bool_filters=frozenset({"enabled"}),
    extra=frozenset({"policy_name", "policy_type"}),
    has_project=False,
)


@router.get(
    "/{cluster_id}/policies",
    responses=answers("cluster_policies", BindingView, many=True),
    openapi_extra=pagination.openapi_parameters(LIST_SPEC),
)
def list_cluster_policies(
    cluster_id: str, request: Request, services: ServicesDep, ctx: Context
) -> dict[str, object]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    with services.database.read() as session:
        cluster = find(session, ClusterRow, cluster_id, ctx.scope(), "cluster")
        query = bindings.select_cluster_bindings(
            cluster.id, params.extra.get("policy_name"), params.extra.get("policy_type")
        )
        rows = pagination.apply(session, query, LIST_SPEC, params, None)
        return {"cluster_policies": render_bindings(session, rows)}


@router.get("/{cluster_id}/policies/{policy_id}", responses=answers("cluster_policy", BindingView))
def get_cluster_policy(
    cluster_id: str, policy_id: str, services: ServicesDep, ctx: Context
) -> dict[str, object]:
    with services.database.read() as session:
        cluster = find(session, ClusterRow, cluster_id, ctx.scope(), "cluster")
        policy = find(session, PolicyRow, policy_id, ctx.scope(), "policy")
        row = bindings.get_binding(session, cluster.id, policy.id)
        if row is None:
            raise NotFound(
                "policy",
                policy_id,
                f"The policy '{policy_id}' is not found attached to the specified cluster "
                f"'{cluster_id}'.",
            )
        return {"cluster_policy": render_bindings(session, [row])[0]}
