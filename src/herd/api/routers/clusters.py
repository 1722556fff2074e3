"""``/v1/clusters`` CRUD and ``/v1/clusters/<id>/attrs/<path>``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import JSONResponse

from herd.api import pagination, trusts
from herd.api.auth import Context, ReaderContext, for_caller
from herd.api.bodies import json_body, raw_body
from herd.api.deps import Services, ServicesDep
from herd.api.microversion import APIVersion
from herd.api.openapi import DELETE_ACCEPTED, answers
from herd.api.schemas.clusters import ClusterCreate, ClusterUpdate, DeleteRequest
from herd.api.services import agent_regions, deletions
from herd.api.services import clusters as service
from herd.api.services.collect import collect
from herd.api.services.common import location
from herd.api.view_models import ClusterView
from herd.api.views import render_cluster, render_clusters
from herd.store.listing import select_rows, spans_region
from herd.store.lookup import find
from herd.store.models import ClusterRow
from herd.types import ClusterStatus, ResourceType

router = APIRouter(prefix="/v1/clusters", tags=["clusters"])

LIST_SPEC = pagination.ListSpec(
    model=ClusterRow,
    sort_keys={
        "name": ClusterRow.name,
        "status": ClusterRow.status,
        "init_at": ClusterRow.init_at,
        "created_at": ClusterRow.created_at,
        "updated_at": ClusterRow.updated_at,
    },
    default_sort=("init_at",),
    filters={"name": ClusterRow.name, "status": ClusterRow.status},
    valid={"status": pagination.one_of(ClusterStatus)},
    invalid_parameter="Invalid parameter '{key}'",
    extra=frozenset({"region", "show_nodes"}),
)


def _show_nodes(request: Request) -> bool:
    """herd's ``show_nodes=false``: member counts instead of member id lists (docs/api.md)."""
    value = request.query_params.get("show_nodes")
    return value is None or pagination.parse_bool("show_nodes", value)


@router.get(
    "",
    responses=answers("clusters", ClusterView, many=True),
    openapi_extra=pagination.openapi_parameters(LIST_SPEC),
)
def list_clusters(request: Request, services: ServicesDep, ctx: ReaderContext) -> dict[str, object]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    query = select_rows(
        ClusterRow,
        *deletions.agent_filter(ctx, ResourceType.CLUSTER),
        *agent_regions.cluster_filter(ctx),
    )
    region = params.extra.get("region")
    if region is not None:
        # herd's addition: the clusters spanning a region (what a regional agent reconciles)
        query = query.where(spans_region(region))
    with services.database.read() as session:
        rows = pagination.apply(session, query, LIST_SPEC, params, scope)
        views = render_clusters(session, rows, show_nodes=_show_nodes(request))
        views = agent_regions.regional_members(session, ctx, views)
        return {"clusters": [for_caller(ctx, view) for view in views]}


V1_6 = APIVersion(1, 6)


def _limits(services: Services) -> Mapping[str, object]:
    return {"max_nodes_per_cluster": services.settings.max_nodes_per_cluster}


@router.post("", status_code=202, responses=answers("cluster", ClusterView, status=202))
def create_cluster(
    services: ServicesDep,
    ctx: Context,
    request: Annotated[
        ClusterCreate,
        json_body(ClusterCreate, envelope="cluster", request_object=True, context=_limits),
    ],
) -> JSONResponse:
    trusts.ensure_trust(services, ctx, request.profile_id)
    with services.database.write() as session:
        cluster, action = service.create_cluster(session, services, ctx, request)
        session.flush()
        view = render_cluster(session, cluster)
    return JSONResponse({"cluster": view}, status_code=202, headers=location(action.id))


@router.get("/{cluster_id}", responses=answers("cluster", ClusterView))
def get_cluster(
    cluster_id: str, request: Request, services: ServicesDep, ctx: ReaderContext
) -> dict[str, object]:
    show_nodes = _show_nodes(request)
    with services.database.read() as session:
        row = find(session, ClusterRow, cluster_id, ctx.scope(), "cluster")
        deletions.hide_from_agent(session, ctx, ResourceType.CLUSTER, row)
        agent_regions.hide_cluster(session, ctx, row)
        [view] = agent_regions.regional_members(
            session, ctx, [render_cluster(session, row, show_nodes=show_nodes)]
        )
        return {"cluster": for_caller(ctx, view)}


@router.patch(
    "/{cluster_id}", status_code=202, responses=answers("cluster", ClusterView, status=202)
)
def update_cluster(
    cluster_id: str,
    services: ServicesDep,
    ctx: Context,
    request: Annotated[
        ClusterUpdate,
        json_body(ClusterUpdate, envelope="cluster", ignore_below={"profile_only": V1_6}),
    ],
) -> JSONResponse:
    with services.database.write() as session:
        cluster, action = service.update_cluster(session, services, ctx, cluster_id, request)
        session.flush()
        view = render_cluster(session, cluster)
    return JSONResponse({"cluster": view}, status_code=202, headers=location(action.id))


@router.delete(
    "/{cluster_id}",
    status_code=202,
    response_class=Response,
    responses=DELETE_ACCEPTED,
)
def delete_cluster(
    cluster_id: str,
    services: ServicesDep,
    ctx: Context,
    body: Annotated[object, raw_body(DeleteRequest, required=False)],
) -> Response:
    with services.database.write() as session:
        action = service.delete_cluster(session, services, ctx, cluster_id, body)
    if action is None:
        # Already being deleted: nothing new was started (docs/deletion.md).
        return Response(status_code=204)
    return Response(status_code=202, headers=location(action.id))


#: what ``/openapi.json`` says of an attribute path: dotted names and [n] indices, the part
#: of JSONPath's grammar (which a pattern cannot state whole) that the CLI's examples use
ATTR_PATH = Path(
    json_schema_extra={"pattern": r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\])*$"}
)


@router.get("/{cluster_id}/attrs/{path:path}")
def collect_attrs(
    cluster_id: str, path: Annotated[str, ATTR_PATH], services: ServicesDep, ctx: Context
) -> dict[str, object]:
    """Senlin's cluster collect (1.2): a JSONPath over the members' node views."""
    with services.database.read() as session:
        return {"cluster_attributes": collect(session, ctx, cluster_id, path)}
