"""``/v1/nodes`` CRUD and ``POST /v1/nodes/<id>/actions``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import select

from herd.api import pagination
from herd.api.auth import Context, ReaderContext
from herd.api.deps import ServicesDep
from herd.api.microversion import APIVersion
from herd.api.schemas.base import openapi_body, parse_body
from herd.api.schemas.cluster_actions import NodeActionRequest
from herd.api.schemas.clusters import DeleteRequest
from herd.api.schemas.nodes import NodeCreate, NodeUpdate
from herd.api.services import deletions
from herd.api.services import nodes as service
from herd.api.services.common import location
from herd.api.views import render_nodes
from herd.errors import InvalidRequest, NotFound
from herd.store.lookup import find
from herd.store.models import ClusterRow, NodeRow

router = APIRouter(prefix="/v1/nodes", tags=["nodes"])

V1_13 = APIVersion(1, 13)

LIST_SPEC = pagination.ListSpec(
    model=NodeRow,
    sort_keys={
        "index": NodeRow.index,
        "name": NodeRow.name,
        "status": NodeRow.status,
        "init_at": NodeRow.init_at,
        "created_at": NodeRow.created_at,
        "updated_at": NodeRow.updated_at,
    },
    default_sort=("init_at",),
    filters={"name": NodeRow.name, "status": NodeRow.status},
    extra=frozenset({"cluster_id", "show_details"}),
)


def _details(params: dict[str, str]) -> bool:
    value = params.get("show_details")
    return value is not None and pagination.parse_bool("show_details", value)


@router.get("", openapi_extra=pagination.openapi_parameters(LIST_SPEC))
def list_nodes(request: Request, services: ServicesDep, ctx: ReaderContext) -> dict[str, Any]:
    params = pagination.parse(request.query_params, LIST_SPEC)
    scope = ctx.list_scope(params.global_project)
    details = _details(params.extra)
    with services.database.read() as session:
        query = select(NodeRow).where(*deletions.agent_filter(ctx, "node"))
        cluster_identity = params.extra.get("cluster_id")
        if cluster_identity:
            try:
                cluster = find(session, ClusterRow, cluster_identity, scope, "cluster")
            except NotFound:
                raise InvalidRequest(
                    f"Cannot find the given cluster: {cluster_identity}.", field="cluster_id"
                ) from None
            if deletions.agent_filter(ctx, "cluster"):
                try:
                    deletions.hide_from_agent(session, ctx, "cluster", cluster)
                except NotFound:
                    raise InvalidRequest(
                        f"Cannot find the given cluster: {cluster_identity}.", field="cluster_id"
                    ) from None
            query = query.where(NodeRow.cluster_id == cluster.id)
        rows = pagination.apply(session, query, LIST_SPEC, params, scope)
        return {"nodes": render_nodes(session, rows, ctx.version, details)}


@router.post("", status_code=202, openapi_extra=openapi_body(NodeCreate, envelope="node"))
def create_node(services: ServicesDep, ctx: Context, body: Any = Body(None)) -> JSONResponse:
    request = parse_body(NodeCreate, body, envelope="node")
    with services.database.write() as session:
        node, action = service.create_node(session, services, ctx, request)
        session.flush()
        view = render_nodes(session, [node], ctx.version)[0]
    return JSONResponse({"node": view}, status_code=202, headers=location(action.id))


@router.get("/{node_id}")
def get_node(
    node_id: str, request: Request, services: ServicesDep, ctx: ReaderContext
) -> dict[str, Any]:
    details = _details(dict(request.query_params))
    with services.database.read() as session:
        row = find(session, NodeRow, node_id, ctx.scope(), "node")
        deletions.hide_from_agent(session, ctx, "node", row)
        return {"node": render_nodes(session, [row], ctx.version, details)[0]}


@router.patch(
    "/{node_id}", status_code=202, openapi_extra=openapi_body(NodeUpdate, envelope="node")
)
def update_node(
    node_id: str, services: ServicesDep, ctx: Context, body: Any = Body(None)
) -> JSONResponse:
    ignore = ("tainted",) if ctx.version < V1_13 else ()
    request = parse_body(NodeUpdate, body, envelope="node", ignore=ignore)
    with services.database.write() as session:
        node, action = service.update_node(session, services, ctx, node_id, request)
        session.flush()
        view = render_nodes(session, [node], ctx.version)[0]
    return JSONResponse({"node": view}, status_code=202, headers=location(action.id))


@router.delete(
    "/{node_id}", status_code=202, openapi_extra=openapi_body(DeleteRequest, required=False)
)
def delete_node(
    node_id: str, services: ServicesDep, ctx: Context, body: Any = Body(None)
) -> Response:
    with services.database.write() as session:
        action = service.delete_node(session, services, ctx, node_id, body)
    if action is None:
        # Already being deleted: nothing new was started (docs/deletion.md).
        return Response(status_code=204)
    return Response(status_code=202, headers=location(action.id))


@router.post("/{node_id}/actions", status_code=202, openapi_extra=openapi_body(NodeActionRequest))
def post_node_action(
    node_id: str, services: ServicesDep, ctx: Context, body: Any = Body(None)
) -> JSONResponse:
    with services.database.write() as session:
        action = service.node_action(session, services, ctx, node_id, body)
    return JSONResponse({"action": action.id}, status_code=202, headers=location(action.id))
