"""``/v1/nodes`` CRUD and ``POST /v1/nodes/<id>/actions``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from herd.api import pagination, trusts
from herd.api.auth import Context, RequestContext, reader_context
from herd.api.bodies import json_body, raw_body
from herd.api.deps import Services, ServicesDep, run_database
from herd.api.json_body import dumps
from herd.api.microversion import APIVersion
from herd.api.openapi import DELETE_ACCEPTED, answers
from herd.api.schemas.cluster_actions import NodeActionRequest
from herd.api.schemas.clusters import DeleteRequest
from herd.api.schemas.nodes import NodeCreate, NodeUpdate
from herd.api.services import live_details, node_batches, node_reads
from herd.api.services import nodes as service
from herd.api.services.common import location
from herd.api.view_models import NodeView
from herd.api.views import node_view_from_values, render_nodes

router = APIRouter(prefix="/v1/nodes", tags=["nodes"])

V1_13 = APIVersion(1, 13)


def _list(services: Services, ctx: RequestContext, params: pagination.ListParams) -> bytes:
    with services.database.read() as session:
        return dumps({"nodes": node_reads.list_nodes(session, ctx, params)})


def _get(services: Services, ctx: RequestContext, node_id: str, details: bool) -> NodeView:
    with services.database.read_connection() as connection:
        return node_reads.get_node(connection, ctx, node_id, details)


@router.get(
    "",
    responses=answers("nodes", NodeView, many=True),
    openapi_extra=pagination.openapi_parameters(node_reads.LIST_SPEC),
)
async def list_nodes(request: Request) -> Response:
    services: Services = request.app.state.herd
    ctx = await reader_context(request)
    params = pagination.parse(request.query_params, node_reads.LIST_SPEC)
    body = await run_database(services, _list, services, ctx, params)
    return Response(body, media_type="application/json")


@router.post("", status_code=202, responses=answers("node", NodeView, status=202))
def create_node(
    services: ServicesDep,
    ctx: Context,
    request: Annotated[NodeCreate, json_body(NodeCreate, envelope="node", request_object=True)],
) -> JSONResponse:
    if not request.cluster_id:  # members act through their cluster owner's trust
        trusts.ensure_trust(services, ctx, request.profile_id)
    with services.database.write() as session:
        node, action = service.create_node(session, services, ctx, request)
        session.flush()
        view = render_nodes(session, [node], ctx.version)[0]
    return JSONResponse({"node": view}, status_code=202, headers=location(action.id))


@router.get("/{node_id}", responses=answers("node", NodeView))
async def get_node(node_id: str, request: Request) -> Response:
    services: Services = request.app.state.herd
    ctx = await reader_context(request)
    details = node_reads.details_wanted(dict(request.query_params))
    batcher = node_batches.batched_read(services, ctx, node_id)
    if batcher is not None:
        # PostgreSQL: concurrent reads share a statement; a row this caller would not
        # have found by id (or none) is read alone below.
        row = await batcher.read(node_id)
        if row is not None and node_batches.visible(ctx, row):
            view = node_view_from_values(row, ctx.version, details)
            return await _shown(services, view, details)
    view = await run_database(services, _get, services, ctx, node_id, details)
    return await _shown(services, view, details)


async def _shown(services: Services, view: NodeView, details: bool) -> Response:
    if details:  # the backend's current view, for drivers that can give it
        view = await live_details.refresh(services, view)
    return Response(dumps({"node": view}), media_type="application/json")


@router.patch("/{node_id}", status_code=202, responses=answers("node", NodeView, status=202))
def update_node(
    node_id: str,
    services: ServicesDep,
    ctx: Context,
    request: Annotated[
        NodeUpdate, json_body(NodeUpdate, envelope="node", ignore_below={"tainted": V1_13})
    ],
) -> JSONResponse:
    with services.database.write() as session:
        node, action = service.update_node(session, services, ctx, node_id, request)
        session.flush()
        view = render_nodes(session, [node], ctx.version)[0]
    return JSONResponse({"node": view}, status_code=202, headers=location(action.id))


@router.delete(
    "/{node_id}",
    status_code=202,
    response_class=Response,
    responses=DELETE_ACCEPTED,
)
def delete_node(
    node_id: str,
    services: ServicesDep,
    ctx: Context,
    body: Annotated[object, raw_body(DeleteRequest, required=False)],
) -> Response:
    with services.database.write() as session:
        action = service.delete_node(session, services, ctx, node_id, body)
    if action is None:
        # Already being deleted: nothing new was started (docs/deletion.md).
        return Response(status_code=204)
    return Response(status_code=202, headers=location(action.id))


@router.post("/{node_id}/actions", status_code=202)
def post_node_action(
    node_id: str,
    services: ServicesDep,
    ctx: Context,
    body: Annotated[object, raw_body(NodeActionRequest)],
) -> JSONResponse:
    with services.database.write() as session:
        action = service.node_action(session, services, ctx, node_id, body)
    return JSONResponse({"action": action.id}, status_code=202, headers=location(action.id))
